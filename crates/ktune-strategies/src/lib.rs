//! Optimisation strategies, one file each, all behind [`ktune_core::Strategy`], and a registry
//! that creates them by name with their options.
//!
//! Every strategy is constraint-aware (it moves through valid configurations using the
//! [`SearchSpace`](ktune_space::SearchSpace) API) unless its `constraint_aware` option is
//! switched off for an ablation. All options, with their defaults, are listed by
//! `ktune strategies` and in `docs/strategies.md` (generated from [`REGISTRY`]).
//!
//! ```
//! use ktune_strategies::{Options, create, create_spec};
//!
//! let s = create("random", &Options::new()).unwrap();
//! assert_eq!(s.name(), "random");
//! assert!(create("annealing-ish", &Options::new()).is_err());
//! let (_, ga) = create_spec("genetic_algorithm:popsize=30:method=uniform").unwrap();
//! assert_eq!(ga.name(), "genetic_algorithm");
//! ```
#![deny(missing_docs)]

mod acquisition_search;
mod auto;
mod baco;
pub mod bandit;
mod bayes_opt;
mod brute_force;
mod differential_evolution;
pub mod encoding;
mod firefly;
mod fresh;
mod genetic_algorithm;
mod greedy_ils;
mod mls;
mod options;
mod pso;
mod random;
mod simulated_annealing;
pub mod surrogate;
mod tpe;
pub mod transform;

pub use auto::{Auto, AutoOptions, ClimbGuide, Model as AutoModel, Schedule as AutoSchedule};
pub use baco::{Baco, BacoOptions};
pub use bayes_opt::{
    BayesianOptimization, BoOptions, Exploration, ExplorationScale, Method, Transform,
};
pub use brute_force::BruteForce;
pub use ktune_model::acquisition::Acquisition;
pub use options::{
    OptionDoc, Options, StrategyError, check_range, options_spec, parse, parse_spec, parse_value,
};
pub use random::RandomSampling;

use ktune_core::Strategy;

/// A strategy the registry can create.
#[derive(Clone, Copy)]
pub struct Entry {
    /// The name used on the command line, in specs and in traces.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// One line on what it does.
    pub about: &'static str,
    /// Its options and their defaults.
    pub options: &'static [OptionDoc],
    /// The options `ktune bench tune-strategy` searches by default, each with the values it
    /// tries (the first one need not be the default).
    pub tunable: &'static [Tunable],
    /// Creates it from options (unknown keys and out-of-range values are errors).
    pub create: fn(&Options) -> Result<Box<dyn Strategy + Send>, StrategyError>,
}

/// An option that `ktune bench tune-strategy` searches, and the values it tries (JSON, as in
/// `name:key=value`).
#[derive(Clone, Copy, Debug)]
pub struct Tunable {
    /// The option.
    pub name: &'static str,
    /// Its values, as JSON texts.
    pub values: &'static [&'static str],
}

/// Every strategy, in the order they are listed.
pub const REGISTRY: &[Entry] = &[
    random::ENTRY,
    brute_force::ENTRY,
    simulated_annealing::ENTRY,
    mls::ENTRY,
    greedy_ils::ENTRY,
    differential_evolution::ENTRY,
    pso::ENTRY,
    firefly::ENTRY,
    genetic_algorithm::ENTRY,
    bayes_opt::ENTRY,
    baco::ENTRY,
    tpe::ENTRY,
    auto::ENTRY,
];

/// The registry entry called `name` (or one of its aliases).
pub fn entry(name: &str) -> Result<&'static Entry, StrategyError> {
    REGISTRY
        .iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
        .ok_or_else(|| StrategyError::Unknown {
            name: name.to_string(),
            available: REGISTRY
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Creates the strategy called `name` with `options`.
pub fn create(name: &str, options: &Options) -> Result<Box<dyn Strategy + Send>, StrategyError> {
    (entry(name)?.create)(options)
}

/// Creates a strategy from its command-line form, `name` or `name:key=value:key=value`;
/// returns the canonical form (the name as registered, then the options as given) with it.
pub fn create_spec(spec: &str) -> Result<(String, Box<dyn Strategy + Send>), StrategyError> {
    let (name, options) = parse_spec(spec);
    let e = entry(&name)?;
    let strategy = (e.create)(&options)?;
    let canonical = std::iter::once(e.name.to_string())
        .chain(spec.split(':').skip(1).map(str::to_string))
        .collect::<Vec<_>>()
        .join(":");
    Ok((canonical, strategy))
}

/// Creates a strategy from the `[strategy]` table of a `ktune.toml`: `name` and the options,
/// e.g. `{ name = "genetic_algorithm", popsize = 30 }`. Returns the canonical command-line form
/// (`name:key=value...`, keys sorted) with it.
pub fn create_from_table(
    table: &Options,
) -> Result<(String, Box<dyn Strategy + Send>), StrategyError> {
    let name = table
        .get("name")
        .and_then(|v| v.as_str())
        .ok_or_else(|| StrategyError::Option {
            strategy: "?".into(),
            message: "the [strategy] table needs a `name`".into(),
        })?;
    let e = entry(name)?;
    let mut options = table.clone();
    options.remove("name");
    let strategy = (e.create)(&options)?;
    let canonical = if options.is_empty() {
        e.name.to_string()
    } else {
        format!("{}:{}", e.name, options_spec(&options))
    };
    Ok((canonical, strategy))
}

/// The Markdown documentation of every strategy and option (`docs/strategies.md`).
pub fn markdown() -> String {
    let mut out = String::from(
        "# Strategies\n\nGenerated from the strategy registry (`ktune strategies` prints the same). Options are set in\n`ktune.toml` under `[strategy]` or on the command line as `name:key=value:key=value`.\n",
    );
    for e in REGISTRY {
        out.push_str(&format!("\n## `{}`\n\n{}\n", e.name, e.about));
        if !e.aliases.is_empty() {
            out.push_str(&format!(
                "\nAlso called: {}.\n",
                e.aliases
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !e.options.is_empty() {
            out.push_str("\n| option | default | meaning |\n|---|---|---|\n");
            for o in e.options {
                out.push_str(&format!("| `{}` | `{}` | {} |\n", o.name, o.default, o.doc));
            }
        }
    }
    out
}

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod testkit;
