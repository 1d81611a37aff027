//! The owned ask/tell session: one study's strategy, history, budget and random state.
//!
//! A [`Session`] is what every driver of a study holds: the [`Tuner`](crate::Tuner) (a loop
//! over a session and a runner), a distributed worker (a session fed with the other workers'
//! records from a [`Storage`](crate::Storage)), and the Python bindings. It keeps the rules
//! that make results trustworthy in one place: a configuration is never evaluated twice,
//! proposals outside the space are recorded as invalid and never run, every record is made
//! (and handed to the record hook) before the strategy is told, and the budget is the study's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use ktune_space::{Configuration, SearchSpace};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::{
    Budget, CoreError, Direction, FailureKind, History, Observation, Outcome, Record, Rng,
    StopReason, Strategy, Timings, TuningRun,
};

/// How many rounds in a row a strategy may propose only evaluated configurations before the
/// session ends as exhausted (a strategy stuck in a converged population).
const STALE_ROUNDS: usize = 1000;

/// Called with every record as it is made, before the strategy is told; an error ends the
/// run.
pub type RecordHook<'a> = Box<dyn FnMut(&Record) -> Result<(), CoreError> + Send + 'a>;

/// The search space of a session: borrowed (the tuner) or shared (owners that outlive any one
/// borrow, such as the Python bindings).
pub enum SpaceRef<'a> {
    /// Borrowed for the session's lifetime.
    Borrowed(&'a SearchSpace),
    /// Shared ownership.
    Shared(std::sync::Arc<SearchSpace>),
}

impl std::ops::Deref for SpaceRef<'_> {
    type Target = SearchSpace;
    fn deref(&self) -> &SearchSpace {
        match self {
            SpaceRef::Borrowed(s) => s,
            SpaceRef::Shared(s) => s,
        }
    }
}

impl<'a> From<&'a SearchSpace> for SpaceRef<'a> {
    fn from(space: &'a SearchSpace) -> SpaceRef<'a> {
        SpaceRef::Borrowed(space)
    }
}

impl From<std::sync::Arc<SearchSpace>> for SpaceRef<'_> {
    fn from(space: std::sync::Arc<SearchSpace>) -> Self {
        SpaceRef::Shared(space)
    }
}

/// What [`Session::ask`] gives.
#[derive(Clone, Debug, PartialEq)]
pub enum Asked {
    /// Configurations to evaluate: distinct, in the space, never evaluated, not in flight.
    /// Tell their outcomes with [`Session::tell`] (or give them back with
    /// [`Session::abandon`]).
    Evaluate(Vec<Configuration>),
    /// The study is over for this session.
    Stop(StopReason),
}

/// An owned ask/tell session over one study.
///
/// # Example
/// ```
/// use ktune_core::{Asked, Budget, Direction, History, Observation, Outcome, Rng, Session, Strategy, Timings};
/// use ktune_space::{Configuration, Parameter, SearchSpace};
/// use rand::SeedableRng;
///
/// /// Walks the space in rank order.
/// struct InOrder(u64);
/// impl Strategy for InOrder {
///     fn name(&self) -> &str { "in-order" }
///     fn ask(&mut self, space: &SearchSpace, _: &History, n: usize, _: &mut Rng) -> Vec<Configuration> {
///         let out: Vec<_> = (self.0..space.size()).take(n).map(|r| space.configuration(r)).collect();
///         self.0 += out.len() as u64;
///         out
///     }
///     fn tell(&mut self, _: &SearchSpace, _: &[Observation]) {}
/// }
///
/// let space = SearchSpace::new(vec![Parameter::integer_range("x", 0, 9, 1)?], &[] as &[&str])?;
/// let budget = Budget::evaluations(4);
/// let mut session = Session::new(&space, Box::new(InOrder(0)), budget, Direction::Minimize, Rng::seed_from_u64(1))?;
/// while let Asked::Evaluate(batch) = session.ask(2)? {
///     let results = batch.into_iter().map(|c| {
///         let x = space.values(&c)[0].as_f64().unwrap();
///         (c, Outcome::ok(vec![(x - 3.0).powi(2)], Timings::default()))
///     }).collect();
///     session.tell(results)?;
/// }
/// assert_eq!(session.records().len(), 4);
/// assert_eq!(space.describe(&session.best().unwrap().config), "x=3");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Session<'a> {
    space: SpaceRef<'a>,
    strategy: Box<dyn Strategy + 'a>,
    budget: Budget,
    direction: Direction,
    /// With several objectives: the direction of each, the first metrics of every outcome in
    /// order (the first is `direction`); empty with one.
    objectives: Vec<Direction>,
    rng: Rng,
    history: History,
    records: Vec<Record>,
    /// Asked and not yet told or abandoned.
    in_flight: FxHashSet<Configuration>,
    /// Being evaluated by another worker (its record will arrive through
    /// [`observe`](Self::observe)); never proposed by this session.
    elsewhere: FxHashSet<Configuration>,
    /// Observations waiting to be told with the next outcomes: repeats asked again, invalid
    /// proposals.
    untold: Vec<Observation>,
    clock: f64,
    strategy_seconds: f64,
    stale: usize,
    /// Invalid proposals recorded since [`take_invalid`](Self::take_invalid) was last called.
    invalid: Vec<Record>,
    /// Configurations to hand out before the strategy's proposals.
    queue: std::collections::VecDeque<Configuration>,
    /// With a goal: whether the strategy seeks it.
    goal_sought: Option<bool>,
    on_record: Option<RecordHook<'a>>,
    stop: Option<&'a AtomicBool>,
    /// With [`trace_origins`](Self::trace_origins): what the strategy says proposed each
    /// configuration.
    origins: Option<FxHashMap<Configuration, String>>,
}

impl<'a> Session<'a> {
    /// A session over `space` driven by `strategy`, within `budget` (checked here), for an
    /// objective in `direction`, with all randomness from `rng`.
    pub fn new(
        space: impl Into<SpaceRef<'a>>,
        mut strategy: Box<dyn Strategy + 'a>,
        budget: Budget,
        direction: Direction,
        rng: Rng,
    ) -> Result<Session<'a>, CoreError> {
        budget.validate()?;
        strategy.set_budget(budget.max_evaluations);
        Ok(Session {
            space: space.into(),
            strategy,
            budget,
            direction,
            objectives: Vec::new(),
            rng,
            history: History::new(),
            records: Vec::new(),
            in_flight: FxHashSet::default(),
            elsewhere: FxHashSet::default(),
            untold: Vec::new(),
            clock: 0.0,
            strategy_seconds: 0.0,
            stale: 0,
            invalid: Vec::new(),
            queue: std::collections::VecDeque::new(),
            goal_sought: None,
            on_record: None,
            stop: None,
            origins: None,
        })
    }

    /// Makes the study one of several objectives: the first `directions.len()` metrics of each
    /// outcome, in their directions, the first being the objective given to
    /// [`new`](Self::new); strategies see them as [`Observation::objectives`]. Before the
    /// first [`ask`](Self::ask).
    ///
    /// # Errors
    /// [`CoreError::Objectives`] when the first direction is not the session's own.
    pub fn set_objectives(&mut self, directions: &[Direction]) -> Result<(), CoreError> {
        if directions.first().is_some_and(|&d| d != self.direction) {
            return Err(CoreError::Objectives(format!(
                "the first objective is to {} but the session's objective is to {}",
                directions[0].name(),
                self.direction.name()
            )));
        }
        self.objectives = if directions.len() > 1 {
            directions.to_vec()
        } else {
            Vec::new()
        };
        Ok(())
    }

    /// The directions of the study's objectives: one, or as many as
    /// [`set_objectives`](Self::set_objectives) gave.
    pub fn objectives(&self) -> Vec<Direction> {
        if self.objectives.is_empty() {
            vec![self.direction]
        } else {
            self.objectives.clone()
        }
    }

    /// Makes the study seek one configuration by `goal` (read over its objectives): the
    /// strategy is told it ([`Strategy::set_goal`]). Observations still carry the first
    /// objective as `value` and every objective in `objectives`. After
    /// [`set_objectives`](Self::set_objectives), before the first [`ask`](Self::ask).
    ///
    /// # Errors
    /// [`CoreError::Objectives`] when the study does not have the goal's objectives.
    pub fn set_goal(&mut self, goal: &crate::pareto::Goal) -> Result<(), CoreError> {
        if self.objectives.len() < 2 || goal.objectives() > self.objectives.len() {
            return Err(CoreError::Objectives(format!(
                "a goal needs the study's objectives ({} of them), and the session has {}",
                goal.objectives().max(2),
                self.objectives.len().max(1)
            )));
        }
        self.goal_sought = Some(self.strategy.set_goal(goal));
        Ok(())
    }

    /// With a goal: whether the strategy seeks it ([`Strategy::set_goal`]), or only
    /// minimises the first objective for the goal to pick from; `None` without a goal.
    pub fn goal_sought(&self) -> Option<bool> {
        self.goal_sought
    }

    /// Tells the strategy the study's priors (see [`Strategy::set_priors`]); before the first
    /// [`ask`](Self::ask).
    pub fn set_priors(&mut self, priors: &[crate::MatchedPrior]) {
        self.strategy.set_priors(priors);
    }

    /// Called with every record this session makes (its own evaluations and invalid
    /// proposals, not observed ones), before the strategy is told: storage, progress display.
    /// An error ends the run with that error and the strategy is not told.
    pub fn on_record(&mut self, f: impl FnMut(&Record) -> Result<(), CoreError> + Send + 'a) {
        self.on_record = Some(Box::new(f));
    }

    /// A flag that, once raised (e.g. by a Ctrl-C handler), makes the next
    /// [`ask`](Self::ask) stop with [`StopReason::Interrupted`].
    pub fn stop_flag(&mut self, flag: &'a AtomicBool) {
        self.stop = Some(flag);
    }

    /// The search space.
    pub fn space(&self) -> &SearchSpace {
        &self.space
    }

    /// The objective's direction.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// The budget.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Every record of the study this session knows, in the order it learnt them (observed
    /// and its own).
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// What the strategy has been told, as a history.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The tuning clock, in seconds (see [`Budget::max_seconds`]).
    pub fn clock(&self) -> f64 {
        self.clock
    }

    /// How much of the clock the strategy itself used.
    pub fn strategy_seconds(&self) -> f64 {
        self.strategy_seconds
    }

    /// Configurations asked and not yet told or abandoned.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The best successful record (the first to reach the best objective value).
    pub fn best(&self) -> Option<&Record> {
        best_record(&self.records, self.direction)
    }

    /// The best objective value so far.
    pub fn best_value(&self) -> Option<f64> {
        self.best().and_then(|r| r.outcome.objective())
    }

    /// Seconds left on the clock, when the budget has a time limit.
    pub fn time_left(&self) -> Option<f64> {
        self.budget.max_seconds.map(|m| m - self.clock)
    }

    /// Records made elsewhere (earlier runs being resumed, other workers of the study): each
    /// one not yet known is added to the history and told to the strategy, in order, and
    /// counts against the budget; none is evaluated here. Returns how many were new.
    pub fn observe(&mut self, records: Vec<Record>) -> usize {
        let mut told = Vec::with_capacity(records.len());
        for r in records {
            if self.history.contains(&r.config) {
                continue;
            }
            self.in_flight.remove(&r.config);
            self.elsewhere.remove(&r.config);
            self.clock = self.clock.max(r.clock);
            let o = self.observation(&r.config, &r.outcome);
            self.history.push(o.clone());
            told.push(o);
            self.records.push(r);
        }
        if !told.is_empty() {
            self.tell_strategy(&told);
        }
        told.len()
    }

    /// Queues `config` to be measured before the strategy proposes anything more (as
    /// Optuna's `enqueue_trial`): the default configuration, or any a user wants measured
    /// first. [`ask`](Self::ask) hands out queued configurations first, in order and alone
    /// (never in one batch with the strategy's proposals), and they go the ordinary way:
    /// counted against the budget, recorded, told to the strategy. Returns false, and queues
    /// nothing, for a configuration outside the space or already recorded or queued; one
    /// recorded by the time it would be handed out is skipped then.
    pub fn enqueue(&mut self, config: Configuration) -> bool {
        if !self.space.contains(&config)
            || self.history.contains(&config)
            || self.queue.contains(&config)
        {
            return false;
        }
        self.queue.push_back(config);
        true
    }

    /// Up to `n` queued configurations that are not recorded, in flight or held elsewhere.
    fn take_queued(&mut self, n: usize) -> Vec<Configuration> {
        let mut out = Vec::new();
        while out.len() < n
            && let Some(c) = self.queue.pop_front()
        {
            if !self.history.contains(&c)
                && !self.in_flight.contains(&c)
                && !self.elsewhere.contains(&c)
            {
                out.push(c);
            }
        }
        out
    }

    /// Why the study is over for this session, if it is (checked before every ask).
    pub fn stop_reason(&self) -> Option<StopReason> {
        if let Some(best) = self.best_value()
            && self
                .budget
                .target
                .is_some_and(|t| !self.direction.better(t, best))
        {
            return Some(StopReason::Target);
        }
        if self
            .budget
            .max_evaluations
            .is_some_and(|m| self.records.len() + self.in_flight.len() >= m)
        {
            return Some(StopReason::Evaluations);
        }
        if self.stop.is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Some(StopReason::Interrupted);
        }
        if self.budget.max_seconds.is_some_and(|m| self.clock >= m) {
            return Some(StopReason::Time);
        }
        let valid = self
            .history
            .observations()
            .iter()
            .filter(|o| o.failure != Some(FailureKind::Invalid))
            .count()
            + self.in_flight.len()
            + self.elsewhere.len();
        if valid as u64 >= self.space.size() {
            return Some(StopReason::SpaceExhausted);
        }
        None
    }

    /// Up to `n` new configurations to evaluate, or why the study is over: the
    /// [queued](Self::enqueue) ones first, then the strategy's. Proposals already evaluated
    /// are told again at no cost; proposals outside the space are recorded as invalid (they
    /// cost an evaluation and are never run); the strategy is asked again until it proposes
    /// something new or gives up.
    pub fn ask(&mut self, n: usize) -> Result<Asked, CoreError> {
        loop {
            if let Some(stop) = self.stop_reason() {
                return Ok(Asked::Stop(stop));
            }
            let remaining = self.budget.max_evaluations.map_or(usize::MAX, |m| {
                m - self.records.len() - self.in_flight.len()
            });
            let want = n.max(1).min(remaining);
            let queued = self.take_queued(want);
            if !queued.is_empty() {
                self.in_flight.extend(queued.iter().cloned());
                return Ok(Asked::Evaluate(queued));
            }
            let t = Instant::now();
            let proposals = self
                .strategy
                .ask(&self.space, &self.history, want, &mut self.rng);
            let s = t.elapsed().as_secs_f64();
            self.strategy_seconds += s;
            self.clock += s;
            if proposals.is_empty() {
                return Ok(Asked::Stop(StopReason::StrategyExhausted));
            }

            let mut fresh: Vec<Configuration> = Vec::new();
            for c in proposals {
                if let Some(o) = self.history.get(&c) {
                    self.untold.push(o.clone());
                } else if !self.in_flight.contains(&c)
                    && !self.elsewhere.contains(&c)
                    && !fresh.contains(&c)
                    && fresh.len() < remaining
                {
                    fresh.push(c);
                }
            }
            if fresh.is_empty() {
                self.stale += 1;
                let again = std::mem::take(&mut self.untold);
                self.tell_strategy(&again);
                if self.stale >= STALE_ROUNDS {
                    return Ok(Asked::Stop(StopReason::StrategyExhausted));
                }
                continue;
            }
            self.stale = 0;

            if let Some(origins) = &mut self.origins {
                for c in &fresh {
                    if let Some(o) = self.strategy.origin(c) {
                        origins.insert(c.clone(), o);
                    }
                }
            }
            let (valid, invalid): (Vec<_>, Vec<_>) =
                fresh.into_iter().partition(|c| self.space.contains(c));
            for config in invalid {
                let outcome = Outcome::failed(
                    FailureKind::Invalid,
                    "violates the search space's constraints",
                    Timings::default(),
                );
                let o = self.record(config, outcome)?;
                self.untold.push(o);
                if let Some(r) = self.records.last() {
                    self.invalid.push(r.clone());
                }
            }
            if valid.is_empty() {
                let told = std::mem::take(&mut self.untold);
                self.tell_strategy(&told);
                continue;
            }
            self.in_flight.extend(valid.iter().cloned());
            return Ok(Asked::Evaluate(valid));
        }
    }

    /// The outcomes of evaluated configurations (asked, or taken over from a worker that
    /// died): each is recorded (the record hook sees it first), then the strategy is told all
    /// of them at once, after any repeats and invalid proposals of the last ask. A
    /// configuration already recorded is ignored.
    pub fn tell(&mut self, results: Vec<(Configuration, Outcome)>) -> Result<(), CoreError> {
        let mut told = std::mem::take(&mut self.untold);
        for (config, outcome) in results {
            self.in_flight.remove(&config);
            if self.history.contains(&config) {
                continue;
            }
            self.elsewhere.remove(&config);
            told.push(self.record(config, outcome)?);
        }
        self.tell_strategy(&told);
        Ok(())
    }

    /// Gives back asked configurations that will not be evaluated here: `elsewhere` when
    /// another worker holds them (they are not proposed again; their records will come
    /// through [`observe`](Self::observe)), otherwise they are simply forgotten (a runner that
    /// stopped before reaching them; a later ask may propose them again).
    pub fn abandon(&mut self, configs: &[Configuration], elsewhere: bool) {
        for c in configs {
            self.in_flight.remove(c);
            if elsewhere {
                self.elsewhere.insert(c.clone());
            }
        }
    }

    /// The invalid proposals recorded since the last call (for a storage that keeps every
    /// record of the study).
    pub fn take_invalid(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.invalid)
    }

    /// Keeps, for the run's record, which part of the strategy proposed each configuration
    /// ([`Strategy::origin`]; [`TuningRun::origins`]).
    pub fn trace_origins(&mut self) {
        self.origins.get_or_insert_with(FxHashMap::default);
    }

    /// The run so far, ended for `stop`.
    pub fn into_run(self, stop: StopReason) -> (TuningRun, Rng) {
        let origins = match &self.origins {
            Some(o) => self
                .records
                .iter()
                .map(|r| o.get(&r.config).cloned())
                .collect(),
            None => Vec::new(),
        };
        (
            TuningRun {
                origins,
                records: self.records,
                stop,
                clock: self.clock,
                strategy_seconds: self.strategy_seconds,
                direction: self.direction,
            },
            self.rng,
        )
    }

    fn observation(&self, config: &Configuration, outcome: &Outcome) -> Observation {
        Observation {
            config: config.clone(),
            value: outcome.objective().map(|v| self.direction.to_min(v)),
            failure: outcome.failure(),
            variance: outcome.summary().and_then(|s| s.estimate_variance()),
            objectives: self.objective_values(outcome),
        }
    }

    /// An outcome's objectives in minimisation form, with several objectives and where it
    /// ran and reported all of them (an outcome short of some is told as having none: the
    /// strategy cannot place it on a front).
    fn objective_values(&self, outcome: &Outcome) -> Vec<f64> {
        match outcome {
            Outcome::Ok { values, .. } if !self.objectives.is_empty() => {
                if values.len() < self.objectives.len() {
                    return Vec::new();
                }
                self.objectives
                    .iter()
                    .zip(values)
                    .map(|(d, &v)| d.to_min(v))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// Records one evaluation of this session: clock, hook, history.
    fn record(
        &mut self,
        config: Configuration,
        outcome: Outcome,
    ) -> Result<Observation, CoreError> {
        self.clock += outcome.timings().total();
        let o = self.observation(&config, &outcome);
        let record = Record {
            config,
            outcome,
            clock: self.clock,
        };
        if let Some(f) = &mut self.on_record {
            f(&record)?;
        }
        self.history.push(o.clone());
        self.records.push(record);
        Ok(o)
    }

    fn tell_strategy(&mut self, observations: &[Observation]) {
        let t = Instant::now();
        self.strategy.tell(&self.space, observations);
        let s = t.elapsed().as_secs_f64();
        self.strategy_seconds += s;
        self.clock += s;
    }
}

/// The first record reaching the best objective value.
pub(crate) fn best_record(records: &[Record], direction: Direction) -> Option<&Record> {
    let mut best: Option<&Record> = None;
    for r in records {
        if let Some(v) = r.outcome.objective()
            && best
                .and_then(|b| b.outcome.objective())
                .is_none_or(|b| direction.better(v, b))
        {
            best = Some(r);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use ktune_space::Parameter;
    use rand::SeedableRng;

    use super::*;

    /// Proposes x = 0, 1, 2, ... in order, remembering everything it is told.
    #[derive(Default)]
    struct Counter {
        next: u32,
        told: Vec<Observation>,
        budget: Option<Option<usize>>,
        goal: Option<crate::pareto::Goal>,
    }

    impl Strategy for Counter {
        fn name(&self) -> &str {
            "counter"
        }
        fn ask(
            &mut self,
            space: &SearchSpace,
            h: &History,
            n: usize,
            _: &mut Rng,
        ) -> Vec<Configuration> {
            let mut out = Vec::new();
            while out.len() < n && u64::from(self.next) < space.size() {
                let c = vec![self.next];
                self.next += 1;
                if !h.contains(&c) {
                    out.push(c);
                }
            }
            out
        }
        fn tell(&mut self, _: &SearchSpace, o: &[Observation]) {
            self.told.extend_from_slice(o);
        }
        fn set_goal(&mut self, goal: &crate::pareto::Goal) -> bool {
            self.goal = Some(goal.clone());
            false
        }
        fn set_budget(&mut self, evaluations: Option<usize>) {
            self.budget = Some(evaluations);
        }
    }

    fn space() -> SearchSpace {
        SearchSpace::new(
            vec![Parameter::integer_range("x", 0, 9, 1).unwrap()],
            &[] as &[&str],
        )
        .unwrap()
    }

    fn ok(x: f64) -> Outcome {
        Outcome::ok(
            vec![x],
            Timings {
                benchmark: 1.0,
                ..Timings::default()
            },
        )
    }

    fn evaluate(batch: Vec<Configuration>) -> Vec<(Configuration, Outcome)> {
        batch
            .into_iter()
            .map(|c| {
                let x = f64::from(c[0]);
                (c, ok(x))
            })
            .collect()
    }

    #[test]
    fn foreign_records_are_told_count_against_the_budget_and_are_never_asked() {
        let space = space();
        let mut strategy = Counter::default();
        let budget = Budget::evaluations(6);
        let s = Session::new(
            &space,
            Box::new(&mut strategy),
            budget.clone(),
            Direction::Minimize,
            Rng::seed_from_u64(0),
        )
        .unwrap();
        drop(s);
        // The strategy was told the evaluation budget before anything was asked.
        assert_eq!(strategy.budget, Some(Some(6)));
        let mut s = Session::new(
            &space,
            Box::new(&mut strategy),
            budget,
            Direction::Minimize,
            Rng::seed_from_u64(0),
        )
        .unwrap();
        let foreign = |x: u32| Record {
            config: vec![x],
            outcome: ok(f64::from(x)),
            clock: 5.0,
        };
        assert_eq!(s.observe(vec![foreign(1), foreign(2), foreign(1)]), 2);
        assert!((5.0..5.1).contains(&s.clock()), "{}", s.clock());
        let Asked::Evaluate(batch) = s.ask(3).unwrap() else {
            panic!()
        };
        assert_eq!(batch, vec![vec![0], vec![3], vec![4]]);
        // In flight: counted against the budget, so only one more may be asked.
        let Asked::Evaluate(more) = s.ask(3).unwrap() else {
            panic!()
        };
        assert_eq!(more, vec![vec![5]]);
        assert_eq!(s.ask(1).unwrap(), Asked::Stop(StopReason::Evaluations));
        // A record of another worker arriving for a configuration in flight here settles it.
        s.observe(vec![foreign(5)]);
        s.tell(evaluate(batch)).unwrap();
        s.tell(evaluate(more)).unwrap();
        assert_eq!(s.records().len(), 6);
        assert_eq!(s.in_flight(), 0);
        drop(s);
        let told: Vec<u32> = strategy.told.iter().map(|o| o.config[0]).collect();
        assert_eq!(told, vec![1, 2, 5, 0, 3, 4]);
    }

    #[test]
    fn configurations_held_elsewhere_are_not_proposed_and_abandoned_ones_may_be() {
        let space = space();
        let mut s = Session::new(
            &space,
            Box::new(Counter::default()),
            Budget::default(),
            Direction::Minimize,
            Rng::seed_from_u64(0),
        )
        .unwrap();
        let Asked::Evaluate(a) = s.ask(2).unwrap() else {
            panic!()
        };
        s.abandon(&a[..1], true);
        s.abandon(&a[1..], false);
        assert_eq!(s.in_flight(), 0);
        // Counter moves on anyway; a later tell of the one held elsewhere is accepted once.
        let Asked::Evaluate(b) = s.ask(10).unwrap() else {
            panic!()
        };
        assert_eq!(b.len(), 8);
        s.tell(evaluate(b)).unwrap();
        // 0 is held elsewhere, 1 is free again: not exhausted yet.
        assert_eq!(s.stop_reason(), None);
        s.tell(evaluate(a.clone())).unwrap();
        s.tell(evaluate(a)).unwrap();
        assert_eq!(s.stop_reason(), Some(StopReason::SpaceExhausted));
        assert_eq!(s.records().len(), 10);
    }

    #[test]
    fn a_failing_record_hook_keeps_the_strategy_untold() {
        let space = space();
        let mut strategy = Counter::default();
        let mut s = Session::new(
            &space,
            Box::new(&mut strategy),
            Budget::default(),
            Direction::Maximize,
            Rng::seed_from_u64(0),
        )
        .unwrap();
        s.on_record(|_| Err(CoreError::Record("disk full".into())));
        let Asked::Evaluate(a) = s.ask(1).unwrap() else {
            panic!()
        };
        assert!(s.tell(evaluate(a)).is_err());
        drop(s);
        assert!(strategy.told.is_empty());
    }

    #[test]
    fn several_objectives_are_told_in_minimisation_form() {
        let space = space();
        let mut strategy = Counter::default();
        let mut s = Session::new(
            &space,
            Box::new(&mut strategy),
            Budget::default(),
            Direction::Minimize,
            Rng::seed_from_u64(0),
        )
        .unwrap();
        // the first objective must be the session's own
        assert!(matches!(
            s.set_objectives(&[Direction::Maximize, Direction::Minimize]),
            Err(CoreError::Objectives(_))
        ));
        s.set_objectives(&[Direction::Minimize, Direction::Maximize])
            .unwrap();
        assert_eq!(s.objectives(), [Direction::Minimize, Direction::Maximize]);
        let Asked::Evaluate(a) = s.ask(3).unwrap() else {
            panic!()
        };
        let outcomes = vec![
            (
                a[0].clone(),
                Outcome::ok(vec![2.0, 50.0], Timings::default()),
            ),
            // short of the second objective: told without a point
            (a[1].clone(), Outcome::ok(vec![1.0], Timings::default())),
            (
                a[2].clone(),
                Outcome::failed(crate::FailureKind::Runtime, "x", Timings::default()),
            ),
        ];
        s.tell(outcomes).unwrap();
        drop(s);
        assert_eq!(strategy.told[0].objectives, [2.0, -50.0]);
        assert_eq!(strategy.told[0].value, Some(2.0));
        assert!(strategy.told[1].objectives.is_empty());
        assert!(strategy.told[2].objectives.is_empty());
    }

    #[test]
    fn one_objective_tells_no_points() {
        let space = space();
        let mut strategy = Counter::default();
        let mut s = Session::new(
            &space,
            Box::new(&mut strategy),
            Budget::default(),
            Direction::Minimize,
            Rng::seed_from_u64(0),
        )
        .unwrap();
        s.set_objectives(&[Direction::Minimize]).unwrap();
        let Asked::Evaluate(a) = s.ask(1).unwrap() else {
            panic!()
        };
        s.tell(vec![(
            a[0].clone(),
            Outcome::ok(vec![2.0, 50.0], Timings::default()),
        )])
        .unwrap();
        drop(s);
        assert!(strategy.told[0].objectives.is_empty());
    }

    #[test]
    fn a_goal_is_told_to_the_strategy_and_needs_several_objectives() {
        use crate::pareto::Goal;
        let space = space();
        let mut strategy = Counter::default();
        let mut s = Session::new(
            &space,
            Box::new(&mut strategy),
            Budget::default(),
            Direction::Minimize,
            Rng::seed_from_u64(0),
        )
        .unwrap();
        let metrics = [
            crate::Metric::new("time", Direction::Minimize),
            crate::Metric::new("energy", Direction::Minimize),
            crate::Metric::new("power", Direction::Minimize),
        ];
        let goal = Goal::parse("energy within 10% of time", &metrics).unwrap();
        // One objective has no goal to seek.
        assert!(matches!(s.set_goal(&goal), Err(CoreError::Objectives(_))));
        s.set_objectives(&[Direction::Minimize, Direction::Minimize])
            .unwrap();
        // Nor do two a goal over a third.
        let third = Goal::parse("power within 10% of time", &metrics).unwrap();
        assert!(matches!(s.set_goal(&third), Err(CoreError::Objectives(_))));
        assert_eq!(s.goal_sought(), None);
        s.set_goal(&goal).unwrap();
        // The counter only minimises `value`.
        assert_eq!(s.goal_sought(), Some(false));
        let Asked::Evaluate(a) = s.ask(1).unwrap() else {
            panic!()
        };
        s.tell(vec![(
            a[0].clone(),
            Outcome::ok(vec![2.0, 40.0], Timings::default()),
        )])
        .unwrap();
        drop(s);
        assert_eq!(strategy.goal, Some(goal));
        // The observation is as without a goal: the strategy seeks the goal from them.
        assert_eq!(strategy.told[0].value, Some(2.0));
        assert_eq!(strategy.told[0].objectives, [2.0, 40.0]);
    }
}
