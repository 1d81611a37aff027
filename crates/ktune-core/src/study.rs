//! What a study is, stored with it, and the one rule by which a process joins it.
//!
//! A study's facts (its objective and direction, the unit of the objective, the evaluation
//! budget, the strategy and the seed it was started with) are kept in its storage's metadata
//! by the first process that writes them: a `ktune tune` run, a worker of a shared study, a
//! Python `Study`. Every later process joins by the same rule ([`StudyFacts::join`]):
//!
//! - **the first writer wins**: a fact the study holds stays as it is;
//! - **another objective or direction is refused**, naming both (results measured for one
//!   objective cannot steer the search for another), and so are other objectives for a
//!   study of several (their names and directions, in order);
//! - **another budget or strategy is a note** naming both ([`JoinNote`]): the process works
//!   to the study's budget and runs its own strategy;
//! - a study whose budget is **spent** takes a larger one: that is how a finished study is
//!   resumed for more (`ktune tune --max-evals 200` after 100 evaluations), by one process or
//!   by many;
//! - the seed recorded is the first writer's; each process draws its random numbers from
//!   its own seed and the order it joined in ([`worker_seed`](crate::worker_seed));
//! - the **goal** recorded (a study of several objectives that seeks one configuration, e.g.
//!   "energy within 5% of time") is the first writer's: a process that brings none takes the
//!   study's, so a resumed study seeks the same; one that brings another seeks its own, with a
//!   note naming both;
//! - the **priors** recorded are the first writer's ([`PriorFact`]: where each came from and
//!   the fingerprint of what it held): a process that brings none takes the study's, so a
//!   resumed study uses the same ones; a process that brings others uses its own, with a
//!   note naming both.
//!
//! A time limit and a target value are the process's own, never the study's.

use crate::{CoreError, Direction, Storage};

/// The metadata key of the objective's name.
pub const OBJECTIVE_KEY: &str = "objective";
/// The metadata key of the objective's direction (`minimize` or `maximize`).
pub const DIRECTION_KEY: &str = "direction";
/// The metadata key of the objective's unit (`ms`, `s`, `GFLOP/s`), where known.
pub const UNIT_KEY: &str = "unit";
/// The metadata key of the study's evaluation budget.
pub const BUDGET_KEY: &str = "max_evaluations";
/// The metadata key of the strategy the study was started with (its canonical text).
pub const STRATEGY_KEY: &str = "strategy";
/// The metadata key of the seed the study was started with.
pub const SEED_KEY: &str = "seed";
/// The metadata key of the priors the study was started with (a JSON list of [`PriorFact`]).
pub const PRIORS_KEY: &str = "priors";
/// The metadata key of a study's objectives where it has several (a JSON list of
/// [`Metric`](crate::Metric)s, the first the `objective`); absent with one.
pub const OBJECTIVES_KEY: &str = "objectives";
/// The metadata key of the goal a study of several objectives seeks one configuration by
/// (its text, e.g. `energy within 5% of time`); absent without one.
pub const GOAL_KEY: &str = "goal";

/// A prior as a study records it: enough to find it again and to tell whether it changed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PriorFact {
    /// Where it came from: a file's absolute path, or a storage (its password left out) and
    /// study as `URL#study`.
    pub source: String,
    /// A digest of what it held (its parameters and every measurement), whatever its format.
    pub fingerprint: String,
    /// How many measurements it held.
    pub measurements: usize,
}

impl std::fmt::Display for PriorFact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({} measurements, {})",
            self.source, self.measurements, self.fingerprint
        )
    }
}

/// A study's facts, as a process means them (before joining) or as the study holds them
/// (after).
#[derive(Clone, Debug, PartialEq)]
pub struct StudyFacts {
    /// The objective's name (`time`, `GFLOP/s`).
    pub objective: String,
    /// Whether it is minimised or maximised.
    pub direction: Direction,
    /// Its unit, where known.
    pub unit: Option<String>,
    /// The most evaluations, all workers and runs together (`None`: no limit).
    pub budget: Option<usize>,
    /// The strategy, as its canonical text (`bayes_opt:feasibility=true`).
    pub strategy: String,
    /// The seed of the random numbers.
    pub seed: u64,
    /// The priors, in order (empty: none).
    pub priors: Vec<PriorFact>,
    /// Where the study has several objectives, all of them in order, the first being
    /// `objective` with `direction` (empty: one objective).
    pub objectives: Vec<crate::Metric>,
    /// The goal the study seeks one configuration of its objectives by (its text, read by
    /// [`Goal::parse`](crate::pareto::Goal::parse)); `None`: the first objective, or the
    /// whole front with a strategy of several.
    pub goal: Option<String>,
}

/// Something joining a study noticed, for the front end to say (the process goes on).
#[derive(Clone, Debug, PartialEq)]
pub enum JoinNote {
    /// The study has another budget: this process works to the study's (or to the front
    /// end's explicit cap, which the front end says), and the study keeps its own.
    Budget {
        /// The study's name.
        study: String,
        /// The study's budget, in evaluations.
        kept: usize,
        /// The budget this process asked for.
        ignored: usize,
    },
    /// The study's budget was spent and this process asked for more: it was raised.
    BudgetRaised {
        /// The study's name.
        study: String,
        /// The budget that was spent.
        from: usize,
        /// The study's budget now.
        to: usize,
    },
    /// The study was started with another strategy: this process runs its own.
    Strategy {
        /// The study's name.
        study: String,
        /// The strategy the study was started with.
        started: String,
        /// The strategy this process runs.
        runs: String,
    },
    /// The study was started seeking another goal: this process seeks its own.
    Goal {
        /// The study's name.
        study: String,
        /// The goal the study was started with.
        started: String,
        /// The goal this process seeks.
        seeks: String,
    },
    /// The study was started with other priors: this process uses its own.
    Priors {
        /// The study's name.
        study: String,
        /// The priors the study was started with.
        started: Vec<PriorFact>,
        /// The priors this process uses.
        uses: Vec<PriorFact>,
    },
}

fn prior_list(priors: &[PriorFact]) -> String {
    if priors.is_empty() {
        return "none".into();
    }
    priors
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl std::fmt::Display for JoinNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JoinNote::Budget {
                study,
                kept,
                ignored,
            } => write!(
                f,
                "study `{study}` has a budget of {kept} evaluations; this process's {ignored} is \
                 ignored (a study keeps its first budget until it is spent)"
            ),
            JoinNote::BudgetRaised { study, from, to } => write!(
                f,
                "study `{study}`: its budget of {from} evaluations was spent; it is now {to}"
            ),
            JoinNote::Strategy {
                study,
                started,
                runs,
            } => write!(
                f,
                "study `{study}` was started with strategy {started}; this process runs {runs}"
            ),
            JoinNote::Goal {
                study,
                started,
                seeks,
            } => write!(
                f,
                "study `{study}` was started seeking `{started}`; this process seeks `{seeks}`"
            ),
            JoinNote::Priors {
                study,
                started,
                uses,
            } => write!(
                f,
                "study `{study}` was started with priors {}; this process uses {}",
                prior_list(started),
                prior_list(uses)
            ),
        }
    }
}

/// A study as this process joined it.
#[derive(Clone, Debug, PartialEq)]
pub struct Joined {
    /// The study's facts (the budget is the one to work to).
    pub facts: StudyFacts,
    /// What joining noticed.
    pub notes: Vec<JoinNote>,
}

impl StudyFacts {
    /// Joins the study open in `storage`, which holds `evaluations` already, with these
    /// facts (see the module for the rule): stores every fact the study does not
    /// hold yet (atomically, so that of two processes joining at once one is first), refuses
    /// another objective or direction, and notes another budget or strategy.
    pub fn join(&self, storage: &mut dyn Storage, evaluations: usize) -> Result<Joined, CoreError> {
        let study = storage.study().to_string();
        let objective = storage.meta_or_insert(OBJECTIVE_KEY, &self.objective)?;
        if objective != self.objective {
            return Err(CoreError::Conflict {
                study,
                fact: "objective",
                stored: objective,
                given: self.objective.clone(),
            });
        }
        let direction = storage.meta_or_insert(DIRECTION_KEY, self.direction.name())?;
        if direction != self.direction.name() {
            return Err(CoreError::Conflict {
                study,
                fact: "direction",
                stored: direction,
                given: self.direction.name().to_string(),
            });
        }
        let objectives = self.join_objectives(storage, &study)?;
        let unit = match &self.unit {
            Some(u) => Some(storage.meta_or_insert(UNIT_KEY, u)?),
            None => storage.meta(UNIT_KEY)?,
        };
        let seed = storage.meta_or_insert(SEED_KEY, &self.seed.to_string())?;
        let mut notes = Vec::new();
        let strategy = storage.meta_or_insert(STRATEGY_KEY, &self.strategy)?;
        if strategy != self.strategy {
            notes.push(JoinNote::Strategy {
                study: study.clone(),
                started: strategy.clone(),
                runs: self.strategy.clone(),
            });
        }
        let priors = self.join_priors(storage, &study, &mut notes)?;
        let goal = match &self.goal {
            Some(mine) => {
                let started = storage.meta_or_insert(GOAL_KEY, mine)?;
                if &started != mine {
                    notes.push(JoinNote::Goal {
                        study: study.clone(),
                        started,
                        seeks: mine.clone(),
                    });
                }
                Some(mine.clone())
            }
            None => storage.meta(GOAL_KEY)?,
        };
        let stored = match self.budget {
            Some(mine) => Some(storage.meta_or_insert(BUDGET_KEY, &mine.to_string())?),
            None => storage.meta(BUDGET_KEY)?,
        };
        let kept = stored.as_deref().and_then(|b| b.parse::<usize>().ok());
        let budget = match (kept, self.budget) {
            (Some(kept), Some(mine)) if kept != mine => {
                if evaluations >= kept && mine > kept {
                    storage.set_meta(BUDGET_KEY, &mine.to_string())?;
                    notes.push(JoinNote::BudgetRaised {
                        study: study.clone(),
                        from: kept,
                        to: mine,
                    });
                    Some(mine)
                } else {
                    notes.push(JoinNote::Budget {
                        study: study.clone(),
                        kept,
                        ignored: mine,
                    });
                    Some(kept)
                }
            }
            (Some(kept), _) => Some(kept),
            (None, mine) => mine,
        };
        Ok(Joined {
            facts: StudyFacts {
                objective,
                direction: self.direction,
                unit,
                budget,
                strategy,
                seed: seed.parse().unwrap_or(self.seed),
                priors,
                objectives,
                goal,
            },
            notes,
        })
    }

    /// The objectives: this process's, which must be the study's (a study of one objective
    /// records none and is joined by processes of one).
    fn join_objectives(
        &self,
        storage: &mut dyn Storage,
        study: &str,
    ) -> Result<Vec<crate::Metric>, CoreError> {
        let names = |list: &[crate::Metric]| {
            list.iter()
                .map(|m| format!("{} ({})", m.name, m.direction.name()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let stored = if self.objectives.len() > 1 {
            let mine = serde_json::to_string(&self.objectives).expect("metrics serialise");
            Some(storage.meta_or_insert(OBJECTIVES_KEY, &mine)?)
        } else {
            storage.meta(OBJECTIVES_KEY)?
        };
        let Some(stored) = stored else {
            return Ok(Vec::new());
        };
        let held: Vec<crate::Metric> = serde_json::from_str(&stored).map_err(|e| {
            CoreError::Storage(
                format!("study `{study}`: its recorded objectives cannot be read ({e})").into(),
            )
        })?;
        let mine: &[crate::Metric] = if self.objectives.len() > 1 {
            &self.objectives
        } else {
            &[]
        };
        if held != mine {
            let given = match mine {
                [] => format!("{} ({}) alone", self.objective, self.direction.name()),
                m => names(m),
            };
            return Err(CoreError::Conflict {
                study: study.to_string(),
                fact: "objectives",
                stored: names(&held),
                given,
            });
        }
        Ok(held)
    }

    /// The priors to use: this process's where it brings any (noted where the study was
    /// started with others), else the study's.
    fn join_priors(
        &self,
        storage: &mut dyn Storage,
        study: &str,
        notes: &mut Vec<JoinNote>,
    ) -> Result<Vec<PriorFact>, CoreError> {
        let mine = serde_json::to_string(&self.priors).expect("prior facts serialise");
        let stored = if self.priors.is_empty() {
            storage.meta(PRIORS_KEY)?
        } else {
            Some(storage.meta_or_insert(PRIORS_KEY, &mine)?)
        };
        let Some(stored) = stored else {
            return Ok(Vec::new());
        };
        let started: Vec<PriorFact> = serde_json::from_str(&stored).map_err(|e| {
            CoreError::Storage(
                format!("study `{study}`: its recorded priors cannot be read ({e})").into(),
            )
        })?;
        if self.priors.is_empty() {
            return Ok(started);
        }
        if started != self.priors {
            notes.push(JoinNote::Priors {
                study: study.to_string(),
                started,
                uses: self.priors.clone(),
            });
        }
        Ok(self.priors.clone())
    }
}
