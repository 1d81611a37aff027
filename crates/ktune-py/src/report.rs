//! `ktune.report(source, path)` and `Study.report(path)`: the HTML report `ktune report`
//! writes, from Python.

use std::path::{Path, PathBuf};

use ktune_core::Record;
use ktune_problem::StudyPlace;
use ktune_space::SearchSpace;
use ktune_store::{Location, Row};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::KtuneError;

/// Writes the report of the study in `source` (an SQLite file written by `ktune tune` or a
/// `Study` with a storage, a Kernel Tuner cache or T4 file, or a storage URL: `sqlite:///…`,
/// `postgresql://…`) to `path`, and
/// returns the path. `study` names the study where the storage holds several; `max_points`
/// successful measurements are drawn one by one (beyond, the figure is decimated and says
/// so); `top` configurations are listed as the best.
#[pyfunction]
#[pyo3(signature = (source, path = PathBuf::from("report.html"), *, study = None, max_points = 4000, top = 20))]
pub(crate) fn report(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    path: PathBuf,
    study: Option<&str>,
    max_points: usize,
    top: usize,
) -> PyResult<String> {
    let text: String = match source.extract::<PathBuf>() {
        Ok(p) => p.to_string_lossy().into_owned(),
        Err(_) => {
            return Err(PyValueError::new_err(format!(
                "source is {}, not a path or a storage URL",
                crate::convert::short_repr(source)
            )));
        }
    };
    let location = if text.contains("://") {
        Location::parse(&text).map_err(|e| KtuneError::new_err(e.to_string()))?
    } else {
        Location::Sqlite(PathBuf::from(&text))
    };
    let shown = location.display();
    let gathered = py
        .detach(|| match &location {
            Location::Sqlite(path) if ktune_problem::report::is_cache(path) => {
                ktune_problem::report::study_from_file(path, None)
            }
            _ => ktune_problem::report::study_for_report(&location, study, &shown),
        })
        .map_err(|e| KtuneError::new_err(e.to_string()))?;
    write(py, &gathered, &path, max_points, top)
}

/// The report of a stored study (every worker's records, the study's facts), or of one kept in
/// memory (this object's records).
pub(crate) fn of_study(
    py: Python<'_>,
    place: Option<&StudyPlace>,
    memory: Option<(&SearchSpace, &[Record], &str, ktune_core::Direction)>,
    path: &Path,
    max_points: usize,
    top: usize,
) -> PyResult<String> {
    let study = match (place, memory) {
        (Some(place), _) => {
            let (location, name) = match place {
                StudyPlace::Single(p) => (Location::Sqlite(p.clone()), None),
                StudyPlace::Shared { location, study } => (location.clone(), Some(study.clone())),
            };
            let shown = location.display();
            py.detach(|| {
                ktune_problem::report::study_for_report(&location, name.as_deref(), &shown)
            })
            .map_err(|e| KtuneError::new_err(e.to_string()))?
        }
        (None, Some((space, records, objective, direction))) => ktune_report::Study {
            name: "in memory".into(),
            source: "a Study without a storage (this Python process)".into(),
            ..memory_study(space, records, objective, direction)
        },
        (None, None) => return Err(KtuneError::new_err("the study is not open")),
    };
    write(py, &study, path, max_points, top)
}

/// A session's records as the report's rows.
fn rows(space: &SearchSpace, records: &[Record]) -> Vec<Row> {
    records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let params = space
                .params()
                .iter()
                .zip(space.values(&r.config))
                .map(|(p, v)| (p.name().to_string(), v.to_json()))
                .collect();
            ktune_problem::report::row(i, params, &r.outcome, r.clock, None)
        })
        .collect()
}

/// A study kept in memory, as the report reads it.
fn memory_study(
    space: &SearchSpace,
    records: &[Record],
    objective: &str,
    direction: ktune_core::Direction,
) -> ktune_report::Study {
    ktune_report::Study {
        meta: vec![
            (ktune_core::OBJECTIVE_KEY.into(), objective.to_string()),
            (
                ktune_core::DIRECTION_KEY.into(),
                direction.name().to_string(),
            ),
        ],
        rows: rows(space, records),
        ..ktune_report::Study::default()
    }
}

fn write(
    py: Python<'_>,
    study: &ktune_report::Study,
    path: &Path,
    max_points: usize,
    top: usize,
) -> PyResult<String> {
    let options = ktune_report::Options {
        max_points: max_points.max(1),
        top: top.max(1),
        generator: format!("ktune {} (Python)", env!("CARGO_PKG_VERSION")),
        generated: ktune_core::utc_text(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        ),
        live_script: None,
    };
    let html = py
        .detach(|| ktune_report::render(study, &options))
        .map_err(|e| KtuneError::new_err(e.to_string()))?;
    // Through a file beside it, so that a failure leaves no half-written report.
    let partial = path.with_extension("html.partial");
    std::fs::write(&partial, html)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&partial);
            pyo3::exceptions::PyOSError::new_err(format!("cannot write `{}`: {e}", path.display()))
        })?;
    Ok(path.display().to_string())
}

/// A short HTML view of `records` for a notebook cell.
pub(crate) fn fragment(
    space: &SearchSpace,
    records: &[Record],
    objective: &str,
    direction: ktune_core::Direction,
) -> String {
    ktune_report::fragment(&memory_study(space, records, objective, direction), 5)
}
