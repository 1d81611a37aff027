//! A study of several objectives from the command line: `objectives = [...]` in the spec's
//! runner, `ktune tune` recording them as the study's, `ktune results --pareto` listing the
//! front, exports carrying every objective, and a resumed study held to its objectives.

use crate::common::{Succeeds, ktune_in, results_json, written};

/// Time falls and energy rises with `x`; `y` only adds to both, so the front is the four
/// configurations with `y = 1`.
const SPEC: &str = r#"[[parameter]]
name = "x"
values = [1, 2, 4, 8]

[[parameter]]
name = "y"
values = [1, 2, 3]

[runner]
run = "awk 'BEGIN {{ printf \"time: %.3f\\nenergy: %.3f\\n\", 100 / {x} + {y}, 3 * {x} + {y} }}'"
repeat = 1
objectives = [
  { name = "time", regex = 'time: (?P<value>[0-9.]+)', unit = "ms" },
  { name = "energy", regex = 'energy: (?P<value>[0-9.]+)', unit = "J" },
]

[budget]
max_evaluations = 12
"#;

#[test]
fn a_study_of_two_objectives_lists_its_front_and_keeps_its_objectives() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    written(d, "s.toml", SPEC);
    let tuned = ktune_in(d).args(["tune", "s.toml"]).succeeds();
    let said = String::from_utf8_lossy(&tuned.stdout).into_owned();
    ktune_core::testing::assert_mentions(
        &said,
        &[
            "Pareto front of time and energy: 4 configurations",
            "time = 13.500000, energy = 25.000000: x=8, y=1",
            "ktune results s.db --pareto",
        ],
    );

    // The front: y = 1 for every x, by time (x = 8 fastest), and nothing else.
    let front = results_json(d, &["s.db".as_ref(), "--pareto".as_ref()]);
    let xy: Vec<(i64, i64)> = front
        .iter()
        .map(|r| {
            (
                r["params"]["x"].as_i64().unwrap(),
                r["params"]["y"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(xy, [(8, 1), (4, 1), (2, 1), (1, 1)], "{front:?}");
    // Each export carries the other objective by name beside the first.
    assert_eq!(front[0]["objective"], 13.5);
    assert_eq!(front[0]["observed"]["energy"], 25.0);
    let table = ktune_in(d).args(["results", "s.db", "--pareto"]).succeeds();
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    ktune_core::testing::assert_mentions(&table, &["time (ms)", "energy", "x=8, y=1"]);
    assert!(!table.contains("y=2"), "{table}");
    let csv = ktune_in(d)
        .args(["results", "s.db", "--format", "csv"])
        .succeeds();
    let header = String::from_utf8_lossy(&csv.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        header.contains(",time,") && header.ends_with(",energy"),
        "{header}"
    );

    // A goal picks one: time 100/x + y, energy 3x + y; the fastest is x=8 (13.5), and within
    // 100% of it the least energy is x=4 (26, 13); weighted equally, relative to each best
    // (13.5 and 4), x=4 (26/13.5 + 13/4 = 5.18) is least, before x=2 (51/13.5 + 7/4 = 5.53).
    let picked = |goal: &str| {
        let r = results_json(d, &["s.db".as_ref(), "--goal".as_ref(), goal.as_ref()]);
        assert_eq!(r.len(), 1, "{goal}: {r:?}");
        (
            r[0]["params"]["x"].as_i64().unwrap(),
            r[0]["params"]["y"].as_i64().unwrap(),
        )
    };
    assert_eq!(picked("energy within 100% of time"), (4, 1));
    assert_eq!(picked("energy within 0% of time"), (8, 1));
    assert_eq!(picked("weighted time=1, energy=1"), (4, 1));
    assert_eq!(picked("weighted time=1, energy=4"), (2, 1));
    ktune_in(d)
        .args(["results", "s.db", "--goal", "power within 5% of time"])
        .fails_saying(&["`power` is not an objective", "time, energy"]);
    // `ktune export --goal` exports what the goal picks from the study (its second
    // objective read from the stored values).
    let exported = |goal: &str| {
        ktune_in(d)
            .args([
                "export", "s.db", "--device", "s.db=CPU", "--size", "s.db=64",
            ])
            .args(["--wisdom", "w.wisdom", "--goal", goal])
            .succeeds();
        let text = std::fs::read_to_string(d.join("w.wisdom")).unwrap();
        let record: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        record["config"].clone()
    };
    assert_eq!(
        exported("energy within 100% of time"),
        serde_json::json!([4, 1])
    );
    assert_eq!(
        exported("weighted time=1, energy=4"),
        serde_json::json!([2, 1])
    );

    // T4 lists both objectives and measures each (ktune's extension: Kernel Tuner's writer
    // takes one).
    let t4 = ktune_in(d)
        .args(["results", "s.db", "--format", "t4", "--pareto"])
        .succeeds();
    let t4: serde_json::Value = serde_json::from_slice(&t4.stdout).unwrap();
    let first = &t4["results"][0];
    assert_eq!(first["objectives"], serde_json::json!(["time", "energy"]));
    assert_eq!(first["measurements"][1]["name"], "energy");
    assert_eq!(first["measurements"][1]["value"], 25.0);

    // The study keeps its objectives: a spec of one objective is another problem.
    let one = SPEC.replace(
        "  { name = \"energy\", regex = 'energy: (?P<value>[0-9.]+)', unit = \"J\" },\n",
        "",
    );
    written(d, "one.toml", &one);
    ktune_in(d)
        .args(["tune", "one.toml", "--db", "s.db", "--max-evals", "13"])
        .fails_saying(&["different tuning problem", "`objectives`", "energy"]);

    // --pareto needs several objectives.
    written(d, "single.toml", &one);
    ktune_in(d).args(["tune", "single.toml"]).succeeds();
    ktune_in(d)
        .args(["results", "single.db", "--pareto"])
        .fails_saying(&["--pareto", "one objective", "`time`"]);
    ktune_in(d)
        .args(["results", "single.db", "--goal", "weighted time=1"])
        .fails_saying(&["--goal", "one objective"]);
}

#[test]
fn several_objectives_are_refused_where_they_cannot_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A study of instances has one objective, their geometric mean.
    let instances =
        format!("{SPEC}\n[[instance]]\nname = \"a\"\nn = 1\n\n[[instance]]\nname = \"b\"\nn = 2\n");
    written(d, "i.toml", &instances);
    ktune_in(d)
        .args(["tune", "i.toml"])
        .fails_saying(&["instance", "one objective", "objectives"]);
    // Both ways of naming the objective at once.
    let both = SPEC.replace("repeat = 1\n", "repeat = 1\nobjective = { name = \"t\" }\n");
    written(d, "b.toml", &both);
    ktune_in(d)
        .args(["tune", "b.toml"])
        .fails_saying(&["`objective` or `objectives`"]);
}

/// A goal in the spec (or `--goal`): the strategy seeks it, the study records it, the summary
/// says what it picks, and `ktune export` exports that configuration without being told the
/// goal again; a study resumed with another goal says so, and a goal that cannot be read is
/// refused naming where it came from.
#[test]
fn a_goal_is_sought_recorded_and_picks_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Top-level keys come before the first section. Time 100/x + y, energy 3x + y: within
    // 100% of the fastest (x=8, 13.5) the least energy is x=4, y=1 (26, 13).
    written(
        d,
        "g.toml",
        &format!("goal = \"energy within 100% of time\"\n{SPEC}"),
    );
    let tuned = ktune_in(d).args(["tune", "g.toml"]).succeeds();
    let said = String::from_utf8_lossy(&tuned.stdout).into_owned();
    ktune_core::testing::assert_mentions(
        &said,
        &[
            "the goal `energy within 100% of time` picks: x=4, y=1",
            "time = 26.000000, energy = 13.000000",
        ],
    );
    let json = ktune_in(d)
        .args(["tune", "g.toml", "--db", "j.db", "--json"])
        .succeeds();
    // One line per evaluation, the summary last.
    let last = String::from_utf8_lossy(&json.stdout)
        .lines()
        .last()
        .unwrap()
        .to_string();
    let summary: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(
        summary["summary"]["goal"]["goal"],
        "energy within 100% of time"
    );
    assert_eq!(summary["summary"]["goal"]["pick"]["config"]["x"], 4);
    assert_eq!(summary["summary"]["goal"]["pick"]["energy"], 13.0);
    // The export picks by the study's goal (not the fastest, x=8).
    ktune_in(d)
        .args([
            "export", "g.db", "--device", "g.db=CPU", "--size", "g.db=64",
        ])
        .args(["--wisdom", "w.wisdom"])
        .succeeds();
    let text = std::fs::read_to_string(d.join("w.wisdom")).unwrap();
    let record: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(record["config"], serde_json::json!([4, 1]), "{text}");
    // Resumed with another goal: this process seeks its own, and says so.
    let resumed = ktune_in(d)
        .args(["tune", "g.toml", "--max-evals", "12"])
        .args(["--goal", "weighted time=1, energy=4"])
        .succeeds();
    ktune_core::testing::assert_mentions(
        &String::from_utf8_lossy(&resumed.stderr),
        &[
            "was started seeking `energy within 100% of time`",
            "this process seeks `weighted time=1, energy=4`",
        ],
    );
    ktune_core::testing::assert_mentions(
        &String::from_utf8_lossy(&resumed.stdout),
        &["the goal `weighted time=1, energy=4` picks: x=2, y=1"],
    );
    // A strategy that cannot seek a goal says so, and the goal still picks.
    let random = ktune_in(d)
        .args(["tune", "g.toml", "--db", "r.db", "--strategy", "random"])
        .succeeds();
    ktune_core::testing::assert_mentions(
        &String::from_utf8_lossy(&random.stderr),
        &["strategy random does not seek the goal `energy within 100% of time`"],
    );
    ktune_core::testing::assert_mentions(
        &String::from_utf8_lossy(&random.stdout),
        &["the goal `energy within 100% of time` picks: x=4, y=1"],
    );
    assert!(!String::from_utf8_lossy(&tuned.stderr).contains("does not seek"));
    // Goals that cannot be read, from the spec and from the command line.
    written(
        d,
        "bad.toml",
        &format!("goal = \"power within 5% of time\"\n{SPEC}"),
    );
    ktune_in(d).args(["tune", "bad.toml"]).fails_saying(&[
        "goal",
        "`power` is not an objective",
        "time, energy",
    ]);
    ktune_in(d)
        .args([
            "tune",
            "g.toml",
            "--db",
            "x.db",
            "--goal",
            "energy within 5 of time",
        ])
        .fails_saying(&["--goal", "not a percentage"]);
    let one = SPEC.replace(
        "  { name = \"energy\", regex = 'energy: (?P<value>[0-9.]+)', unit = \"J\" },\n",
        "",
    );
    written(d, "one.toml", &format!("goal = \"weighted time=1\"\n{one}"));
    ktune_in(d).args(["tune", "one.toml"]).fails_saying(&[
        "goal",
        "several objectives",
        "one (`time`)",
    ]);
}
