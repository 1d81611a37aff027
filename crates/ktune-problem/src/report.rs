//! A study gathered for `ktune report` (and Python's `ktune.report`): its rows, metadata and
//! workers from SQLite or PostgreSQL, and the spec's default configuration where the spec it
//! names can still be read.

use std::path::Path;

use ktune_report::Study;
use ktune_store::{Location, Store, StoreError};

/// Why a study could not be read for a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportSourceError {
    /// The storage refused.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The PostgreSQL study could not be copied into a temporary SQLite file.
    #[error("cannot make a temporary copy of the study: {0}")]
    Temporary(std::io::Error),
    /// The Kernel Tuner cache cannot be read.
    #[error(transparent)]
    Cache(#[from] ktune_space::SpaceError),
    /// The file cannot be read, or is no JSON.
    #[error("cannot read `{path}`: {message}")]
    File {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
}

/// A Kernel Tuner cache or a T4 results file (a JSON document with a `results` array) as a
/// study.
pub fn study_from_file(path: &Path, objective: Option<&str>) -> Result<Study, ReportSourceError> {
    if path.to_string_lossy().ends_with(".json") {
        let text = std::fs::read_to_string(path).map_err(|e| ReportSourceError::File {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        // A T4 document: its `results`; anything else is read (and refused) as a cache.
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text)
            && let Some(results) = doc.get("results").and_then(serde_json::Value::as_array)
        {
            return Ok(study_from_t4(path, results, objective.unwrap_or("time")));
        }
    }
    study_from_cache(path, objective)
}

/// A T4 document's results as a study, in their order.
fn study_from_t4(path: &Path, results: &[serde_json::Value], objective: &str) -> Study {
    let mut clock = 0.0;
    let rows = results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let outcome = ktune_core::t4::result_outcome(r, objective);
            let t = *outcome.timings();
            clock = r
                .get("ktune_clock_seconds")
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(clock + t.total());
            row(i, configuration_of(r), &outcome, clock, None)
        })
        .collect();
    Study {
        name: path
            .file_name()
            .map_or("t4".into(), |n| n.to_string_lossy().into_owned()),
        source: path.display().to_string(),
        meta: vec![
            (ktune_core::OBJECTIVE_KEY.to_string(), objective.to_string()),
            (
                ktune_core::DIRECTION_KEY.to_string(),
                ktune_core::Direction::guess(objective).name().to_string(),
            ),
            ("format".to_string(), "T4".to_string()),
        ],
        rows,
        notes: vec!["a T4 file records no default configuration and no workers".into()],
        ..Study::default()
    }
}

/// A T4 result's `configuration`, names and values in the file's order.
fn configuration_of(r: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    r.get("configuration")
        .and_then(serde_json::Value::as_object)
        .map(|c| c.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// A report row of an outcome (read from a file, or held by a session).
pub fn row(
    seq: usize,
    params: Vec<(String, serde_json::Value)>,
    outcome: &ktune_core::Outcome,
    clock: f64,
    device: Option<String>,
) -> ktune_store::Row {
    let t = *outcome.timings();
    let (status, reason) = match outcome {
        ktune_core::Outcome::Ok { .. } => ("ok".to_string(), None),
        ktune_core::Outcome::Failed { kind, reason, .. } => {
            (kind.name().to_string(), Some(reason.clone()))
        }
    };
    ktune_store::Row {
        seq: seq as i64,
        params,
        status,
        objective: outcome.objective(),
        metrics: match outcome {
            ktune_core::Outcome::Ok { values, .. } => values.clone(),
            ktune_core::Outcome::Failed { .. } => Vec::new(),
        },
        reason,
        compile_s: t.compile,
        benchmark_s: t.benchmark,
        verification_s: t.verification,
        framework_s: t.framework,
        clock_s: clock,
        observed: Default::default(),
        samples: None,
        worker: None,
        device,
    }
}

/// Whether `path` names a Kernel Tuner cache or a T4 file (`.json`, `.json.gz`) rather than a
/// study.
pub fn is_cache(path: &Path) -> bool {
    let name = path.to_string_lossy();
    name.ends_with(".json") || name.ends_with(".json.gz")
}

/// A Kernel Tuner cache file as a study, its records in the file's order (the order a tuning
/// run wrote them), the clock their recorded compile and benchmark times added up.
fn study_from_cache(path: &Path, objective: Option<&str>) -> Result<Study, ReportSourceError> {
    let data = ktune_space::spec::read_cache_file(path)?;
    let objective = objective
        .map(str::to_string)
        .or_else(|| data.objective.clone())
        .unwrap_or_else(|| "time".into());
    let names: Vec<String> = data
        .parameters
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    let mut clock = 0.0;
    let rows = data
        .configurations
        .iter()
        .zip(&data.records)
        .enumerate()
        .map(|(i, (config, record))| {
            let outcome = ktune_runners::simulate::outcome_of(record, &objective);
            clock += outcome.timings().total();
            let params = names
                .iter()
                .zip(&data.parameters)
                .zip(config)
                .map(|((n, p), &v)| {
                    let value = p
                        .values()
                        .get(v as usize)
                        .map_or(serde_json::Value::Null, |x| x.to_json());
                    (n.clone(), value)
                })
                .collect();
            row(i, params, &outcome, clock, data.device_name.clone())
        })
        .collect();
    let mut meta = vec![
        (ktune_core::OBJECTIVE_KEY.to_string(), objective.clone()),
        (
            ktune_core::DIRECTION_KEY.to_string(),
            ktune_core::Direction::guess(&objective).name().to_string(),
        ),
        ("format".to_string(), "Kernel Tuner cache".to_string()),
    ];
    for (key, value) in [("device", &data.device_name), ("kernel", &data.kernel_name)] {
        if let Some(v) = value {
            meta.push((key.to_string(), v.clone()));
        }
    }
    let mut notes: Vec<String> = data.warnings.clone();
    notes.push(
        "a cache records no default configuration, no workers and no clock: the wall-time axis adds up each record's compile and benchmark times".into(),
    );
    Ok(Study {
        name: path
            .file_name()
            .map_or("cache".into(), |n| n.to_string_lossy().into_owned()),
        source: path.display().to_string(),
        meta,
        rows,
        notes,
        ..Study::default()
    })
}

/// The study `name` (the only one where `None`) of `location`, shown as `shown`.
pub fn study_for_report(
    location: &Location,
    name: Option<&str>,
    shown: &str,
) -> Result<Study, ReportSourceError> {
    // Rows are read from SQLite: a PostgreSQL study is copied into a temporary file first,
    // as `ktune results` does, so both take one path.
    let (_dir, store) = match location {
        Location::Sqlite(path) => (None, Store::open_existing_study(path, name)?),
        other => {
            let dump = other.dump_study(name)?;
            let dir = tempfile::tempdir().map_err(ReportSourceError::Temporary)?;
            let store = Store::import(&dir.path().join("study.db"), &dump)?;
            (Some(dir), store)
        }
    };
    let mut notes = Vec::new();
    if store.older_state() {
        notes.push(format!(
            "only an older state of `{}` could be read: its latest results are in its write-ahead log, which SQLite reads only for a user who can write into its folder",
            store.path().display()
        ));
    }
    let dump = store.dump()?;
    let rows = store.rows()?;
    let default = match dump.meta.iter().find(|(k, _)| k == "spec") {
        Some((_, spec)) => match default_values(Path::new(spec)) {
            Ok(d) => d,
            Err(e) => {
                notes.push(format!(
                    "the default configuration is not marked: its spec `{spec}` could not be read ({e})"
                ));
                None
            }
        },
        None => {
            notes.push("the default configuration is not marked: the study names no spec".into());
            None
        }
    };
    let mut meta = dump.meta.clone();
    meta.push((
        "fingerprint".into(),
        format!(
            "{} (SHA-256 of the stored space, runner and objective)",
            crate::export::short_digest(&dump.fingerprint)
        ),
    ));
    Ok(Study {
        name: dump.name.clone(),
        source: shown.to_string(),
        created: dump.created,
        meta,
        workers: dump.workers.clone(),
        rows,
        default,
        notes,
    })
}

/// The spec's default configuration, as the evaluations store values.
fn default_values(
    spec: &Path,
) -> Result<Option<Vec<(String, serde_json::Value)>>, crate::ProblemError> {
    let problem = crate::ProblemSpec::from_path(spec)?;
    let space = problem
        .space
        .build_limited(ktune_space::DEFAULT_MAX_CHECKS)?;
    Ok(space.default_configuration().map(|c| {
        space
            .params()
            .iter()
            .zip(space.values(&c))
            .map(|(p, v)| (p.name().to_string(), v.to_json()))
            .collect()
    }))
}
