//! One worker of a shared study: a loop over a [`Session`], a [`Runner`] and a [`Storage`].
//!
//! Each round the worker reads the records the other workers made since its last look and
//! tells them to its session; takes over configurations whose worker died (expired claims);
//! otherwise asks its session and claims what it proposes (a configuration another worker
//! holds is given back as held elsewhere, one beyond the study's budget is given back);
//! evaluates what it holds; records each outcome in the storage, then tells the session. The
//! study's budget is enforced by the storage's claims, so any number of workers together
//! measure exactly its evaluations, each configuration once.

use std::time::Duration;

use ktune_space::Configuration;

use crate::runner::evaluate_batch;
use crate::{
    Asked, Claim, CoreError, Observe, Outcome, Record, Recorded, Runner, Session, StopReason,
    Storage,
};

/// How a worker cooperates.
#[derive(Clone, Debug)]
pub struct Cooperation {
    /// This worker's id in the study.
    pub worker: String,
    /// How long a claim lasts without a heartbeat; a worker that dies holds its
    /// configurations this long.
    pub lease: Duration,
    /// How long to wait before looking again when others hold the rest of the budget.
    pub poll: Duration,
    /// Configurations to claim and evaluate at once.
    pub batch: usize,
}

/// What happened to one of this worker's evaluations in the storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// Stored as the study's record with this sequence number.
    Stored(u64),
    /// Another worker recorded it first (it took over this worker's expired claim).
    Duplicate,
    /// The budget was spent by others while this worker's claim had expired.
    OverBudget,
}

/// What a worker does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    /// Measure these configurations: this worker holds their claims.
    Evaluate(Vec<Configuration>),
    /// The rest of the budget is held by other workers: look again after
    /// [`Cooperation::poll`], when their records have come or their claims expired.
    Wait,
    /// The study is over for this worker.
    Stop(StopReason),
}

/// One worker's part in a shared study, one turn at a time, for a caller that measures by
/// itself (the ask/tell `Study` of the Python bindings); [`cooperate`] is the loop over it
/// with a [`Runner`]. It remembers the last record of the study it has seen.
#[derive(Clone, Debug)]
pub struct Participant {
    /// How it cooperates.
    pub how: Cooperation,
    last: Option<u64>,
}

impl Participant {
    /// A worker that has seen nothing of the study yet.
    pub fn new(how: Cooperation) -> Participant {
        Participant { how, last: None }
    }

    /// Tells `session` the records the other workers (and earlier runs) made since the last
    /// look; returns how many were new to it.
    pub fn sync(
        &mut self,
        session: &mut Session<'_>,
        storage: &mut dyn Storage,
    ) -> Result<usize, CoreError> {
        let news = storage.records_since(session.space(), self.last)?;
        if let Some(r) = news.last() {
            self.last = Some(r.seq);
        }
        Ok(session.observe(news.into_iter().map(|r| r.record).collect()))
    }

    /// One turn: reads the others' records, takes over configurations whose worker died
    /// (expired claims), otherwise asks `session` and claims what it proposes (a
    /// configuration another worker holds is given back as held elsewhere, one beyond the
    /// study's budget is given back). Invalid proposals are recorded at once.
    pub fn turn(
        &mut self,
        session: &mut Session<'_>,
        storage: &mut dyn Storage,
        observer: &mut dyn Observe,
    ) -> Result<Turn, CoreError> {
        let budget = session.budget().max_evaluations;
        self.sync(session, storage)?;
        let how = &self.how;
        let mut held: Vec<Configuration> = Vec::new();
        while held.len() < how.batch.max(1) {
            match storage.claim_expired(session.space(), &how.worker, how.lease, budget)? {
                Some(c) if !session.history().contains(&c) => held.push(c),
                Some(_) => {}
                None => break,
            }
        }
        if !held.is_empty() {
            return Ok(Turn::Evaluate(held));
        }
        let asked = session.ask(how.batch)?;
        // A constraint-unaware strategy's invalid proposals are records too.
        for record in session.take_invalid() {
            let kept = keep(storage.record(session.space(), &how.worker, &record, budget)?);
            observer.record(session, &record, kept);
        }
        let asked = match asked {
            Asked::Stop(stop) => return Ok(Turn::Stop(stop)),
            Asked::Evaluate(configs) => configs,
        };
        let mut waiting = false;
        for c in asked {
            match storage.claim(&c, &how.worker, how.lease, budget)? {
                Claim::Granted => held.push(c),
                Claim::Recorded | Claim::Held => {
                    session.abandon(std::slice::from_ref(&c), true);
                }
                Claim::BudgetSpent => {
                    session.abandon(std::slice::from_ref(&c), false);
                    waiting = true;
                }
            }
        }
        Ok(if !held.is_empty() {
            Turn::Evaluate(held)
        } else if waiting {
            Turn::Wait
        } else {
            // Everything proposed was held or recorded elsewhere: the next turn asks again.
            Turn::Evaluate(Vec::new())
        })
    }

    /// Records the outcomes of configurations this worker measured, in the storage (which
    /// settles their claims) and then in `session`; then tells `observer` of each.
    pub fn record(
        &mut self,
        session: &mut Session<'_>,
        storage: &mut dyn Storage,
        results: Vec<(Configuration, Outcome)>,
        observer: &mut dyn Observe,
    ) -> Result<(), CoreError> {
        let budget = session.budget().max_evaluations;
        let mut clock = session.clock();
        let mut made = Vec::with_capacity(results.len());
        for (config, outcome) in results {
            clock += outcome.timings().total();
            let record = Record {
                config,
                outcome,
                clock,
            };
            let kept = keep(storage.record(session.space(), &self.how.worker, &record, budget)?);
            made.push((record, kept));
        }
        session.tell(
            made.iter()
                .map(|(r, _)| (r.config.clone(), r.outcome.clone()))
                .collect(),
        )?;
        for (record, kept) in &made {
            observer.record(session, record, *kept);
        }
        Ok(())
    }
}

/// Runs `session` as one worker of the study in `storage` until the study is over for it:
/// the loop of every study with a storage (a single `ktune tune` is a study with one worker).
/// `observer` is told when it starts (after the study's records were read), of each of this
/// worker's records with what the storage did with it, and why it stopped.
pub fn cooperate(
    session: &mut Session<'_>,
    runner: &mut dyn Runner,
    storage: &mut dyn Storage,
    how: &Cooperation,
    observer: &mut dyn Observe,
) -> Result<StopReason, CoreError> {
    let mut me = Participant::new(how.clone());
    me.sync(session, storage)?;
    observer.start(session);
    let stop = work(&mut me, session, runner, storage, observer)?;
    observer.stop(session, stop);
    Ok(stop)
}

/// The turns of [`cooperate`].
fn work(
    me: &mut Participant,
    session: &mut Session<'_>,
    runner: &mut dyn Runner,
    storage: &mut dyn Storage,
    observer: &mut dyn Observe,
) -> Result<StopReason, CoreError> {
    let how = me.how.clone();
    loop {
        let held = match me.turn(session, storage, observer)? {
            Turn::Stop(stop) => return Ok(stop),
            Turn::Wait => {
                std::thread::sleep(how.poll);
                continue;
            }
            Turn::Evaluate(held) if held.is_empty() => continue,
            Turn::Evaluate(held) => held,
        };
        runner.set_incumbent(session.best_value());
        runner.set_time_left(session.time_left());
        let (outcomes, ended) = evaluate_batch(runner, session.space(), &held)?;
        let done = outcomes.len();
        // Claims on configurations not reached are released by their lease.
        session.abandon(&held[done..], false);
        let results = held.into_iter().zip(outcomes).collect();
        me.record(session, storage, results, observer)?;
        match ended {
            None => {}
            Some(Ok(stop)) => return Ok(stop),
            Some(Err(e)) => return Err(e),
        }
    }
}

fn keep(recorded: Recorded) -> Kept {
    match recorded {
        Recorded::New(seq) => Kept::Stored(seq),
        Recorded::Duplicate(_) => Kept::Duplicate,
        Recorded::OverBudget => Kept::OverBudget,
    }
}
