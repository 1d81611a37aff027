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
