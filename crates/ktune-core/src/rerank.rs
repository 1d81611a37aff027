//! Paired re-ranking of the finalists: the best configurations of a run measured again,
//! interleaved, so that drift of the machine (clocks, temperature, other load) hits all of
//! them alike, and ordered by the new measurements.

use ktune_space::{Configuration, SearchSpace};
use serde::{Deserialize, Serialize};

use crate::{CoreError, Direction, Outcome, Record, Runner, Summary};

/// One finalist: its configuration, what the run measured, what re-measuring gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finalist {
    /// The configuration.
    pub config: Configuration,
    /// Its place in the run's ranking (0: the run's best).
    pub rank_before: usize,
    /// Its objective in the run.
    pub before: f64,
    /// The re-measurement.
    pub outcome: Outcome,
}

impl Finalist {
    /// The re-measured objective, if re-measuring succeeded.
    pub fn after(&self) -> Option<f64> {
        self.outcome.objective()
    }

    /// The re-measured samples' summary.
    pub fn summary(&self) -> Option<Summary> {
        self.outcome.summary()
    }
}

/// The finalists in their new order (best first; those that failed to re-measure last).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reranking {
    /// The finalists, best first.
    pub finalists: Vec<Finalist>,
    /// Interleaved rounds measured.
    pub rounds: usize,
    /// The objective's direction.
    pub direction: Direction,
}

impl Reranking {
    /// Whether re-measuring crowned another configuration than the run did.
    pub fn winner_changed(&self) -> bool {
        self.finalists
            .first()
            .is_some_and(|f| f.rank_before != 0 && f.after().is_some())
    }
}

/// Re-measures the `k` best successful configurations of `records` with `runner`,
/// interleaved for `rounds` rounds, and orders them by the new objective.
pub fn rerank(
    space: &SearchSpace,
    runner: &mut dyn Runner,
    records: &[Record],
    direction: Direction,
    k: usize,
    rounds: usize,
) -> Result<Reranking, CoreError> {
    let mut ok: Vec<(&Record, f64)> = records
        .iter()
        .filter_map(|r| r.outcome.objective().map(|v| (r, v)))
        .collect();
    // Stable: equal values keep their evaluation order, as the run's best does.
    ok.sort_by(|a, b| direction.to_min(a.1).total_cmp(&direction.to_min(b.1)));
    ok.truncate(k);
    let configs: Vec<Configuration> = ok.iter().map(|(r, _)| r.config.clone()).collect();
    let outcomes = if configs.is_empty() {
        Vec::new()
    } else {
        runner.remeasure(space, &configs, rounds.max(1))?
    };
    if outcomes.len() != configs.len() {
        return Err(CoreError::OutcomeCount {
            runner: runner.name().to_string(),
            expected: configs.len(),
            got: outcomes.len(),
        });
    }
    let mut finalists: Vec<Finalist> = ok
        .iter()
        .zip(outcomes)
        .enumerate()
        .map(|(i, ((r, v), outcome))| Finalist {
            config: r.config.clone(),
            rank_before: i,
            before: *v,
            outcome,
        })
        .collect();
    finalists.sort_by(|a, b| {
        let key = |f: &Finalist| f.after().map_or(f64::INFINITY, |v| direction.to_min(v));
        key(a).total_cmp(&key(b))
    });
    Ok(Reranking {
        finalists,
        rounds: rounds.max(1),
        direction,
    })
}

#[cfg(test)]
mod tests {
    use ktune_space::Parameter;

    use super::*;
    use crate::Timings;
    use crate::testing::FnRunner;

    /// Re-measures configuration `x` as `truth[x]`, ignoring what the run saw.
    fn truth(truth: &[f64]) -> FnRunner<'_> {
        FnRunner::indices(|c| Some(truth[c[0] as usize]))
            .metric("time", Direction::Minimize)
            .on_batch(|_, _| unreachable!("re-ranking only re-measures"))
    }

    fn record(x: u32, v: Option<f64>) -> Record {
        let outcome = match v {
            Some(v) => Outcome::ok(vec![v], Timings::default()),
            None => Outcome::failed(crate::FailureKind::Runtime, "x", Timings::default()),
        };
        Record {
            config: vec![x],
            outcome,
            clock: 0.0,
        }
    }

    #[test]
    fn the_best_k_are_remeasured_and_reordered() {
        let space = SearchSpace::new(
            vec![Parameter::integer_range("x", 0, 4, 1).unwrap()],
            &[] as &[&str],
        )
        .unwrap();
        // The run saw 3 as best (lucky noise); the truth is 1.
        let records = [
            record(0, Some(5.0)),
            record(1, Some(1.1)),
            record(2, None),
            record(3, Some(1.0)),
            record(4, Some(1.2)),
        ];
        let values = [5.0, 1.0, 9.0, 1.05, 0.9];
        let mut runner = truth(&values);
        let r = rerank(&space, &mut runner, &records, Direction::Minimize, 3, 4).unwrap();
        assert_eq!(runner.remeasured(), vec![vec![3], vec![1], vec![4]]);
        let order: Vec<u32> = r.finalists.iter().map(|f| f.config[0]).collect();
        assert_eq!(order, vec![4, 1, 3]);
        assert!(r.winner_changed());
        assert_eq!(r.finalists[0].summary().unwrap().n, 4);
        assert_eq!(r.finalists[2].rank_before, 0);
        // Maximised: the largest first, and no change when the run's best stays best.
        let r = rerank(&space, &mut runner, &records, Direction::Maximize, 2, 1).unwrap();
        assert_eq!(runner.remeasured(), vec![vec![0], vec![4]]);
        assert_eq!(r.finalists[0].config, vec![0]);
        assert!(!r.winner_changed());
    }
}
