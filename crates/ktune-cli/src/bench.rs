//! `ktune bench`: strategies x spaces x seeds in simulation, traces, score table and plots;
//! `ktune bench score`: score trace files written by any tool.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use ktune_bench::{
    FrontStats, SpaceStats, TimeModel, Trace, TraceAppender, plot_convergence,
    read_finished_traces, read_traces, score_traces,
};
use ktune_core::{Budget, MatchedPrior, Rng, Session, Tuner, simulate_workers};
use ktune_runners::Simulation;
use ktune_space::SearchSpace;
use ktune_strategies::CheckedStrategy;
use rand::SeedableRng;
use rayon::prelude::*;

use crate::brute_forced::{Objective, evaluations};

/// Arguments of `ktune bench`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: Option<BenchCommand>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Subcommand)]
enum BenchCommand {
    /// Score existing trace files (JSON Lines, from ktune or any other tool) against
    /// brute-forced spaces: `ktune bench score traces.jsonl ... spaces/*.json.gz`.
    Score(ScoreArgs),
    /// Tune a strategy's options by simulated runs, cross-validated: `ktune bench
    /// tune-strategy auto --spaces spaces/*.json.gz` tunes on half the spaces and reports the
    /// score on the other half, before and after.
    TuneStrategy(crate::tune_strategy::TuneStrategyArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// Brute-forced Kernel Tuner cache files (`.json` or `.json.gz`) to replay.
    #[arg(required = true)]
    spaces: Vec<PathBuf>,
    /// Strategies to compare, comma-separated (`ktune strategies` lists them and their options).
    #[arg(long, short, value_delimiter = ',', default_value = "random")]
    strategies: Vec<String>,
    /// Number of seeds (runs) per strategy and space; seeds are FIRST..FIRST+N.
    #[arg(long, default_value_t = 10, allow_negative_numbers = true, value_parser = crate::numbers::seeds)]
    seeds: u64,
    /// The first seed: `--first-seed 50 --seeds 50` runs seeds 50..99, e.g. to confirm on
    /// unseen seeds options that were chosen on seeds 0..49.
    #[arg(long, default_value_t = 0, value_name = "FIRST", allow_negative_numbers = true, value_parser = crate::numbers::seed)]
    first_seed: u64,
    /// Evaluations per run; default: each space's n_max from the score definition, and at
    /// least 220 (capped at the space size).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::numbers::count)]
    budget: Option<usize>,
    #[command(flatten)]
    objective: Objective,
    /// Where to write traces.jsonl, scores.md and plots/.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
    /// Skip the convergence plots.
    #[arg(long)]
    no_plots: bool,
    /// Keep the runs already in `<out>/traces.jsonl` (from an earlier, stopped or shorter
    /// `ktune bench` with the same tool version) and run only the strategy, space and seed
    /// combinations not there yet; runs made with another budget are refused, not mixed in.
    /// Without it an existing traces.jsonl is replaced. Every run
    /// is appended to the file as soon as it ends, so a stopped benchmark loses only the runs
    /// in flight.
    #[arg(long)]
    resume: bool,
    /// Simulate parallel workers: each strategy runs once per number of workers given
    /// (e.g. 1,2,4,8,16), with each evaluation taking its recorded compile and benchmark
    /// time on a simulated clock; traces are labelled `strategy/wN`, and `workers.md`
    /// reports time to target and score against simulated wall time.
    #[arg(long, value_delimiter = ',', value_name = "N,...", allow_negative_numbers = true, value_parser = crate::numbers::count)]
    workers: Vec<usize>,
    /// With --workers: how close to the optimum the time to target is taken (a fraction).
    #[arg(long, default_value_t = 0.05, value_name = "FRACTION", allow_negative_numbers = true, value_parser = crate::numbers::fraction)]
    target: f64,
    /// `time`: also score the runs against simulated time (recorded compile, benchmark and
    /// verification time of each evaluated configuration plus the strategy's own measured
    /// time), written to time.md.
    #[arg(long, value_enum, default_value = "evaluations")]
    budget_kind: BudgetKind,
    /// Give each run priors (earlier measurements of the same code on other devices):
    /// `leave-one-out` tunes each space with every other given space of the same parameter
    /// names as its priors (traces labelled `strategy/loo`); `each` tunes it once with each
    /// of those alone (labelled `strategy/from-SPACE`); `other-kernel` gives it the spaces of
    /// other parameter names instead (unrelated priors; `strategy/other-kernel`); `shuffled`
    /// gives it the leave-one-out priors with each prior's values shuffled across its
    /// configurations (priors that mislead at random; `strategy/shuffled`); a FILE (JSON)
    /// lists each target's priors explicitly, `{"convolution_A100": ["convolution_A4000",
    /// "other/cache.json.gz"]}`, by the name of a given space or the path of a prior (a
    /// ktune study, a Kernel Tuner cache or a T4 file, relative to the FILE), targets not
    /// listed without (`strategy/listed`). Traces record their priors.
    #[arg(long, value_parser = parse_transfer, value_name = "HOW|FILE")]
    transfer: Option<Transfer>,
    /// With several objectives: each run seeks one configuration by this goal (as `ktune tune
    /// --goal`), e.g. "energy within 5% of time"; traces are labelled `strategy/goal` and
    /// record it. Score them with `bench/goal_at.py`.
    #[arg(long, value_name = "GOAL")]
    goal: Option<String>,
    /// Also record in each trace the configurations evaluated (`meta.configs`, each its
    /// values as the space displays them joined by commas, in the order of `meta.params`:
    /// the Kernel Tuner cache key where values are integers or strings)
    /// and what proposed each (`meta.origins`, where the strategy says: `auto`'s member and
    /// the model's acquisition function, `model/ei`, `model/initial`, `mls`, ...).
    /// `bench/origins.py` tabulates the failures and new bests per origin.
    #[arg(long)]
    trace_configs: bool,
}

/// Where a benchmark's runs take their priors from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Transfer {
    /// Every other space with the same parameter names.
    LeaveOneOut,
    /// Each other space with the same parameter names, alone.
    Each,
    /// Every space of another kernel (other parameter names, some shared): unrelated
    /// priors, which should cost nothing.
    OtherKernel,
    /// The leave-one-out priors, each prior's values shuffled across its configurations
    /// (a shuffle of its own for every target and seed): priors of the right shape that
    /// say nothing, which should cost nothing either.
    Shuffled,
    /// Each target's priors as a JSON file lists them.
    Listed(PathBuf),
}

fn parse_transfer(text: &str) -> Result<Transfer, String> {
    Ok(match text {
        "leave-one-out" => Transfer::LeaveOneOut,
        "each" => Transfer::Each,
        "other-kernel" => Transfer::OtherKernel,
        "shuffled" => Transfer::Shuffled,
        path if Path::new(path).is_file() => Transfer::Listed(PathBuf::from(path)),
        other => {
            return Err(format!(
                "`{other}` is neither leave-one-out, each, other-kernel, shuffled nor a file listing each target's priors"
            ));
        }
    })
}

/// The priors a `--transfer FILE` lists: per target space's name, each prior as the name of
/// a given space or a file relative to FILE.
fn listed_priors(
    file: &Path,
    spaces: &[(Simulation, SpaceStats)],
) -> Result<Vec<Vec<MatchedPrior>>> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("--transfer {}: cannot read it", file.display()))?;
    let lists: std::collections::BTreeMap<String, Vec<String>> = serde_json::from_str(&text)
        .with_context(|| {
            format!(
                "--transfer {}: expected a JSON object of target names and lists of priors",
                file.display()
            )
        })?;
    for target in lists.keys() {
        if !spaces.iter().any(|(sim, _)| sim.name() == target) {
            bail!(
                "--transfer {}: `{target}` is not one of the given spaces",
                file.display()
            );
        }
    }
    let base = file.parent().unwrap_or(Path::new("."));
    spaces
        .iter()
        .map(|(target, _)| {
            let names = lists.get(target.name()).map_or(&[][..], Vec::as_slice);
            names
                .iter()
                .map(|name| {
                    let context = || {
                        format!(
                            "--transfer {}: `{name}` as a prior of {}",
                            file.display(),
                            target.name()
                        )
                    };
                    let prior = match spaces.iter().find(|(sim, _)| sim.name() == name) {
                        Some((sim, _)) => sim.prior(),
                        None => {
                            ktune_problem::PriorSource::parse(name, base)
                                .and_then(|s| s.load(&target.objective().name))
                                .with_context(context)?
                                .prior
                        }
                    };
                    prior
                        .match_onto(target.space(), target.objective().direction)
                        .with_context(context)
                })
                .collect()
        })
        .collect()
}

/// What a budget counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BudgetKind {
    /// Evaluations (the performance score per evaluation).
    Evaluations,
    /// Simulated seconds, besides evaluations.
    Time,
}

#[derive(clap::Args)]
struct ScoreArgs {
    /// Trace files (`.jsonl`) and the cache files of their spaces (`.json`, `.json.gz`), in any
    /// order.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    objective: Objective,
    /// Also write the table here (with two or more objectives, the hypervolume scores beside
    /// it: `scores.md` → `scores.fronts.md`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write convergence plots into this directory.
    #[arg(long)]
    plots: Option<PathBuf>,
    /// `time`: score against simulated time instead (see `ktune bench --help`).
    #[arg(long, value_enum, default_value = "evaluations")]
    budget_kind: BudgetKind,
    /// Score only the first N evaluations of each run: each space's budget n_max is capped
    /// at N, so the score and the per-space tables are the score at N. For traces of a tool
    /// too slow to run to the spaces' budgets (a peer run with a budget of N).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    horizon: Option<u64>,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    match &args.command {
        Some(BenchCommand::Score(s)) => score(s),
        Some(BenchCommand::TuneStrategy(t)) => crate::tune_strategy::run(t),
        None => bench(&args.run),
    }
}

/// A strategy as traces label it, checked, and the simulated workers that run it.
type Contender = (String, CheckedStrategy, Option<usize>);

/// One run to make: a space (by index), a contender, a seed, with `--transfer each` the
/// prior's position among the space's priors, and the label of its traces.
type Task<'a> = (usize, &'a Contender, u64, Option<usize>, String);

fn bench(args: &RunArgs) -> Result<()> {
    let seeds = seeds(args)?;
    let strategies = contenders(args)?;
    let started = Instant::now();
    let (spaces, fronts_of_spaces) = args.objective.open_with_fronts(&args.spaces)?;
    announce(args, &strategies, &spaces, &seeds, started)?;
    let priors = priors(args, &spaces)?;
    let tool = format!("ktune-{}", env!("CARGO_PKG_VERSION"));
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    let traces_path = args.out.join("traces.jsonl");
    let finished = earlier_runs(args, &traces_path, &tool)?;
    same_budgets(args, &spaces, &finished, &traces_path)?;
    let done: HashSet<(&str, &str, i64)> = finished
        .iter()
        .map(|t| (t.strategy.as_str(), t.space.as_str(), t.seed))
        .collect();
    check_run_count(args, &seeds, &strategies, &priors)?;
    // Seed by seed, so that a benchmark stopped part-way holds the same seeds of every
    // strategy on every space (a fair comparison with fewer seeds, and --resume adds more).
    let mut tasks: Vec<Task<'_>> = Vec::new();
    for seed in seeds {
        for (s, given) in priors.iter().enumerate() {
            for st in &strategies {
                if args.transfer != Some(Transfer::Each) {
                    tasks.push((s, st, seed, None, st.0.clone()));
                    continue;
                }
                for (k, p) in given.iter().enumerate() {
                    tasks.push((s, st, seed, Some(k), format!("{}/from-{}", st.0, p.source)));
                }
            }
        }
    }
    let (kept, todo): (Vec<_>, Vec<_>) = tasks.into_iter().partition(|(s, _, seed, _, label)| {
        done.contains(&(label.as_str(), spaces[*s].0.name(), *seed as i64))
    });
    if args.resume {
        note!(
            "resuming: {} runs already in {}, {} to go",
            kept.len(),
            traces_path.display(),
            todo.len()
        );
    }
    let appender = Mutex::new(TraceAppender::open(&traces_path, !args.resume)?);
    let ended = AtomicUsize::new(0);
    let fresh: Vec<Trace> = todo
        .par_iter()
        .map(|task| -> Result<Trace> {
            let given = match task.3 {
                Some(k) => std::slice::from_ref(&priors[task.0][k]),
                None => &priors[task.0][..],
            };
            // Each run its own shuffle: one shuffle for all seeds would measure one draw.
            let shuffled: Vec<MatchedPrior>;
            let given = if args.transfer == Some(Transfer::Shuffled) {
                shuffled = given
                    .iter()
                    .enumerate()
                    .map(|(k, p)| shuffle_values(p, [task.0 as u64, task.2, k as u64]))
                    .collect();
                &shuffled[..]
            } else {
                given
            };
            let trace = run_one(args, &spaces, given, task, &tool)?;
            appender
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .append(&trace)?;
            let k = ended.fetch_add(1, Ordering::Relaxed) + 1;
            note!(
                "[{k}/{}] {} on {} seed {}: {} evaluations in {:.1} s",
                todo.len(),
                trace.strategy,
                trace.space,
                trace.seed,
                trace.values.len(),
                trace.wall_seconds
            );
            Ok(trace)
        })
        .collect::<Result<_>>()?;
    let traces = in_order(finished, &kept, &spaces, fresh);
    let (sims, stats): (Vec<Simulation>, Vec<SpaceStats>) = spaces.into_iter().unzip();
    write_reports(args, &traces, &sims, &stats, fronts_of_spaces.as_deref())?;
    note!("traces: {}", traces_path.display());
    note!("done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The most runs one `ktune bench` makes: each is planned and its trace kept in memory until
/// the scores are written (the largest benchmarks in BENCHMARKS.md make about 40,000).
const MAX_RUNS: u64 = 1_000_000;

/// Refuses a benchmark of more than [`MAX_RUNS`] runs before planning any (`--seeds
/// 100000000000` would fill the memory with tasks first).
fn check_run_count<P>(
    args: &RunArgs,
    seeds: &std::ops::Range<u64>,
    strategies: &[Contender],
    priors: &[Vec<P>],
) -> Result<()> {
    let per_seed: u64 = priors
        .iter()
        .map(|given| {
            let each = if args.transfer == Some(Transfer::Each) {
                given.len()
            } else {
                1
            };
            (strategies.len() * each) as u64
        })
        .sum();
    let runs = per_seed.saturating_mul(seeds.end - seeds.start);
    if runs > MAX_RUNS {
        bail!(
            "{runs} runs ({} seeds x {per_seed} runs a seed) is more than one benchmark makes (at most {MAX_RUNS}): use fewer seeds, or split them with --first-seed and --resume",
            seeds.end - seeds.start
        );
    }
    Ok(())
}

/// The seeds to run, checked with the other numbers of the arguments.
fn seeds(args: &RunArgs) -> Result<std::ops::Range<u64>> {
    if args.seeds == 0 {
        bail!("--seeds must be at least 1: a score needs at least one run per strategy and space");
    }
    if args.budget == Some(0) {
        bail!("--budget must be at least 1 evaluation");
    }
    if let Some(w) = args.workers.iter().find(|&&w| w == 0 || w > 4096) {
        bail!("--workers {w}: give numbers of workers from 1 to 4096, e.g. --workers 1,2,4,8,16");
    }
    if !(args.target > 0.0 && args.target < 1.0) {
        bail!(
            "--target {}: give a fraction between 0 and 1, e.g. 0.05",
            args.target
        );
    }
    // Traces record seeds as signed integers (the format other tools write too).
    args.first_seed
        .checked_add(args.seeds)
        .filter(|&end| end <= i64::MAX as u64)
        .map(|end| args.first_seed..end)
        .with_context(|| {
            format!(
                "--first-seed {} --seeds {}: the seeds must stay below 2^63",
                args.first_seed, args.seeds
            )
        })
}

/// Every strategy checked before any work starts, once per number of simulated workers
/// (labelled `strategy/wN` when simulating workers).
fn contenders(args: &RunArgs) -> Result<Vec<Contender>> {
    let workers: Vec<Option<usize>> = if args.workers.is_empty() {
        vec![None]
    } else {
        args.workers.iter().map(|&w| Some(w)).collect()
    };
    let checked = args
        .strategies
        .iter()
        .map(|s| strategy(s))
        .collect::<Result<Vec<_>>>()?;
    Ok(checked
        .into_iter()
        .flat_map(|c| {
            workers.iter().map(move |&w| {
                let label = match w {
                    Some(n) => ktune_bench::workers_label(c.canonical(), n),
                    None => c.canonical().to_string(),
                };
                // `--transfer each` labels each task by its prior.
                let label = match &args.transfer {
                    Some(Transfer::LeaveOneOut) => format!("{label}/loo"),
                    Some(Transfer::OtherKernel) => format!("{label}/other-kernel"),
                    Some(Transfer::Shuffled) => format!("{label}/shuffled"),
                    Some(Transfer::Listed(_)) => format!("{label}/listed"),
                    Some(Transfer::Each) | None => label,
                };
                let label = match &args.goal {
                    Some(_) => format!("{label}/goal"),
                    None => label,
                };
                (label, c.clone(), w)
            })
        })
        .collect())
}

/// Says what will run, on which spaces; refuses two spaces of one name.
fn announce(
    args: &RunArgs,
    strategies: &[Contender],
    spaces: &[(Simulation, SpaceStats)],
    seeds: &std::ops::Range<u64>,
    started: Instant,
) -> Result<()> {
    let mut names: Vec<&str> = spaces.iter().map(|(s, _)| s.name()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        bail!(
            "two spaces are both called `{}`; traces name spaces by file stem, so give them distinct names",
            w[0]
        );
    }
    note!(
        "ktune bench: {} strategies x {} spaces x {} seeds ({}..{}) (read the spaces in {:.1} s)",
        strategies.len(),
        spaces.len(),
        args.seeds,
        seeds.start,
        seeds.end - 1,
        started.elapsed().as_secs_f64()
    );
    for (sim, stats) in spaces {
        note!(
            "  {:<24} {:>6} configurations, {:>5} valid, n_max {:>4}, budget {}",
            sim.name(),
            stats.n_total(),
            stats.n_valid(),
            stats.n_max(),
            evaluations(args.budget, stats)
        );
    }
    Ok(())
}

/// With `--resume`, the runs of this tool version already in the traces file.
fn earlier_runs(args: &RunArgs, traces_path: &Path, tool: &str) -> Result<Vec<Trace>> {
    if !args.resume {
        return Ok(Vec::new());
    }
    let (earlier, cut) = read_finished_traces(traces_path)?;
    if cut {
        note!(
            "note: the last line of `{}` was a run cut off while being written; it will run again",
            traces_path.display()
        );
    }
    Ok(earlier.into_iter().filter(|t| t.tool == tool).collect())
}

/// A resumed benchmark must answer one budget: an earlier run of a given space made with
/// another (it records it; one from before budgets were recorded has as many evaluations as
/// it was given, unless the strategy ran out first) would be scored beside the new ones as
/// if it answered this one.
fn same_budgets(
    args: &RunArgs,
    spaces: &[(Simulation, SpaceStats)],
    earlier: &[Trace],
    traces_path: &Path,
) -> Result<()> {
    for t in earlier {
        let Some((_, stats)) = spaces.iter().find(|(sim, _)| sim.name() == t.space) else {
            continue;
        };
        let wanted = evaluations(args.budget, stats);
        let recorded = t
            .meta
            .as_ref()
            .and_then(|m| m.get("budget"))
            .and_then(serde_json::Value::as_u64);
        let (had, matches) = match recorded {
            Some(b) => (format!("{b} evaluations"), b == wanted as u64),
            None => (
                format!("no recorded budget and {} evaluations", t.values.len()),
                t.values.len() == wanted,
            ),
        };
        if !matches {
            bail!(
                "--resume: `{}` holds runs made with another budget ({} seed {} of {}: {had}; \
                 this benchmark gives it {wanted}): resume with the budget those runs had, or \
                 write to another --out",
                traces_path.display(),
                t.strategy,
                t.seed,
                t.space
            );
        }
    }
    Ok(())
}

/// Each space's priors (none without `--transfer`), matched onto it once for all its runs.
fn priors(args: &RunArgs, spaces: &[(Simulation, SpaceStats)]) -> Result<Vec<Vec<MatchedPrior>>> {
    let out = match &args.transfer {
        None => vec![Vec::new(); spaces.len()],
        Some(Transfer::Listed(file)) => listed_priors(file, spaces)?,
        Some(_) => matched_priors(args, spaces)?,
    };
    for ((target, _), matched) in spaces.iter().zip(&out).filter(|_| args.transfer.is_some()) {
        let sources: Vec<&str> = matched.iter().map(|m| m.source.as_str()).collect();
        note!(
            "  {:<24} priors: {}",
            target.name(),
            if sources.is_empty() {
                "none".to_string()
            } else {
                sources.join(", ")
            }
        );
    }
    Ok(out)
}

/// The priors of the modes that take them from the given spaces.
fn matched_priors(
    args: &RunArgs,
    spaces: &[(Simulation, SpaceStats)],
) -> Result<Vec<Vec<MatchedPrior>>> {
    // Each space as a prior, and its parameter names, made once for every target.
    let as_priors: Vec<(ktune_core::Prior, Vec<String>)> = spaces
        .iter()
        .map(|(sim, _)| {
            let prior = sim.prior();
            let mut names = prior.parameters.clone();
            names.sort();
            (prior, names)
        })
        .collect();
    let mut out = Vec::new();
    for (t, (target, _)) in spaces.iter().enumerate() {
        let direction = target.objective().direction;
        let mut matched = Vec::new();
        for (o, (prior, names)) in as_priors.iter().enumerate() {
            let related = *names == as_priors[t].1;
            let wanted = match &args.transfer {
                Some(Transfer::OtherKernel) => !related,
                _ => related,
            };
            if o == t || !wanted {
                continue;
            }
            let m = match prior.match_onto(target.space(), direction) {
                Ok(m) => m,
                // Another kernel that shares no parameter name gives nothing to transfer.
                Err(ktune_core::PriorError::NoSharedParameter { .. }) if !related => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("{} as a prior of {}", prior.source, target.name())
                    });
                }
            };
            matched.push(m);
        }
        out.push(matched);
    }
    Ok(out)
}

/// The prior's values shuffled across its configurations by a shuffle of its own (`seed`:
/// the target, the run's seed and the prior's place): the same configurations, the same
/// distribution of values, no information.
fn shuffle_values(prior: &MatchedPrior, seed: [u64; 3]) -> MatchedPrior {
    use rand::seq::SliceRandom;
    let mut values: Vec<Option<f64>> = prior.observations.iter().map(|(_, v)| *v).collect();
    let mixed = seed.iter().fold(0x9e37_79b9_7f4a_7c15u64, |h, &x| {
        (h ^ x).wrapping_mul(0x1000_0000_01b3)
    });
    values.shuffle(&mut Rng::seed_from_u64(mixed));
    let mut out = prior.clone();
    for ((_, v), shuffled) in out.observations.iter_mut().zip(values) {
        *v = shuffled;
    }
    out
}

/// One run: the contender on the space with the seed, as a trace.
fn run_one(
    args: &RunArgs,
    spaces: &[(Simulation, SpaceStats)],
    priors: &[MatchedPrior],
    (s, (_, strategy, workers), seed, _, label): &Task<'_>,
    tool: &str,
) -> Result<Trace> {
    let (sim, stats) = &spaces[*s];
    let given = evaluations(args.budget, stats);
    let budget = Budget::evaluations(given);
    let mut strategy = strategy.build();
    let mut runner = sim.runner();
    let t = Instant::now();
    let objectives = sim.metrics().len();
    let goal = args
        .goal
        .as_deref()
        .map(|text| {
            if objectives < 2 {
                bail!("--goal `{text}`: a goal needs several objectives (--objective A,B)");
            }
            Ok(ktune_core::pareto::Goal::parse(text, sim.metrics())?)
        })
        .transpose()?;
    let (records, origins, mut meta) = match workers {
        None => {
            let mut tuner = Tuner::new(sim.space(), &mut runner, budget)
                .priors(priors)
                .objectives(objectives);
            if let Some(g) = goal {
                tuner = tuner.goal(g);
            }
            if args.trace_configs {
                tuner = tuner.trace_origins();
            }
            let run = tuner.run(strategy.as_mut(), &mut Rng::seed_from_u64(*seed))?;
            let meta = serde_json::json!({
                "budget": given,
                "simulated_seconds": run.clock,
                "strategy_seconds": run.strategy_seconds,
                "stop": run.stop,
            });
            (run.records, run.origins, meta)
        }
        Some(n) => {
            let direction = ktune_core::Runner::metrics(&runner)[0].direction;
            let mut session = Session::new(
                sim.space(),
                Box::new(strategy.as_mut()),
                budget,
                direction,
                Rng::seed_from_u64(*seed),
            )?;
            session.set_priors(priors);
            if objectives > 1 {
                let directions: Vec<_> = sim.metrics().iter().map(|m| m.direction).collect();
                session.set_objectives(&directions)?;
            }
            if let Some(g) = goal {
                session.set_goal(&g)?;
            }
            if args.trace_configs {
                session.trace_origins();
            }
            let run = simulate_workers(session, &mut runner, *n)?;
            let meta = serde_json::json!({
                "budget": given,
                "workers": n,
                "simulated_seconds": run.finished.last().copied().unwrap_or(0.0),
                "strategy_seconds": run.strategy_seconds,
                "stop": run.stop,
                "finished": run.finished,
            });
            (run.records, run.origins, meta)
        }
    };
    // Every record of the run, in order (a repeat is told from memory, not recorded).
    let values = records.iter().map(|r| r.outcome.objective()).collect();
    let points = if objectives > 1 {
        records
            .iter()
            .map(|r| r.outcome.values().map(<[f64]>::to_vec))
            .collect()
    } else {
        Vec::new()
    };
    if !priors.is_empty() {
        meta["priors"] = serde_json::json!(prior_sources(priors));
    }
    if let Some(text) = &args.goal {
        meta["goal"] = serde_json::json!(text);
    }
    if args.trace_configs {
        let space = sim.space();
        let params: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
        let configs: Vec<String> = records
            .iter()
            .map(|r| cache_key(space, &r.config))
            .collect();
        meta["params"] = serde_json::json!(params);
        meta["configs"] = serde_json::json!(configs);
        meta["origins"] = serde_json::json!(origins);
    }
    Ok(Trace {
        tool: tool.to_string(),
        strategy: label.clone(),
        space: sim.name().to_string(),
        seed: *seed as i64,
        values,
        wall_seconds: t.elapsed().as_secs_f64(),
        points,
        meta: Some(meta),
    })
}

/// A configuration's values as the space displays them, joined by commas: the Kernel Tuner
/// cache key where they are integers or strings (Python spells booleans and some reals
/// otherwise).
fn cache_key(space: &SearchSpace, config: &[u32]) -> String {
    space
        .values(config)
        .iter()
        .zip(space.params())
        .map(|(v, p)| p.display(v))
        .collect::<Vec<_>>()
        .join(",")
}

/// The priors' sources, as traces record them.
fn prior_sources(priors: &[MatchedPrior]) -> Vec<&str> {
    priors.iter().map(|p| p.source.as_str()).collect()
}

/// This benchmark's runs (earlier ones first), in a fixed order whatever finished first.
fn in_order(
    finished: Vec<Trace>,
    kept: &[Task<'_>],
    spaces: &[(Simulation, SpaceStats)],
    fresh: Vec<Trace>,
) -> Vec<Trace> {
    let wanted: HashSet<(&str, &str, i64)> = kept
        .iter()
        .map(|(s, _, seed, _, label)| (label.as_str(), spaces[*s].0.name(), *seed as i64))
        .collect();
    let mut traces: Vec<Trace> = finished
        .into_iter()
        .filter(|t| wanted.contains(&(t.strategy.as_str(), t.space.as_str(), t.seed)))
        .collect();
    traces.extend(fresh);
    traces.sort_by(|a, b| {
        (a.space.as_str(), a.strategy.as_str(), a.seed).cmp(&(
            b.space.as_str(),
            b.strategy.as_str(),
            b.seed,
        ))
    });
    traces
}

/// The score table and plots, the scores against simulated time, the workers' report.
fn write_reports(
    args: &RunArgs,
    traces: &[Trace],
    sims: &[Simulation],
    stats: &[SpaceStats],
    front_stats: Option<&[FrontStats]>,
) -> Result<()> {
    report(
        traces,
        stats,
        Some(&args.out.join("scores.md")),
        (!args.no_plots).then(|| args.out.join("plots")).as_deref(),
        None,
    )?;
    if args.budget_kind == BudgetKind::Time {
        time_scores(traces, sims, stats, Some(&args.out.join("time.md")))?;
    }
    fronts(traces, front_stats, Some(&args.out.join("fronts.md")))?;
    if !args.workers.is_empty() {
        let markdown = ktune_bench::workers_report(traces, stats, args.target);
        outln!("{markdown}")?;
        let path = args.out.join("workers.md");
        std::fs::write(&path, &markdown)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        note!("workers: {}", path.display());
    }
    Ok(())
}

/// A strategy, checked, from its command-line form (`name` or `name:key=value:...`) or from
/// the `[strategy]` table of a `ktune.toml` (an argument ending in `.toml`).
pub(crate) fn strategy(spec: &str) -> Result<CheckedStrategy> {
    if spec.ends_with(".toml") {
        let text =
            std::fs::read_to_string(spec).with_context(|| format!("cannot read `{spec}`"))?;
        let doc: toml::Table =
            toml::from_str(&text).with_context(|| format!("`{spec}` is not valid TOML"))?;
        let table = doc
            .get("strategy")
            .and_then(toml::Value::as_table)
            .with_context(|| format!("`{spec}` has no [strategy] table"))?;
        let json = serde_json::to_value(table)?;
        let map = json.as_object().cloned().unwrap_or_default();
        return CheckedStrategy::from_table(&map)
            .with_context(|| format!("in the [strategy] table of `{spec}`"));
    }
    Ok(CheckedStrategy::parse(spec)?)
}

fn score(args: &ScoreArgs) -> Result<()> {
    let (trace_files, space_files): (Vec<&PathBuf>, Vec<&PathBuf>) = args
        .files
        .iter()
        .partition(|p| p.extension().is_some_and(|e| e == "jsonl"));
    if trace_files.is_empty() {
        bail!("no trace files given (JSON Lines files ending in `.jsonl`)");
    }
    if space_files.is_empty() {
        bail!(
            "no spaces given: add the brute-forced cache files (`.json` / `.json.gz`) the traces were run on"
        );
    }
    let mut traces = Vec::new();
    for f in trace_files {
        let read = read_traces(f)?;
        if read.is_empty() {
            bail!("`{}` holds no runs", f.display());
        }
        traces.extend(read);
    }
    let spaces: Vec<PathBuf> = space_files.into_iter().cloned().collect();
    let (opened, front_stats) = args.objective.open_with_fronts(&spaces)?;
    let (sims, mut stats): (Vec<Simulation>, Vec<SpaceStats>) = opened.into_iter().unzip();
    for doubt in ktune_bench::doubts(&traces, &stats) {
        note!("warning: {doubt}");
    }
    if args.budget_kind == BudgetKind::Time {
        if args.horizon.is_some() {
            bail!("--horizon counts evaluations; it does not apply to --budget-kind time");
        }
        return time_scores(&traces, &sims, &stats, args.out.as_deref());
    }
    let fronts_path = args.out.as_ref().map(|o| o.with_extension("fronts.md"));
    fronts(&traces, front_stats.as_deref(), fronts_path.as_deref())?;
    let horizon = args
        .horizon
        .map(|h| usize::try_from(h).unwrap_or(usize::MAX));
    if let Some(h) = horizon {
        stats = stats.iter().map(|s| s.capped(h)).collect();
    }
    report(
        &traces,
        &stats,
        args.out.as_deref(),
        args.plots.as_deref(),
        horizon,
    )
}

/// With two or more objectives: the hypervolume scores of the traces on the spaces' Pareto
/// fronts, printed and written to `path`.
fn fronts(traces: &[Trace], front_stats: Option<&[FrontStats]>, path: Option<&Path>) -> Result<()> {
    let Some(front_stats) = front_stats else {
        return Ok(());
    };
    let markdown = ktune_bench::front_report(traces, front_stats);
    outln!("{markdown}")?;
    if let Some(path) = path {
        std::fs::write(path, &markdown)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        note!("fronts: {}", path.display());
    }
    Ok(())
}

/// What evaluating each configuration of a simulated space costs: its recorded compile,
/// benchmark and verification time (the framework time Kernel Tuner recorded when the space
/// was brute-forced is the tool's, not the configuration's; a strategy's own time is
/// measured in each run instead).
fn time_model(sim: &Simulation) -> TimeModel {
    let space = sim.space();
    let mut config = vec![0u32; space.dims()];
    let records: Vec<(Option<f64>, f64)> = (0..space.size())
        .filter_map(|r| {
            space.write_configuration(r, &mut config);
            let o = sim.outcome(&config)?;
            let t = o.timings();
            Some((o.objective(), t.compile + t.benchmark + t.verification))
        })
        .collect();
    TimeModel::new(&records)
}

/// Prints the scores against simulated time, and writes them where asked. Only this view
/// reads every configuration's recorded times (a pass over each space).
fn time_scores(
    traces: &[Trace],
    sims: &[Simulation],
    stats: &[SpaceStats],
    path: Option<&Path>,
) -> Result<()> {
    let models: Vec<TimeModel> = sims.iter().map(time_model).collect();
    let pairs: Vec<(&SpaceStats, &TimeModel)> = stats.iter().zip(&models).collect();
    let markdown = ktune_bench::time_report(traces, &pairs);
    outln!("{markdown}")?;
    if let Some(p) = path {
        std::fs::write(p, &markdown).with_context(|| format!("cannot write `{}`", p.display()))?;
        note!("time scores: {}", p.display());
    }
    Ok(())
}

/// Prints the score table, writes it (and the plots) where asked.
fn report(
    traces: &[Trace],
    stats: &[SpaceStats],
    table_path: Option<&Path>,
    plots: Option<&Path>,
    horizon: Option<usize>,
) -> Result<()> {
    let table = score_traces(traces, stats)?;
    let mut markdown = table.to_markdown();
    if let Some(h) = horizon {
        markdown = format!(
            "Scored over the first {h} evaluations of each run (`--horizon {h}`): every space's n_max is capped at {h}.\n\n{markdown}"
        );
    }
    outln!("{markdown}")?;
    if let Some(p) = table_path {
        std::fs::write(p, &markdown).with_context(|| format!("cannot write `{}`", p.display()))?;
        note!("scores: {}", p.display());
    }
    if let Some(dir) = plots {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
        let written: Vec<PathBuf> = stats
            .par_iter()
            .map(|s| {
                let own: Vec<&Trace> = traces.iter().filter(|t| t.space == s.name()).collect();
                plot_convergence(s, &own, dir).map(|(png, _)| png)
            })
            .collect::<Result<_, _>>()?;
        note!("plots: {} PNG + SVG in {}", written.len(), dir.display());
    }
    Ok(())
}
