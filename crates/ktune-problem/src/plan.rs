//! A tuning run's plan: a front end's arguments, the problem file's sections and the
//! defaults resolved once (flags over spec over defaults, as ripgrep's `HiArgs`), so that
//! every front end runs the same study path with the same precedence.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ktune_core::{Budget, StudyFacts};
use ktune_store::Location;
use ktune_strategies::CheckedStrategy;

use crate::prior::{LoadedPrior, PriorLoadError, load_priors};
use crate::{ProblemSpec, StudyPlace};

/// How a front end spells the arguments a plan's errors name (`--time-limit` on the command
/// line, `time_limit` in Python).
#[derive(Clone, Copy, Debug)]
pub struct Spelling {
    /// The evaluation budget.
    pub max_evaluations: &'static str,
    /// The time budget.
    pub time_limit: &'static str,
    /// A one-process results database.
    pub db: &'static str,
    /// A shared study's storage.
    pub storage: &'static str,
    /// A shared study's name.
    pub study: &'static str,
    /// A worker's claim lease.
    pub lease: &'static str,
    /// The device a process measures on.
    pub device: &'static str,
    /// The goal of a study of several objectives.
    pub goal: &'static str,
}

/// The command line's spelling.
pub const COMMAND_LINE: Spelling = Spelling {
    max_evaluations: "--max-evals",
    time_limit: "--time-limit",
    db: "--db",
    storage: "--storage",
    study: "--study",
    lease: "--lease",
    device: "--device",
    goal: "--goal",
};

/// The Python package's spelling.
pub const PYTHON: Spelling = Spelling {
    max_evaluations: "max_evals",
    time_limit: "time_limit",
    db: "db",
    storage: "storage",
    study: "study_name",
    lease: "lease",
    device: "device",
    goal: "goal",
};

/// A front end's arguments, before the problem file and the defaults fill the gaps.
#[derive(Clone, Debug)]
pub struct RunArgs {
    /// The strategy, checked by the front end from its own syntax.
    pub strategy: Option<CheckedStrategy>,
    /// The evaluation budget.
    pub max_evaluations: Option<usize>,
    /// The time budget, in seconds.
    pub max_seconds: Option<f64>,
    /// The seed of this process's random numbers.
    pub seed: u64,
    /// A one-process results database.
    pub db: Option<PathBuf>,
    /// A shared study's storage URL.
    pub storage: Option<String>,
    /// A shared study's name.
    pub study: Option<String>,
    /// Seconds a claim lasts without a heartbeat.
    pub lease: f64,
    /// The device this process measures on, when the front end knows better than the runner.
    pub device: Option<String>,
    /// Join a study whose workers measured on other hardware.
    pub allow_mixed_hardware: bool,
    /// Measure the spec's default configuration first.
    pub measure_default: bool,
    /// The goal a study of several objectives seeks one configuration by (`energy within 5%
    /// of time`); `None`: the spec's `goal`.
    pub goal: Option<String>,
    /// Without a storage, keep the results in `<spec>.db` beside the problem file (the
    /// command line); otherwise only in memory (Python).
    pub database_beside_spec: bool,
    /// The priors, as the front end names them (relative to the working directory); `None`:
    /// the spec's `[transfer]` section's (relative to the spec's folder).
    pub priors: Option<Vec<String>>,
}

impl Default for RunArgs {
    fn default() -> Self {
        RunArgs {
            strategy: None,
            max_evaluations: None,
            max_seconds: None,
            seed: 0,
            db: None,
            storage: None,
            study: None,
            lease: 60.0,
            device: None,
            allow_mixed_hardware: false,
            measure_default: true,
            goal: None,
            database_beside_spec: true,
            priors: None,
        }
    }
}

/// A plan that cannot be made: the message names the arguments as the front end spells them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// Arguments that contradict each other, or one out of range.
    #[error("{0}")]
    Arguments(String),
    /// A budget limit out of range.
    #[error(transparent)]
    Budget(#[from] ktune_core::CoreError),
    /// A storage URL that cannot be used.
    #[error(transparent)]
    Storage(#[from] ktune_store::StoreError),
    /// A prior that cannot be read.
    #[error(transparent)]
    Prior(#[from] PriorLoadError),
}

/// A tuning run resolved: what the study path needs, nothing left to parse.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The strategy.
    pub strategy: CheckedStrategy,
    /// This process's budget (the evaluation budget is the study's once joined).
    pub budget: Budget,
    /// The evaluation budget the front end's argument gave (`--max-evals`, `max_evals=`),
    /// not the spec's: a run stops there even where its study's budget is larger.
    pub cap: Option<usize>,
    /// The seed of this process's random numbers.
    pub seed: u64,
    /// Where the study is kept (`None`: in memory only).
    pub place: Option<StudyPlace>,
    /// How long a claim lasts without a heartbeat.
    pub lease: Duration,
    /// The device this process measures on, when the front end named it.
    pub device: Option<String>,
    /// Join a study whose workers measured on other hardware.
    pub allow_mixed_hardware: bool,
    /// Measure the default configuration first.
    pub measure_default: bool,
    /// The priors, read (none: a study that recorded some uses those when joined).
    pub priors: Vec<LoadedPrior>,
    /// The goal, checked against the spec's objectives (none: a study that recorded one
    /// seeks that when joined).
    pub goal: Option<String>,
}

impl Plan {
    /// Resolves `args` over `problem`'s sections and the defaults, checking each once;
    /// errors name the arguments as `spelling` writes them.
    pub fn resolve(
        problem: &ProblemSpec,
        args: RunArgs,
        spelling: &Spelling,
    ) -> Result<Plan, PlanError> {
        let place = Plan::place(problem, &args, spelling)?;
        if let Some(StudyPlace::Shared { study, .. }) = &place {
            ktune_core::checked_label(study)
                .map_err(|m| PlanError::Arguments(format!("{} {m}", spelling.study)))?;
        }
        if let Some(device) = &args.device {
            ktune_core::checked_label(device)
                .map_err(|m| PlanError::Arguments(format!("{} {m}", spelling.device)))?;
        }
        let strategy = args
            .strategy
            .or_else(|| problem.strategy.clone())
            .unwrap_or_else(CheckedStrategy::default_strategy);
        if let Some(t) = args.max_seconds {
            ktune_core::checked_seconds(t)
                .map_err(|m| PlanError::Arguments(format!("{} {m}", spelling.time_limit)))?;
        }
        // A budget of no evaluation would make a database and then say nothing was measured.
        match (args.max_evaluations, problem.budget.max_evaluations) {
            (Some(0), _) => {
                return Err(PlanError::Arguments(format!(
                    "{} must be at least 1",
                    spelling.max_evaluations
                )));
            }
            (None, Some(0)) => {
                return Err(PlanError::Arguments(
                    "[budget] max_evaluations must be at least 1".into(),
                ));
            }
            _ => {}
        }
        let budget = Budget {
            max_evaluations: args.max_evaluations.or(problem.budget.max_evaluations),
            max_seconds: args.max_seconds.or(problem.budget.max_seconds),
            target: problem.budget.target,
        };
        budget.validate()?;
        let lease = ktune_core::checked_seconds(args.lease)
            .map_err(|m| PlanError::Arguments(format!("{} {m}", spelling.lease)))?;
        let goal = match args.goal {
            Some(text) => {
                crate::spec::checked_goal(&text, &problem.objectives())
                    .map_err(|m| PlanError::Arguments(format!("{} {m}", spelling.goal)))?;
                Some(text)
            }
            None => problem.goal.clone(),
        };
        let objective = problem.objective().map_or("time".to_string(), |m| m.name);
        let priors = match &args.priors {
            Some(given) => load_priors(given, Path::new("."), &objective)?,
            None => load_priors(&problem.transfer.priors, &problem.dir, &objective)?,
        };
        Ok(Plan {
            strategy,
            cap: args.max_evaluations,
            budget,
            seed: args.seed,
            place,
            lease,
            device: args.device,
            allow_mixed_hardware: args.allow_mixed_hardware,
            measure_default: args.measure_default,
            priors,
            goal,
        })
    }

    /// Where the study is kept: a storage named by the arguments or the `[storage]` section,
    /// else a database (the argument's, or beside the file where the front end keeps one).
    fn place(
        problem: &ProblemSpec,
        args: &RunArgs,
        spelling: &Spelling,
    ) -> Result<Option<StudyPlace>, PlanError> {
        let shared = match (&args.storage, &problem.storage) {
            (Some(url), _) => Some(Location::parse(url)?),
            (None, Some(s)) => Some(s.location.clone()),
            (None, None) => None,
        };
        match (shared, &args.db) {
            (Some(_), Some(_)) => Err(PlanError::Arguments(format!(
                "give either {} (one process) or {} (a shared study), not both",
                spelling.db, spelling.storage
            ))),
            (Some(location), None) => Ok(Some(StudyPlace::Shared {
                location,
                study: args.study.clone().unwrap_or_else(|| problem.study_name()),
            })),
            (None, _) if args.study.is_some() => Err(PlanError::Arguments(format!(
                "{} needs {} (e.g. {} sqlite:///scratch/study.db)",
                spelling.study, spelling.storage, spelling.storage
            ))),
            (None, Some(db)) => Ok(Some(StudyPlace::Single(db.clone()))),
            (None, None) if args.database_beside_spec => {
                Ok(Some(StudyPlace::Single(problem.path.with_extension("db"))))
            }
            (None, None) => Ok(None),
        }
    }

    /// Refuses a plan with no limit at all (the command line's rule: a study of a program
    /// without one could run for days); `spelling` names the arguments that set one.
    pub fn require_limit(&self, spelling: &Spelling) -> Result<(), PlanError> {
        let b = &self.budget;
        if b.max_evaluations.is_none() && b.max_seconds.is_none() && b.target.is_none() {
            return Err(PlanError::Arguments(format!(
                "no budget: give {} or {}, or a [budget] section with max_evaluations, max_seconds or target",
                spelling.max_evaluations, spelling.time_limit
            )));
        }
        Ok(())
    }

    /// The facts this process brings to its study, for an objective measured by `problem`'s
    /// runner.
    pub fn facts(&self, problem: &ProblemSpec) -> StudyFacts {
        let objective = problem
            .objective()
            .unwrap_or_else(|| ktune_core::Metric::new("time", ktune_core::Direction::Minimize));
        StudyFacts {
            objective: objective.name,
            direction: objective.direction,
            unit: problem
                .runner
                .as_ref()
                .and_then(|r| r.unit())
                .map(str::to_string),
            budget: self.budget.max_evaluations,
            strategy: self.strategy.canonical().to_string(),
            seed: self.seed,
            priors: self.priors.iter().map(|p| p.fact.clone()).collect(),
            objectives: match problem.objectives() {
                several if several.len() > 1 => several,
                _ => Vec::new(),
            },
            goal: self.goal.clone(),
        }
    }
}
