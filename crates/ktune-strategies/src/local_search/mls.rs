//! Multi-start local search (MLS): first-improvement hill climbing, restarted at every local
//! optimum.
//!
//! Each climb starts from the best of `start_samples` random unevaluated configurations. The
//! climber looks at the neighbours of its current configuration (Hamming by default, or the
//! adjacent / strictly-adjacent neighbourhoods of the constraint-aware paper, section IV-A)
//! in random order (or in the space's order) and moves to the first one that is better; with
//! `restart = false` it looks at the whole neighbourhood and moves to the best one (best
//! improvement). Neighbours that were already evaluated are compared by their memoised values
//! at no cost, so only unevaluated neighbours are proposed. When every neighbour is known and
//! none is better, the configuration is a local optimum and a new climb starts. Failed
//! configurations are worse than any successful one and never better than each other.
//! With `follow_best = true` the climb moves to the study's best configuration whenever that
//! is better than its own: in `auto`, where a model proposes too, every new best the model
//! finds is climbed to a local optimum. Two more things can make the climb cheaper and let
//! it leave a trap (both off by default in `mls`, on in `auto`; on `mls` alone, with its
//! random neighbour order, neither helped: see BENCHMARKS.md, "Kicks in `mls` alone"):
//! - **patience**: a configuration counts as a local optimum after so many of its neighbours
//!   were proposed without an improvement. With the model ordering the neighbours by
//!   expected improvement, the last ones are the least promising, and proving an optimum
//!   costs a whole neighbourhood (tens of evaluations with a 16-value block size).
//! - **kicks**: at a local optimum the climb starts again from the study's best configuration
//!   with a few random parameters changed (greedy ILS's perturbation), keeping those
//!   parameters where the kick put them until the others are at their local optimum. Without
//!   that freeze the climb undoes the kick in one step (every single change of a trap is
//!   worse, so the trap is the kicked configuration's best neighbour). Kicks are counted
//!   afresh at every new best; after the last one the search restarts from random samples.
//! - **switch kicks** (`switch_kicks`, the share of the kicks): instead of random
//!   parameters, a kick changes one or two of the space's switches (parameters of two values,
//!   or not numbers: `use_shmem`, a loop order) into the combination the study has evaluated
//!   least, keeping the sizes, so that a trap in one sub-space is left for the least
//!   explored other one ([`switch_kick`]).
//!
//! Why Kernel Tuner's MLS and greedy ILS score below random search (-0.59 and -0.85 on our
//! spaces), and what is done here instead. (1) Budget spent on neighbourhoods: its `mls`
//! defaults to best improvement, which evaluates the entire neighbourhood (one batch) before
//! every move, so a few hundred evaluations buy a handful of moves; its greedy variants leave
//! the climb after the *first* improvement (`base_hillclimb` breaks out when `restart` is
//! true) and restart from a random sample or a perturbation, so climbs never reach a local
//! optimum; and the neighbour list is built from a child that keeps the values of earlier
//! dimensions, so many "neighbours" differ in several parameters. Here the default is first
//! improvement, the climb goes on from every improvement, revisits cost nothing and restarts
//! happen only at true local optima. (2) The start: a climb from one random configuration
//! spends its first tens of evaluations around a typical (poor) configuration, while the
//! score averages over every budget from 1 to `n_max`, which is 12-46 on some spaces. On the
//! 12 shared spaces (50 seeds) this MLS scores -0.12 from one random start (-0.42 with best
//! improvement, Kernel Tuner's setting) and 0.48 when each climb starts from the best of 20
//! random samples, hence `start_samples = 20`.
//!
//! ## References
//! - F.-J. Willemsen, S. Heldens, R. V. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", sections III and IV-A (neighbour definitions).
//! - Kernel Tuner 1.5.0, `strategies/mls.py`, `greedy_mls.py` and `hillclimbers.py`.
//! - H. R. Lourenço, O. C. Martin, T. Stützle, "Iterated Local Search", Handbook of
//!   Metaheuristics, 2003 (local search with restarts as the baseline of ILS).

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, Neighbourhood, SearchSpace};
use rand::RngExt;

use crate::better;
use crate::local_search::{
    Climb, Guide, HillClimber, KICK_SIZE_DOC, Order, Perturbation, START_SAMPLES,
    START_SAMPLES_DOC, Start, Starts, switch_kick,
};
use crate::roles::switches;

/// Multi-start local search: hill climbing with random restarts at local optima.
#[derive(Clone, Debug)]
pub struct MultiStartLocalSearch {
    climber: HillClimber,
    starts: Starts,
    start_samples: usize,
    /// Move the climb to the study's best configuration whenever it is better than the
    /// climb's (found by another strategy of a portfolio, or another worker).
    follow_best: bool,
    /// Restart from random samples at a local optimum; without, a search that follows the
    /// best waits (proposes nothing) until someone finds a better configuration.
    restarts: bool,
    /// Climbs from perturbations of the study's best configuration at a local optimum (per
    /// new best), before a restart.
    kicks: usize,
    /// How many parameters each of those perturbations changes.
    perturbation: Perturbation,
    /// The share of the kicks that move the best into the switch combination the study has
    /// visited least ([`switch_kick`]) instead of changing random parameters.
    switch_share: f64,
    /// The space's switches, found at the first switch kick.
    switches: Option<Vec<usize>>,
    /// How the climb under way began (what [`Strategy::origin`] says of its proposals):
    /// "climb" (from a start or the study's best), "kick" or "switch" (a switch kick).
    climb_origin: &'static str,
    /// The last ask's proposals and where each came from ("start": a restart's sample).
    origins: Vec<(Configuration, &'static str)>,
    /// Kicks since the study's best last improved.
    kicked: usize,
    /// The study's best value when last looked at.
    known_best: Option<f64>,
    /// The climb started from a kick: it does not jump back to the study's best until a
    /// better one is found.
    detour: bool,
}

impl MultiStartLocalSearch {
    /// A search over `neighbourhood`, looking at neighbours in random order (`random_order`)
    /// or the space's order, moving at the first improvement (`first_improvement`, Kernel
    /// Tuner's `restart = True`) or after the whole neighbourhood (best improvement), each
    /// climb starting from the best of `start_samples` random unevaluated configurations.
    pub fn new(
        neighbourhood: Neighbourhood,
        random_order: bool,
        first_improvement: bool,
        start_samples: usize,
    ) -> MultiStartLocalSearch {
        let order = if random_order {
            Order::Random
        } else {
            Order::Sequential
        };
        MultiStartLocalSearch {
            climber: HillClimber::new(neighbourhood, order, first_improvement),
            starts: Starts::default(),
            start_samples: start_samples.max(1),
            follow_best: false,
            restarts: true,
            kicks: 0,
            perturbation: Perturbation::Random { fraction: 0.3 },
            switch_share: 0.0,
            switches: None,
            climb_origin: "climb",
            origins: Vec::new(),
            kicked: 0,
            known_best: None,
            detour: false,
        }
    }

    /// A configuration counts as a local optimum after `patience` of its neighbours were
    /// proposed without an improvement (0: only when every neighbour is known).
    pub fn patient(mut self, patience: usize) -> MultiStartLocalSearch {
        self.climber = self.climber.with_patience(patience);
        self
    }

    /// At a local optimum: up to `kicks` climbs (per new best) from the study's best
    /// configuration perturbed by `perturbation`, before a restart. Iterated
    /// local search around the best: it leaves a trap that only several parameters changed
    /// at once escape, where every single change is worse.
    pub fn kicking(mut self, kicks: usize, perturbation: Perturbation) -> MultiStartLocalSearch {
        self.kicks = kicks;
        self.perturbation = perturbation;
        self
    }

    /// A share of the kicks (0 to 1) moves the study's best into the combination of the
    /// space's switches the study has visited least ([`switch_kick`]): a trap in one
    /// sub-space is left for the least explored other one.
    pub fn switching(mut self, share: f64) -> MultiStartLocalSearch {
        self.switch_share = share.clamp(0.0, 1.0);
        self
    }

    /// Whether a climb at a local optimum restarts from random samples (the default) or,
    /// when following the best, proposes nothing until a better configuration is found: in a
    /// portfolio the other strategies explore, and the climb resumes from their finds.
    pub fn restarting(mut self, restarts: bool) -> MultiStartLocalSearch {
        self.restarts = restarts;
        self
    }

    /// Whether the climb jumps to the study's best configuration whenever that is better
    /// than the climb's own (the local refinement of a portfolio).
    pub fn following_best(mut self, follow: bool) -> MultiStartLocalSearch {
        self.follow_best = follow;
        self
    }
}

impl Default for MultiStartLocalSearch {
    fn default() -> Self {
        MultiStartLocalSearch::new(Neighbourhood::Hamming, true, true, START_SAMPLES)
    }
}

impl Strategy for MultiStartLocalSearch {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        self.ask_guided(space, history, n, rng, None)
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        self.starts.exclude(space, observations);
        self.climber.tell(observations);
    }

    fn origin(&self, config: &Configuration) -> Option<String> {
        self.origins
            .iter()
            .find(|(c, _)| c == config)
            .map(|(_, o)| (*o).to_string())
    }

    fn name(&self) -> &str {
        "mls"
    }
}

impl MultiStartLocalSearch {
    /// [`Strategy::ask`], each climb scanning its neighbours in the order `guide` gives.
    pub(crate) fn ask_guided(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
        guide: Option<&dyn Guide>,
    ) -> Vec<Configuration> {
        let (proposals, origin) = self.propose(space, history, n, rng, guide);
        self.origins.clear();
        self.origins
            .extend(proposals.iter().map(|c| (c.clone(), origin)));
        proposals
    }

    /// The next proposals and where they come from.
    fn propose(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
        guide: Option<&dyn Guide>,
    ) -> (Vec<Configuration>, &'static str) {
        if let Some(best) = history.best() {
            let new_best = better(best.value, self.known_best);
            if new_best {
                self.known_best = best.value;
                self.kicked = 0;
            }
            if self.follow_best
                && (new_best || !self.detour)
                && better(best.value, self.climber.current().and_then(|c| c.value))
            {
                self.detour = false;
                self.climb_origin = "climb";
                self.climber.start_at(best.config.clone());
            }
        }
        // Ends: a climb only moves to better configurations, and a restart samples
        // unevaluated configurations.
        loop {
            if !self.climber.is_started() {
                if !self.restarts && self.follow_best {
                    return (Vec::new(), "climb");
                }
                match self.starts.next(space, history, n, self.start_samples, rng) {
                    Start::Propose(v) => return (v, "start"),
                    Start::Ready(c) => {
                        self.climb_origin = "climb";
                        self.climber.start_at(c);
                    }
                    Start::Exhausted => return (Vec::new(), "start"),
                }
            }
            match self.climber.ask_guided(space, history, n, rng, guide) {
                Climb::Propose(v) => return (v, self.climb_origin),
                Climb::Optimum => {
                    self.detour = false;
                    if self.kicked < self.kicks
                        && let Some(best) = history.best()
                    {
                        self.kicked += 1;
                        self.detour = true;
                        let switched =
                            if self.switch_share > 0.0 && rng.random_bool(self.switch_share) {
                                let switches = self.switches.get_or_insert_with(|| switches(space));
                                switch_kick(space, switches, history, &best.config, rng)
                            } else {
                                None
                            };
                        self.climb_origin = if switched.is_some() { "switch" } else { "kick" };
                        let kicked = switched
                            .unwrap_or_else(|| self.perturbation.apply(space, &best.config, rng));
                        // The climb first refines the other parameters: moving a kicked one
                        // back leads straight back to the best (every single change of it
                        // is worse), and nothing is learnt.
                        let frozen = (0..space.dims())
                            .filter(|&d| kicked[d] != best.config[d])
                            .collect();
                        self.climber.start_frozen(kicked, frozen);
                    } else {
                        self.climber.stop();
                    }
                }
            }
        }
    }
}

/// MLS options.
#[derive(Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct MlsOptions {
    #[serde(alias = "neighbor", deserialize_with = "crate::options::choice")]
    neighbour: Neighbourhood,
    restart: bool,
    #[serde(deserialize_with = "crate::options::choice")]
    order: Order,
    start_samples: usize,
    follow_best: bool,
    kicks: usize,
    kick_size: f64,
    switch_kicks: f64,
    climb_patience: usize,
}

impl Default for MlsOptions {
    fn default() -> Self {
        MlsOptions {
            neighbour: Neighbourhood::Hamming,
            restart: true,
            order: Order::Random,
            start_samples: START_SAMPLES,
            follow_best: false,
            kicks: 0,
            kick_size: 0.2,
            switch_kicks: 0.0,
            climb_patience: 0,
        }
    }
}

fn check(options: &crate::Options) -> Result<Box<dyn crate::Factory>, crate::StrategyError> {
    const NAME: &str = "mls";
    let o: MlsOptions = crate::parse(NAME, options)?;
    Ok(crate::registry::factory(o, |o| {
        Box::new(
            MultiStartLocalSearch::new(
                o.neighbour,
                o.order == Order::Random,
                o.restart,
                o.start_samples,
            )
            .following_best(o.follow_best)
            .patient(o.climb_patience)
            .kicking(
                o.kicks,
                Perturbation::Random {
                    fraction: o.kick_size,
                },
            )
            .switching(o.switch_kicks),
        )
    }))
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: "mls",
    aliases: &["multi_start_local_search"],
    about: "Multi-start local search: first-improvement hill climbing over valid neighbours, restarted from a random unevaluated configuration at each local optimum.",
    options: &[
        crate::OptionDoc::new("neighbour", "\"Hamming\"", "Neighbourhood: \"Hamming\" (one parameter differs), \"adjacent\" or \"strictly-adjacent\"."),
        crate::OptionDoc::new("restart", "true", "Move as soon as a better neighbour is found (first improvement); false evaluates the whole neighbourhood and moves to the best (Kernel Tuner's `restart`)."),
        crate::OptionDoc::new("order", "\"random\"", "Order in which neighbours are tried: \"random\" (a new permutation at every configuration) or \"sequential\" (parameter by parameter)."),
        START_SAMPLES_DOC,
        crate::OptionDoc::new("follow_best", "false", "Move the climb to the study's best configuration whenever it is better than the climb's own (found by another strategy of a portfolio, or by another worker)."),
        crate::OptionDoc::new("kicks", "0", "At a local optimum, first climb from this many random perturbations of the study's best configuration (counted afresh at every new best; the perturbed parameters stay put until the others reach their local optimum), then restart (an iterated local search). Off by default: alone, `mls` scored no better with kicks (0.460 against 0.476 on the 12 shared spaces); in `auto` they pay.").count(0, 1_000_000),
        KICK_SIZE_DOC,
        crate::OptionDoc::new("switch_kicks", "0", "The share of the kicks that change one or two of the space's switches (parameters of two values, or not numbers: use_shmem, a loop order) into the combination the study has evaluated least, keeping the sizes, instead of random parameters: a trap in one sub-space is left for the least explored other.").real(0.0, 1.0),
        crate::OptionDoc::new("climb_patience", "0", "A configuration counts as a local optimum after this many of its neighbours brought no improvement (0: only when every neighbour is known). Meant for neighbours tried in a model's order, as `auto` does; in random order it ends climbs early (0.274 at 4, against 0.476)."),
    ],
    tunable: &[
        crate::Tunable::new(
            "neighbour",
            &["\"Hamming\"", "\"adjacent\"", "\"strictly-adjacent\""],
        ),
        crate::Tunable::new("restart", &["true", "false"]),
        crate::Tunable::new("start_samples", &["1", "5", "10", "20", "40"]),
        crate::Tunable::new("kicks", &["0", "10", "30", "100"]),
        crate::Tunable::new("climb_patience", &["0", "4", "8", "16"]),
    ],
    check,
};
