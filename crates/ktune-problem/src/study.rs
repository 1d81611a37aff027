//! The one study path: a study opened in its storage, joined by this process under the
//! study's facts, its records read into a session, and run by the loop of
//! [`cooperate`](ktune_core::cooperate) with heartbeats that keep this worker's claims alive.
//!
//! A single `ktune tune` is a study with one worker in an SQLite file; a worker of a shared
//! study is the same with others beside it; Python's `Study` opens the same way and then
//! takes its turns one `ask` at a time.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ktune_core::{
    Budget, Cooperation, CoreError, Joined, Observe, Rng, Runner, Session, SpaceRef, StopReason,
    Storage, Strategy, StudyFacts, Worker,
};
use ktune_store::{DEFAULT_STUDY, Fingerprint, Location, StoreError};
use rand::SeedableRng;

/// Where a study is kept.
#[derive(Clone, Debug, PartialEq)]
pub enum StudyPlace {
    /// The study of one process, in an SQLite file (`ktune tune` without `--storage`): a
    /// study with one worker, its random numbers from the seed as given however often it is
    /// resumed.
    Single(PathBuf),
    /// A study shared by any number of workers.
    Shared {
        /// Its storage.
        location: Location,
        /// Its name there.
        study: String,
    },
}

impl StudyPlace {
    /// The storage.
    pub fn location(&self) -> Location {
        match self {
            StudyPlace::Single(path) => Location::Sqlite(path.clone()),
            StudyPlace::Shared { location, .. } => location.clone(),
        }
    }

    /// The study's name in it.
    pub fn study(&self) -> &str {
        match self {
            StudyPlace::Single(_) => DEFAULT_STUDY,
            StudyPlace::Shared { study, .. } => study,
        }
    }

    /// Opens the study for the problem `fingerprint` (made if new).
    pub fn open(&self, fingerprint: &Fingerprint) -> Result<Box<dyn Storage>, StoreError> {
        self.location().open_study(self.study(), fingerprint)
    }
}

/// How this process takes part in a study.
#[derive(Clone, Debug)]
pub struct Participation {
    /// The device it measures on (default: the runner's, else the CPU model).
    pub device: Option<String>,
    /// Join a study whose workers measured on other hardware.
    pub allow_mixed_hardware: bool,
    /// How long a claim lasts without a heartbeat.
    pub lease: Duration,
    /// Configurations to claim and evaluate at once.
    pub batch: usize,
}

/// A study this process has opened and joined: its session knows every record the study
/// held.
pub struct OpenStudy<'a> {
    /// The session of this process, told the study's records.
    pub session: Session<'a>,
    /// The study's storage.
    pub storage: Box<dyn Storage>,
    /// The study's facts as joined, and what joining noticed.
    pub joined: Joined,
    /// This process as a worker of the study.
    pub worker: Worker,
    /// How many records the study held when it was opened.
    pub resumed: usize,
    /// The priors told to the strategy, and how much of each maps onto the space.
    pub priors: Vec<(ktune_core::PriorFact, ktune_core::MatchReport)>,
    participant: ktune_core::Participant,
    place: StudyPlace,
    fingerprint: Fingerprint,
}

/// What a study needs from the process that opens it, beside where it is.
pub struct Opening<'a> {
    /// The search space.
    pub space: SpaceRef<'a>,
    /// The problem's fingerprint.
    pub fingerprint: Fingerprint,
    /// This process's facts (its budget, strategy, objective, ...).
    pub facts: StudyFacts,
    /// This process's own limits: time and target (the evaluation budget is the study's).
    pub budget: Budget,
    /// An evaluation budget this process stops at even where the study's is larger (the
    /// front end's explicit argument; see [`crate::Plan::cap`]).
    pub cap: Option<usize>,
    /// The strategy.
    pub strategy: Box<dyn Strategy + Send + 'a>,
    /// The seed of this process's random numbers.
    pub seed: u64,
    /// How it takes part.
    pub participation: Participation,
    /// The priors `facts.priors` name, read (a study that recorded priors and is joined
    /// without any reads its own again).
    pub priors: Vec<ktune_core::Prior>,
}

impl StudyPlace {
    /// Opens and joins the study here: the study's facts are checked against this process's
    /// ([`StudyFacts::join`]), the worker is registered (its rank picks its stream of random
    /// numbers in a shared study), the strategy is told the priors (this process's, else the
    /// ones the study recorded, read again and checked unchanged), and the session is told
    /// every record the study holds.
    pub fn join<'a>(&self, opening: Opening<'a>) -> Result<OpenStudy<'a>, CoreError> {
        let mut storage = self.open(&opening.fingerprint)?;
        let resumed = storage.evaluations()?;
        let joined = opening.facts.join(storage.as_mut(), resumed)?;
        let p = &opening.participation;
        let mut worker = Worker::local(p.device.clone());
        if let StudyPlace::Single(_) = self {
            // One process's study has one worker, whichever run of it: a run that was killed
            // left claims that the next run takes as its own, instead of waiting for their
            // leases to run out.
            worker.id = format!("{}:single", worker.host);
        }
        let rank = storage.join(&worker, p.allow_mixed_hardware)?;
        let seed = match self {
            StudyPlace::Single(_) => opening.seed,
            StudyPlace::Shared { .. } => ktune_core::worker_seed(opening.seed, rank),
        };
        // The study's budget, or the cap where it is smaller (`--max-evals 20` stops at 20
        // in all); the study keeps its own for the processes that have more.
        let budget = Budget {
            max_evaluations: match (joined.facts.budget, opening.cap) {
                (Some(study), Some(mine)) => Some(study.min(mine)),
                (study, _) => study,
            },
            ..opening.budget
        };
        let mut session = Session::new(
            opening.space,
            opening.strategy,
            budget,
            joined.facts.direction,
            Rng::seed_from_u64(seed),
        )?;
        if joined.facts.objectives.len() > 1 {
            let directions: Vec<_> = joined
                .facts
                .objectives
                .iter()
                .map(|m| m.direction)
                .collect();
            session.set_objectives(&directions)?;
        }
        if let Some(text) = &joined.facts.goal {
            let goal = ktune_core::pareto::Goal::parse(text, &joined.facts.objectives)
                .map_err(|e| CoreError::Objectives(format!("the study's goal: {e}")))?;
            session.set_goal(&goal)?;
        }
        let priors = if opening.priors.is_empty() && !joined.facts.priors.is_empty() {
            crate::prior::reload_priors(&joined.facts.priors, &joined.facts.objective)
                .map_err(|e| CoreError::Prior(Box::new(e)))?
                .into_iter()
                .map(|p| p.prior)
                .collect()
        } else {
            opening.priors
        };
        let priors = crate::prior::tell_priors(&mut session, &priors, &joined.facts.priors)
            .map_err(|e| CoreError::Prior(Box::new(e)))?;
        let mut participant = ktune_core::Participant::new(Cooperation {
            worker: worker.id.clone(),
            lease: p.lease,
            poll: Duration::from_millis(200),
            batch: p.batch.max(1),
        });
        participant.sync(&mut session, storage.as_mut())?;
        Ok(OpenStudy {
            session,
            storage,
            joined,
            worker,
            resumed,
            priors,
            participant,
            place: self.clone(),
            fingerprint: opening.fingerprint,
        })
    }
}

/// How a study's run ended for this process.
#[derive(Debug)]
pub struct Ended {
    /// Why the loop stopped.
    pub stop: StopReason,
    /// Claims given back at the end (configurations handed out and not measured).
    pub released: usize,
    /// Why heartbeats failed, if they did (the run itself went on).
    pub heartbeat: Option<String>,
}

impl<'a> OpenStudy<'a> {
    /// Where the study is stored.
    pub fn place(&self) -> &StudyPlace {
        &self.place
    }

    /// This process's part in the study: the one study with its storage, the session and
    /// the part of this worker, for a front end that measures by itself (Python's `ask`).
    pub fn parts(
        &mut self,
    ) -> (
        &mut Session<'a>,
        &mut dyn Storage,
        &mut ktune_core::Participant,
    ) {
        (
            &mut self.session,
            self.storage.as_mut(),
            &mut self.participant,
        )
    }

    /// Runs the study with `runner` until it is over for this process, telling `observer`;
    /// heartbeats from a connection of their own keep this worker's claims alive through
    /// long evaluations, and its claims are given back at the end.
    pub fn run(
        &mut self,
        runner: &mut dyn Runner,
        observer: &mut dyn Observe,
    ) -> Result<Ended, CoreError> {
        let beating = Arc::new(AtomicBool::new(true));
        let heart = self.heartbeats(beating.clone());
        let how = self.participant.how.clone();
        let result = ktune_core::cooperate(
            &mut self.session,
            runner,
            self.storage.as_mut(),
            &how,
            observer,
        );
        beating.store(false, Ordering::Relaxed);
        let released = self.storage.release(&self.worker.id);
        let heartbeat = match heart.join() {
            Ok(Err(e)) => Some(e.to_string()),
            Ok(Ok(())) => None,
            Err(_) => Some("the heartbeat thread panicked".into()),
        };
        let stop = result?;
        // Why the last process to stop stopped, for reports (a failure to say so is no reason
        // to fail a run that ended well).
        let _ = self.storage.set_meta("stopped", stop.name());
        Ok(Ended {
            stop,
            released: released?,
            heartbeat,
        })
    }

    /// Renews this worker's claims every third of the lease until `beating` is lowered.
    fn heartbeats(
        &self,
        beating: Arc<AtomicBool>,
    ) -> std::thread::JoinHandle<Result<(), CoreError>> {
        let (place, fingerprint, id) = (
            self.place.clone(),
            self.fingerprint.clone(),
            self.worker.id.clone(),
        );
        let lease = self.participant.how.lease;
        std::thread::spawn(move || -> Result<(), CoreError> {
            let mut storage = place.open(&fingerprint)?;
            let period = lease / 3;
            let mut waited = Duration::ZERO;
            while beating.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                waited += Duration::from_millis(50);
                if waited >= period {
                    waited = Duration::ZERO;
                    storage.heartbeat(&id, lease)?;
                }
            }
            Ok(())
        })
    }
}
