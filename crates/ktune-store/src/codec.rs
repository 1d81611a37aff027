//! How a record is stored as columns, the same text in every storage, and read back: the
//! parameter values as JSON, the status, the metric values (exactly, NaN and infinities as
//! text), the timings, the observed values and the samples.

use std::path::Path;

use ktune_core::{FailureKind, Observed, Outcome, Record, Timings};
use ktune_space::{Configuration, SearchSpace, Value};
use serde_json::Value as Json;

use crate::error::space_error;
use crate::{Fingerprint, Row, StoreError};

/// Decodes one stored evaluation (of the database at `path`, for messages).
pub(crate) fn decode(path: &Path, r: RawRow) -> Result<Stored, StoreError> {
    let bad = |what: &str, e: &dyn std::fmt::Display| StoreError::Corrupt {
        path: path.to_path_buf(),
        message: format!("evaluation {}: bad {what}: {e}", r.seq),
    };
    let params: Vec<(String, Json)> =
        serde_json::from_str(&r.params_json).map_err(|e| bad("parameter values", &e))?;
    let values: Vec<Json> =
        serde_json::from_str(&r.values_json).map_err(|e| bad("metric values", &e))?;
    let values: Vec<f64> = values
        .iter()
        .map(|v| float_of(v).ok_or_else(|| bad("metric value", v)))
        .collect::<Result<_, _>>()?;
    // SQLite stores NaN as NULL.
    let [compile, benchmark, verification, framework, clock] =
        r.times.map(|t| t.unwrap_or(f64::NAN));
    let timings = Timings {
        compile,
        benchmark,
        verification,
        framework,
    };
    let observed: Observed = match &r.observed {
        Some(text) => serde_json::from_str(text).map_err(|e| bad("observed values", &e))?,
        None => Observed::new(),
    };
    let samples: Option<ktune_core::Samples> = r
        .samples
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .map_err(|e| bad("samples", &e))?;
    if samples.as_ref().is_some_and(|s| s.values.is_empty()) {
        return Err(bad("samples", &"an empty list"));
    }
    let outcome = if r.status == "ok" {
        let o = Outcome::ok(values, timings);
        match samples.clone() {
            Some(s) => o.with_samples(s),
            None => o,
        }
    } else {
        let kind = FailureKind::from_name(&r.status).ok_or_else(|| bad("status", &r.status))?;
        Outcome::failed(kind, r.reason.clone().unwrap_or_default(), timings)
    }
    .with_observed(observed.clone());
    let row = Row {
        seq: r.seq,
        params,
        status: r.status,
        objective: outcome.objective(),
        metrics: match &outcome {
            Outcome::Ok { values, .. } => values.clone(),
            Outcome::Failed { .. } => Vec::new(),
        },
        reason: match &outcome {
            Outcome::Ok { .. } => None,
            Outcome::Failed { reason, .. } => Some(reason.clone()),
        },
        compile_s: compile,
        benchmark_s: benchmark,
        verification_s: verification,
        framework_s: framework,
        clock_s: clock,
        observed,
        samples,
        worker: r.worker,
        device: r.device,
    };
    Ok(Stored { row, outcome })
}

/// The records of `stored` as configurations of `space`; a row whose parameters or values
/// are not in `space` is an error.
pub(crate) fn study_records(
    path: &Path,
    space: &SearchSpace,
    stored: Vec<Stored>,
) -> Result<Vec<ktune_core::StudyRecord>, StoreError> {
    let names: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
    stored
        .into_iter()
        .map(|s| {
            let stored_names: Vec<&str> = s.row.params.iter().map(|(n, _)| n.as_str()).collect();
            if stored_names != names {
                return Err(space_error(
                    path,
                    format!(
                        "evaluation {} has parameters {} but the search space has {}",
                        s.row.seq,
                        stored_names.join(", "),
                        names.join(", ")
                    ),
                ));
            }
            let values: Option<Vec<Value>> =
                s.row.params.iter().map(|(_, v)| value_of(v)).collect();
            let config = values
                .and_then(|v| space.configuration_of(&v))
                .ok_or_else(|| {
                    let shown: Vec<String> = s
                        .row
                        .params
                        .iter()
                        .map(|(n, v)| format!("{n}={v}"))
                        .collect();
                    space_error(
                        path,
                        format!(
                            "evaluation {} has values {} that are not in the search space",
                            s.row.seq,
                            shown.join(", ")
                        ),
                    )
                })?;
            Ok(ktune_core::StudyRecord {
                seq: u64::try_from(s.row.seq).unwrap_or(0),
                worker: s.row.worker.clone(),
                record: Record {
                    config,
                    outcome: s.outcome,
                    clock: s.row.clock_s,
                },
            })
        })
        .collect()
}

/// The rows of `stored`, permutations by their items' names where `fingerprint` has them.
pub(crate) fn named_rows(fingerprint: &Fingerprint, stored: Vec<Stored>) -> Vec<Row> {
    stored
        .into_iter()
        .map(|s| {
            let mut row = s.row;
            for (name, value) in &mut row.params {
                if let Some(items) = fingerprint.items_of(name) {
                    name_items(value, items);
                }
            }
            row
        })
        .collect()
}

/// The columns of a record other than its position, study and worker.
pub(crate) struct Encoded {
    pub(crate) params_json: String,
    pub(crate) status: &'static str,
    pub(crate) values_json: String,
    pub(crate) reason: Option<String>,
    pub(crate) observed: Option<String>,
    pub(crate) samples: Option<String>,
}

/// Encodes a record's columns (shared by every storage, so that all store the same text).
pub(crate) fn encode(space: &SearchSpace, record: &Record) -> Result<Encoded, String> {
    let values = space.values(&record.config);
    let params: Vec<(&str, Json)> = space
        .params()
        .iter()
        .zip(&values)
        .map(|(p, v)| (p.name(), v.to_json()))
        .collect();
    let params_json = serde_json::to_string(&params).map_err(|e| e.to_string())?;
    let (status, metric_values, reason) = match &record.outcome {
        Outcome::Ok { values, .. } => ("ok", values.as_slice(), None),
        Outcome::Failed { kind, reason, .. } => (kind.name(), &[][..], Some(reason.clone())),
    };
    let values_json = Json::Array(metric_values.iter().map(|&v| float_json(v)).collect());
    let observed = (!record.outcome.observed().is_empty())
        .then(|| serde_json::to_string(record.outcome.observed()))
        .transpose()
        .map_err(|e| e.to_string())?;
    let samples = record
        .outcome
        .samples()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok(Encoded {
        params_json,
        status,
        values_json: values_json.to_string(),
        reason,
        observed,
        samples,
    })
}

/// A configuration from its `config` column.
pub(crate) fn parse_config_key(key: &str) -> Option<Configuration> {
    if key.is_empty() {
        return Some(Vec::new());
    }
    key.split(',').map(|i| i.parse().ok()).collect()
}

/// The columns of one stored evaluation, before decoding.
pub(crate) struct RawRow {
    pub(crate) seq: i64,
    pub(crate) params_json: String,
    pub(crate) status: String,
    pub(crate) values_json: String,
    pub(crate) reason: Option<String>,
    pub(crate) times: [Option<f64>; 5],
    pub(crate) observed: Option<String>,
    pub(crate) samples: Option<String>,
    pub(crate) worker: Option<String>,
    pub(crate) device: Option<String>,
}

/// One decoded evaluation.
pub(crate) struct Stored {
    pub(crate) row: Row,
    pub(crate) outcome: Outcome,
}

/// The `config` column: value indices joined by commas.
pub(crate) fn config_key(config: &[u32]) -> String {
    config
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A metric value as JSON, exactly: finite values as numbers, others as text.
fn float_json(v: f64) -> Json {
    match serde_json::Number::from_f64(v) {
        Some(n) => Json::Number(n),
        None if v.is_nan() => Json::from("NaN"),
        None if v > 0.0 => Json::from("inf"),
        None => Json::from("-inf"),
    }
}

fn float_of(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// Replaces an ordering of item indices by the items' names; anything else (an index out of
/// range: a damaged row) is left as it is.
fn name_items(value: &mut Json, items: &[String]) {
    let Json::Array(order) = value else { return };
    let names: Option<Vec<Json>> = order
        .iter()
        .map(|i| {
            let i = usize::try_from(i.as_u64()?).ok()?;
            items.get(i).map(|n| Json::String(n.clone()))
        })
        .collect();
    if let Some(names) = names {
        *value = Json::Array(names);
    }
}

/// A parameter value from its stored JSON form ([`Value::to_json`]): a number, boolean or
/// label, or a permutation as item positions.
pub fn value_of(v: &Json) -> Option<Value> {
    match v {
        Json::Array(items) => items
            .iter()
            .map(|i| i.as_u64().and_then(|i| u32::try_from(i).ok()))
            .collect::<Option<Vec<u32>>>()
            .map(Value::Perm),
        _ => Value::from_json(v),
    }
}
