//! The runner extension point: something that evaluates configurations.

use ktune_space::{Configuration, SearchSpace};

use crate::{CoreError, Metric, Outcome};

/// Evaluates configurations: simulation from a recorded cache, external commands, CUDA
/// kernels. A runner only evaluates; it never chooses what to evaluate.
///
/// A configuration that fails returns [`Outcome::Failed`]; `Err` is for a runner that cannot
/// run at all, and ends the tuning run.
pub trait Runner {
    /// A short name for messages.
    fn name(&self) -> &str;

    /// The metrics every successful outcome reports, in order; the first is the objective.
    fn metrics(&self) -> &[Metric];

    /// Evaluates a batch; exactly one outcome per configuration, in order. The configurations
    /// satisfy the space's constraints.
    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError>;
}
