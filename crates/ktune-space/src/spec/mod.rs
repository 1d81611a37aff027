//! Problem specs: where parameters and constraints come from.
//!
//! Three formats are read into one [`SpaceSpec`]:
//! - the native `ktune.toml` ([`SpaceSpec::from_toml_str`]), whose other sections (objective,
//!   runner, strategy, budget, ...) belong to the crates that use them;
//! - T1 JSON problem files of the auto-tuning community ([`SpaceSpec::from_t1_str`]), with
//!   `Values` written as Python list expressions;
//! - Kernel Tuner cache files, `.json` or `.json.gz` ([`SpaceSpec::from_cache_str`]): the
//!   `tune_params` block, and the recorded configurations as the feasible set.
//!
//! [`SpaceSpec::build`] compiles the constraints and builds the [`SearchSpace`]; an error in a
//! constraint points at the file, line and column of the offending token.
//!
//! # Example
//! ```
//! use ktune_space::spec::SpaceSpec;
//!
//! let spec = SpaceSpec::from_toml_str(r#"
//! constraints = ["block_size_x * block_size_y <= 1024"]
//!
//! [[parameter]]
//! name = "block_size_x"
//! values = [32, 64, 128, 256, 512, 1024]
//!
//! [[parameter]]
//! name = "block_size_y"
//! values = "[2**i for i in range(6)]"
//! "#, "ktune.toml")?;
//! let space = spec.build()?;
//! assert_eq!(space.size(), 6 + 5 + 4 + 3 + 2 + 1);
//! # Ok::<(), ktune_space::SpaceError>(())
//! ```

mod cache;
pub use cache::{CacheData, read_cache, read_cache_file};
mod native;
mod t1;

use std::path::Path;
use std::sync::Arc;

use crate::error::{Location, SpaceError};
use crate::expr::{Constraint, Interner, Literal};
use crate::param::{self, ParamKind, Parameter, Value};
use crate::space::{Configuration, SearchSpace, constraint_symbols};

/// The format a spec was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecFormat {
    /// Native `ktune.toml`.
    Toml,
    /// T1 JSON problem file.
    T1,
    /// Kernel Tuner cache file.
    Cache,
}

/// Parameters and constraints, with where each constraint came from.
#[derive(Clone, Debug)]
pub struct SpaceSpec {
    /// The problem's name, when the file gives one.
    pub name: Option<String>,
    /// The format it was read from.
    pub format: SpecFormat,
    /// The parameters, in order.
    pub parameters: Vec<Parameter>,
    /// The constraint expressions.
    pub constraints: Vec<ConstraintSource>,
    /// The feasible configurations, when the file lists them (cache files).
    pub configurations: Option<Vec<Configuration>>,
    /// Things worth telling the user that do not stop the build (an ignored default, ...).
    pub warnings: Vec<String>,
}

/// One constraint expression and where it was written.
#[derive(Clone, Debug)]
pub struct ConstraintSource {
    /// The expression.
    pub text: String,
    /// `constraint 3`, `Conditions[2]`, ...
    pub context: String,
    origin: Option<Origin>,
}

/// Where an expression sits inside its file, to turn spans in the expression into file
/// locations.
#[derive(Clone, Debug)]
struct Origin {
    file: Arc<str>,
    text: Arc<str>,
    /// Byte offset of the expression's first character in `text`.
    start: usize,
    /// Whether the expression appears verbatim at `start` (no escapes), so spans map exactly.
    exact: bool,
}

impl ConstraintSource {
    /// A constraint with no file position.
    pub fn new(text: impl Into<String>, context: impl Into<String>) -> ConstraintSource {
        ConstraintSource {
            text: text.into(),
            context: context.into(),
            origin: None,
        }
    }

    /// The file location of the byte range `span` of the expression.
    pub fn location(&self, span: std::ops::Range<usize>) -> Option<Location> {
        self.origin.as_ref().map(|o| o.locate(span))
    }
}

/// The largest `ktune.toml` read: a spec is a few kilobytes, and a name that is not a file
/// (`/dev/zero`, a pipe that never ends) must not fill the memory.
pub const MAX_SPEC_BYTES: u64 = 16 << 20;

/// The largest uncompressed T1 or cache file read (the brute-forced caches are tens of MB).
const MAX_JSON_BYTES: u64 = 1 << 30;

/// The text of the file at `path`, refused past `limit` bytes.
///
/// # Errors
/// What the OS says, invalid UTF-8, or a file larger than `limit` (`InvalidData`).
pub fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {} MiB: not a spec", limit >> 20),
        ));
    }
    Ok(text)
}

impl SpaceSpec {
    /// Reads a spec file, choosing the format from the name and content: `.toml` is native,
    /// `.json.gz` is a cache file, and `.json` is a T1 file when it has a
    /// `ConfigurationSpace`, a cache file when it has `tune_params`.
    pub fn from_path(path: impl AsRef<Path>) -> Result<SpaceSpec, SpaceError> {
        let path = path.as_ref();
        let io = |source| SpaceError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = path.display().to_string();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".gz") {
            let data = read_cache_file(path)?;
            return Ok(SpaceSpec::from_cache_data(data));
        }
        if name.ends_with(".toml") {
            let text = read_text(path, MAX_SPEC_BYTES).map_err(io)?;
            return SpaceSpec::from_toml_str(&text, &file);
        }
        if name.ends_with(".json") {
            let text = read_text(path, MAX_JSON_BYTES).map_err(io)?;
            // Peek at the top-level keys without committing to a format.
            if text.contains("\"ConfigurationSpace\"") {
                return SpaceSpec::from_t1_str(&text, &file);
            }
            if text.contains("\"tune_params\"") {
                return SpaceSpec::from_cache_str(&text, &file);
            }
            return Err(SpaceError::Spec {
                message: format!(
                    "`{file}` is neither a T1 problem file (no `ConfigurationSpace`) nor a Kernel Tuner cache file (no `tune_params`)"
                ),
                location: None,
            });
        }
        Err(SpaceError::Spec {
            message: format!(
                "cannot tell the format of `{file}`: expected a `.toml`, `.json` or `.json.gz` file"
            ),
            location: None,
        })
    }

    /// Reads a native `ktune.toml`.
    pub fn from_toml_str(text: &str, file: &str) -> Result<SpaceSpec, SpaceError> {
        native::parse(text, file)
    }

    /// Reads a native `ktune.toml` and returns its top-level table with it, for the sections
    /// other than the search space (`ktune_problem` reads them from it: the text is parsed
    /// once).
    pub fn from_toml_document(
        text: &str,
        file: &str,
    ) -> Result<(SpaceSpec, toml::Table), SpaceError> {
        native::parse_document(text, file)
    }

    /// Reads a T1 JSON problem file.
    pub fn from_t1_str(text: &str, file: &str) -> Result<SpaceSpec, SpaceError> {
        t1::parse(text, file)
    }

    /// Reads a Kernel Tuner cache file (already decompressed).
    pub fn from_cache_str(text: &str, file: &str) -> Result<SpaceSpec, SpaceError> {
        cache::parse(text, file)
    }

    /// The spec of a cache file already read.
    pub fn from_cache_data(data: CacheData) -> SpaceSpec {
        SpaceSpec {
            name: data.kernel_name,
            format: SpecFormat::Cache,
            parameters: data.parameters,
            constraints: Vec::new(),
            configurations: (!data.configurations.is_empty()).then_some(data.configurations),
            warnings: data.warnings,
        }
    }

    /// Compiles the constraints and builds the search space. For a cache file the space is
    /// exactly the recorded configurations.
    pub fn build(&self) -> Result<SearchSpace, SpaceError> {
        self.build_limited(crate::DEFAULT_MAX_CHECKS)
    }

    /// [`build`](Self::build), refusing a group whose enumeration would need more than
    /// `max_checks` constraint checks ([`SpaceError::TooMuchWork`]).
    pub fn build_limited(&self, max_checks: f64) -> Result<SearchSpace, SpaceError> {
        self.build_observed(max_checks, &crate::BuildProgress::new())
    }

    /// [`build_limited`](Self::build_limited), reporting to `progress` and stopping with
    /// [`SpaceError::Interrupted`] when it is cancelled (from another thread).
    pub fn build_observed(
        &self,
        max_checks: f64,
        progress: &crate::BuildProgress,
    ) -> Result<SearchSpace, SpaceError> {
        if let Some(configs) = &self.configurations {
            return SearchSpace::from_configurations(self.parameters.clone(), configs);
        }
        let (constraints, interner) = self.compile()?;
        SearchSpace::with_constraints_observed(
            self.parameters.clone(),
            constraints,
            interner,
            max_checks,
            progress,
        )
    }

    /// Compiles the constraints against the parameters.
    pub fn compile(&self) -> Result<(Vec<Constraint>, Interner), SpaceError> {
        let symbols = constraint_symbols(&self.parameters);
        let mut interner = Interner::default();
        // Categorical values first, so their ids do not depend on the constraints.
        for p in &self.parameters {
            p.scalars(&mut interner);
        }
        let mut out = Vec::with_capacity(self.constraints.len());
        for c in &self.constraints {
            let compiled =
                Constraint::compile(&c.text, &symbols, &mut interner).map_err(|error| {
                    SpaceError::Expr {
                        context: format!("error in {}", c.context),
                        location: c.location(error.span.clone()).map(Box::new),
                        expression: c.text.clone(),
                        error: Box::new(error),
                    }
                })?;
            out.push(compiled);
        }
        Ok((out, interner))
    }
}

impl Origin {
    /// The file location of the byte range `span` of the expression.
    fn locate(&self, span: std::ops::Range<usize>) -> Location {
        let span = if self.exact {
            self.start + span.start..self.start + span.end
        } else {
            self.start..self.start + 1
        };
        Location::from_span(self.file.as_ref(), &self.text, span)
    }

    /// The origin of a string literal whose quoted form starts at byte `quote` of `text`;
    /// exact when the raw text between the quotes equals the value.
    fn of_literal(file: &Arc<str>, text: &Arc<str>, quote: usize, value: &str) -> Origin {
        let start = (quote + 1).min(text.len());
        let exact = text.get(start..start + value.len()) == Some(value);
        Origin {
            file: file.clone(),
            text: text.clone(),
            start: if exact { start } else { quote.min(text.len()) },
            exact,
        }
    }
}

/// How a parameter's values were written, before they are turned into a domain.
#[derive(Clone, Debug)]
pub(crate) enum RawValues {
    List(Vec<Value>),
    Expr(String),
    Range {
        start: Value,
        stop: Value,
        step: Option<Value>,
        factor: Option<f64>,
    },
    None,
}

/// A parameter as written in any of the formats.
#[derive(Clone, Debug)]
pub(crate) struct RawParam {
    pub name: String,
    pub kind: Option<String>,
    pub values: RawValues,
    pub items: Option<Vec<String>>,
    pub log: bool,
    pub default: Option<Value>,
}

pub(crate) fn literal_value(l: Literal) -> Value {
    match l {
        Literal::Int(i) => Value::Int(i),
        Literal::Real(r) => Value::Real(r),
        Literal::Bool(b) => Value::Bool(b),
        Literal::Str(s) => Value::Str(s),
    }
}

/// Turns a written parameter into a checked [`Parameter`]; `warnings` collects notes such as
/// a default that is not among the values.
pub(crate) fn make_param(
    raw: RawParam,
    warnings: &mut Vec<String>,
) -> Result<Parameter, SpaceError> {
    let name = raw.name.clone();
    let invalid = |message: String| SpaceError::InvalidParameter {
        name: name.clone(),
        message,
    };
    let kind = match raw.kind.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None => None,
        Some("int" | "integer") => Some(ParamKind::Integer),
        Some("real" | "float" | "double") => Some(ParamKind::Real),
        Some("ordinal") => Some(ParamKind::Ordinal),
        Some("categorical" | "category" | "string" | "str") => Some(ParamKind::Categorical),
        Some("bool" | "boolean") => Some(ParamKind::Boolean),
        Some("permutation" | "perm") => Some(ParamKind::Permutation { items: Vec::new() }),
        Some(other) => {
            return Err(invalid(format!(
                "unknown type `{other}`; expected one of int, real, ordinal, categorical, bool, permutation"
            )));
        }
    };
    if matches!(kind, Some(ParamKind::Permutation { .. }))
        || (kind.is_none() && raw.items.is_some())
    {
        let Some(items) = raw.items else {
            return Err(invalid(
                "a permutation needs `items`, the names being ordered".into(),
            ));
        };
        if !matches!(raw.values, RawValues::None) {
            return Err(invalid(
                "a permutation takes `items`, not `values` or `range`".into(),
            ));
        }
        return Parameter::permutation(name, items);
    }
    if raw.items.is_some() {
        return Err(invalid("only a permutation takes `items`".into()));
    }
    let values: Vec<Value> = match raw.values {
        RawValues::List(v) => v,
        RawValues::Expr(e) => crate::expr::eval_list(&e)
            .map_err(|error| SpaceError::Expr {
                context: format!("error in the values of parameter `{name}`"),
                location: None,
                expression: e.clone(),
                error: Box::new(error),
            })?
            .into_iter()
            .map(literal_value)
            .collect(),
        RawValues::Range {
            start,
            stop,
            step,
            factor,
        } => range_values(&kind, &start, &stop, step.as_ref(), factor).map_err(invalid)?,
        RawValues::None => {
            if matches!(kind, Some(ParamKind::Boolean)) {
                vec![Value::Bool(false), Value::Bool(true)]
            } else {
                return Err(invalid("no values given: add `values` or `range`".into()));
            }
        }
    };
    let kind = kind.unwrap_or_else(|| infer_kind(&values));
    let values = coerce(&kind, values).map_err(invalid)?;
    let mut p = Parameter::new(name, kind, values)?.with_log_scale(raw.log)?;
    if let Some(d) = raw.default {
        let d = match d {
            Value::Int(i) if matches!(p.kind(), ParamKind::Real) => Value::Real(i as f64),
            other => other,
        };
        match p.clone().with_default(&d) {
            Ok(q) => p = q,
            Err(_) => warnings.push(format!(
                "parameter `{}`: the default `{d}` is not one of its values; ignored",
                p.name()
            )),
        }
    }
    Ok(p)
}

fn infer_kind(values: &[Value]) -> ParamKind {
    if values.iter().all(|v| matches!(v, Value::Bool(_))) {
        ParamKind::Boolean
    } else if values.iter().all(|v| matches!(v, Value::Int(_))) {
        ParamKind::Integer
    } else if values
        .iter()
        .all(|v| matches!(v, Value::Int(_) | Value::Real(_)))
    {
        ParamKind::Real
    } else {
        ParamKind::Categorical
    }
}

/// Converts values to the kind's representation (`2` for a real is `2.0`, `2.0` for an
/// integer is `2`), refusing lossy conversions.
fn coerce(kind: &ParamKind, values: Vec<Value>) -> Result<Vec<Value>, String> {
    values
        .into_iter()
        .map(|v| match (kind, v) {
            (ParamKind::Real, Value::Int(i)) => Ok(Value::Real(i as f64)),
            (ParamKind::Integer, Value::Real(r)) if r.fract() == 0.0 && r.abs() < 9.0e15 => {
                Ok(Value::Int(r as i64))
            }
            (ParamKind::Integer, Value::Bool(b)) => Ok(Value::Int(i64::from(b))),
            (ParamKind::Categorical, Value::Bool(b)) => {
                Ok(Value::Str(if b { "True" } else { "False" }.into()))
            }
            (ParamKind::Integer | ParamKind::Real | ParamKind::Boolean, v @ Value::Str(_)) => {
                Err(format!(
                    "value `{v}` is a string, but the parameter is {}",
                    kind.name()
                ))
            }
            (_, v) => Ok(v),
        })
        .collect()
}

fn range_values(
    kind: &Option<ParamKind>,
    start: &Value,
    stop: &Value,
    step: Option<&Value>,
    factor: Option<f64>,
) -> Result<Vec<Value>, String> {
    let all_int = matches!(start, Value::Int(_))
        && matches!(stop, Value::Int(_))
        && step.is_none_or(|s| matches!(s, Value::Int(_)));
    let num = |v: &Value| {
        v.as_f64()
            .ok_or_else(|| format!("range bound `{v}` is not a number"))
    };
    let integer = match kind {
        Some(ParamKind::Integer) | Some(ParamKind::Ordinal) => true,
        Some(ParamKind::Real) => false,
        None => all_int && factor.is_none_or(|f| f.fract() == 0.0),
        Some(k) => return Err(format!("a {} parameter cannot take a `range`", k.name())),
    };
    if step.is_some() && factor.is_some() {
        return Err("a range takes either `step` or `factor`, not both".into());
    }
    if let Some(f) = factor {
        // Integer bounds and factor: exact in i64 (2^40 stays 1099511627776, which rounding
        // through floats to 12 digits would not).
        if let (true, Value::Int(a), Value::Int(b)) = (integer, start, stop)
            && f.fract() == 0.0
            && f > 1.0
            && f <= i64::MAX as f64
        {
            return Ok(param::int_geometric_range(*a, *b, f as i64)?
                .into_iter()
                .map(Value::Int)
                .collect());
        }
        let v = param::geometric_range(num(start)?, num(stop)?, f)?;
        return if integer {
            v.into_iter()
                .map(|x| {
                    if x.fract() == 0.0 {
                        Ok(Value::Int(x as i64))
                    } else {
                        Err(format!(
                            "the geometric range reaches {x}, which is not an integer"
                        ))
                    }
                })
                .collect()
        } else {
            Ok(v.into_iter().map(Value::Real).collect())
        };
    }
    if integer {
        let int = |v: &Value| match v {
            Value::Int(i) => Ok(*i),
            other => Err(format!(
                "range bound `{other}` of an integer parameter is not an integer"
            )),
        };
        let step = step.map(int).transpose()?.unwrap_or(1);
        Ok(param::int_range(int(start)?, int(stop)?, step)?
            .into_iter()
            .map(Value::Int)
            .collect())
    } else {
        let step = match step {
            Some(s) => num(s)?,
            None => return Err("a real range needs a `step` (or a `factor`)".into()),
        };
        Ok(param::real_range(num(start)?, num(stop)?, step)?
            .into_iter()
            .map(Value::Real)
            .collect())
    }
}

/// Closest candidate to `name` by edit distance, when reasonably close.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.len() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A location for a JSON syntax error, from serde_json's line and column.
pub(crate) fn json_error(file: &str, text: &str, e: &serde_json::Error) -> SpaceError {
    let offset: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum::<usize>()
        + e.column().saturating_sub(1);
    let location = Location::from_span(file, text, offset..offset + 1);
    SpaceError::Syntax {
        file: file.to_string(),
        format: "JSON",
        message: format!("{e}\n{location}"),
    }
}

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;
