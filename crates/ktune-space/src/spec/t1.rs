//! T1 JSON problem files (the auto-tuning community's input format, as in the BAT suite):
//! `ConfigurationSpace.TuningParameters` (`Name`, `Type`, `Values`, `Default`) and
//! `ConfigurationSpace.Conditions` (`Expression`, `Parameters`). `Values` is either a JSON list
//! or a string holding a Python list expression such as
//! `"[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))"`.

use std::sync::Arc;

use serde_json::Value as Json;

use super::{
    ConstraintSource, Origin, RawParam, RawValues, SpaceSpec, SpecFormat, json_error, make_param,
};
use crate::error::{Location, SpaceError};
use crate::param::Value;

pub(super) fn parse(text: &str, file: &str) -> Result<SpaceSpec, SpaceError> {
    let root: Json = serde_json::from_str(text).map_err(|e| json_error(file, text, &e))?;
    let spec_error = |message: String, needle: Option<&str>| SpaceError::Spec {
        message: format!("{file}: {message}"),
        location: needle
            .and_then(|n| text.find(n).map(|i| i..i + n.len()))
            .map(|s| Box::new(Location::from_span(file, text, s))),
    };
    let space = root
        .get("ConfigurationSpace")
        .ok_or_else(|| spec_error("missing `ConfigurationSpace`".into(), None))?;
    let params = space
        .get("TuningParameters")
        .and_then(Json::as_array)
        .ok_or_else(|| {
            spec_error(
                "`ConfigurationSpace.TuningParameters` must be a list".into(),
                Some("\"ConfigurationSpace\""),
            )
        })?;
    let mut warnings = Vec::new();
    let mut parameters: Vec<crate::param::Parameter> = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let name = p
            .get("Name")
            .and_then(Json::as_str)
            .ok_or_else(|| {
                spec_error(
                    format!("TuningParameters[{i}] has no string `Name`"),
                    Some("\"TuningParameters\""),
                )
            })?
            .to_string();
        let needle = format!("\"{name}\"");
        let at = || {
            text.find(&needle)
                .map(|s| Location::from_span(file, text, s..s + needle.len()))
        };
        if parameters.iter().any(|q| q.name() == name) {
            return Err(SpaceError::DuplicateParameter {
                name,
                location: None,
            }
            .at(text
                .rfind(&needle)
                .map(|s| Location::from_span(file, text, s..s + needle.len()))));
        }
        let values = match p.get("Values") {
            Some(Json::String(expr)) => RawValues::Expr(expr.clone()),
            Some(Json::Array(list)) => RawValues::List(
                list.iter()
                    .map(|v| {
                        Value::from_json(v)
                            .ok_or_else(|| format!("`{v}` is not a number, string or boolean"))
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|message| {
                        SpaceError::InvalidParameter {
                            name: name.clone(),
                            message,
                        }
                        .at(at())
                    })?,
            ),
            _ => {
                return Err(SpaceError::InvalidParameter {
                    name,
                    message: "`Values` must be a list or a string with a Python list expression"
                        .into(),
                }
                .at(at()));
            }
        };
        // Some files write the default as a one-element list.
        let default = match p.get("Default") {
            Some(Json::Array(a)) if a.len() == 1 => Value::from_json(&a[0]),
            Some(v) => Value::from_json(v),
            None => None,
        };
        let raw = RawParam {
            name: name.clone(),
            kind: p.get("Type").and_then(Json::as_str).map(str::to_string),
            values,
            items: None,
            log: false,
            default,
        };
        parameters.push(make_param(raw, &mut warnings).map_err(|e| e.at(at()))?);
    }
    let file_arc: Arc<str> = Arc::from(file);
    let text_arc: Arc<str> = Arc::from(text);
    let mut constraints = Vec::new();
    if let Some(conditions) = space.get("Conditions") {
        let conditions = conditions.as_array().ok_or_else(|| {
            spec_error("`Conditions` must be a list".into(), Some("\"Conditions\""))
        })?;
        for (i, c) in conditions.iter().enumerate() {
            let expr = c.get("Expression").and_then(Json::as_str).ok_or_else(|| {
                spec_error(
                    format!("Conditions[{i}] has no string `Expression`"),
                    Some("\"Conditions\""),
                )
            })?;
            // Locate the expression's JSON string literal in the file for error positions.
            let quoted = serde_json::to_string(expr).unwrap_or_default();
            let origin = text
                .find(&quoted)
                .map(|q| Origin::of_literal(&file_arc, &text_arc, q, expr));
            if let Some(declared) = c.get("Parameters").and_then(Json::as_array) {
                for d in declared.iter().filter_map(Json::as_str) {
                    if !parameters.iter().any(|p| p.name() == d) {
                        warnings.push(format!(
                            "Conditions[{i}] declares `{d}`, which is not a tuning parameter"
                        ));
                    }
                }
            }
            constraints.push(ConstraintSource {
                text: expr.to_string(),
                context: format!("Conditions[{i}]"),
                origin,
            });
        }
    }
    let name = root
        .get("General")
        .and_then(|g| g.get("BenchmarkName"))
        .and_then(Json::as_str)
        .map(str::to_string);
    Ok(SpaceSpec {
        name,
        format: SpecFormat::T1,
        parameters,
        constraints,
        configurations: None,
        warnings,
    })
}
