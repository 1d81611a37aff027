//! `ktune bench tune-strategy`: tuning the tuner. A strategy's typed options are the
//! parameters of a search space, a ktune strategy searches it, and each candidate setting is
//! scored by simulated runs on brute-forced spaces (the mean performance score over spaces
//! and seeds). Cross-validation is built in: the spaces are split into folds, the options are
//! tuned on all folds but one and scored, beside the defaults, on the fold held back, with
//! seeds the tuning never saw, so a user sees whether the tuned options generalise or only fit
//! the spaces they were tuned on.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use ktune_bench::{SpaceStats, score_run};
use ktune_core::{Budget, CoreError, Direction, Metric, Outcome, Rng, Runner, Timings, Tuner};
use ktune_runners::Simulation;
use ktune_space::{Configuration, Parameter, SearchSpace};
use ktune_strategies::CheckedStrategy;
use ktune_strategies::{Options, options_spec, parse_value};
use rand::SeedableRng;
use rayon::prelude::*;

use crate::brute_forced::Objective;

/// Arguments of `ktune bench tune-strategy`.
#[derive(clap::Args)]
pub struct TuneStrategyArgs {
    /// The strategy whose options are tuned, with any options kept fixed
    /// (`name:key=value:...`).
    strategy: String,
    /// Brute-forced Kernel Tuner cache files (`.json` or `.json.gz`) to score settings on;
    /// at least two per fold.
    #[arg(long, num_args = 1.., required = true)]
    spaces: Vec<PathBuf>,
    /// Evaluations per simulated run; default: each space's n_max from the score definition,
    /// and at least 220 (capped at the space size).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::numbers::count)]
    budget: Option<usize>,
    /// Seeds (runs) per setting and space.
    #[arg(long, default_value_t = 5, allow_negative_numbers = true, value_parser = crate::numbers::seeds)]
    seeds: u64,
    /// Settings the tuner tries per fold (the defaults are scored besides).
    #[arg(long, default_value_t = 24, allow_negative_numbers = true, value_parser = crate::numbers::count)]
    evaluations: usize,
    /// The ktune strategy that searches the options.
    #[arg(long, default_value = "auto")]
    tuner: String,
    /// The values to try for an option, `name=v1,v2,...` (JSON values; repeatable). Replaces
    /// the strategy's own list for that option, or adds the option.
    #[arg(long = "option", value_name = "NAME=V1,V2,...")]
    options: Vec<String>,
    /// Search only the options given with --option.
    #[arg(long)]
    only_given: bool,
    /// Folds of the cross-validation (spaces sorted by name, dealt out in turn); 1: tune on
    /// every space, no held-out score.
    #[arg(long, default_value_t = 2, allow_negative_numbers = true, value_parser = crate::numbers::count)]
    folds: usize,
    /// The seed of the tuner's own search.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::numbers::seed)]
    tuner_seed: u64,
    #[command(flatten)]
    objective: Objective,
    /// Where to write tune-strategy.md.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
}

/// One option searched and the values it takes.
struct Searched {
    name: String,
    values: Vec<serde_json::Value>,
}

/// The search space of settings: one parameter per option, valued by the index of its value.
fn settings_space(searched: &[Searched]) -> Result<SearchSpace> {
    let params = searched
        .iter()
        .map(|s| Parameter::integer(s.name.clone(), 0..s.values.len() as i64))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SearchSpace::new(params, &[] as &[&str])?)
}

/// The options a setting (value indices) stands for, on top of the fixed ones.
fn setting_options(fixed: &Options, searched: &[Searched], setting: &[u32]) -> Options {
    let mut o = fixed.clone();
    for (s, &i) in searched.iter().zip(setting) {
        o.insert(s.name.clone(), s.values[i as usize].clone());
    }
    o
}

/// `name=v1,v2,...` with JSON values (bare words are strings).
fn parse_option(text: &str) -> Result<Searched> {
    let (name, values) = text
        .split_once('=')
        .with_context(|| format!("--option `{text}`: write it as name=value1,value2,..."))?;
    let values: Vec<serde_json::Value> = values.split(',').map(parse_value).collect();
    if values.len() < 2 {
        bail!("--option `{text}`: give at least two values to choose from");
    }
    Ok(Searched {
        name: name.trim().to_string(),
        values,
    })
}

/// Scores settings by simulated runs: the mean performance score over spaces and seeds.
struct Scorer<'a> {
    name: String,
    fixed: Options,
    searched: &'a [Searched],
    spaces: Vec<&'a (Simulation, SpaceStats)>,
    seeds: std::ops::Range<u64>,
    budget: Option<usize>,
    metrics: Vec<Metric>,
}

impl Scorer<'_> {
    /// The mean score of `options` (an error if the strategy refuses them).
    fn score(&self, options: &Options) -> Result<f64, String> {
        let checked = CheckedStrategy::new(&self.name, options).map_err(|e| e.to_string())?;
        let runs: Vec<(usize, u64)> = (0..self.spaces.len())
            .flat_map(|s| self.seeds.clone().map(move |seed| (s, seed)))
            .collect();
        let scores = runs
            .par_iter()
            .map(|&(s, seed)| -> Result<f64, String> {
                let (sim, stats) = self.spaces[s];
                let mut strategy = checked.build();
                let mut runner = sim.runner();
                let budget =
                    Budget::evaluations(crate::brute_forced::evaluations(self.budget, stats));
                let run = Tuner::new(sim.space(), &mut runner, budget)
                    .run(strategy.as_mut(), &mut Rng::seed_from_u64(seed))
                    .map_err(|e| format!("{} on {}: {e}", self.name, sim.name()))?;
                Ok(score_run(stats, &run.objective_values()).score)
            })
            .collect::<Result<Vec<f64>, String>>()?;
        // Mean over spaces of the mean over seeds (every space has as many seeds).
        Ok(scores.iter().sum::<f64>() / scores.len().max(1) as f64)
    }
}

impl Runner for Scorer<'_> {
    fn name(&self) -> &str {
        "simulated-score"
    }

    fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    fn evaluate(
        &mut self,
        _: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
        Ok(configs
            .iter()
            .map(|c| {
                let options = setting_options(&self.fixed, self.searched, c);
                let t = Instant::now();
                let scored = self.score(&options);
                note!(
                    "  {} -> {} ({:.1} s)",
                    describe(&options),
                    shown(&scored),
                    t.elapsed().as_secs_f64()
                );
                match scored {
                    Ok(score) => Outcome::ok(vec![score], Timings::default()),
                    Err(why) => {
                        Outcome::failed(ktune_core::FailureKind::Runtime, why, Timings::default())
                    }
                }
            })
            .collect())
    }
}

/// A setting's score, or why it was refused.
fn shown(scored: &Result<f64, String>) -> String {
    match scored {
        Ok(s) => format!("{s:.3}"),
        Err(why) => format!("refused: {why}"),
    }
}

/// Options as `key=value:key=value` (sorted), or "defaults".
fn describe(options: &Options) -> String {
    if options.is_empty() {
        "defaults".into()
    } else {
        options_spec(options)
    }
}

/// What one fold found.
struct Fold {
    held_out: Vec<String>,
    tuned: Options,
    train: (f64, f64),
    held: Option<(f64, f64)>,
    /// Each setting and its score, or why it was refused.
    tried: Vec<(String, Result<f64, String>)>,
}

pub fn run(args: &TuneStrategyArgs) -> Result<()> {
    check(args)?;
    let (name, fixed) = ktune_strategies::parse_spec(&args.strategy);
    let entry = ktune_strategies::entry(&name)?;
    CheckedStrategy::new(entry.name, &fixed)
        .with_context(|| format!("the fixed options of `{}`", args.strategy))?;
    let tuner = CheckedStrategy::parse(&args.tuner).context("--tuner")?;
    let searched = searched(args, entry, &fixed)?;
    let meta_space = settings_space(&searched)?;
    // Where the report goes is checked before hours of tuning, not after (and after the
    // arguments, so that a refused command leaves no folder behind).
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    let path = args.out.join("tune-strategy.md");
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    let mut spaces = args.objective.open(&args.spaces)?;
    spaces.sort_by(|a, b| a.0.name().cmp(b.0.name()));
    note!(
        "ktune bench tune-strategy: {} options of `{}` ({} settings), {} spaces in {} fold(s), {} seeds, {} settings tried per fold by `{}`",
        searched.len(),
        entry.name,
        meta_space.size(),
        spaces.len(),
        args.folds,
        args.seeds,
        args.evaluations,
        args.tuner
    );
    let started = Instant::now();
    let mut folds = Vec::new();
    for f in 0..args.folds {
        let (held, train): (Vec<_>, Vec<_>) = spaces
            .iter()
            .enumerate()
            .partition(|(i, _)| args.folds > 1 && i % args.folds == f);
        let scorer = Scorer {
            name: entry.name.to_string(),
            fixed: fixed.clone(),
            searched: &searched,
            spaces: train.into_iter().map(|(_, s)| s).collect(),
            seeds: 0..args.seeds,
            budget: args.budget,
            metrics: vec![Metric::new("score", Direction::Maximize)],
        };
        let held = held.into_iter().map(|(_, s)| s).collect();
        folds.push(fold(args, f, scorer, held, &meta_space, &tuner)?);
    }
    let markdown = report(args, entry.name, &searched, &folds);
    outln!("{markdown}")?;
    std::fs::write(&path, &markdown)
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    note!("report: {}", path.display());
    note!("done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The numbers of the arguments, checked before anything runs.
fn check(args: &TuneStrategyArgs) -> Result<()> {
    if args.seeds == 0 || args.evaluations == 0 {
        bail!("--seeds and --evaluations must be at least 1");
    }
    if args.budget == Some(0) {
        bail!("--budget must be at least 1 evaluation");
    }
    if args.folds == 0 {
        bail!("--folds must be at least 1");
    }
    if args.folds > 1 && args.spaces.len() < args.folds {
        bail!(
            "--folds {}: give at least as many spaces ({} given)",
            args.folds,
            args.spaces.len()
        );
    }
    Ok(())
}

/// The options searched: the strategy's own list (less the fixed ones), then `--option`.
fn searched(
    args: &TuneStrategyArgs,
    entry: &ktune_strategies::Entry,
    fixed: &Options,
) -> Result<Vec<Searched>> {
    let mut searched: Vec<Searched> = if args.only_given {
        Vec::new()
    } else {
        entry
            .tunable
            .iter()
            .filter(|t| !fixed.contains_key(t.name))
            .map(|t| Searched {
                name: t.name.to_string(),
                values: t
                    .values
                    .iter()
                    .map(|v| serde_json::from_str(v).expect("tunable values are JSON (tested)"))
                    .collect(),
            })
            .collect()
    };
    for text in &args.options {
        let given = parse_option(text)?;
        if !entry.options.iter().any(|o| o.name == given.name) {
            bail!(
                "--option `{}`: `{}` has no such option (`ktune strategies` lists them)",
                given.name,
                entry.name
            );
        }
        searched.retain(|s| s.name != given.name);
        searched.push(given);
    }
    if searched.is_empty() {
        bail!(
            "nothing to tune: `{}` has no tunable options listed; name some with --option name=v1,v2,...",
            entry.name
        );
    }
    Ok(searched)
}

/// Fold `f`: the options tuned on the scorer's spaces by `tuner`, then scored on the
/// `held`-out spaces with seeds the tuning never saw.
fn fold<'a>(
    args: &TuneStrategyArgs,
    f: usize,
    mut scorer: Scorer<'a>,
    held: Vec<&'a (Simulation, SpaceStats)>,
    meta_space: &SearchSpace,
    tuner: &CheckedStrategy,
) -> Result<Fold> {
    let names = |spaces: &[&(Simulation, SpaceStats)]| -> Vec<String> {
        spaces.iter().map(|s| s.0.name().to_string()).collect()
    };
    note!(
        "fold {}/{}: tuning on {}",
        f + 1,
        args.folds,
        names(&scorer.spaces).join(", ")
    );
    let fixed = scorer.fixed.clone();
    let default_train = scorer.score(&fixed).map_err(anyhow::Error::msg)?;
    note!("  defaults -> {default_train:.3}");
    let budget = Budget::evaluations(args.evaluations);
    let run = Tuner::new(meta_space, &mut scorer, budget).run(
        tuner.build().as_mut(),
        &mut Rng::seed_from_u64(args.tuner_seed),
    )?;
    let searched = scorer.searched;
    let tried: Vec<(String, Result<f64, String>)> = run
        .records
        .iter()
        .map(|r| {
            let options = setting_options(&Options::new(), searched, &r.config);
            let score = match &r.outcome {
                Outcome::Failed { reason, .. } => Err(reason.clone()),
                o => o.objective().ok_or_else(|| "no score".to_string()),
            };
            (describe(&options), score)
        })
        .collect();
    let (tuned, tuned_train) = match run.best().and_then(|b| Some((b, b.outcome.objective()?))) {
        Some((b, s)) if s > default_train => (setting_options(&fixed, searched, &b.config), s),
        _ => (fixed.clone(), default_train),
    };
    let held_scores = if held.is_empty() {
        None
    } else {
        let n = held.len();
        let scorer = Scorer {
            spaces: held.clone(),
            seeds: 1000..1000 + args.seeds,
            ..scorer
        };
        let d = scorer.score(&fixed).map_err(anyhow::Error::msg)?;
        let t = scorer.score(&tuned).map_err(anyhow::Error::msg)?;
        note!("  held out ({n}): defaults {d:.3}, tuned {t:.3}");
        Some((d, t))
    };
    Ok(Fold {
        held_out: names(&held),
        tuned,
        train: (default_train, tuned_train),
        held: held_scores,
        tried,
    })
}

fn report(args: &TuneStrategyArgs, name: &str, searched: &[Searched], folds: &[Fold]) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Tuning `{}`: {} seeds per setting and space, {} settings per fold, searched by `{}`\n",
        args.strategy, args.seeds, args.evaluations, args.tuner
    );
    let _ = writeln!(md, "Options searched:");
    for s in searched {
        let values: Vec<String> = s.values.iter().map(ToString::to_string).collect();
        let _ = writeln!(md, "- `{}`: {}", s.name, values.join(", "));
    }
    let _ = writeln!(
        md,
        "\nScores are mean performance scores over spaces and seeds (0 = random search, 1 = the optimum at once). The held-out fold is scored on seeds 1000 and up, which the tuning never saw.\n"
    );
    let _ = writeln!(
        md,
        "| fold | held-out spaces | tuned options | tuning spaces: defaults | tuned | held out: defaults | tuned |"
    );
    let _ = writeln!(md, "|---|---|---|---:|---:|---:|---:|");
    for (i, f) in folds.iter().enumerate() {
        let (hd, ht) = f.held.map_or(("-".into(), "-".into()), |(d, t)| {
            (format!("{d:.3}"), format!("{t:.3}"))
        });
        let _ = writeln!(
            md,
            "| {} | {} | `{name}{}` | {:.3} | {:.3} | {hd} | {ht} |",
            i + 1,
            if f.held_out.is_empty() {
                "-".to_string()
            } else {
                f.held_out.join(", ")
            },
            if f.tuned.is_empty() {
                String::new()
            } else {
                format!(":{}", describe(&f.tuned))
            },
            f.train.0,
            f.train.1,
        );
    }
    let held: Vec<(f64, f64)> = folds.iter().filter_map(|f| f.held).collect();
    if !held.is_empty() {
        let n = held.len() as f64;
        let _ = writeln!(
            md,
            "\nHeld out, mean over folds: defaults {:.3}, tuned {:.3}.",
            held.iter().map(|h| h.0).sum::<f64>() / n,
            held.iter().map(|h| h.1).sum::<f64>() / n
        );
    }
    for (i, f) in folds.iter().enumerate() {
        let _ = writeln!(md, "\n#### Fold {}: the settings tried\n", i + 1);
        let _ = writeln!(md, "| # | setting | score on the tuning spaces |");
        let _ = writeln!(md, "|---:|---|---:|");
        for (k, (setting, score)) in f.tried.iter().enumerate() {
            let _ = writeln!(
                md,
                "| {} | `{setting}` | {} |",
                k + 1,
                shown(score).replace('|', "\\|")
            );
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_to_search_are_parsed_with_json_values() {
        let s = parse_option("c=0.01,0.05, 1").unwrap();
        assert_eq!(s.name, "c");
        assert_eq!(
            s.values,
            vec![
                serde_json::json!(0.01),
                serde_json::json!(0.05),
                serde_json::json!(1)
            ]
        );
        let s = parse_option("neighbour=Hamming,adjacent").unwrap();
        assert_eq!(s.values[1], serde_json::json!("adjacent"));
        assert!(parse_option("c=1").is_err());
        assert!(parse_option("c").is_err());
    }

    #[test]
    fn a_setting_is_the_fixed_options_and_the_chosen_values() {
        let searched = vec![
            parse_option("a=1,2,3").unwrap(),
            parse_option("b=x,y").unwrap(),
        ];
        let space = settings_space(&searched).unwrap();
        assert_eq!(space.size(), 6);
        let (_, fixed) = ktune_strategies::parse_spec("auto:local=false");
        let o = setting_options(&fixed, &searched, &[2, 1]);
        assert_eq!(describe(&o), "a=3:b=y:local=false");
        assert_eq!(describe(&Options::new()), "defaults");
    }
}
