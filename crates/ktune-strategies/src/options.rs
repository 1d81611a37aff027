//! Strategy hyperparameters: one serde struct per strategy, filled from a key/value map that
//! comes from `ktune.toml` (`[strategy]` table), the command line (`name:key=value`) or code.
//! Unknown keys and out-of-range values are errors that name the strategy and the option.

use serde::de::DeserializeOwned;

/// Option values by name, as they come from TOML, JSON or the command line.
pub type Options = serde_json::Map<String, serde_json::Value>;

/// The documentation of one option: what the registry prints and `docs/strategies.md` holds,
/// with the range a number must lie in, which the registry checks (so that what users read
/// is what is enforced).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OptionDoc {
    /// The key.
    pub name: &'static str,
    /// The default, as it would be written in `ktune.toml`.
    pub default: &'static str,
    /// What it does.
    pub doc: &'static str,
    /// The numbers it accepts, where it takes a number (a value that is not a number, as
    /// `"validated"` for `alignment`, is left to the strategy's own check).
    pub range: Option<Range>,
}

impl OptionDoc {
    /// Option `name` with its default and documentation, and no range.
    pub const fn new(name: &'static str, default: &'static str, doc: &'static str) -> OptionDoc {
        OptionDoc {
            name,
            default,
            doc,
            range: None,
        }
    }

    /// Takes whole numbers from `lo` to `hi`.
    pub const fn count(self, lo: u64, hi: u64) -> OptionDoc {
        self.within(Range::Count(lo, hi))
    }

    /// Takes numbers from `lo` to `hi`.
    pub const fn real(self, lo: f64, hi: f64) -> OptionDoc {
        self.within(Range::Real(lo, hi))
    }

    /// Takes numbers greater than `lo`, at most `hi`.
    pub const fn above(self, lo: f64, hi: f64) -> OptionDoc {
        self.within(Range::Above(lo, hi))
    }

    const fn within(self, range: Range) -> OptionDoc {
        OptionDoc {
            range: Some(range),
            ..self
        }
    }
}

/// The numbers an option accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// Whole numbers from the first to the second.
    Count(u64, u64),
    /// Numbers from the first to the second.
    Real(f64, f64),
    /// Numbers greater than the first, at most the second (which may be infinite).
    Above(f64, f64),
}

impl Range {
    /// Whether `value` is in the range: `Ok` for a value that is no number of the range's
    /// kind (a string, a negative or fractional count), which the option's parsing refuses
    /// or reads otherwise; else the message naming the range.
    pub fn check(self, value: &serde_json::Value) -> Result<(), String> {
        let inside = match self {
            Range::Count(lo, hi) => value.as_u64().map(|v| (lo..=hi).contains(&v)),
            Range::Real(lo, hi) => value.as_f64().map(|v| lo <= v && v <= hi),
            Range::Above(lo, hi) => value.as_f64().map(|v| lo < v && v <= hi),
        };
        if inside != Some(false) {
            return Ok(());
        }
        let must = match self {
            Range::Count(lo, hi) => format!("between {lo} and {hi}"),
            Range::Real(lo, hi) => format!("between {lo} and {hi}"),
            Range::Above(lo, hi) if hi.is_infinite() => format!("greater than {lo}"),
            Range::Above(lo, hi) => format!("greater than {lo} and at most {hi}"),
        };
        Err(format!("must be {must}, not {value}"))
    }
}

/// As the documentation's tables write it: `1 to 100`, `above 0`, `above 0 to 1`.
impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Range::Count(lo, hi) => write!(f, "{lo} to {hi}"),
            Range::Real(lo, hi) => write!(f, "{lo} to {hi}"),
            Range::Above(lo, hi) if hi.is_infinite() => write!(f, "above {lo}"),
            Range::Above(lo, hi) => write!(f, "above {lo} to {hi}"),
        }
    }
}

/// Checks every option in `options` that `docs` gives a range against it: the error names
/// the strategy, the option and the range.
pub(crate) fn check_ranges(
    strategy: &str,
    docs: &[OptionDoc],
    options: &Options,
) -> Result<(), StrategyError> {
    for (key, value) in options {
        let range = docs.iter().find(|d| d.name == key).and_then(|d| d.range);
        if let Some(Err(message)) = range.map(|r| r.check(value)) {
            return Err(StrategyError::Invalid {
                strategy: strategy.to_string(),
                option: key.clone(),
                message,
            });
        }
    }
    Ok(())
}

/// A strategy could not be created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StrategyError {
    /// No strategy has this name.
    #[error("unknown strategy `{name}`; available: {available}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names that exist.
        available: String,
    },
    /// An option is unknown or has the wrong type.
    #[error("strategy `{strategy}`: {message}")]
    Option {
        /// The strategy.
        strategy: String,
        /// What is wrong (serde's message names the key and the expected ones).
        message: String,
    },
    /// An option value is out of its range.
    #[error("strategy `{strategy}`: option `{option}` {message}")]
    Invalid {
        /// The strategy.
        strategy: String,
        /// The option.
        option: String,
        /// Why.
        message: String,
    },
}

/// Fills a strategy's options struct (which has `#[serde(default, deny_unknown_fields)]`)
/// from the map.
pub fn parse<T: DeserializeOwned>(strategy: &str, options: &Options) -> Result<T, StrategyError> {
    let fill = |o: Options| serde_json::from_value::<T>(serde_json::Value::Object(o));
    fill(options.clone()).map_err(|e| {
        let message = e.to_string();
        // serde names an unknown key, but not the key whose value has the wrong type
        // (`invalid value: integer `-1`, expected usize`). Every options struct has a
        // default for each field, so the key that fails on its own is the one.
        let wrong = if message.starts_with("unknown field") {
            None
        } else {
            options
                .iter()
                .find(|&(k, v)| fill(Options::from_iter([(k.clone(), v.clone())])).is_err())
        };
        match wrong {
            Some((option, value)) => StrategyError::Invalid {
                strategy: strategy.to_string(),
                option: option.clone(),
                message: match value {
                    // `auto:kick_size`, a key alone, reads as `true`.
                    serde_json::Value::Bool(true) => {
                        format!("needs a value (`{option}=...`), not true: {message}")
                    }
                    // `1e400` is not a JSON number, so it arrived as text.
                    serde_json::Value::String(s)
                        if s.parse::<f64>().is_ok_and(|x| !x.is_finite()) =>
                    {
                        format!("cannot be {s}: not a finite number")
                    }
                    _ => format!("cannot be {value}: {message}"),
                },
            },
            None => StrategyError::Option {
                strategy: strategy.to_string(),
                message,
            },
        }
    })
}

/// Checks `lo <= value <= hi` for option `option` of `strategy`.
pub fn check_range<T: PartialOrd + std::fmt::Display>(
    strategy: &str,
    option: &str,
    value: T,
    lo: T,
    hi: T,
) -> Result<(), StrategyError> {
    // Written so that NaN (which compares false with everything) is out of range too.
    if !(value >= lo && value <= hi) {
        return Err(StrategyError::Invalid {
            strategy: strategy.to_string(),
            option: option.to_string(),
            message: format!("must be between {lo} and {hi}, not {value}"),
        });
    }
    Ok(())
}

/// Parses `name` or `name:key=value:key=value` (the command-line form) into a name and
/// options. Values are read as JSON when they parse (numbers, booleans), else as strings.
pub fn parse_spec(spec: &str) -> (String, Options) {
    let mut parts = spec.split(':');
    let name = parts.next().unwrap_or("").trim().to_string();
    let mut options = Options::new();
    for kv in parts {
        let (k, v) = kv.split_once('=').unwrap_or((kv, "true"));
        options.insert(k.trim().to_string(), parse_value(v));
    }
    (name, options)
}

/// An option value as written on the command line: JSON when it parses (numbers, booleans),
/// else the text as a string.
pub fn parse_value(text: &str) -> serde_json::Value {
    let v = text.trim();
    serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.to_string()))
}

/// Options in their command-line form, `key=value:key=value`, keys sorted (strings bare).
pub fn options_spec(options: &Options) -> String {
    let mut keys: Vec<&String> = options.keys().collect();
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let v = &options[k];
            format!(
                "{k}={}",
                v.as_str().map_or_else(|| v.to_string(), str::to_string)
            )
        })
        .collect::<Vec<_>>()
        .join(":")
}

/// An option whose value is one of a few names, spelled in any case and with `-` or `_`
/// alike (`"Strictly_Adjacent"` is `"strictly-adjacent"`): read straight into its enum when
/// the options are parsed, so a typo is an error naming the choices, never a default.
pub(crate) trait Choice: Sized + Copy + 'static {
    /// Every name, as the documentation writes it, and its value.
    const NAMES: &'static [(&'static str, Self)];

    /// The value called `name`, or the error message naming the choices.
    fn from_name(name: &str) -> Result<Self, String> {
        let norm = |s: &str| s.to_ascii_lowercase().replace('_', "-");
        Self::NAMES
            .iter()
            .find(|(n, _)| norm(n) == norm(name))
            .map(|&(_, v)| v)
            .ok_or_else(|| {
                let names: Vec<String> =
                    Self::NAMES.iter().map(|(n, _)| format!("{n:?}")).collect();
                format!("must be one of {}", names.join(", "))
            })
    }
}

/// serde's `deserialize_with` for an option that is a [`Choice`].
pub(crate) fn choice<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Choice,
{
    use serde::Deserialize;
    let name = String::deserialize(d)?;
    T::from_name(&name).map_err(serde::de::Error::custom)
}

impl Choice for ktune_space::Neighbourhood {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("Hamming", ktune_space::Neighbourhood::Hamming),
        ("adjacent", ktune_space::Neighbourhood::Adjacent),
        (
            "strictly-adjacent",
            ktune_space::Neighbourhood::StrictlyAdjacent,
        ),
    ];
}

impl Choice for ktune_model::KernelKind {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("matern32", ktune_model::KernelKind::Matern32),
        ("matern52", ktune_model::KernelKind::Matern52),
        ("rbf", ktune_model::KernelKind::Rbf),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(default, deny_unknown_fields)]
    struct Opts {
        popsize: usize,
        method: String,
    }

    impl Default for Opts {
        fn default() -> Self {
            Opts {
                popsize: 20,
                method: "best1bin".into(),
            }
        }
    }

    #[test]
    fn ranges_check_numbers_of_their_kind_and_say_themselves() {
        use serde_json::json;
        let count = Range::Count(1, 10);
        assert!(count.check(&json!(1)).is_ok() && count.check(&json!(10)).is_ok());
        assert_eq!(
            count.check(&json!(11)).unwrap_err(),
            "must be between 1 and 10, not 11"
        );
        // Not a count: left to the option's parsing, which names the type.
        for v in [json!(-1), json!(2.5), json!("many")] {
            assert!(count.check(&v).is_ok(), "{v}");
        }
        let above = Range::Above(0.0, 1.0);
        assert!(above.check(&json!(0)).is_err() && above.check(&json!(1.0)).is_ok());
        assert!(Range::Real(0.0, 1.0).check(&json!(0)).is_ok());
        let open = Range::Above(0.0, f64::INFINITY);
        assert_eq!(
            open.check(&json!(-2)).unwrap_err(),
            "must be greater than 0, not -2"
        );
        let shown: Vec<String> = [count, above, open, Range::Real(1e-6, 1e6)]
            .iter()
            .map(Range::to_string)
            .collect();
        assert_eq!(
            shown,
            ["1 to 10", "above 0 to 1", "above 0", "0.000001 to 1000000"]
        );
    }

    #[test]
    fn a_key_without_its_value_and_an_overflowing_number_are_named_as_such() {
        let said = |spec: &str| {
            let (_, o) = parse_spec(spec);
            parse::<Opts>("de", &o).unwrap_err().to_string()
        };
        let e = said("de:popsize");
        assert!(e.contains("`popsize` needs a value (`popsize=...`)"), "{e}");
        let e = said("de:popsize=1e400");
        assert!(e.contains("cannot be 1e400: not a finite number"), "{e}");
        let e = said("de:popsize=many");
        assert!(e.contains("cannot be \"many\""), "{e}");
    }

    #[test]
    fn parses_command_line_specs_and_options() {
        let (name, o) = parse_spec("de:popsize=8:method=rand1bin");
        assert_eq!(name, "de");
        let opts: Opts = parse("de", &o).unwrap();
        assert_eq!(
            opts,
            Opts {
                popsize: 8,
                method: "rand1bin".into()
            }
        );
        let (_, o) = parse_spec("de");
        assert_eq!(parse::<Opts>("de", &o).unwrap(), Opts::default());
        let (_, o) = parse_spec("de:popsise=8");
        let e = parse::<Opts>("de", &o).unwrap_err().to_string();
        ktune_core::testing::assert_mentions(&e, &["strategy `de`", "popsise", "popsize"]);
        // A value of the wrong type names its option, whichever of several it is.
        for spec in ["de:popsize=many:method=x", "de:method=x:popsize=-1"] {
            let (_, o) = parse_spec(spec);
            let e = parse::<Opts>("de", &o).unwrap_err().to_string();
            assert!(
                e.contains("strategy `de`: option `popsize` cannot be "),
                "{e}"
            );
        }
        let (_, o) = parse_spec("de:method=3");
        let e = parse::<Opts>("de", &o).unwrap_err().to_string();
        assert!(e.contains("option `method` cannot be 3"), "{e}");
        assert!(
            check_range("de", "F", 2.5, 0.0, 2.0)
                .unwrap_err()
                .to_string()
                .contains("option `F` must be between 0 and 2, not 2.5")
        );
    }
}
