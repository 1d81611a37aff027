//! The driver: ask, evaluate, record, tell, until the budget ends.

use ktune_space::{Configuration, SearchSpace};
use serde::{Deserialize, Serialize};

use crate::runner::evaluate_batch;
use crate::session::{Asked, RecordHook, Session, best_record};
use crate::{CoreError, Outcome, Rng, Runner, Strategy};

/// When to stop. Every limit that is set applies; with none set, the run ends when the space
/// (or the strategy) is exhausted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The most distinct configurations to evaluate (failures and invalid proposals count).
    pub max_evaluations: Option<usize>,
    /// The most seconds on the tuning clock: evaluation time as the runner reports it
    /// (compile + benchmark + verification + framework) plus the strategy's own measured time.
    /// In simulation this is the simulated time.
    pub max_seconds: Option<f64>,
    /// Stop as soon as the objective reaches this value (in the objective's own units and
    /// direction: at most it for a minimised objective, at least it for a maximised one).
    pub target: Option<f64>,
}

impl Budget {
    /// At most `n` evaluations, no other limit.
    pub fn evaluations(n: usize) -> Self {
        Budget {
            max_evaluations: Some(n),
            ..Budget::default()
        }
    }

    /// At most `seconds` on the tuning clock, no other limit.
    pub fn seconds(seconds: f64) -> Self {
        Budget {
            max_seconds: Some(seconds),
            ..Budget::default()
        }
    }

    /// Checks the limits that are set: `max_seconds` positive and at most
    /// [`crate::MAX_SECONDS`], `target` finite. ([`Tuner::run`] checks it before it starts.)
    pub fn validate(&self) -> Result<(), CoreError> {
        if let Some(s) = self.max_seconds {
            crate::checked_seconds(s).map_err(|m| CoreError::Budget(format!("max_seconds {m}")))?;
        }
        if let Some(t) = self.target
            && !t.is_finite()
        {
            return Err(CoreError::Budget(format!(
                "target must be a finite number, not {t}"
            )));
        }
        Ok(())
    }
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// `max_evaluations` was reached.
    Evaluations,
    /// `max_seconds` was reached.
    Time,
    /// The target value was reached.
    Target,
    /// Every configuration of the space has been evaluated.
    SpaceExhausted,
    /// The strategy proposed nothing new.
    StrategyExhausted,
    /// The stop flag was raised (Ctrl-C); the evaluations in flight were finished and recorded.
    Interrupted,
}

impl StopReason {
    /// Every reason, in declaration order.
    pub const ALL: [StopReason; 6] = [
        StopReason::Evaluations,
        StopReason::Time,
        StopReason::Target,
        StopReason::SpaceExhausted,
        StopReason::StrategyExhausted,
        StopReason::Interrupted,
    ];

    /// The name used in records and the bindings (as serde writes it).
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Evaluations => "evaluations",
            StopReason::Time => "time",
            StopReason::Target => "target",
            StopReason::SpaceExhausted => "space_exhausted",
            StopReason::StrategyExhausted => "strategy_exhausted",
            StopReason::Interrupted => "interrupted",
        }
    }
}

/// One evaluated configuration, as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The configuration (value indices).
    pub config: Configuration,
    /// What happened.
    pub outcome: Outcome,
    /// The tuning clock, in seconds, when this evaluation finished.
    pub clock: f64,
}

/// Everything a run did, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuningRun {
    /// The evaluations, in the order they were made.
    pub records: Vec<Record>,
    /// Why the run ended.
    pub stop: StopReason,
    /// The tuning clock at the end, in seconds.
    pub clock: f64,
    /// How much of the clock the strategy itself used (measured wall time of ask and tell).
    pub strategy_seconds: f64,
    /// The objective's direction.
    pub direction: crate::Direction,
    /// With [`Tuner::trace_origins`]: which part of the strategy proposed each record, in
    /// the same order (`None` where it did not say, and for queued and replayed records);
    /// empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub origins: Vec<Option<String>>,
}

impl TuningRun {
    /// The best successful record (the first to reach the best objective value).
    pub fn best(&self) -> Option<&Record> {
        best_record(&self.records, self.direction)
    }

    /// The objective of each record in order, `None` for failures (the values of a trace).
    pub fn objective_values(&self) -> Vec<Option<f64>> {
        self.records.iter().map(|r| r.outcome.objective()).collect()
    }
}

/// Drives one tuning run: a loop over a [`Session`] and a [`Runner`]. Free of any particular
/// runner or strategy.
pub struct Tuner<'a> {
    space: &'a SearchSpace,
    runner: &'a mut dyn Runner,
    budget: Budget,
    batch: usize,
    on_record: Option<RecordHook<'a>>,
    replay: Vec<Record>,
    queue: Vec<Configuration>,
    stop: Option<&'a std::sync::atomic::AtomicBool>,
    priors: &'a [crate::MatchedPrior],
    objectives: usize,
    goal: Option<crate::pareto::Goal>,
    origins: bool,
}

impl<'a> Tuner<'a> {
    /// A tuner for `space`, evaluating with `runner`, within `budget`, one configuration per
    /// round.
    pub fn new(space: &'a SearchSpace, runner: &'a mut dyn Runner, budget: Budget) -> Tuner<'a> {
        Tuner {
            space,
            runner,
            budget,
            batch: 1,
            on_record: None,
            replay: Vec::new(),
            queue: Vec::new(),
            stop: None,
            priors: &[],
            objectives: 1,
            goal: None,
            origins: false,
        }
    }

    /// Records which part of the strategy proposed each configuration
    /// ([`TuningRun::origins`]).
    pub fn trace_origins(mut self) -> Tuner<'a> {
        self.origins = true;
        self
    }

    /// The first `n` metrics of the runner are the study's objectives, each in the direction
    /// the runner gives it (1, the default: the first metric only); see
    /// [`Session::set_objectives`].
    pub fn objectives(mut self, n: usize) -> Tuner<'a> {
        self.objectives = n.max(1);
        self
    }

    /// With several objectives: the goal the study seeks one configuration by (see
    /// [`Session::set_goal`]).
    pub fn goal(mut self, goal: crate::pareto::Goal) -> Tuner<'a> {
        self.goal = Some(goal);
        self
    }

    /// How many configurations to ask for per round (runners that compile in parallel want
    /// more than one).
    pub fn batch_size(mut self, n: usize) -> Tuner<'a> {
        self.batch = n.max(1);
        self
    }

    /// Called with every evaluation as it is recorded, before the strategy is told (storage,
    /// progress display). An error ends the run with that error.
    pub fn on_record(
        mut self,
        f: impl FnMut(&Record) -> Result<(), CoreError> + Send + 'a,
    ) -> Tuner<'a> {
        self.on_record = Some(Box::new(f));
        self
    }

    /// A flag that, once raised (e.g. by a Ctrl-C handler), ends the run after the
    /// evaluations in flight are finished and recorded.
    pub fn stop_flag(mut self, flag: &'a std::sync::atomic::AtomicBool) -> Tuner<'a> {
        self.stop = Some(flag);
        self
    }

    /// Records from an earlier run to replay first: they are told to the strategy and count
    /// against the budget, but are not evaluated again (resume).
    pub fn replay(mut self, records: Vec<Record>) -> Tuner<'a> {
        self.replay = records;
        self
    }

    /// A configuration to measure first, before the strategy proposes (see
    /// [`Session::enqueue`]): the default configuration, say.
    pub fn enqueue(mut self, config: Configuration) -> Tuner<'a> {
        self.queue.push(config);
        self
    }

    /// Earlier measurements of related tasks, matched onto the space, for the strategy (see
    /// [`Strategy::set_priors`]).
    pub fn priors(mut self, priors: &'a [crate::MatchedPrior]) -> Tuner<'a> {
        self.priors = priors;
        self
    }

    /// Runs the strategy until the budget ends.
    pub fn run(self, strategy: &mut dyn Strategy, rng: &mut Rng) -> Result<TuningRun, CoreError> {
        let direction = self
            .runner
            .metrics()
            .first()
            .map_or(crate::Direction::Minimize, |m| m.direction);
        let mut session = Session::new(
            self.space,
            Box::new(strategy),
            self.budget,
            direction,
            rng.clone(),
        )?;
        let metrics = self.runner.metrics();
        if self.objectives > metrics.len().max(1) {
            return Err(CoreError::Objectives(format!(
                "{} objectives asked for, but runner `{}` measures {} metric(s)",
                self.objectives,
                self.runner.name(),
                metrics.len()
            )));
        }
        if self.objectives > 1 {
            let directions: Vec<crate::Direction> = metrics[..self.objectives]
                .iter()
                .map(|m| m.direction)
                .collect();
            session.set_objectives(&directions)?;
        }
        if let Some(goal) = self.goal {
            session.set_goal(&goal)?;
        }
        if let Some(f) = self.on_record {
            session.on_record(f);
        }
        if let Some(flag) = self.stop {
            session.stop_flag(flag);
        }
        if !self.priors.is_empty() {
            session.set_priors(self.priors);
        }
        if self.origins {
            session.trace_origins();
        }
        session.observe(self.replay);
        for c in self.queue {
            session.enqueue(c);
        }
        let runner = self.runner;
        let stop = loop {
            let batch = match session.ask(self.batch)? {
                Asked::Stop(stop) => break stop,
                Asked::Evaluate(batch) => batch,
            };
            runner.set_incumbent(session.best_value());
            runner.set_time_left(session.time_left());
            let (outcomes, ended) = evaluate_batch(runner, self.space, &batch)?;
            let done = outcomes.len();
            session.abandon(&batch[done..], false);
            session.tell(batch.into_iter().zip(outcomes).collect())?;
            match ended {
                None => {}
                Some(Ok(stop)) => break stop,
                Some(Err(e)) => return Err(e),
            }
        };
        let (run, state) = session.into_run(stop);
        *rng = state;
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::testing::FnRunner;
    use crate::{Direction, FailureKind, History, Observation, Timings};
    use ktune_space::Parameter;

    #[test]
    fn origins_follow_the_records_when_traced_and_are_absent_otherwise() {
        let space = space();
        let run = |traced: bool| {
            let mut runner = linear(Direction::Minimize);
            let mut strategy = Script::of(&[1, 7, 4, 3]);
            let mut tuner =
                Tuner::new(&space, &mut runner, Budget::evaluations(5)).enqueue(vec![6]);
            if traced {
                tuner = tuner.trace_origins();
            }
            tuner
                .run(&mut strategy, &mut Rng::seed_from_u64(0))
                .unwrap()
        };
        let traced = run(true);
        let xs: Vec<u32> = traced.records.iter().map(|r| r.config[0]).collect();
        // The queued default first, the invalid proposal (7) recorded when it was made.
        assert_eq!(xs, [6, 1, 7, 4, 3]);
        let odd = |x: u32| Some(format!("odd/{x}"));
        assert_eq!(traced.origins, [None, odd(1), odd(7), None, odd(3)]);
        let plain = run(false);
        assert!(plain.origins.is_empty());
        let outcomes = |r: &TuningRun| -> Vec<(Configuration, Outcome)> {
            // The clock counts the strategy's measured time: not compared.
            r.records
                .iter()
                .map(|r| (r.config.clone(), r.outcome.clone()))
                .collect()
        };
        assert_eq!(outcomes(&plain), outcomes(&traced));
        // Not traced: the run's JSON is what it was before origins existed.
        let json = serde_json::to_value(&plain).unwrap();
        assert!(json.get("origins").is_none());
    }

    #[test]
    fn stop_reason_names_are_the_serialised_ones() {
        for r in StopReason::ALL {
            assert_eq!(serde_json::to_value(r).unwrap(), r.name(), "{r:?}");
        }
    }

    /// Objective = value of x; fails for x == 2; each evaluation takes 1 s.
    fn linear(direction: Direction) -> FnRunner<'static> {
        FnRunner::values(|x| (x[0] != 2.0).then_some(x[0]))
            .seconds(1.0)
            .metric("x", direction)
    }

    /// Proposes a fixed script of configurations (by x value), `n` at a time.
    struct Script {
        plan: Vec<Vec<u32>>,
        told: Vec<Observation>,
    }

    impl Script {
        /// The configurations `x = xs[0], xs[1], ...` in order.
        fn of(xs: &[u32]) -> Script {
            Script {
                plan: xs.iter().map(|&x| vec![x]).collect(),
                told: Vec::new(),
            }
        }
    }

    impl Strategy for Script {
        fn name(&self) -> &str {
            "script"
        }
        fn ask(
            &mut self,
            _: &SearchSpace,
            _: &History,
            n: usize,
            _: &mut Rng,
        ) -> Vec<Configuration> {
            let k = n.min(self.plan.len());
            self.plan.drain(..k).collect()
        }
        fn tell(&mut self, _: &SearchSpace, observations: &[Observation]) {
            self.told.extend_from_slice(observations);
        }
        /// Says where odd values came from; even ones go unattributed.
        fn origin(&self, config: &Configuration) -> Option<String> {
            (config[0] % 2 == 1).then(|| format!("odd/{}", config[0]))
        }
    }

    fn space() -> SearchSpace {
        SearchSpace::new(
            vec![Parameter::integer_range("x", 0, 9, 1).unwrap()],
            &["x != 7"],
        )
        .unwrap()
    }

    fn tune(
        plan: &[u32],
        budget: Budget,
        batch: usize,
        direction: Direction,
    ) -> (TuningRun, Script, Vec<Configuration>) {
        let space = space();
        let mut runner = linear(direction);
        let mut strategy = Script::of(plan);
        let run = Tuner::new(&space, &mut runner, budget)
            .batch_size(batch)
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap();
        (run, strategy, runner.evaluated().to_vec())
    }

    #[test]
    fn the_runner_is_told_the_best_so_far_before_each_batch() {
        for (direction, want) in [
            (Direction::Minimize, [None, Some(5.0), Some(3.0), Some(3.0)]),
            (Direction::Maximize, [None, Some(5.0), Some(5.0), Some(5.0)]),
        ] {
            let space = space();
            let mut runner = linear(direction);
            let mut strategy = Script::of(&[5, 3, 2, 4]);
            Tuner::new(&space, &mut runner, Budget::default())
                .run(&mut strategy, &mut Rng::seed_from_u64(0))
                .unwrap();
            assert_eq!(runner.incumbents(), want.as_slice());
        }
    }

    #[test]
    fn more_objectives_than_the_runner_measures_are_refused() {
        let space = space();
        let mut runner = linear(Direction::Minimize);
        let mut strategy = Script::of(&[5, 3]);
        let e = Tuner::new(&space, &mut runner, Budget::default())
            .objectives(2)
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap_err();
        assert!(e.to_string().contains("2 objectives"), "{e}");
        assert!(strategy.told.is_empty());
    }

    #[test]
    fn memoises_and_stops_at_the_evaluation_budget() {
        let budget = Budget::evaluations(4);
        let (run, strategy, evaluated) =
            tune(&[5, 5, 3, 5, 2, 8, 9], budget, 1, Direction::Minimize);
        assert_eq!(evaluated, vec![vec![5], vec![3], vec![2], vec![8]]);
        assert_eq!(run.stop, StopReason::Evaluations);
        assert_eq!(
            run.objective_values(),
            vec![Some(5.0), Some(3.0), None, Some(8.0)]
        );
        // Repeats were told again from memory.
        assert_eq!(strategy.told.len(), 6);
        assert_eq!(run.best().unwrap().config, vec![3]);
        // Four evaluations of 1 s each, plus the strategy's own time.
        let c = run.records[3].clock;
        assert!(
            (4.0..=4.0 + run.strategy_seconds + 1e-9).contains(&c),
            "{c}"
        );
        assert!(run.records.windows(2).all(|w| w[0].clock < w[1].clock));
    }

    #[test]
    fn batches_are_trimmed_to_the_budget_and_deduplicated() {
        let budget = Budget::evaluations(3);
        let (run, _, evaluated) = tune(&[1, 1, 4, 6, 8], budget, 4, Direction::Minimize);
        assert_eq!(evaluated, vec![vec![1], vec![4], vec![6]]);
        assert_eq!(run.records.len(), 3);
    }

    /// [`linear`] that stops at x = 6 (like a GPU left busy by a hung kernel), with what it
    /// measured before.
    fn stopping() -> FnRunner<'static> {
        linear(Direction::Minimize).on_batch(|configs, mut outcomes| {
            let Some(k) = configs.iter().position(|c| c[0] == 6) else {
                return Ok(outcomes);
            };
            outcomes.truncate(k + 1);
            outcomes[k] = Outcome::failed(FailureKind::Timeout, "hung", Timings::default());
            Err(CoreError::RunnerStopped {
                runner: "stopping".into(),
                message: "the GPU is still busy".into(),
                outcomes,
            })
        })
    }

    #[test]
    fn a_stopped_runner_keeps_what_it_measured() {
        let space = space();
        let mut runner = stopping();
        let mut strategy = Script::of(&[1, 7, 6, 3, 4]);
        let mut recorded = Vec::new();
        let err = Tuner::new(&space, &mut runner, Budget::default())
            .batch_size(5)
            .on_record(|r| {
                recorded.push((r.config.clone(), r.outcome.failure()));
                Ok(())
            })
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap_err();
        assert!(matches!(err, CoreError::Runner { .. }), "{err}");
        assert!(err.to_string().contains("still busy"), "{err}");
        // 7 is invalid (recorded when proposed, never run), 1 ran, 6 hung; 3 and 4 were never
        // reached and are not recorded, so a resumed run measures them.
        assert_eq!(
            recorded,
            vec![
                (vec![7], Some(FailureKind::Invalid)),
                (vec![1], None),
                (vec![6], Some(FailureKind::Timeout)),
            ]
        );
        // 7, invalid, never reached the runner.
        assert_eq!(runner.evaluated(), [vec![1], vec![6], vec![3], vec![4]]);
    }

    #[test]
    fn invalid_proposals_cost_an_evaluation_and_are_never_run() {
        let (run, strategy, evaluated) = tune(&[7, 1], Budget::default(), 1, Direction::Minimize);
        assert_eq!(evaluated, vec![vec![1]]);
        assert_eq!(run.records[0].outcome.failure(), Some(FailureKind::Invalid));
        assert_eq!(strategy.told[0].failure, Some(FailureKind::Invalid));
        assert_eq!(run.stop, StopReason::StrategyExhausted);
    }

    #[test]
    fn stops_at_the_target_in_either_direction() {
        let budget = Budget {
            target: Some(3.0),
            ..Budget::default()
        };
        let (run, _, _) = tune(&[6, 4, 3, 1, 0], budget.clone(), 1, Direction::Minimize);
        assert_eq!((run.stop, run.records.len()), (StopReason::Target, 3));
        let (run, _, _) = tune(&[1, 4, 5], budget, 1, Direction::Maximize);
        assert_eq!((run.stop, run.records.len()), (StopReason::Target, 2));
        assert_eq!(run.best().unwrap().config, vec![4]);
    }

    #[test]
    fn a_budget_out_of_range_is_refused_before_anything_runs() {
        for (max_seconds, target) in [
            (Some(f64::NAN), None),
            (Some(1e300), None),
            (Some(-1.0), None),
            (Some(0.0), None),
            (None, Some(f64::INFINITY)),
        ] {
            let budget = Budget {
                max_seconds,
                target,
                ..Budget::default()
            };
            let e = budget.validate().unwrap_err();
            assert!(matches!(e, CoreError::Budget(_)), "{e}");
        }
        assert!(
            Budget {
                max_seconds: Some(1e9),
                target: Some(-3.0),
                ..Budget::default()
            }
            .validate()
            .is_ok()
        );
        assert_eq!(
            crate::checked_seconds(1.5),
            Ok(std::time::Duration::from_millis(1500))
        );
    }

    /// Takes 2 s a configuration, and has only the time for one of each batch: the first is
    /// cut (a timeout), the others never start.
    fn slow() -> FnRunner<'static> {
        let t = Timings {
            benchmark: 2.0,
            ..Timings::default()
        };
        FnRunner::values(|_| Some(1.0))
            .seconds(2.0)
            .metric("x", Direction::Minimize)
            .on_batch(move |configs, outcomes| {
                if configs.len() == 1 {
                    return Ok(outcomes);
                }
                let first = Outcome::failed(FailureKind::Timeout, "the time budget ran out", t);
                Err(CoreError::OutOfTime {
                    outcomes: vec![first],
                })
            })
    }

    #[test]
    fn a_runner_out_of_time_ends_the_run_with_what_it_finished() {
        let space = space();
        let mut runner = slow();
        let mut strategy = Script::of(&[1, 3, 4, 5, 6]);
        let budget = Budget::seconds(10.0);
        let run = Tuner::new(&space, &mut runner, budget)
            .batch_size(1)
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap();
        // One at a time: 2 s each, the runner told what is left before each.
        assert_eq!(run.records.len(), 5);
        // (less the strategy's own time, a few microseconds)
        assert!((runner.time_left()[0].unwrap() - 10.0).abs() < 0.01);
        assert!((runner.time_left()[1].unwrap() - 8.0).abs() < 0.01);
        // Three at a time: the first is recorded (cut), the other two never started.
        let mut strategy = Script::of(&[1, 3, 4, 5, 6]);
        let run = Tuner::new(&space, &mut runner, Budget::seconds(10.0))
            .batch_size(3)
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap();
        assert_eq!((run.stop, run.records.len()), (StopReason::Time, 1));
        assert_eq!(run.records[0].outcome.failure(), Some(FailureKind::Timeout));
    }

    /// The default configuration goes through the session: measured first and alone, told
    /// to the strategy; when the time budget ends during it, it is recorded as cut (a
    /// timeout), not lost.
    #[test]
    fn an_enqueued_configuration_is_measured_first_and_kept_when_the_time_runs_out() {
        let space = space();
        let mut runner = linear(Direction::Minimize);
        let mut strategy = Script::of(&[1, 3, 4]);
        let run = Tuner::new(&space, &mut runner, Budget::default())
            .batch_size(3)
            .enqueue(vec![5])
            .enqueue(vec![7])
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap();
        // 7 is outside the space: never queued. 5 alone, then the strategy's batch.
        assert_eq!(runner.evaluated(), vec![vec![5], vec![1], vec![3], vec![4]]);
        assert_eq!(strategy.told[0].config, vec![5]);
        assert_eq!(run.records[0].outcome.objective(), Some(5.0));

        let mut slow = slow();
        let mut strategy = Script::of(&[1, 3]);
        let budget = Budget::seconds(1.0);
        // `Slow` runs one configuration per batch in 2 s: the queued one is cut.
        let run = Tuner::new(&space, &mut slow, budget)
            .batch_size(2)
            .enqueue(vec![4])
            .enqueue(vec![6])
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap();
        assert_eq!(run.stop, StopReason::Time);
        assert_eq!(run.records.len(), 1);
        assert_eq!(run.records[0].config, vec![4]);
        assert_eq!(run.records[0].outcome.failure(), Some(FailureKind::Timeout));
        assert_eq!(slow.time_left()[0], Some(1.0));
    }

    #[test]
    fn stops_on_the_clock() {
        let budget = Budget::seconds(2.5);
        let (run, _, _) = tune(&[1, 3, 4, 5, 6], budget, 1, Direction::Minimize);
        assert_eq!((run.stop, run.records.len()), (StopReason::Time, 3));
        assert!(run.clock >= 3.0);
    }

    #[test]
    fn stops_when_the_space_is_exhausted() {
        let all: Vec<u32> = (0..10).filter(|&x| x != 7).collect();
        let (run, _, _) = tune(&all, Budget::default(), 3, Direction::Minimize);
        assert_eq!(
            (run.stop, run.records.len()),
            (StopReason::SpaceExhausted, 9)
        );
    }

    #[test]
    fn a_failing_record_hook_ends_the_run_and_the_stop_flag_interrupts() {
        let space = space();
        let mut runner = linear(Direction::Minimize);
        let mut strategy = Script::of(&[1, 2, 3]);
        let mut seen = 0;
        let err = Tuner::new(&space, &mut runner, Budget::default())
            .on_record(|_| {
                seen += 1;
                Err(CoreError::Record("disk full".into()))
            })
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap_err();
        assert!(err.to_string().contains("disk full"));
        assert_eq!(seen, 1);
        // Not told about an evaluation that was not recorded.
        assert!(strategy.told.is_empty());

        let stop = std::sync::atomic::AtomicBool::new(false);
        let mut strategy = Script::of(&[1, 2, 3]);
        let run = Tuner::new(&space, &mut runner, Budget::default())
            .stop_flag(&stop)
            .on_record(|_| {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            })
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap();
        assert_eq!((run.stop, run.records.len()), (StopReason::Interrupted, 1));
    }

    #[test]
    fn replayed_records_are_told_not_evaluated() {
        let space = space();
        let mut runner = linear(Direction::Minimize);
        let earlier = vec![Record {
            config: vec![4],
            outcome: Outcome::ok(vec![4.0], Timings::default()),
            clock: 10.0,
        }];
        let mut strategy = Script::of(&[4, 2]);
        let budget = Budget::evaluations(2);
        let run = Tuner::new(&space, &mut runner, budget)
            .replay(earlier)
            .run(&mut strategy, &mut Rng::seed_from_u64(0))
            .unwrap();
        assert_eq!(runner.evaluated(), vec![vec![2]]);
        assert_eq!(run.records.len(), 2);
        assert!(run.clock >= 11.0);
        assert_eq!(strategy.told[0].value, Some(4.0));
    }
}
