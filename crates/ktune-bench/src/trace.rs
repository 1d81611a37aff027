//! Traces: one optimisation run per line of a JSON Lines file.
//!
//! ```text
//! {"tool": "ktune-0.1.0", "strategy": "ga", "space": "gemm_A100", "seed": 3,
//!  "values": [1.92, null, 1.71], "wall_seconds": 4.2, "meta": {...}}
//! ```
//!
//! `values` are the raw objective values of the distinct configurations evaluated, in order,
//! `null` for one that failed. A run of several objectives also has `points`: each
//! configuration's raw values of every objective (`[[1.92, 410.0], null, [1.71, 455.2]]`,
//! the first objective first), which the multi-objective score reads. Other tools write the same format (the Kernel Tuner harness
//! through Python's `json`), so reading is lenient: unknown fields are ignored, a missing or
//! `null` `wall_seconds` reads as NaN, the non-standard tokens `NaN`, `Infinity` and
//! `-Infinity` that Python writes read as `null` (a failed value in `values`), and the seed may be
//! any integer that fits in 64 bits (one above `i64::MAX` wraps around) or a float with an
//! integral value.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::BenchError;

/// One optimisation run of one strategy on one space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The tool and its version, e.g. `ktune-0.1.0` or `kernel_tuner-1.5.0`.
    pub tool: String,
    /// The strategy's name.
    pub strategy: String,
    /// The space's name (the file stem of its cache file).
    pub space: String,
    /// The run's seed; runs are told apart by it (a seed written twice: the last line counts).
    #[serde(deserialize_with = "de_seed")]
    pub seed: i64,
    /// Raw objective values of the distinct configurations evaluated, in order; `None` for a
    /// configuration that failed.
    pub values: Vec<Option<f64>>,
    /// With several objectives: every objective's raw value of the same configurations, in
    /// order (`values` repeats the first), `None` for one that failed; empty for a run of one
    /// objective, and not written then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<Option<Vec<f64>>>,
    /// Wall-clock seconds of the whole run (NaN when unknown; written as `null`).
    #[serde(default = "nan", deserialize_with = "de_f64_or_null")]
    pub wall_seconds: f64,
    /// Anything else the tool wants to record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Value>,
}

fn nan() -> f64 {
    f64::NAN
}

fn de_f64_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn de_seed<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    struct SeedVisitor;
    impl Visitor<'_> for SeedVisitor {
        type Value = i64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an integer seed")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
            Ok(v as i64) // wraps above i64::MAX: still one seed per value
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
            if v.fract() == 0.0 && v >= i64::MIN as f64 && v < i64::MAX as f64 {
                Ok(v as i64)
            } else {
                Err(E::custom(format_args!("seed {v} is not a 64-bit integer")))
            }
        }
    }
    d.deserialize_any(SeedVisitor)
}

/// Replaces the tokens `NaN`, `Infinity` and `-Infinity` outside strings (Python's `json`
/// writes them; JSON has no such values) by `null`.
fn python_to_json(line: &str) -> Cow<'_, str> {
    if !line.contains("NaN") && !line.contains("Infinity") {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    let mut in_string = false;
    while let Some(c) = rest.chars().next() {
        if in_string {
            match c {
                '\\' => {
                    let mut it = rest.chars();
                    out.push(it.next().unwrap_or('\\'));
                    if let Some(e) = it.next() {
                        out.push(e);
                    }
                    rest = it.as_str();
                    continue;
                }
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(token) = ["NaN", "Infinity", "-Infinity"]
            .into_iter()
            .find(|t| rest.starts_with(t))
        {
            out.push_str("null");
            rest = &rest[token.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Reads every trace of a JSON Lines file (blank lines are skipped).
///
/// # Errors
/// [`BenchError::Io`] when the file cannot be read, [`BenchError::Parse`] naming the file, line
/// and column of the first line that is not a valid trace.
pub fn read_traces(path: &Path) -> Result<Vec<Trace>, BenchError> {
    let file = File::open(path).map_err(|e| BenchError::io(path, e))?;
    let mut traces = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| BenchError::io(path, e))?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let trace = serde_json::from_str(&python_to_json(text)).map_err(|e| {
            let full = e.to_string();
            let message = full
                .rsplit_once(" at line ")
                .map_or(full.as_str(), |(m, _)| m)
                .to_string();
            BenchError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                column: e.column(),
                message,
            }
        })?;
        traces.push(trace);
    }
    Ok(traces)
}

/// What looks wrong in traces about to be scored against `spaces`, one sentence each: the
/// same run more than once (the last counts), a run with no values (scored as if it had
/// found nothing, which is a failed run, not a slow one), and values better than a space's
/// brute-forced optimum (measured on another space, or another objective). Traces of
/// spaces not given are not judged.
pub fn doubts(traces: &[Trace], spaces: &[crate::SpaceStats]) -> Vec<String> {
    use std::collections::HashMap;
    let mut out = Vec::new();
    let mut seen: HashMap<(&str, &str, &str, i64), usize> = HashMap::new();
    for t in traces {
        *seen
            .entry((&t.tool, &t.strategy, &t.space, t.seed))
            .or_default() += 1;
    }
    let mut repeated: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    repeated.sort();
    if let Some(((tool, strategy, space, seed), n)) = repeated.first() {
        out.push(format!(
            "{} runs appear more than once (e.g. {tool}/{strategy} on {space}, seed {seed}, {n} \
             times); the last of each counts",
            repeated.len()
        ));
    }
    let empty: Vec<&Trace> = traces.iter().filter(|t| t.values.is_empty()).collect();
    if let Some(t) = empty.first() {
        out.push(format!(
            "{} runs have no values (e.g. {}/{} on {}, seed {}): each scores as a run that found \
             nothing",
            empty.len(),
            t.tool,
            t.strategy,
            t.space,
            t.seed
        ));
    }
    for stats in spaces {
        let opt = stats.optimum();
        let better = |v: f64| match stats.direction() {
            crate::Direction::Minimize => v < opt - 1e-9 * opt.abs(),
            crate::Direction::Maximize => v > opt + 1e-9 * opt.abs(),
        };
        let beyond: Vec<(&Trace, f64)> = traces
            .iter()
            .filter(|t| t.space == stats.name())
            .filter_map(|t| {
                t.values
                    .iter()
                    .flatten()
                    .copied()
                    .find(|&v| better(v))
                    .map(|v| (t, v))
            })
            .collect();
        if let Some((t, v)) = beyond.first() {
            out.push(format!(
                "{} runs on {} have values better than its brute-forced optimum {opt} (e.g. \
                 {}/{} seed {}: {v}): were they measured on another space or objective?",
                beyond.len(),
                stats.name(),
                t.tool,
                t.strategy,
                t.seed
            ));
        }
        // Within the space's range but measured elsewhere: another GPU's file of the same
        // name scores without any value beyond the optimum.
        let runs: Vec<&Trace> = traces
            .iter()
            .filter(|t| t.space == stats.name() && !t.values.is_empty())
            .collect();
        let foreign: Vec<(&Trace, f64)> = runs
            .iter()
            .filter_map(|t| {
                let v = t
                    .values
                    .iter()
                    .flatten()
                    .copied()
                    .find(|&v| !stats.holds(v))?;
                Some((*t, v))
            })
            .collect();
        if let Some((t, v)) = foreign.first() {
            let all = if foreign.len() == runs.len() {
                ": every run, so its scores below mean nothing"
            } else {
                ""
            };
            out.push(format!(
                "{} of {} runs on {} have values no configuration of it has (e.g. {}/{} seed {}: \
                 {v}); were they measured on another space or objective?{all}",
                foreign.len(),
                runs.len(),
                stats.name(),
                t.tool,
                t.strategy,
                t.seed
            ));
        }
    }
    out
}

/// Writes traces as JSON Lines, one per line, replacing the file and creating its parent
/// folders. Non-finite numbers are written as `null`.
///
/// # Errors
/// [`BenchError::Io`] when a folder or the file cannot be written.
pub fn write_traces(path: &Path, traces: &[Trace]) -> Result<(), BenchError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| BenchError::io(parent, e))?;
    }
    let file = File::create(path).map_err(|e| BenchError::io(path, e))?;
    let mut w = BufWriter::new(file);
    for t in traces {
        serde_json::to_writer(&mut w, t).map_err(|e| BenchError::io(path, e.into()))?;
        w.write_all(b"\n").map_err(|e| BenchError::io(path, e))?;
    }
    w.flush().map_err(|e| BenchError::io(path, e))
}

/// Appends traces to a JSON Lines file one at a time, each line written whole and flushed, so
/// that a long benchmark that is stopped keeps every run it finished (`ktune bench --resume`
/// reads them back with [`read_finished_traces`]).
pub struct TraceAppender {
    path: std::path::PathBuf,
    file: File,
}

impl TraceAppender {
    /// Opens `path` for appending (creating it and its folders), or truncates it first when
    /// `truncate` is set.
    ///
    /// # Errors
    /// [`BenchError::Io`] when a folder or the file cannot be created.
    pub fn open(path: &Path, truncate: bool) -> Result<Self, BenchError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| BenchError::io(parent, e))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(!truncate)
            .write(true)
            .truncate(truncate)
            .open(path)
            .map_err(|e| BenchError::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Writes one trace as one line (a single `write` of the whole line, then a flush).
    ///
    /// # Errors
    /// [`BenchError::Io`] when the line cannot be written.
    pub fn append(&mut self, trace: &Trace) -> Result<(), BenchError> {
        let mut line =
            serde_json::to_vec(trace).map_err(|e| BenchError::io(&self.path, e.into()))?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.flush())
            .map_err(|e| BenchError::io(&self.path, e))
    }
}

/// Reads the traces of a file that [`TraceAppender`] may have been writing when its process
/// was stopped: a last line without its newline that does not parse is a run cut off while
/// being written, dropped (and the file truncated before it, so appending goes on cleanly);
/// the returned flag says whether that happened. Any other malformed line is an error, as in
/// [`read_traces`]. A file that does not exist holds no traces.
///
/// # Errors
/// [`BenchError::Io`] and [`BenchError::Parse`] as for [`read_traces`].
pub fn read_finished_traces(path: &Path) -> Result<(Vec<Trace>, bool), BenchError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
        Err(e) => return Err(BenchError::io(path, e)),
    };
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    let tail = &text[complete..];
    let cut = !tail.trim().is_empty()
        && serde_json::from_str::<Trace>(&python_to_json(tail.trim())).is_err();
    if cut {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| BenchError::io(path, e))?;
        file.set_len(complete as u64)
            .map_err(|e| BenchError::io(path, e))?;
    }
    Ok((read_traces(path)?, cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(seed: i64) -> Trace {
        Trace {
            tool: "ktune-0.1.0".into(),
            strategy: "ga".into(),
            space: "gemm".into(),
            seed,
            values: vec![Some(1.5), None, Some(0.25)],
            wall_seconds: 2.5,
            points: Vec::new(),
            meta: None,
        }
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/traces.jsonl");
        let mut with_meta = trace(-3);
        with_meta.meta = Some(serde_json::json!({"evals": 3, "note": "x"}));
        let mut no_wall = trace(i64::MAX);
        no_wall.wall_seconds = f64::NAN;
        write_traces(&path, &[trace(1), with_meta.clone(), no_wall]).unwrap();
        let back = read_traces(&path).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[0], trace(1));
        assert_eq!(back[1], with_meta);
        assert!(back[2].wall_seconds.is_nan());
        assert_eq!(back[2].seed, i64::MAX);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("\"meta\":null"));
    }

    #[test]
    fn lenient_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kt.jsonl");
        let lines = [
            r#"{"tool": "kernel_tuner-1.5.0", "strategy": "pso", "space": "s", "seed": 18446744073709551615, "values": [1, null, NaN, Infinity], "wall_seconds": NaN, "meta": {"ms": NaN, "s": "NaN \"Infinity\""}, "extra": [1]}"#,
            "",
            r#"{"tool": "t", "strategy": "x", "space": "s", "seed": 4.0, "values": []}"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let t = read_traces(&path).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].seed, -1);
        assert_eq!(t[0].values, vec![Some(1.0), None, None, None]);
        assert!(t[0].wall_seconds.is_nan());
        let meta = t[0].meta.as_ref().unwrap();
        assert!(meta["ms"].is_null());
        assert_eq!(meta["s"], "NaN \"Infinity\"");
        assert_eq!(t[1].seed, 4);
        assert!(t[1].wall_seconds.is_nan());
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.jsonl");
        let good = serde_json::to_string(&trace(0)).unwrap();
        std::fs::write(
            &path,
            format!("{good}\n\n{good}\n{{\"tool\": \"x\", \"values\": [1,\n"),
        )
        .unwrap();
        let e = read_traces(&path).unwrap_err();
        assert!(matches!(e, BenchError::Parse { line: 4, .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("bad.jsonl:4:"), "{msg}");

        std::fs::write(&path, format!("{good}\n{{\"tool\": \"x\", \"strategy\": \"y\", \"space\": \"z\", \"seed\": 1.5, \"values\": []}}\n")).unwrap();
        let msg = read_traces(&path).unwrap_err().to_string();
        crate::contains_all(&msg, &["bad.jsonl:2:", "seed 1.5"]);

        std::fs::write(&path, format!("{good}\n{{\"tool\": \"x\"}}\n")).unwrap();
        let msg = read_traces(&path).unwrap_err().to_string();
        crate::contains_all(&msg, &[":2:", "missing field"]);

        let missing = dir.path().join("nope.jsonl");
        let msg = read_traces(&missing).unwrap_err().to_string();
        assert!(msg.contains("nope.jsonl"), "{msg}");
    }

    #[test]
    fn python_tokens_only_outside_strings() {
        assert_eq!(python_to_json(r#"{"a": 1}"#), r#"{"a": 1}"#);
        assert_eq!(
            python_to_json(r#"{"NaN": [NaN, -Infinity, Infinity], "b": "x\"NaN"}"#),
            r#"{"NaN": [null, null, null], "b": "x\"NaN"}"#
        );
        assert_eq!(python_to_json("[\"é\\\\\", NaN]"), "[\"é\\\\\", null]");
    }

    #[test]
    fn appender_keeps_finished_runs_and_drops_a_cut_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/traces.jsonl");
        assert_eq!(read_finished_traces(&path).unwrap(), (vec![], false));
        let mut w = TraceAppender::open(&path, true).unwrap();
        w.append(&trace(1)).unwrap();
        w.append(&trace(2)).unwrap();
        drop(w);
        // A process stopped in the middle of a line.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"tool\": \"ktune-0.1.0\", \"values\": [1.0, nu");
        std::fs::write(&path, &text).unwrap();
        let (back, cut) = read_finished_traces(&path).unwrap();
        assert!(cut);
        assert_eq!(back, vec![trace(1), trace(2)]);
        // Appending goes on after the last whole line.
        let mut w = TraceAppender::open(&path, false).unwrap();
        w.append(&trace(3)).unwrap();
        drop(w);
        assert_eq!(
            read_traces(&path).unwrap(),
            vec![trace(1), trace(2), trace(3)]
        );
        // Truncating starts afresh.
        let mut w = TraceAppender::open(&path, true).unwrap();
        w.append(&trace(4)).unwrap();
        drop(w);
        assert_eq!(read_traces(&path).unwrap(), vec![trace(4)]);
        // A malformed line in the middle is still an error, not silently dropped.
        std::fs::write(
            &path,
            format!("{{bad\n{}\n", serde_json::to_string(&trace(5)).unwrap()),
        )
        .unwrap();
        assert!(matches!(
            read_finished_traces(&path),
            Err(BenchError::Parse { line: 1, .. })
        ));
    }
}
