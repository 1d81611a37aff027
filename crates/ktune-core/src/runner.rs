//! The runner extension point: something that evaluates configurations.

use ktune_space::{Configuration, SearchSpace};

use crate::{CoreError, Metric, Outcome, StopReason};

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

    /// The best objective value measured so far (in the objective's units and direction),
    /// given before every [`evaluate`](Runner::evaluate). A runner that repeats its
    /// measurements may stop repeating a configuration that is clearly worse than it.
    fn set_incumbent(&mut self, best: Option<f64>) {
        let _ = best;
    }

    /// The seconds left of the time budget (none: no time limit), given before every
    /// [`evaluate`](Runner::evaluate). A runner that can should end the evaluation in flight
    /// when they run out (recorded as a timeout), and return
    /// [`CoreError::OutOfTime`](crate::CoreError::OutOfTime) with the outcomes of the
    /// configurations it finished instead of starting more; by default the budget is only
    /// checked between batches.
    fn set_time_left(&mut self, seconds: Option<f64>) {
        let _ = seconds;
    }

    /// The device it measures on (a GPU's name), where it knows: shared studies record it
    /// with every result and refuse workers on other hardware. `None` (the default) lets
    /// the worker name the CPU.
    fn device(&self) -> Option<String> {
        None
    }

    /// Warnings about the run so far that the user should see at its end (e.g. a GPU clock
    /// that varied while measuring); none by default.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// Measures `configs` again, interleaved (`A B C A B C ...`, `rounds` times), so that
    /// drift of the machine hits all of them alike: one outcome per configuration, in order,
    /// a successful one with the new [`Samples`](crate::Samples). Runners that cannot measure
    /// again (a simulation from recorded data) refuse.
    fn remeasure(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
        rounds: usize,
    ) -> Result<Vec<Outcome>, CoreError> {
        let _ = (space, configs, rounds);
        Err(CoreError::Runner {
            runner: self.name().to_string(),
            message: "this runner cannot measure configurations again".into(),
        })
    }
}
/// The outcomes of a batch, and how the run must end when the runner could not finish it.
pub(crate) type Evaluated = (Vec<Outcome>, Option<Result<StopReason, CoreError>>);

/// Evaluates `batch` with `runner`, turning its two partial endings into outcomes plus an
/// ending: out of time (the outcomes it finished, then stop for [`StopReason::Time`]) and a
/// stopped runner (the outcomes it finished, then the error). The outcomes are for the
/// batch's first configurations, in order; any other error, or a count that does not match,
/// ends the run at once.
pub(crate) fn evaluate_batch(
    runner: &mut dyn Runner,
    space: &SearchSpace,
    batch: &[Configuration],
) -> Result<Evaluated, CoreError> {
    match runner.evaluate(space, batch) {
        Ok(outcomes) if outcomes.len() == batch.len() => Ok((outcomes, None)),
        Ok(outcomes) => Err(CoreError::OutcomeCount {
            runner: runner.name().to_string(),
            expected: batch.len(),
            got: outcomes.len(),
        }),
        Err(CoreError::OutOfTime { outcomes }) if outcomes.len() <= batch.len() => {
            Ok((outcomes, Some(Ok(StopReason::Time))))
        }
        Err(CoreError::RunnerStopped {
            runner,
            message,
            outcomes,
        }) if outcomes.len() < batch.len() => {
            Ok((outcomes, Some(Err(CoreError::Runner { runner, message }))))
        }
        Err(e) => Err(e),
    }
}
