//! Kernel Tuner cache files: `tune_params` (the parameter domains, ordered by
//! `tune_params_keys`) and `cache` (one record per measured configuration). A brute-forced
//! cache lists exactly the configurations that satisfy the kernel's constraints, so those
//! records are the feasible set.

use std::io::Read;

use serde_json::Value as Json;

use super::t1::json_value;
use super::{RawParam, RawValues, SpaceSpec, SpecFormat, json_error, make_param};
use crate::error::SpaceError;

/// Decompresses a gzip file into text.
pub(crate) fn gunzip(bytes: &[u8]) -> std::io::Result<String> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(bytes).read_to_string(&mut text)?;
    Ok(text)
}

pub(super) fn parse(text: &str, file: &str) -> Result<SpaceSpec, SpaceError> {
    let root: Json = serde_json::from_str(text).map_err(|e| json_error(file, text, &e))?;
    let spec_error = |message: String| SpaceError::Spec {
        message: format!("{file}: {message}"),
        location: None,
    };
    let tune_params = root
        .get("tune_params")
        .and_then(Json::as_object)
        .ok_or_else(|| spec_error("missing `tune_params` object".into()))?;
    let order: Vec<String> = match root.get("tune_params_keys").and_then(Json::as_array) {
        Some(keys) => keys
            .iter()
            .filter_map(Json::as_str)
            .map(str::to_string)
            .collect(),
        None => tune_params.keys().cloned().collect(),
    };
    let mut warnings = Vec::new();
    let mut parameters = Vec::with_capacity(order.len());
    for name in &order {
        let values = tune_params
            .get(name)
            .and_then(Json::as_array)
            .ok_or_else(|| spec_error(format!("`tune_params.{name}` must be a list of values")))?;
        let values = values
            .iter()
            .map(|v| json_value(v).ok_or_else(|| spec_error(format!("`tune_params.{name}` has a value `{v}` that is not a number, string or boolean"))))
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
    let configurations = match root.get("cache").and_then(Json::as_object) {
        None => None,
        Some(cache) => {
            let mut configs = Vec::with_capacity(cache.len());
            let mut skipped = 0usize;
            'records: for record in cache.values() {
                let mut config = Vec::with_capacity(parameters.len());
                for p in &parameters {
                    let Some(i) = record
                        .get(p.name())
                        .and_then(json_value)
                        .and_then(|v| p.index_of(&v))
                    else {
                        skipped += 1;
                        continue 'records;
                    };
                    config.push(i as u32);
                }
                configs.push(config);
            }
            if skipped > 0 {
                warnings.push(format!(
                    "{skipped} cache records have parameter values outside `tune_params`; skipped"
                ));
            }
            (!configs.is_empty()).then_some(configs)
        }
    };
    let name = root
        .get("kernel_name")
        .and_then(Json::as_str)
        .map(str::to_string);
    Ok(SpaceSpec {
        name,
        format: SpecFormat::Cache,
        parameters,
        constraints: Vec::new(),
        configurations,
        warnings,
    })
}
