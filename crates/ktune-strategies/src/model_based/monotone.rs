//! Failures that grow with the parameters: what one failed configuration says about others
//! before any model has learnt from it.
//!
//! A GPU kernel's shared memory, registers and threads per block grow with its block and tile
//! sizes. A configuration that fails for want of one of them is therefore seldom alone: every
//! configuration at least as large in each numeric parameter, and alike in the others, asks for
//! at least as much and fails too. On the shared convolution spaces a configuration that is
//! that much larger than a failing one fails 64-100% of the time (the base rate is 3-11%), and
//! 61-76% of the failures are such a configuration
//! (`docs/benchmarks/auto.md`, "Failures that grow with the parameters"). The feasibility
//! forest needs several failures before it draws such a region; this rule needs one.
//!
//! The rule is taken back where the data contradict it: a failure that some configuration
//! as large as it ran beside is no evidence of a limit (it failed for another reason:
//! divisibility, a compiler bug), so nothing is ruled out by it.
//!
//! Which parameters count as sizes: integer and real parameters of three values or more,
//! ordered by value. Two-valued numbers (on/off switches such as `use_shmem`), categories,
//! ordinals and permutations must be equal: a switch can as well lower what a kernel asks for.

use ktune_space::{Configuration, SearchSpace};

use crate::roles::size_values;

/// The failed configurations seen so far, and the running ones that may contradict them.
#[derive(Clone, Debug)]
pub(crate) struct FailureOrthants {
    /// Per parameter, its values as numbers where a larger value asks for more (`None`:
    /// configurations must agree on it).
    sizes: Vec<Option<Vec<f64>>>,
    /// Every failed configuration, and whether a configuration as large ran (no evidence).
    failures: Vec<(Configuration, bool)>,
    /// Every configuration that ran.
    running: Vec<Configuration>,
    /// The failures that rule others out: not contradicted, and not larger than another one
    /// that is (which rules out all it would).
    minimal: Vec<usize>,
}

impl FailureOrthants {
    /// The rule for `space` (nothing ruled out yet). `None` when no parameter is a size.
    pub(crate) fn new(space: &SearchSpace) -> Option<Self> {
        let sizes: Vec<Option<Vec<f64>>> = space.params().iter().map(size_values).collect();
        sizes
            .iter()
            .any(Option::is_some)
            .then_some(FailureOrthants {
                sizes,
                failures: Vec::new(),
                running: Vec::new(),
                minimal: Vec::new(),
            })
    }

    /// Learns one evaluated configuration and whether it ran.
    pub(crate) fn record(&mut self, config: &[u32], ran: bool) {
        if ran {
            let mut taken_back = false;
            for (failure, void) in &mut self.failures {
                if !*void && covers(&self.sizes, config, failure) {
                    *void = true;
                    taken_back = true;
                }
            }
            self.running.push(config.to_vec());
            if taken_back {
                // Rare: a failure taken back may uncover larger ones it hid.
                self.minimal.clear();
                for k in 0..self.failures.len() {
                    if !self.failures[k].1 {
                        self.add_minimal(k);
                    }
                }
            }
        } else {
            let void = self.running.iter().any(|r| covers(&self.sizes, r, config));
            self.failures.push((config.to_vec(), void));
            if !void {
                self.add_minimal(self.failures.len() - 1);
            }
        }
    }

    /// Adds failure `k` to the minimal ones, unless one of them is smaller already (it
    /// rules out nothing more), dropping those larger than it.
    fn add_minimal(&mut self, k: usize) {
        let failure = &self.failures[k].0;
        if self.rules_out(failure) {
            return;
        }
        let (sizes, failures) = (&self.sizes, &self.failures);
        self.minimal
            .retain(|&j| !covers(sizes, &failures[j].0, failure));
        self.minimal.push(k);
    }

    /// Whether `config` is at least as large as an uncontradicted failure, alike otherwise
    /// (the failure itself included).
    pub(crate) fn rules_out(&self, config: &[u32]) -> bool {
        self.minimal
            .iter()
            .any(|&k| covers(&self.sizes, config, &self.failures[k].0))
    }

    /// Whether anything is ruled out yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.minimal.is_empty()
    }
}

/// Whether `a` is at least `b` in every size and equal in every other parameter.
fn covers(sizes: &[Option<Vec<f64>>], a: &[u32], b: &[u32]) -> bool {
    a.iter()
        .zip(b)
        .zip(sizes)
        .all(|((&x, &y), size)| match size {
            Some(v) => v[x as usize] >= v[y as usize],
            None => x == y,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_space::{Parameter, SearchSpace, Value};

    fn space() -> SearchSpace {
        let ints =
            |name: &str, v: &[i64]| Parameter::integer(name, v.to_vec()).expect("valid parameter");
        let params = vec![
            ints("block", &[32, 64, 128, 256]),
            ints("tile", &[1, 2, 4]),
            ints("shmem", &[0, 1]),
            Parameter::categorical("order", ["ij", "ji"]).expect("valid parameter"),
        ];
        SearchSpace::new(params, &[] as &[&str]).expect("a space")
    }

    fn config(s: &SearchSpace, block: i64, tile: i64, shmem: i64, order: &str) -> Configuration {
        s.configuration_of(&[
            Value::Int(block),
            Value::Int(tile),
            Value::Int(shmem),
            Value::Str(order.into()),
        ])
        .expect("in the space")
    }

    #[test]
    fn a_failure_rules_out_what_is_larger_in_every_size_and_alike_otherwise() {
        let s = space();
        let mut o = FailureOrthants::new(&s).expect("block and tile are sizes");
        assert!(o.is_empty());
        o.record(&config(&s, 64, 2, 0, "ij"), false);
        assert!(o.rules_out(&config(&s, 64, 2, 0, "ij")));
        assert!(o.rules_out(&config(&s, 128, 2, 0, "ij")));
        assert!(o.rules_out(&config(&s, 256, 4, 0, "ij")));
        // Smaller in one size, or different in a switch or a category: not ruled out.
        assert!(!o.rules_out(&config(&s, 32, 4, 0, "ij")));
        assert!(!o.rules_out(&config(&s, 128, 1, 0, "ij")));
        assert!(!o.rules_out(&config(&s, 128, 2, 1, "ij")));
        assert!(!o.rules_out(&config(&s, 128, 2, 0, "ji")));
    }

    #[test]
    fn a_larger_configuration_that_runs_takes_the_failure_back() {
        let s = space();
        let mut o = FailureOrthants::new(&s).expect("sizes");
        o.record(&config(&s, 64, 2, 0, "ij"), false);
        o.record(&config(&s, 64, 1, 0, "ij"), false);
        assert!(o.rules_out(&config(&s, 128, 4, 0, "ij")));
        // Runs, though larger than both failures: neither is a limit.
        o.record(&config(&s, 128, 2, 0, "ij"), true);
        assert!(o.is_empty());
        assert!(!o.rules_out(&config(&s, 256, 4, 0, "ij")));
        // A later failure that a known run covers is no evidence either.
        o.record(&config(&s, 64, 2, 0, "ij"), false);
        assert!(o.is_empty());
        // One beyond every run still is.
        o.record(&config(&s, 256, 2, 0, "ij"), false);
        assert!(o.rules_out(&config(&s, 256, 4, 0, "ij")));
        assert!(!o.rules_out(&config(&s, 128, 4, 0, "ij")));
    }

    #[test]
    fn a_space_without_sizes_has_no_rule() {
        let params = vec![
            Parameter::integer("shmem", vec![0, 1]).expect("valid"),
            Parameter::categorical("order", ["ij", "ji"]).expect("valid"),
        ];
        let s = SearchSpace::new(params, &[] as &[&str]).expect("a space");
        assert!(FailureOrthants::new(&s).is_none());
    }
}
