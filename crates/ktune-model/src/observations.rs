//! The observations a model keeps (points, values, per-observation measurement variances)
//! and the checks every model applies to them, in one place.

use crate::error::ModelError;

/// Observed points and values, and each value's known measurement variance (empty while
/// none is known).
#[derive(Clone, Debug, Default)]
pub(crate) struct Observations {
    pub(crate) x: Vec<Vec<f64>>,
    pub(crate) y: Vec<f64>,
    pub(crate) noise: Vec<f64>,
}

impl Observations {
    /// Adds one observation (a finite value, a point of the dimension of the others).
    pub(crate) fn push(&mut self, point: &[f64], y: f64) -> Result<(), ModelError> {
        if !y.is_finite() {
            return Err(ModelError::NonFinite {
                what: "observed value".into(),
                value: y,
            });
        }
        if let Some(first) = self.x.first()
            && first.len() != point.len()
        {
            return Err(ModelError::DimensionMismatch {
                what: "observed point".into(),
                expected: first.len(),
                got: point.len(),
            });
        }
        self.x.push(point.to_vec());
        self.y.push(y);
        if !self.noise.is_empty() {
            self.noise.push(0.0);
        }
        Ok(())
    }

    /// Keeps the first `len` observations.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.x.truncate(len);
        self.y.truncate(len);
        self.noise.truncate(len);
    }

    /// Replaces the values, one per observation; unchanged on error.
    pub(crate) fn replace_values(&mut self, ys: &[f64]) -> Result<(), ModelError> {
        if ys.len() != self.y.len() {
            return Err(ModelError::LengthMismatch {
                what: format!("{} new values for {} observations", ys.len(), self.y.len()),
            });
        }
        if let Some((i, &v)) = ys.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(ModelError::NonFinite {
                what: format!("new value {i}"),
                value: v,
            });
        }
        self.y.copy_from_slice(ys);
        Ok(())
    }

    /// Sets the measurement variances, one per observation (all zero: none); unchanged on
    /// error.
    pub(crate) fn set_noise(&mut self, variances: &[f64]) -> Result<(), ModelError> {
        check_variances(variances, self.y.len())?;
        self.noise = if variances.iter().all(|&v| v == 0.0) {
            Vec::new()
        } else {
            variances.to_vec()
        };
        Ok(())
    }
}

/// Measurement variances come one per observation, finite and not negative.
pub(crate) fn check_variances(variances: &[f64], observations: usize) -> Result<(), ModelError> {
    if variances.len() != observations {
        return Err(ModelError::LengthMismatch {
            what: format!(
                "{} measurement variances for {observations} observations",
                variances.len()
            ),
        });
    }
    match variances.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
        Some(&v) => Err(ModelError::NonFinite {
            what: "measurement variance".into(),
            value: v,
        }),
        None => Ok(()),
    }
}
