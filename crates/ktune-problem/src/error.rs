//! What can be wrong with a problem description.

use std::path::PathBuf;

use ktune_space::SpaceError;
use ktune_store::StoreError;
use ktune_strategies::StrategyError;

/// A problem description could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProblemError {
    /// The file cannot be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The search space (parameters, constraints) or the TOML itself is wrong.
    #[error(transparent)]
    Space(#[from] SpaceError),
    /// A section has an unknown key or a value of the wrong type.
    #[error("the [{section}] section of `{file}`: {message}")]
    Section {
        /// `runner`, `budget`, ...
        section: &'static str,
        /// The file.
        file: String,
        /// What serde or the check said.
        message: String,
    },
    /// The `[strategy]` section names no strategy or a wrong option.
    #[error("the [strategy] section of `{file}`: {source}")]
    Strategy {
        /// The file.
        file: String,
        /// What is wrong.
        source: StrategyError,
    },
    /// The `[storage]` URL cannot be used.
    #[error("the [storage] section of `{file}`: {source}")]
    Storage {
        /// The file.
        file: String,
        /// What is wrong.
        source: Box<StoreError>,
    },
    /// The file has no `[runner]` section, and a runner is needed.
    #[error("`{file}` has no [runner] section: say how to compile and run a configuration")]
    NoRunner {
        /// The file.
        file: String,
    },
    /// The runner cannot be opened (a compiler or driver missing, a source that does not
    /// exist, a section the runner refuses).
    #[error("{}{source}", section.as_ref().map_or(String::new(), |f| format!("the [runner] section of `{f}`: ")))]
    Runner {
        /// The file, when the section is at fault.
        section: Option<String>,
        /// What the runner said.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
