//! Observed values as a Bayesian strategy's surrogate fits them: on a logarithmic scale while
//! every value has the same sign (run times spread over orders of magnitude, and a few very
//! slow configurations would otherwise dominate the standardised targets), else as observed.

/// The values told so far and the scale the model sees them on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Targets {
    log: bool,
    raw: Vec<f64>,
    /// Each value's measurement variance, as observed (0 when measured once).
    variances: Vec<f64>,
}

/// What adding a value did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Added {
    /// The value as the model should fit it.
    Fit(f64),
    /// The value broke the log scale (a sign change, or 0): every value is now fitted as
    /// observed; refit the model on [`Targets::fitted`] (which includes the new value last).
    Refit,
}

impl Targets {
    /// Targets on the log scale when `log`, else as observed.
    pub fn new(log: bool) -> Targets {
        Targets {
            log,
            raw: Vec::new(),
            variances: Vec::new(),
        }
    }

    /// Whether values are on the log scale now.
    pub fn is_log(&self) -> bool {
        self.log
    }

    /// The values as observed, in order.
    pub fn raw(&self) -> &[f64] {
        &self.raw
    }

    /// Adds an observed value.
    pub fn add(&mut self, value: f64) -> Added {
        let breaks =
            self.log && (value == 0.0 || self.raw.first().is_some_and(|&v0| !same_sign(v0, value)));
        self.raw.push(value);
        self.variances.push(0.0);
        if breaks {
            self.log = false;
            Added::Refit
        } else {
            Added::Fit(self.to_model(value))
        }
    }

    /// Removes the last value added (when the model could not take it).
    pub fn pop(&mut self) {
        self.raw.pop();
        self.variances.pop();
    }

    /// Every value as the model should fit it, in order.
    pub fn fitted(&self) -> Vec<f64> {
        self.raw.iter().map(|&v| self.to_model(v)).collect()
    }

    /// Sets the measurement variance of the last value added (none, or not positive and
    /// finite: measured once) and returns every value's variance on the model's scale once
    /// any is known, for [`Surrogate::set_noise`](ktune_model::Surrogate::set_noise). On the
    /// log scale a variance is divided by the value's square (the delta method:
    /// d ln|v| = dv / |v|).
    pub fn set_last_variance(&mut self, variance: Option<f64>) -> Option<Vec<f64>> {
        if let Some(last) = self.variances.last_mut() {
            *last = variance
                .filter(|v| v.is_finite() && *v > 0.0)
                .unwrap_or(0.0);
        }
        self.model_variances()
    }

    /// Every value's variance on the model's scale, once any is known (see
    /// [`set_last_variance`](Targets::set_last_variance)).
    pub fn model_variances(&self) -> Option<Vec<f64>> {
        self.variances.iter().any(|&v| v > 0.0).then(|| {
            self.variances
                .iter()
                .zip(&self.raw)
                .map(|(&var, &raw)| if self.log { var / (raw * raw) } else { var })
                .collect()
        })
    }

    /// A value on the model's scale.
    pub fn to_model(&self, v: f64) -> f64 {
        if !self.log {
            v
        } else if v > 0.0 {
            v.ln()
        } else {
            -(-v).ln()
        }
    }
}

fn same_sign(a: f64, b: f64) -> bool {
    a > 0.0 && b > 0.0 || a < 0.0 && b < 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scale_until_the_signs_mix() {
        let mut t = Targets::new(true);
        assert_eq!(t.add(std::f64::consts::E), Added::Fit(1.0));
        assert_eq!(t.add(1.0), Added::Fit(0.0));
        assert_eq!(t.add(-2.0), Added::Refit);
        assert!(!t.is_log());
        assert_eq!(t.fitted(), vec![std::f64::consts::E, 1.0, -2.0]);
        // Negative values (a maximised objective) are fine on their own.
        let mut t = Targets::new(true);
        assert_eq!(t.add(-std::f64::consts::E), Added::Fit(-1.0));
        assert_eq!(t.add(0.0), Added::Refit);
        let mut t = Targets::new(false);
        assert_eq!(t.add(3.0), Added::Fit(3.0));
        t.pop();
        assert!(t.raw().is_empty());
    }

    #[test]
    fn variances_on_the_models_scale() {
        let mut t = Targets::new(true);
        t.add(2.0);
        assert_eq!(t.set_last_variance(None), None, "nothing known yet");
        t.add(4.0);
        assert_eq!(t.set_last_variance(Some(f64::NAN)), None);
        t.add(10.0);
        assert_eq!(t.set_last_variance(Some(1.0)), Some(vec![0.0, 0.0, 0.01]));
        t.pop();
        t.add(-1.0);
        assert_eq!(t.set_last_variance(Some(3.0)), Some(vec![0.0, 0.0, 3.0]));
    }
}
