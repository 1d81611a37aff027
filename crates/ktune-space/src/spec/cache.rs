//! Kernel Tuner cache files: `tune_params` (the parameter domains, ordered by
//! `tune_params_keys`) and `cache` (one record per measured configuration). A brute-forced
//! cache lists exactly the configurations that satisfy the kernel's constraints, so those
//! records are the feasible set.
//!
//! Kernel Tuner appends one record per line while it tunes and closes the braces at the end,
//! so a run that was cut off leaves a file without its closing braces, often with a trailing
//! comma or half a record. [`read_cache`] repairs such a file (dropping the incomplete last
//! record) and says so in a warning.

use std::io::Read;
use std::path::Path;

use serde_json::Value as Json;

use super::{RawParam, RawValues, SpaceSpec, json_error, make_param};
use crate::error::SpaceError;
use crate::param::{Parameter, Value};
use crate::space::Configuration;

/// The contents of a Kernel Tuner cache file.
#[derive(Clone, Debug)]
pub struct CacheData {
    /// `kernel_name`, when present.
    pub kernel_name: Option<String>,
    /// `device_name`, when present.
    pub device_name: Option<String>,
    /// `objective`, when present (the key Kernel Tuner optimised).
    pub objective: Option<String>,
    /// The parameters, from `tune_params` in `tune_params_keys` order.
    pub parameters: Vec<Parameter>,
    /// The recorded configurations, in file order (records whose values are outside
    /// `tune_params` are skipped with a warning).
    pub configurations: Vec<Configuration>,
    /// The record of each configuration (same order): `time`, `compile_time`, ...
    pub records: Vec<serde_json::Map<String, Json>>,
    /// Repairs and skipped records.
    pub warnings: Vec<String>,
}

/// Decompresses a gzip file into text.
pub(crate) fn gunzip(bytes: &[u8]) -> std::io::Result<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut text)?;
    Ok(text)
}

/// Reads a cache file, `.json` or `.json.gz`.
pub fn read_cache_file(path: &Path) -> Result<CacheData, SpaceError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| SpaceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        gunzip(&bytes).map_err(|e| SpaceError::Syntax {
            file: file.clone(),
            format: "gzip",
            message: e.to_string(),
        })?
    } else {
        String::from_utf8(bytes).map_err(|e| SpaceError::Syntax {
            file: file.clone(),
            format: "JSON",
            message: format!("not UTF-8 text: {e}"),
        })?
    };
    read_cache(&text, &file)
}

/// Reads a cache file's text, repairing a file that was cut off while being written.
pub fn read_cache(text: &str, file: &str) -> Result<CacheData, SpaceError> {
    let mut warnings = Vec::new();
    let root: Json = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) if e.is_eof() || e.is_syntax() => match repair(text) {
            Some((v, dropped)) => {
                warnings.push(format!(
                    "`{file}` was cut off while being written; repaired by closing it{}",
                    if dropped > 0 {
                        format!(" after dropping {dropped} bytes of an incomplete record")
                    } else {
                        String::new()
                    }
                ));
                v
            }
            None => return Err(json_error(file, text, &e)),
        },
        Err(e) => return Err(json_error(file, text, &e)),
    };
    let spec_error = |message: String| SpaceError::Spec {
        message: format!("{file}: {message}"),
        location: None,
    };
    let tune_params = root
        .get("tune_params")
        .and_then(Json::as_object)
        .ok_or_else(|| {
            spec_error("missing `tune_params` object: not a Kernel Tuner cache file".into())
        })?;
    let order: Vec<String> = match root.get("tune_params_keys").and_then(Json::as_array) {
        Some(keys) => keys
            .iter()
            .filter_map(Json::as_str)
            .map(str::to_string)
            .collect(),
        None => tune_params.keys().cloned().collect(),
    };
    let mut parameters = Vec::with_capacity(order.len());
    // Per parameter, the items of a permutation (its values are lists, as Kernel Tuner writes
    // a tuple-valued parameter), `None` for every other parameter.
    let mut perm_items: Vec<Option<Vec<String>>> = Vec::with_capacity(order.len());
    // Per parameter, whether its values are lists read as the text of each.
    let mut as_text: Vec<bool> = Vec::with_capacity(order.len());
    for name in &order {
        let values = tune_params
            .get(name)
            .and_then(Json::as_array)
            .ok_or_else(|| spec_error(format!("`tune_params.{name}` must be a list of values")))?;
        let lists = !values.is_empty() && values.iter().all(Json::is_array);
        if lists
            && let Some(items) = permutation_items(&values[0])
                .filter(|items| values.iter().all(|v| as_permutation(v, items).is_some()))
            && let Ok(p) = Parameter::permutation(name.clone(), items.clone())
        {
            parameters.push(p);
            perm_items.push(Some(items));
            as_text.push(false);
            continue;
        }
        if lists {
            // Tuples that are not orderings of one set (block shapes such as (16, 16)): a
            // category per tuple, named by its JSON text.
            warnings.push(format!(
                "`tune_params.{name}` holds lists that are not orderings of one set of items: read as a categorical parameter of their text"
            ));
        }
        perm_items.push(None);
        as_text.push(lists);
        let values = values
            .iter()
            .map(|v| {
                list_or_value(v, lists).ok_or_else(|| {
                    spec_error(format!(
                        "`tune_params.{name}` has a value `{v}` that is not a number, string or boolean"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let raw = RawParam {
            name: name.clone(),
            kind: None,
            values: RawValues::List(values),
            items: None,
            log: false,
            default: None,
        };
        parameters.push(make_param(raw, &mut warnings)?);
    }
    let mut configurations = Vec::new();
    let mut records = Vec::new();
    let mut skipped = 0usize;
    // Kernel Tuner keys a record by its parameter values joined with commas; a key that says
    // otherwise (an edited or merged file) is reported, and the values are what counts.
    let mut disagreeing: Vec<String> = Vec::new();
    let mut first_seen: std::collections::HashMap<Vec<u32>, String> = Default::default();
    let mut duplicates: Vec<(String, String)> = Vec::new();
    if let Some(cache) = root.get("cache").and_then(Json::as_object) {
        'records: for (key, record) in cache {
            let Some(record) = record.as_object() else {
                skipped += 1;
                continue;
            };
            let mut config = Vec::with_capacity(parameters.len());
            let mut values = Vec::with_capacity(parameters.len());
            for ((p, items), &text) in parameters.iter().zip(&perm_items).zip(&as_text) {
                let Some((i, v)) = record
                    .get(p.name())
                    .and_then(|v| match items {
                        Some(items) => as_permutation(v, items),
                        None => list_or_value(v, text),
                    })
                    .and_then(|v| p.index_of(&v).map(|i| (i, v)))
                else {
                    skipped += 1;
                    continue 'records;
                };
                values.push(v);
                config.push(i as u32);
            }
            if !key_agrees(key, &values, &perm_items) {
                disagreeing.push(key.clone());
            }
            if let Some(first) = first_seen.get(&config) {
                // The later record of one configuration replaces the earlier, as Kernel
                // Tuner's own dictionary would; say so.
                duplicates.push((key.clone(), first.clone()));
                let at = configurations.iter().position(|c| *c == config);
                if let Some(at) = at {
                    records[at] = record.clone();
                }
                continue;
            }
            first_seen.insert(config.clone(), key.clone());
            configurations.push(config);
            records.push(record.clone());
        }
        if skipped > 0 {
            warnings.push(format!(
                "{skipped} cache records are not objects or have parameter values outside `tune_params`; skipped"
            ));
        }
    }
    if !disagreeing.is_empty() {
        warnings.push(format!(
            "{} cache records have a key that disagrees with their parameter values (e.g. \"{}\"); they were read by their values",
            disagreeing.len(),
            disagreeing[0]
        ));
    }
    if let Some((later, earlier)) = duplicates.first() {
        warnings.push(format!(
            "{} cache records repeat the parameter values of another (e.g. \"{later}\" those of \"{earlier}\"); the last of each is used",
            duplicates.len()
        ));
    }
    if configurations.is_empty() {
        return Err(spec_error(format!(
            "records no configurations{}: the search space of a Kernel Tuner cache is the configurations it measured",
            if skipped > 0 {
                format!(
                    " that can be used ({skipped} skipped: not objects or values outside `tune_params`)"
                )
            } else {
                String::new()
            }
        )));
    }
    let string = |key: &str| root.get(key).and_then(Json::as_str).map(str::to_string);
    Ok(CacheData {
        kernel_name: string("kernel_name"),
        device_name: string("device_name"),
        objective: string("objective"),
        parameters,
        configurations,
        records,
        warnings,
    })
}

/// Whether a Kernel Tuner cache key is its record's values joined with commas, as Python's
/// `str` writes them (`16`, `0.5` or `0.5`'s other spellings, `True`, `float4`). Values may
/// contain commas themselves (a categorical `"safe, slow"`), so the key is matched value by
/// value from the left rather than split.
fn key_agrees(key: &str, values: &[Value], perm_items: &[Option<Vec<String>>]) -> bool {
    let mut rest = key;
    for (i, v) in values.iter().enumerate() {
        let last = i + 1 == values.len();
        let items = perm_items.get(i).and_then(Option::as_deref);
        let next = spellings(v, items).into_iter().find_map(|form| {
            let after = rest.strip_prefix(form.as_str())?;
            match (last, after.strip_prefix(',')) {
                (true, _) if after.is_empty() => Some(""),
                (false, Some(tail)) => Some(tail),
                _ => None,
            }
        });
        match next {
            Some(tail) => rest = tail,
            None => return false,
        }
    }
    rest.is_empty()
}

/// How a value may be written in a key; a permutation by its items, as Python writes a list
/// or a tuple (`['i', 'j']`, `(0, 1)`), or as JSON (`["i","j"]`, ktune before it wrote lists).
fn spellings(v: &Value, items: Option<&[String]>) -> Vec<String> {
    if let (Value::Perm(p), Some(items)) = (v, items) {
        let named: Vec<&str> = p.iter().map(|&i| items[i as usize].as_str()).collect();
        let quoted: Vec<String> = named.iter().map(|t| format!("'{t}'")).collect();
        let mut forms = python_sequences(&quoted);
        forms.extend(python_sequences(&named));
        forms.push(serde_json::to_string(&named).unwrap_or_default());
        forms.push(format!("[{}]", named.join(",")));
        return forms;
    }
    match v {
        Value::Int(i) => vec![i.to_string(), format!("{i}.0")],
        Value::Real(r) => vec![format!("{r:?}"), format!("{r}")],
        Value::Bool(true) => vec!["True".into(), "true".into(), "1".into()],
        Value::Bool(false) => vec!["False".into(), "false".into(), "0".into()],
        Value::Str(t) => {
            let mut forms = vec![t.clone()];
            if let Ok(Json::Array(entries)) = serde_json::from_str::<Json>(t) {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|e| match e {
                        Json::String(s) => format!("'{s}'"),
                        other => other.to_string(),
                    })
                    .collect();
                forms.extend(python_sequences(&parts));
            }
            forms
        }
        Value::Perm(_) => vec![v.to_string()],
    }
}

/// `parts` as Python writes a list and a tuple of them: `[a, b]`, `(a, b)`.
fn python_sequences<S: AsRef<str>>(parts: &[S]) -> Vec<String> {
    let joined = parts
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ");
    vec![format!("[{joined}]"), format!("({joined})")]
}

/// A parameter value from JSON: with `text`, a list as its JSON text (a categorical); else a
/// number, string or boolean.
fn list_or_value(v: &Json, text: bool) -> Option<Value> {
    match v {
        Json::Array(_) if text => Some(Value::Str(v.to_string())),
        Json::Array(_) => None,
        _ if text => None,
        _ => Value::from_json(v),
    }
}

/// The items of a permutation written as a list: its entries as text (strings as they are,
/// numbers as JSON writes them), sorted (numerically where all are numbers), so that the
/// parameter does not depend on which ordering the file lists first; `None` unless the
/// entries are distinct numbers or strings.
fn permutation_items(list: &Json) -> Option<Vec<String>> {
    let entries = list.as_array()?;
    let mut items: Vec<(Option<f64>, String)> = entries
        .iter()
        .map(|e| match e {
            Json::String(t) => Some((None, t.clone())),
            Json::Number(n) => Some((n.as_f64(), n.to_string())),
            _ => None,
        })
        .collect::<Option<_>>()?;
    if items.iter().all(|(n, _)| n.is_some()) {
        items.sort_by(|a, b| a.0.unwrap_or(0.0).total_cmp(&b.0.unwrap_or(0.0)));
    } else {
        items.sort_by(|a, b| a.1.cmp(&b.1));
    }
    let items: Vec<String> = items.into_iter().map(|(_, t)| t).collect();
    let distinct = items.windows(2).all(|w| w[0] != w[1]);
    (distinct && !items.is_empty()).then_some(items)
}

/// A list as an ordering of `items` (`perm[i]`: the item at position `i`); `None` unless it
/// holds each item once.
fn as_permutation(list: &Json, items: &[String]) -> Option<Value> {
    let entries = list.as_array()?;
    if entries.len() != items.len() {
        return None;
    }
    let mut seen = vec![false; items.len()];
    let mut perm = Vec::with_capacity(items.len());
    for e in entries {
        let text = match e {
            Json::String(t) => t.clone(),
            Json::Number(n) => n.to_string(),
            _ => return None,
        };
        let i = items.iter().position(|t| *t == text)?;
        if std::mem::replace(&mut seen[i], true) {
            return None;
        }
        perm.push(i as u32);
    }
    Some(Value::Perm(perm))
}

/// Closes a cut-off cache file: drops an incomplete last record (one record per line), a
/// trailing comma, and adds the missing braces. Returns the value and how many bytes were
/// dropped.
fn repair(text: &str) -> Option<(Json, usize)> {
    let mut end = text.trim_end().len();
    // Cut back line by line (at most a few records) until the rest closes cleanly.
    for _ in 0..8 {
        let head = text[..end].trim_end().trim_end_matches(',');
        for closing in ["}}", "}\n}", "}", "]}}"] {
            let candidate = format!("{head}{closing}");
            if let Ok(v) = serde_json::from_str::<Json>(&candidate)
                && v.get("tune_params").is_some()
            {
                return Some((v, text.trim_end().len() - end));
            }
        }
        end = text[..end].trim_end().rfind('\n')?;
    }
    None
}

pub(super) fn parse(text: &str, file: &str) -> Result<SpaceSpec, SpaceError> {
    Ok(SpaceSpec::from_cache_data(read_cache(text, file)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHOLE: &str = "{\n\"tune_params_keys\": [\"x\"],\n\"tune_params\": {\"x\": [1, 2, 4]},\n\"objective\": \"time\",\n\"cache\": {\n\"1\": {\"x\": 1, \"time\": 3.5},\n\"2\": {\"x\": 2, \"time\": \"RuntimeFailedConfig\"},\n\"4\": {\"x\": 4, \"time\": 1.5}}\n}\n";

    #[test]
    fn reads_a_whole_cache() {
        let d = read_cache(WHOLE, "c.json").unwrap();
        assert_eq!(d.configurations, vec![vec![0], vec![1], vec![2]]);
        assert_eq!(d.records[2]["time"], 1.5);
        assert_eq!(d.objective.as_deref(), Some("time"));
        assert!(d.warnings.is_empty());
    }

    #[test]
    fn repairs_a_cut_off_cache() {
        // Cut after a complete record with its trailing comma, and in the middle of a record.
        let cut_after_comma = &WHOLE[..WHOLE.find("\n\"4\"").unwrap()];
        let d = read_cache(cut_after_comma, "c.json").unwrap();
        assert_eq!(d.configurations.len(), 2);
        assert!(d.warnings[0].contains("cut off"), "{:?}", d.warnings);
        let cut_mid_record = &WHOLE[..WHOLE.find("\"time\": 1.5").unwrap()];
        let d = read_cache(cut_mid_record, "c.json").unwrap();
        assert_eq!(d.configurations.len(), 2);
        assert!(d.warnings[0].contains("dropping"), "{:?}", d.warnings);
        // Only the final braces missing: every record survives.
        let braces_missing = WHOLE.trim_end().strip_suffix("}\n}").unwrap();
        let d = read_cache(braces_missing, "c.json").unwrap();
        assert_eq!(d.configurations.len(), 3);
    }

    #[test]
    fn hopeless_files_are_errors_with_a_line() {
        let e = read_cache("{\n\"tune_params\": [1,,2]\n}", "c.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
        let e = read_cache("{\"cache\": {}}", "c.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing `tune_params`"), "{e}");
    }

    #[test]
    fn keys_that_disagree_duplicates_and_empty_caches_are_reported() {
        let text = "{\"tune_params_keys\": [\"x\", \"y\"], \"tune_params\": {\"x\": [1, 2], \"y\": [0.5, 1.0]}, \"cache\": {\"1,0.5\": {\"x\": 1, \"y\": 0.5, \"time\": 2.0}, \"1,1.0\": {\"x\": 2, \"y\": 1.0, \"time\": 1.0}, \"2,1.0\": {\"x\": 2, \"y\": 1.0, \"time\": 5.0}}}";
        let data = read_cache(text, "c.json").unwrap();
        assert_eq!(data.configurations.len(), 2);
        assert_eq!(data.records.len(), 2);
        // The later record of a repeated configuration is the one kept.
        assert_eq!(data.records[1]["time"], 5.0);
        let w = data.warnings.join("\n");
        assert!(
            w.contains("1 cache records have a key that disagrees") && w.contains("\"1,1.0\""),
            "{w}"
        );
        assert!(w.contains("repeat the parameter values of another"), "{w}");
        // Values with commas in them, and the spellings of numbers and booleans.
        assert!(key_agrees(
            "4,safe, slow,0.5,True",
            &[
                Value::Int(4),
                Value::Str("safe, slow".into()),
                Value::Real(0.5),
                Value::Bool(true)
            ],
            &[]
        ));
        assert!(key_agrees("1.0,2", &[Value::Real(1.0), Value::Int(2)], &[]));
        assert!(!key_agrees("1,2", &[Value::Int(1), Value::Int(3)], &[]));
        assert!(!key_agrees("1,2,3", &[Value::Int(1), Value::Int(2)], &[]));
        assert!(!key_agrees("1", &[Value::Int(1), Value::Int(2)], &[]));
        // Keys Kernel Tuner writes agree: no warning.
        let fine = read_cache(WHOLE, "w.json").unwrap();
        assert!(fine.warnings.is_empty(), "{:?}", fine.warnings);
        // No records, or none usable: an error, whoever reads it.
        for empty in [
            "{\"tune_params\": {\"x\": [1, 2]}, \"cache\": {}}",
            "{\"tune_params\": {\"x\": [1, 2]}}",
            "{\"tune_params\": {\"x\": [1, 2]}, \"cache\": {\"9\": {\"x\": 9, \"time\": 1}}}",
        ] {
            let e = read_cache(empty, "e.json").unwrap_err().to_string();
            assert!(
                e.contains("e.json") && e.contains("records no configurations"),
                "{e}"
            );
        }
    }
    /// A list-valued parameter (Kernel Tuner writes a tuple as a list) is a permutation of
    /// its items, whichever ordering the file lists first; its records are read by their
    /// lists, and keys in Python's list or tuple spelling agree. Lists that are not orderings
    /// of one set are a categorical of their text.
    #[test]
    fn list_values_are_read_as_a_permutation() {
        let text = r#"{"tune_params_keys": ["order", "b"],
            "tune_params": {"order": [["k", "i", "j"], ["i", "j", "k"], ["j", "k", "i"]], "b": [1, 2]},
            "cache": {
                "['k', 'i', 'j'],1": {"order": ["k", "i", "j"], "b": 1, "time": 3.0},
                "('i', 'j', 'k'),2": {"order": ["i", "j", "k"], "b": 2, "time": 1.0},
                "['j', 'k', 'i'],2": {"order": ["j", "k", "i"], "b": 2, "time": 2.0}}}"#;
        let data = read_cache(text, "p.json").unwrap();
        assert!(data.warnings.is_empty(), "{:?}", data.warnings);
        let order = &data.parameters[0];
        assert_eq!(order.kind().name(), "permutation");
        assert_eq!(order.len(), 6, "every ordering of three items");
        // Items sorted: i, j, k; ["k", "i", "j"] puts item 2 first.
        let first = order.index_of(&Value::Perm(vec![2, 0, 1])).unwrap() as u32;
        assert_eq!(data.configurations[0], vec![first, 0]);
        assert_eq!(data.configurations.len(), 3);
        // Numbers as items, sorted numerically.
        let numbers = r#"{"tune_params": {"p": [[10, 9, 2], [2, 9, 10]]},
            "cache": {"[10, 9, 2]": {"p": [10, 9, 2], "time": 1.0}}}"#;
        let data = read_cache(numbers, "n.json").unwrap();
        let p = &data.parameters[0];
        assert_eq!(
            data.configurations[0],
            vec![p.index_of(&Value::Perm(vec![2, 1, 0])).unwrap() as u32]
        );
        // Lists that are not orderings of one set (block shapes) are a categorical of their
        // text, said in a warning; a key in Python's tuple spelling agrees.
        let shapes = r#"{"tune_params": {"block": [[16, 16], [32, 8]], "x": [1]},
            "cache": {"(16, 16),1": {"block": [16, 16], "x": 1, "time": 1.0},
                      "(32, 8),1": {"block": [32, 8], "x": 1, "time": 2.0}}}"#;
        let data = read_cache(shapes, "s.json").unwrap();
        assert_eq!(data.parameters[0].kind().name(), "categorical");
        assert_eq!(data.configurations, vec![vec![0, 0], vec![1, 0]]);
        assert_eq!(data.warnings.len(), 1, "{:?}", data.warnings);
        assert!(
            data.warnings[0].contains("`tune_params.block`"),
            "{:?}",
            data.warnings
        );
        // A list mixed with plain values is refused by name.
        let mixed = r#"{"tune_params": {"p": [[1, 2], 3]}, "cache": {}}"#;
        let e = read_cache(mixed, "bad.json").unwrap_err().to_string();
        assert!(
            e.contains("bad.json") && e.contains("`tune_params.p`"),
            "{e}"
        );
    }
}
