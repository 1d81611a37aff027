//! A wrong expectation told apart from wrong kernels. When the first configurations that run
//! all differ from the expected output, and none matches it, the expected output (or its
//! tolerance) is the likelier fault, and measuring on would spend the whole budget on
//! failures (measured on an H100: a wrong `answer` made all 60 evaluations of a run fail,
//! BENCHMARKS.md). Kernel Tuner stops at the first difference; ktune records a configuration
//! whose output differs as a failure and goes on, since one configuration with a bug (a race
//! at some block size) should not end a search, and stops only at [`LIMIT`] in a row.

use ktune_core::{FailureKind, Outcome};

/// Configurations that ran with outputs different from the expected ones, before any matched,
/// that stop the run.
pub const LIMIT: usize = 8;

/// Counts, over a run, the configurations whose output matched and those whose output
/// differed.
#[derive(Debug, Default)]
pub struct WrongOutputs {
    matched: usize,
    differed: usize,
    first: Option<String>,
}

impl WrongOutputs {
    /// Counts a batch's outcomes; true once [`LIMIT`] outputs differed and none matched.
    /// Configurations that did not run (compile and launch failures, timeouts) count for
    /// neither.
    pub fn observe(&mut self, outcomes: &[Outcome]) -> bool {
        for o in outcomes {
            match o {
                Outcome::Ok { .. } => self.matched += 1,
                Outcome::Failed {
                    kind: FailureKind::WrongOutput,
                    reason,
                    ..
                } => {
                    self.differed += 1;
                    if self.first.is_none() {
                        self.first = Some(reason.lines().next().unwrap_or("").to_string());
                    }
                }
                Outcome::Failed { .. } => {}
            }
        }
        self.matched == 0 && self.differed >= LIMIT
    }

    /// Why the run stops, naming where the expected output came from.
    pub fn message(&self, expected: &str) -> String {
        format!(
            "the first {} configurations that ran all gave outputs different from {expected} \
             (the first: {}), and none matched: {expected} or the tolerance is likely wrong. \
             Their results are recorded",
            self.differed,
            self.first.as_deref().unwrap_or("?"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_core::Timings;

    fn ok() -> Outcome {
        Outcome::ok(vec![1.0], Timings::default())
    }

    fn wrong(i: usize) -> Outcome {
        Outcome::failed(
            FailureKind::WrongOutput,
            format!("output `c`: {i} of 16 elements differ\nmore"),
            Timings::default(),
        )
    }

    fn compile() -> Outcome {
        Outcome::failed(FailureKind::Compile, "error", Timings::default())
    }

    #[test]
    fn eight_differing_outputs_before_any_match_stop_the_run() {
        let mut w = WrongOutputs::default();
        assert!(!w.observe(&[wrong(1), compile(), wrong(2), wrong(3)]));
        assert!(!w.observe(&[wrong(4), wrong(5), compile(), compile()]));
        assert!(!w.observe(&[wrong(6), wrong(7)]));
        assert!(w.observe(&[wrong(8)]));
        let m = w.message("the expected output");
        assert!(
            m.starts_with(
                "the first 8 configurations that ran all gave outputs different from the \
                 expected output (the first: output `c`: 1 of 16 elements differ), and none \
                 matched"
            ),
            "{m}"
        );
    }

    #[test]
    fn one_matching_output_means_the_expectation_holds() {
        let mut w = WrongOutputs::default();
        assert!(!w.observe(&[wrong(1), ok()]));
        for i in 2..40 {
            assert!(!w.observe(&[wrong(i)]));
        }
    }

    #[test]
    fn configurations_that_did_not_run_count_for_nothing() {
        let mut w = WrongOutputs::default();
        for _ in 0..50 {
            assert!(!w.observe(&[compile()]));
        }
        assert!(!w.observe(&vec![wrong(1); LIMIT - 1]));
        assert!(w.observe(&[wrong(2)]));
    }
}
