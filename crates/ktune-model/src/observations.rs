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

/// The checks of training data every model makes: measurement variances (when `extra` has
/// any) and values as many as the points, points of one dimension, finite points and
/// values. The dimension (0 for no points).
pub(crate) fn check_training(
    x: &[Vec<f64>],
    y: &[f64],
    extra: &[f64],
) -> Result<usize, ModelError> {
    if !extra.is_empty() {
        check_variances(extra, y.len())?;
    }
    if x.len() != y.len() {
        return Err(ModelError::LengthMismatch {
            what: format!("{} points but {} values", x.len(), y.len()),
        });
    }
    let dims = check_rows(x, "training point")?;
    if let Some((i, &v)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(ModelError::NonFinite {
            what: format!("observed value {i}"),
            value: v,
        });
    }
    Ok(dims)
}

/// The dimension of the rows of `x` (0 for none), checked to be the same for every row and
/// finite; errors call a row `row` (e.g. "training point 3").
pub(crate) fn check_rows(x: &[Vec<f64>], row: &str) -> Result<usize, ModelError> {
    let dims = x.first().map_or(0, Vec::len);
    for (i, p) in x.iter().enumerate() {
        if p.len() != dims {
            return Err(ModelError::DimensionMismatch {
                what: format!("{row} {i}"),
                expected: dims,
                got: p.len(),
            });
        }
        if let Some(&v) = p.iter().find(|v| !v.is_finite()) {
            return Err(ModelError::NonFinite {
                what: format!("{row} {i}"),
                value: v,
            });
        }
    }
    Ok(dims)
}
