//! Simulated annealing over valid neighbours.
//!
//! Starting from the best of `start_samples` random valid configurations, each step picks a
//! uniformly random valid neighbour of the current configuration (Hamming by default, or the
//! adjacent / strictly-adjacent neighbourhoods of the constraint-aware paper, section IV-A),
//! or, for a share `compound` of the steps (0.1), makes Kernel Tuner's compound move (a
//! Hamming step for each parameter with chance 0.2, then a strictly-adjacent step), which can
//! change several parameters at once, and moves there by the Metropolis criterion: always
//! when it is not worse, with probability
//! `exp(-Δ / T)` when it is, where `Δ = (new - current) / |current|` is the *relative*
//! difference, so acceptance does not depend on the objective's units or sign. A failed
//! neighbour is never accepted (a failed current configuration is always left). After
//! `maxiter` new evaluations at one temperature it cools, `T ← alpha · T`; when `T` drops
//! below `T_min` the schedule is exhausted and the search restarts from a new random sample
//! at the starting temperature. A neighbour that was already evaluated is not proposed
//! again: the Metropolis step uses its memoised value at no cost and does not cool (Kernel
//! Tuner's schedule also follows unique evaluations). After `max_stuck` such free steps in a
//! row (an explored neighbourhood) the search restarts from a new random sample, keeping its
//! temperature. The defaults are Kernel Tuner 1.5.0's (`T_min = 0.0001`, `alpha = 0.9975`,
//! `maxiter = 1`, restart after 100 stuck steps) but for the starting temperature and the
//! compound share, which `ktune bench tune-strategy simulated_annealing` chose, cross-validated
//! over the shared spaces (BENCHMARKS.md, issue 18): `T = 0.01` (Kernel Tuner's 0.1) and
//! `compound = 0.1` (0.25 before), 0.525 against 0.478 on the 12 spaces (50 seeds). The older defaults
//! `T = 1.0`, `T_min = 0.001`, `alpha = 0.995` accept a move 50% worse with probability 0.61
//! at first and still 0.22 after 220 evaluations, and score like random search on the 12
//! shared spaces (0.07 against 0.35, 50 seeds).
//!
//! When the run has an evaluation budget and `stretch` is on (the default), the schedule
//! spans it, as Kernel Tuner's does: after `c` distinct evaluations of the study the
//! temperature is `T · (T_min / T)^(c / budget)`, so it reaches `T_min` as the budget ends
//! whatever the budget, and `alpha` and `maxiter` do not apply. Kernel Tuner computes the same
//! curve with the exponent `ln(T_min) / ln(alpha) · c / budget`, which with its defaults
//! reaches `T_min` after 75% of the budget, where its run ends; ktune cools over the whole
//! budget. Without a budget (a time limit only), or with `stretch = false`, the temperature
//! falls by `alpha` every `maxiter` new evaluations.
//!
//! ## References
//! - S. Kirkpatrick, C. D. Gelatt, M. P. Vecchi, "Optimization by Simulated Annealing",
//!   Science 220 (1983).
//! - F.-J. Willemsen, S. Heldens, R. V. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", sections III and IV-A (neighbour definitions).
//! - Kernel Tuner 1.5.0, `strategies/simulated_annealing.py` (relative acceptance, restart
//!   when stuck).

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, Neighbourhood, SearchSpace};
use rand::RngExt;
use std::sync::Arc;

use crate::local_search::{NeighbourCache, Point, START_SAMPLES, START_SAMPLES_DOC, Start, Starts};
use crate::ok;

/// The chance per parameter of a Hamming step within a compound move (Kernel Tuner's 0.2).
pub const COMPOUND_HAMMING_CHANCE: f64 = 0.2;

/// The annealing schedule and neighbourhood.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnnealingSchedule {
    /// Starting temperature (on relative differences: at `T = 0.1` a move 10% worse is
    /// accepted with probability `exp(-1) ≈ 0.37`).
    pub t_start: f64,
    /// The temperature below which the schedule is exhausted and the search restarts.
    pub t_min: f64,
    /// Cooling factor per temperature step, in (0, 1].
    pub alpha: f64,
    /// New evaluations per temperature step.
    pub maxiter: u64,
    /// Free steps over already evaluated neighbours in a row before a random restart.
    pub max_stuck: u64,
    /// The neighbourhood single moves are drawn from.
    pub neighbourhood: Neighbourhood,
    /// The share of moves that are compound, as Kernel Tuner's constraint-aware move: for
    /// each parameter in turn, with chance [`COMPOUND_HAMMING_CHANCE`], a step to a random
    /// valid Hamming neighbour, then one step to a random valid (strictly) adjacent
    /// neighbour. Such a move may change several parameters at once, and so crosses between
    /// basins that single-parameter steps reach only uphill.
    pub compound: f64,
    /// Cool from `t_start` to `t_min` over the run's evaluation budget when it has one.
    pub stretch: bool,
}

impl Default for AnnealingSchedule {
    fn default() -> Self {
        AnnealingSchedule::of(&SaOptions::default())
    }
}

impl AnnealingSchedule {
    /// The schedule the options `o` set.
    fn of(o: &SaOptions) -> Self {
        AnnealingSchedule {
            t_start: o.t,
            t_min: o.t_min,
            alpha: o.alpha,
            maxiter: o.maxiter,
            max_stuck: o.max_stuck,
            neighbourhood: o.neighbour,
            compound: o.compound,
            stretch: o.stretch,
        }
    }
}

/// Simulated annealing with the Metropolis criterion on relative differences.
#[derive(Clone, Debug)]
pub struct SimulatedAnnealing {
    schedule: AnnealingSchedule,
    starts: Starts,
    start_samples: usize,
    /// The current configuration, once its start has been evaluated.
    current: Option<Point>,
    /// The neighbours of `current` (ranks; looked up again only after a move).
    neighbours: Option<Arc<[u64]>>,
    cache: NeighbourCache,
    /// Scratch space for one configuration.
    buf: Vec<u32>,
    /// The neighbour proposed, with the uniform draw its Metropolis test will use.
    pending: Option<(Configuration, f64)>,
    /// The temperature.
    t: f64,
    /// New evaluations at this temperature.
    iterations: u64,
    /// The run's evaluation budget, when it has one.
    budget: Option<usize>,
    /// Whether the temperature follows the budget (set at each ask).
    stretched: bool,
}

impl SimulatedAnnealing {
    /// Annealing with `schedule`, each (re)start from the best of `start_samples` random
    /// unevaluated configurations.
    pub fn new(schedule: AnnealingSchedule, start_samples: usize) -> SimulatedAnnealing {
        SimulatedAnnealing {
            schedule,
            starts: Starts::default(),
            start_samples: start_samples.max(1),
            current: None,
            neighbours: None,
            cache: NeighbourCache::default(),
            buf: Vec::new(),
            pending: None,
            t: schedule.t_start,
            iterations: 0,
            budget: None,
            stretched: false,
        }
    }

    /// Follows the budget-stretched schedule after `evaluated` distinct evaluations of the
    /// study, while the budget lasts.
    fn stretch_to(&mut self, evaluated: usize) {
        let budget = self
            .budget
            .filter(|&b| self.schedule.stretch && evaluated < b);
        self.stretched = budget.is_some();
        if let Some(b) = budget {
            let ratio = self.schedule.t_min / self.schedule.t_start;
            self.t = self.schedule.t_start * ratio.powf(evaluated as f64 / b as f64);
        }
    }

    fn move_to(&mut self, p: Point) {
        self.current = Some(p);
        self.neighbours = None;
    }

    /// Leaves the current configuration; the next ask starts from a random unevaluated one.
    fn restart(&mut self) {
        self.current = None;
        self.neighbours = None;
        self.pending = None;
    }
}

/// A compound move from `from`: Hamming steps, each parameter with chance
/// [`COMPOUND_HAMMING_CHANCE`], then a strictly-adjacent step; a step with no valid neighbour
/// to take stays (so the move may return `from`, a free step). Kernel Tuner takes an adjacent
/// step, which differs from a strictly-adjacent one only where a parameter value occurs in no
/// valid configuration; strictly-adjacent ones are drawn without scanning the space.
fn compound_move(space: &SearchSpace, from: &[u32], rng: &mut Rng) -> Configuration {
    // Drawn without listing neighbourhoods: the intermediate configurations are seldom
    // visited twice, so caching their lists would not pay.
    let mut at = from.to_vec();
    for _ in 0..space.dims() {
        if rng.random::<f64>() < COMPOUND_HAMMING_CHANCE
            && let Some(c) = space.random_neighbour(&at, Neighbourhood::Hamming, rng)
        {
            at = c;
        }
    }
    if let Some(c) = space.random_neighbour(&at, Neighbourhood::StrictlyAdjacent, rng) {
        at = c;
    }
    at
}

impl Default for SimulatedAnnealing {
    fn default() -> Self {
        SimulatedAnnealing::new(AnnealingSchedule::default(), START_SAMPLES)
    }
}

/// Whether the Metropolis criterion moves from `current` to `candidate` at temperature `t`,
/// given a uniform draw `u` in [0, 1): always away from a failed configuration, never to a
/// failed one, always to a better (or equal) one, else with probability
/// `exp(-(candidate - current) / |current| / t)`.
pub(crate) fn metropolis(current: Option<f64>, candidate: Option<f64>, t: f64, u: f64) -> bool {
    let (Some(old), Some(new)) = (ok(current), ok(candidate)) else {
        return ok(current).is_none();
    };
    if new <= old {
        return true;
    }
    // Relative to |old| (the objective may be negative); a zero current value makes any
    // worse move infinitely worse, as in Kernel Tuner.
    let scale = if old != 0.0 { old.abs() } else { 1e-20 };
    let p = (-(new - old) / scale / t).exp();
    u < p
}

impl Strategy for SimulatedAnnealing {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        _n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        // One proposal per ask: annealing is sequential.
        self.stretch_to(history.len());
        let mut free = 0u64;
        loop {
            if self.current.is_none() {
                match self.starts.next(space, history, 1, self.start_samples, rng) {
                    Start::Propose(v) => return v,
                    Start::Ready(c) => {
                        let value = history.get(&c).and_then(|o| o.value);
                        self.move_to(Point { config: c, value });
                    }
                    Start::Exhausted => return Vec::new(),
                }
            }
            let Some(cur) = &self.current else {
                continue;
            };
            let kind = self.schedule.neighbourhood;
            let neighbours = self
                .neighbours
                .get_or_insert_with(|| self.cache.get(space, &cur.config, kind));
            if neighbours.is_empty() || free >= self.schedule.max_stuck {
                self.restart();
                continue;
            }
            if self.schedule.compound > 0.0 && rng.random::<f64>() < self.schedule.compound {
                self.buf = compound_move(space, &cur.config, rng);
            } else {
                let rank = neighbours[rng.random_range(0..neighbours.len())];
                self.buf.resize(space.dims(), 0);
                space.write_configuration(rank, &mut self.buf);
            }
            let u: f64 = rng.random();
            match history.get(&self.buf) {
                None => {
                    self.pending = Some((self.buf.clone(), u));
                    return vec![self.buf.clone()];
                }
                Some(o) => {
                    // A free step on the memoised value.
                    free += 1;
                    if metropolis(cur.value, o.value, self.t, u) {
                        let p = Point {
                            config: self.buf.clone(),
                            value: o.value,
                        };
                        self.move_to(p);
                    }
                }
            }
        }
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        self.starts.exclude(space, observations);
        for o in observations {
            if let Some((c, u)) = self.pending.take_if(|(c, _)| *c == o.config) {
                let current = self.current.as_ref().and_then(|p| p.value);
                if metropolis(current, o.value, self.t, u) {
                    self.move_to(Point {
                        config: c,
                        value: o.value,
                    });
                }
                self.iterations += 1;
                if !self.stretched && self.iterations >= self.schedule.maxiter {
                    self.iterations = 0;
                    self.t *= self.schedule.alpha;
                    if self.t < self.schedule.t_min {
                        // The schedule is exhausted: anneal again from somewhere new.
                        self.t = self.schedule.t_start;
                        self.restart();
                    }
                }
            }
        }
    }

    fn set_budget(&mut self, evaluations: Option<usize>) {
        self.budget = evaluations;
    }

    fn name(&self) -> &str {
        "simulated_annealing"
    }
}

/// Simulated annealing options (Kernel Tuner's names).
#[derive(Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct SaOptions {
    #[serde(rename = "T")]
    t: f64,
    #[serde(rename = "T_min")]
    t_min: f64,
    alpha: f64,
    maxiter: u64,
    max_stuck: u64,
    #[serde(alias = "neighbor", deserialize_with = "crate::options::choice")]
    neighbour: Neighbourhood,
    start_samples: usize,
    compound: f64,
    stretch: bool,
}

impl Default for SaOptions {
    fn default() -> Self {
        SaOptions {
            t: 0.01,
            t_min: 0.0001,
            alpha: 0.9975,
            maxiter: 1,
            max_stuck: 100,
            neighbour: Neighbourhood::Hamming,
            start_samples: START_SAMPLES,
            compound: 0.1,
            stretch: true,
        }
    }
}

fn check(options: &crate::Options) -> Result<Box<dyn crate::Factory>, crate::StrategyError> {
    const NAME: &str = "simulated_annealing";
    let o: SaOptions = crate::parse(NAME, options)?;
    // The one range that depends on another option (the others are documented).
    if o.t_min > o.t {
        return Err(crate::StrategyError::Invalid {
            strategy: NAME.into(),
            option: "T_min".into(),
            message: format!("must be at most T = {}, not {}", o.t, o.t_min),
        });
    }
    Ok(crate::registry::factory(o, |o| {
        Box::new(SimulatedAnnealing::new(
            AnnealingSchedule::of(o),
            o.start_samples,
        ))
    }))
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: "simulated_annealing",
    aliases: &["sa"],
    about: "Simulated annealing: random valid neighbours accepted by the Metropolis criterion on relative differences, geometric cooling, restarts when the schedule ends.",
    options: &[
        crate::OptionDoc::new("T", "0.01", "Starting temperature, on relative differences (at 0.01 a move 1% worse is accepted with probability exp(-1) = 0.37); Kernel Tuner's is 0.1, 0.01 scored higher cross-validated (BENCHMARKS.md).").above(0.0, f64::INFINITY),
        crate::OptionDoc::new("T_min", "0.0001", "End temperature, at most T: below it the schedule restarts from a random unevaluated configuration.").above(0.0, f64::INFINITY),
        crate::OptionDoc::new("alpha", "0.9975", "Cooling factor per temperature step.").above(0.0, 1.0),
        crate::OptionDoc::new("maxiter", "1", "New evaluations per temperature step.").count(1, u32::MAX as u64),
        crate::OptionDoc::new("max_stuck", "100", "Steps in a row over already evaluated neighbours (free, memoised) before restarting from a random unevaluated configuration (Kernel Tuner's fixed 100).").count(1, u32::MAX as u64),
        crate::OptionDoc::new("neighbour", "\"Hamming\"", "Neighbourhood moves are drawn from: \"Hamming\" (one parameter differs), \"adjacent\" or \"strictly-adjacent\"."),
        START_SAMPLES_DOC,
        crate::OptionDoc::new("compound", "0.1", "Share of moves that are compound, as Kernel Tuner's (1.0): each parameter with chance 0.2 a step to a random valid Hamming neighbour, then a step to a random adjacent one.").real(0.0, 1.0),
        crate::OptionDoc::new("stretch", "true", "With an evaluation budget, cool from T to T_min over the budget (Kernel Tuner's schedule; alpha and maxiter then do not apply); false: alpha every maxiter evaluations."),
    ],
    tunable: &[
        crate::Tunable::new("T", &["0.01", "0.1", "1.0"]),
        crate::Tunable::new("T_min", &["0.00001", "0.0001", "0.001"]),
        crate::Tunable::new("compound", &["0", "0.1", "0.25", "0.5"]),
        crate::Tunable::new("start_samples", &["1", "5", "10", "20", "40"]),
        crate::Tunable::new(
            "neighbour",
            &["\"Hamming\"", "\"adjacent\"", "\"strictly-adjacent\""],
        ),
    ],
    check,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::*;
    use rand::SeedableRng;

    fn sa(t: f64, t_min: f64, alpha: f64, neighbourhood: Neighbourhood) -> SimulatedAnnealing {
        SimulatedAnnealing::new(
            AnnealingSchedule {
                t_start: t,
                t_min,
                alpha,
                neighbourhood,
                compound: 0.0,
                ..AnnealingSchedule::default()
            },
            1,
        )
    }

    /// One ask (of one configuration), evaluated with `f`, told back.
    fn step(
        s: &mut SimulatedAnnealing,
        space: &SearchSpace,
        history: &mut History,
        f: impl Fn(&[u32]) -> Option<f64>,
        rng: &mut Rng,
    ) -> Configuration {
        let v = s.ask(space, history, 1, rng);
        assert_eq!(v.len(), 1);
        assert!(
            !history.contains(&v[0]),
            "proposed an evaluated configuration"
        );
        let o = observe(history, &v[0], f(&v[0]));
        s.tell(space, &[o]);
        v[0].clone()
    }

    #[test]
    fn the_metropolis_criterion_is_relative_and_handles_failures() {
        // Better or equal: always.
        assert!(metropolis(Some(2.0), Some(1.0), 1e-12, 0.999));
        assert!(metropolis(Some(2.0), Some(2.0), 1e-12, 0.999));
        // Worse: accepted at a high temperature, not near zero.
        assert!(metropolis(Some(1.0), Some(1.5), 1e6, 0.999));
        assert!(!metropolis(Some(1.0), Some(1.0001), 1e-9, 0.0));
        // exp(-0.1 / 1) = 0.905: scale-free.
        for scale in [1e-6, 1.0, 1e9] {
            assert!(metropolis(Some(scale), Some(1.1 * scale), 1.0, 0.9));
            assert!(!metropolis(Some(scale), Some(1.1 * scale), 1.0, 0.91));
        }
        // Negative objectives (maximised ones): -100 -> -90 is 10% worse.
        assert!(metropolis(Some(-100.0), Some(-90.0), 1.0, 0.9));
        assert!(!metropolis(Some(-100.0), Some(-90.0), 1.0, 0.91));
        // A zero current value: worse is rejected, equal accepted.
        assert!(!metropolis(Some(0.0), Some(1e-9), 1.0, 0.0));
        // Never to a failure; always away from one.
        assert!(!metropolis(Some(1.0), None, 1e9, 0.0));
        assert!(metropolis(None, Some(1e9), 1e-9, 0.999));
        assert!(metropolis(None, None, 1e-9, 0.999));
        assert!(!metropolis(Some(1.0), Some(f64::NAN), 1e9, 0.0));
    }

    #[test]
    fn a_worse_move_is_accepted_when_hot_and_not_when_cold() {
        // A line whose minimum is at 0: every move away from it is worse.
        let space = line(5);
        let f = |c: &[u32]| Some(1.0 + f64::from(c[0]));
        for (t, moves) in [(1e9, true), (1e-9, false)] {
            let mut s = sa(t, t * 1e-3, 0.999, Neighbourhood::StrictlyAdjacent);
            let mut history = History::new();
            let mut rng = Rng::seed_from_u64(0);
            observe(&mut history, &[0], f(&[0]));
            s.move_to(Point {
                config: vec![0],
                value: f(&[0]),
            });
            // The only neighbour of 0 is 1, which is worse.
            assert_eq!(step(&mut s, &space, &mut history, f, &mut rng), vec![1]);
            let at = s.current.as_ref().unwrap().config.clone();
            assert_eq!(at, if moves { vec![1] } else { vec![0] }, "T = {t}");
        }
    }

    #[test]
    fn it_cools_each_maxiter_evaluations_and_restarts_when_the_schedule_ends() {
        let space = line(1000);
        let f = |c: &[u32]| Some(f64::from(c[0]));
        let mut s = SimulatedAnnealing::new(
            AnnealingSchedule {
                t_start: 1.0,
                t_min: 0.2,
                alpha: 0.5,
                maxiter: 2,
                max_stuck: 100,
                neighbourhood: Neighbourhood::StrictlyAdjacent,
                compound: 0.0,
                stretch: false,
            },
            1,
        );
        let mut history = History::new();
        let mut rng = Rng::seed_from_u64(1);
        let start = step(&mut s, &space, &mut history, f, &mut rng); // the start: no cooling
        assert!(s.current.is_none() && s.t == 1.0);
        let mut temperatures = Vec::new();
        let mut proposals = Vec::new();
        for _ in 0..6 {
            proposals.push(step(&mut s, &space, &mut history, f, &mut rng));
            temperatures.push(s.t);
        }
        assert_eq!(temperatures, vec![1.0, 0.5, 0.5, 0.25, 0.25, 1.0]);
        // Every proposal was a neighbour of the walk from the start.
        assert_eq!(s.current, None);
        assert!(proposals.iter().all(|p| p[0].abs_diff(start[0]) <= 6));
        // The schedule ended: the next proposal is a new random start, and the walk
        // continues from there.
        let restart = step(&mut s, &space, &mut history, f, &mut rng);
        step(&mut s, &space, &mut history, f, &mut rng);
        let at = &s.current.as_ref().unwrap().config;
        assert!(at[0].abs_diff(restart[0]) <= 1);
    }

    #[test]
    fn with_a_budget_it_cools_from_t_to_t_min_over_the_budget() {
        let space = line(1000);
        let f = |c: &[u32]| Some(f64::from(c[0]));
        let mut s = SimulatedAnnealing::default();
        s.set_budget(Some(100));
        let mut history = History::new();
        let mut rng = Rng::seed_from_u64(4);
        let mut temperatures = Vec::new();
        for _ in 0..100 {
            step(&mut s, &space, &mut history, f, &mut rng);
            temperatures.push(s.t);
        }
        // The temperature of each step is set from the evaluations before it: T at 0, the
        // geometric mean of T and T_min half-way, T_min's neighbourhood at the end.
        let expected = |c: f64| 0.01 * (1e-2f64).powf(c / 100.0);
        for (c, t) in [
            (0, temperatures[0]),
            (50, temperatures[50]),
            (99, temperatures[99]),
        ] {
            assert!((t / expected(c as f64) - 1.0).abs() < 1e-9, "{c}: {t}");
        }
        // Without a budget, or with stretch = false, it cools by alpha per evaluation after
        // its start.
        for (stretch, budget) in [(true, None), (false, Some(100))] {
            let schedule = AnnealingSchedule {
                stretch,
                ..AnnealingSchedule::default()
            };
            let mut s = SimulatedAnnealing::new(schedule, 1);
            s.set_budget(budget);
            let mut history = History::new();
            for _ in 0..51 {
                step(&mut s, &space, &mut history, f, &mut rng);
            }
            let t = 0.01 * 0.9975f64.powi(50);
            assert!(
                (s.t / t - 1.0).abs() < 1e-9,
                "{stretch} {budget:?}: {}",
                s.t
            );
        }
    }

    #[test]
    fn compound_moves_change_several_parameters_and_single_moves_one() {
        let space = SearchSpace::new(
            (0..6)
                .map(|i| ktune_space::Parameter::integer_range(format!("p{i}"), 0, 9, 1).unwrap())
                .collect(),
            &[] as &[&str],
        )
        .unwrap();
        let from: Configuration = vec![5; 6];
        let mut rng = Rng::seed_from_u64(5);
        let mut counts = [0usize; 7];
        for _ in 0..2000 {
            let to = compound_move(&space, &from, &mut rng);
            counts[to.iter().zip(&from).filter(|(a, b)| a != b).count()] += 1;
        }
        // The strictly-adjacent step moves about 2/3 of the parameters by one index, and the
        // Hamming steps add more.
        assert!(counts[0] < 20, "{counts:?}");
        assert!(counts[3..].iter().sum::<usize>() > 1000, "{counts:?}");
        // Single moves, proposed through ask, differ from the start in exactly one parameter.
        let mut s = sa(0.1, 1e-4, 0.9975, Neighbourhood::Hamming);
        let mut history = History::new();
        let mut rng = Rng::seed_from_u64(6);
        let f = |c: &[u32]| Some(c.iter().map(|&x| f64::from(x)).sum::<f64>() + 1.0);
        observe(&mut history, &from, f(&from));
        s.move_to(Point {
            config: from.clone(),
            value: f(&from),
        });
        let v = s.ask(&space, &history, 1, &mut rng);
        assert_eq!(v[0].iter().zip(&from).filter(|(a, b)| a != b).count(), 1);
    }

    #[test]
    fn an_explored_neighbourhood_walks_for_free_then_restarts() {
        // Every neighbour of the start is evaluated: SA walks over the memoised values and
        // then proposes an unevaluated configuration elsewhere, never an evaluated one.
        let space = line(40);
        let f = |c: &[u32]| Some(f64::from(c[0]));
        let mut history = History::new();
        for x in 0..10 {
            observe(&mut history, &[x], f(&[x]));
        }
        let mut s = sa(1e-9, 1e-12, 0.99, Neighbourhood::StrictlyAdjacent);
        s.move_to(Point {
            config: vec![5],
            value: f(&[5]),
        });
        let mut rng = Rng::seed_from_u64(2);
        let v = s.ask(&space, &history, 1, &mut rng);
        // Cold: it slid down to 0 for free (0 has no unevaluated neighbour), got stuck and
        // restarted, or it reached 9 -> 10 by chance (impossible when cold).
        assert_eq!(v.len(), 1);
        assert!(!history.contains(&v[0]));
        assert!(s.current.is_none(), "a restart proposes a new start");
        // On a space that is fully explored bit by bit, the run never stalls.
        let mut s = SimulatedAnnealing::default();
        let run = run(&mut s, &space, f, 100, 3);
        assert_eq!(run.stop, ktune_core::StopReason::SpaceExhausted);
        assert_eq!(run.records.len(), 40);
    }
}
