//! Repeated measurements of one configuration: every sample, its summary statistics, and the
//! statistic the strategy sees as the objective.
//!
//! The confidence level is fixed at 95%. The interval of the mean is Student's t interval; the
//! interval of the median is the distribution-free one between two order statistics; the
//! minimum has no interval of its own and reports the mean's.
//!
//! Student's t quantile is computed here (a table for 1 to 30 degrees of freedom and the
//! Cornish-Fisher expansion beyond) because the crate that has it, `statrs`, pulls in
//! `nalgebra` even without its default features.

use serde::{Deserialize, Serialize};

/// Which statistic of a configuration's samples is its objective value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    /// The mean (the default: what a program that runs the kernel many times pays).
    #[default]
    Mean,
    /// The median (robust to a few disturbed samples).
    Median,
    /// The minimum (the best the hardware did; optimistic under noise).
    Min,
}

impl Statistic {
    /// The name used in specs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::Median => "median",
            Statistic::Min => "min",
        }
    }

    /// The statistic called `name`.
    pub fn from_name(name: &str) -> Option<Statistic> {
        [Statistic::Mean, Statistic::Median, Statistic::Min]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// The measured samples of one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    /// Each sample, in the unit of the measured quantity (a sample may average several runs).
    pub values: Vec<f64>,
    /// Runs or launches averaged into each sample (more than one for very short kernels).
    #[serde(default = "one")]
    pub runs_per_sample: usize,
    /// Repetition stopped early because the configuration was clearly worse than the best
    /// so far; the samples taken until then are kept and it counts as measured.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
    /// The statistic that is the objective.
    #[serde(default)]
    pub statistic: Statistic,
}

fn one() -> usize {
    1
}

impl Samples {
    /// Samples summarised by `statistic`.
    pub fn new(values: Vec<f64>, statistic: Statistic) -> Samples {
        Samples {
            values,
            runs_per_sample: 1,
            aborted: false,
            statistic,
        }
    }

    /// Their summary statistics.
    pub fn summary(&self) -> Summary {
        Summary::of(&self.values, self.statistic)
    }
}

/// Summary statistics of a configuration's samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample.
    pub min: f64,
    /// Median sample.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one sample).
    pub stdev: f64,
    /// The statistic that is the objective.
    pub statistic: Statistic,
    /// Lower end of the 95% confidence interval of that statistic.
    pub ci_low: f64,
    /// Upper end.
    pub ci_high: f64,
}

impl Summary {
    /// The summary of `values` (which must not be empty) with `statistic` as the objective.
    /// With one sample the interval is unbounded (nothing is known about the spread).
    pub fn of(values: &[f64], statistic: Statistic) -> Summary {
        let n = values.len();
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / n as f64;
        let stdev = if n < 2 {
            0.0
        } else {
            (values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)).sqrt()
        };
        let median = median_of_sorted(&sorted);
        let (ci_low, ci_high) = if n < 2 {
            (f64::NEG_INFINITY, f64::INFINITY)
        } else if statistic == Statistic::Median {
            median_interval(&sorted)
        } else {
            let h = t_quantile_975(n - 1) * stdev / (n as f64).sqrt();
            (mean - h, mean + h)
        };
        Summary {
            n,
            min: sorted.first().copied().unwrap_or(f64::NAN),
            median,
            mean,
            stdev,
            statistic,
            ci_low,
            ci_high,
        }
    }

    /// The objective: the chosen statistic.
    pub fn value(&self) -> f64 {
        match self.statistic {
            Statistic::Mean => self.mean,
            Statistic::Median => self.median,
            Statistic::Min => self.min,
        }
    }

    /// Half the width of the confidence interval relative to the objective's magnitude
    /// (infinite with fewer than two samples or an objective of zero).
    pub fn relative_half_width(&self) -> f64 {
        let half = 0.5 * (self.ci_high - self.ci_low);
        let v = self.value().abs();
        if v > 0.0 && half.is_finite() {
            half / v
        } else {
            f64::INFINITY
        }
    }

    /// The variance of the objective as an estimate (what a model's noise term wants):
    /// `s²/n` for the mean and the minimum, `π/2 · s²/n` for the median (its asymptotic
    /// efficiency under normal noise). `None` with fewer than two samples.
    pub fn estimate_variance(&self) -> Option<f64> {
        if self.n < 2 {
            return None;
        }
        let v = self.stdev * self.stdev / self.n as f64;
        Some(match self.statistic {
            Statistic::Median => std::f64::consts::FRAC_PI_2 * v,
            Statistic::Mean | Statistic::Min => v,
        })
    }
}

/// The 95% interval of the median between two order statistics: ranks `n/2 ∓ 1.96·√n/2`
/// (the normal approximation of the binomial), clamped to the samples.
fn median_interval(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len() as f64;
    let half = 1.959_964 * n.sqrt() / 2.0;
    let lo = ((n / 2.0 - half).floor() as isize - 1).max(0) as usize;
    let hi = ((n / 2.0 + half).ceil() as usize).min(sorted.len() - 1);
    (sorted[lo], sorted[hi])
}

/// `t_{0.975}` for 1 to 30 degrees of freedom.
const T975: [f64; 30] = [
    12.706_205, 4.302_653, 3.182_446, 2.776_445, 2.570_582, 2.446_912, 2.364_624, 2.306_004,
    2.262_157, 2.228_139, 2.200_985, 2.178_813, 2.160_369, 2.144_787, 2.131_450, 2.119_905,
    2.109_816, 2.100_922, 2.093_024, 2.085_963, 2.079_614, 2.073_873, 2.068_658, 2.063_899,
    2.059_539, 2.055_529, 2.051_831, 2.048_407, 2.045_230, 2.042_272,
];

/// The 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95%).
pub fn t_quantile_975(df: usize) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    if df <= T975.len() {
        return T975[df - 1];
    }
    // Cornish-Fisher expansion around the normal quantile (Abramowitz and Stegun 26.7.5);
    // its error is below 1e-5 beyond 30 degrees of freedom.
    let z = 1.959_963_984_540_054_f64;
    let v = df as f64;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
}

/// The median of sorted values (the mean of the middle two for an even count); NaN when
/// there are none.
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        sorted[n / 2]
    } else {
        0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = Summary::of(&[3.0, 1.0, 2.0, 4.0, 5.0], Statistic::Mean);
        assert_eq!((s.n, s.min, s.median, s.mean), (5, 1.0, 3.0, 3.0));
        assert!((s.stdev - 2.5f64.sqrt()).abs() < 1e-12);
        // t_{0.975, 4} = 2.776445
        let h = 2.776_445 * 2.5f64.sqrt() / 5f64.sqrt();
        assert!((s.ci_low - (3.0 - h)).abs() < 1e-6 && (s.ci_high - (3.0 + h)).abs() < 1e-6);
        assert!((s.relative_half_width() - h / 3.0).abs() < 1e-6);
        assert!((s.estimate_variance().unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(Summary::of(&[1.0, 9.0], Statistic::Min).value(), 1.0);
        assert_eq!(
            Summary::of(&[1.0, 2.0, 9.0, 10.0], Statistic::Median).value(),
            5.5
        );
    }

    #[test]
    fn one_sample_has_no_interval() {
        let s = Summary::of(&[2.0], Statistic::Mean);
        assert_eq!(s.stdev, 0.0);
        assert!(s.relative_half_width().is_infinite());
        assert_eq!(s.estimate_variance(), None);
    }

    #[test]
    fn t_quantiles_meet_the_normal_one() {
        assert!((t_quantile_975(40) - 2.021_075).abs() < 1e-4);
        assert!((t_quantile_975(120) - 1.979_930).abs() < 1e-4);
        assert!((t_quantile_975(31) - 2.039_513).abs() < 1e-4);
        assert!(t_quantile_975(10_000) > 1.96 && t_quantile_975(10_000) < 1.961);
        // Monotone where the table meets the expansion.
        assert!(t_quantile_975(30) > t_quantile_975(31));
    }

    #[test]
    fn the_median_interval_covers_the_median_and_is_within_the_samples() {
        let xs: Vec<f64> = (0..21).map(f64::from).collect();
        let s = Summary::of(&xs, Statistic::Median);
        assert_eq!(s.median, 10.0);
        assert!(s.ci_low < 10.0 && s.ci_high > 10.0);
        assert!(s.ci_low >= 0.0 && s.ci_high <= 20.0);
        // Exact binomial interval for n = 21 at 95% is [x(6), x(16)] (1-based ranks).
        assert!((4.0..=6.0).contains(&s.ci_low) && (15.0..=16.0).contains(&s.ci_high));
    }

    #[test]
    fn samples_serialise_compactly_and_read_back() {
        let s = Samples::new(vec![1.0, 2.0], Statistic::Median);
        let j = serde_json::to_value(&s).unwrap();
        assert!(j.get("aborted").is_none());
        assert_eq!(j["statistic"], "median");
        assert_eq!(serde_json::from_value::<Samples>(j).unwrap(), s);
        assert_eq!(Statistic::from_name("min"), Some(Statistic::Min));
        assert_eq!(Statistic::from_name("avg"), None);
    }
}
