//! Tuned configurations out of studies, for applications (`ktune export`, issue 45): one
//! record per (device, problem size) in a wisdom file ([`ktune_select`]'s format), from which
//! the C headers are written and applications select at run time.
//!
//! Each source is anything a prior can be read from (a ktune study, a Kernel Tuner cache, a
//! T4 file). Its device and problem size come from what it recorded (a study's workers'
//! device, and a CUDA or OpenCL study's constant `problem_size` and `kernel`; a cache's
//! `device_name` and `problem_size`), or are given; a source that says neither is refused,
//! naming what to give.
//!
//! Which configuration is exported for a source: its best successful measurement, or where
//! the study was re-ranked (`ktune results --rerank`), the re-ranking's winner; with a goal
//! over several objectives (`energy within 5% of time`, `weighted time=1, energy=0.5`; see
//! [`ktune_core::pareto::Goal`]), the configuration the goal picks from each source's
//! measurements of those objectives (a study of several objectives, a Kernel Tuner cache's
//! metrics, a T4 file's measurements).
//!
//! The default (for devices no record matches) is by default the *robust* configuration:
//! among the configurations measured successfully in the most sources, the one whose
//! geometric mean of slowdowns against each source's best is least (a slowdown is
//! value / best when minimising, best / value when maximising). With brute-forced sources
//! that is the best single configuration for all of them.

use std::collections::HashMap;

use ktune_core::{Direction, Prior};
use ktune_select::json::Json as SJson;
use ktune_select::{Record, Value as SValue, Wisdom};
use ktune_space::Value;
use serde_json::Value as Json;

use crate::prior::{Contents, PriorLoadError, PriorSource};

/// One source of tuned configurations, with what is given about it.
#[derive(Clone, Debug)]
pub struct ExportSource {
    /// Where it is read from.
    pub source: PriorSource,
    /// Its device, given (else what it recorded).
    pub device: Option<String>,
    /// Its problem size, given (else what it recorded).
    pub problem_size: Option<Vec<u64>>,
}

/// Which configuration is the default of the export.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DefaultChoice {
    /// The robust configuration ([module docs](self)).
    #[default]
    Robust,
    /// The configuration exported for this device (its largest problem size).
    Device(String),
    /// None: a device that no record matches gets nothing.
    Nothing,
}

/// An export cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A source cannot be read.
    #[error(transparent)]
    Load(#[from] PriorLoadError),
    /// A source does not say its device or problem size.
    #[error("`{source_name}` does not record its {what}: give it ({flag} '{source_name}=...')")]
    Untagged {
        /// The source.
        source_name: String,
        /// `device` or `problem size`.
        what: &'static str,
        /// The flag that gives it.
        flag: &'static str,
    },
    /// A source has no successful measurement.
    #[error("`{0}` has no successful measurement to export")]
    NothingSucceeded(String),
    /// Two sources do not tune the same kernel's parameters.
    #[error(
        "`{first}` tunes [{first_parameters}] but `{other}` tunes [{other_parameters}]: one export holds one kernel's configurations"
    )]
    Parameters {
        /// The first source.
        first: String,
        /// Its parameters.
        first_parameters: String,
        /// The other.
        other: String,
        /// Its parameters.
        other_parameters: String,
    },
    /// Two sources claim one device and problem size with different search spaces.
    #[error(
        "`{first}` and `{other}` both claim device {device:?} at problem size {size}, but their search spaces differ: export one of them, or give one another --device or --size"
    )]
    Clash {
        /// One source.
        first: String,
        /// The other.
        other: String,
        /// The device.
        device: String,
        /// The problem size.
        size: String,
    },
    /// Sources optimise in opposite directions.
    #[error("`{first}` {a}s its objective but `{other}` {b}s it")]
    Direction {
        /// One source.
        first: String,
        /// Its direction.
        a: &'static str,
        /// The other.
        other: String,
        /// Its direction.
        b: &'static str,
    },
    /// `--default DEVICE` names no exported device.
    #[error("the default device {0:?} is none of the exported devices ({1})")]
    DefaultDevice(String, String),
    /// There is nothing to export.
    #[error("no source given")]
    NoSource,
    /// The goal cannot be used on a source.
    #[error("`{source_name}`: {message}")]
    Goal {
        /// The source.
        source_name: String,
        /// What is wrong.
        message: String,
    },
}

/// What a source recorded about itself, beside its measurements.
#[derive(Default)]
struct Tags {
    kernel: Option<String>,
    device: Option<String>,
    problem_size: Option<Vec<u64>>,
    /// The study's name.
    study: Option<String>,
    /// A text of its search space (domains and constraints), where recorded.
    space: Option<String>,
    /// The re-ranking's winner, by parameter name, where the study was re-ranked.
    reranked: Option<Vec<(String, Json)>>,
}

/// One source, read.
struct Source {
    name: String,
    prior: Prior,
    fingerprint: String,
    tags: Tags,
    device: String,
    size: [u64; 3],
    /// With a goal (given, or recorded by the study): the measurement it picks (its position
    /// in `prior.measurements`) and the goal.
    picked: Option<(usize, String)>,
}

/// Reads the sources and makes the wisdom of kernel `kernel` (else the name the sources
/// record, else `kernel`), each record the best of `objective` or, with `goal` (or, without,
/// the goal a ktune study recorded), what the goal picks; returns it with notes for the user (a source whose re-ranking cannot be used,
/// how the default was chosen).
pub fn wisdom(
    sources: &[ExportSource],
    kernel: Option<&str>,
    objective: &str,
    goal: Option<&str>,
    default: &DefaultChoice,
    exported_at: f64,
) -> Result<(Wisdom, Vec<String>), ExportError> {
    if sources.is_empty() {
        return Err(ExportError::NoSource);
    }
    let mut notes = Vec::new();
    let mut read: Vec<Source> = Vec::new();
    for s in sources {
        let contents = s.source.contents()?;
        let loaded = s.source.load_from(&contents, objective)?;
        let name = loaded.fact.source.clone();
        let tags = tags(&contents);
        let device = s
            .device
            .clone()
            .or_else(|| tags.device.clone())
            .ok_or_else(|| ExportError::Untagged {
                source_name: name.clone(),
                what: "device",
                flag: "--device",
            })?;
        let size = s
            .problem_size
            .clone()
            .or_else(|| tags.problem_size.clone())
            .ok_or_else(|| ExportError::Untagged {
                source_name: name.clone(),
                what: "problem size",
                flag: "--size",
            })?;
        // The goal given, else the one a ktune study recorded (it was tuned to seek it).
        let recorded = match &contents {
            crate::prior::Contents::Study(dump) => dump
                .meta
                .iter()
                .find(|(k, _)| k == ktune_core::GOAL_KEY)
                .map(|(_, v)| v.clone()),
            crate::prior::Contents::Text(_) => None,
        };
        let picked = match goal.map(str::to_string).or(recorded) {
            Some(text) => Some((
                goal_pick(&s.source, &contents, &loaded.prior, objective, &text)?,
                text,
            )),
            None => None,
        };
        read.push(Source {
            name,
            fingerprint: loaded.fact.fingerprint,
            prior: loaded.prior,
            tags,
            device,
            size: ktune_select::extents(&size),
            picked,
        });
    }
    let first = &read[0];
    let parameters = first.prior.parameters.clone();
    for s in &read[1..] {
        let mut a = parameters.clone();
        let mut b = s.prior.parameters.clone();
        a.sort();
        b.sort();
        if a != b {
            return Err(ExportError::Parameters {
                first: first.name.clone(),
                first_parameters: parameters.join(", "),
                other: s.name.clone(),
                other_parameters: s.prior.parameters.join(", "),
            });
        }
        if s.prior.direction != first.prior.direction {
            return Err(ExportError::Direction {
                first: first.name.clone(),
                a: first.prior.direction.name(),
                other: s.name.clone(),
                b: s.prior.direction.name(),
            });
        }
    }
    for (i, a) in read.iter().enumerate() {
        for b in &read[..i] {
            let same = ktune_select::family::normalise(&a.device)
                == ktune_select::family::normalise(&b.device)
                && a.size == b.size;
            if same && a.tags.space != b.tags.space {
                return Err(ExportError::Clash {
                    first: b.name.clone(),
                    other: a.name.clone(),
                    device: a.device.clone(),
                    size: a.size.map(|x| x.to_string()).join("x"),
                });
            }
        }
    }
    let direction = first.prior.direction;
    // Each source's successful measurements, as configurations in the first source's
    // parameter order.
    let tables: Vec<Vec<(Vec<SValue>, f64)>> =
        read.iter().map(|s| successes(s, &parameters)).collect();
    let mut records = Vec::new();
    for (s, table) in read.iter().zip(&tables) {
        let best = table
            .iter()
            .fold(None::<&(Vec<SValue>, f64)>, |b, m| match b {
                Some(b) if !better(direction, m.1, b.1) => Some(b),
                _ => Some(m),
            })
            .ok_or_else(|| ExportError::NothingSucceeded(s.name.clone()))?;
        let mut chosen_by = "the best measured".to_string();
        let mut chosen = best;
        if let Some((i, text)) = &s.picked {
            let i = *i;
            let config = config_of(s, &parameters, &s.prior.measurements[i].values);
            if let Some(m) = table.iter().find(|(c, _)| *c == config) {
                chosen = m;
                chosen_by = format!("the goal `{text}`");
            }
        } else if let Some(winner) = &s.tags.reranked {
            let values: Option<Vec<SValue>> = parameters
                .iter()
                .map(|p| {
                    winner
                        .iter()
                        .find(|(n, _)| n == p)
                        .and_then(|(_, v)| ktune_store::stored_value(v))
                        .map(|v| select_value(&v, p, &s.prior))
                })
                .collect();
            match values.and_then(|v| table.iter().find(|(c, _)| *c == v)) {
                Some(m) => {
                    chosen = m;
                    chosen_by = "the re-ranking's winner".into();
                }
                None => notes.push(format!(
                    "`{}`: its re-ranking names no configuration measured there; exporting its best measured",
                    s.name
                )),
            }
        }
        let values: Vec<f64> = table.iter().map(|m| m.1).collect();
        let mut provenance = vec![
            ("source".to_string(), SJson::Str(s.name.clone())),
            ("fingerprint".into(), SJson::Str(s.fingerprint.clone())),
            ("chosen".into(), SJson::Str(chosen_by)),
            (
                "statistics".into(),
                SJson::Object(vec![
                    (
                        "measured".into(),
                        SJson::Int(s.prior.measurements.len() as i64),
                    ),
                    ("successful".into(), SJson::Int(table.len() as i64)),
                    ("best".into(), SJson::Real(best.1)),
                    ("median".into(), SJson::Real(median(&values))),
                ]),
            ),
            (
                "exported".into(),
                SJson::Str(ktune_core::utc_text(exported_at)),
            ),
        ];
        if let Some(study) = &s.tags.study {
            provenance.insert(1, ("study".into(), SJson::Str(study.clone())));
        }
        if let Some(space) = &s.tags.space {
            provenance.insert(
                2,
                ("space_fingerprint".into(), SJson::Str(short_digest(space))),
            );
        }
        records.push(Record {
            device: s.device.clone(),
            problem_size: s.size,
            config: chosen.0.clone(),
            objective: chosen.1,
            provenance,
        });
    }
    let mut facts = Vec::new();
    let default = match default {
        DefaultChoice::Nothing => None,
        DefaultChoice::Device(d) => {
            let wanted = ktune_select::family::normalise(d);
            let of_device: Vec<&Record> = records
                .iter()
                .filter(|r| ktune_select::family::normalise(&r.device) == wanted)
                .collect();
            let largest = of_device
                .iter()
                .max_by_key(|r| {
                    r.problem_size
                        .iter()
                        .fold(1u64, |a, &x| a.saturating_mul(x))
                })
                .ok_or_else(|| {
                    let all: Vec<&str> = records.iter().map(|r| r.device.as_str()).collect();
                    ExportError::DefaultDevice(d.clone(), all.join(", "))
                })?;
            facts.push((
                "default_from".into(),
                SJson::Str(format!("the configuration exported for {}", largest.device)),
            ));
            Some(largest.config.clone())
        }
        DefaultChoice::Robust => {
            let (config, covered, mean) = robust(direction, &tables);
            let text = format!(
                "the robust configuration: measured in {covered} of {} sources, geometric mean slowdown {mean:.4} against each one's best",
                tables.len()
            );
            notes.push(format!("default: {text}"));
            facts.push(("default_from".into(), SJson::Str(text)));
            Some(config)
        }
    };
    let key = kernel
        .map(str::to_string)
        .or_else(|| read.iter().find_map(|s| s.tags.kernel.clone()))
        .unwrap_or_else(|| "kernel".to_string());
    facts.push((
        "exported".into(),
        SJson::Str(ktune_core::utc_text(exported_at)),
    ));
    Ok((
        Wisdom {
            key,
            objective: objective.to_string(),
            parameters,
            direction: match direction {
                Direction::Minimize => ktune_select::Direction::Minimize,
                Direction::Maximize => ktune_select::Direction::Maximize,
            },
            default,
            facts,
            records,
        },
        notes,
    ))
}

fn better(direction: Direction, a: f64, b: f64) -> bool {
    match direction {
        Direction::Minimize => a < b,
        Direction::Maximize => a > b,
    }
}

/// A source's successful measurements, each configuration in `parameters`' order.
fn successes(s: &Source, parameters: &[String]) -> Vec<(Vec<SValue>, f64)> {
    s.prior
        .measurements
        .iter()
        .filter_map(|m| {
            let v = m.objective.filter(|v| v.is_finite())?;
            Some((config_of(s, parameters, &m.values), v))
        })
        .collect()
}

/// A measurement's values (in the source's parameter order) as a configuration in
/// `parameters`' order.
fn config_of(s: &Source, parameters: &[String], values: &[Value]) -> Vec<SValue> {
    parameters
        .iter()
        .map(|p| {
            let i = s
                .prior
                .parameters
                .iter()
                .position(|q| q == p)
                .expect("checked: the same names");
            select_value(&values[i], &s.prior.parameters[i], &s.prior)
        })
        .collect()
}

/// The objectives a source measured, the `objective` exported first: a study's list, a
/// Kernel Tuner cache's numeric metrics, a T4 file's measurement names (directions guessed
/// from the names where the source does not record them).
fn source_objectives(contents: &Contents, objective: &str) -> Vec<ktune_core::Metric> {
    let mut names: Vec<String> = Vec::new();
    let mut known: Vec<ktune_core::Metric> = Vec::new();
    match contents {
        Contents::Study(dump) => {
            let meta = |key: &str| {
                dump.meta
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.as_str())
            };
            known = meta(ktune_core::OBJECTIVES_KEY)
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_default();
            names.extend(known.iter().map(|m| m.name.clone()));
        }
        Contents::Text(text) => {
            let doc: Json = serde_json::from_str(text).unwrap_or(Json::Null);
            if let Some(results) = doc.get("results").and_then(Json::as_array) {
                for r in results {
                    for m in r["measurements"].as_array().into_iter().flatten() {
                        if let Some(n) = m["name"].as_str() {
                            names.push(n.to_string());
                        }
                    }
                }
            } else if let Ok(data) = ktune_space::spec::read_cache(text, "") {
                let parameters: Vec<&str> = data.parameters.iter().map(|p| p.name()).collect();
                for r in &data.records {
                    for (k, v) in r {
                        if v.is_number() && !parameters.contains(&k.as_str()) {
                            names.push(k.clone());
                        }
                    }
                }
            }
        }
    }
    names.sort();
    names.dedup();
    names.retain(|n| n != objective);
    names.insert(0, objective.to_string());
    names
        .into_iter()
        .map(|n| {
            known
                .iter()
                .find(|m| m.name == n)
                .cloned()
                .unwrap_or_else(|| ktune_core::Metric::new(n.clone(), Direction::guess(&n)))
        })
        .collect()
}

/// The measurement of `primary` (the source read for `objective`) that `goal` picks, from
/// each measurement's value of every objective the source holds.
fn goal_pick(
    source: &PriorSource,
    contents: &Contents,
    primary: &Prior,
    objective: &str,
    goal: &str,
) -> Result<usize, ExportError> {
    let name = source.name();
    let objectives = source_objectives(contents, objective);
    let parsed =
        ktune_core::pareto::Goal::parse(goal, &objectives).map_err(|e| ExportError::Goal {
            source_name: name.clone(),
            message: e.to_string().replace("of the study", "of this source"),
        })?;
    // Each objective's value per configuration (its values as text: the key).
    let key = |values: &[Value]| format!("{values:?}");
    let mut columns: Vec<HashMap<String, f64>> = Vec::new();
    for m in &objectives {
        let prior = if m.name == objective {
            primary.clone()
        } else {
            source.load_from(contents, &m.name)?.prior
        };
        columns.push(
            prior
                .measurements
                .iter()
                .filter_map(|x| x.objective.map(|v| (key(&x.values), v)))
                .collect(),
        );
    }
    let points: Vec<Option<Vec<f64>>> = primary
        .measurements
        .iter()
        .map(|x| {
            let k = key(&x.values);
            x.objective?;
            columns.iter().map(|c| c.get(&k).copied()).collect()
        })
        .collect();
    let directions: Vec<Direction> = objectives.iter().map(|m| m.direction).collect();
    parsed
        .pick(&points, &directions)
        .ok_or_else(|| ExportError::Goal {
            source_name: name,
            message: format!(
                "no measurement holds every objective the goal needs ({})",
                objectives
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

/// A value as an application receives it: a permutation as its item names (or positions)
/// joined by commas.
fn select_value(v: &Value, parameter: &str, prior: &Prior) -> SValue {
    match v {
        Value::Int(i) => SValue::Int(*i),
        Value::Real(x) => SValue::Real(*x),
        Value::Bool(b) => SValue::Bool(*b),
        Value::Str(s) => SValue::Str(s.clone()),
        Value::Perm(order) => {
            let items = prior
                .items
                .iter()
                .find(|(p, _)| p == parameter)
                .map(|(_, items)| items);
            let names: Vec<String> = order
                .iter()
                .map(|&i| {
                    items
                        .and_then(|items| items.get(i as usize).cloned())
                        .unwrap_or_else(|| i.to_string())
                })
                .collect();
            SValue::Str(names.join(","))
        }
    }
}

/// The robust configuration of `tables`: among those measured in the most tables, the least
/// geometric mean slowdown; with how many tables it was measured in and that mean.
fn robust(direction: Direction, tables: &[Vec<(Vec<SValue>, f64)>]) -> (Vec<SValue>, usize, f64) {
    let key = |c: &[SValue]| {
        c.iter()
            .map(|v| format!("{v:?}"))
            .collect::<Vec<_>>()
            .join("\u{1f}")
    };
    let mut seen: HashMap<String, (Vec<SValue>, usize, f64)> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for table in tables {
        let best = table.iter().map(|m| m.1).fold(None::<f64>, |b, v| match b {
            Some(b) if !better(direction, v, b) => Some(b),
            _ => Some(v),
        });
        let Some(best) = best else { continue };
        for (config, v) in table {
            let slowdown = match direction {
                Direction::Minimize => v / best,
                Direction::Maximize => best / v,
            };
            // Zero or negative objectives have no ratio: such a configuration counts as
            // unmeasured there.
            if !(slowdown.is_finite() && slowdown > 0.0) {
                continue;
            }
            let k = key(config);
            let entry = seen.entry(k.clone()).or_insert_with(|| {
                order.push(k);
                (config.clone(), 0, 0.0)
            });
            entry.1 += 1;
            entry.2 += slowdown.ln();
        }
    }
    order
        .iter()
        .map(|k| &seen[k])
        .fold(None::<&(Vec<SValue>, usize, f64)>, |b, e| match b {
            Some(b) if e.1 < b.1 || (e.1 == b.1 && e.2 / e.1 as f64 >= b.2 / b.1 as f64) => Some(b),
            _ => Some(e),
        })
        .map(|(c, n, sum)| (c.clone(), *n, (sum / *n as f64).exp()))
        .expect("every source has a success: checked before")
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The first 8 bytes of `text`'s SHA-256 in hex: how exports and reports name a stored
/// fingerprint.
pub fn short_digest(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What a source recorded about itself, beside the measurements the prior's reader takes.
fn tags(contents: &Contents) -> Tags {
    match contents {
        Contents::Study(dump) => study_tags(dump),
        Contents::Text(text) => {
            // Only the header matters here (the measurements are the prior's).
            let doc: Json = serde_json::from_str(text).unwrap_or(Json::Null);
            let problem_size = match doc.get("problem_size") {
                Some(Json::Array(a)) => a.iter().map(Json::as_u64).collect(),
                Some(n) => n.as_u64().map(|n| vec![n]),
                None => None,
            };
            Tags {
                kernel: doc
                    .get("kernel_name")
                    .and_then(Json::as_str)
                    .map(str::to_string),
                // Kernel Tuner writes "" where its backend did not say (the shared MI250X
                // caches): not a name.
                device: doc
                    .get("device_name")
                    .and_then(Json::as_str)
                    .filter(|d| !d.trim().is_empty())
                    .map(str::to_string),
                problem_size,
                study: None,
                space: doc.get("tune_params").map(Json::to_string),
                reranked: None,
            }
        }
    }
}

/// What a ktune study says of itself for a Kernel Tuner cache's header (`ktune results
/// --format cache`): its kernel (a CUDA or OpenCL study's, else the study's name), its
/// workers' device where they share one (else `""`), and its problem size where constant.
pub fn cache_header(
    study: &str,
    fingerprint: &ktune_store::Fingerprint,
    workers: &[ktune_store::WorkerRow],
) -> (String, String, Option<Vec<u64>>) {
    let (kernel, problem_size) = kernel_and_size(Some(fingerprint));
    (
        kernel.unwrap_or_else(|| study.to_string()),
        shared_device(workers).unwrap_or_default(),
        problem_size,
    )
}

/// The device a study's workers share, if they name one.
fn shared_device(workers: &[ktune_store::WorkerRow]) -> Option<String> {
    let mut devices: Vec<&str> = workers
        .iter()
        .map(|w| w.device.as_str())
        .filter(|d| !d.is_empty() && *d != "unknown")
        .collect();
    devices.sort_unstable();
    devices.dedup();
    (devices.len() == 1).then(|| devices[0].to_string())
}

/// A kernel runner's section (CUDA, OpenCL) names the kernel and, where it is a constant,
/// the problem size; other studies record neither, and they are given (--size).
fn kernel_and_size(
    fingerprint: Option<&ktune_store::Fingerprint>,
) -> (Option<String>, Option<Vec<u64>>) {
    let runner: Json = fingerprint
        .and_then(|f| serde_json::from_str(&f.runner).ok())
        .unwrap_or(Json::Null);
    if !matches!(runner["kind"].as_str(), Some("cuda" | "opencl")) {
        return (None, None);
    }
    let problem_size = runner["problem_size"]
        .as_array()
        .and_then(|a| a.iter().map(Json::as_u64).collect::<Option<Vec<u64>>>())
        .filter(|s| (1..=3).contains(&s.len()));
    (runner["kernel"].as_str().map(str::to_string), problem_size)
}

/// What a ktune study recorded about itself: its workers' device (where they share one),
/// its name, its search space and its re-ranking's winner.
fn study_tags(dump: &ktune_store::StudyDump) -> Tags {
    let meta = |key: &str| {
        dump.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let reranked = meta("rerank")
        .and_then(|r| serde_json::from_str::<Json>(&r).ok())
        .and_then(|r| {
            let first = r.get("finalists")?.as_array()?.first()?.clone();
            let values = first.get("values")?.as_array()?.clone();
            values
                .iter()
                .map(|pair| {
                    let pair = pair.as_array()?;
                    Some((pair.first()?.as_str()?.to_string(), pair.get(1)?.clone()))
                })
                .collect::<Option<Vec<_>>>()
        });
    let fingerprint = serde_json::from_str::<ktune_store::Fingerprint>(&dump.fingerprint).ok();
    let space = fingerprint
        .as_ref()
        .map(|f| serde_json::json!([f.parameters, f.constraints]).to_string());
    let (kernel, problem_size) = kernel_and_size(fingerprint.as_ref());
    Tags {
        kernel,
        device: shared_device(&dump.workers),
        problem_size,
        study: Some(dump.name.clone()),
        space,
        reranked,
    }
}
