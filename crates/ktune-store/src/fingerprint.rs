//! What identifies a tuning problem, and how two problems differ.

use ktune_space::{ParamKind, SearchSpace};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// What identifies a tuning problem: stored in the database when it is created, and compared
/// when it is opened again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Each parameter's name and its domain's values as text, in declaration order.
    pub parameters: Vec<(String, Vec<String>)>,
    /// The constraints' source texts, in declaration order.
    pub constraints: Vec<String>,
    /// A canonical JSON text of the runner settings (the caller provides it).
    pub runner: String,
    /// The objective's metric name.
    pub objective: String,
    /// Each permutation parameter's item names (its values above are orderings of item
    /// indices), so results can show `[i, k, j]` without the spec. Absent from databases
    /// made before permutations named their items, and from spaces without permutations
    /// (so their fingerprints are unchanged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<(String, Vec<String>)>,
}

/// Domains longer than this are shown shortened in messages.
const SHOWN_VALUES: usize = 12;

impl Fingerprint {
    /// The fingerprint of `space` tuned with the runner settings `runner` (a canonical JSON
    /// text) for the metric `objective`.
    pub fn new(space: &SearchSpace, runner: &str, objective: &str) -> Fingerprint {
        Fingerprint {
            parameters: space
                .params()
                .iter()
                .map(|p| {
                    (
                        p.name().to_string(),
                        p.values().iter().map(|v| v.to_string()).collect(),
                    )
                })
                .collect(),
            constraints: space
                .constraints()
                .iter()
                .map(|c| c.source().to_string())
                .collect(),
            runner: runner.to_string(),
            objective: objective.to_string(),
            items: space
                .params()
                .iter()
                .filter_map(|p| match p.kind() {
                    ParamKind::Permutation { items } => Some((p.name().to_string(), items.clone())),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The item names of permutation parameter `name`, when they were stored.
    pub fn items_of(&self, name: &str) -> Option<&[String]> {
        self.items
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, items)| items.as_slice())
    }

    /// Human-readable differences of `self` (the problem asked for) from `other` (the one
    /// stored), e.g. "parameter `tile` has values [1, 2, 4] instead of [1, 2]",
    /// "constraint added: `x < 3`", "the runner settings changed: ..."; empty if they
    /// describe the same problem. Constraint order does not matter; parameter order does
    /// (configurations are stored as value indices in parameter order).
    pub fn differences(&self, other: &Fingerprint) -> Vec<String> {
        let mut out = Vec::new();
        let find =
            |list: &[(String, Vec<String>)], name: &str| list.iter().position(|(n, _)| n == name);
        for (name, _) in &other.parameters {
            if find(&self.parameters, name).is_none() {
                out.push(format!("parameter `{name}` removed"));
            }
        }
        for (name, values) in &self.parameters {
            match find(&other.parameters, name) {
                None => out.push(format!(
                    "parameter `{name}` added with values {}",
                    show(values)
                )),
                Some(i) if other.parameters[i].1 != *values => out.push(format!(
                    "parameter `{name}` has values {} instead of {}",
                    show(values),
                    show(&other.parameters[i].1)
                )),
                Some(_) => {}
            }
        }
        let common = |a: &Fingerprint, b: &Fingerprint| -> Vec<String> {
            a.parameters
                .iter()
                .filter(|(n, _)| find(&b.parameters, n).is_some())
                .map(|(n, _)| format!("`{n}`"))
                .collect()
        };
        let (mine, theirs) = (common(self, other), common(other, self));
        if mine != theirs {
            out.push(format!(
                "the parameters are in the order {} instead of {}",
                mine.join(", "),
                theirs.join(", ")
            ));
        }
        // Renamed items leave the orderings above unchanged. A database made before items
        // were stored cannot tell, and is taken as it is.
        for (name, items) in &self.items {
            if let Some(theirs) = other.items_of(name)
                && theirs != items.as_slice()
            {
                out.push(format!(
                    "permutation `{name}` has items {} instead of {}",
                    show(items),
                    show(theirs)
                ));
            }
        }
        let mut unmatched: Vec<&String> = other.constraints.iter().collect();
        let mut added = Vec::new();
        for c in &self.constraints {
            match unmatched.iter().position(|o| *o == c) {
                Some(i) => {
                    unmatched.remove(i);
                }
                None => added.push(c),
            }
        }
        out.extend(added.iter().map(|c| format!("constraint added: `{c}`")));
        out.extend(
            unmatched
                .iter()
                .map(|c| format!("constraint removed: `{c}`")),
        );
        if let Some(d) = runner_difference(&self.runner, &other.runner) {
            out.push(d);
        }
        if self.objective != other.objective {
            out.push(format!(
                "the objective is `{}` instead of `{}`",
                self.objective, other.objective
            ));
        }
        out
    }
}

/// `[a, b, c]`, shortened for long domains.
fn show(values: &[String]) -> String {
    if values.len() <= SHOWN_VALUES {
        format!("[{}]", values.join(", "))
    } else {
        format!(
            "[{}, ..., {}] ({} values)",
            values[..SHOWN_VALUES - 2].join(", "),
            values[values.len() - 1],
            values.len()
        )
    }
}

/// How the runner settings differ: compared as JSON when both are JSON (key order and
/// spacing do not matter), naming the top-level keys that changed when both are objects.
fn runner_difference(mine: &str, theirs: &str) -> Option<String> {
    const CHANGED: &str = "the runner settings changed";
    match (
        serde_json::from_str::<Json>(mine),
        serde_json::from_str::<Json>(theirs),
    ) {
        (Ok(a), Ok(b)) if a == b => None,
        (Ok(Json::Object(a)), Ok(Json::Object(b))) => {
            let mut parts = Vec::new();
            for (k, v) in &a {
                match b.get(k) {
                    None => parts.push(format!("`{k}` added ({v})")),
                    Some(w) if w != v => parts.push(format!("`{k}` is {v} instead of {w}")),
                    Some(_) => {}
                }
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                parts.push(format!("`{k}` removed"));
            }
            Some(format!("{CHANGED}: {}", parts.join("; ")))
        }
        _ if mine == theirs => None,
        _ => Some(CHANGED.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_space::Parameter;

    fn space(tile: &[i64], constraints: &[&str]) -> SearchSpace {
        SearchSpace::new(
            vec![
                Parameter::integer("x", [1, 2, 3, 4]).unwrap(),
                Parameter::integer("tile", tile.iter().copied()).unwrap(),
            ],
            constraints,
        )
        .unwrap()
    }

    #[test]
    fn equal_fingerprints_have_no_differences() {
        let a = Fingerprint::new(
            &space(&[1, 2], &["x < 4", "x != 2"]),
            "{\"a\":1,\"b\":2}",
            "time",
        );
        let b = Fingerprint::new(
            &space(&[1, 2], &["x != 2", "x < 4"]),
            "{\"b\": 2, \"a\": 1}",
            "time",
        );
        assert!(a.differences(&a).is_empty());
        // Constraint order and JSON spacing/key order are not differences.
        assert!(a.differences(&b).is_empty(), "{:?}", a.differences(&b));
        assert_eq!(
            a.parameters[1],
            ("tile".into(), vec!["1".into(), "2".into()])
        );
    }

    #[test]
    fn differences_are_described() {
        let old = Fingerprint::new(&space(&[1, 2], &[]), "{\"repeats\":3}", "time");
        let new = Fingerprint::new(
            &space(&[1, 2, 4], &["x < 3"]),
            "{\"repeats\":5,\"gpu\":0}",
            "GFLOP/s",
        );
        let d = new.differences(&old);
        assert_eq!(
            d,
            vec![
                "parameter `tile` has values [1, 2, 4] instead of [1, 2]".to_string(),
                "constraint added: `x < 3`".into(),
                "the runner settings changed: `repeats` is 5 instead of 3; `gpu` added (0)".into(),
                "the objective is `GFLOP/s` instead of `time`".into(),
            ]
        );
        let back = old.differences(&new);
        assert!(
            back.contains(&"constraint removed: `x < 3`".to_string()),
            "{back:?}"
        );
        assert!(back.iter().any(|s| s.contains("`gpu` removed")), "{back:?}");
        // Non-JSON runner texts compare as text.
        let mut a = old.clone();
        a.runner = "not json".into();
        assert_eq!(
            a.differences(&old),
            vec!["the runner settings changed".to_string()]
        );
    }

    #[test]
    fn added_removed_and_reordered_parameters() {
        let mut a = Fingerprint::new(&space(&[1, 2], &[]), "{}", "time");
        let b = a.clone();
        a.parameters.swap(0, 1);
        assert_eq!(
            a.differences(&b),
            vec!["the parameters are in the order `tile`, `x` instead of `x`, `tile`".to_string()]
        );
        a.parameters.remove(0);
        a.parameters
            .push(("y".into(), (0..100).map(|i| i.to_string()).collect()));
        let d = a.differences(&b);
        assert_eq!(d[0], "parameter `tile` removed");
        assert_eq!(
            d[1],
            "parameter `y` added with values [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..., 99] (100 values)"
        );
    }
}
