//! `ktune bench` end to end on real brute-forced spaces, and its errors.

use std::path::PathBuf;

use crate::common::{Succeeds, assert_mentions, in_tempdir, ktune, shared_space as space};

#[test]
fn runs_strategies_and_writes_traces_scores_and_plots() {
    let out = tempfile::tempdir().unwrap();
    let result = ktune()
        .args([
            "bench",
            "--strategies",
            "random,brute_force",
            "--seeds",
            "3",
            "--budget",
            "50",
            "--out",
        ])
        .arg(out.path())
        .arg(space("convolution_A100"))
        .arg(space("dedispersion_A100"))
        .succeeds();
    let table = String::from_utf8(result.stdout).unwrap();
    assert_mentions(&table, &["random", "brute_force"]);
    assert_mentions(&table, &["convolution_A100", "dedispersion_A100"]);

    let traces = std::fs::read_to_string(out.path().join("traces.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = traces
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2 * 2 * 3);
    for t in &lines {
        assert_eq!(t["values"].as_array().unwrap().len(), 50);
        assert!(t["tool"].as_str().unwrap().starts_with("ktune-"));
    }
    assert!(out.path().join("scores.md").exists());
    for s in ["convolution_A100", "dedispersion_A100"] {
        assert!(out.path().join(format!("plots/{s}.png")).exists(), "{s}");
        assert!(out.path().join(format!("plots/{s}.svg")).exists(), "{s}");
    }

    // Scoring the traces again gives the same table.
    let rescored = ktune()
        .args(["bench", "score"])
        .arg(out.path().join("traces.jsonl"))
        .arg(space("convolution_A100"))
        .arg(space("dedispersion_A100"))
        .succeeds();
    assert_eq!(String::from_utf8(rescored.stdout).unwrap(), table);

    // Scored over the first 20 evaluations, each strategy's score is its @20 column, and the
    // report says so.
    let early = ktune()
        .args(["bench", "score", "--horizon", "20"])
        .arg(out.path().join("traces.jsonl"))
        .arg(space("convolution_A100"))
        .arg(space("dedispersion_A100"))
        .succeeds();
    let early = String::from_utf8(early.stdout).unwrap();
    assert!(early.contains("first 20 evaluations"), "{early}");
    let at20 = summary_columns(&table, 2);
    assert_eq!(at20.len(), 2, "{table}");
    assert_eq!(summary_columns(&early, 1), at20);
    assert_ne!(summary_columns(&table, 1), at20);
}

/// The `column`-th cell of each strategy's row in the summary table (1: the score, 2: @20).
fn summary_columns(markdown: &str, column: usize) -> Vec<(String, String)> {
    markdown
        .split("### Performance score per space")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("| ktune-"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[1 + column].to_string())
        })
        .collect()
}

fn fails_with(args: &[&str], extra: &[PathBuf], needle: &str) {
    let out = tempfile::tempdir().unwrap();
    ktune()
        .args(args)
        .arg("--out")
        .arg(out.path())
        .args(extra)
        .fails_saying(&[needle]);
}

#[test]
fn bad_input_is_a_clear_error() {
    let conv = space("convolution_A100");
    fails_with(
        &["bench", "--seeds", "0"],
        std::slice::from_ref(&conv),
        "--seeds must be at least 1",
    );
    fails_with(
        &["bench", "--strategies", "random,genetic"],
        std::slice::from_ref(&conv),
        "unknown strategy `genetic`; available: random, brute_force, prior_rank, simulated_annealing",
    );
    fails_with(
        &["bench"],
        &[PathBuf::from("/nonexistent/space.json.gz")],
        "cannot read `/nonexistent/space.json.gz`",
    );
    fails_with(
        &["bench", "--objective", "energy"],
        std::slice::from_ref(&conv),
        "no objective `energy`",
    );
    // Refused before any run is planned (it filled 12 GB in 10 s), naming the way out.
    fails_with(
        &["bench", "--seeds", "100000000000", "--no-plots"],
        &[conv],
        "100000000000 runs (100000000000 seeds x 1 runs a seed) is more than one benchmark makes (at most 1000000): use fewer seeds",
    );
}

#[test]
fn several_objectives_record_points_and_score_the_front() {
    let out = tempfile::tempdir().unwrap();
    let result = ktune()
        .args(["bench", "-s", "random,nsga2", "--seeds", "2"])
        .args(["--objective", "time,compile_time", "--no-plots", "--out"])
        .arg(out.path())
        .arg(space("convolution_W6600"))
        .succeeds();
    let stdout = String::from_utf8(result.stdout).unwrap();
    // The single-objective table of the first objective, then the fronts'.
    assert_mentions(
        &stdout,
        &[
            "Performance score",
            "Hypervolume score",
            "ktune-0.1.0/nsga2",
        ],
    );
    let fronts = std::fs::read_to_string(out.path().join("fronts.md")).unwrap();
    assert_mentions(
        &fronts,
        &["| convolution_W6600 | minimize, minimize | 4362 |"],
    );
    let traces = std::fs::read_to_string(out.path().join("traces.jsonl")).unwrap();
    for line in traces.lines() {
        let t: serde_json::Value = serde_json::from_str(line).unwrap();
        let (values, points) = (
            t["values"].as_array().unwrap(),
            t["points"].as_array().unwrap(),
        );
        // every run lasts as long as the front's score needs (at least 220 here)
        assert_eq!(values.len(), points.len());
        assert!(values.len() >= 220, "{}", values.len());
        for (v, p) in values.iter().zip(points) {
            match v.as_f64() {
                Some(v) => {
                    assert_eq!(p[0].as_f64(), Some(v));
                    assert!(p[1].as_f64().unwrap() > 0.0);
                }
                None => assert!(p.is_null()),
            }
        }
    }
    // Scored again from the traces, the fronts are the same.
    let scores = out.path().join("again.md");
    ktune()
        .args([
            "bench",
            "score",
            "--objective",
            "time,compile_time",
            "--out",
        ])
        .arg(&scores)
        .arg(out.path().join("traces.jsonl"))
        .arg(space("convolution_W6600"))
        .succeeds();
    assert_eq!(
        std::fs::read_to_string(out.path().join("again.fronts.md")).unwrap(),
        fronts
    );

    let w6600 = space("convolution_W6600");
    fails_with(
        &["bench", "--objective", "time,time"],
        std::slice::from_ref(&w6600),
        "`time` is given twice",
    );
    fails_with(
        &["bench", "--objective", "time,energy"],
        std::slice::from_ref(&w6600),
        "no objective `energy`",
    );
    fails_with(
        &["bench", "--instances", "--objective", "time,compile_time"],
        &[w6600],
        "--instances takes one objective",
    );
}

#[test]
fn strategy_options_come_from_the_command_line_or_a_spec() {
    let (dir, spec) = in_tempdir(
        "ga.toml",
        "[strategy]\nname = \"ga\"\npopsize = 10\nmethod = \"uniform\"\n",
    );
    let out = ktune()
        .args([
            "bench",
            "--seeds",
            "2",
            "--budget",
            "30",
            "--no-plots",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .arg("--strategies")
        .arg(format!("pso:popsize=8:w=0.4,{}", spec.display()))
        .arg(space("convolution_A4000"))
        .succeeds();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("pso:popsize=8:w=0.4"), "{table}");
    assert!(
        table.contains("genetic_algorithm:method=uniform:popsize=10"),
        "{table}"
    );

    std::fs::write(&spec, "[strategy]\nname = \"ga\"\npopsise = 10\n").unwrap();
    ktune()
        .args(["bench", "--seeds", "1", "--out"])
        .arg(dir.path().join("out"))
        .arg("--strategies")
        .arg(&spec)
        .arg(space("convolution_A4000"))
        .fails_saying(&["popsise", "ga.toml"]);

    let out = ktune().arg("strategies").output().unwrap();
    let doc = String::from_utf8(out.stdout).unwrap();
    assert_mentions(&doc, &["## `diff_evo`", "`constraint_aware`"]);
}

#[test]
fn resume_runs_only_what_is_missing_and_scores_everything() {
    let out = tempfile::tempdir().unwrap();
    let run = |seeds: &str, resume: bool| {
        let mut cmd = ktune();
        cmd.args([
            "bench",
            "--strategies",
            "random,mls",
            "--seeds",
            seeds,
            "--budget",
            "20",
            "--no-plots",
            "--out",
        ])
        .arg(out.path())
        .arg(space("convolution_W6600"));
        if resume {
            cmd.arg("--resume");
        }
        let o = cmd.succeeds();
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        (String::from_utf8(o.stdout).unwrap(), stderr)
    };
    let traces = || std::fs::read_to_string(out.path().join("traces.jsonl")).unwrap();
    run("2", false);
    let first = traces();
    assert_eq!(first.lines().count(), 4);
    // A run cut off while its line was written, as when the process is killed.
    std::fs::write(
        out.path().join("traces.jsonl"),
        format!("{first}{{\"tool\": \"ktune-"),
    )
    .unwrap();
    let (table, stderr) = run("3", true);
    assert_mentions(&stderr, &["4 runs already", "2 to go"]);
    assert!(stderr.contains("cut off"), "{stderr}");
    let now = traces();
    assert!(
        now.starts_with(&first),
        "earlier runs must be kept as they were"
    );
    assert_eq!(now.lines().count(), 6);
    // The table covers all three seeds of both strategies.
    let row = table
        .lines()
        .find(|l| l.contains("ktune-0.1.0/mls") && l.contains("| 3 |"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("1/1"), "{row}");
    // Another budget: the runs in the file answer 20 evaluations, not 30, so resuming is
    // refused (naming both) before anything runs.
    let before = traces();
    ktune()
        .args(["bench", "--strategies", "random,mls", "--seeds", "4"])
        .args(["--budget", "30", "--no-plots", "--resume", "--out"])
        .arg(out.path())
        .arg(space("convolution_W6600"))
        .fails_saying(&["another budget", "20 evaluations", "gives it 30"]);
    assert_eq!(traces(), before, "nothing ran");
    // Without --resume the file starts afresh.
    run("1", false);
    assert_eq!(traces().lines().count(), 2);
}

/// `--first-seed` runs a later range of seeds, each run the same as in a run of seeds from 0,
/// so that options picked on seeds 0..N can be confirmed on seeds no one looked at.
#[test]
fn first_seed_runs_the_same_runs_as_the_seeds_from_zero() {
    let out = tempfile::tempdir().unwrap();
    let run = |dir: &str, extra: &[&str]| -> Vec<serde_json::Value> {
        ktune()
            .args([
                "bench",
                "--strategies",
                "mls",
                "--budget",
                "25",
                "--no-plots",
            ])
            .args(extra)
            .arg("--out")
            .arg(out.path().join(dir))
            .arg(space("convolution_W6600"))
            .succeeds();
        std::fs::read_to_string(out.path().join(dir).join("traces.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let later = run("later", &["--first-seed", "3", "--seeds", "2"]);
    let mut seeds: Vec<i64> = later.iter().map(|t| t["seed"].as_i64().unwrap()).collect();
    seeds.sort_unstable();
    assert_eq!(seeds, [3, 4]);
    let all = run("all", &["--seeds", "5"]);
    for t in &later {
        let same = all
            .iter()
            .find(|a| a["seed"] == t["seed"])
            .expect("every seed runs in both");
        assert_eq!(same["values"], t["values"], "seed {}", t["seed"]);
    }
    fails_with(
        &[
            "bench",
            "--first-seed",
            "9223372036854775807",
            "--seeds",
            "2",
        ],
        &[space("convolution_W6600")],
        "the seeds must stay below 2^63",
    );
}

/// Tuning the tuner: two folds, each tuned on one space and scored on the other, with the
/// options searched, the settings tried and a tuned setting at least as good as the defaults
/// on the spaces it was tuned on.
#[test]
fn tune_strategy_cross_validates_over_two_folds() {
    let out = tempfile::tempdir().unwrap();
    let result = ktune()
        .args([
            "bench",
            "tune-strategy",
            "simulated_annealing:T=0.1",
            "--seeds",
            "2",
            "--evaluations",
            "3",
            "--budget",
            "40",
            "--option",
            "start_samples=1,20",
            "--out",
        ])
        .arg(out.path())
        .arg("--spaces")
        .arg(space("dedispersion_A100"))
        .arg(space("convolution_A100"))
        .succeeds();
    let report = std::fs::read_to_string(out.path().join("tune-strategy.md")).unwrap();
    assert_eq!(
        report,
        String::from_utf8(result.stdout)
            .unwrap()
            .trim_end_matches('\n')
            .to_string()
            + "\n"
    );
    // Sorted by name and dealt out: fold 1 holds convolution_A100 back, fold 2 the other.
    assert!(
        report.contains("| 1 | convolution_A100 | `simulated_annealing"),
        "{report}"
    );
    assert!(
        report.contains("| 2 | dedispersion_A100 | `simulated_annealing"),
        "{report}"
    );
    assert!(report.contains("- `start_samples`: 1, 20"), "{report}");
    // T is fixed, so it is not searched; the fixed value stays in the tuned options.
    assert!(!report.contains("- `T`:"), "{report}");
    assert!(report.contains("T=0.1"), "{report}");
    assert_eq!(report.matches("#### Fold").count(), 2, "{report}");
    for line in report
        .lines()
        .filter(|l| l.contains("| `simulated_annealing"))
    {
        let cells: Vec<f64> = line
            .split('|')
            .filter_map(|c| c.trim().parse().ok())
            .collect();
        // fold number, then defaults and tuned on the tuning spaces, then held out.
        assert_eq!(cells.len(), 5, "{line}");
        assert!(
            cells[2] >= cells[1],
            "tuned below the defaults where tuned: {line}"
        );
    }
}

#[test]
fn tune_strategy_explains_what_it_cannot_do() {
    let cases: [(&[&str], &str); 4] = [
        (&["random"], "nothing to tune"),
        (
            &["simulated_annealing", "--option", "temperature=1,2"],
            "no such option",
        ),
        (
            &["simulated_annealing", "--option", "T=1"],
            "at least two values",
        ),
        (&["annealing", "--option", "T=1,2"], "unknown strategy"),
    ];
    for (args, expected) in cases {
        ktune()
            .args(["bench", "tune-strategy"])
            .args(args)
            .arg("--spaces")
            .arg(space("convolution_A100"))
            .arg(space("dedispersion_A100"))
            .fails_saying(&[expected]);
    }
}

/// `--budget-kind time` scores the same runs against simulated time (time.md), and
/// `ktune bench score --budget-kind time` scores trace files the same way.
#[test]
fn budget_kind_time_scores_runs_against_simulated_time() {
    let out = tempfile::tempdir().unwrap();
    ktune()
        .args([
            "bench",
            "--strategies",
            "random,mls",
            "--seeds",
            "2",
            "--budget",
            "60",
            "--no-plots",
            "--budget-kind",
            "time",
            "--out",
        ])
        .arg(out.path())
        .arg(space("convolution_A100"))
        .succeeds();
    let time = std::fs::read_to_string(out.path().join("time.md")).unwrap();
    assert!(time.contains("### Scores against simulated time"), "{time}");
    for s in ["/random |", "/mls |", "| convolution_A100 |"] {
        assert!(time.contains(s), "{s}: {time}");
    }
    let again = ktune()
        .args(["bench", "score", "--budget-kind", "time"])
        .arg(out.path().join("traces.jsonl"))
        .arg(space("convolution_A100"))
        .succeeds();
    assert_eq!(String::from_utf8(again.stdout).unwrap().trim(), time.trim());
    ktune()
        .args(["bench", "score", "--budget-kind", "wallclock"])
        .arg(out.path().join("traces.jsonl"))
        .arg(space("convolution_A100"))
        .fails_saying(&["evaluations, time"]);
    // A horizon counts evaluations: not with time, and not zero.
    for (args, expected) in [
        (
            &["--horizon", "60", "--budget-kind", "time"][..],
            "--horizon counts evaluations",
        ),
        (&["--horizon", "0"][..], "--horizon"),
    ] {
        ktune()
            .args(["bench", "score"])
            .args(args)
            .arg(out.path().join("traces.jsonl"))
            .arg(space("convolution_A100"))
            .fails_saying(&[expected]);
    }
}

/// `--transfer leave-one-out`: each space's priors are the other spaces of its kernel, the
/// traces say which, and the fixed order of the priors' ranks starts where they agree.
#[test]
fn leave_one_out_gives_each_space_the_others_of_its_kernel_as_priors() {
    // `ktune bench -s prior_rank`, one seed, with `transfer` and `budget`, into `out`.
    let prior_rank = |budget: &str,
                      transfer: &dyn AsRef<std::ffi::OsStr>,
                      out: &std::path::Path,
                      spaces: &[&str]| {
        let mut c = ktune();
        c.args([
            "bench",
            "-s",
            "prior_rank",
            "--seeds",
            "1",
            "--budget",
            budget,
        ])
        .args(["--no-plots", "--transfer"])
        .arg(transfer)
        .arg("--out")
        .arg(out);
        for s in spaces {
            c.arg(space(s));
        }
        c
    };
    // The traces a run wrote into `dir`.
    let traces = |dir: &std::path::Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(dir.join("traces.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let out = tempfile::tempdir().unwrap();
    let result = prior_rank(
        "20",
        &"leave-one-out",
        out.path(),
        &[
            "convolution_A4000",
            "convolution_A6000",
            "dedispersion_A100",
        ],
    )
    .succeeds();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains("convolution_A4000        priors: convolution_A6000"),
        "{stderr}"
    );
    assert!(
        stderr.contains("dedispersion_A100        priors: none"),
        "{stderr}"
    );
    let loo = traces(out.path());
    for t in &loo {
        assert_eq!(t["strategy"], "prior_rank/loo", "{t}");
        let priors = &t["meta"]["priors"];
        match t["space"].as_str().unwrap() {
            "convolution_A4000" => assert_eq!(priors, &serde_json::json!(["convolution_A6000"])),
            "convolution_A6000" => assert_eq!(priors, &serde_json::json!(["convolution_A4000"])),
            // No prior: random sampling, and no `priors` in the trace.
            _ => assert!(priors.is_null(), "{t}"),
        }
    }
    // With the A4000 as prior, the A6000's first 20 proposals come within 5% of its optimum
    // (the spaces table of the report gives it).
    let table = String::from_utf8(result.stdout).unwrap();
    let optimum: f64 = table
        .lines()
        .find(|l| l.starts_with("| convolution_A6000 | minimize"))
        .and_then(|l| l.split('|').nth(5))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no optimum in {table}"));
    let best = loo
        .iter()
        .filter(|t| t["space"] == "convolution_A6000")
        .flat_map(|t| t["values"].as_array().unwrap().clone())
        .filter_map(|v| v.as_f64())
        .fold(f64::INFINITY, f64::min);
    assert!(best <= optimum * 1.05, "best {best}, optimum {optimum}");

    // `--transfer each`: one run per prior, labelled by it.
    let each = tempfile::tempdir().unwrap();
    prior_rank(
        "5",
        &"each",
        each.path(),
        &[
            "convolution_A4000",
            "convolution_A6000",
            "convolution_W6600",
        ],
    )
    .succeeds();
    let mut runs: Vec<(String, String, String)> = traces(each.path())
        .iter()
        .map(|t| {
            let label = t["strategy"].as_str().unwrap().to_string();
            let prior = t["meta"]["priors"][0].as_str().unwrap().to_string();
            (t["space"].as_str().unwrap().to_string(), label, prior)
        })
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 6, "{runs:?}");
    for (space, label, prior) in &runs {
        assert_ne!(space, prior);
        assert_eq!(label, &format!("prior_rank/from-{prior}"));
    }

    // `--transfer other-kernel`: the other kernel's spaces, through the names they share.
    let other = tempfile::tempdir().unwrap();
    prior_rank(
        "5",
        &"other-kernel",
        other.path(),
        &[
            "convolution_A4000",
            "convolution_A6000",
            "dedispersion_A100",
        ],
    )
    .succeeds();
    for t in traces(other.path()) {
        assert_eq!(t["strategy"], "prior_rank/other-kernel", "{t}");
        let want = if t["space"] == "dedispersion_A100" {
            serde_json::json!(["convolution_A4000", "convolution_A6000"])
        } else {
            serde_json::json!(["dedispersion_A100"])
        };
        assert_eq!(t["meta"]["priors"], want, "{t}");
    }

    // `--transfer shuffled`: the leave-one-out priors with their values shuffled, so the
    // fixed order that found the A6000's optimum above no longer leads there.
    let shuffled = tempfile::tempdir().unwrap();
    prior_rank(
        "20",
        &"shuffled",
        shuffled.path(),
        &["convolution_A4000", "convolution_A6000"],
    )
    .succeeds();
    let runs = traces(shuffled.path());
    assert_eq!(runs.len(), 2);
    for t in &runs {
        assert_eq!(t["strategy"], "prior_rank/shuffled", "{t}");
        assert_eq!(t["meta"]["priors"].as_array().unwrap().len(), 1, "{t}");
    }
    let a6000 = runs
        .iter()
        .find(|t| t["space"] == "convolution_A6000")
        .unwrap();
    let best = a6000["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_f64())
        .fold(f64::INFINITY, f64::min);
    assert!(best > optimum * 1.05, "best {best}, optimum {optimum}");

    // `--transfer FILE`: each target's priors as listed, by a given space's name or a path.
    let listed = tempfile::tempdir().unwrap();
    let file = crate::common::written(
        listed.path(),
        "priors.json",
        &serde_json::json!({
            "convolution_A6000": ["convolution_A4000"],
            "convolution_W6600": [space("convolution_MI250X").display().to_string()],
        })
        .to_string(),
    );
    let result = prior_rank(
        "5",
        &file,
        &listed.path().join("out"),
        &[
            "convolution_A4000",
            "convolution_A6000",
            "convolution_W6600",
        ],
    )
    .succeeds();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains("convolution_A4000        priors: none"),
        "{stderr}"
    );
    for t in traces(&listed.path().join("out")) {
        assert_eq!(t["strategy"], "prior_rank/listed", "{t}");
        let priors = &t["meta"]["priors"];
        match t["space"].as_str().unwrap() {
            "convolution_A6000" => assert_eq!(priors, &serde_json::json!(["convolution_A4000"])),
            "convolution_W6600" => {
                let p = priors[0].as_str().unwrap();
                assert!(p.ends_with("convolution_MI250X.json.gz"), "{t}");
            }
            _ => assert!(priors.is_null(), "{t}"),
        }
    }
    for (text, words) in [
        (
            r#"{"convolution_H100": ["convolution_A4000"]}"#,
            "`convolution_H100` is not one of the given spaces",
        ),
        (
            r#"{"convolution_A6000": ["nowhere.json"]}"#,
            "`nowhere.json` as a prior of convolution_A6000",
        ),
        (
            r#"["convolution_A4000"]"#,
            "expected a JSON object of target names",
        ),
    ] {
        let bad = crate::common::written(listed.path(), "bad.json", text);
        prior_rank(
            "5",
            &bad,
            &listed.path().join("bad"),
            &["convolution_A4000", "convolution_A6000"],
        )
        .fails_saying(&[words]);
    }
    let out = ktune()
        .args(["bench", "-s", "prior_rank", "--transfer", "sideways"])
        .arg(space("convolution_A4000"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("neither leave-one-out, each, other-kernel, shuffled nor a file"),
        "{err}"
    );
}

/// `ktune bench score` says what looks wrong in the traces instead of scoring it in silence:
/// an empty file is an error; a run given twice, a run with no values, values better than
/// the brute-forced optimum (convolution_W6600's is 1.7276) and values of no configuration
/// of the space (another GPU's file under the same name) are warnings.
#[test]
fn scoring_names_what_looks_wrong_in_the_traces() {
    let (dir, empty) = in_tempdir("empty.jsonl", "\n");
    ktune()
        .args(["bench", "score"])
        .arg(&empty)
        .arg(space("convolution_W6600"))
        .fails_saying(&["empty.jsonl` holds no runs"]);
    let run = |seed: i64, values: &str| {
        format!(
            r#"{{"tool": "t", "strategy": "s", "space": "convolution_W6600", "seed": {seed}, "values": {values}}}"#
        )
    };
    let lines = [
        run(0, "[2.0, 1.9]"),
        run(0, "[2.0, 1.9]"),
        run(0, "[2.0, 1.9]"),
        run(1, "[]"),
        run(2, "[3.0, 0.5]"),
    ]
    .join("\n");
    let odd = crate::common::written(dir.path(), "odd.jsonl", &lines);
    let out = ktune()
        .args(["bench", "score"])
        .arg(&odd)
        .arg(space("convolution_W6600"))
        .succeeds();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_mentions(
        &said,
        &[
            "1 runs appear more than once (e.g. t/s on convolution_W6600, seed 0, 3 times)",
            "1 runs have no values (e.g. t/s on convolution_W6600, seed 1)",
            "1 runs on convolution_W6600 have values better than its brute-forced optimum",
            "seed 2: 0.5",
            // 2.0 and 1.9 are no time of that space either.
            "4 of 4 runs on convolution_W6600 have values no configuration of it has (e.g. t/s seed 0: 2)",
            "every run, so its scores below mean nothing",
        ],
    );
    // Another GPU's space under the same name: nothing beyond its optimum, but named.
    let other = tempfile::tempdir().unwrap();
    let renamed = other.path().join("convolution_A100.json.gz");
    std::fs::copy(space("convolution_A4000"), &renamed).unwrap();
    let traces = tempfile::tempdir().unwrap();
    ktune()
        .args([
            "bench",
            "--strategies",
            "random",
            "--seeds",
            "2",
            "--budget",
            "20",
            "--no-plots",
            "--out",
        ])
        .arg(traces.path())
        .arg(space("convolution_A100"))
        .succeeds();
    let out = ktune()
        .args(["bench", "score"])
        .arg(traces.path().join("traces.jsonl"))
        .arg(&renamed)
        .succeeds();
    assert_mentions(
        &String::from_utf8_lossy(&out.stderr),
        &["2 of 2 runs on convolution_A100 have values no configuration of it has"],
    );
    // On its own space, no such word.
    let out = ktune()
        .args(["bench", "score"])
        .arg(traces.path().join("traces.jsonl"))
        .arg(space("convolution_A100"))
        .succeeds();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("no configuration of it has"), "{said}");
}

/// `tune-strategy` says why a setting was refused, and checks where its report goes before it
/// tunes.
#[test]
fn tune_strategy_names_refusals_and_checks_its_output_first() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = crate::common::written(dir.path(), "file", "not a folder");
    let args = |out: &std::path::Path| {
        let mut c = ktune();
        c.args([
            "bench",
            "tune-strategy",
            "simulated_annealing",
            "--option",
            "T=0,0.5",
        ])
        .args([
            "--seeds",
            "1",
            "--evaluations",
            "2",
            "--budget",
            "10",
            "--folds",
            "1",
        ])
        .arg("--out")
        .arg(out)
        .arg("--spaces")
        .arg(space("convolution_W6600"));
        c
    };
    let err = args(&blocker.join("out")).fails_saying(&["cannot create"]);
    // Before any setting was scored.
    assert!(!err.contains("fold 1/1") && !err.contains("->"), "{err}");
    let out = dir.path().join("out");
    let said = args(&out).succeeds();
    let report = std::fs::read_to_string(out.join("tune-strategy.md")).unwrap();
    assert_mentions(
        &report,
        &["refused: strategy `simulated_annealing`: option `T` must be greater than 0"],
    );
    assert_mentions(
        &String::from_utf8_lossy(&said.stderr),
        &["-> refused: strategy `simulated_annealing`"],
    );
}

/// `--instances`: the spaces of one kernel as one space whose optimum is the configuration
/// best for all of them; another kernel's space stays alone; `bench score --instances` reads
/// the traces back the same way.
#[test]
fn instances_make_one_space_per_kernel() {
    let out = tempfile::tempdir().unwrap();
    let spaces = [
        space("convolution_A100"),
        space("convolution_W6600"),
        space("dedispersion_A100"),
    ];
    let result = ktune()
        .args([
            "bench",
            "--instances",
            "-s",
            "brute_force",
            "--seeds",
            "1",
            "--budget",
            "5000",
            "--no-plots",
            "--out",
        ])
        .arg(out.path())
        .args(&spaces)
        .succeeds();
    let table = String::from_utf8(result.stdout).unwrap();
    let err = String::from_utf8(result.stderr).unwrap();
    assert_mentions(
        &err,
        &["convolution_x2: one configuration for convolution_A100, convolution_W6600"],
    );
    assert_mentions(&table, &["convolution_x2", "dedispersion_A100"]);
    let traces = std::fs::read_to_string(out.path().join("traces.jsonl")).unwrap();
    let x2: serde_json::Value = traces
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|t| t["space"] == "convolution_x2")
        .unwrap();
    // Brute force sees every configuration once: the least geometric mean of the two GPUs'
    // times, and failures where either failed (the A100's 161).
    let values = x2["values"].as_array().unwrap();
    assert_eq!(values.len(), 4362);
    assert_eq!(values.iter().filter(|v| v.is_null()).count(), 161);
    let best = values
        .iter()
        .filter_map(|v| v.as_f64())
        .fold(f64::INFINITY, f64::min);
    assert!(best > (0.5536 * 1.7276f64).sqrt(), "{best}");
    let score = ktune()
        .args(["bench", "score", "--instances"])
        .arg(out.path().join("traces.jsonl"))
        .args(&spaces)
        .succeeds();
    assert_mentions(
        &String::from_utf8(score.stdout).unwrap(),
        &["convolution_x2"],
    );
}

/// NSGA-II runs to its budget even where its population converges on a small space: the H100
/// matmul's time and energy (140 configurations, a front of 5), exported from the committed
/// study as a Kernel Tuner cache. Its runs used to stop at 112-119 evaluations once every
/// child it bred had been measured.
#[test]
fn nsga2_runs_to_its_budget_on_a_small_space_of_two_objectives() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("h100_matmul.json");
    ktune()
        .args(["results", "--format", "cache", "--out"])
        .arg(&cache)
        .arg(crate::common::repo("bench/data/h100-energy/matmul.db"))
        .succeeds();
    let out = dir.path().join("out");
    ktune()
        .arg("bench")
        .arg(&cache)
        .args([
            "-s",
            "nsga2",
            "--objective",
            "time,energy_j",
            "--seeds",
            "5",
            "--no-plots",
        ])
        .arg("--out")
        .arg(&out)
        .succeeds();
    let traces = std::fs::read_to_string(out.join("traces.jsonl")).unwrap();
    let lengths: Vec<usize> = traces
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["values"]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    assert_eq!(lengths, vec![140; 5]);
}

/// `--trace-configs`: every trace records its configurations (as cache keys, in the order
/// of its values) and what proposed each, with one worker and with several.
#[test]
fn trace_configs_records_each_configuration_and_what_proposed_it() {
    let out = tempfile::tempdir().unwrap();
    ktune()
        .args([
            "bench",
            "--strategies",
            "auto,random",
            "--seeds",
            "2",
            "--budget",
            "30",
            "--workers",
            "1,3",
            "--trace-configs",
            "--no-plots",
            "--out",
        ])
        .arg(out.path())
        .arg(space("convolution_W7800"))
        .succeeds();
    let traces = std::fs::read_to_string(out.path().join("traces.jsonl")).unwrap();
    let mut value_of: std::collections::HashMap<String, Option<f64>> = Default::default();
    let mut runs = 0;
    for line in traces.lines() {
        let t: serde_json::Value = serde_json::from_str(line).unwrap();
        let meta = &t["meta"];
        let params = meta["params"].as_array().unwrap();
        assert_eq!(params[0], "block_size_x");
        let configs = meta["configs"].as_array().unwrap();
        let origins = meta["origins"].as_array().unwrap();
        let values = t["values"].as_array().unwrap();
        assert_eq!(configs.len(), 30);
        assert_eq!(origins.len(), 30);
        assert_eq!(values.len(), 30);
        let distinct: std::collections::HashSet<&str> =
            configs.iter().map(|c| c.as_str().unwrap()).collect();
        assert_eq!(
            distinct.len(),
            30,
            "a run evaluates each configuration once"
        );
        for (c, v) in configs.iter().zip(values) {
            let key = c.as_str().unwrap();
            assert_eq!(key.split(',').count(), params.len(), "{key}");
            // A configuration has one value in a brute-forced space, whichever run met it:
            // configurations out of step with the values would disagree.
            let seen = value_of.entry(key.to_string()).or_insert(v.as_f64());
            assert_eq!(*seen, v.as_f64(), "{key}");
        }
        let strategy = t["strategy"].as_str().unwrap();
        if strategy.starts_with("auto") {
            assert_eq!(origins[0], "model/initial", "{strategy}");
            assert!(
                origins.iter().any(|o| o == "mls/climb"),
                "{strategy}: {origins:?}"
            );
        } else {
            // `random` does not say.
            assert!(origins.iter().all(serde_json::Value::is_null), "{strategy}");
        }
        runs += 1;
    }
    assert_eq!(runs, 2 * 2 * 2);

    // bench/origins.py reads them: the model's initial sample opens every `auto` run.
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/origins.py");
    let python = std::process::Command::new("python3")
        .arg(&script)
        .arg(out.path().join("traces.jsonl"))
        .args(["--phases", "10", "--strategy", "auto/w1"])
        .output();
    let Ok(python) = python else {
        eprintln!("SKIPPED: bench/origins.py (no python3 on this machine)");
        return;
    };
    let table = String::from_utf8(python.stdout).unwrap();
    assert!(
        python.status.success(),
        "{table}{}",
        String::from_utf8_lossy(&python.stderr)
    );
    let initial = table
        .lines()
        .find(|l| l.starts_with("| auto/w1 | convolution_W7800 | model/initial | 0-9 |"))
        .unwrap_or_else(|| panic!("no initial-sample row in\n{table}"));
    // Two runs, each with its first evaluations from the sample, each a first best.
    let proposals: usize = initial.split('|').nth(5).unwrap().trim().parse().unwrap();
    assert!((2..=20).contains(&proposals), "{initial}");
    assert!(
        table.contains("| auto/w1 | convolution_W7800 | mls/climb | 10- |"),
        "{table}"
    );
}
