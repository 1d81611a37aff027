//! A test kit for strategies, runners, storages and front ends: a runner made of a function,
//! a strategy that walks the space in order, fixed landscapes and spaces, and a one-line
//! tuning run.
//!
//! Every crate's tests and examples build on it instead of writing a runner of their own:
//!
//! ```
//! use ktune_core::testing::{FnRunner, InOrder, landscape, run, small_space};
//!
//! let space = small_space();
//! let run = run(&mut InOrder::default(), &space, &mut FnRunner::values(landscape::bowl), 20, 1);
//! assert_eq!(run.records.len(), 20);
//! // The bowl fails on a diagonal band: failures are records too.
//! assert!(run.records.iter().any(|r| r.outcome.failure().is_some()));
//! ```
//!
//! It is compiled into the library (not behind `cfg(test)`) so that other crates' tests,
//! examples and benchmarks can use it; it costs a few kilobytes.

use ktune_space::{Configuration, Parameter, SearchSpace};
use rand::SeedableRng;

use crate::{
    Budget, CoreError, Direction, FailureKind, History, Metric, Observation, Outcome, Rng, Runner,
    Samples, Statistic, Strategy, Timings, Tuner, TuningRun,
};

/// The function an [`FnRunner`] evaluates: the objective of a configuration, or `None` for a
/// configuration that fails at run time; or the whole outcome.
enum Measure<'a> {
    Value(Box<Of<'a, Option<f64>>>),
    Outcome(Box<Of<'a, Outcome>>),
}

/// A function of a configuration of the space.
type Of<'a, T> = dyn FnMut(&SearchSpace, &Configuration) -> T + 'a;

/// What becomes of a batch's outcomes (see [`FnRunner::on_batch`]).
type BatchEnd<'a> =
    Box<dyn FnMut(&[Configuration], Vec<Outcome>) -> Result<Vec<Outcome>, CoreError> + 'a>;

/// A runner made of a function: `Some(value)` is a successful measurement, `None` a runtime
/// failure. Evaluations take no time on the tuning clock unless [`seconds`](Self::seconds)
/// says otherwise. It keeps what it was asked to evaluate and what the loop told it, for
/// tests of the loop to look at.
pub struct FnRunner<'a> {
    measure: Measure<'a>,
    metrics: Vec<Metric>,
    seconds: f64,
    samples: Vec<f64>,
    on_batch: Option<BatchEnd<'a>>,
    evaluated: Vec<Configuration>,
    remeasured: Vec<Configuration>,
    incumbents: Vec<Option<f64>>,
    time_left: Vec<Option<f64>>,
}

impl<'a> FnRunner<'a> {
    /// A minimised objective `f`, a function of the search space and the configuration.
    pub fn new(f: impl FnMut(&SearchSpace, &Configuration) -> Option<f64> + 'a) -> Self {
        FnRunner::measuring(Measure::Value(Box::new(f)))
    }

    /// A runner whose function gives each configuration's whole outcome: its timings, and
    /// failures of any kind.
    pub fn outcomes(f: impl FnMut(&SearchSpace, &Configuration) -> Outcome + 'a) -> Self {
        FnRunner::measuring(Measure::Outcome(Box::new(f)))
    }

    fn measuring(measure: Measure<'a>) -> Self {
        FnRunner {
            measure,
            metrics: vec![Metric::new("f", Direction::Minimize)],
            seconds: 0.0,
            samples: Vec::new(),
            on_batch: None,
            evaluated: Vec::new(),
            remeasured: Vec::new(),
            incumbents: Vec::new(),
            time_left: Vec::new(),
        }
    }

    /// A minimised objective of the configuration's value indices.
    pub fn indices(mut f: impl FnMut(&[u32]) -> Option<f64> + 'a) -> Self {
        FnRunner::new(move |_, c| f(c))
    }

    /// A minimised objective of the configuration's values as numbers (a parameter whose
    /// values are not numbers gives NaN).
    pub fn values(mut f: impl FnMut(&[f64]) -> Option<f64> + 'a) -> Self {
        FnRunner::new(move |space, c| {
            let x: Vec<f64> = space
                .values(c)
                .iter()
                .map(|v| v.as_f64().unwrap_or(f64::NAN))
                .collect();
            f(&x)
        })
    }

    /// The objective's name and direction (default `f`, minimised).
    pub fn metric(mut self, name: &str, direction: Direction) -> Self {
        self.metrics = vec![Metric::new(name, direction)];
        self
    }

    /// The runner's metrics, in order (the first the objective; several for a study of
    /// several objectives, whose values `outcomes` gives).
    pub fn with_metrics(mut self, metrics: Vec<Metric>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Every evaluation takes `seconds` of benchmark time on the tuning clock.
    pub fn seconds(mut self, seconds: f64) -> Self {
        self.seconds = seconds;
        self
    }

    /// Every value `v` comes with the samples `factor · v` (e.g. `[0.8, 1.0, 1.2]`), so that
    /// each observation carries a measurement variance that grows with the value.
    pub fn samples(mut self, factors: &[f64]) -> Self {
        self.samples = factors.to_vec();
        self
    }

    /// Passes every batch's configurations and outcomes through `f` before they are returned:
    /// a runner that stops or runs out of time part-way returns the error with the outcomes
    /// it finished ([`CoreError::RunnerStopped`], [`CoreError::OutOfTime`]).
    pub fn on_batch(
        mut self,
        f: impl FnMut(&[Configuration], Vec<Outcome>) -> Result<Vec<Outcome>, CoreError> + 'a,
    ) -> Self {
        self.on_batch = Some(Box::new(f));
        self
    }

    /// The configurations it was asked to evaluate, in order.
    pub fn evaluated(&self) -> &[Configuration] {
        &self.evaluated
    }

    /// The configurations it was asked to measure again, in the order of the last request.
    pub fn remeasured(&self) -> &[Configuration] {
        &self.remeasured
    }

    /// The best values so far it was told before each batch.
    pub fn incumbents(&self) -> &[Option<f64>] {
        &self.incumbents
    }

    /// The time left it was told before each batch.
    pub fn time_left(&self) -> &[Option<f64>] {
        &self.time_left
    }

    fn outcome(&mut self, space: &SearchSpace, c: &Configuration) -> Outcome {
        let timings = Timings {
            benchmark: self.seconds,
            ..Timings::default()
        };
        let value = match &mut self.measure {
            Measure::Outcome(f) => return f(space, c),
            Measure::Value(f) => f(space, c),
        };
        match value {
            Some(v) if !self.samples.is_empty() => {
                Outcome::ok(vec![v], timings).with_samples(Samples::new(
                    self.samples.iter().map(|f| f * v).collect(),
                    Statistic::Mean,
                ))
            }
            Some(v) => Outcome::ok(vec![v], timings),
            None => Outcome::failed(FailureKind::Runtime, "fails", timings),
        }
    }
}

impl Runner for FnRunner<'_> {
    fn name(&self) -> &str {
        "function"
    }
    fn metrics(&self) -> &[Metric] {
        &self.metrics
    }
    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
        self.evaluated.extend_from_slice(configs);
        let outcomes = configs.iter().map(|c| self.outcome(space, c)).collect();
        match &mut self.on_batch {
            Some(f) => f(configs, outcomes),
            None => Ok(outcomes),
        }
    }
    /// Measures each configuration `rounds` times, interleaved; its value is the mean.
    fn remeasure(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
        rounds: usize,
    ) -> Result<Vec<Outcome>, CoreError> {
        self.remeasured = configs.to_vec();
        let mut values = vec![Vec::with_capacity(rounds); configs.len()];
        for _ in 0..rounds {
            for (c, v) in configs.iter().zip(&mut values) {
                v.push(self.outcome(space, c).objective());
            }
        }
        Ok(values
            .into_iter()
            .map(|v| match v.into_iter().collect::<Option<Vec<f64>>>() {
                Some(v) => {
                    let mean = v.iter().sum::<f64>() / v.len() as f64;
                    let timings = Timings::default();
                    Outcome::ok(vec![mean], timings).with_samples(Samples::new(v, Statistic::Mean))
                }
                None => Outcome::failed(FailureKind::Runtime, "fails", Timings::default()),
            })
            .collect())
    }
    fn set_incumbent(&mut self, best: Option<f64>) {
        self.incumbents.push(best);
    }
    fn set_time_left(&mut self, seconds: Option<f64>) {
        self.time_left.push(seconds);
    }
}

/// A strategy that proposes the space's configurations in rank order, each once, passing
/// over those the history holds (evaluated elsewhere, or before a resumed run).
#[derive(Clone, Debug, Default)]
pub struct InOrder {
    next: u64,
    wait: bool,
    unanswered: usize,
}

impl InOrder {
    /// Proposes nothing while any of its proposals is unanswered (as a strategy that
    /// proposes a generation at a time).
    pub fn waiting() -> InOrder {
        InOrder {
            wait: true,
            ..InOrder::default()
        }
    }
}

impl Strategy for InOrder {
    fn name(&self) -> &str {
        "in_order"
    }

    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        _: &mut Rng,
    ) -> Vec<Configuration> {
        if self.wait && self.unanswered > 0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        while out.len() < n && self.next < space.size() {
            let c = space.configuration(self.next);
            self.next += 1;
            if !history.contains(&c) {
                out.push(c);
            }
        }
        self.unanswered += out.len();
        out
    }

    fn tell(&mut self, _: &SearchSpace, observations: &[Observation]) {
        self.unanswered = self.unanswered.saturating_sub(observations.len());
    }
}

/// Fixed objectives of a configuration's values (for [`FnRunner::values`]).
pub mod landscape {
    /// A smooth bowl over the first two parameters with its minimum 1.0 at (11, 4), and a
    /// diagonal band of configurations that fail (`(x + y) mod 7 = 3`).
    pub fn bowl(x: &[f64]) -> Option<f64> {
        let (a, b) = (x[0], x[1]);
        ((a + b) as i64 % 7 != 3).then(|| (a - 11.0).powi(2) + (b - 4.0).powi(2) + 1.0)
    }
}

/// One integer parameter `x` with the values `0..n`.
pub fn line(n: i64) -> SearchSpace {
    SearchSpace::new(vec![integers("x", 0, n - 1)], &[] as &[&str])
        .unwrap_or_else(|e| unreachable!("a line of {n}: {e}"))
}

/// Two parameters `x`, `y` in `0..n` with `x + y < n + 3` and `(x * y) mod 3 != 1`.
pub fn constrained(n: i64) -> SearchSpace {
    SearchSpace::new(
        vec![integers("x", 0, n - 1), integers("y", 0, n - 1)],
        &[format!("x + y < {}", n + 3), "(x * y) % 3 != 1".to_string()],
    )
    .unwrap_or_else(|e| unreachable!("constrained({n}): {e}"))
}

/// Mostly infeasible: `x`, `y` in `0..40` with `(x * y) mod 6 = 0` and `x + y <= 40` (about a
/// sixth of the product), and a free parameter `z` in `{1, 2}`.
pub fn sparse_space() -> SearchSpace {
    xy_z((0, 39), (0, 39), &["(x * y) % 6 == 0", "x + y <= 40"])
}

/// A small constrained space for runs that exhaust it: `x` in `4..16`, `y` in `0..12` with
/// `x + y <= 20`, and a free parameter `z` in `{1, 2}` (the [bowl](landscape::bowl)'s
/// minimum is inside it).
pub fn small_space() -> SearchSpace {
    xy_z((4, 15), (0, 11), &["x + y <= 20"])
}

/// Integers `x` and `y` in the ranges given, a free `z` in `{1, 2}`, and `constraints`.
fn xy_z(x: (i64, i64), y: (i64, i64), constraints: &[&str]) -> SearchSpace {
    let z = Parameter::integer("z", [1, 2]).unwrap_or_else(|e| unreachable!("{e}"));
    space_of(
        vec![integers("x", x.0, x.1), integers("y", y.0, y.1), z],
        constraints,
    )
}

/// The integer parameter `name` with the values `lo..=hi`.
pub fn integers(name: &str, lo: i64, hi: i64) -> Parameter {
    Parameter::integer_range(name, lo, hi, 1).unwrap_or_else(|e| unreachable!("{name}: {e}"))
}

/// The space of `parameters` under `constraints`, which a test knows to be valid.
pub fn space_of(parameters: Vec<Parameter>, constraints: &[&str]) -> SearchSpace {
    SearchSpace::new(parameters, constraints).unwrap_or_else(|e| panic!("the test's space: {e}"))
}

/// How many of `run`'s records failed with `kind`.
pub fn failures(run: &TuningRun, kind: FailureKind) -> usize {
    run.records
        .iter()
        .filter(|r| r.outcome.failure() == Some(kind))
        .count()
}

/// Tunes `space` with `strategy` and `runner` for `budget` evaluations, one at a time, with
/// the random numbers of `seed`.
pub fn run(
    strategy: &mut dyn Strategy,
    space: &SearchSpace,
    runner: &mut dyn Runner,
    budget: usize,
    seed: u64,
) -> TuningRun {
    run_batched(strategy, space, runner, budget, seed, 1)
}

/// [`run`], asking for `batch` configurations at a time.
pub fn run_batched(
    strategy: &mut dyn Strategy,
    space: &SearchSpace,
    runner: &mut dyn Runner,
    budget: usize,
    seed: u64,
    batch: usize,
) -> TuningRun {
    let budget = Budget::evaluations(budget);
    Tuner::new(space, runner, budget)
        .batch_size(batch)
        .run(strategy, &mut Rng::seed_from_u64(seed))
        .unwrap_or_else(|e| panic!("tuning with {}: {e}", strategy.name()))
}

/// The configurations of a run, in order.
pub fn configs(run: &TuningRun) -> Vec<Configuration> {
    run.records.iter().map(|r| r.config.clone()).collect()
}

/// A strategy that times the one it wraps: each `ask` with the `tell` that follows it, and
/// the number of observations at the ask (the strategy's cost as the study grows, for
/// examples and overhead measurements).
pub struct Timed {
    inner: Box<dyn Strategy + Send>,
    observed: usize,
    pending: f64,
    /// `(observations at the ask, seconds of the ask and the tell)`, in order.
    pub samples: Vec<(usize, f64)>,
    /// Seconds the strategy took to be told the priors (what it makes of them up front).
    pub priors_told: f64,
}

impl Timed {
    /// Times `inner`.
    pub fn new(inner: Box<dyn Strategy + Send>) -> Timed {
        Timed {
            inner,
            observed: 0,
            pending: 0.0,
            samples: Vec::new(),
            priors_told: 0.0,
        }
    }
}

impl Strategy for Timed {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        let t = std::time::Instant::now();
        let out = self.inner.ask(space, history, n, rng);
        self.pending = t.elapsed().as_secs_f64();
        self.observed = history.len();
        out
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        let t = std::time::Instant::now();
        self.inner.tell(space, observations);
        self.samples
            .push((self.observed, self.pending + t.elapsed().as_secs_f64()));
    }

    fn set_budget(&mut self, evaluations: Option<usize>) {
        self.inner.set_budget(evaluations);
    }

    fn set_priors(&mut self, priors: &[crate::MatchedPrior]) {
        let started = std::time::Instant::now();
        self.inner.set_priors(priors);
        self.priors_told += started.elapsed().as_secs_f64();
    }

    fn set_goal(&mut self, goal: &crate::pareto::Goal) -> bool {
        self.inner.set_goal(goal)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

/// Adds an evaluation to `history` (`None`: a runtime failure) and returns its observation,
/// to tell a strategy by hand.
pub fn observe(history: &mut History, config: &[u32], value: Option<f64>) -> Observation {
    let o = Observation {
        config: config.to_vec(),
        value,
        failure: value.is_none().then_some(FailureKind::Runtime),
        variance: None,
        objectives: Vec::new(),
    };
    history.push(o.clone());
    o
}

/// Fails naming the first of `parts` that `text` lacks, and showing the text: for tests of
/// messages, which must name the problem and where.
#[track_caller]
pub fn assert_mentions(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}

/// The message of an error that `result` must be (else a failed test): for tests of what is
/// refused.
#[track_caller]
pub fn refusal<T, E: std::fmt::Display>(result: Result<T, E>) -> String {
    match result {
        Ok(_) => panic!("accepted where an error was expected"),
        Err(e) => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_function_runner_measures_fails_and_adds_samples() {
        let space = small_space();
        let mut runner = FnRunner::values(landscape::bowl)
            .seconds(2.0)
            .samples(&[0.8, 1.0, 1.2]);
        let at = |x: i64, y: i64| {
            let values = [
                ktune_space::Value::Int(x),
                ktune_space::Value::Int(y),
                ktune_space::Value::Int(1),
            ];
            space.configuration_of(&values).unwrap()
        };
        let out = runner
            .evaluate(&space, &[at(11, 4), at(10, 0), at(12, 4)])
            .unwrap();
        assert_eq!(out[0].objective(), Some(1.0));
        assert_eq!(out[0].timings().benchmark, 2.0);
        assert!(out[0].summary().unwrap().estimate_variance().unwrap() > 0.0);
        // 10 + 0 = 10, 10 mod 7 = 3: the band of failures.
        assert_eq!(out[1].failure(), Some(FailureKind::Runtime));
        assert_eq!(out[2].objective(), Some(2.0));
        let mut by_index =
            FnRunner::indices(|c| Some(f64::from(c[0]))).metric("GFLOP/s", Direction::Maximize);
        assert_eq!(by_index.metrics()[0].direction, Direction::Maximize);
        assert_eq!(
            by_index.evaluate(&space, &[at(5, 0)]).unwrap()[0].objective(),
            Some(1.0)
        );
    }

    #[test]
    fn the_spaces_have_their_documented_shapes() {
        assert_eq!(line(7).size(), 7);
        let c = constrained(10);
        assert!(c.size() < 100 && c.size() > 50, "{}", c.size());
        let sparse = sparse_space();
        assert!(sparse.size() < 40 * 40 * 2 / 3, "{}", sparse.size());
        let small = small_space();
        assert!(small.size() < 12 * 12 * 2, "{}", small.size());
        let mut h = History::new();
        let o = observe(&mut h, &[1, 2], None);
        assert_eq!((h.len(), o.failure), (1, Some(FailureKind::Runtime)));
    }
}
