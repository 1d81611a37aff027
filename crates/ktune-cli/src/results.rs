//! `ktune results`: list, filter, export and re-rank what `ktune tune` stored, and list the
//! studies of a storage.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use ktune_core::{Direction, FailureKind};
use ktune_space::SearchSpace;
use ktune_store::{DIRECTION_KEY, Row, Store};

use crate::spec::{open_spec, read_spec};
use serde_json::json;

/// The `meta` key of the latest re-ranking.
pub(crate) const RERANK_KEY: &str = "rerank";

/// A re-ranking as stored and printed: configurations by their values.
pub(crate) fn reranking_json(space: &SearchSpace, r: &ktune_core::Reranking) -> serde_json::Value {
    let finalists: Vec<serde_json::Value> = r
        .finalists
        .iter()
        .map(|f| {
            let s = f.summary();
            // As the evaluations store them (name, value): `ktune export` takes the winner.
            let values: Vec<serde_json::Value> = space
                .params()
                .iter()
                .zip(space.values(&f.config))
                .map(|(p, v)| json!([p.name(), v.to_json()]))
                .collect();
            json!({
                "configuration": space.describe(&f.config),
                "values": values,
                "rank_before": f.rank_before,
                "before": f.before,
                "after": f.after(),
                "failure": match &f.outcome {
                    ktune_core::Outcome::Failed { reason, .. } => Some(reason.clone()),
                    ktune_core::Outcome::Ok { .. } => None,
                },
                "summary": s,
                "samples": f.outcome.samples(),
            })
        })
        .collect();
    json!({
        "rounds": r.rounds,
        "winner_changed": r.winner_changed(),
        "finalists": finalists,
    })
}

/// A stored re-ranking as a table.
pub(crate) fn reranking_text(r: &serde_json::Value, objective: &str) -> String {
    let mut out = format!(
        "re-ranked after {} interleaved rounds (95% intervals):\n{:>4}  {:>6}  {:>14}  {:>14}  {:>18}  configuration\n",
        r["rounds"], "rank", "before", objective, "in the run", "interval"
    );
    let finalists = r["finalists"].as_array().cloned().unwrap_or_default();
    for (i, f) in finalists.iter().enumerate() {
        let after = f["after"]
            .as_f64()
            .map_or_else(|| "failed".to_string(), |v| format!("{v:.6}"));
        let interval = match (
            f["summary"]["ci_low"].as_f64(),
            f["summary"]["ci_high"].as_f64(),
        ) {
            (Some(lo), Some(hi)) => format!("[{lo:.5}, {hi:.5}]"),
            _ => "-".into(),
        };
        out.push_str(&format!(
            "{:>4}  {:>6}  {:>14}  {:>14.6}  {:>18}  {}\n",
            i + 1,
            f["rank_before"].as_u64().map_or(0, |r| r + 1),
            after,
            f["before"].as_f64().unwrap_or(f64::NAN),
            interval,
            f["configuration"].as_str().unwrap_or("")
        ));
    }
    if let Some(first) = finalists.first() {
        if r["winner_changed"].as_bool() == Some(true) {
            out.push_str(&format!(
                "the winner changed: {} (ranked {} in the run)\n",
                first["configuration"].as_str().unwrap_or(""),
                first["rank_before"].as_u64().map_or(0, |r| r + 1)
            ));
        } else {
            out.push_str("the winner stands\n");
        }
    }
    out
}

/// Arguments of `ktune results`.
#[derive(clap::Args)]
pub struct ResultsArgs {
    /// The results database written by `ktune tune` (or give --storage).
    db: Option<PathBuf>,
    /// A shared study's storage: sqlite:///path/study.db or postgresql://user@host/db
    /// (with libpq's TLS parameters, e.g. ?sslmode=verify-full&sslrootcert=ca.pem).
    #[arg(long, value_name = "URL")]
    storage: Option<String>,
    /// The study to read, where the storage holds several.
    #[arg(long, value_name = "NAME")]
    study: Option<String>,
    /// List the storage's studies instead (evaluations, failures, best, budget, workers,
    /// when made); --format json for all fields.
    #[arg(long, conflicts_with_all = ["study", "export", "rerank", "top"])]
    studies: bool,
    /// Copy the study, every evaluation, worker and metadata, into an SQLite file
    /// (sqlite:///path/copy.db), e.g. to take a PostgreSQL study home.
    #[arg(long, value_name = "URL")]
    export: Option<String>,
    /// Only successful (`ok`) or failed (`failed`) evaluations.
    #[arg(long, value_parser = ["all", "ok", "failed"], default_value = "all")]
    status: String,
    /// Only the best N (successful) evaluations.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::numbers::count)]
    top: Option<usize>,
    /// A study of several objectives: only its Pareto front (the successful evaluations no
    /// other one beats on every objective), by the first objective.
    #[arg(long, conflicts_with_all = ["top", "rerank"])]
    pareto: bool,
    /// A study of several objectives: only the evaluation a goal picks, e.g. "energy within
    /// 5% of time" (the least energy among those at most 5% slower than the fastest) or
    /// "weighted time=1, energy=0.5" (each objective relative to its best).
    #[arg(long, value_name = "GOAL", conflicts_with_all = ["top", "rerank", "pareto"])]
    goal: Option<String>,
    /// Output format.
    #[arg(long, value_parser = ["table", "csv", "json", "t4", "cache"], default_value = "table")]
    format: String,
    /// Write to this file instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Measure the best K stored configurations again, interleaved (A B C A B C ...), with
    /// the runner of the spec, and report (and store) their final order.
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = crate::numbers::count)]
    rerank: Option<usize>,
    /// Interleaved rounds of the re-ranking.
    #[arg(long, default_value_t = 10, value_name = "N", allow_negative_numbers = true, value_parser = crate::numbers::count)]
    rerank_rounds: usize,
    /// The spec to re-measure with (default: the one `ktune tune` stored in the database).
    #[arg(long)]
    spec: Option<PathBuf>,
}

/// Where `ktune results` reads: an SQLite file, or a copy of a PostgreSQL study in a
/// temporary one (so that listing, exports and re-ranking share one code path).
struct Source {
    path: PathBuf,
    study: Option<String>,
    /// What the user named, for messages.
    shown: String,
    /// The study as copied out of PostgreSQL, and the folder of its temporary file.
    copied: Option<(ktune_store::StudyDump, tempfile::TempDir)>,
}

fn source(args: &ResultsArgs) -> Result<Source> {
    open_source(
        args.db.as_ref(),
        args.storage.as_deref(),
        args.study.as_deref(),
    )
}

/// A results database given as a path, refused where it is a storage URL (which would be
/// taken for a file's name, and said back with its password).
pub(crate) fn database_path(db: &Path) -> Result<&Path> {
    let text = db.to_string_lossy();
    // libpq's key-value form: `host=h dbname=d password=p`.
    let key_values = text.contains('=') && text.contains(' ') && !db.exists();
    if text.contains("://") || key_values {
        bail!(
            "`{}` is a storage URL, not a file: give it as --storage URL",
            ktune_store::redact(&text)
        );
    }
    Ok(db)
}

/// Where a study named by a results database or `--storage URL` (and `--study`) is read.
fn open_source(db: Option<&PathBuf>, storage: Option<&str>, study: Option<&str>) -> Result<Source> {
    // Names are checked as `ktune tune` checks them, so none reaches a message raw.
    if let Some(study) = study {
        ktune_core::checked_label(study).map_err(|m| anyhow::anyhow!("--study {m}"))?;
    }
    let study = study.map(str::to_string);
    match (db, storage) {
        (Some(_), Some(_)) => {
            bail!("give either a results database or --storage URL, not both")
        }
        (None, None) => bail!(
            "which results? give the database `ktune tune` wrote (ktune results ktune.db) or a shared study's --storage URL"
        ),
        (Some(db), None) => Ok(Source {
            path: database_path(db)?.to_path_buf(),
            study,
            shown: db.display().to_string(),
            copied: None,
        }),
        (None, Some(url)) => match ktune_store::Location::parse(url)? {
            ktune_store::Location::Sqlite(path) => Ok(Source {
                shown: path.display().to_string(),
                path,
                study,
                copied: None,
            }),
            location => {
                let dump = location.dump_study(study.as_deref())?;
                let dir = tempfile::tempdir().context("cannot make a temporary folder")?;
                let path = dir.path().join("study.db");
                Store::import(&path, &dump)?;
                Ok(Source {
                    path,
                    study: Some(dump.name.clone()),
                    shown: format!("{} (study `{}`)", location.display(), dump.name),
                    copied: Some((dump, dir)),
                })
            }
        },
    }
}

/// A study opened for reading, with a warning where only an older state of it can be read.
fn read_study(path: &std::path::Path, study: Option<&str>) -> Result<Store> {
    let store = Store::open_existing_study(path, study)?;
    note_older_state(&store);
    Ok(store)
}

/// Says so where `store` reads an older state of its database than its writers see.
fn note_older_state(store: &Store) {
    if !store.older_state() {
        return;
    }
    let place = store.path().display();
    note!(
        "warning: {place}: its latest results are still in its write-ahead log ({place}-wal), \
         which SQLite reads only for a user who can write into its folder; shown is the state \
         before them (they move into the file when a process that can write there opens it: \
         a tuning run ending, or `ktune results` run by the file's owner)"
    );
}

/// `ktune results … --export sqlite:///file.db`.
fn export_study(from: &Source, to: &str) -> Result<()> {
    let ktune_store::Location::Sqlite(target) = ktune_store::Location::parse(to)? else {
        bail!(
            "--export {}: studies are exported to SQLite files (sqlite:///path/copy.db)",
            ktune_store::redact(to)
        );
    };
    let dump = match &from.copied {
        Some((dump, _)) => dump.clone(),
        None => read_study(&from.path, from.study.as_deref())?.dump()?,
    };
    Store::import(&target, &dump)?;
    note!(
        "copied study `{}` ({} evaluations, {} workers) from {} to {}",
        dump.name,
        dump.evaluations.len(),
        dump.workers.len(),
        from.shown,
        target.display()
    );
    Ok(())
}

pub fn results(args: &ResultsArgs) -> Result<()> {
    if args.studies {
        return list_studies(args);
    }
    let from = source(args)?;
    if let Some(to) = &args.export {
        return export_study(&from, to);
    }
    if let Some(k) = args.rerank {
        if from.copied.is_some() {
            bail!(
                "--rerank stores its result with the study, which needs a file: copy the study out first (--export sqlite:///study.db) and re-rank that"
            );
        }
        return rerank_stored(args, &from, k);
    }
    let store = read_study(&from.path, from.study.as_deref())?;
    let fingerprint = store.fingerprint()?;
    let objective = fingerprint.objective.clone();
    // As tuned (a spec may maximise a metric whose name suggests minimising); older
    // databases did not say, so guess from the name.
    let direction = match store.meta(DIRECTION_KEY)?.as_deref() {
        Some("maximize") => Direction::Maximize,
        Some("minimize") => Direction::Minimize,
        _ => Direction::guess(&objective),
    };
    let objectives: Vec<ktune_core::Metric> = match store.meta(ktune_core::OBJECTIVES_KEY)? {
        Some(text) => serde_json::from_str(&text)
            .with_context(|| format!("{}: the study's objectives cannot be read", from.shown))?,
        None => Vec::new(),
    };
    let mut rows: Vec<Row> = store.rows()?;
    match args.status.as_str() {
        "ok" => rows.retain(|r| r.status == "ok"),
        "failed" => rows.retain(|r| r.status != "ok"),
        _ => {}
    }
    if args.pareto {
        if objectives.len() < 2 {
            bail!(
                "--pareto: {} has one objective (`{objective}`); the Pareto front is for a study of several (`objectives = [...]` in the spec's [runner])",
                from.shown
            );
        }
        rows = pareto_rows(rows, &objectives);
    }
    if let Some(text) = &args.goal {
        if objectives.len() < 2 {
            bail!(
                "--goal: {} has one objective (`{objective}`); a goal picks among several (`objectives = [...]` in the spec's [runner])",
                from.shown
            );
        }
        let goal = ktune_core::pareto::Goal::parse(text, &objectives)?;
        let points: Vec<Option<Vec<f64>>> = rows
            .iter()
            .map(|r| (r.status == "ok").then(|| r.metrics.clone()))
            .collect();
        let directions: Vec<Direction> = objectives.iter().map(|m| m.direction).collect();
        let picked = goal.pick(&points, &directions);
        rows = picked.map(|i| rows.swap_remove(i)).into_iter().collect();
    }
    // The other objectives go with what the runner observed, by name: every export format
    // carries them there.
    for r in &mut rows {
        for (m, v) in objectives.iter().zip(&r.metrics).skip(1) {
            r.observed.insert(m.name.clone(), json!(v));
        }
    }
    if let Some(n) = args.top {
        rows.retain(|r| r.objective.is_some());
        rows.sort_by(|a, b| {
            direction
                .to_min(a.objective.unwrap_or(f64::NAN))
                .total_cmp(&direction.to_min(b.objective.unwrap_or(f64::NAN)))
        });
        rows.truncate(n);
    }
    let text = match args.format.as_str() {
        "csv" => ktune_store::to_csv(&rows, &objective),
        "json" => serde_json::to_string_pretty(&ktune_store::to_json(&rows))?,
        "cache" => {
            let (kernel_name, device_name, problem_size) =
                ktune_problem::export::cache_header(store.study(), &fingerprint, &store.workers()?);
            serde_json::to_string_pretty(&ktune_store::to_kernel_tuner_cache(
                &rows,
                &objective,
                &ktune_store::CacheHeader {
                    kernel_name: &kernel_name,
                    device_name: &device_name,
                    problem_size: problem_size.as_deref(),
                },
            ))?
        }
        "t4" => {
            let names: Vec<&str> = match objectives.len() {
                0 | 1 => vec![objective.as_str()],
                _ => objectives.iter().map(|m| m.name.as_str()).collect(),
            };
            serde_json::to_string_pretty(&t4(&rows, &names))?
        }
        _ => {
            let header = match store.meta(ktune_store::UNIT_KEY)? {
                Some(unit) => format!("{objective} ({unit})"),
                None => objective.clone(),
            };
            let others: Vec<&str> = objectives.iter().skip(1).map(|m| m.name.as_str()).collect();
            let mut text = table(&rows, &header, &others);
            if let Some(r) = store.meta(RERANK_KEY)?
                && let Ok(r) = serde_json::from_str::<serde_json::Value>(&r)
            {
                text.push('\n');
                text.push_str(&reranking_text(&r, &objective));
            }
            // Which earlier measurements the study started from (`--prior`, `[transfer]`).
            if let Some(p) = store.meta(ktune_core::PRIORS_KEY)?
                && let Ok(priors) = serde_json::from_str::<Vec<ktune_core::PriorFact>>(&p)
                && !priors.is_empty()
            {
                text.push_str("\npriors of this study:\n");
                for prior in priors {
                    text.push_str(&format!("  {prior}\n"));
                }
            }
            text
        }
    };
    emit(args.out.as_deref(), &text)
}

/// `ktune results --studies`: the studies of a storage, one line each.
fn list_studies(args: &ResultsArgs) -> Result<()> {
    let location = match (&args.db, &args.storage) {
        (Some(_), Some(_)) => bail!("give either a results database or --storage URL, not both"),
        (None, None) => bail!(
            "whose studies? give a database (ktune results ktune.db --studies) or a --storage URL"
        ),
        (Some(db), None) => ktune_store::Location::Sqlite(db.clone()),
        (None, Some(url)) => ktune_store::Location::parse(url)?,
    };
    let studies = match &location {
        ktune_store::Location::Sqlite(path) => {
            let store = Store::open_read(path)?;
            note_older_state(&store);
            store.summaries()?
        }
        postgres => postgres.studies()?,
    };
    let text = match args.format.as_str() {
        "json" => serde_json::to_string_pretty(&studies)?,
        "table" => studies_table(&studies),
        other => bail!("--studies lists as a table or as json, not as {other}"),
    };
    emit(args.out.as_deref(), &text)
}

fn studies_table(studies: &[ktune_store::StudySummary]) -> String {
    let width = studies
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut out = format!(
        "{:<width$}  {:>11}  {:>6}  {:>14}  {:<9}  {:>6}  {:>7}  created (UTC)\n",
        "study", "evaluations", "failed", "best", "direction", "budget", "workers"
    );
    for s in studies {
        let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        out.push_str(&format!(
            "{:<width$}  {:>11}  {:>6}  {:>14}  {:<9}  {:>6}  {:>7}  {}\n",
            s.name,
            s.evaluations,
            s.failed,
            or_dash(s.best.map(|b| format!("{b:.6}"))),
            or_dash(s.direction.clone()),
            or_dash(s.budget.map(|b| b.to_string())),
            s.workers,
            or_dash(s.created.map(utc)),
        ));
    }
    if studies.is_empty() {
        out.push_str("(no studies)\n");
    }
    out
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM` in UTC.
fn utc(seconds: f64) -> String {
    ktune_core::utc_text(seconds)[..16].replace('T', " ")
}

/// `ktune results --rerank K`: the stored best K measured again with the spec's runner.
fn rerank_stored(args: &ResultsArgs, from: &Source, k: usize) -> Result<()> {
    if k == 0 {
        bail!(
            "--rerank 0 re-measures nothing: give the number of best configurations, e.g. --rerank 5"
        );
    }
    // Read-only first: a missing or foreign file is refused before anything is created.
    let existing = Store::open_existing_study(&from.path, from.study.as_deref())?;
    let study = existing.study().to_string();
    let spec_path = match &args.spec {
        Some(p) => p.clone(),
        None => match existing.meta("spec")? {
            Some(p) => PathBuf::from(p),
            None => bail!(
                "`{}` does not say which spec it was tuned with: give --spec <ktune.toml>",
                from.shown
            ),
        },
    };
    drop(existing);
    let problem = read_spec(&spec_path)?;
    let (space, opened) = open_spec(&problem, true, f64::INFINITY)?;
    let mut runner = opened.runner;
    let objective = runner.metrics()[0].clone();
    let fingerprint = problem.fingerprint(&space, &objective.name);
    let mut store = Store::open_study(&from.path, &study, &fingerprint).with_context(|| {
        format!(
            "re-ranking needs the spec the database was tuned with (`{}`)",
            spec_path.display()
        )
    })?;
    let records = store.records(&space)?;
    if !records.iter().any(|r| r.outcome.objective().is_some()) {
        bail!("`{}` has no successful evaluation to re-rank", from.shown);
    }
    note!(
        "re-ranking the best {k} of {} stored configurations: {} interleaved rounds",
        records.len(),
        args.rerank_rounds
    );
    let r = ktune_core::rerank(
        &space,
        runner.as_mut(),
        &records,
        objective.direction,
        k,
        args.rerank_rounds,
    )?;
    let stored = reranking_json(&space, &r);
    store.set_meta(RERANK_KEY, &stored.to_string())?;
    let text = match args.format.as_str() {
        "json" => serde_json::to_string_pretty(&stored)?,
        _ => reranking_text(&stored, &objective.name),
    };
    emit(args.out.as_deref(), &text)
}

/// The successful rows no other one dominates on `objectives` (each row's first metrics),
/// best first objective first.
fn pareto_rows(rows: Vec<Row>, objectives: &[ktune_core::Metric]) -> Vec<Row> {
    let values: Vec<Option<&[f64]>> = rows
        .iter()
        .map(|r| (r.status == "ok").then_some(r.metrics.as_slice()))
        .collect();
    let front = ktune_core::pareto::front_of(&values, objectives);
    let mut rows: Vec<Option<Row>> = rows.into_iter().map(Some).collect();
    front.into_iter().filter_map(|i| rows[i].take()).collect()
}

/// The rows as a table: the objective, and the other objectives of a study of several.
fn table(rows: &[Row], objective: &str, others: &[&str]) -> String {
    // Repeated measurements add their count and the interval's half-width.
    let with_samples = rows.iter().any(|r| r.samples.is_some());
    let stats = |a: &str, b: &str| {
        if with_samples {
            format!("  {a:>9}  {b:>5}")
        } else {
            String::new()
        }
    };
    let other_header: String = others.iter().map(|o| format!("  {o:>14}")).collect();
    let mut out = format!(
        "{:>5}  {:<10}  {:>14}{other_header}{}  configuration\n",
        "seq",
        "status",
        objective,
        stats("±95%", "n")
    );
    for r in rows {
        let config = r
            .params
            .iter()
            .map(|(n, v)| format!("{n}={}", ktune_store::value_display(v)))
            .collect::<Vec<_>>()
            .join(", ");
        // A failure's reason goes last, after the configuration, not in the value column.
        let (value, reason) = match r.objective {
            Some(v) => (format!("{v:.6}"), String::new()),
            None => (
                "-".to_string(),
                r.reason
                    .as_deref()
                    .and_then(|t| t.lines().next())
                    .map_or(String::new(), |t| format!("   ({t})")),
            ),
        };
        let (ci, n) = match (r.objective, r.summary()) {
            (Some(_), Some(s)) => {
                let half = s.relative_half_width();
                let aborted = r.samples.as_ref().is_some_and(|x| x.aborted);
                (
                    if half.is_finite() {
                        format!("{:.2}%", 100.0 * half)
                    } else {
                        "-".into()
                    },
                    format!("{}{}", s.n, if aborted { "*" } else { "" }),
                )
            }
            (Some(_), None) => ("-".into(), "-".into()),
            (None, _) => (String::new(), String::new()),
        };
        let other_values: String = (1..=others.len())
            .map(|i| match (r.objective, r.metrics.get(i)) {
                (Some(_), Some(v)) => format!("  {v:>14.6}"),
                (Some(_), None) => format!("  {:>14}", "-"),
                (None, _) => format!("  {:>14}", ""),
            })
            .collect();
        out.push_str(&format!(
            "{:>5}  {:<10}  {:>14}{other_values}{}  {config}{reason}\n",
            r.seq,
            r.status,
            value,
            stats(&ci, &n)
        ));
    }
    if rows
        .iter()
        .any(|r| r.samples.as_ref().is_some_and(|s| s.aborted))
    {
        out.push_str("* repetition stopped early: clearly worse than the best so far\n");
    }
    out
}

/// Writes `text` to `out`, or to standard output.
fn emit(out: Option<&Path>, text: &str) -> Result<()> {
    match out {
        Some(p) => crate::export::write_whole(p, text),
        None => {
            out!("{text}")?;
            Ok(())
        }
    }
}

/// T4 results (schema 1.0.0) from stored rows, through the same entries as
/// `ktune_core::t4::export`.
fn t4(rows: &[Row], objectives: &[&str]) -> serde_json::Value {
    let results = rows
        .iter()
        .map(|r| {
            let timings = ktune_core::Timings {
                compile: r.compile_s,
                benchmark: r.benchmark_s,
                verification: r.verification_s,
                framework: r.framework_s,
            };
            let outcome = match (r.status.as_str(), r.objective) {
                ("ok", Some(_)) if objectives.len() > 1 => ktune_core::Outcome::ok(
                    r.metrics.iter().copied().take(objectives.len()).collect(),
                    timings,
                ),
                ("ok", Some(v)) => ktune_core::Outcome::ok(vec![v], timings),
                (status, _) => ktune_core::Outcome::failed(
                    FailureKind::from_name(status).unwrap_or(FailureKind::Runtime),
                    r.reason.clone().unwrap_or_default(),
                    timings,
                ),
            };
            let configuration = r.params.iter().cloned().collect();
            ktune_core::t4::entry(configuration, objectives, &outcome, r.clock_s)
        })
        .collect();
    ktune_core::t4::document(results)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates_match_the_calendar() {
        for (seconds, date) in [
            (0.0, "1970-01-01 00:00"),
            (951_782_400.0, "2000-02-29 00:00"),
            (1_795_489_826.7, "2026-11-24 03:10"),
            (-31_622_400.0, "1968-12-31 00:00"),
        ] {
            assert_eq!(super::utc(seconds), date, "{seconds}");
        }
    }
}
