//! The configuration for the device and problem size at hand, from what ktune tuned.
//!
//! `ktune export` writes a study's results (or many studies', one per device and problem
//! size) as a *wisdom* file; an application reads it with [`Wisdom::read`] and asks
//! [`Wisdom::select`] which configuration to use. The same rule is in the C header
//! `ktune export --c-select` writes and in Python's `ktune.select`, and the three are tested
//! on the same fixtures.
//!
//! # The selection rule
//!
//! For a device name and a problem size (one to three extents; missing ones are 1, and
//! extents beyond the third multiply into it):
//!
//! 1. **exact**: a record of the same device (names compared by their lower-case words,
//!    [`family::normalise`]) and the same problem size; of several, the best objective;
//! 2. **nearest size**: else a record of the same device whose problem size is nearest, by
//!    the absolute difference of the extents' products (Kernel Launcher's rule; products
//!    saturate at `u64::MAX`);
//! 3. **same architecture**: else the nearest-size record of a device of the same
//!    architecture ([`family::family`]: an A30 takes what an A100 was tuned for);
//! 4. **same vendor**: else the nearest-size record of a device of the same vendor;
//! 5. **default**: else the file's default configuration (`ktune export` chooses it; see its
//!    docs), if it has one.
//!
//! Ties in 2-4 go to the record written first.
//!
//! # The wisdom file
//!
//! JSON lines, in Kernel Launcher's wisdom format (version 1.0) so that Kernel Launcher
//! reads the same file: a header line (`version`, `key`: the kernel, `objective`,
//! `tunable_parameters`), then one line per record (`config`: the values in the parameters'
//! order, `problem_size`: three extents, `environment.device_name`, and the objective under its
//! own name). ktune adds a `ktune` member to both, which Kernel Launcher ignores: in the header
//! the objective's `direction` and the `default` configuration, in each record where it came
//! from (study, fingerprints, date, statistics). Where the formats differ: Kernel Launcher's own
//! records carry more `environment` (host, driver and compiler versions), and it always takes
//! a smaller objective as better (ktune's `direction` says which); a permutation parameter's
//! value is a string of its items joined by commas (Kernel Launcher has no permutations).

#![forbid(unsafe_code)]

pub mod c;
pub mod family;
pub mod header;
pub mod json;

use std::fmt;
use std::path::Path;

use json::Json;

/// The wisdom format's version (Kernel Launcher's).
pub const VERSION: &str = "1.0";

/// A parameter's value in a configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A real number.
    Real(f64),
    /// A boolean.
    Bool(bool),
    /// A string (a categorical value, or a permutation's items joined by commas).
    Str(String),
}

impl Value {
    fn from_json(v: &Json) -> Option<Value> {
        Some(match v {
            Json::Int(i) => Value::Int(*i),
            Json::Real(x) => Value::Real(*x),
            Json::Bool(b) => Value::Bool(*b),
            Json::Str(s) => Value::Str(s.clone()),
            _ => return None,
        })
    }

    /// The value as JSON.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Int(i) => Json::Int(*i),
            Value::Real(x) => Json::Real(*x),
            Value::Bool(b) => Json::Bool(*b),
            Value::Str(s) => Json::Str(s.clone()),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(x) => write!(f, "{x:?}"),
            Value::Bool(b) => write!(f, "{}", u8::from(*b)),
            Value::Str(s) => f.write_str(s),
        }
    }
}

/// Whether smaller or larger objective values are better.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Direction {
    /// Smaller is better (times, energy).
    #[default]
    Minimize,
    /// Larger is better (throughput).
    Maximize,
}

impl Direction {
    /// `minimize` or `maximize`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Minimize => "minimize",
            Direction::Maximize => "maximize",
        }
    }

    fn better(self, a: f64, b: f64) -> bool {
        match self {
            Direction::Minimize => a < b,
            Direction::Maximize => a > b,
        }
    }
}

/// One tuned configuration: for a device and problem size, with its objective.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The device's name as its driver reports it.
    pub device: String,
    /// The problem size's three extents.
    pub problem_size: [u64; 3],
    /// The values, in the order of [`Wisdom::parameters`].
    pub config: Vec<Value>,
    /// The objective measured.
    pub objective: f64,
    /// Where the record came from (the `ktune` member: study, fingerprints, date,
    /// statistics), as written.
    pub provenance: Vec<(String, Json)>,
}

/// A wisdom file: what was tuned for which devices and problem sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Wisdom {
    /// The kernel (Kernel Launcher's tuning key).
    pub key: String,
    /// The objective's name (`time`).
    pub objective: String,
    /// The tunable parameters, in the order of each record's values.
    pub parameters: Vec<String>,
    /// Whether smaller or larger objectives are better.
    pub direction: Direction,
    /// The configuration for a device that no record matches, if there is one.
    pub default: Option<Vec<Value>>,
    /// Other members of the header's `ktune` object (how the default was chosen, when the
    /// file was written), as written.
    pub facts: Vec<(String, Json)>,
    /// The records, in the file's order.
    pub records: Vec<Record>,
}

/// How [`Wisdom::select`] found its configuration (the rule's steps, best first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    /// The same device and problem size.
    Exact,
    /// The same device, the nearest problem size.
    NearestSize,
    /// A device of the same architecture.
    SameArchitecture,
    /// A device of the same vendor.
    SameVendor,
    /// The file's default.
    Default,
}

impl Match {
    /// The step's name (`exact`, `nearest_size`, `same_architecture`, `same_vendor`,
    /// `default`), as the C header and Python spell it too.
    pub fn name(self) -> &'static str {
        match self {
            Match::Exact => "exact",
            Match::NearestSize => "nearest_size",
            Match::SameArchitecture => "same_architecture",
            Match::SameVendor => "same_vendor",
            Match::Default => "default",
        }
    }
}

/// What [`Wisdom::select`] chose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Selection<'a> {
    /// The configuration, in the order of [`Wisdom::parameters`].
    pub config: &'a [Value],
    /// How it was found.
    pub matched: Match,
    /// The record it came from (none for the default).
    pub record: Option<&'a Record>,
}

/// A wisdom file cannot be read.
#[derive(Clone, Debug, PartialEq)]
pub enum WisdomError {
    /// The file cannot be read.
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        message: String,
    },
    /// A line is not JSON (a file cut off while written ends so).
    Syntax {
        /// The line, from 1.
        line: usize,
        /// The character in it, from 1.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// A line is JSON but not what a wisdom file holds there.
    Content {
        /// The line, from 1.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// The file is wisdom for another kernel.
    OtherKernel {
        /// The kernel asked for.
        expected: String,
        /// The file's.
        found: String,
    },
}

impl fmt::Display for WisdomError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WisdomError::Io { path, message } => write!(f, "cannot read `{path}`: {message}"),
            WisdomError::Syntax {
                line,
                column,
                message,
            } => write!(f, "line {line}, column {column}: {message}"),
            WisdomError::Content { line, message } => write!(f, "line {line}: {message}"),
            WisdomError::OtherKernel { expected, found } => {
                write!(f, "this is wisdom for kernel `{found}`, not `{expected}`")
            }
        }
    }
}

impl std::error::Error for WisdomError {}

impl Wisdom {
    /// Reads a wisdom file.
    pub fn read(path: impl AsRef<Path>) -> Result<Wisdom, WisdomError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| WisdomError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Wisdom::parse(&text)
    }

    /// Reads a wisdom file's text.
    pub fn parse(text: &str) -> Result<Wisdom, WisdomError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l))
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((n, first)) = lines.next() else {
            return Err(WisdomError::Content {
                line: 1,
                message: "the file is empty (a wisdom file starts with its header line)".into(),
            });
        };
        let header = line_json(n, first)?;
        let content = |message: String| WisdomError::Content { line: n, message };
        let field = |key: &str| {
            header.get(key).ok_or_else(|| {
                content(format!(
                    "the header has no `{key}`: this is not a wisdom file (its first line holds \
                     version, key, objective and tunable_parameters)"
                ))
            })
        };
        let version = field("version")?;
        if version.as_str() != Some(VERSION) {
            return Err(content(format!(
                "wisdom version {} is not {VERSION}, the one this reads",
                version.to_text()
            )));
        }
        let text_field = |key: &str| {
            field(key)?
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| content(format!("the header's `{key}` is not a string")))
        };
        let key = text_field("key")?;
        let objective = text_field("objective")?;
        let parameters: Vec<String> = field("tunable_parameters")?
            .as_array()
            .and_then(|a| a.iter().map(|p| p.as_str().map(str::to_string)).collect())
            .ok_or_else(|| content("`tunable_parameters` is not a list of names".into()))?;
        let ours = header.get("ktune");
        let direction = match ours.and_then(|k| k.get("direction")).map(Json::as_str) {
            None | Some(Some("minimize")) => Direction::Minimize,
            Some(Some("maximize")) => Direction::Maximize,
            Some(_) => {
                return Err(content(
                    "ktune.direction is neither \"minimize\" nor \"maximize\"".into(),
                ));
            }
        };
        let default = match ours.and_then(|k| k.get("default")) {
            None | Some(Json::Null) => None,
            Some(d) => Some(
                config_of(d, parameters.len())
                    .map_err(|m| content(format!("ktune.default: {m}")))?,
            ),
        };
        let facts = match ours {
            Some(Json::Object(members)) => members
                .iter()
                .filter(|(k, _)| k != "direction" && k != "default")
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let mut records = Vec::new();
        for (n, line) in lines {
            records.push(record(
                n,
                &line_json(n, line)?,
                &objective,
                parameters.len(),
            )?);
        }
        Ok(Wisdom {
            key,
            objective,
            parameters,
            direction,
            default,
            facts,
            records,
        })
    }

    /// Reads a wisdom file that must be the kernel `key`'s.
    pub fn read_for(path: impl AsRef<Path>, key: &str) -> Result<Wisdom, WisdomError> {
        let w = Wisdom::read(path)?;
        if w.key != key {
            return Err(WisdomError::OtherKernel {
                expected: key.to_string(),
                found: w.key,
            });
        }
        Ok(w)
    }

    /// The file's text: the header line, then a line per record.
    pub fn to_text(&self) -> String {
        let mut ours = vec![(
            "direction".to_string(),
            Json::Str(self.direction.name().into()),
        )];
        if let Some(d) = &self.default {
            ours.push((
                "default".into(),
                Json::Array(d.iter().map(Value::to_json).collect()),
            ));
        }
        ours.extend(self.facts.iter().cloned());
        let header = Json::Object(vec![
            ("version".into(), Json::Str(VERSION.into())),
            ("key".into(), Json::Str(self.key.clone())),
            ("objective".into(), Json::Str(self.objective.clone())),
            (
                "tunable_parameters".into(),
                Json::Array(self.parameters.iter().cloned().map(Json::Str).collect()),
            ),
            ("ktune".into(), Json::Object(ours)),
        ]);
        let mut out = header.to_text();
        out.push('\n');
        for r in &self.records {
            let mut members = vec![
                (
                    "config".to_string(),
                    Json::Array(r.config.iter().map(Value::to_json).collect()),
                ),
                (
                    "problem_size".into(),
                    Json::Array(r.problem_size.iter().map(|&x| size_json(x)).collect()),
                ),
                (
                    "environment".into(),
                    Json::Object(vec![("device_name".into(), Json::Str(r.device.clone()))]),
                ),
                (self.objective.clone(), Json::Real(r.objective)),
            ];
            if !r.provenance.is_empty() {
                members.push(("ktune".into(), Json::Object(r.provenance.clone())));
            }
            out.push_str(&Json::Object(members).to_text());
            out.push('\n');
        }
        out
    }

    /// The configuration for `device` and `problem_size` by [the rule](crate#the-selection-rule);
    /// `None` where no record matches and there is no default.
    pub fn select(&self, device: &str, problem_size: &[u64]) -> Option<Selection<'_>> {
        let size = extents(problem_size);
        let wanted = family::normalise(device);
        let same_device: Vec<&Record> = self
            .records
            .iter()
            .filter(|r| family::normalise(&r.device) == wanted)
            .collect();
        let exact = same_device
            .iter()
            .copied()
            .filter(|r| r.problem_size == size)
            .fold(None::<&Record>, |best, r| match best {
                Some(b) if !self.direction.better(r.objective, b.objective) => Some(b),
                _ => Some(r),
            });
        if let Some(r) = exact {
            return Some(chosen(r, Match::Exact));
        }
        if let Some(r) = nearest(same_device, size) {
            return Some(chosen(r, Match::NearestSize));
        }
        let here = family::family(device);
        let kin = |pick: fn(family::Family) -> Option<&'static str>| {
            let mine = pick(here)?;
            nearest(
                self.records
                    .iter()
                    .filter(|r| pick(family::family(&r.device)) == Some(mine))
                    .collect(),
                size,
            )
        };
        if let Some(r) = kin(|f| f.architecture) {
            return Some(chosen(r, Match::SameArchitecture));
        }
        if let Some(r) = kin(|f| f.vendor) {
            return Some(chosen(r, Match::SameVendor));
        }
        self.default.as_deref().map(|config| Selection {
            config,
            matched: Match::Default,
            record: None,
        })
    }
}

fn chosen(record: &Record, matched: Match) -> Selection<'_> {
    Selection {
        config: &record.config,
        matched,
        record: Some(record),
    }
}

/// The record whose problem size is nearest `size` (the first of equals).
fn nearest(records: Vec<&Record>, size: [u64; 3]) -> Option<&Record> {
    let product = |s: [u64; 3]| s.iter().fold(1u64, |a, &x| a.saturating_mul(x));
    let wanted = product(size);
    records
        .into_iter()
        .enumerate()
        .min_by_key(|(i, r)| (product(r.problem_size).abs_diff(wanted), *i))
        .map(|(_, r)| r)
}

/// One to three extents as three (missing ones 1; extents beyond the third multiplied into
/// it).
pub fn extents(problem_size: &[u64]) -> [u64; 3] {
    let mut out = [1u64; 3];
    for (i, &x) in problem_size.iter().enumerate() {
        if i < 3 {
            out[i] = x;
        } else {
            out[2] = out[2].saturating_mul(x);
        }
    }
    out
}

fn size_json(x: u64) -> Json {
    i64::try_from(x).map_or(Json::Real(x as f64), Json::Int)
}

fn line_json(n: usize, line: &str) -> Result<Json, WisdomError> {
    json::parse(line).map_err(|e| WisdomError::Syntax {
        line: n,
        column: e.column + 1,
        message: e.message,
    })
}

fn config_of(v: &Json, n: usize) -> Result<Vec<Value>, String> {
    let items = v
        .as_array()
        .ok_or_else(|| "a configuration is a list of values".to_string())?;
    if items.len() != n {
        return Err(format!("{} values for {n} tunable parameters", items.len()));
    }
    items
        .iter()
        .map(|x| {
            Value::from_json(x).ok_or_else(|| format!("{} is not a parameter's value", x.to_text()))
        })
        .collect()
}

fn record(n: usize, doc: &Json, objective: &str, parameters: usize) -> Result<Record, WisdomError> {
    let bad = |message: String| WisdomError::Content { line: n, message };
    let config = config_of(
        doc.get("config")
            .ok_or_else(|| bad("the record has no `config`".into()))?,
        parameters,
    )
    .map_err(|m| bad(format!("config: {m}")))?;
    let sizes = doc
        .get("problem_size")
        .and_then(Json::as_array)
        .ok_or_else(|| bad("the record has no `problem_size` list".into()))?;
    if sizes.is_empty() || sizes.len() > 3 {
        return Err(bad(format!(
            "problem_size has {} extents; give one to three",
            sizes.len()
        )));
    }
    let mut extents_given = Vec::with_capacity(3);
    for s in sizes {
        match s {
            Json::Int(i) if *i >= 0 => extents_given.push(*i as u64),
            other => {
                return Err(bad(format!(
                    "problem_size holds {}, not a whole number of at least 0",
                    other.to_text()
                )));
            }
        }
    }
    let device = doc
        .get("environment")
        .and_then(|e| e.get("device_name"))
        .and_then(Json::as_str)
        .ok_or_else(|| bad("the record has no environment.device_name".into()))?
        .to_string();
    let value = doc
        .get(objective)
        .and_then(Json::as_f64)
        .ok_or_else(|| bad(format!("the record has no `{objective}` (the objective)")))?;
    let provenance = match doc.get("ktune") {
        Some(Json::Object(m)) => m.clone(),
        _ => Vec::new(),
    };
    Ok(Record {
        device,
        problem_size: extents(&extents_given),
        config,
        objective: value,
        provenance,
    })
}

#[cfg(test)]
mod tests;
