//! T4, the auto-tuning community's results format (`results-schema.json` 1.0.0 in Kernel
//! Tuner's repository): one entry per evaluated configuration with its parameter values,
//! timings, validity and measurements. Times are in milliseconds (`metadata.timeunit`), as
//! Kernel Tuner writes them.
//!
//! Export writes the schema's keys (`compilation_time`) and Kernel Tuner's (`compilation`,
//! `benchmark`), so either kind of reader finds them; import accepts both. Kernel Tuner 1.5
//! marks failed configurations `"invalidity": "correct"` and records the failure as a string
//! measurement (`"RuntimeFailedConfig"`), so import trusts a non-numeric objective over the
//! `invalidity` field.
//!
//! **Several objectives.** The schema lists a result's `objectives` and its `measurements`,
//! but Kernel Tuner's writer refuses more than one objective. ktune writes a study of several
//! with every objective's name in `objectives`, in the study's order (the first is the primary
//! one: the one a single-objective reader takes), and one measurement per objective under that
//! name; a failed result has its reason as the first objective's value, as with one. Import
//! reads every listed objective into the record's values, in that order.

use ktune_space::SearchSpace;
use serde_json::{Value as Json, json};

use crate::{FailureKind, Metric, Outcome, Record, Timings};

/// The T4 results schema version written.
pub const T4_VERSION: &str = "1.0.0";

/// Errors reading a T4 file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum T4Error {
    /// The document does not have the T4 shape.
    #[error("not a T4 results document: {0}")]
    Shape(String),
    /// A result's configuration is not in the search space.
    #[error("result {index}: configuration {configuration} is not in the search space")]
    UnknownConfiguration {
        /// Index in `results`.
        index: usize,
        /// The configuration as written.
        configuration: String,
    },
}

fn invalidity(outcome: &Outcome) -> &'static str {
    match outcome.failure() {
        None => "correct",
        Some(FailureKind::Compile) => "compile",
        Some(FailureKind::Runtime) => "runtime",
        Some(FailureKind::Timeout) => "timeout",
        Some(FailureKind::WrongOutput) => "correctness",
        Some(FailureKind::Invalid) => "constraints",
    }
}

/// Exports records as a T4 results document.
pub fn export(space: &SearchSpace, objective: &Metric, records: &[Record]) -> Json {
    document(
        records
            .iter()
            .map(|r| {
                let configuration: serde_json::Map<String, Json> = space
                    .params()
                    .iter()
                    .zip(space.values(&r.config))
                    .map(|(p, v)| (p.name().to_string(), v.to_json()))
                    .collect();
                entry(
                    configuration,
                    &[objective.name.as_str()],
                    &r.outcome,
                    r.clock,
                )
            })
            .collect(),
    )
}

/// One T4 result: a configuration (parameter name to value), its outcome for `objectives`
/// (the outcome's first values, in order; one name for a study of one), and the tuning clock
/// when it finished.
pub fn entry(
    configuration: serde_json::Map<String, Json>,
    objectives: &[&str],
    outcome: &Outcome,
    clock: f64,
) -> Json {
    let t = outcome.timings();
    let ms = |s: f64| s * 1000.0;
    let measurements: Vec<Json> = objectives
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let value = match outcome {
                Outcome::Ok { values, .. } => json!(values.get(i).copied().unwrap_or(f64::NAN)),
                Outcome::Failed { kind, reason, .. } if i == 0 => {
                    json!(format!("{}: {reason}", kind.name()))
                }
                Outcome::Failed { .. } => return None,
            };
            let unit = if name.starts_with("time") { "ms" } else { "" };
            Some(json!({"name": name, "value": value, "unit": unit}))
        })
        .collect();
    json!({
        "configuration": configuration,
        "times": {
            "compilation_time": ms(t.compile),
            "compilation": ms(t.compile),
            "benchmark": ms(t.benchmark),
            "framework": ms(t.framework),
            "search_algorithm": 0.0,
            "validation": ms(t.verification),
            "runtimes": [],
        },
        "invalidity": invalidity(outcome),
        "correctness": if outcome.failure() == Some(FailureKind::WrongOutput) { 0 } else { 1 },
        "measurements": measurements,
        "objectives": objectives,
        "ktune_clock_seconds": clock,
    })
}

/// The T4 results document around result entries.
pub fn document(results: Vec<Json>) -> Json {
    json!({
        "schema_version": T4_VERSION,
        "results": results,
        "metadata": {"timeunit": "milliseconds"},
    })
}

/// Imports a T4 results document into records of `space` (for resuming or comparing with
/// another tool). The objective is the first of each result's `objectives`, or `objective`.
pub fn import(space: &SearchSpace, objective: &str, doc: &Json) -> Result<Vec<Record>, T4Error> {
    let results = doc
        .get("results")
        .and_then(Json::as_array)
        .ok_or_else(|| T4Error::Shape("no `results` array".into()))?;
    let mut clock = 0.0;
    results
        .iter()
        .enumerate()
        .map(|(index, r)| {
            let conf = r
                .get("configuration")
                .and_then(Json::as_object)
                .ok_or_else(|| {
                    T4Error::Shape(format!("result {index} has no `configuration` object"))
                })?;
            let values: Option<Vec<ktune_space::Value>> = space
                .params()
                .iter()
                .map(|p| conf.get(p.name()).and_then(ktune_space::Value::from_json))
                .collect();
            let config = values
                .and_then(|v| space.configuration_of(&v))
                .filter(|c| space.contains(c))
                .ok_or_else(|| T4Error::UnknownConfiguration {
                    index,
                    configuration: Json::Object(conf.clone()).to_string(),
                })?;
            let outcome = result_outcome(r, objective);
            let timings = *outcome.timings();
            clock = r
                .get("ktune_clock_seconds")
                .and_then(Json::as_f64)
                .unwrap_or(clock + timings.total());
            Ok(Record {
                config,
                outcome,
                clock,
            })
        })
        .collect()
}

/// The outcome one T4 result records (its first objective, else `objective`), with its times.
pub fn result_outcome(r: &Json, objective: &str) -> Outcome {
    let times = r.get("times");
    let ms = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| times.and_then(|t| t.get(*k)).and_then(Json::as_f64))
            .unwrap_or(0.0)
            / 1000.0
    };
    let timings = Timings {
        compile: ms(&["compilation_time", "compilation"]),
        benchmark: ms(&["benchmark"]),
        verification: ms(&["validation"]),
        framework: ms(&["framework"]),
    };
    let listed: Vec<&str> = r
        .get("objectives")
        .and_then(Json::as_array)
        .map(|o| o.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let names = if listed.is_empty() {
        vec![objective]
    } else {
        listed
    };
    let value_of = |name: &str| {
        r.get("measurements")
            .and_then(Json::as_array)
            .and_then(|ms| {
                ms.iter()
                    .find(|m| m.get("name").and_then(Json::as_str) == Some(name))
            })
            .and_then(|m| m.get("value"))
    };
    let measured = value_of(names[0]);
    // Every listed objective's value, in order; one that is missing or not a number makes
    // the result a failure as the first one's would.
    let values: Option<Vec<f64>> = names
        .iter()
        .map(|n| value_of(n).and_then(Json::as_f64))
        .collect();
    let stated = r
        .get("invalidity")
        .and_then(Json::as_str)
        .unwrap_or("correct");
    match (values, stated) {
        (Some(v), "correct") => Outcome::ok(v, timings),
        _ => {
            let missing = names
                .iter()
                .find(|n| value_of(n).and_then(Json::as_f64).is_none());
            let reason = match (measured, missing) {
                (Some(Json::String(s)), _) => s.clone(),
                (Some(Json::Number(_)), Some(name)) if stated == "correct" => {
                    format!("no number for the objective `{name}`")
                }
                _ => stated.to_string(),
            };
            let kind = match (stated, reason.as_str()) {
                ("compile", _) | (_, "CompilationFailedConfig") => FailureKind::Compile,
                ("timeout", _) => FailureKind::Timeout,
                ("correctness", _) => FailureKind::WrongOutput,
                ("constraints", _) | (_, "InvalidConfig") => FailureKind::Invalid,
                _ => FailureKind::Runtime,
            };
            Outcome::failed(kind, reason, timings)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;
    use ktune_space::{Parameter, SearchSpace};

    fn space() -> SearchSpace {
        SearchSpace::new(
            vec![
                Parameter::integer("bx", [16, 32]).unwrap(),
                Parameter::categorical("mode", ["a", "b"]).unwrap(),
            ],
            &[] as &[&str],
        )
        .unwrap()
    }

    #[test]
    fn export_then_import_gives_the_same_records() {
        let space = space();
        let t = Timings {
            compile: 0.5,
            benchmark: 0.25,
            verification: 0.0,
            framework: 0.125,
        };
        let records = vec![
            Record {
                config: vec![0, 1],
                outcome: Outcome::ok(vec![1.5], t),
                clock: 0.875,
            },
            Record {
                config: vec![1, 0],
                outcome: Outcome::failed(FailureKind::Compile, "nvcc: error", t),
                clock: 1.75,
            },
            Record {
                config: vec![1, 1],
                outcome: Outcome::failed(FailureKind::WrongOutput, "max error 0.1", t),
                clock: 2.625,
            },
        ];
        let metric = Metric::new("time", Direction::Minimize);
        let doc = export(&space, &metric, &records);
        assert_eq!(doc["schema_version"], "1.0.0");
        assert_eq!(doc["results"][0]["configuration"]["mode"], "b");
        assert_eq!(doc["results"][0]["times"]["compilation_time"], 500.0);
        assert_eq!(doc["results"][1]["invalidity"], "compile");
        assert_eq!(doc["results"][2]["correctness"], 0);
        let back = import(&space, "time", &doc).unwrap();
        assert_eq!(back.len(), 3);
        for (a, b) in records.iter().zip(&back) {
            assert_eq!(a.config, b.config);
            assert_eq!(a.clock, b.clock);
            assert_eq!(a.outcome.objective(), b.outcome.objective());
            assert_eq!(a.outcome.failure(), b.outcome.failure());
            assert_eq!(a.outcome.timings(), b.outcome.timings());
        }
    }

    #[test]
    fn several_objectives_are_listed_measured_and_read_back_in_order() {
        let space = space();
        let t = Timings::default();
        let ok = Outcome::ok(vec![1.5, 20.0, 0.01], t);
        let e = entry(serde_json::Map::new(), &["time", "energy"], &ok, 1.0);
        assert_eq!(e["objectives"], json!(["time", "energy"]));
        assert_eq!(
            e["measurements"],
            json!([
                {"name": "time", "value": 1.5, "unit": "ms"},
                {"name": "energy", "value": 20.0, "unit": ""}
            ])
        );
        let failed = Outcome::failed(FailureKind::Runtime, "crashed", t);
        let f = entry(serde_json::Map::new(), &["time", "energy"], &failed, 2.0);
        assert_eq!(f["measurements"].as_array().unwrap().len(), 1);
        match result_outcome(&e, "time") {
            Outcome::Ok { values, .. } => assert_eq!(values, [1.5, 20.0]),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            result_outcome(&f, "time").failure(),
            Some(FailureKind::Runtime)
        );
        // One objective's number missing: a failure naming it.
        let mut cut = e.clone();
        cut["measurements"].as_array_mut().unwrap().pop();
        match result_outcome(&cut, "time") {
            Outcome::Failed { reason, .. } => {
                assert_eq!(reason, "no number for the objective `energy`")
            }
            other => panic!("{other:?}"),
        }
        // A reader of one objective sees the first; import keeps both.
        let mut one = e.clone();
        one["objectives"] = json!(["time"]);
        assert_eq!(result_outcome(&one, "time").objective(), Some(1.5));
        let mut placed = e.clone();
        placed["configuration"] = json!({"bx": 32, "mode": "a"});
        let back = import(&space, "time", &document(vec![placed])).unwrap();
        assert_eq!(back[0].outcome.objective(), Some(1.5));
    }

    #[test]
    fn imports_kernel_tuner_1_5_output() {
        // Written by Kernel Tuner 1.5's own get_t4_results (tests/data/gen_t4_golden.py).
        let text = include_str!("../tests/data/kt_convolution_A100.t4.json");
        let doc: Json = serde_json::from_str(text).unwrap();
        let spec = ktune_space::spec::SpaceSpec::from_toml_str(
            r#"
[[parameter]]
name = "block_size_x"
range = { start = 16, stop = 256, step = 16 }
[[parameter]]
name = "block_size_y"
values = [1, 2, 4, 8, 16]
[[parameter]]
name = "tile_size_x"
values = [1, 2, 3, 4]
[[parameter]]
name = "tile_size_y"
values = [1, 2, 3, 4]
[[parameter]]
name = "read_only"
values = [0, 1]
[[parameter]]
name = "use_padding"
values = [0, 1]
[[parameter]]
name = "use_shmem"
values = [0, 1]
[[parameter]]
name = "use_cmem"
values = [1]
[[parameter]]
name = "filter_height"
values = [15]
[[parameter]]
name = "filter_width"
values = [15]
"#,
            "conv.toml",
        )
        .unwrap();
        let space = spec.build().unwrap();
        let records = import(&space, "time", &doc).unwrap();
        assert_eq!(records.len(), 7);
        assert!(records[..5].iter().all(|r| r.outcome.objective().is_some()));
        // Kernel Tuner says "correct" for these, but their time is "RuntimeFailedConfig".
        assert!(
            records[5..]
                .iter()
                .all(|r| r.outcome.failure() == Some(FailureKind::Runtime))
        );
        assert!((records[0].outcome.objective().unwrap() - 3.8753279224038124).abs() < 1e-12);
        assert!((records[0].outcome.timings().compile - 0.9185990339610726).abs() < 1e-12);
    }

    #[test]
    fn unknown_configurations_and_bad_shapes_are_errors() {
        let space = space();
        let e = import(
            &space,
            "time",
            &json!({"results": [{"configuration": {"bx": 64, "mode": "a"}}]}),
        )
        .unwrap_err();
        assert!(e.to_string().contains("\"bx\":64"), "{e}");
        assert!(import(&space, "time", &json!({"x": 1})).is_err());
    }
}
