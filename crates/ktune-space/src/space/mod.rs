//! The search space: every configuration that satisfies the known constraints, stored as a
//! product of independent groups (a chain of trees) and never materialised as a product.
//!
//! A [`Configuration`] is one value index per parameter, in the order the parameters were
//! declared. Every configuration of the space also has a *rank* in `0..size()`: the groups'
//! local ranks combined by mixed radix, the first group varying slowest.
//!
//! # Example
//! ```
//! use ktune_space::{Parameter, SearchSpace};
//!
//! let space = SearchSpace::new(
//!     vec![
//!         Parameter::integer("block_size_x", [16, 32, 64, 128])?,
//!         Parameter::integer("block_size_y", [1, 2, 4, 8])?,
//!         Parameter::integer("unroll", [1, 2, 4])?,
//!     ],
//!     &["32 <= block_size_x * block_size_y <= 256"],
//! )?;
//! assert_eq!(space.size(), 12 * 3); // 12 (x, y) pairs, times 3 unroll factors
//! assert_eq!(space.groups().len(), 2); // {block_size_x, block_size_y} and {unroll}
//! let config = space.configuration(5);
//! assert!(space.contains(&config));
//! assert_eq!(space.rank(&config), Some(5));
//! # Ok::<(), ktune_space::SpaceError>(())
//! ```
//!
//! ## References
//! - B. van Werkhoven et al., constraint-aware optimisation strategies for auto-tuning (search
//!   space as a constraint-satisfaction problem; neighbour definitions).
//! - E. Hellsten et al., BaCO, section 4 (chain of trees, unbiased sampling from the leaves).

mod build;
mod encode;
mod group;
mod neighbours;
pub(crate) mod sample;

use std::time::{Duration, Instant};

pub use build::{BuildProgress, DEFAULT_MAX_CHECKS};
pub use encode::{Encoder, Encoding};
pub use neighbours::Neighbourhood;

use crate::error::SpaceError;
use crate::expr::{Constraint, ExprError, Expression, Interner, Scalar, Symbol};
use crate::param::{Parameter, Value};
use group::Group;

/// One value index per parameter, in declaration order.
pub type Configuration = Vec<u32>;

/// A feasible search space.
#[derive(Clone, Debug)]
pub struct SearchSpace {
    params: Vec<Parameter>,
    constraints: Vec<Constraint>,
    interner: Interner,
    scalars: Vec<Vec<Scalar>>,
    groups: Vec<Group>,
    /// How many constraints link each group.
    group_constraints: Vec<usize>,
    /// Mixed-radix weight of each group's local rank in the global rank.
    strides: Vec<u64>,
    size: u64,
    build_time: Duration,
}

/// Summary of one group, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupInfo {
    /// Names of the parameters in the group.
    pub params: Vec<String>,
    /// Feasible tuples in the group.
    pub size: u64,
    /// Product of the group's domain sizes.
    pub cartesian_size: f64,
    /// How many constraints link the group.
    pub constraints: usize,
}

impl SearchSpace {
    /// Builds the space of `params` under constraint expressions in the constraint language.
    pub fn new(
        params: Vec<Parameter>,
        constraints: &[impl AsRef<str>],
    ) -> Result<SearchSpace, SpaceError> {
        SearchSpace::new_observed(
            params,
            constraints,
            build::DEFAULT_MAX_CHECKS,
            &BuildProgress::new(),
        )
    }

    /// [`new`](Self::new) with a limit on the enumeration's work (see
    /// [`with_constraints_limited`](Self::with_constraints_limited)), reporting to `progress`
    /// and stopping with [`SpaceError::Interrupted`] when it is cancelled.
    pub fn new_observed(
        params: Vec<Parameter>,
        constraints: &[impl AsRef<str>],
        max_checks: f64,
        progress: &BuildProgress,
    ) -> Result<SearchSpace, SpaceError> {
        let mut interner = Interner::default();
        let symbols = symbols(&params);
        let mut compiled = Vec::with_capacity(constraints.len());
        for (i, c) in constraints.iter().enumerate() {
            let c = c.as_ref();
            compiled.push(
                Constraint::compile(c, &symbols, &mut interner).map_err(|error| {
                    SpaceError::Expr {
                        context: format!("error in constraint {}", i + 1),
                        location: None,
                        expression: c.to_string(),
                        error: Box::new(error),
                    }
                })?,
            );
        }
        SearchSpace::build(
            params,
            compiled,
            interner,
            build::TABLE_CELLS,
            max_checks,
            progress,
        )
    }

    /// Builds the space of `params` under already compiled constraints (including
    /// [`Constraint::from_fn`] closures). `interner` must be the one the constraints were
    /// compiled with.
    pub fn with_constraints(
        params: Vec<Parameter>,
        constraints: Vec<Constraint>,
        interner: Interner,
    ) -> Result<SearchSpace, SpaceError> {
        SearchSpace::with_constraints_limited(
            params,
            constraints,
            interner,
            build::DEFAULT_MAX_CHECKS,
        )
    }

    /// [`with_constraints`](Self::with_constraints), refusing a group of linked parameters
    /// whose enumeration would need more than `max_checks` constraint checks (estimated before
    /// it starts; the default is [`DEFAULT_MAX_CHECKS`]) with
    /// [`SpaceError::TooMuchWork`].
    pub fn with_constraints_limited(
        params: Vec<Parameter>,
        constraints: Vec<Constraint>,
        interner: Interner,
        max_checks: f64,
    ) -> Result<SearchSpace, SpaceError> {
        SearchSpace::with_constraints_observed(
            params,
            constraints,
            interner,
            max_checks,
            &BuildProgress::new(),
        )
    }

    /// [`with_constraints_limited`](Self::with_constraints_limited), reporting to `progress`
    /// and stopping with [`SpaceError::Interrupted`] when it is cancelled.
    pub fn with_constraints_observed(
        params: Vec<Parameter>,
        constraints: Vec<Constraint>,
        interner: Interner,
        max_checks: f64,
        progress: &BuildProgress,
    ) -> Result<SearchSpace, SpaceError> {
        SearchSpace::build(
            params,
            constraints,
            interner,
            build::TABLE_CELLS,
            max_checks,
            progress,
        )
    }

    /// [`with_constraints`](Self::with_constraints) with a chosen limit for tabulating
    /// constraints (0 evaluates every constraint as an expression during the search).
    pub(crate) fn build(
        params: Vec<Parameter>,
        constraints: Vec<Constraint>,
        mut interner: Interner,
        table_cells: usize,
        max_checks: f64,
        progress: &BuildProgress,
    ) -> Result<SearchSpace, SpaceError> {
        let started = Instant::now();
        check_unique_names(&params)?;
        let scalars: Vec<Vec<Scalar>> = params.iter().map(|p| p.scalars(&mut interner)).collect();
        let sizes: Vec<u32> = params.iter().map(|p| p.len() as u32).collect();
        for c in &constraints {
            if let Some(&p) = c.params().iter().find(|&&p| p >= params.len()) {
                return Err(SpaceError::Mismatch(format!(
                    "constraint `{}` refers to parameter {p}, but there are only {}",
                    c.source(),
                    params.len()
                )));
            }
        }
        let cartesian = cartesian_string(&params);
        // A constraint on no parameter is a constant: false empties the space.
        let assign = vec![Scalar::Int(0); params.len()];
        if let Some(c) = constraints
            .iter()
            .find(|c| c.params().is_empty() && !c.is_satisfied(&assign))
        {
            return Err(SpaceError::EmptySpace {
                cartesian,
                culprit: c.source().to_string(),
                rejected: 1.0,
            });
        }

        let partition = build::partition(params.len(), &constraints);
        progress.start(partition.len());
        let mut groups = Vec::with_capacity(partition.len());
        let mut group_constraints = Vec::with_capacity(partition.len());
        for (members, cs) in &partition {
            let cs: Vec<&Constraint> = cs.iter().map(|&i| &constraints[i]).collect();
            if progress.is_cancelled() {
                return Err(SpaceError::Interrupted);
            }
            let group = build::enumerate_group(
                members,
                &cs,
                &scalars,
                &sizes,
                table_cells,
                max_checks,
                progress,
            )
            .map_err(|refused| match refused {
                build::Refused::Interrupted => SpaceError::Interrupted,
                build::Refused::TooMuchWork(estimate) => {
                    let own: Vec<Parameter> = members.iter().map(|&m| params[m].clone()).collect();
                    SpaceError::TooMuchWork {
                        params: own.iter().map(|p| p.name().to_string()).collect(),
                        cartesian: cartesian_string(&own),
                        estimate,
                        limit: max_checks,
                    }
                }
            })?;
            progress.group_done();
            if group.len() == 0 {
                let (culprit, rejected) = cs
                    .iter()
                    .map(|c| (c, build::rejected_share(c, &scalars)))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|(c, r)| (c.source().to_string(), r))
                    .unwrap_or_default();
                return Err(SpaceError::EmptySpace {
                    cartesian,
                    culprit,
                    rejected,
                });
            }
            groups.push(group);
            group_constraints.push(cs.len());
        }
        let mut strides = vec![1u64; groups.len()];
        let mut size = 1u64;
        for (g, stride) in groups.iter().zip(strides.iter_mut()).rev() {
            *stride = size;
            size = size.checked_mul(g.len()).ok_or(SpaceError::TooLarge)?;
        }
        Ok(SearchSpace {
            params,
            constraints,
            interner,
            scalars,
            groups,
            group_constraints,
            strides,
            size,
            build_time: started.elapsed(),
        })
    }

    /// Builds a space from an explicit list of feasible configurations (for example the
    /// configurations recorded in a brute-forced cache file). The result is one group;
    /// duplicates are dropped.
    pub fn from_configurations(
        params: Vec<Parameter>,
        configs: &[Configuration],
    ) -> Result<SearchSpace, SpaceError> {
        let started = Instant::now();
        check_unique_names(&params)?;
        let mut interner = Interner::default();
        let scalars: Vec<Vec<Scalar>> = params.iter().map(|p| p.scalars(&mut interner)).collect();
        if configs.is_empty() {
            return Err(SpaceError::Mismatch(
                "the list of configurations is empty".into(),
            ));
        }
        let mut data = Vec::with_capacity(configs.len() * params.len());
        for c in configs {
            if c.len() != params.len() || c.iter().zip(&params).any(|(&v, p)| v as usize >= p.len())
            {
                return Err(SpaceError::Mismatch(format!(
                    "configuration {c:?} does not fit the {} parameters",
                    params.len()
                )));
            }
            data.extend_from_slice(c);
        }
        let radix = params.iter().map(|p| p.len() as u32).collect();
        let group = Group::enumerated((0..params.len()).collect(), radix, data);
        let size = group.len();
        Ok(SearchSpace {
            params,
            constraints: Vec::new(),
            interner,
            scalars,
            groups: vec![group],
            group_constraints: vec![0],
            strides: vec![1],
            size,
            build_time: started.elapsed(),
        })
    }

    /// The parameters, in declaration order.
    pub fn params(&self) -> &[Parameter] {
        &self.params
    }

    /// The index of the parameter called `name`.
    pub fn param_index(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name() == name)
    }

    /// Number of parameters (the dimension of encodings).
    pub fn dims(&self) -> usize {
        self.params.len()
    }

    /// The constraints.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// The string interner the constraints were compiled with.
    pub fn interner(&self) -> &Interner {
        &self.interner
    }

    /// Number of feasible configurations.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Size of the Cartesian product of the domains (as a float: it may exceed `u64`).
    pub fn cartesian_size(&self) -> f64 {
        self.params.iter().map(|p| p.len() as f64).product()
    }

    /// `size / cartesian_size`.
    pub fn density(&self) -> f64 {
        self.size as f64 / self.cartesian_size()
    }

    /// How long construction took.
    pub fn build_time(&self) -> Duration {
        self.build_time
    }

    /// Bytes held by the enumerated groups and their indices.
    pub fn memory_bytes(&self) -> usize {
        self.groups.iter().map(Group::memory_bytes).sum::<usize>()
            + self
                .scalars
                .iter()
                .map(|s| s.len() * std::mem::size_of::<Scalar>())
                .sum::<usize>()
    }

    /// The independent groups of parameters.
    pub fn groups(&self) -> Vec<GroupInfo> {
        self.groups
            .iter()
            .zip(&self.group_constraints)
            .map(|(g, &constraints)| GroupInfo {
                params: g
                    .params
                    .iter()
                    .map(|&p| self.params[p].name().to_string())
                    .collect(),
                size: g.len(),
                cartesian_size: g.radix.iter().map(|&r| f64::from(r)).product(),
                constraints,
            })
            .collect()
    }

    /// The share of the combinations of each constraint's own parameters that it rejects, in
    /// declaration order.
    pub fn constraint_rejection(&self) -> Vec<f64> {
        self.constraints
            .iter()
            .map(|c| build::rejected_share(c, &self.scalars))
            .collect()
    }

    /// The configuration with rank `rank`.
    ///
    /// # Panics
    /// If `rank >= self.size()`.
    pub fn configuration(&self, rank: u64) -> Configuration {
        assert!(
            rank < self.size,
            "rank {rank} out of range for a space of {}",
            self.size
        );
        let mut out = vec![0u32; self.params.len()];
        self.write_configuration(rank, &mut out);
        out
    }

    /// Writes the configuration with rank `rank` into `out` (length `dims()`), without
    /// allocating.
    pub fn write_configuration(&self, rank: u64, out: &mut [u32]) {
        for (g, &stride) in self.groups.iter().zip(&self.strides) {
            g.write((rank / stride) % g.len(), out);
        }
    }

    /// The rank of `config`, or `None` if it is not feasible (or malformed).
    pub fn rank(&self, config: &[u32]) -> Option<u64> {
        if config.len() != self.params.len() {
            return None;
        }
        let mut rank = 0u64;
        for (g, &stride) in self.groups.iter().zip(&self.strides) {
            rank += g.rank_of(config)? * stride;
        }
        Some(rank)
    }

    /// Whether `config` satisfies every constraint (O(1) expected: one hash look-up per group).
    pub fn contains(&self, config: &[u32]) -> bool {
        config.len() == self.params.len() && self.groups.iter().all(|g| g.rank_of(config).is_some())
    }

    /// Whether `config` has the right length and every index is inside its domain (it may
    /// still violate constraints).
    pub fn is_in_bounds(&self, config: &[u32]) -> bool {
        config.len() == self.params.len()
            && config
                .iter()
                .zip(&self.params)
                .all(|(&v, p)| (v as usize) < p.len())
    }

    /// Evaluates the constraints directly on `config` (slower than [`contains`](Self::contains),
    /// for checking; out-of-bounds configurations are not satisfied).
    pub fn satisfies_constraints(&self, config: &[u32]) -> bool {
        if !self.is_in_bounds(config) {
            return false;
        }
        let assign = self.scalars(config);
        self.constraints.iter().all(|c| c.is_satisfied(&assign))
    }

    /// The constraints an in-bounds `config` breaks, in declaration order (to say why a
    /// configuration is not in the space).
    pub fn unsatisfied_constraints(&self, config: &[u32]) -> Vec<&Constraint> {
        if !self.is_in_bounds(config) {
            return Vec::new();
        }
        let assign = self.scalars(config);
        self.constraints
            .iter()
            .filter(|c| !c.is_satisfied(&assign))
            .collect()
    }

    /// The values of an in-bounds `config` as the constraint language sees them, for
    /// evaluating an [`Expression`] compiled with [`expression`](Self::expression).
    pub fn scalars(&self, config: &[u32]) -> Vec<Scalar> {
        config
            .iter()
            .enumerate()
            .map(|(p, &v)| self.scalars[p][v as usize])
            .collect()
    }

    /// Compiles an expression over this space's parameters (a grid divisor, a size, ...).
    /// String literals compare as in constraints.
    pub fn expression(&self, source: &str) -> Result<Expression, ExprError> {
        let mut interner = self.interner.clone();
        Expression::compile(source, &symbols(&self.params), &mut interner)
    }

    /// The values of `config`, one per parameter.
    pub fn values<'a>(&'a self, config: &[u32]) -> Vec<&'a Value> {
        config
            .iter()
            .zip(&self.params)
            .map(|(&v, p)| &p.values()[v as usize])
            .collect()
    }

    /// The configuration with the given values (one per parameter, in declaration order), if
    /// every value is in its domain. The result may still violate constraints.
    pub fn configuration_of(&self, values: &[Value]) -> Option<Configuration> {
        if values.len() != self.params.len() {
            return None;
        }
        values
            .iter()
            .zip(&self.params)
            .map(|(v, p)| p.index_of(v).map(|i| i as u32))
            .collect()
    }

    /// `name=value, ...` for logs and reports.
    pub fn describe(&self, config: &[u32]) -> String {
        self.values(config)
            .iter()
            .zip(&self.params)
            .map(|(v, p)| format!("{}={}", p.name(), p.display(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The configuration of the parameters' defaults, when every parameter has one (a
    /// parameter with a single value defaults to it).
    pub fn default_configuration(&self) -> Option<Configuration> {
        self.params
            .iter()
            .map(|p| {
                p.default_index()
                    .or((p.len() == 1).then_some(0))
                    .map(|i| i as u32)
            })
            .collect()
    }

    /// Every configuration in rank order (for brute force and tests; sizes are the caller's
    /// responsibility).
    pub fn iter(&self) -> impl Iterator<Item = Configuration> + '_ {
        (0..self.size).map(|r| self.configuration(r))
    }
}

fn symbols(params: &[Parameter]) -> Vec<Symbol> {
    params
        .iter()
        .map(|p| Symbol {
            name: p.name().to_string(),
            ty: p.expr_type(),
            items: match p.kind() {
                crate::ParamKind::Permutation { items } => items.clone(),
                _ => Vec::new(),
            },
        })
        .collect()
}

/// The symbols a constraint over `params` is compiled against.
pub fn constraint_symbols(params: &[Parameter]) -> Vec<Symbol> {
    symbols(params)
}

fn check_unique_names(params: &[Parameter]) -> Result<(), SpaceError> {
    for (i, p) in params.iter().enumerate() {
        if params[..i].iter().any(|q| q.name() == p.name()) {
            return Err(SpaceError::DuplicateParameter {
                name: p.name().to_string(),
                location: None,
            });
        }
    }
    if params.is_empty() {
        return Err(SpaceError::Mismatch(
            "a search space needs at least one parameter".into(),
        ));
    }
    Ok(())
}

fn cartesian_string(params: &[Parameter]) -> String {
    let exact = params
        .iter()
        .try_fold(1u128, |a, p| a.checked_mul(p.len() as u128));
    match exact {
        Some(n) => n.to_string(),
        None => format!(
            "{:.3e}",
            params.iter().map(|p| p.len() as f64).product::<f64>()
        ),
    }
}

#[cfg(test)]
mod tests;
