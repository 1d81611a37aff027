//! Special functions: the logarithm of the gamma function.
//!
//! Written by hand: no small, dependency-free crate offers `ln Γ` (the candidates, `statrs` and
//! `special`, bring whole numerics stacks for one function), and the baseline needs it only for
//! binomial coefficients.
//!
//! The method is the Stirling series with a shift: for `x >= 10` the asymptotic series
//! `ln Γ(x) = (x - 1/2) ln x - x + ln(2π)/2 + Σ B_2k / (2k (2k-1) x^(2k-1))` with eight terms has
//! a truncation error below `4e-17`; smaller arguments are shifted up with
//! `Γ(x) = Γ(x + k) / (x (x+1) ... (x+k-1))`, and negative ones use the reflection formula.
//!
//! ## References
//! - M. Abramowitz and I. A. Stegun, *Handbook of Mathematical Functions*, 6.1.40 (Stirling
//!   series) and 6.1.17 (reflection).

use std::f64::consts::PI;

/// `ln(2π) / 2`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Coefficients `B_2k / (2k (2k-1))` of the Stirling series, k = 1..8.
const STIRLING: [f64; 8] = [
    1.0 / 12.0,
    -1.0 / 360.0,
    1.0 / 1260.0,
    -1.0 / 1680.0,
    1.0 / 1188.0,
    -691.0 / 360_360.0,
    1.0 / 156.0,
    -3617.0 / 122_400.0,
];

/// Below this the argument is shifted up before the Stirling series is used.
const SHIFT_TO: f64 = 10.0;

/// `ln |Γ(x)|`; `+inf` at the poles (0, -1, -2, ...), NaN for NaN.
///
/// Absolute error about `1e-15 · max(1, |ln Γ(x)|)` for `x > 0`.
pub(crate) fn ln_gamma(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return f64::INFINITY;
    }
    if x <= 0.0 {
        if x == x.floor() {
            return f64::INFINITY; // a pole (or -inf)
        }
        // reflection: Γ(x) Γ(1 - x) = π / sin(π x)
        return (PI / (PI * x).sin().abs()).ln() - ln_gamma(1.0 - x);
    }
    let mut z = x;
    let mut product = 1.0;
    while z < SHIFT_TO {
        product *= z;
        z += 1.0;
    }
    stirling(z) - product.ln()
}

/// The Stirling series, for `z >= SHIFT_TO`.
fn stirling(z: f64) -> f64 {
    let w = 1.0 / (z * z);
    let series = STIRLING.iter().rev().fold(0.0, |acc, &c| acc * w + c) / z;
    (z - 0.5) * z.ln() - z + HALF_LN_2PI + series
}

/// `ln C(a, k)` for whole numbers `a, k >= 0`; `-inf` when `k > a` (the coefficient is 0).
pub(crate) fn ln_choose(a: usize, k: usize) -> f64 {
    if k > a {
        return f64::NEG_INFINITY;
    }
    if k == 0 || k == a {
        return 0.0;
    }
    ln_gamma(a as f64 + 1.0) - ln_gamma(k as f64 + 1.0) - ln_gamma((a - k) as f64 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1.0)
    }

    #[test]
    fn known_values() {
        // (x, ln Γ(x)) from scipy.special.gammaln
        let cases = [
            (0.5, 0.572_364_942_924_700_1),
            (1.0, 0.0),
            (2.0, 0.0),
            (1.5, -0.120_782_237_635_245_22),
            (3.0, std::f64::consts::LN_2),
            (10.0, 12.801_827_480_081_469),
            (0.1, 2.252_712_651_734_206),
            (1e-8, 18.420_680_738_180_21),
            (7.3, 7.147_892_523_022_249),
            (100.0, 359.134_205_369_575_4),
            (20_001.0, 178_075.621_737_198_7),
            (1e6, 12_815_504.569_147_61),
            (1e15, 3.353_877_639_491_066_8e16),
        ];
        for (x, want) in cases {
            let got = ln_gamma(x);
            assert!(
                close(got, want, 2e-15),
                "ln_gamma({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn factorials_and_recurrence() {
        let mut ln_fact = 0.0_f64;
        for n in 1..200_usize {
            ln_fact += (n as f64).ln();
            let got = ln_gamma(n as f64 + 1.0);
            assert!(
                close(got, ln_fact, 1e-14),
                "ln {n}! = {got}, want {ln_fact}"
            );
        }
        for i in 1..500 {
            let x = 0.037 * i as f64;
            let lhs = ln_gamma(x + 1.0);
            let rhs = ln_gamma(x) + x.ln();
            assert!(close(lhs, rhs, 1e-14), "recurrence at {x}: {lhs} vs {rhs}");
        }
    }

    #[test]
    fn reflection_and_poles() {
        // Γ(-0.5) = -2 √π
        let want = (2.0 * PI.sqrt()).ln();
        assert!(close(ln_gamma(-0.5), want, 1e-14));
        assert_eq!(ln_gamma(0.0), f64::INFINITY);
        assert_eq!(ln_gamma(-3.0), f64::INFINITY);
        assert!(ln_gamma(f64::NAN).is_nan());
    }

    #[test]
    fn binomials() {
        assert_eq!(ln_choose(5, 0), 0.0);
        assert_eq!(ln_choose(5, 5), 0.0);
        assert_eq!(ln_choose(3, 4), f64::NEG_INFINITY);
        assert!(close(ln_choose(10, 3).exp(), 120.0, 1e-13));
        assert!(close(ln_choose(52, 5).exp(), 2_598_960.0, 1e-13));
    }
}
