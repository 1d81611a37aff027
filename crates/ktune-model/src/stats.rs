//! Target normalisation shared by the models (scikit-learn's `normalize_y=True`).

/// Mean and population standard deviation (ddof = 0) of `y`, computed in two passes.
///
/// A standard deviation of zero is replaced by 1, like scikit-learn. Spreads at rounding
/// level (`s <= 10·ε·|ȳ|`, e.g. a constant `y` whose mean is not exactly representable)
/// count as zero too. An empty `y` gives `(0, 1)`.
pub(crate) fn normalisation(y: &[f64]) -> (f64, f64) {
    if y.is_empty() {
        return (0.0, 1.0);
    }
    let n = y.len() as f64;
    let mean = y.iter().sum::<f64>() / n;
    let var = y.iter().map(|&v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let std = var.sqrt();
    if std == 0.0 || std <= 10.0 * f64::EPSILON * mean.abs() {
        (mean, 1.0)
    } else {
        (mean, std)
    }
}

/// Smallest pivot accepted without adding jitter, relative to `k(x, x) + noise`.
pub(crate) const PIVOT_THRESHOLD: f64 = 1e-12;

/// Jitter values tried, in order, when a pivot is too small: `base · 10^k`, `k = 0..=8`,
/// with `base = max(noise, 1e-10 · k(x, x))`.
pub(crate) fn jitter_sequence(noise: f64, prior_variance: f64) -> impl Iterator<Item = f64> {
    let base = noise.max(1e-10 * prior_variance);
    (0..=8).map(move |k| base * 10f64.powi(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_matches_numpy() {
        let (m, s) = normalisation(&[1.0, 2.0, 4.0]);
        assert!((m - 7.0 / 3.0).abs() < 1e-15);
        // np.std([1, 2, 4]) = 1.247219128924647
        assert!((s - 1.247_219_128_924_647).abs() < 1e-15);
        assert_eq!(normalisation(&[3.0]), (3.0, 1.0));
        assert_eq!(normalisation(&[0.1, 0.1, 0.1]).1, 1.0);
        assert_eq!(normalisation(&[]), (0.0, 1.0));
    }
}
