//! Exports of stored rows for `ktune results`: CSV, JSON and Kernel Tuner cache files.

use ktune_core::{Observed, Samples, Summary};
use serde::Serialize;
use serde_json::{Map, Value as Json, json};

/// One stored evaluation, for listing and export without a search space.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The evaluation's position (0 for the first).
    pub seq: i64,
    /// The parameter values by name, in parameter order (a permutation as the list of its
    /// item names in order, or of item indices in a database that did not store the names).
    pub params: Vec<(String, Json)>,
    /// `ok`, or the failure kind's name (`compile`, `runtime`, `timeout`, `wrong_output`,
    /// `invalid`).
    pub status: String,
    /// The objective (first metric) value, when it ran.
    pub objective: Option<f64>,
    /// Every metric's value when it ran, in the runner's order (the first is `objective`;
    /// a study of several objectives has them first); empty when it failed.
    pub metrics: Vec<f64>,
    /// Why it failed, when it did.
    pub reason: Option<String>,
    /// Seconds spent compiling.
    pub compile_s: f64,
    /// Seconds spent running.
    pub benchmark_s: f64,
    /// Seconds spent checking the output.
    pub verification_s: f64,
    /// Other seconds the tool spent on it.
    pub framework_s: f64,
    /// The tuning clock when it finished, in seconds.
    pub clock_s: f64,
    /// What the runner observed beside its metrics (device, clocks, power, ...).
    pub observed: Observed,
    /// The repeated measurements of the objective, when the runner kept them.
    pub samples: Option<Samples>,
    /// The worker that made the measurement, where a distributed worker recorded it.
    pub worker: Option<String>,
    /// That worker's device (GPU or CPU name, as the worker reported it).
    pub device: Option<String>,
}

impl Row {
    /// The summary statistics of the samples, when there are any.
    pub fn summary(&self) -> Option<Summary> {
        self.samples
            .as_ref()
            .filter(|s| !s.values.is_empty())
            .map(Samples::summary)
    }
}

/// A parameter value as CSV text: strings bare, a permutation's item names joined by commas
/// (`i,k,j`, as programs receive it), everything else as JSON.
fn value_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Array(items) if items.iter().all(Json::is_string) => items
            .iter()
            .filter_map(Json::as_str)
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    }
}

/// A parameter value as a person reads it in a table: strings bare, a permutation as
/// `[i, k, j]` (as `ktune space` shows it), everything else as JSON.
pub fn value_display(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// RFC 4180 quoting: fields with a comma, quote, CR or LF are enclosed in quotes, with
/// quotes doubled.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The rows as CSV, one line per row (`\n`-terminated) after a header: `seq`, the parameter
/// names, `status`, `objective` (the metric's name), `reason`, `compile_s`, `benchmark_s`,
/// `verification_s`, `framework_s`, `clock_s`, then one column per observed value name (in
/// order of first appearance; arrays and objects as JSON text). Fields are quoted as RFC 4180
/// says; a missing objective, reason or observed value is an empty field.
pub fn to_csv(rows: &[Row], objective: &str) -> String {
    let names: Vec<&str> = rows
        .first()
        .map(|r| r.params.iter().map(|(n, _)| n.as_str()).collect())
        .unwrap_or_default();
    let mut header = vec!["seq"];
    header.extend(&names);
    header.extend([
        "status",
        objective,
        "reason",
        "compile_s",
        "benchmark_s",
        "verification_s",
        "framework_s",
        "clock_s",
    ]);
    // The statistics of repeated measurements, where any row has them.
    let with_samples = rows.iter().any(|r| r.samples.is_some());
    if with_samples {
        header.extend(STAT_COLUMNS);
    }
    let mut observed: Vec<&str> = Vec::new();
    for r in rows {
        for k in r.observed.keys() {
            if !observed.contains(&k.as_str()) {
                observed.push(k);
            }
        }
    }
    header.extend(&observed);
    let mut out = String::new();
    let mut line = |fields: Vec<String>| {
        let quoted: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&quoted.join(","));
        out.push('\n');
    };
    line(header.iter().map(|s| s.to_string()).collect());
    for r in rows {
        let mut fields = vec![r.seq.to_string()];
        fields.extend(names.iter().map(|n| {
            r.params
                .iter()
                .find(|(m, _)| m == n)
                .map(|(_, v)| value_text(v))
                .unwrap_or_default()
        }));
        fields.push(r.status.clone());
        fields.push(r.objective.map(|v| v.to_string()).unwrap_or_default());
        fields.push(r.reason.clone().unwrap_or_default());
        for s in [
            r.compile_s,
            r.benchmark_s,
            r.verification_s,
            r.framework_s,
            r.clock_s,
        ] {
            fields.push(s.to_string());
        }
        if with_samples {
            match (r.summary(), &r.samples) {
                (Some(s), Some(samples)) => {
                    fields.push(s.n.to_string());
                    for v in [s.min, s.median, s.mean, s.stdev, s.ci_low, s.ci_high] {
                        fields.push(v.to_string());
                    }
                    fields.push(s.statistic.name().to_string());
                    fields.push(samples.runs_per_sample.to_string());
                    fields.push(samples.aborted.to_string());
                    let all: Vec<String> = samples.values.iter().map(f64::to_string).collect();
                    fields.push(all.join(" "));
                }
                _ => fields.extend(STAT_COLUMNS.iter().map(|_| String::new())),
            }
        }
        fields.extend(
            observed
                .iter()
                .map(|k| r.observed.get(*k).map(value_text).unwrap_or_default()),
        );
        line(fields);
    }
    out
}

/// The CSV columns of the samples' statistics (present when any row has samples): the
/// count, min, median, mean, standard deviation, the 95% interval of the objective
/// statistic, which statistic that is, runs per sample, whether repetition was aborted
/// early, and every sample separated by spaces.
const STAT_COLUMNS: [&str; 11] = [
    "n",
    "min",
    "median",
    "mean",
    "stdev",
    "ci_low",
    "ci_high",
    "statistic",
    "runs_per_sample",
    "aborted",
    "samples",
];

/// The rows as a JSON array of objects: `seq`, `params` (an object, in parameter order),
/// `status`, `objective`, `reason`, `compile_s`, ..., `clock_s`, `observed` (an object, only
/// when the runner observed something), `samples` and `summary` (only when the runner kept
/// repeated measurements: the samples, runs per sample, whether aborted, and n, min,
/// median, mean, stdev, the 95% interval). Non-finite numbers are `null`.
pub fn to_json(rows: &[Row]) -> Json {
    Json::Array(
        rows.iter()
            .map(|r| {
                let params: Map<String, Json> = r.params.iter().cloned().collect();
                let mut row = json!({
                    "seq": r.seq,
                    "params": params,
                    "status": r.status,
                    "objective": r.objective,
                    "reason": r.reason,
                    "compile_s": r.compile_s,
                    "benchmark_s": r.benchmark_s,
                    "verification_s": r.verification_s,
                    "framework_s": r.framework_s,
                    "clock_s": r.clock_s,
                });
                if !r.observed.is_empty() {
                    row["observed"] = json!(r.observed);
                }
                if let (Some(samples), Some(summary)) = (&r.samples, r.summary()) {
                    row["samples"] = json!(samples);
                    row["summary"] = json!(summary);
                }
                // Only where a worker of a shared study recorded it.
                if let Some(worker) = &r.worker {
                    row["worker"] = json!(worker);
                    row["device"] = json!(r.device);
                }
                row
            })
            .collect(),
    )
}

/// How Kernel Tuner (Python's `str`) writes a parameter value in a cache key: a list (a
/// permutation) as Python writes one, `['i', 'j']`.
fn python_text(v: &Json) -> String {
    match v {
        Json::Bool(true) => "True".into(),
        Json::Bool(false) => "False".into(),
        Json::String(s) => s.clone(),
        Json::Array(entries) => {
            let parts: Vec<String> = entries
                .iter()
                .map(|e| match e {
                    Json::String(t) => format!("'{t}'"),
                    other => python_text(other),
                })
                .collect();
            format!("[{}]", parts.join(", "))
        }
        other => other.to_string(),
    }
}

/// A value a Kernel Tuner cache can hold as a parameter value: a number, string or boolean,
/// or a list (a permutation, as Kernel Tuner writes a tuple-valued parameter, and as
/// [`ktune_space::spec::read_cache`] reads one back); anything else as its JSON text.
fn cache_value(v: &Json) -> Json {
    match v {
        Json::Number(_) | Json::String(_) | Json::Bool(_) | Json::Array(_) => v.clone(),
        other => Json::String(other.to_string()),
    }
}

/// The failure marker Kernel Tuner writes in place of the objective.
fn failure_marker(status: &str) -> &'static str {
    match status {
        "compile" => "CompilationFailedConfig",
        "invalid" => "InvalidConfig",
        _ => "RuntimeFailedConfig",
    }
}

/// What a Kernel Tuner cache file says of its study besides the records: Kernel Tuner 1.5
/// refuses to resume (or to simulate from) a cache without `device_name` and `kernel_name`,
/// and checks `problem_size` where the cache has one.
#[derive(Clone, Copy, Debug, Default)]
pub struct CacheHeader<'a> {
    /// The kernel's name (Kernel Tuner compares it with the one it tunes).
    pub kernel_name: &'a str,
    /// The device's name (`""` where unknown, as Kernel Tuner writes it then).
    pub device_name: &'a str,
    /// The problem size, where the study has one constant size.
    pub problem_size: Option<&'a [u64]>,
}

/// The rows as a Kernel Tuner cache file: `device_name`, `kernel_name`, `problem_size` (where
/// known), `objective`, `tune_params_keys`,
/// `tune_params` (each parameter's values that occur in `rows`, numbers in increasing
/// order, others in order of appearance) and `cache`, one record per row keyed by its
/// values joined by commas (as Kernel Tuner writes them), with the parameter values, the
/// objective's value (or `CompilationFailedConfig`, `RuntimeFailedConfig` or
/// `InvalidConfig` for failures) and `compile_time`, `benchmark_time`, `verification_time`,
/// `framework_time` in milliseconds, and every number the runner observed beside them
/// (`energy_j`, `power_w`, clocks: what a study of several objectives, or `ktune bench
/// --objective time,energy_j`, reads). [`ktune_space::spec::read_cache`] reads it back.
///
/// Only the objective is written, since rows hold no other metric; timeouts and wrong
/// outputs become `RuntimeFailedConfig`, as Kernel Tuner has no marker for them.
pub fn to_kernel_tuner_cache(rows: &[Row], objective: &str, header: &CacheHeader<'_>) -> Json {
    let names: Vec<&str> = rows
        .first()
        .map(|r| r.params.iter().map(|(n, _)| n.as_str()).collect())
        .unwrap_or_default();
    let value_of = |r: &Row, name: &str| {
        r.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| cache_value(v))
            .unwrap_or(Json::Null)
    };
    let mut tune_params = Map::new();
    for name in &names {
        let mut values: Vec<Json> = Vec::new();
        for r in rows {
            let v = value_of(r, name);
            if !v.is_null() && !values.contains(&v) {
                values.push(v);
            }
        }
        if values.iter().all(Json::is_number) {
            values.sort_by(|a, b| {
                let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                a.total_cmp(&b)
            });
        }
        tune_params.insert(name.to_string(), Json::Array(values));
    }
    let ms = |s: f64| json!(s * 1000.0);
    let mut cache = Map::new();
    for r in rows {
        let mut record = Map::new();
        let mut key = Vec::with_capacity(names.len());
        for name in &names {
            let v = value_of(r, name);
            key.push(python_text(&v));
            record.insert(name.to_string(), v);
        }
        let value = match (r.status.as_str(), r.objective) {
            ("ok", Some(v)) => json!(v),
            ("ok", None) => json!(failure_marker("runtime")),
            (status, _) => json!(failure_marker(status)),
        };
        record.insert(objective.to_string(), value);
        record.insert("compile_time".into(), ms(r.compile_s));
        record.insert("benchmark_time".into(), ms(r.benchmark_s));
        record.insert("verification_time".into(), ms(r.verification_s));
        record.insert("framework_time".into(), ms(r.framework_s));
        // What the runner observed beside the objective (energy, power, clocks), as Kernel
        // Tuner's observers add their keys to a record: numbers only, under their own names,
        // never over a parameter or a key written above.
        for (name, v) in &r.observed {
            if v.is_number() && !record.contains_key(name) {
                record.insert(name.clone(), v.clone());
            }
        }
        cache.insert(key.join(","), Json::Object(record));
    }
    // In Kernel Tuner's order, `cache` last: Kernel Tuner appends records to the end of the
    // file and takes a file that does not end in the cache's closing braces for one cut off.
    let mut doc = Map::new();
    doc.insert("device_name".into(), json!(header.device_name));
    doc.insert("kernel_name".into(), json!(header.kernel_name));
    if let Some(size) = header.problem_size {
        doc.insert("problem_size".into(), json!(size));
    }
    doc.insert("tune_params_keys".into(), json!(names));
    doc.insert("tune_params".into(), Json::Object(tune_params));
    doc.insert("objective".into(), json!(objective));
    doc.insert("cache".into(), Json::Object(cache));
    Json::Object(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: i64, x: i64, mode: &str, status: &str, objective: Option<f64>) -> Row {
        Row {
            seq,
            params: vec![("x".into(), json!(x)), ("mode".into(), json!(mode))],
            status: status.into(),
            objective,
            metrics: objective.into_iter().collect(),
            reason: (status != "ok").then(|| format!("{status} failed, \"badly\", twice\nsee log")),
            compile_s: 0.5,
            benchmark_s: 0.25,
            verification_s: 0.0,
            framework_s: 0.125,
            clock_s: seq as f64 + 1.0,
            observed: Observed::new(),
            samples: None,
            worker: None,
            device: None,
        }
    }

    #[test]
    fn samples_add_their_statistics_to_csv_and_json() {
        let mut with = row(0, 1, "a", "ok", Some(2.0));
        with.samples = Some(Samples {
            values: vec![1.0, 2.0, 3.0],
            runs_per_sample: 2,
            aborted: true,
            statistic: ktune_core::Statistic::Mean,
        });
        let without = row(1, 2, "b", "compile", None);
        let csv = to_csv(&[with.clone(), without.clone()], "time");
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[0].ends_with(
                ",clock_s,n,min,median,mean,stdev,ci_low,ci_high,statistic,runs_per_sample,aborted,samples"
            ),
            "{}",
            lines[0]
        );
        // t(0.975, 2) = 4.302653, s = 1: 2 ± 4.302653 / √3.
        let h = 4.302_653 / 3f64.sqrt();
        let want = format!(",3,1,2,2,1,{},{},mean,2,true,1 2 3", 2.0 - h, 2.0 + h);
        assert!(lines[1].ends_with(&want), "{}\n{want}", lines[1]);
        assert!(csv.ends_with(",,,,,,,,,,,\n"), "{csv}");
        // Without samples anywhere, the columns are as before.
        assert!(
            to_csv(std::slice::from_ref(&without), "time")
                .lines()
                .next()
                .unwrap()
                .ends_with(",clock_s")
        );
        let j = to_json(&[with, without]);
        assert_eq!(j[0]["summary"]["n"], 3);
        assert_eq!(j[0]["samples"]["values"], json!([1.0, 2.0, 3.0]));
        assert_eq!(j[0]["samples"]["aborted"], true);
        assert!(j[1].get("summary").is_none());
    }

    fn rows() -> Vec<Row> {
        vec![
            row(0, 4, "a,b", "ok", Some(1.5)),
            row(1, 2, "plain", "compile", None),
            row(2, 1, "q\"uote", "runtime", None),
            row(3, 2, "a,b", "ok", Some(0.75)),
            row(4, 1, "plain", "invalid", None),
        ]
    }

    #[test]
    fn csv_quotes_as_rfc_4180_says() {
        let csv = to_csv(&rows(), "time, ms");
        let lines: Vec<&str> = csv.split_terminator('\n').collect();
        assert_eq!(
            lines[0],
            "seq,x,mode,status,\"time, ms\",reason,compile_s,benchmark_s,verification_s,framework_s,clock_s"
        );
        assert_eq!(lines[1], "0,4,\"a,b\",ok,1.5,,0.5,0.25,0,0.125,1");
        assert!(
            csv.contains(
                "1,2,plain,compile,,\"compile failed, \"\"badly\"\", twice\nsee log\",0.5,"
            ),
            "{csv}"
        );
        assert!(csv.contains("2,1,\"q\"\"uote\",runtime,"), "{csv}");
        assert!(csv.ends_with('\n'));
        // No rows: just the header, without parameter columns.
        assert_eq!(
            to_csv(&[], "time"),
            "seq,status,time,reason,compile_s,benchmark_s,verification_s,framework_s,clock_s\n"
        );
    }

    #[test]
    fn json_is_an_array_of_objects() {
        let j = to_json(&rows());
        let a = j.as_array().unwrap();
        assert_eq!(a.len(), 5);
        assert_eq!(a[0]["seq"], 0);
        assert_eq!(a[0]["params"]["mode"], "a,b");
        assert_eq!(a[0]["objective"], 1.5);
        assert_eq!(a[0]["reason"], Json::Null);
        assert_eq!(a[1]["status"], "compile");
        assert_eq!(a[1]["objective"], Json::Null);
        assert_eq!(a[4]["clock_s"], 5.0);
        let keys: Vec<&String> = a[0]["params"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["x", "mode"]);
        assert!(a[0].get("observed").is_none());
    }

    fn observed_rows() -> Vec<Row> {
        let mut rows = rows();
        rows[0].observed.insert("device".into(), json!("H100, SXM"));
        rows[0]
            .observed
            .insert("times_ms".into(), json!([1.5, 1.25]));
        rows[3].observed.insert("power_w".into(), json!(312.5));
        rows[3].observed.insert("device".into(), json!("H100, SXM"));
        rows
    }

    #[test]
    fn observed_values_become_columns_and_objects() {
        let rows = observed_rows();
        let csv = to_csv(&rows, "time");
        let lines: Vec<&str> = csv.split_terminator('\n').collect();
        assert!(
            lines[0].ends_with(",clock_s,device,times_ms,power_w"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].ends_with(",1,\"H100, SXM\",\"[1.5,1.25]\","),
            "{}",
            lines[1]
        );
        let last_of_row_3 = csv.lines().find(|l| l.starts_with("3,")).unwrap();
        assert!(
            last_of_row_3.ends_with(",\"H100, SXM\",,312.5"),
            "{last_of_row_3}"
        );
        let j = to_json(&rows);
        assert_eq!(j[0]["observed"]["times_ms"], json!([1.5, 1.25]));
        assert_eq!(j[3]["observed"]["power_w"], 312.5);
        assert!(j[1].get("observed").is_none());
    }

    #[test]
    fn kernel_tuner_cache_reads_back() {
        let rows = rows();
        let doc = to_kernel_tuner_cache(
            &rows,
            "time",
            &CacheHeader {
                kernel_name: "vector_add",
                ..Default::default()
            },
        );
        assert_eq!(doc["kernel_name"], "vector_add");
        assert_eq!(doc["tune_params"]["x"], json!([1, 2, 4]));
        assert_eq!(
            doc["tune_params"]["mode"],
            json!(["a,b", "plain", "q\"uote"])
        );
        assert_eq!(doc["cache"]["4,a,b"]["compile_time"], 500.0);
        assert_eq!(doc["cache"]["2,plain"]["time"], "CompilationFailedConfig");
        assert_eq!(doc["cache"]["1,q\"uote"]["time"], "RuntimeFailedConfig");
        assert_eq!(doc["cache"]["1,plain"]["time"], "InvalidConfig");
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let data = ktune_space::spec::read_cache(&text, "export.json").unwrap();
        // observed numbers ride along under their own names, never over a parameter or time
        let mut observed = rows.clone();
        observed[3].observed.insert("energy_j".into(), json!(0.5));
        observed[3].observed.insert("device".into(), json!("H100"));
        observed[3].observed.insert("x".into(), json!(99));
        let with = to_kernel_tuner_cache(
            &observed,
            "time",
            &CacheHeader {
                kernel_name: "vector_add",
                ..Default::default()
            },
        );
        assert_eq!(with["cache"]["2,a,b"]["energy_j"], 0.5);
        assert_eq!(with["cache"]["2,a,b"]["x"], 2);
        assert!(with["cache"]["2,a,b"].get("device").is_none());
        assert!(with["cache"]["4,a,b"].get("energy_j").is_none());
        assert!(data.warnings.is_empty(), "{:?}", data.warnings);
        assert_eq!(data.kernel_name.as_deref(), Some("vector_add"));
        assert_eq!(data.objective.as_deref(), Some("time"));
        let names: Vec<&str> = data.parameters.iter().map(|p| p.name()).collect();
        assert_eq!(names, ["x", "mode"]);
        assert_eq!(data.configurations.len(), rows.len());
        // The same configurations (as values) with the same objective values.
        let mut back: Vec<(Vec<Json>, Json)> = data
            .configurations
            .iter()
            .zip(&data.records)
            .map(|(c, rec)| {
                let values = c
                    .iter()
                    .zip(&data.parameters)
                    .map(|(&i, p)| p.values()[i as usize].to_json())
                    .collect();
                (values, rec["time"].clone())
            })
            .collect();
        let mut expected: Vec<(Vec<Json>, Json)> = rows
            .iter()
            .map(|r| {
                let values = r.params.iter().map(|(_, v)| v.clone()).collect();
                let objective = match r.objective {
                    Some(v) => json!(v),
                    None => json!(failure_marker(&r.status)),
                };
                (values, objective)
            })
            .collect();
        let key = |e: &(Vec<Json>, Json)| serde_json::to_string(e).unwrap();
        back.sort_by_key(key);
        expected.sort_by_key(key);
        assert_eq!(back, expected);
    }

    #[test]
    fn exotic_values_still_give_a_readable_cache() {
        let mut r = row(0, 1, "a", "ok", Some(1.0));
        r.params = vec![
            ("flag".into(), json!(true)),
            ("perm".into(), json!([2, 0, 1])),
            ("r".into(), json!(0.5)),
        ];
        let doc = to_kernel_tuner_cache(
            &[r],
            "time",
            &CacheHeader {
                kernel_name: "k",
                ..Default::default()
            },
        );
        assert!(doc["cache"]["True,[2, 0, 1],0.5"].is_object(), "{doc}");
        assert_eq!(doc["tune_params"]["perm"], json!([[2, 0, 1]]));
        let data = ktune_space::spec::read_cache(&doc.to_string(), "x.json").unwrap();
        assert_eq!(data.configurations.len(), 1);
        assert!(data.warnings.is_empty(), "{:?}", data.warnings);
        // The permutation comes back as one, not as a category of its text.
        assert_eq!(data.parameters[1].kind().name(), "permutation");
        // An export of no rows is valid JSON, but a cache's space is its records: reading it
        // back is the same clear error for every command.
        let empty = to_kernel_tuner_cache(
            &[],
            "time",
            &CacheHeader {
                kernel_name: "k",
                ..Default::default()
            },
        );
        // An unknown device is "" (Kernel Tuner reads the key), an unknown size no key.
        assert_eq!(empty["device_name"], "");
        assert!(empty.get("problem_size").is_none());
        let e = ktune_space::spec::read_cache(&empty.to_string(), "e.json").unwrap_err();
        assert!(e.to_string().contains("records no configurations"), "{e}");
    }
}
