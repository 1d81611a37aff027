//! How the strategies compare objective values: one rule for every family.

/// Whether objective `a` is strictly better than `b` (minimisation form). A failed value
/// (`None`, or NaN) is worse than any successful one and never better than another failure.
pub(crate) fn better(a: Option<f64>, b: Option<f64>) -> bool {
    match (ok(a), ok(b)) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// The value as a number, `None` when it failed (or is NaN).
pub(crate) fn ok(v: Option<f64>) -> Option<f64> {
    v.filter(|v| !v.is_nan())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_worse_than_anything_and_never_better_than_each_other() {
        assert!(better(Some(1.0), Some(2.0)));
        assert!(!better(Some(2.0), Some(2.0)));
        assert!(better(Some(1e300), None));
        assert!(!better(None, Some(1e300)));
        assert!(!better(None, None));
        assert!(!better(Some(f64::NAN), Some(1.0)));
        assert!(better(Some(-5.0), Some(f64::NAN)));
        assert_eq!(ok(Some(f64::NAN)), None);
        assert_eq!(ok(Some(2.0)), Some(2.0));
    }
}
