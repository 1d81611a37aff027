//! The native problem file, `ktune.toml`.
//!
//! ```toml
//! name = "convolution"
//! constraints = [
//!     "block_size_x * block_size_y <= 1024",
//!     "use_padding == 0 or block_size_x % 32 != 0",
//! ]
//!
//! [[parameter]]
//! name = "block_size_x"
//! type = "int"                               # int | real | ordinal | categorical | bool | permutation
//! values = [16, 32, 48, 64]                  # a list, or a Python list expression as a string
//! default = 16
//!
//! [[parameter]]
//! name = "tile"
//! range = { start = 1, stop = 1024, factor = 2 }   # or step = ...; stop is inclusive
//! log = true
//!
//! [[parameter]]
//! name = "loop_order"
//! type = "permutation"
//! items = ["i", "j", "k"]
//! ```
//!
//! Top-level sections other than the search space (`runner`, `strategy`, `budget`, `storage`)
//! are read by `ktune_problem` for `ktune tune` and the Python bindings; any other top-level
//! key is an error, so a misspelt section does not go
//! unnoticed, and sections users may expect but nothing reads (`objective`, `store`, `bench`)
//! say where their setting goes.

use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;

use super::{
    ConstraintSource, Origin, RawParam, RawValues, SpaceSpec, SpecFormat, closest, make_param,
};
use crate::error::{Location, SpaceError};
use crate::param::Value;

/// Top-level keys of `ktune.toml`; the search space uses the first four, `ktune tune` the
/// rest.
pub const TOP_LEVEL_KEYS: &[&str] = &[
    "name",
    "description",
    "constraints",
    "parameter",
    "runner",
    "strategy",
    "budget",
    "storage",
    "transfer",
    "instance",
    "goal",
];

/// Sections a user may expect but that nothing reads, with where the setting goes instead
/// (refused rather than silently ignored).
const MISPLACED: &[(&str, &str)] = &[
    (
        "objective",
        "the objective is set in [runner]: objective = { name = \"time\", regex = 'time: (?P<value>[0-9.]+)', direction = \"maximize\" }",
    ),
    (
        "store",
        "the results database is chosen with `ktune tune --db <path>` (default: beside the spec, with the extension .db); a shared study is a [storage] section with url = \"sqlite:///path.db\" or \"postgresql://...\"",
    ),
    (
        "bench",
        "`ktune bench` takes its settings on the command line (see `ktune bench --help`)",
    ),
];

#[derive(Deserialize)]
struct TomlSpec {
    name: Option<String>,
    #[serde(default)]
    constraints: Vec<Spanned<String>>,
    #[serde(default)]
    parameter: Vec<TomlParam>,
}

/// A permutation's item as written: a name, or a number (`items = [0, 1, 2, 3]`, as compiler
/// benchmarks number their loops), which names the item by its decimal text.
#[derive(Deserialize)]
#[serde(untagged)]
enum ItemName {
    Name(String),
    Number(i64),
}

impl ItemName {
    fn text(self) -> String {
        match self {
            ItemName::Name(s) => s,
            ItemName::Number(n) => n.to_string(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlParam {
    name: Spanned<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    values: Option<Spanned<toml::Value>>,
    range: Option<Spanned<TomlRange>>,
    items: Option<Vec<ItemName>>,
    #[serde(default)]
    log: bool,
    default: Option<toml::Value>,
    #[allow(dead_code)] // documentation for people reading the file
    description: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlRange {
    start: toml::Value,
    stop: toml::Value,
    step: Option<toml::Value>,
    factor: Option<f64>,
}

pub(super) fn parse(text: &str, file: &str) -> Result<SpaceSpec, SpaceError> {
    parse_document(text, file).map(|(spec, _)| spec)
}

/// The search space of a `ktune.toml`, and the file's top-level table (whose other sections
/// the caller reads from it rather than parsing the text again).
pub(super) fn parse_document(
    text: &str,
    file: &str,
) -> Result<(SpaceSpec, toml::Table), SpaceError> {
    let syntax = |e: toml::de::Error| SpaceError::Syntax {
        file: file.to_string(),
        format: "TOML",
        message: e.to_string(),
    };
    let table: toml::Table = toml::from_str(text).map_err(syntax)?;
    for key in table.keys() {
        if let Some((_, instead)) = MISPLACED.iter().find(|(k, _)| k == key) {
            return Err(SpaceError::Spec {
                message: format!("`[{key}]` in `{file}` is not read by ktune: {instead}"),
                location: find_key(text, key).map(|s| Box::new(Location::from_span(file, text, s))),
            });
        }
        if !TOP_LEVEL_KEYS.contains(&key.as_str()) {
            let hint = match closest(key, TOP_LEVEL_KEYS.iter().copied()) {
                Some(k) => format!("; did you mean `{k}`?"),
                None => format!("; expected one of {}", TOP_LEVEL_KEYS.join(", ")),
            };
            return Err(SpaceError::Spec {
                message: format!("unknown top-level key `{key}` in `{file}`{hint}"),
                location: find_key(text, key).map(|s| Box::new(Location::from_span(file, text, s))),
            });
        }
    }
    let spec: TomlSpec = toml::from_str(text).map_err(syntax)?;
    let file_arc: Arc<str> = Arc::from(file);
    let text_arc: Arc<str> = Arc::from(text);
    if spec.parameter.is_empty() {
        return Err(SpaceError::Spec {
            message: format!(
                "`{file}` defines no parameters: add at least one `[[parameter]]` table"
            ),
            location: None,
        });
    }
    let mut warnings = Vec::new();
    let mut parameters: Vec<crate::param::Parameter> = Vec::new();
    for p in spec.parameter {
        let name_span = p.name.span();
        let at = || Some(Location::from_span(file, text, name_span.clone()));
        let name = p.name.into_inner();
        if parameters.iter().any(|q| q.name() == name) {
            return Err(SpaceError::DuplicateParameter {
                name,
                location: at().map(Box::new),
            });
        }
        let values_span = p.values.as_ref().map(Spanned::span);
        let values = match (p.values.map(Spanned::into_inner), p.range) {
            (Some(_), Some(r)) => {
                return Err(SpaceError::InvalidParameter {
                    name,
                    message: "give either `values` or `range`, not both".into(),
                }
                .at(Some(Location::from_span(file, text, r.span()))));
            }
            (Some(toml::Value::String(expr)), None) => RawValues::Expr(expr),
            (Some(toml::Value::Array(list)), None) => RawValues::List(
                list.iter()
                    .map(|v| toml_value(v).ok_or(v))
                    .collect::<Result<_, _>>()
                    .map_err(|v| {
                        SpaceError::InvalidParameter {
                            name: name.clone(),
                            message: format!("`{v}` is not a number, string or boolean"),
                        }
                        .at(values_span
                            .clone()
                            .map(|s| Location::from_span(file, text, s)))
                    })?,
            ),
            (Some(other), None) => {
                return Err(SpaceError::InvalidParameter {
                    name,
                    message: format!(
                        "`values` must be a list or a Python list expression in a string, not a {}",
                        other.type_str()
                    ),
                }
                .at(values_span.map(|s| Location::from_span(file, text, s))));
            }
            (None, Some(r)) => {
                let span = r.span();
                let r = r.into_inner();
                let bound = |v: &toml::Value| {
                    toml_value(v).ok_or_else(|| {
                        SpaceError::InvalidParameter {
                            name: name.clone(),
                            message: format!("range bound `{v}` is not a number"),
                        }
                        .at(Some(Location::from_span(
                            file,
                            text,
                            span.clone(),
                        )))
                    })
                };
                RawValues::Range {
                    start: bound(&r.start)?,
                    stop: bound(&r.stop)?,
                    step: r.step.as_ref().map(bound).transpose()?,
                    factor: r.factor,
                }
            }
            (None, None) => RawValues::None,
        };
        let raw = RawParam {
            name: name.clone(),
            kind: p.kind,
            values,
            items: p
                .items
                .map(|items| items.into_iter().map(ItemName::text).collect()),
            log: p.log,
            default: p.default.as_ref().and_then(toml_value),
        };
        let param = make_param(raw, &mut warnings).map_err(|e| match (e, &values_span) {
            // An error inside a `values` expression points at its token in the file.
            (
                SpaceError::Expr {
                    context,
                    location: None,
                    expression,
                    error,
                },
                Some(span),
            ) => {
                let origin = Origin::of_literal(&file_arc, &text_arc, span.start, &expression);
                SpaceError::Expr {
                    context,
                    location: Some(Box::new(origin.locate(error.span.clone()))),
                    expression,
                    error,
                }
            }
            (e, _) => e.at(at()),
        })?;
        parameters.push(param);
    }
    let constraints = spec
        .constraints
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let quote = c.span().start;
            let text_value = c.into_inner();
            ConstraintSource {
                origin: Some(Origin::of_literal(&file_arc, &text_arc, quote, &text_value)),
                text: text_value,
                context: format!("constraint {}", i + 1),
            }
        })
        .collect();
    let space = SpaceSpec {
        name: spec.name,
        format: SpecFormat::Toml,
        parameters,
        constraints,
        configurations: None,
        warnings,
    };
    Ok((space, table))
}

fn toml_value(v: &toml::Value) -> Option<Value> {
    match v {
        toml::Value::Integer(i) => Some(Value::Int(*i)),
        toml::Value::Float(f) => Some(Value::Real(*f)),
        toml::Value::Boolean(b) => Some(Value::Bool(*b)),
        toml::Value::String(s) => Some(Value::Str(s.clone())),
        _ => None,
    }
}

/// Where a top-level key is written: `key =` or `[key` / `[[key` at the start of a line.
fn find_key(text: &str, key: &str) -> Option<std::ops::Range<usize>> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let rest = trimmed.trim_start_matches('[').trim_start();
        let skip = trimmed.len() - rest.len();
        if rest.starts_with(key) && rest[key.len()..].trim_start().starts_with(['=', ']', '.']) {
            let start = offset + indent + skip;
            return Some(start..start + key.len());
        }
        offset += line.len();
    }
    None
}
