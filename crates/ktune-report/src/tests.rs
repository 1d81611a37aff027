use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::json;

use super::*;
use crate::importance::analyse;

fn row(seq: usize, params: &[(&str, Json)], status: &str, objective: Option<f64>) -> Row {
    Row {
        seq: seq as i64,
        params: params
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
        status: status.into(),
        objective,
        metrics: objective.into_iter().collect(),
        reason: (status != "ok").then(|| format!("{status} failed at line {seq}")),
        compile_s: 0.1,
        benchmark_s: 0.2,
        verification_s: 0.0,
        framework_s: 0.0,
        clock_s: 0.3 * (seq + 1) as f64,
        observed: Default::default(),
        samples: None,
        worker: None,
        device: None,
    }
}

fn study(rows: Vec<Row>) -> Study {
    Study {
        name: "s".into(),
        source: "test".into(),
        meta: vec![
            ("objective".into(), "time".into()),
            ("direction".into(), "minimize".into()),
        ],
        rows,
        ..Study::default()
    }
}

fn count(html: &str, needle: &str) -> usize {
    html.matches(needle).count()
}

/// Random configurations of `k` parameters with four values each.
fn configurations(n: usize, k: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n)
        .map(|_| (0..k).map(|_| rng.random_range(0..4)).collect())
        .collect()
}

fn noise(rng: &mut Xoshiro256PlusPlus) -> f64 {
    1.0 + 0.03 * (rng.random::<f64>() - 0.5)
}

#[test]
fn importance_tells_the_parameter_that_matters_the_one_that_matters_only_with_it_and_the_rest() {
    // `a` matters; `b` matters only where a = 0; x, y, z not at all.
    let names: Vec<String> = ["a", "b", "x", "y", "z"].map(String::from).to_vec();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let rows: Vec<(Vec<String>, f64)> = configurations(1500, 5, 1)
        .into_iter()
        .map(|c| {
            let b_effect = if c[0] == 0 { 0.8 * c[1] as f64 } else { 0.0 };
            let v = (0.5 * c[0] as f64 + b_effect).exp() * noise(&mut rng);
            (c.iter().map(|i| i.to_string()).collect(), v)
        })
        .collect();
    let shown: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let a = analyse(&names, &rows, &shown).unwrap();
    let mut important: Vec<&str> = a
        .params
        .iter()
        .filter(|p| p.important)
        .map(|p| p.name.as_str())
        .collect();
    important.sort_unstable();
    assert_eq!(important, ["a", "b"], "{:?}", a.params);
    // The best tenth is a = 0 with b = 0, then a = 1 with any b: both carry it.
    assert!(
        a.params
            .iter()
            .filter(|p| p.important)
            .all(|p| p.share > 0.3),
        "{:?}",
        a.params
    );
    for p in a.params.iter().filter(|p| !p.important) {
        assert!(p.share < 0.05, "{p:?}");
    }
    let pairs: Vec<(&str, &str)> = a
        .pairs
        .iter()
        .map(|p| (p.names.0.as_str(), p.names.1.as_str()))
        .collect();
    assert_eq!(pairs, [("a", "b")], "{:?}", a.pairs);
    // a's effect grows with its value: e^(0.5 a) and the b-part at a = 0.
    let effect_a = &a.effects[a.params.iter().position(|p| p.name == "a").unwrap()];
    let centre = |v: &str| effect_a.iter().find(|e| e.value == v).unwrap().centre;
    assert!(
        centre("1") < centre("2") && centre("2") < centre("3"),
        "{effect_a:?}"
    );
    assert!(
        effect_a
            .iter()
            .all(|e| e.low < e.centre && e.centre < e.high)
    );
}

#[test]
fn a_pair_that_matters_only_together_is_found_though_each_alone_looks_even() {
    // Slow where b = c: each of b and c alone is spread evenly over the best configurations.
    let names: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let rows: Vec<(Vec<String>, f64)> = configurations(2000, 4, 2)
        .into_iter()
        .map(|c| {
            let v =
                (0.3 * c[0] as f64 + if c[1] == c[2] { 1.0 } else { 0.0 }).exp() * noise(&mut rng);
            (c.iter().map(|i| i.to_string()).collect(), v)
        })
        .collect();
    let shown: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let a = analyse(&names, &rows, &shown).unwrap();
    let important: Vec<&str> = a
        .params
        .iter()
        .filter(|p| p.important)
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(important, ["a"], "{:?}", a.params);
    let pairs: Vec<(&str, &str)> = a
        .pairs
        .iter()
        .map(|p| (p.names.0.as_str(), p.names.1.as_str()))
        .collect();
    assert!(pairs.contains(&("b", "c")), "{:?}", a.pairs);
    assert!(
        pairs.iter().all(|p| p.0 != "d" && p.1 != "d"),
        "{:?}",
        a.pairs
    );
}

#[test]
fn an_additive_objective_shows_no_pair() {
    // Selecting the best of e^(a + b) makes a and b look dependent in the best set; they do
    // not interact, and the pair test must not say they do.
    let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let rows: Vec<(Vec<String>, f64)> = configurations(3000, 3, 4)
        .into_iter()
        .map(|c| {
            let v = (0.5 * c[0] as f64 + 0.4 * c[1] as f64).exp() * noise(&mut rng);
            (c.iter().map(|i| i.to_string()).collect(), v)
        })
        .collect();
    let shown: Vec<f64> = rows.iter().map(|r| r.1).collect();
    let a = analyse(&names, &rows, &shown).unwrap();
    assert!(a.pairs.is_empty(), "{:?}", a.pairs);
    let mut important: Vec<&str> = a
        .params
        .iter()
        .filter(|p| p.important)
        .map(|p| p.name.as_str())
        .collect();
    important.sort_unstable();
    assert_eq!(important, ["a", "b"], "{:?}", a.params);
}

#[test]
fn importance_needs_enough_measurements() {
    let names = vec!["a".to_string()];
    let rows: Vec<(Vec<String>, f64)> = (0..importance::MIN_MEASUREMENTS - 1)
        .map(|i| (vec![(i % 2).to_string()], i as f64 + 1.0))
        .collect();
    let shown: Vec<f64> = rows.iter().map(|r| r.1).collect();
    assert!(analyse(&names, &rows, &shown).is_none());
}

#[test]
fn every_measurement_and_failure_is_a_mark_below_the_limit() {
    let mut rows = Vec::new();
    for i in 0..300 {
        let p = [("x", json!(i % 7)), ("y", json!(["u", "v"][i % 2]))];
        let (status, value) = match i % 10 {
            3 => ("compile", None),
            7 => ("timeout", None),
            9 => ("wrong_output", None),
            _ => ("ok", Some(1.0 + (i % 7) as f64 + 0.001 * i as f64)),
        };
        rows.push(row(i, &p, status, value));
    }
    let html = render(&study(rows), &Options::default()).unwrap();
    assert_eq!(count(&html, r#"class="pt ok""#), 210);
    assert_eq!(count(&html, r#"class="fail f-compile""#), 30);
    assert_eq!(count(&html, r#"class="fail f-timeout""#), 30);
    assert_eq!(count(&html, r#"class="fail f-wrong""#), 30);
    assert!(html.contains("Drawn: 210 of 210 successful measurements; 90 of 90 failures."));
    // The failures' table groups messages that differ only in numbers.
    assert_eq!(count(&html, r#"<tr class="kind-compile">"#), 1);
    assert!(html.contains("×30"), "one message shape per kind");
    assert!(html.contains(r#"<b id="n-failed">90</b>"#));
    // x matters (the value grows with it), y does not.
    assert!(html.contains(r#"<tr class="param important" data-param="x">"#));
    assert!(html.contains(r#"<tr class="param" data-param="y">"#));
    assert_eq!(count(&html, r#"class="top-row""#), 20);
    assert_eq!(count(&html, r#"class="pc-line"#), 20);
}

#[test]
fn many_measurements_are_decimated_keeping_every_new_best_and_saying_so() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let rows: Vec<Row> = (0..20_000)
        .map(|i| {
            row(
                i,
                &[("x", json!(i % 13))],
                "ok",
                Some(1.0 + rng.random::<f64>() * 100.0 / (1.0 + i as f64).sqrt()),
            )
        })
        .collect();
    let best_seq = rows
        .iter()
        .min_by(|a, b| a.objective.unwrap().total_cmp(&b.objective.unwrap()))
        .unwrap()
        .seq;
    let options = Options {
        max_points: 1000,
        ..Options::default()
    };
    let html = render(&study(rows), &options).unwrap();
    let drawn = count(&html, r#"class="pt ok""#);
    assert!((900..=1100).contains(&drawn), "{drawn}");
    assert!(html.contains(&format!(
        "Drawn: {drawn} of 20000 successful measurements (the lowest and highest"
    )));
    assert!(
        html.contains(&format!(r##"<title>#{} "##, best_seq + 1)),
        "the best is drawn"
    );
}

#[test]
fn names_messages_and_values_cannot_inject_markup() {
    let evil = "<script>alert(1)</script>\"'&";
    let mut rows: Vec<Row> = (0..30)
        .map(|i| {
            row(
                i,
                &[(evil, json!(format!("{evil}{}", i % 3)))],
                "ok",
                Some(1.0 + i as f64),
            )
        })
        .collect();
    rows[5].status = "runtime".into();
    rows[5].reason = Some(format!("{evil}\u{7}"));
    rows[5].worker = Some(evil.into());
    let mut s = study(rows);
    s.name = evil.into();
    s.source = evil.into();
    s.meta.push(("unit".into(), evil.into()));
    s.meta.push((evil.into(), evil.into()));
    let html = render(&s, &Options::default()).unwrap();
    assert!(!html.contains("<script"), "markup got through");
    assert!(!html.contains('\u{7}'));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;"));
}

#[test]
fn a_study_without_evaluations_is_refused_and_one_without_success_is_shown() {
    let err = render(&study(Vec::new()), &Options::default()).unwrap_err();
    assert!(err.to_string().contains("has no evaluations yet"), "{err}");
    let rows: Vec<Row> = (0..5)
        .map(|i| row(i, &[("x", json!(i))], "compile", None))
        .collect();
    let html = render(&study(rows), &Options::default()).unwrap();
    assert!(html.contains(r#"id="no-success""#));
    assert_eq!(count(&html, r#"class="fail f-compile""#), 5);
    assert!(html.contains("Needs at least 20 successful measurements (0 here)."));
}

#[test]
fn the_default_and_the_budget_are_marked_and_maximised_objectives_rank_upwards() {
    let rows: Vec<Row> = (0..40)
        .map(|i| row(i, &[("x", json!(i))], "ok", Some((i % 10) as f64 + 1.0)))
        .collect();
    let mut s = study(rows);
    s.meta = vec![
        ("objective".into(), "GFLOP/s".into()),
        ("direction".into(), "maximize".into()),
        ("max_evaluations".into(), "50".into()),
    ];
    s.default = Some(vec![("x".into(), json!(0))]);
    let html = render(&s, &Options::default()).unwrap();
    assert!(
        html.contains(r#"<b id="best-value">10</b>"#),
        "the largest is the best"
    );
    assert!(html.contains(r#"class="default-line""#));
    assert!(html.contains("<b>10×</b>better than the default (1)"));
    assert!(html.contains("40 of its budget of 50 evaluations"));
    s.meta.push(("stopped".into(), "time".into()));
    let html = render(&s, &Options::default()).unwrap();
    assert!(html.contains(
        "40 evaluations of its budget of 50; the last worker stopped because its time limit was reached."
    ));
    assert!(html.contains(r#"class="budget-line""#));
}

#[test]
fn a_study_of_several_objectives_shows_its_pareto_front_and_one_of_one_does_not() {
    use ktune_core::{Direction, Metric};
    // time = 10 / x + y and energy = x + y: the front is y = 0 for every x.
    let mut rows = Vec::new();
    for x in 1..=4 {
        for y in 0..=1 {
            let (t, e) = (10.0 / f64::from(x) + f64::from(y), f64::from(x + y));
            let mut r = row(
                rows.len(),
                &[("x", json!(x)), ("y", json!(y))],
                "ok",
                Some(t),
            );
            r.metrics = vec![t, e, 0.01];
            rows.push(r);
        }
    }
    rows.push(row(
        rows.len(),
        &[("x", json!(5)), ("y", json!(0))],
        "runtime",
        None,
    ));
    let mut s = study(rows);
    let objectives = [
        Metric::new("time", Direction::Minimize),
        Metric::new("energy", Direction::Minimize),
    ];
    s.meta.push((
        ktune_core::OBJECTIVES_KEY.into(),
        serde_json::to_string(&objectives).unwrap(),
    ));
    let html = render(&s, &Options::default()).unwrap();
    assert_eq!(count(&html, r#"<circle class="pt front""#), 4);
    assert_eq!(count(&html, r#"<tr class="front-row">"#), 4);
    assert!(
        html.contains("4 of 8 successful configurations are on the Pareto front of time (minimize), energy (minimize)"),
        "{html}"
    );
    // Best time first: x = 4 (2.5), energy 4.
    let first = html.split(r#"<tr class="front-row">"#).nth(1).unwrap();
    assert!(
        first.starts_with("<td>7</td><td>2.5</td><td>4</td>"),
        "{first}"
    );
    assert!(first.contains("x=4, y=0"), "{first}");
    assert!(!html.contains("goal-pick"));
    // A study that sought a goal says what it picks: within 100% of the fastest time (2.5),
    // the least energy is x = 2, y = 0 (time 5, energy 2), the third evaluation.
    s.meta.push((
        ktune_core::GOAL_KEY.into(),
        "energy within 100% of time".into(),
    ));
    let html = render(&s, &Options::default()).unwrap();
    assert!(
        html.contains(
            "<code>energy within 100% of time</code>, picks evaluation 3: <code>x=2, y=0</code>"
        ),
        "{html}"
    );
    let single = render(
        &study(vec![row(0, &[("x", json!(1))], "ok", Some(1.0))]),
        &Options::default(),
    )
    .unwrap();
    assert!(!single.contains("front-section"));
}
