//! How both runners repeat the measurement of one configuration: warm-up, adaptive
//! repetition until the confidence interval is narrow enough, several runs per sample for
//! very short programs or kernels, and early abort of configurations clearly worse than the
//! best so far.
//!
//! Written in a spec as `[runner.measure]`:
//!
//! ```toml
//! [runner.measure]
//! warmup = 1               # unmeasured runs first
//! min = 3                  # samples at least ...
//! max = 50                 # ... and at most
//! target = 0.02            # until the 95% interval's half-width is 2% of the objective
//! max_seconds = 5.0        # measuring one configuration stops after this long
//! min_sample_seconds = 0.001   # runs per sample grow until a sample lasts this long
//! abort = 2.0              # stop once the interval lies above 2x the best so far (false: never)
//! statistic = "mean"       # the objective: mean, median or min of the samples
//! ```
//!
//! The older `warmup` and `repeat` keys of `[runner]` still mean a fixed number of samples
//! (no target, no abort), as before.

use std::time::Instant;

use ktune_core::{Direction, Samples, Statistic, Summary};
use serde::Deserialize;

/// `abort = 2.0` or `abort = false`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum AbortSpec {
    /// `false` turns early abort off (`true` keeps the default factor).
    Switch(bool),
    /// The factor `k`: abort once the interval lies beyond `k` times the best.
    Factor(f64),
}

/// The `[runner.measure]` table, as written; every key is optional.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MeasureSpec {
    /// Unmeasured runs before the measured ones.
    pub warmup: Option<usize>,
    /// The fewest samples.
    pub min: Option<usize>,
    /// The most samples.
    pub max: Option<usize>,
    /// The relative half-width of the 95% confidence interval to reach (0.02 = ±2%);
    /// `0` or `false`-like values are refused: set `min = max` for a fixed count.
    pub target: Option<f64>,
    /// Seconds of measuring after which one configuration stops (with at least one sample).
    pub max_seconds: Option<f64>,
    /// Each sample averages as many runs as it takes to last this many seconds (for kernels
    /// shorter than the timer's resolution); 0 for one run per sample.
    pub min_sample_seconds: Option<f64>,
    /// Early abort.
    pub abort: Option<AbortSpec>,
    /// The statistic of the samples that is the objective.
    pub statistic: Option<String>,
}

/// The checked measurement plan of a runner.
#[derive(Clone, Debug, PartialEq)]
pub struct Measure {
    /// Unmeasured runs first.
    pub warmup: usize,
    /// The fewest samples.
    pub min: usize,
    /// The most samples.
    pub max: usize,
    /// Stop once the relative half-width of the interval is at most this (`None`: take
    /// `max` samples).
    pub target: Option<f64>,
    /// Stop measuring one configuration after this many seconds.
    pub max_seconds: f64,
    /// The shortest sample, in seconds (several runs are averaged into one sample when one
    /// run is shorter).
    pub min_sample_seconds: f64,
    /// Abort once the interval lies beyond this factor of the best so far.
    pub abort: Option<f64>,
    /// The objective statistic.
    pub statistic: Statistic,
}

/// The most runs averaged into one sample.
const MAX_RUNS_PER_SAMPLE: usize = 100_000;

/// Durations and factors beyond these are typing errors, not plans (and would overflow a
/// `Duration`).
const MAX_SECONDS: f64 = 1e6;

impl Measure {
    /// The fixed plan of the older `warmup`/`repeat` keys: exactly `repeat` samples.
    pub fn fixed(warmup: usize, repeat: usize) -> Measure {
        Measure {
            warmup,
            min: repeat,
            max: repeat,
            target: None,
            max_seconds: f64::INFINITY,
            min_sample_seconds: 0.0,
            abort: None,
            statistic: Statistic::Mean,
        }
    }

    /// The plan from a spec's `[runner.measure]` table over a runner's `defaults`; the
    /// legacy `repeat` key of `[runner]` (`Some`) means a fixed plan and cannot be combined
    /// with the repetition keys of the table. `Err` names the offending key.
    pub fn from_spec(
        spec: Option<&MeasureSpec>,
        legacy_warmup: Option<usize>,
        legacy_repeat: Option<usize>,
        defaults: &Measure,
    ) -> Result<Measure, (&'static str, String)> {
        let empty = MeasureSpec::default();
        let s = spec.unwrap_or(&empty);
        if legacy_warmup.is_some() && s.warmup.is_some() {
            return Err((
                "warmup",
                "given both in [runner] and in [runner.measure]; keep one".into(),
            ));
        }
        let mut m = match legacy_repeat {
            Some(0) => return Err(("repeat", "must be at least 1".into())),
            Some(r) => {
                if s.min.is_some() || s.max.is_some() || s.target.is_some() {
                    return Err((
                        "repeat",
                        "a fixed `repeat` cannot be combined with [runner.measure] min, max or \
                         target; remove `repeat` for adaptive repetition"
                            .into(),
                    ));
                }
                Measure::fixed(defaults.warmup, r)
            }
            None => defaults.clone(),
        };
        if let Some(w) = legacy_warmup.or(s.warmup) {
            m.warmup = w;
        }
        if let Some(v) = s.min {
            m.min = v;
            m.max = m.max.max(v);
        }
        if let Some(v) = s.max {
            m.max = v;
            if s.min.is_none() {
                m.min = m.min.min(v);
            }
        }
        if m.min == 0 {
            return Err(("min", "must be at least 1".into()));
        }
        if m.max < m.min {
            return Err(("max", format!("{} is smaller than min = {}", m.max, m.min)));
        }
        if let Some(t) = s.target {
            if !(t > 0.0 && t < 1.0) {
                return Err((
                    "target",
                    format!("must be a relative half-width between 0 and 1 (0.02 = ±2%), not {t}"),
                ));
            }
            m.target = Some(t);
        }
        if let Some(t) = s.max_seconds {
            if !(t > 0.0 && t <= MAX_SECONDS) {
                return Err((
                    "max_seconds",
                    format!("must be a positive number of seconds up to {MAX_SECONDS}, not {t}"),
                ));
            }
            m.max_seconds = t;
        }
        if let Some(t) = s.min_sample_seconds {
            if !(0.0..=60.0).contains(&t) {
                return Err((
                    "min_sample_seconds",
                    format!("must be between 0 and 60 seconds, not {t}"),
                ));
            }
            m.min_sample_seconds = t;
        }
        match s.abort {
            None => {}
            Some(AbortSpec::Switch(true)) => m.abort = m.abort.or(Some(DEFAULT_ABORT)),
            Some(AbortSpec::Switch(false)) => m.abort = None,
            Some(AbortSpec::Factor(k)) if k > 1.0 && k <= MAX_SECONDS => m.abort = Some(k),
            Some(AbortSpec::Factor(k)) => {
                return Err((
                    "abort",
                    format!("must be a factor above 1 (e.g. 2.0) or false, not {k}"),
                ));
            }
        }
        if let Some(name) = &s.statistic {
            m.statistic = Statistic::from_name(name).ok_or_else(|| {
                (
                    "statistic",
                    format!("`{name}` is not one of mean, median, min"),
                )
            })?;
        }
        Ok(m)
    }

    /// The warm-up runs, and the runs per sample: one, or as many as make a sample last
    /// `min_sample_seconds`. `once(k)` is as for [`Measure::run`].
    pub fn warm_up<E>(
        &self,
        once: &mut impl FnMut(usize) -> Result<(f64, f64), E>,
    ) -> Result<usize, E> {
        let mut runs = 1usize;
        let mut warmup = self.warmup;
        if self.min_sample_seconds > 0.0 {
            // One run tells how long a run lasts; it is a warm-up run (or an extra one). A
            // first run is often slower than the next (cold caches, launch set-up), so when
            // it asks for several runs per sample, a group of that many measures again.
            let (_, seconds) = once(1)?;
            warmup = warmup.saturating_sub(1);
            runs = runs_for(self.min_sample_seconds, seconds);
            if runs > 1 {
                let (_, group) = once(runs)?;
                warmup = warmup.saturating_sub(1);
                runs = runs_for(self.min_sample_seconds, group / runs as f64);
            }
        }
        for _ in 0..warmup {
            once(1)?;
        }
        Ok(runs)
    }

    /// Measures one configuration. `once(k)` runs it `k` times and returns the mean measured
    /// value of those runs and the seconds they took; its error ends the measurement.
    /// `incumbent` is the best value so far, in the unit and `Direction` of the samples, for
    /// early abort.
    pub fn run<E>(
        &self,
        incumbent: Option<(f64, Direction)>,
        mut once: impl FnMut(usize) -> Result<(f64, f64), E>,
    ) -> Result<Samples, E> {
        let runs = self.warm_up(&mut once)?;
        let measuring = Instant::now();
        let mut values = Vec::with_capacity(self.min);
        let mut aborted = false;
        while values.len() < self.max {
            let (v, _) = once(runs)?;
            values.push(v);
            if measuring.elapsed().as_secs_f64() >= self.max_seconds {
                break;
            }
            if values.len() < 2 {
                continue;
            }
            let s = Summary::of(&values, self.statistic);
            if let (Some(k), Some((best, direction))) = (self.abort, incumbent)
                && clearly_worse(&s, best, direction, k)
            {
                aborted = true;
                break;
            }
            if values.len() >= self.min && self.target.is_some_and(|t| s.relative_half_width() <= t)
            {
                break;
            }
        }
        Ok(Samples {
            values,
            runs_per_sample: runs,
            aborted,
            statistic: self.statistic,
        })
    }
}

/// The default early-abort factor.
pub const DEFAULT_ABORT: f64 = 2.0;

/// Runs per sample so that a sample of runs lasting `seconds` each lasts `min_seconds`.
fn runs_for(min_seconds: f64, seconds: f64) -> usize {
    if seconds <= 0.0 || !seconds.is_finite() {
        return MAX_RUNS_PER_SAMPLE;
    }
    ((min_seconds / seconds).ceil() as usize).clamp(1, MAX_RUNS_PER_SAMPLE)
}

/// The whole interval lies beyond `k` times the best (below `best / k` for a maximised one).
fn clearly_worse(s: &Summary, best: f64, direction: Direction, k: f64) -> bool {
    if best.is_nan() || best <= 0.0 {
        return false;
    }
    match direction {
        Direction::Minimize => s.ci_low > k * best,
        Direction::Maximize => s.ci_high < best / k,
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};

    use super::*;

    fn adaptive() -> Measure {
        Measure {
            warmup: 1,
            min: 3,
            max: 200,
            target: Some(0.02),
            max_seconds: 60.0,
            min_sample_seconds: 0.0,
            abort: Some(2.0),
            statistic: Statistic::Mean,
        }
    }

    /// Samples `mean · (1 + jitter·u)` with `u` uniform in [-1, 1).
    fn noisy(mean: f64, jitter: f64, seed: u64) -> impl FnMut(usize) -> Result<(f64, f64), ()> {
        let mut rng = ktune_core::Rng::seed_from_u64(seed);
        move |_| {
            Ok((
                mean * (1.0 + jitter * (rng.random::<f64>() * 2.0 - 1.0)),
                0.0,
            ))
        }
    }

    #[test]
    fn repeats_until_the_target_width_and_no_longer() {
        let m = adaptive();
        for seed in 0..20 {
            let s = m.run(None, noisy(10.0, 0.1, seed)).unwrap();
            let sum = s.summary();
            assert!(sum.relative_half_width() <= 0.02, "{sum:?}");
            // One sample fewer would not have reached it.
            let shorter = Summary::of(&s.values[..s.values.len() - 1], Statistic::Mean);
            assert!(s.values.len() == 3 || shorter.relative_half_width() > 0.02);
            assert!(!s.aborted);
        }
        // Quiet measurements stop at the minimum.
        assert_eq!(m.run(None, noisy(10.0, 0.001, 1)).unwrap().values.len(), 3);
    }

    #[test]
    fn a_fixed_plan_takes_exactly_its_samples() {
        let m = Measure::fixed(2, 7);
        let mut calls = 0;
        let s = m
            .run(Some((1.0, Direction::Minimize)), |_| {
                calls += 1;
                Ok::<_, ()>((100.0 + calls as f64, 0.0))
            })
            .unwrap();
        assert_eq!((s.values.len(), calls), (7, 9));
        assert!(!s.aborted);
    }

    #[test]
    fn aborts_a_configuration_three_times_slower_but_not_one_within_noise() {
        let m = adaptive();
        for seed in 0..20 {
            let slow = m.run(Some((1.0, Direction::Minimize)), noisy(3.0, 0.2, seed));
            let slow = slow.unwrap();
            // Without the abort this noise needs about 120 samples to reach ±2%.
            assert!(slow.aborted && slow.values.len() <= 6, "{slow:?}");
            let close = m.run(Some((1.0, Direction::Minimize)), noisy(1.05, 0.2, seed));
            assert!(!close.unwrap().aborted);
            // Maximised: a third of the best rate is clearly worse.
            let low = m.run(Some((3.0, Direction::Maximize)), noisy(1.0, 0.2, seed));
            assert!(low.unwrap().aborted);
        }
    }

    #[test]
    fn short_runs_are_grouped_into_samples() {
        let m = Measure {
            min_sample_seconds: 0.01,
            ..adaptive()
        };
        let mut asked = Vec::new();
        let s = m
            .run(None, |k| {
                asked.push(k);
                Ok::<_, ()>((1.0, 0.001 * k as f64))
            })
            .unwrap();
        assert_eq!(s.runs_per_sample, 10);
        // The calibration run doubles as the warm-up, a group of 10 checks it; samples then
        // ask for 10 runs each.
        assert_eq!(asked[0], 1);
        assert!(asked[1..].iter().all(|&k| k == 10));
        // A slow first run is corrected by the group: 5 ms first (2 runs per sample, it
        // seems), then 1 ms each (10 runs).
        let mut first = true;
        let mut asked = Vec::new();
        let s = m
            .run(None, |k| {
                asked.push(k);
                let each = if std::mem::take(&mut first) {
                    0.005
                } else {
                    0.001
                };
                Ok::<_, ()>((1.0, each * k as f64))
            })
            .unwrap();
        assert_eq!(s.runs_per_sample, 10);
        assert_eq!(&asked[..3], [1, 2, 10]);
    }

    #[test]
    fn the_time_limit_ends_measuring_with_at_least_one_sample() {
        let m = Measure {
            max_seconds: 1e-9,
            ..adaptive()
        };
        let s = m.run(None, noisy(1.0, 0.5, 3)).unwrap();
        assert_eq!(s.values.len(), 1);
    }

    #[test]
    fn errors_end_the_measurement() {
        let mut n = 0;
        let r = adaptive().run(None, |_| {
            n += 1;
            if n == 3 { Err("crash") } else { Ok((1.0, 0.0)) }
        });
        assert_eq!(r, Err("crash"));
    }

    #[test]
    fn specs_are_checked_once_with_the_key_named() {
        let d = adaptive();
        let spec = |t: &str| toml::from_str::<MeasureSpec>(t).unwrap();
        let m = Measure::from_spec(
            Some(&spec("min = 5\nabort = false\nstatistic = \"median\"")),
            None,
            None,
            &d,
        )
        .unwrap();
        assert_eq!((m.min, m.abort, m.statistic), (5, None, Statistic::Median));
        assert_eq!(
            Measure::from_spec(None, None, Some(7), &d).unwrap(),
            Measure::fixed(1, 7)
        );
        for (text, key) in [
            ("min = 0", "min"),
            ("min = 5\nmax = 3", "max"),
            ("target = 0", "target"),
            ("target = 1.5", "target"),
            ("max_seconds = 1e300", "max_seconds"),
            ("max_seconds = -1", "max_seconds"),
            ("min_sample_seconds = nan", "min_sample_seconds"),
            ("abort = 0.5", "abort"),
            ("statistic = \"avg\"", "statistic"),
        ] {
            let e = Measure::from_spec(Some(&spec(text)), None, None, &d).unwrap_err();
            assert_eq!(e.0, key, "{text}: {e:?}");
        }
        let e = Measure::from_spec(Some(&spec("max = 9")), None, Some(3), &d).unwrap_err();
        assert_eq!(e.0, "repeat");
        assert!(toml::from_str::<MeasureSpec>("repeats = 3").is_err());
        let m = Measure::from_spec(
            Some(&spec("abort = true")),
            None,
            None,
            &Measure::fixed(0, 3),
        );
        assert_eq!(m.unwrap().abort, Some(DEFAULT_ABORT));
    }
}
