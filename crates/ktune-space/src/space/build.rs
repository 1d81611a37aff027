//! Search-space construction without walking the Cartesian product.
//!
//! 1. Constraints on a single parameter filter its domain.
//! 2. Parameters that constraints link (transitively) form a group: one tree of BaCO's chain of
//!    trees (Rasch et al.'s idea). Groups are independent, so the space is their product.
//! 3. Each group is enumerated by backtracking over its parameters in a fail-first order; each
//!    constraint is checked at the depth where its last parameter gets a value, so a partial
//!    assignment that violates it is never extended. Large groups are split at a shallow depth
//!    and the subtrees enumerated in parallel with rayon.
//! 4. A constraint whose parameters have few combinations (at most [`TABLE_CELLS`]) is
//!    evaluated once per combination up front, and checked during the search by a table
//!    look-up on value indices: a constraint such as `t % u == 0` deep in the tree is otherwise
//!    evaluated again for every partial assignment above it.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::expr::bounds::{Cond, Interval};
use crate::expr::{Constraint, Scalar};

use super::group::Group;

/// The default limit on the constraint checks of one group's enumeration: half a minute to a
/// minute on two cores (the builder checks 15-35 million partial assignments a second;
/// BENCHMARKS.md, "very large domains").
pub const DEFAULT_MAX_CHECKS: f64 = 1e9;

/// The largest number of combinations of a constraint's parameters for which it is tabulated.
pub(crate) const TABLE_CELLS: usize = 1 << 16;

/// How a constraint is checked during the search.
enum Check<'a> {
    /// A truth table over the value indices of the parameters at `depths`.
    Table {
        depths: Vec<usize>,
        strides: Vec<usize>,
        table: Vec<bool>,
    },
    /// The compiled expression, on the current assignment.
    Expr(&'a Constraint),
}

impl Check<'_> {
    #[inline]
    fn holds(&self, idx: &[u32], assign: &[Scalar]) -> bool {
        match self {
            Check::Table {
                depths,
                strides,
                table,
            } => {
                let code: usize = depths
                    .iter()
                    .zip(strides)
                    .map(|(&d, &s)| idx[d] as usize * s)
                    .sum();
                table[code]
            }
            Check::Expr(c) => c.is_satisfied(assign),
        }
    }
}

/// Tabulates `c` over its parameters' domains, if that is small enough.
fn tabulate<'a>(
    c: &'a Constraint,
    scalars: &[Vec<Scalar>],
    depth: &[usize],
    limit: usize,
) -> Check<'a> {
    let ps = c.params();
    let sizes: Vec<usize> = ps.iter().map(|&p| scalars[p].len()).collect();
    let cells = sizes.iter().try_fold(1usize, |a, &s| a.checked_mul(s));
    let Some(cells) = cells.filter(|&n| n <= limit) else {
        return Check::Expr(c);
    };
    let mut strides = vec![1usize; ps.len()];
    for i in (0..ps.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * sizes[i + 1];
    }
    let mut assign = vec![Scalar::Int(0); scalars.len()];
    let table = (0..cells)
        .map(|code| {
            for ((&p, &s), &n) in ps.iter().zip(&strides).zip(&sizes) {
                assign[p] = scalars[p][(code / s) % n];
            }
            c.is_satisfied(&assign)
        })
        .collect();
    Check::Table {
        depths: ps.iter().map(|&p| depth[p]).collect(),
        strides,
        table,
    }
}

/// What the backtracking needs to know about one group.
struct Problem<'a> {
    /// Global parameter indices in assignment order.
    order: Vec<usize>,
    /// Candidate value indices per depth (after unary filtering).
    candidates: Vec<Vec<u32>>,
    /// Constraints to check at each depth.
    checks: Vec<Vec<Check<'a>>>,
    /// Run-time values per global parameter and value index.
    scalars: &'a [Vec<Scalar>],
    n_params: usize,
    /// Interval bounds of the constraints not yet complete at each depth that mention the
    /// parameter assigned there: a subtree none of whose values could satisfy one is pruned.
    partial: Vec<Vec<&'a Cond>>,
    /// Per global parameter: its depth in `order` (`usize::MAX` outside the group).
    depth: Vec<usize>,
    /// Per global parameter: the range of its candidate values.
    ranges: Vec<Interval>,
}

/// The value of a scalar as an interval of one point (unbounded for a string).
fn point(v: Scalar) -> Interval {
    match v {
        Scalar::Int(i) => Interval::integer(i),
        Scalar::Real(x) => Interval::point(x, false),
        Scalar::Bool(b) => Interval::point(f64::from(u8::from(b)), true),
        _ => Interval::unbounded(),
    }
}

/// Splits parameters into groups; returns the groups (each: parameters ascending, constraint
/// indices) ordered by their first parameter.
pub(crate) fn partition(
    n_params: usize,
    constraints: &[Constraint],
) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut parent: Vec<usize> = (0..n_params).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for c in constraints {
        let ps = c.params();
        for w in ps.windows(2) {
            let (a, b) = (find(&mut parent, w[0]), find(&mut parent, w[1]));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut groups: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    let mut slot = vec![usize::MAX; n_params];
    for p in 0..n_params {
        let root = find(&mut parent, p);
        if slot[root] == usize::MAX {
            slot[root] = groups.len();
            groups.push((Vec::new(), Vec::new()));
        }
        groups[slot[root]].0.push(p);
    }
    for (ci, c) in constraints.iter().enumerate() {
        if let Some(&p) = c.params().first() {
            let root = find(&mut parent, p);
            groups[slot[root]].1.push(ci);
        }
    }
    groups
}

/// Why a group was not enumerated.
pub(crate) enum Refused {
    /// The enumeration would need this many constraint checks, more than allowed.
    TooMuchWork(f64),
    /// The build was cancelled.
    Interrupted,
}

/// Watches a search-space build from another thread: how far it has come, and a way to
/// stop it. Groups of linked parameters are enumerated one after another; a large group is
/// split into subtrees (a few hundred), each counted when done.
#[derive(Debug, Default)]
pub struct BuildProgress {
    groups: AtomicU64,
    groups_done: AtomicU64,
    subtrees: AtomicU64,
    subtrees_done: AtomicU64,
    cancelled: AtomicBool,
}

impl BuildProgress {
    /// A build not started.
    pub fn new() -> BuildProgress {
        BuildProgress::default()
    }

    /// The share of the build done, from 0 to 1 (each group counts equally).
    pub fn fraction(&self) -> f64 {
        let groups = self.groups.load(Ordering::Relaxed);
        if groups == 0 {
            return 0.0;
        }
        let done = self.groups_done.load(Ordering::Relaxed) as f64;
        let subtrees = self.subtrees.load(Ordering::Relaxed);
        let inside = if subtrees == 0 {
            0.0
        } else {
            self.subtrees_done.load(Ordering::Relaxed) as f64 / subtrees as f64
        };
        ((done + inside) / groups as f64).min(1.0)
    }

    /// Asks the build to stop: it ends soon with [`SpaceError::Interrupted`](crate::SpaceError).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    pub(crate) fn start(&self, groups: usize) {
        self.groups.store(groups as u64, Ordering::Relaxed);
        self.groups_done.store(0, Ordering::Relaxed);
    }

    fn start_group(&self, subtrees: usize) {
        self.subtrees_done.store(0, Ordering::Relaxed);
        self.subtrees.store(subtrees as u64, Ordering::Relaxed);
    }

    pub(crate) fn group_done(&self) {
        self.subtrees.store(0, Ordering::Relaxed);
        self.groups_done.fetch_add(1, Ordering::Relaxed);
    }
}

/// Enumerates one group. `params` ascending; `constraints` mention only these parameters.
/// Refused when the enumeration would need more than `max_checks` constraint checks
/// (Knuth's estimate of the backtracking tree), before any of it is done, or when
/// `progress` is cancelled.
pub(crate) fn enumerate_group(
    params: &[usize],
    constraints: &[&Constraint],
    scalars: &[Vec<Scalar>],
    domain_sizes: &[u32],
    table_cells: usize,
    max_checks: f64,
    progress: &BuildProgress,
) -> Result<Group, Refused> {
    let n_params = scalars.len();
    // Unary constraints filter domains up front.
    let mut assign = vec![Scalar::Int(0); n_params];
    let mut candidates: Vec<Vec<u32>> = params
        .iter()
        .map(|&p| {
            (0..domain_sizes[p])
                .filter(|&v| {
                    assign[p] = scalars[p][v as usize];
                    constraints
                        .iter()
                        .filter(|c| c.params() == [p])
                        .all(|c| c.is_satisfied(&assign))
                })
                .collect()
        })
        .collect();
    let multi: Vec<&Constraint> = constraints
        .iter()
        .copied()
        .filter(|c| c.params().len() > 1)
        .collect();
    if params.len() == 1 && constraints.is_empty() {
        return Ok(Group::free(params[0], domain_sizes[params[0]]));
    }

    // Fail-first order: prefer the parameter that completes the most constraints, then the one
    // most entangled with what is already assigned, then the smallest filtered domain.
    let local = |p: usize| params.iter().position(|&q| q == p).unwrap_or(0);
    let mut assigned = vec![false; params.len()];
    let mut order_local: Vec<usize> = Vec::with_capacity(params.len());
    while order_local.len() < params.len() {
        let best = (0..params.len())
            .filter(|&i| !assigned[i])
            .max_by_key(|&i| {
                let p = params[i];
                let mut completes = 0usize;
                let mut touches = 0usize;
                let mut degree = 0usize;
                for c in &multi {
                    if !c.params().contains(&p) {
                        continue;
                    }
                    degree += 1;
                    let others_assigned = c
                        .params()
                        .iter()
                        .filter(|&&q| q != p)
                        .all(|&q| assigned[local(q)]);
                    if others_assigned {
                        completes += 1;
                    } else if c.params().iter().any(|&q| q != p && assigned[local(q)]) {
                        touches += 1;
                    }
                }
                (
                    completes,
                    touches,
                    degree,
                    std::cmp::Reverse(candidates[i].len()),
                    std::cmp::Reverse(i),
                )
            })
            .unwrap_or(0);
        assigned[best] = true;
        order_local.push(best);
    }
    let order: Vec<usize> = order_local.iter().map(|&i| params[i]).collect();
    let mut depth = vec![0usize; n_params];
    for (d, &p) in order.iter().enumerate() {
        depth[p] = d;
    }
    let depth_of = |p: usize| depth[p];
    let mut checks: Vec<Vec<Check>> = (0..params.len()).map(|_| Vec::new()).collect();
    for c in &multi {
        let d = c.params().iter().map(|&p| depth_of(p)).max().unwrap_or(0);
        checks[d].push(tabulate(c, scalars, &depth, table_cells));
    }
    let ordered_candidates: Vec<Vec<u32>> = order_local
        .iter()
        .map(|&i| std::mem::take(&mut candidates[i]))
        .collect();
    let mut partial: Vec<Vec<&Cond>> = (0..params.len()).map(|_| Vec::new()).collect();
    for c in &multi {
        let Some(bounds) = c.bounds() else { continue };
        let last = c.params().iter().map(|&p| depth_of(p)).max().unwrap_or(0);
        for &p in c.params() {
            if depth_of(p) < last {
                partial[depth_of(p)].push(bounds);
            }
        }
    }
    let mut ranges = vec![Interval::unbounded(); n_params];
    for (d, &p) in order.iter().enumerate() {
        let mut values = ordered_candidates[d]
            .iter()
            .map(|&v| point(scalars[p][v as usize]));
        if let Some(first) = values.next() {
            ranges[p] = values.fold(first, |a, b| {
                // A NaN value is outside every interval: the range cannot describe it.
                if a.lo.is_nan() || b.lo.is_nan() {
                    return Interval::unbounded();
                }
                Interval {
                    lo: a.lo.min(b.lo),
                    hi: a.hi.max(b.hi),
                    integral: a.integral && b.integral,
                }
            });
            if ranges[p].lo.is_nan() {
                ranges[p] = Interval::unbounded();
            }
        }
    }
    let mut global_depth = vec![usize::MAX; n_params];
    for (d, &p) in order.iter().enumerate() {
        global_depth[p] = d;
    }
    let mut problem = Problem {
        order,
        candidates: ordered_candidates,
        checks,
        scalars,
        n_params,
        partial,
        depth: global_depth,
        ranges,
    };
    problem.keep_useful_bounds(
        params
            .iter()
            .fold(0xb0_u64, |h, &p| h.rotate_left(5) ^ p as u64),
    );

    // Estimate the work first (a few hundred random descents: negligible next to a build that
    // matters), so that a group that would run for hours is refused at once.
    // The checks without any pruning bound the real ones: below the limit, nothing to check.
    let unpruned: f64 = problem
        .candidates
        .iter()
        .scan(1.0, |prefixes, c| {
            *prefixes *= c.len() as f64;
            Some(*prefixes)
        })
        .sum();
    if unpruned > max_checks {
        let seed = params
            .iter()
            .fold(0x5eed_u64, |h, &p| h.rotate_left(7) ^ p as u64);
        let estimate = problem.estimate_checks(256, seed);
        if estimate > max_checks {
            return Err(Refused::TooMuchWork(estimate));
        }
    }
    // Candidates are ascending and subtrees are concatenated in order, so the rows come out
    // sorted lexicographically in assignment order: store them in that order as they are.
    let rows = problem.enumerate(progress).ok_or(Refused::Interrupted)?;
    let radix = problem.order.iter().map(|&p| domain_sizes[p]).collect();
    Ok(Group::from_sorted(problem.order, radix, rows))
}

impl Problem<'_> {
    /// Whether the assignment up to `depth` passes the checks there: the constraints it
    /// completes, and the interval bounds of those it only begins.
    #[inline]
    fn passes(&self, depth: usize, idx: &[u32], assign: &[Scalar]) -> bool {
        if !self.checks[depth].iter().all(|c| c.holds(idx, assign)) {
            return false;
        }
        let partial = &self.partial[depth];
        if partial.is_empty() {
            return true;
        }
        let range = |p: usize| {
            if self.depth[p] <= depth {
                point(assign[p])
            } else {
                self.ranges[p]
            }
        };
        partial.iter().all(|c| c.can_hold(&range))
    }

    /// Drops the interval checks that never prune on random assignments: a bound that
    /// cannot cut anything only costs time at every node (`block_x * block_y <= 1024` over
    /// domains whose products all fit, say). Checks that prune rarely go too; they would
    /// save little.
    fn keep_useful_bounds(&mut self, seed: u64) {
        const PROBES: usize = 64;
        if self.partial.iter().all(Vec::is_empty) {
            return;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut assign = vec![Scalar::Int(0); self.n_params];
        let mut useful: Vec<Vec<bool>> = self
            .partial
            .iter()
            .map(|checks| vec![false; checks.len()])
            .collect();
        for _ in 0..PROBES {
            for (d, useful) in useful.iter_mut().enumerate() {
                let candidates = &self.candidates[d];
                if candidates.is_empty() {
                    return;
                }
                let p = self.order[d];
                let v = candidates[rng.random_range(0..candidates.len())];
                assign[p] = self.scalars[p][v as usize];
                let range = |q: usize| {
                    if self.depth[q] <= d {
                        point(assign[q])
                    } else {
                        self.ranges[q]
                    }
                };
                for (j, c) in self.partial[d].iter().enumerate() {
                    if !useful[j] && !c.can_hold(&range) {
                        useful[j] = true;
                    }
                }
            }
        }
        for (checks, useful) in self.partial.iter_mut().zip(useful) {
            let mut keep = useful.into_iter();
            checks.retain(|_| keep.next().unwrap_or(false));
        }
    }

    /// Knuth's estimate of the constraint checks a full enumeration makes ("Estimating the
    /// efficiency of backtrack programs", 1975): random descents through the backtracking
    /// tree, each weighting the checks at a depth by the product of the branching factors
    /// above it; the mean over descents is unbiased. Levels with many candidates are sampled.
    fn estimate_checks(&self, probes: usize, seed: u64) -> f64 {
        const SAMPLE: usize = 512;
        let k = self.order.len();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut assign = vec![Scalar::Int(0); self.n_params];
        let mut idx = vec![0u32; k];
        let mut passing: Vec<u32> = Vec::new();
        let mut total = 0.0;
        for _ in 0..probes.max(1) {
            let mut prefixes = 1.0f64;
            let mut checks = 0.0;
            for d in 0..k {
                let candidates = &self.candidates[d];
                checks += prefixes * candidates.len() as f64;
                let p = self.order[d];
                passing.clear();
                let tried = candidates.len().min(SAMPLE);
                for j in 0..tried {
                    let v = if candidates.len() <= SAMPLE {
                        candidates[j]
                    } else {
                        candidates[rng.random_range(0..candidates.len())]
                    };
                    assign[p] = self.scalars[p][v as usize];
                    idx[d] = v;
                    if self.passes(d, &idx, &assign) {
                        passing.push(v);
                    }
                }
                if passing.is_empty() {
                    break;
                }
                prefixes *= passing.len() as f64 * candidates.len() as f64 / tried as f64;
                let v = passing[rng.random_range(0..passing.len())];
                assign[p] = self.scalars[p][v as usize];
                idx[d] = v;
            }
            total += checks;
        }
        total / probes.max(1) as f64
    }

    /// Every valid row, in order; `None` when `progress` was cancelled.
    fn enumerate(&self, progress: &BuildProgress) -> Option<Vec<u32>> {
        let k = self.order.len();
        if self.candidates.iter().any(Vec::is_empty) {
            return Some(Vec::new());
        }
        // Split into independent subtrees at the shallowest depth with enough prefixes to keep
        // every core busy; small groups run on the calling thread.
        let cartesian: f64 = self.candidates.iter().map(|c| c.len() as f64).product();
        let mut split = 0;
        let mut prefixes_estimate = 1.0;
        if cartesian > 20_000.0 {
            while split < k - 1 && prefixes_estimate < 256.0 {
                prefixes_estimate *= self.candidates[split].len() as f64;
                split += 1;
            }
        }
        let mut assign = vec![Scalar::Int(0); self.n_params];
        let mut idx = vec![0u32; k];
        if split == 0 {
            let mut out = Vec::new();
            self.dfs(0, k, &mut assign, &mut idx, &mut out);
            return Some(out);
        }
        let mut prefixes = Vec::new();
        self.dfs(0, split, &mut assign, &mut idx, &mut prefixes);
        progress.start_group(prefixes.len() / split);
        let work = || -> Vec<Vec<u32>> {
            prefixes
                .par_chunks_exact(split)
                .map(|prefix| {
                    if progress.is_cancelled() {
                        return Vec::new();
                    }
                    let mut assign = vec![Scalar::Int(0); self.n_params];
                    let mut idx = vec![0u32; k];
                    for (d, &v) in prefix.iter().enumerate() {
                        idx[d] = v;
                        assign[self.order[d]] = self.scalars[self.order[d]][v as usize];
                    }
                    let mut out = Vec::new();
                    self.dfs(split, k, &mut assign, &mut idx, &mut out);
                    progress.subtrees_done.fetch_add(1, Ordering::Relaxed);
                    out
                })
                .collect()
        };
        // Threads with room for constraints a thousand levels deep (a flat sum of a thousand
        // terms evaluates as a thousand nested calls); rayon's default threads have 2 MiB.
        let parts = match rayon::ThreadPoolBuilder::new()
            .num_threads(rayon::current_num_threads())
            .stack_size(16 << 20)
            .build()
        {
            Ok(pool) => pool.install(work),
            Err(_) => work(),
        };
        (!progress.is_cancelled()).then(|| parts.concat())
    }

    /// Extends the assignment at `depth` up to `stop`, appending each complete prefix
    /// (`idx[..stop]`) to `out`.
    fn dfs(
        &self,
        depth: usize,
        stop: usize,
        assign: &mut [Scalar],
        idx: &mut [u32],
        out: &mut Vec<u32>,
    ) {
        let p = self.order[depth];
        let values = &self.scalars[p];
        for &v in &self.candidates[depth] {
            assign[p] = values[v as usize];
            idx[depth] = v;
            if !self.passes(depth, idx, assign) {
                continue;
            }
            if depth + 1 == stop {
                out.extend_from_slice(&idx[..stop]);
            } else {
                self.dfs(depth + 1, stop, assign, idx, out);
            }
        }
    }
}

/// The share of the combinations of a constraint's own parameters that it rejects (exact up to
/// a million combinations, estimated from an even stride through them beyond).
pub(crate) fn rejected_share(c: &Constraint, scalars: &[Vec<Scalar>]) -> f64 {
    let ps = c.params();
    let mut assign = vec![Scalar::Int(0); scalars.len()];
    if ps.is_empty() {
        return if c.is_satisfied(&assign) { 0.0 } else { 1.0 };
    }
    let sizes: Vec<u64> = ps.iter().map(|&p| scalars[p].len() as u64).collect();
    let total = sizes
        .iter()
        .fold(1u128, |a, &s| a.saturating_mul(u128::from(s)));
    let samples: u128 = total.min(1_000_000);
    let stride = total / samples;
    let mut rejected = 0u64;
    for i in 0..samples {
        let mut code = i * stride;
        for (&p, &s) in ps.iter().zip(&sizes).rev() {
            assign[p] = scalars[p][(code % u128::from(s)) as usize];
            code /= u128::from(s);
        }
        if !c.is_satisfied(&assign) {
            rejected += 1;
        }
    }
    rejected as f64 / samples as f64
}
