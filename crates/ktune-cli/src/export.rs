//! `ktune export`: tuned configurations for the application, from one study or many (one per
//! device and problem size): a wisdom file, a C/C++ header of `#define`s per device, and a C
//! header that selects at run time. The arguments are resolved here; the export is
//! `ktune_problem::export`'s, the formats `ktune_select`'s.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use ktune_problem::PriorSource;
use ktune_problem::export::{DefaultChoice, ExportSource, wisdom};

#[derive(Args)]
pub struct ExportArgs {
    /// The studies to export: ktune study files (`file.db`, `file.db#study`), storage URLs
    /// with `#study`, Kernel Tuner cache files or T4 files; one per device and problem size.
    #[arg(value_name = "STUDY", required_unless_present = "storage")]
    sources: Vec<String>,
    /// A shared study's storage (sqlite:///path or postgresql://...), as `ktune results`
    /// takes it; with --study for each of its studies to export (named `URL#study` in
    /// --device and --size).
    #[arg(long, value_name = "URL")]
    storage: Option<String>,
    /// A study of --storage to export; repeat for several (default: the storage's only
    /// study).
    #[arg(long, value_name = "NAME", requires = "storage")]
    study: Vec<String>,
    /// A source's device, where it does not record one (or to name it otherwise):
    /// `STUDY=NAME`, e.g. `a100.db="NVIDIA A100-SXM4-40GB"`. Repeat per source.
    #[arg(long, value_name = "STUDY=NAME")]
    device: Vec<String>,
    /// A source's problem size, where it does not record one: `STUDY=4096x4096` (one to
    /// three extents). Repeat per source.
    #[arg(long, value_name = "STUDY=SIZE")]
    size: Vec<String>,
    /// The kernel's name (the wisdom's key; default: the name the sources record, else
    /// `kernel`).
    #[arg(long)]
    kernel: Option<String>,
    /// The objective the sources are read for (a Kernel Tuner cache's metric).
    #[arg(long, default_value = "time")]
    objective: String,
    /// Export per source the configuration this goal picks from its measurements of several
    /// objectives instead of the best of --objective: `"energy within 5% of time"` (the
    /// least energy among those at most 5% slower than the fastest) or `"weighted time=1,
    /// energy=0.5"` (each relative to its best). The sources must hold those objectives (a
    /// study of several, a Kernel Tuner cache's metrics, a T4 file's measurements).
    #[arg(long, value_name = "GOAL")]
    goal: Option<String>,
    /// The configuration for devices no record matches: `robust` (least geometric-mean
    /// slowdown over the sources), a device's name (its configuration), or `none`.
    #[arg(long, default_value = "robust", value_name = "robust|DEVICE|none")]
    default: String,
    /// Write the wisdom file (JSON lines, Kernel Launcher's format 1.0) here.
    #[arg(long, value_name = "FILE")]
    wisdom: Option<PathBuf>,
    /// Write the C/C++ header of `#define`s per device (`-DTARGET_<DEVICE>`) here.
    #[arg(long, value_name = "FILE")]
    header: Option<PathBuf>,
    /// Write the single-file C header with `ktune_select(...)` over an embedded table here.
    #[arg(long, value_name = "FILE")]
    c_select: Option<PathBuf>,
}

/// `STUDY=VALUE` options by the source they name.
fn by_source<'a>(
    given: &'a [String],
    flag: &str,
    sources: &[String],
) -> Result<Vec<(usize, &'a str)>> {
    given
        .iter()
        .map(|g| {
            let Some((name, value)) = g.rsplit_once('=') else {
                bail!("{flag} {g:?}: give STUDY=VALUE (the study as named among the sources)");
            };
            let Some(i) = sources.iter().position(|s| s == name) else {
                bail!(
                    "{flag} {g:?}: `{name}` is none of the sources ({})",
                    sources.join(", ")
                );
            };
            Ok((i, value))
        })
        .collect()
}

fn parse_size(text: &str) -> Result<Vec<u64>> {
    let extents: Vec<&str> = text.split(['x', 'X', ',']).map(str::trim).collect();
    if extents.is_empty() || extents.len() > 3 {
        bail!("--size {text:?}: give one to three extents, e.g. 4096x4096");
    }
    extents
        .iter()
        .map(|e| {
            e.parse::<u64>()
                .with_context(|| format!("--size {text:?}: `{e}` is not a whole number"))
        })
        .collect()
}

/// Refuses to write `out` over `input` (`ktune report study.db -o study.db`): the output
/// would replace what it was made from.
pub(crate) fn refuse_same_file(out: &Path, input: &Path, flag: &str) -> Result<()> {
    if let (Ok(a), Ok(b)) = (std::fs::canonicalize(out), std::fs::canonicalize(input))
        && a == b
    {
        bail!(
            "{flag} `{}` is the file being read: writing there would replace it; choose another file",
            out.display()
        );
    }
    Ok(())
}

/// Refuses a path that holds an SQLite database: every file ktune writes through
/// [`write_whole`] is text, and the database is someone's measurements.
pub(crate) fn refuse_database(path: &Path) -> Result<()> {
    let mut head = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open(path)
        && std::io::Read::read_exact(&mut f, &mut head).is_ok()
        && &head == b"SQLite format 3\0"
    {
        bail!(
            "`{}` is an SQLite database (results?): ktune does not write over it; choose another file",
            path.display()
        );
    }
    Ok(())
}

/// Writes `text` to `path` through a temporary file beside it, so that a failed export
/// leaves no half-written file; never over a results database ([`refuse_database`]).
pub(crate) fn write_whole(path: &Path, text: &str) -> Result<()> {
    refuse_database(path)?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write into `{}`", dir.display()))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    // A temporary file is private (0600); what we write is for others to read and include.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    file.persist(path)
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(())
}

pub fn run(args: &ExportArgs) -> Result<()> {
    if args.wisdom.is_none() && args.header.is_none() && args.c_select.is_none() {
        bail!("nothing to write: give --wisdom FILE, --header FILE and/or --c-select FILE");
    }
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let mut named = args.sources.clone();
    if let Some(url) = &args.storage {
        ktune_store::Location::parse(url)?;
        if args.study.is_empty() {
            named.push(url.clone());
        }
        for study in &args.study {
            ktune_core::checked_label(study).map_err(|m| anyhow::anyhow!("--study {m}"))?;
            named.push(format!("{url}#{study}"));
        }
    }
    for out in [&args.wisdom, &args.header, &args.c_select]
        .into_iter()
        .flatten()
    {
        for source in &named {
            // A study in a file is named `path` or `path#study`.
            let file = source.rsplit_once('#').map_or(source.as_str(), |(f, _)| f);
            refuse_same_file(out, Path::new(file), "the output")?;
        }
        refuse_database(out)?;
    }
    let mut sources: Vec<ExportSource> = named
        .iter()
        .map(|s| {
            Ok(ExportSource {
                source: PriorSource::parse(s, &cwd)?,
                device: None,
                problem_size: None,
            })
        })
        .collect::<Result<_>>()?;
    for (i, d) in by_source(&args.device, "--device", &named)? {
        ktune_core::checked_label(d).map_err(|m| anyhow::anyhow!("--device {m}"))?;
        sources[i].device = Some(d.to_string());
    }
    for (i, s) in by_source(&args.size, "--size", &named)? {
        sources[i].problem_size = Some(parse_size(s)?);
    }
    let default = match args.default.as_str() {
        "robust" => DefaultChoice::Robust,
        "none" => DefaultChoice::Nothing,
        device => DefaultChoice::Device(device.to_string()),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let (w, notes) = wisdom(
        &sources,
        args.kernel.as_deref(),
        &args.objective,
        args.goal.as_deref(),
        &default,
        now,
    )?;
    for n in &notes {
        note!("note: {n}");
    }
    let note = format!(
        "{} record{} from {}",
        w.records.len(),
        if w.records.len() == 1 { "" } else { "s" },
        named
            .iter()
            .map(|n| ktune_store::redact(n))
            .collect::<Vec<_>>()
            .join(", ")
    );
    // Everything is made before anything is written: a header that cannot be made leaves
    // no wisdom file behind either.
    let header = args
        .header
        .as_ref()
        .map(|_| ktune_select::header::defines_header(&w, &note))
        .transpose()?;
    let select = args
        .c_select
        .as_ref()
        .map(|_| ktune_select::c::select_header(&w, &note))
        .transpose()?;
    if let Some(p) = &args.wisdom {
        write_whole(p, &w.to_text())?;
    }
    if let (Some(p), Some(text)) = (&args.header, header) {
        write_whole(p, &text)?;
    }
    if let (Some(p), Some(text)) = (&args.c_select, select) {
        write_whole(p, &text)?;
    }
    for r in &w.records {
        note!(
            "{} at {}: {} = {} ({})",
            r.device,
            r.problem_size.map(|x| x.to_string()).join("x"),
            w.objective,
            r.objective,
            w.parameters
                .iter()
                .zip(&r.config)
                .map(|(p, v)| format!("{p}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}
