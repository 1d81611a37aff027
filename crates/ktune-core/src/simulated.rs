//! Parallel workers on a simulated clock: how a study would go with `N` GPUs, replayed from
//! recorded evaluation times (`ktune bench --workers N`).
//!
//! One [`Session`] hands out work to `N` simulated workers. Each evaluation takes the time
//! its outcome records (compile, benchmark, verification, framework); an idle worker asks
//! the session for work at once, while the others are still measuring, so the strategy
//! proposes with earlier proposals in flight, exactly as it does for real workers of a
//! shared study. The strategy's own computing time is not on the simulated clock (it is
//! reported apart): the clock shows what the evaluations alone allow.

use crate::{Asked, CoreError, Record, Runner, Session, StopReason};

/// A study run by simulated parallel workers.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedRun {
    /// Every record, in the order the session learnt them (an evaluation when it finished,
    /// an invalid proposal when it was made).
    pub records: Vec<Record>,
    /// The simulated time of each record, in seconds from the start, non-decreasing.
    pub finished: Vec<f64>,
    /// Why the session stopped.
    pub stop: StopReason,
    /// Seconds the strategy computed (real time, not on the simulated clock).
    pub strategy_seconds: f64,
    /// With [`Session::trace_origins`]: what proposed each record (see
    /// [`TuningRun::origins`](crate::TuningRun::origins)); empty otherwise.
    pub origins: Vec<Option<String>>,
}

/// Seconds an evaluation occupies its worker: its recorded timings (missing ones count 0).
fn duration(outcome: &crate::Outcome) -> f64 {
    let t = outcome.timings();
    [t.compile, t.benchmark, t.verification, t.framework]
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .sum()
}

/// Runs `session` with `workers` simulated workers evaluating through `runner` (a runner
/// that answers at once, such as a replayed brute-forced space), until the session stops
/// and every started evaluation has finished.
pub fn simulate_workers(
    mut session: Session<'_>,
    runner: &mut dyn Runner,
    workers: usize,
) -> Result<SimulatedRun, CoreError> {
    let workers = workers.max(1);
    // Evaluations in progress: (finish time, start order, configuration, outcome).
    let mut running: Vec<(f64, u64, ktune_space::Configuration, crate::Outcome)> = Vec::new();
    let mut queued: std::collections::VecDeque<ktune_space::Configuration> = Default::default();
    let mut now = 0.0f64;
    let mut started = 0u64;
    let mut finished: Vec<f64> = Vec::new();
    let mut stop: Option<StopReason> = None;
    loop {
        // Idle workers ask for work, unless the session has nothing more to give.
        let idle = workers - running.len();
        if idle > queued.len() && stop.is_none() {
            match session.ask(idle - queued.len())? {
                Asked::Evaluate(configs) => queued.extend(configs),
                // A strategy may have nothing to propose until results come back (a
                // generation in flight): only a stop with nothing running is final.
                Asked::Stop(reason) => {
                    let waiting = reason == StopReason::StrategyExhausted
                        && !(running.is_empty() && queued.is_empty());
                    if !waiting {
                        stop = Some(reason);
                    }
                }
            }
            // Invalid proposals were recorded when they were made.
            finished.resize(session.records().len(), now);
        }
        while running.len() < workers
            && let Some(config) = queued.pop_front()
        {
            let mut outcomes = runner.evaluate(session.space(), std::slice::from_ref(&config))?;
            if outcomes.len() != 1 {
                return Err(CoreError::OutcomeCount {
                    runner: runner.name().to_string(),
                    expected: 1,
                    got: outcomes.len(),
                });
            }
            let outcome = outcomes.remove(0);
            running.push((now + duration(&outcome), started, config, outcome));
            started += 1;
        }
        // The next evaluation to finish (the earliest started on ties).
        let Some(next) = running
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.0.total_cmp(&b.1.0).then(a.1.1.cmp(&b.1.1)))
            .map(|(i, _)| i)
        else {
            if stop.is_some() || queued.is_empty() && session.in_flight() == 0 {
                break;
            }
            continue;
        };
        let (at, _, config, outcome) = running.swap_remove(next);
        now = now.max(at);
        session.tell(vec![(config, outcome)])?;
        finished.resize(session.records().len(), now);
        if stop.is_some() && running.is_empty() && queued.is_empty() {
            break;
        }
    }
    let strategy_seconds = session.strategy_seconds();
    let stop = stop.unwrap_or(StopReason::StrategyExhausted);
    let (run, _) = session.into_run(stop);
    finished.resize(run.records.len(), now);
    Ok(SimulatedRun {
        records: run.records,
        origins: run.origins,
        finished,
        stop,
        strategy_seconds,
    })
}

#[cfg(test)]
mod tests {
    use ktune_space::{Configuration, Parameter, SearchSpace};
    use rand::SeedableRng;

    use super::*;
    use crate::testing::{FnRunner, InOrder};
    use crate::{Budget, Direction, FailureKind, Outcome, Rng, Timings};

    /// x = 0..29; evaluating x takes 1 + (x mod 3) seconds; x = 4 fails to compile (after
    /// 0.5 s); the objective is x.
    fn timed() -> FnRunner<'static> {
        FnRunner::outcomes(|_, c| {
            let x = f64::from(c[0]);
            if x == 4.0 {
                let t = Timings {
                    compile: 0.5,
                    ..Timings::default()
                };
                return Outcome::failed(FailureKind::Compile, "no", t);
            }
            let t = Timings {
                compile: 0.25,
                benchmark: 0.75 + x % 3.0,
                ..Timings::default()
            };
            Outcome::ok(vec![x], t)
        })
    }

    fn run(workers: usize, wait: bool, budget: usize) -> SimulatedRun {
        let space = SearchSpace::new(
            vec![Parameter::integer_range("x", 0, 29, 1).unwrap()],
            &[] as &[&str],
        )
        .unwrap();
        let session = Session::new(
            &space,
            Box::new(if wait {
                InOrder::waiting()
            } else {
                InOrder::default()
            }),
            Budget::evaluations(budget),
            Direction::Minimize,
            Rng::seed_from_u64(1),
        )
        .unwrap();
        simulate_workers(session, &mut timed(), workers).unwrap()
    }

    fn sequential_seconds(budget: u32) -> f64 {
        (0..budget)
            .map(|x| if x == 4 { 0.5 } else { 1.0 + f64::from(x % 3) })
            .sum()
    }

    #[test]
    fn one_worker_takes_the_sum_of_the_evaluation_times() {
        let r = run(1, false, 12);
        assert_eq!(r.records.len(), 12);
        assert_eq!(r.stop, StopReason::Evaluations);
        assert_eq!(*r.finished.last().unwrap(), sequential_seconds(12));
        assert!(r.finished.windows(2).all(|w| w[0] <= w[1]));
    }

    /// Four workers finish the same twelve evaluations in about a quarter of the time, each
    /// configuration once, results in the order they finished.
    #[test]
    fn four_workers_share_the_budget_on_one_clock() {
        let r = run(4, false, 12);
        assert_eq!(r.records.len(), 12);
        let mut configs: Vec<&Configuration> = r.records.iter().map(|r| &r.config).collect();
        configs.sort();
        configs.dedup();
        assert_eq!(configs.len(), 12);
        let total = *r.finished.last().unwrap();
        let ideal = sequential_seconds(12) / 4.0;
        assert!(total >= ideal && total <= ideal + 3.0, "{total} vs {ideal}");
        assert!(r.finished.windows(2).all(|w| w[0] <= w[1]));
        // x = 0, 1, 2, 3 start together; x = 0 and x = 3 (1 s) finish first, in the order
        // they started, then x = 4 (0.5 s), started by the worker x = 0 freed, before x = 1.
        let order: Vec<(u32, f64)> = r.records[..4]
            .iter()
            .zip(&r.finished)
            .map(|(r, &t)| (r.config[0], t))
            .collect();
        assert_eq!(order, vec![(0, 1.0), (3, 1.0), (4, 1.5), (1, 2.0)]);
    }

    /// A strategy with nothing to propose while its proposals are out does not end the run:
    /// the workers wait for results, and the budget is still spent.
    #[test]
    fn a_strategy_that_waits_for_results_is_waited_for() {
        let r = run(3, true, 10);
        assert_eq!(r.records.len(), 10);
        assert_eq!(r.stop, StopReason::Evaluations);
    }

    /// A space smaller than the budget ends when it is exhausted, with every evaluation in
    /// flight finished.
    #[test]
    fn an_exhausted_space_ends_after_the_last_evaluation() {
        let r = run(8, false, 100);
        assert_eq!(r.records.len(), 30);
        assert_eq!(r.finished.len(), 30);
    }
}
