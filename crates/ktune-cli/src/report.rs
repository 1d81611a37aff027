//! `ktune report`: one self-contained HTML file showing what the tuner did in a study.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use ktune_report::{Options, Study};

use crate::results::{open_source, read_study};

/// Arguments of `ktune report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// The results database written by `ktune tune` (or give --storage).
    db: Option<PathBuf>,
    /// A shared study's storage: sqlite:///path/study.db or postgresql://user@host/db.
    #[arg(long, value_name = "URL")]
    storage: Option<String>,
    /// The study to report, where the storage holds several.
    #[arg(long, value_name = "NAME")]
    study: Option<String>,
    /// The HTML file to write.
    #[arg(short, long, default_value = "report.html")]
    out: PathBuf,
    /// Successful measurements drawn one by one; beyond, the figure is decimated (and says so).
    #[arg(long, default_value_t = 4000, value_name = "N", allow_negative_numbers = true, value_parser = crate::numbers::count)]
    max_points: usize,
    /// Configurations in the table of the best.
    #[arg(long, default_value_t = 20, value_name = "N", allow_negative_numbers = true, value_parser = crate::numbers::count)]
    top: usize,
}

pub fn run(args: &ReportArgs) -> Result<()> {
    let started = Instant::now();
    let from = open_source(
        args.db.as_ref(),
        args.storage.as_deref(),
        args.study.as_deref(),
    )?;
    let store = read_study(&from.path, from.study.as_deref())?;
    let dump = store.dump()?;
    let rows = store.rows()?;
    let mut notes = Vec::new();
    let default = match dump.meta.iter().find(|(k, _)| k == "spec") {
        Some((_, spec)) => match default_values(Path::new(spec)) {
            Ok(d) => d,
            Err(e) => {
                notes.push(format!(
                    "the default configuration is not marked: its spec `{spec}` could not be read ({e:#})"
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
            ktune_problem::export::short_digest(&dump.fingerprint)
        ),
    ));
    let study = Study {
        name: dump.name.clone(),
        source: from.shown.clone(),
        created: dump.created,
        meta,
        workers: dump.workers.clone(),
        rows,
        default,
        notes,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let options = Options {
        max_points: args.max_points.max(1),
        top: args.top.max(1),
        generator: format!("ktune {}", env!("CARGO_PKG_VERSION")),
        generated: ktune_core::utc_text(now),
    };
    let html = ktune_report::render(&study, &options)?;
    crate::export::write_whole(&args.out, &html)?;
    eprintln!(
        "wrote {} ({} evaluations, {:.0} KiB) in {:.2} s",
        args.out.display(),
        study.rows.len(),
        html.len() as f64 / 1024.0,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The spec's default configuration, as the evaluations store values.
fn default_values(spec: &Path) -> Result<Option<Vec<(String, serde_json::Value)>>> {
    let problem = ktune_problem::ProblemSpec::from_path(spec)
        .with_context(|| format!("cannot read `{}`", spec.display()))?;
    let space = crate::space::build_with_progress(&problem.space, ktune_space::DEFAULT_MAX_CHECKS)?;
    Ok(space.default_configuration().map(|c| {
        space
            .params()
            .iter()
            .zip(space.values(&c))
            .map(|(p, v)| (p.name().to_string(), v.to_json()))
            .collect()
    }))
}
