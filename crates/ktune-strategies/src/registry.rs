//! The registry: every strategy by name, with its options' documentation, and how a strategy
//! text (`name:key=value:...`, or a `[strategy]` table) is checked once into a
//! [`CheckedStrategy`] that builds the strategy as often as needed.
//!
//! The options are checked as linfa checks its parameters (`ParamGuard`): parsing and every
//! range and choice are checked in one place, each entry's `check`, which gives a
//! [`Factory`]; building from a factory cannot fail and parses nothing again.

use std::sync::Arc;

use ktune_core::Strategy;

use crate::{
    OptionDoc, Options, StrategyError, local_search, model_based, options_spec, parse_spec,
    population, portfolio, sampling,
};

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
    /// Checks options into a factory (unknown keys, values of the wrong type, out of range
    /// or not among the choices are errors naming the strategy and the option).
    pub check: fn(&Options) -> Result<Box<dyn Factory>, StrategyError>,
}

impl Entry {
    /// Checks `options` into a factory: each number in its documented range (the
    /// [`OptionDoc`]s' ranges, so that the documentation is what is enforced), then the
    /// entry's own `check` (parsing, choices, what depends on several options).
    pub fn checked(&self, options: &Options) -> Result<Box<dyn Factory>, StrategyError> {
        crate::options::check_ranges(self.name, self.options, options)?;
        (self.check)(options)
    }
}

/// A strategy's options, checked: it builds the strategy, which cannot fail and parses
/// nothing again. Its `Debug` form shows every option's checked value (defaults filled in).
pub trait Factory: Send + Sync + std::fmt::Debug {
    /// A new strategy with these options, in its initial state.
    fn build(&self) -> Box<dyn Strategy + Send>;
}

/// The factory of a strategy whose checked options are an `O`.
pub(crate) struct Built<O> {
    options: O,
    build: fn(&O) -> Box<dyn Strategy + Send>,
}

impl<O: std::fmt::Debug> std::fmt::Debug for Built<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.options.fmt(f)
    }
}

impl<O: std::fmt::Debug + Send + Sync> Factory for Built<O> {
    fn build(&self) -> Box<dyn Strategy + Send> {
        (self.build)(&self.options)
    }
}

/// The factory of `options` that passed their strategy's checks, building with `build`.
pub(crate) fn factory<O: std::fmt::Debug + Send + Sync + 'static>(
    options: O,
    build: fn(&O) -> Box<dyn Strategy + Send>,
) -> Box<dyn Factory> {
    Box::new(Built { options, build })
}

/// A strategy's options that check their own ranges once parsed and build the strategy:
/// what [`check`] needs to be an entry's `check`.
pub(crate) trait StrategyOptions:
    serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync + 'static
{
    /// The strategy's name, as its errors give it.
    const STRATEGY: &'static str;

    /// What the documented ranges cannot say (a range that depends on another option);
    /// the ranges are checked before, from the entry's [`OptionDoc`]s.
    fn check(&self) -> Result<(), StrategyError> {
        Ok(())
    }

    /// The strategy with these options, which passed [`StrategyOptions::check`].
    fn build(&self) -> Box<dyn Strategy + Send>;
}

/// `StrategyOptions` for options that need no check beyond their documented ranges and whose
/// strategy is made by `Strategy::checked(options)`; the strategy's name is the module's
/// `NAME`.
macro_rules! checked_by {
    ($options:ty => $strategy:ident) => {
        impl crate::registry::StrategyOptions for $options {
            const STRATEGY: &'static str = NAME;

            fn build(&self) -> Box<dyn ktune_core::Strategy + Send> {
                Box::new($strategy::checked(self.clone()))
            }
        }
    };
}
pub(crate) use checked_by;

/// The check of a strategy whose options are an `O`: parsed, checked, and made into the
/// factory that builds with [`StrategyOptions::build`].
pub(crate) fn check<O: StrategyOptions>(
    options: &Options,
) -> Result<Box<dyn Factory>, StrategyError> {
    let o: O = crate::parse(O::STRATEGY, options)?;
    o.check()?;
    Ok(factory(o, O::build))
}

/// The check of a strategy that takes no options (a key is an error naming it): its
/// factory builds `S::default()`.
pub(crate) fn check_none<S: Strategy + Default + Send + 'static>(
    options: &Options,
) -> Result<Box<dyn Factory>, StrategyError> {
    let name = S::default().name().to_owned();
    let none: NoOptions = crate::parse(&name, options)?;
    Ok(factory(none, |_| Box::new(S::default())))
}

/// What a strategy without options accepts: nothing.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoOptions {}

/// A strategy text (`name`, `name:key=value:...`, or a `[strategy]` table) checked once:
/// what the front ends resolve their arguments into and keep. Cloning it is cheap.
///
/// ```
/// use ktune_strategies::CheckedStrategy;
///
/// let ga: CheckedStrategy = "genetic_algorithm:popsize=30".parse().unwrap();
/// assert_eq!(ga.name(), "genetic_algorithm");
/// assert_eq!(ga.canonical(), "genetic_algorithm:popsize=30");
/// let (a, b) = (ga.build(), ga.build());
/// assert_eq!(a.name(), b.name());
/// // Checked once: a wrong option is refused here, never when building.
/// let e = "bayes_opt:kernel=matern42".parse::<CheckedStrategy>().unwrap_err();
/// assert!(e.to_string().contains("option `kernel`"), "{e}");
/// ```
#[derive(Clone)]
pub struct CheckedStrategy {
    entry: &'static Entry,
    factory: Arc<dyn Factory>,
    canonical: String,
    options: Options,
}

impl CheckedStrategy {
    /// The strategy called `name` (or an alias) with `options`.
    pub fn new(name: &str, options: &Options) -> Result<CheckedStrategy, StrategyError> {
        let entry = entry(name)?;
        let factory = entry.checked(options)?;
        let canonical = if options.is_empty() {
            entry.name.to_string()
        } else {
            format!("{}:{}", entry.name, options_spec(options))
        };
        Ok(CheckedStrategy {
            entry,
            factory: Arc::from(factory),
            canonical,
            options: options.clone(),
        })
    }

    /// From the command-line form, `name` or `name:key=value:key=value` (values read as
    /// JSON where they parse). Its canonical form keeps the options as given.
    pub fn parse(text: &str) -> Result<CheckedStrategy, StrategyError> {
        let (name, options) = parse_spec(text);
        let mut checked = CheckedStrategy::new(&name, &options)?;
        checked.canonical = std::iter::once(checked.entry.name.to_string())
            .chain(text.split(':').skip(1).map(str::to_string))
            .collect::<Vec<_>>()
            .join(":");
        Ok(checked)
    }

    /// From a `[strategy]` table of a `ktune.toml`: `name` and the options, e.g.
    /// `{ name = "genetic_algorithm", popsize = 30 }`. Its canonical form has the keys sorted.
    pub fn from_table(table: &Options) -> Result<CheckedStrategy, StrategyError> {
        let name =
            table
                .get("name")
                .and_then(|v| v.as_str())
                .ok_or_else(|| StrategyError::Option {
                    strategy: "?".into(),
                    message: "the [strategy] table needs a `name`".into(),
                })?;
        let mut options = table.clone();
        options.remove("name");
        CheckedStrategy::new(name, &options)
    }

    /// The default strategy, `auto` (the portfolio measured best on the benchmark spaces).
    pub fn default_strategy() -> CheckedStrategy {
        CheckedStrategy::new("auto", &Options::new())
            .unwrap_or_else(|e| unreachable!("auto with its defaults: {e}"))
    }

    /// The strategy's registered name.
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// Its registry entry.
    pub fn entry(&self) -> &'static Entry {
        self.entry
    }

    /// The options as given (without `name`).
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The canonical command-line form (`name:key=value...`), as stored with results.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// A new strategy with these options.
    pub fn build(&self) -> Box<dyn Strategy + Send> {
        self.factory.build()
    }

    /// The checked options, every one with its value (defaults filled in), as `Debug` shows
    /// them.
    pub fn checked_options(&self) -> String {
        format!("{:?}", self.factory)
    }
}

impl std::fmt::Debug for CheckedStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedStrategy")
            .field("name", &self.entry.name)
            .field("options", &self.factory)
            .finish()
    }
}

impl std::str::FromStr for CheckedStrategy {
    type Err = StrategyError;
    fn from_str(text: &str) -> Result<CheckedStrategy, StrategyError> {
        CheckedStrategy::parse(text)
    }
}

impl std::fmt::Display for CheckedStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.canonical)
    }
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

impl Tunable {
    /// Option `name`, tried at `values`.
    pub const fn new(name: &'static str, values: &'static [&'static str]) -> Tunable {
        Tunable { name, values }
    }
}

/// Every strategy, in the order they are listed.
pub const REGISTRY: &[Entry] = &[
    sampling::random::ENTRY,
    sampling::brute_force::ENTRY,
    sampling::prior_rank::ENTRY,
    local_search::simulated_annealing::ENTRY,
    local_search::mls::ENTRY,
    local_search::greedy_ils::ENTRY,
    population::differential_evolution::ENTRY,
    population::pso::ENTRY,
    population::firefly::ENTRY,
    population::genetic_algorithm::ENTRY,
    population::nsga2::ENTRY,
    model_based::bayes_opt::ENTRY,
    model_based::baco::ENTRY,
    model_based::tpe::ENTRY,
    portfolio::auto::ENTRY,
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

/// Creates the strategy called `name` with `options` (see [`CheckedStrategy::new`]).
pub fn create(name: &str, options: &Options) -> Result<Box<dyn Strategy + Send>, StrategyError> {
    CheckedStrategy::new(name, options).map(|c| c.build())
}

/// Creates a strategy from its command-line form, `name` or `name:key=value:key=value`;
/// returns the canonical form (the name as registered, then the options as given) with it.
/// See [`CheckedStrategy::parse`], which keeps the checked options to build again.
pub fn create_spec(spec: &str) -> Result<(String, Box<dyn Strategy + Send>), StrategyError> {
    let c = CheckedStrategy::parse(spec)?;
    Ok((c.canonical().to_string(), c.build()))
}

/// Creates a strategy from the `[strategy]` table of a `ktune.toml` (see
/// [`CheckedStrategy::from_table`]); returns the canonical command-line form with it.
pub fn create_from_table(
    table: &Options,
) -> Result<(String, Box<dyn Strategy + Send>), StrategyError> {
    let c = CheckedStrategy::from_table(table)?;
    Ok((c.canonical().to_string(), c.build()))
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
            out.push_str("\n| option | default | range | meaning |\n|---|---|---|---|\n");
            for o in e.options {
                let range = o.range.map(|r| r.to_string()).unwrap_or_default();
                out.push_str(&format!(
                    "| `{}` | `{}` | {range} | {} |\n",
                    o.name, o.default, o.doc
                ));
            }
        }
    }
    out
}
