//! A problem file opened for running: read and checked, its space built (with progress), its
//! runner opened. `ktune tune` and `ktune results --rerank` start here.

use std::path::Path;

use anyhow::Result;
use ktune_problem::{OpenedRunner, ProblemSpec};
use ktune_space::SearchSpace;

/// Reads the spec at `spec_path` (every section typed and checked, see [`ProblemSpec`]).
pub(crate) fn read_spec(spec_path: &Path) -> Result<ProblemSpec> {
    let problem = ProblemSpec::from_path(spec_path)?;
    for w in &problem.space.warnings {
        note!("warning: {w}");
    }
    Ok(problem)
}

/// Builds the problem's space (showing progress when it takes a while) and opens its runner;
/// `verbose` says what the runner measures on.
pub(crate) fn open_spec(
    problem: &ProblemSpec,
    verbose: bool,
    max_checks: f64,
) -> Result<(SearchSpace, OpenedRunner)> {
    let space = crate::space::build_with_progress(&problem.space, max_checks)?;
    let runner = problem.open_runner(&space)?;
    if verbose && let Some(d) = &runner.description {
        note!("ktune tune: {d}");
    }
    Ok((space, runner))
}
