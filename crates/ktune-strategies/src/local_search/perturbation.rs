//! Kicks: a few random parameters of a configuration changed, repaired to the nearest valid
//! configuration (greedy ILS's perturbation, and the kicks of `mls` and `auto`), or its
//! switches moved to the combination the study has visited least ([`switch_kick`]).

use ktune_core::{History, Rng};
use ktune_space::{Configuration, SearchSpace};
use rand::RngExt;
use rand::seq::SliceRandom;
use rustc_hash::FxHashMap;

/// The documentation of the `kick_size` option (the same wherever the climb kicks).
pub(crate) const KICK_SIZE_DOC: crate::OptionDoc = crate::OptionDoc::new("kick_size", "0.2", "The largest share of the parameters a kick changes: each changes 1 to max(1, kick_size x parameters) random parameters, repaired to valid.").real(0.0, 1.0);

/// How many parameters a perturbation changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Perturbation {
    /// A uniformly random number from 1 to `max(1, ⌊fraction · parameters⌋)`.
    Random {
        /// The largest share of the parameters changed (Kernel Tuner's `random_walk`).
        fraction: f64,
    },
    /// Exactly this many parameters (all of them when there are fewer).
    Fixed(usize),
}

impl Perturbation {
    /// `config` with this many random parameters (of those with more than one value) set to
    /// random other values, repaired to the nearest valid configuration.
    pub(crate) fn apply(
        &self,
        space: &SearchSpace,
        config: &[u32],
        rng: &mut Rng,
    ) -> Configuration {
        let mut free: Vec<usize> = (0..space.dims())
            .filter(|&d| space.params()[d].len() > 1)
            .collect();
        let k = match *self {
            Perturbation::Fixed(k) => k,
            Perturbation::Random { fraction } => {
                let most = ((fraction * space.dims() as f64) as usize).max(1);
                rng.random_range(1..=most)
            }
        }
        .min(free.len());
        free.shuffle(rng);
        let mut out = config.to_vec();
        change(space, &mut out, &free[..k], rng);
        space.repair_nearest(&out, rng)
    }
}

/// Sets each parameter `dims` of `config` to a uniformly random value other than its own.
fn change(space: &SearchSpace, config: &mut [u32], dims: &[usize], rng: &mut Rng) {
    for &d in dims {
        let len = space.params()[d].len() as u32;
        let v = rng.random_range(0..len - 1);
        config[d] = if v >= config[d] { v + 1 } else { v };
    }
}

/// How many candidate kicks a switch kick draws before it takes the one into the least
/// visited combination.
const SWITCH_CANDIDATES: usize = 32;

/// The most switches a switch kick changes (before repair): one or two, as a kick of
/// `auto`'s size changes one or two parameters. Where a space has many switches (a loop
/// order, several flags) their combinations are mostly unvisited, and changing all of them
/// would be a random restart, not a kick.
const SWITCHES_PER_KICK: usize = 2;

/// A kick that diversifies: `config` with one or two of its `switches` changed, repaired to
/// the nearest valid configuration, into the combination of switch values the study has
/// evaluated least (of [`SWITCH_CANDIDATES`] random such kicks). Its sizes stay where they
/// are valid. `None` when the space has no switches, or no candidate is both in another
/// combination (not repaired back) and unevaluated: a switch kick from the same best into
/// the same combination would repeat a climb (with a single switch, every one would), so
/// the kick is then a random one.
///
/// Why: the switches split a space into sub-spaces with landscapes of their own, and a
/// trap's sub-space can hold the climb for the whole budget. On convolution_A100, 22 of 50
/// runs of `auto` ended at one configuration with shared memory and the read-only cache
/// off (1.47 times the optimum), having spent 1-15 of 120 evaluations where both are on,
/// the sub-space of all 42 configurations within 1.5 times the optimum; no one- or
/// two-parameter change of the trap improves on it. A random kick of one or two of its
/// seven parameters flips exactly those two switches once in 42 kicks. The long-term
/// frequency memory of tabu search (Glover and Laguna, *Tabu Search*, 1997, ch. 4) is the
/// same idea.
pub(crate) fn switch_kick(
    space: &SearchSpace,
    switches: &[usize],
    history: &History,
    config: &[u32],
    rng: &mut Rng,
) -> Option<Configuration> {
    if switches.is_empty() {
        return None;
    }
    let combination = |c: &[u32]| -> Vec<u32> { switches.iter().map(|&d| c[d]).collect() };
    let mut visits: FxHashMap<Vec<u32>, usize> = FxHashMap::default();
    for o in history.observations() {
        *visits.entry(combination(&o.config)).or_default() += 1;
    }
    let own = combination(config);
    let mut chosen = switches.to_vec();
    let mut pick: Option<(usize, Configuration)> = None;
    for _ in 0..SWITCH_CANDIDATES {
        let k = rng.random_range(1..=SWITCHES_PER_KICK.min(switches.len()));
        chosen.shuffle(rng);
        let mut moved = config.to_vec();
        change(space, &mut moved, &chosen[..k], rng);
        let moved = space.repair_nearest(&moved, rng);
        let target = combination(&moved);
        if target == own || history.contains(&moved) {
            continue;
        }
        let n = visits.get(&target).copied().unwrap_or(0);
        if pick.as_ref().is_none_or(|(m, _)| n < *m) {
            pick = Some((n, moved));
        }
    }
    pick.map(|(_, c)| c)
}
