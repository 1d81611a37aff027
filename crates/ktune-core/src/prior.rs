//! Priors: earlier measurements of a related task (the same code on another device, at
//! another problem size, or an earlier version of it), matched onto the search space being
//! tuned by parameter name.
//!
//! A [`Prior`] holds what was measured, by parameter value; [`Prior::match_onto`] maps it
//! onto a [`SearchSpace`] and says how much of it maps ([`MatchReport`]):
//!
//! - parameters are matched by name; a prior's value that is not in the target's domain is
//!   moved to the nearest value of a numeric parameter (integer, real, or ordinal numbers)
//!   and dropped for any other (a label, a boolean);
//! - a permutation is matched by its items' names where the prior names them (a ktune study
//!   records them; [`Prior::items`]), so a prior whose items were declared in another order
//!   still means the same loop order here; one that orders an item the target lacks, or
//!   lacks one the target orders, is dropped. Where the prior does not name them (a T4 file
//!   or a cache stores positions only) positions are taken as they are;
//! - a parameter only the prior has is left out, so its measurements that differ only there
//!   fall onto one configuration, which keeps the best of them (the prior says that much is
//!   possible there);
//! - a parameter only the target has takes its default (or its first value) in every
//!   measurement;
//! - a configuration the target's constraints rule out is dropped.
//!
//! What a strategy does with the matched priors is its own business
//! ([`Strategy::set_priors`](crate::Strategy::set_priors)): a prior is another task, not
//! noisy measurements of this one, and its values are in its own units (another device is
//! faster or slower everywhere), so the strategies that use priors use their orderings.

use ktune_space::{Configuration, ParamKind, Parameter, SearchSpace, Value};
use rustc_hash::FxHashMap;

use crate::Direction;

/// Earlier measurements of a related task, by parameter value.
#[derive(Clone, Debug, PartialEq)]
pub struct Prior {
    /// Where they come from, as reports name it (a file, a study).
    pub source: String,
    /// The parameters' names, in the order of each measurement's values.
    pub parameters: Vec<String>,
    /// Whether smaller or larger values were better.
    pub direction: Direction,
    /// What was measured.
    pub measurements: Vec<PriorMeasurement>,
    /// Each permutation parameter's item names, where the source records them: its values
    /// are orderings of positions in this list. A permutation the list does not name is
    /// matched by position.
    pub items: Vec<(String, Vec<String>)>,
}

/// One earlier measurement: a configuration's values and its objective (`None`: it failed).
#[derive(Clone, Debug, PartialEq)]
pub struct PriorMeasurement {
    /// One value per parameter of the prior.
    pub values: Vec<Value>,
    /// The objective as measured, in the prior's direction and units; `None` for a failure.
    pub objective: Option<f64>,
}

/// A prior mapped onto a search space: each configuration once, with the prior's value in
/// minimisation form (`None`: it failed there).
#[derive(Clone, Debug, PartialEq)]
pub struct MatchedPrior {
    /// Where it comes from.
    pub source: String,
    /// The configurations of the space the prior measured, in the order first measured.
    pub observations: Vec<(Configuration, Option<f64>)>,
    /// How much of the prior maps onto the space.
    pub report: MatchReport,
}

/// How much of a prior maps onto a search space.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MatchReport {
    /// The prior's measurements.
    pub measurements: usize,
    /// Those that became a configuration of the space.
    pub matched: usize,
    /// Of the matched, those with a value moved to the nearest of the target's domain.
    pub moved: usize,
    /// Dropped: a value of a non-numeric parameter that the target's domain lacks.
    pub outside: usize,
    /// Dropped: mapped onto a configuration that the target's constraints rule out.
    pub invalid: usize,
    /// The distinct configurations of the space the matched measurements give (fewer than
    /// `matched` where several fell onto one).
    pub configurations: usize,
    /// Parameters only the prior has (left out).
    pub only_in_prior: Vec<String>,
    /// Parameters only the target has (each measurement takes the parameter's default, or
    /// its first value).
    pub only_in_target: Vec<String>,
}

impl std::fmt::Display for MatchReport {
    /// `1200 of 1500 measurements map onto 1180 configurations (30 moved to the nearest
    /// value; dropped: 200 outside the domain, 100 ruled out by constraints); only in the
    /// prior: x; only here: y`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {} measurements map onto {} configurations",
            self.matched, self.measurements, self.configurations
        )?;
        let mut notes = Vec::new();
        if self.moved > 0 {
            notes.push(format!("{} moved to the nearest value", self.moved));
        }
        if self.outside > 0 {
            notes.push(format!("{} dropped outside the domain", self.outside));
        }
        if self.invalid > 0 {
            notes.push(format!("{} dropped by the constraints", self.invalid));
        }
        if !notes.is_empty() {
            write!(f, " ({})", notes.join(", "))?;
        }
        if !self.only_in_prior.is_empty() {
            write!(f, "; only in the prior: {}", self.only_in_prior.join(", "))?;
        }
        if !self.only_in_target.is_empty() {
            write!(
                f,
                "; only here (taken at their default): {}",
                self.only_in_target.join(", ")
            )?;
        }
        Ok(())
    }
}

/// A prior that cannot be used for a space.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PriorError {
    /// No parameter name in common.
    #[error(
        "prior `{source_name}` shares no parameter with the space: it has {prior}; the space has {target}"
    )]
    NoSharedParameter {
        /// The prior.
        source_name: String,
        /// Its parameters.
        prior: String,
        /// The space's.
        target: String,
    },
    /// Its objective runs the other way.
    #[error(
        "prior `{source_name}` {prior}s its objective and this study would {target} it: a prior must measure the same objective"
    )]
    Direction {
        /// The prior.
        source_name: String,
        /// Its direction (`minimize` or `maximize`).
        prior: &'static str,
        /// The study's.
        target: &'static str,
    },
    /// A measurement with another number of values than the prior has parameters.
    #[error("prior `{source_name}`: measurement {index} has {got} values for {want} parameters")]
    Ragged {
        /// The prior.
        source_name: String,
        /// Which measurement (from 0).
        index: usize,
        /// Its number of values.
        got: usize,
        /// The number of parameters.
        want: usize,
    },
}

/// Where a target parameter's value comes from.
enum Source {
    /// The prior's value at this position.
    Prior(usize),
    /// The prior's permutation at this position, its items named: each prior item's position
    /// among the target's items (`None` where the target lacks the item).
    Items(usize, Vec<Option<u32>>),
    /// Always this value index (a parameter the prior does not have).
    Fixed(u32),
}

impl Prior {
    /// A prior with no measurements yet.
    pub fn new(source: impl Into<String>, parameters: Vec<String>, direction: Direction) -> Prior {
        Prior {
            source: source.into(),
            parameters,
            direction,
            measurements: Vec::new(),
            items: Vec::new(),
        }
    }

    /// The prior with its permutation parameters' item names (name, items).
    pub fn with_items(mut self, items: Vec<(String, Vec<String>)>) -> Prior {
        self.items = items;
        self
    }

    /// Adds a measurement: `None` for a configuration that failed.
    pub fn push(&mut self, values: Vec<Value>, objective: Option<f64>) {
        self.measurements
            .push(PriorMeasurement { values, objective });
    }

    /// The prior as configurations of `space`, for a study that goes in `direction`.
    pub fn match_onto(
        &self,
        space: &SearchSpace,
        direction: Direction,
    ) -> Result<MatchedPrior, PriorError> {
        if self.direction != direction {
            return Err(PriorError::Direction {
                source_name: self.source.clone(),
                prior: self.direction.name(),
                target: direction.name(),
            });
        }
        let sources: Vec<Source> = space
            .params()
            .iter()
            .map(|p| {
                let Some(i) = self.parameters.iter().position(|n| n == p.name()) else {
                    return Source::Fixed(p.default_index().unwrap_or(0) as u32);
                };
                let named = self.items.iter().find(|(n, _)| n == p.name());
                match (p.kind(), named) {
                    (ParamKind::Permutation { items }, Some((_, theirs))) => Source::Items(
                        i,
                        theirs
                            .iter()
                            .map(|t| items.iter().position(|o| o == t).map(|k| k as u32))
                            .collect(),
                    ),
                    _ => Source::Prior(i),
                }
            })
            .collect();
        if sources.iter().all(|s| matches!(s, Source::Fixed(_))) {
            let names = |v: Vec<&str>| v.join(", ");
            return Err(PriorError::NoSharedParameter {
                source_name: self.source.clone(),
                prior: names(self.parameters.iter().map(String::as_str).collect()),
                target: names(space.params().iter().map(Parameter::name).collect()),
            });
        }
        let mut report = MatchReport {
            measurements: self.measurements.len(),
            only_in_prior: self
                .parameters
                .iter()
                .filter(|n| space.param_index(n).is_none())
                .cloned()
                .collect(),
            only_in_target: space
                .params()
                .iter()
                .zip(&sources)
                .filter(|(_, s)| matches!(s, Source::Fixed(_)))
                .map(|(p, _)| p.name().to_string())
                .collect(),
            ..MatchReport::default()
        };
        let mut observations: Vec<(Configuration, Option<f64>)> = Vec::new();
        let mut index: FxHashMap<Configuration, usize> = FxHashMap::default();
        for (i, m) in self.measurements.iter().enumerate() {
            if m.values.len() != self.parameters.len() {
                return Err(PriorError::Ragged {
                    source_name: self.source.clone(),
                    index: i,
                    got: m.values.len(),
                    want: self.parameters.len(),
                });
            }
            let mut moved = false;
            let config: Option<Configuration> = space
                .params()
                .iter()
                .zip(&sources)
                .map(|(p, s)| match s {
                    Source::Fixed(v) => Some(*v),
                    Source::Prior(k) => {
                        let (v, exact) = nearest(p, &m.values[*k])?;
                        moved |= !exact;
                        Some(v)
                    }
                    // An ordering of fewer or more items than the target's is in no domain.
                    Source::Items(k, positions) => {
                        let order = renamed(&m.values[*k], positions)?;
                        p.index_of(&order).map(|v| v as u32)
                    }
                })
                .collect();
            let Some(config) = config else {
                report.outside += 1;
                continue;
            };
            if !space.satisfies_constraints(&config) {
                report.invalid += 1;
                continue;
            }
            report.matched += 1;
            report.moved += usize::from(moved);
            let value = m
                .objective
                .filter(|v| v.is_finite())
                .map(|v| direction.to_min(v));
            match index.get(&config) {
                // Several measurements on one configuration: the best stands for it.
                Some(&j) => {
                    let kept = &mut observations[j].1;
                    if value.is_some_and(|v| kept.is_none_or(|k| v < k)) {
                        *kept = value;
                    }
                }
                None => {
                    index.insert(config.clone(), observations.len());
                    observations.push((config, value));
                }
            }
        }
        report.configurations = observations.len();
        Ok(MatchedPrior {
            source: self.source.clone(),
            observations,
            report,
        })
    }
}

/// A permutation of the prior's item positions in the target's positions (`positions`: each
/// prior item's place among the target's items); `None` where it is not a permutation, or
/// where it orders an item the target lacks.
fn renamed(value: &Value, positions: &[Option<u32>]) -> Option<Value> {
    let Value::Perm(order) = value else {
        return None;
    };
    order
        .iter()
        .map(|&i| positions.get(i as usize).copied().flatten())
        .collect::<Option<Vec<u32>>>()
        .map(Value::Perm)
}

/// The index of `value` in `p`'s domain, and whether it is exactly there: a numeric value
/// not in the domain of a numeric parameter is moved to the nearest (the lower of two as
/// near); `None` where no value corresponds.
fn nearest(p: &Parameter, value: &Value) -> Option<(u32, bool)> {
    if let Some(i) = p.index_of(value) {
        return Some((i as u32, true));
    }
    let numeric = matches!(
        p.kind(),
        ParamKind::Integer | ParamKind::Real | ParamKind::Ordinal
    );
    let x = value.as_f64().filter(|x| numeric && x.is_finite())?;
    p.values()
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.as_f64().map(|y| (i, (y - x).abs())))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| (i as u32, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> SearchSpace {
        SearchSpace::new(
            vec![
                Parameter::integer("block", [16, 32, 64, 128]).unwrap(),
                Parameter::categorical("mode", ["fast", "safe"]).unwrap(),
                Parameter::integer("unroll", [1, 2, 4])
                    .unwrap()
                    .with_default(&Value::Int(2))
                    .unwrap(),
            ],
            &["block * unroll <= 256"],
        )
        .unwrap()
    }

    fn prior(params: &[&str]) -> Prior {
        Prior::new(
            "earlier.json",
            params.iter().map(|s| s.to_string()).collect(),
            Direction::Minimize,
        )
    }

    #[test]
    fn values_map_by_name_moved_to_the_nearest_numeric_value_and_merged_on_one_configuration() {
        let s = space();
        // The prior's columns in another order, a parameter the target lacks (`tile`), and
        // none for `unroll`, which takes its default, 2.
        let mut p = prior(&["mode", "tile", "block"]);
        p.push(
            vec![Value::Str("fast".into()), Value::Int(1), Value::Int(32)],
            Some(3.0),
        );
        // Differs only in `tile`: the same configuration; the better value stands.
        p.push(
            vec![Value::Str("fast".into()), Value::Int(2), Value::Int(32)],
            Some(2.0),
        );
        // 100 is not a block size: moved to 128 (nearer than 64).
        p.push(
            vec![Value::Str("safe".into()), Value::Int(1), Value::Int(100)],
            None,
        );
        // A label the target does not know: dropped.
        p.push(
            vec![Value::Str("turbo".into()), Value::Int(1), Value::Int(16)],
            Some(1.0),
        );
        let m = p.match_onto(&s, Direction::Minimize).unwrap();
        let describe: Vec<(String, Option<f64>)> = m
            .observations
            .iter()
            .map(|(c, v)| (s.describe(c), *v))
            .collect();
        assert_eq!(
            describe,
            vec![
                ("block=32, mode=fast, unroll=2".to_string(), Some(2.0)),
                ("block=128, mode=safe, unroll=2".to_string(), None),
            ]
        );
        let r = &m.report;
        assert_eq!(
            (r.measurements, r.matched, r.moved, r.outside),
            (4, 3, 1, 1)
        );
        assert_eq!((r.invalid, r.configurations), (0, 2));
        assert_eq!(r.only_in_prior, ["tile"]);
        assert_eq!(r.only_in_target, ["unroll"]);
        assert_eq!(
            r.to_string(),
            "3 of 4 measurements map onto 2 configurations (1 moved to the nearest value, 1 \
             dropped outside the domain); only in the prior: tile; only here (taken at their \
             default): unroll"
        );
    }

    #[test]
    fn constraints_drop_and_maximised_values_are_negated() {
        let s = space();
        let mut p = prior(&["block", "mode", "unroll"]);
        p.direction = Direction::Maximize;
        let fast = || Value::Str("fast".into());
        // 128 * 4 > 256: ruled out.
        p.push(vec![Value::Int(128), fast(), Value::Int(4)], Some(9.0));
        p.push(vec![Value::Int(64), fast(), Value::Int(4)], Some(5.0));
        let m = p.match_onto(&s, Direction::Maximize).unwrap();
        assert_eq!(m.observations.len(), 1);
        assert_eq!(m.observations[0].1, Some(-5.0));
        assert_eq!(m.report.invalid, 1);
    }

    #[test]
    fn a_prior_of_no_shared_parameter_or_the_other_direction_is_refused_naming_both() {
        let s = space();
        let e = prior(&["x", "y"])
            .match_onto(&s, Direction::Minimize)
            .unwrap_err()
            .to_string();
        crate::testing::assert_mentions(&e, &["shares no parameter", "x, y"]);
        assert!(e.contains("block, mode, unroll"), "{e}");
        let e = prior(&["block"])
            .match_onto(&s, Direction::Maximize)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("minimizes its objective and this study would maximize it"),
            "{e}"
        );
        let mut ragged = prior(&["block", "mode"]);
        ragged.push(vec![Value::Int(16)], Some(1.0));
        let e = ragged.match_onto(&s, Direction::Minimize).unwrap_err();
        assert!(
            e.to_string().contains("measurement 0 has 1 values for 2"),
            "{e}"
        );
    }

    #[test]
    fn a_permutation_is_matched_by_its_items_names_where_the_prior_names_them() {
        let order = |items: &[&str]| {
            SearchSpace::new(
                vec![Parameter::permutation("order", items.iter().copied()).unwrap()],
                &[] as &[&str],
            )
            .unwrap()
        };
        // The prior declared its loops k, i, j; it measured [j, k, i] (positions 2, 0, 1)
        // as the best and [k, i, j] (0, 1, 2) as a failure.
        let mut p = prior(&["order"]).with_items(vec![(
            "order".into(),
            vec!["k".into(), "i".into(), "j".into()],
        )]);
        p.push(vec![Value::Perm(vec![2, 0, 1])], Some(1.0));
        p.push(vec![Value::Perm(vec![0, 1, 2])], None);
        let s = order(&["i", "j", "k"]);
        let m = p.match_onto(&s, Direction::Minimize).unwrap();
        let shown: Vec<(String, Option<f64>)> = m
            .observations
            .iter()
            .map(|(c, v)| (s.describe(c), *v))
            .collect();
        assert_eq!(
            shown,
            [
                ("order=[j, k, i]".to_string(), Some(1.0)),
                ("order=[k, i, j]".to_string(), None)
            ]
        );

        // A target that orders another item: nothing of the prior means anything there.
        let m = p
            .match_onto(&order(&["i", "j", "l"]), Direction::Minimize)
            .unwrap();
        assert_eq!((m.report.matched, m.report.outside), (0, 2));
        // Nor where the target orders one more.
        let m = p
            .match_onto(&order(&["i", "j", "k", "l"]), Direction::Minimize)
            .unwrap();
        assert_eq!((m.report.matched, m.report.outside), (0, 2));

        // Without the names (a T4 file), positions are taken as they are.
        p.items.clear();
        let m = p.match_onto(&s, Direction::Minimize).unwrap();
        assert_eq!(s.describe(&m.observations[0].0), "order=[k, i, j]");
    }
}
