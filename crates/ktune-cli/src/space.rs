//! `ktune space <spec>`: build a search space and describe it.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use ktune_space::spec::{SpaceSpec, SpecFormat};
use serde_json::json;

/// Arguments of `ktune space`.
#[derive(clap::Args)]
pub struct SpaceArgs {
    /// The spec: `ktune.toml`, a T1 JSON problem file, or a Kernel Tuner cache file
    /// (`.json` / `.json.gz`).
    spec: PathBuf,
    /// Print a JSON object instead of a report.
    #[arg(long)]
    json: bool,
    /// Refuse a group of linked parameters whose enumeration needs more constraint checks
    /// than this (estimated before it starts; the default, 1e9, takes up to about a minute).
    #[arg(long, default_value_t = ktune_space::DEFAULT_MAX_CHECKS, value_name = "CHECKS", allow_negative_numbers = true, value_parser = crate::numbers::limit)]
    max_enumeration: f64,
    /// Earlier measurements to use as a prior: a ktune study (its SQLite file, or a storage
    /// URL; `#study` picks one of several), a Kernel Tuner cache file (`.json` / `.json.gz`)
    /// or a T4 results file, of the same code on another device or problem size. Says how
    /// much of it maps onto this space (repeat the option for several).
    #[arg(long, value_name = "FILE|URL")]
    prior: Vec<String>,
}

pub fn run(args: &SpaceArgs) -> Result<()> {
    let started = Instant::now();
    let spec = SpaceSpec::from_path(&args.spec)?;
    let read = started.elapsed();
    let space = build_with_progress(&spec, args.max_enumeration)?;
    let rejection = space.constraint_rejection();
    let priors = args
        .prior
        .iter()
        .map(|p| prior_report(p, &space))
        .collect::<Result<Vec<_>>>()?;
    let built = Built {
        read,
        space,
        rejection,
        peak: peak_rss_bytes(),
        priors,
    };
    if args.json {
        return json_report(args, &spec, &built);
    }
    for w in &spec.warnings {
        note!("warning: {w}");
    }
    text_report(args, &spec, &built)
}

/// A space as built, with what its report says of the building.
struct Built {
    space: ktune_space::SearchSpace,
    /// The time it took to read the spec.
    read: std::time::Duration,
    /// Each constraint's share of its parameters' combinations that it rejects.
    rejection: Vec<f64>,
    /// The process's peak memory after the build.
    peak: Option<u64>,
    /// How much of each `--prior` maps onto the space.
    priors: Vec<ktune_core::MatchReport>,
}

/// How much of the prior `text` names maps onto `space`.
fn prior_report(text: &str, space: &ktune_space::SearchSpace) -> Result<ktune_core::MatchReport> {
    let context = || format!("--prior {}", ktune_store::redact(text));
    let prior = ktune_problem::PriorSource::parse(text, std::path::Path::new("."))
        .and_then(|s| s.load("time"))
        .with_context(context)?
        .prior;
    // The space alone has no objective: the prior's own direction is taken.
    let matched = prior
        .match_onto(space, prior.direction)
        .with_context(context)?;
    Ok(matched.report)
}

fn format_name(spec: &SpaceSpec) -> &'static str {
    match spec.format {
        SpecFormat::Toml => "ktune.toml",
        SpecFormat::T1 => "T1",
        SpecFormat::Cache => "Kernel Tuner cache",
    }
}

/// The report as one JSON object (`--json`).
fn json_report(args: &SpaceArgs, spec: &SpaceSpec, built: &Built) -> Result<()> {
    let space = &built.space;
    let params: Vec<_> = space
        .params()
        .iter()
        .map(|p| {
            json!({
                "name": p.name(),
                "kind": p.kind().name(),
                "size": p.len(),
                "values": p.values().iter().map(|v| v.to_json()).collect::<Vec<_>>(),
                "log": p.is_log(),
                "default": p.default_index().map(|i| p.values()[i].to_json()),
            })
        })
        .collect();
    let constraints: Vec<_> = spec
        .constraints
        .iter()
        .zip(&built.rejection)
        .map(|(c, r)| json!({"expression": c.text, "rejected_share": r}))
        .collect();
    let groups: Vec<_> = space
        .groups()
        .iter()
        .map(|g| json!({"params": g.params, "size": g.size, "cartesian_size": g.cartesian_size, "constraints": g.constraints}))
        .collect();
    let report = json!({
        "spec": args.spec.display().to_string(),
        "name": spec.name,
        "format": format_name(spec),
        "parameters": params,
        "constraints": constraints,
        "cartesian_size": space.cartesian_size(),
        "size": space.size(),
        "density": space.density(),
        "groups": groups,
        "read_seconds": built.read.as_secs_f64(),
        "build_seconds": space.build_time().as_secs_f64(),
        "memory_bytes": space.memory_bytes(),
        "peak_rss_bytes": built.peak,
        "warnings": spec.warnings,
        "priors": args.prior.iter().zip(&built.priors).map(|(path, r)| json!({
            "file": path,
            "measurements": r.measurements,
            "matched": r.matched,
            "moved": r.moved,
            "outside": r.outside,
            "invalid": r.invalid,
            "configurations": r.configurations,
            "only_in_prior": r.only_in_prior,
            "only_in_target": r.only_in_target,
        })).collect::<Vec<_>>(),
    });
    writeln!(
        std::io::stdout().lock(),
        "{}",
        serde_json::to_string_pretty(&report)?
    )?;
    Ok(())
}

/// The report as text: the parameters, the constraints, the sizes and groups, the cost.
fn text_report(args: &SpaceArgs, spec: &SpaceSpec, built: &Built) -> Result<()> {
    let space = &built.space;
    let mut out = std::io::stdout().lock();
    let title = spec.name.as_deref().unwrap_or("search space");
    writeln!(
        out,
        "{title} ({}: {})",
        format_name(spec),
        args.spec.display()
    )?;
    writeln!(out)?;
    writeln!(out, "parameters ({})", space.dims())?;
    let width = space
        .params()
        .iter()
        .map(|p| p.name().len())
        .max()
        .unwrap_or(0);
    for p in space.params() {
        let log = if p.is_log() { ", log" } else { "" };
        writeln!(
            out,
            "  {:width$}  {:<12} {:>6} {}  {}",
            p.name(),
            format!("{}{log}", p.kind().name()),
            p.len(),
            if p.len() == 1 { "value " } else { "values" },
            preview(p)
        )?;
    }
    if !spec.constraints.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "constraints ({}), each with the share of its parameters' combinations it rejects",
            spec.constraints.len()
        )?;
        for (i, (c, r)) in spec.constraints.iter().zip(&built.rejection).enumerate() {
            writeln!(out, "  {:>2}. {:>5.1}%  {}", i + 1, r * 100.0, c.text)?;
        }
    }
    sizes(&mut out, built)?;
    if !built.priors.is_empty() {
        writeln!(out)?;
        writeln!(out, "priors ({})", built.priors.len())?;
        for (path, r) in args.prior.iter().zip(&built.priors) {
            writeln!(out, "  {path}: {r}")?;
        }
    }
    Ok(())
}

/// The sizes, the groups, the build time and the memory.
fn sizes(out: &mut impl Write, built: &Built) -> Result<()> {
    let space = &built.space;
    writeln!(out)?;
    writeln!(out, "Cartesian size  {}", count(space.cartesian_size()))?;
    writeln!(out, "feasible size   {}", space.size())?;
    writeln!(out, "density         {:.3}%", space.density() * 100.0)?;
    let groups = space.groups();
    writeln!(
        out,
        "groups          {} (independent sets of parameters; the space is their product)",
        groups.len()
    )?;
    for g in &groups {
        writeln!(
            out,
            "  {:>10} of {:<10} {{{}}}",
            g.size,
            count(g.cartesian_size),
            g.params.join(", ")
        )?;
    }
    writeln!(
        out,
        "build time      {:.2} ms (reading the spec: {:.2} ms)",
        space.build_time().as_secs_f64() * 1e3,
        built.read.as_secs_f64() * 1e3
    )?;
    writeln!(
        out,
        "memory          {} held by the space{}",
        bytes(space.memory_bytes() as f64),
        match built.peak {
            Some(p) => format!(", {} peak for the process", bytes(p as f64)),
            None => String::new(),
        }
    )?;
    Ok(())
}

fn preview(p: &ktune_space::Parameter) -> String {
    let vals: Vec<String> = p.values().iter().map(|v| p.display(v)).collect();
    if vals.len() <= 8 {
        vals.join(", ")
    } else {
        format!(
            "{}, ..., {}",
            vals[..4].join(", "),
            vals[vals.len() - 2..].join(", ")
        )
    }
}

fn count(x: f64) -> String {
    if x < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.3e}")
    }
}

fn bytes(b: f64) -> String {
    if b < 1024.0 * 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    }
}

/// Peak resident set size of this process (Linux `VmHWM`), when available.
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Builds `spec`'s space; a build that takes more than a second shows its progress on
/// stderr (a bar on a terminal, a line every ten seconds in a log).
pub(crate) fn build_with_progress(
    spec: &SpaceSpec,
    max_checks: f64,
) -> Result<ktune_space::SearchSpace, ktune_space::SpaceError> {
    use std::io::IsTerminal;
    use std::time::Duration;

    let progress = ktune_space::BuildProgress::new();
    std::thread::scope(|s| {
        let build = s.spawn(|| spec.build_observed(max_checks, &progress));
        let started = Instant::now();
        let terminal = std::io::stderr().is_terminal();
        let mut bar: Option<indicatif::ProgressBar> = None;
        let mut last_line = started;
        while !build.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            if started.elapsed() < Duration::from_secs(1) {
                continue;
            }
            let percent = (progress.fraction() * 100.0) as u64;
            if terminal {
                let bar = bar.get_or_insert_with(|| {
                    let pb = indicatif::ProgressBar::new(100);
                    pb.set_style(
                        indicatif::ProgressStyle::with_template(
                            "building the search space {bar:30} {pos}% [{elapsed}]",
                        )
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                    );
                    pb
                });
                bar.set_position(percent);
            } else if last_line.elapsed() >= Duration::from_secs(10) {
                last_line = Instant::now();
                note!(
                    "building the search space: {percent}% after {:.0} s",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        build
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
