//! Errors returned by the models in this crate.

/// Everything that can go wrong when building or updating a model.
///
/// Models never panic on bad input; they return one of these instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A point, a candidate set or a hyperparameter vector has the wrong dimension.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// What was being checked (e.g. `"training point 3"`).
        what: String,
        /// The dimension that was expected.
        expected: usize,
        /// The dimension that was found.
        got: usize,
    },
    /// Two inputs that must have the same length do not (e.g. `x` and `y`).
    #[error("length mismatch: {what}")]
    LengthMismatch {
        /// Description of the two lengths.
        what: String,
    },
    /// A candidate index is not smaller than the number of candidates.
    #[error("candidate index {index} out of range (there are {len} candidates)")]
    IndexOutOfRange {
        /// The index that was passed.
        index: usize,
        /// The number of candidates.
        len: usize,
    },
    /// A candidate was observed a second time.
    #[error("candidate {index} has already been observed")]
    AlreadyObserved {
        /// The candidate index.
        index: usize,
    },
    /// An observed value or a coordinate is NaN or infinite.
    #[error("non-finite value in {what}: {value}")]
    NonFinite {
        /// Where the value was found.
        what: String,
        /// The offending value.
        value: f64,
    },
    /// A hyperparameter is out of its valid range.
    #[error("invalid hyperparameter {name} = {value}: {reason}")]
    InvalidHyperparameter {
        /// Name of the hyperparameter (`"lengthscale"`, `"output_scale"`, `"noise"`).
        name: &'static str,
        /// The offending value.
        value: f64,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// The model cannot do what was asked of it (e.g. replace its kernel).
    #[error("this model cannot {what}")]
    Unsupported {
        /// What was asked.
        what: &'static str,
    },
    /// The covariance matrix could not be made positive definite, even after adding
    /// the largest jitter that is tried.
    #[error(
        "covariance not positive definite at observation {row}: \
         pivot {pivot:e} after adding jitter up to {max_jitter:e}"
    )]
    NotPositiveDefinite {
        /// Row (observation number, 0-based) at which the factorisation failed.
        row: usize,
        /// The last (non-positive or non-finite) pivot that was computed (NaN if unknown).
        pivot: f64,
        /// The largest jitter that was added to the diagonal.
        max_jitter: f64,
    },
}
