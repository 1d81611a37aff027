//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while computing statistics, reading or writing traces,
/// scoring or plotting.
///
/// A configuration that fails when run is *not* an error: it is `None` in the values.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum BenchError {
    /// A space has no configuration with a valid objective value, so it has no optimum.
    #[error("space `{space}` has no configuration with a valid objective value")]
    NoValidValue {
        /// Name of the space.
        space: String,
    },
    /// A space's objective value is NaN or infinite (use `None` for a failed configuration).
    #[error("space `{space}`: configuration {index} has a non-finite objective value ({value})")]
    NonFiniteValue {
        /// Name of the space.
        space: String,
        /// Index of the configuration (0-based) in the values given.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Reading or writing a file failed.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the operating system said.
        error: std::io::Error,
    },
    /// A line of a trace file is not a valid trace.
    #[error("{}:{line}:{column}: invalid trace: {message}", path.display())]
    Parse {
        /// The trace file.
        path: PathBuf,
        /// Line number (1-based).
        line: usize,
        /// Column (1-based) where the JSON parser stopped.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A trace names a space that is not among the spaces given.
    #[error("trace for unknown space `{space}` ({tool}/{strategy}, seed {seed})")]
    UnknownSpace {
        /// The space the trace names.
        space: String,
        /// The trace's tool.
        tool: String,
        /// The trace's strategy.
        strategy: String,
        /// The trace's seed.
        seed: i64,
    },
    /// Two spaces given to the scorer have the same name.
    #[error("space `{space}` is given twice")]
    DuplicateSpace {
        /// The repeated name.
        space: String,
    },
    /// Drawing a plot failed.
    #[error("cannot draw {}: {message}", path.display())]
    Plot {
        /// The image being drawn.
        path: PathBuf,
        /// What the plotting library said.
        message: String,
    },
    /// An objective of a two-objective space has its best valid value at its median, so the
    /// box between the ideal point and the reference point is empty.
    #[error(
        "space `{space}`: objective {objective} has its best value at its median (the front has no area to score)"
    )]
    FlatObjective {
        /// Name of the space.
        space: String,
        /// Which objective (0 or 1).
        objective: usize,
    },
    /// No configuration of a two-objective space beats the medians of both objectives (the
    /// reference point), so its Pareto front has no hypervolume to score.
    #[error(
        "space `{space}`: no configuration is better than the median in both objectives, so the front has no hypervolume to score"
    )]
    EmptyFront {
        /// Name of the space.
        space: String,
    },
    /// A direction name other than `minimize` or `maximize`.
    #[error("unknown direction `{0}` (expected `minimize` or `maximize`)")]
    InvalidDirection(String),
}

impl BenchError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        BenchError::Io {
            path: path.into(),
            error,
        }
    }
}
