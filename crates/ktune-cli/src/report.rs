//! `ktune report`: one self-contained HTML file showing what the tuner did in a study.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use ktune_report::Options;
use ktune_store::Location;

/// Arguments of `ktune report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// The results database written by `ktune tune`, or a Kernel Tuner cache or T4 file
    /// (`.json`, `.json.gz`), or give --storage.
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
    /// A cache's or T4 file's objective (default: the one it names, else `time`).
    #[arg(long, value_name = "NAME")]
    objective: Option<String>,
    /// Configurations in the table of the best.
    #[arg(long, default_value_t = 20, value_name = "N", allow_negative_numbers = true, value_parser = crate::numbers::count)]
    top: usize,
}

pub fn run(args: &ReportArgs) -> Result<()> {
    let started = Instant::now();
    let (location, shown) = match (&args.db, &args.storage) {
        (Some(_), Some(_)) => bail!("give either a results database or --storage URL, not both"),
        (None, None) => bail!(
            "which study? give the database `ktune tune` wrote (ktune report ktune.db) or a shared study's --storage URL"
        ),
        (Some(db), None) => {
            let db = crate::results::database_path(db)?;
            (Location::Sqlite(db.to_path_buf()), db.display().to_string())
        }
        (None, Some(url)) => {
            let location = Location::parse(url)?;
            let shown = location.display();
            (location, shown)
        }
    };
    if let Some(study) = &args.study {
        ktune_core::checked_label(study).map_err(|m| anyhow::anyhow!("--study {m}"))?;
    }
    if let Some(db) = &args.db {
        crate::export::refuse_same_file(&args.out, db, "--out")?;
    }
    crate::export::refuse_database(&args.out)?;
    let study = match &location {
        Location::Sqlite(path) if ktune_problem::report::is_cache(path) => {
            ktune_problem::report::study_from_file(path, args.objective.as_deref())?
        }
        _ => ktune_problem::report::study_for_report(&location, args.study.as_deref(), &shown)?,
    };
    for note in &study.notes {
        note!("note: {note}");
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let options = Options {
        max_points: args.max_points.max(1),
        top: args.top.max(1),
        generator: format!("ktune {}", env!("CARGO_PKG_VERSION")),
        generated: ktune_core::utc_text(now),
        live_script: None,
    };
    let html = ktune_report::render(&study, &options)?;
    crate::export::write_whole(&args.out, &html)?;
    note!(
        "wrote {} ({} evaluations, {:.0} KiB) in {:.2} s",
        args.out.display(),
        study.rows.len(),
        html.len() as f64 / 1024.0,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
