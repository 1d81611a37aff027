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
