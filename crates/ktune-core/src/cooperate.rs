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
use crate::{Asked, Claim, CoreError, Record, Recorded, Runner, Session, StopReason, Storage};

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

/// Runs `session` as one worker of the study in `storage` until the study is over for it.
/// `on_record` sees each of this worker's records with what the storage did with it.
pub fn cooperate(
    session: &mut Session<'_>,
    runner: &mut dyn Runner,
    storage: &mut dyn Storage,
    how: &Cooperation,
    on_record: &mut dyn FnMut(&Record, Kept),
) -> Result<StopReason, CoreError> {
    let budget = session.budget().max_evaluations;
    let mut last: Option<u64> = None;
    loop {
        let news = storage.records_since(session.space(), last)?;
        if let Some(r) = news.last() {
            last = Some(r.seq);
        }
        session.observe(news.into_iter().map(|r| r.record).collect());

        let mut held: Vec<Configuration> = Vec::new();
        while held.len() < how.batch.max(1) {
            match storage.claim_expired(session.space(), &how.worker, how.lease, budget)? {
                Some(c) if !session.history().contains(&c) => held.push(c),
                Some(_) => {}
                None => break,
            }
        }
        let mut waiting = false;
        if held.is_empty() {
            let asked = session.ask(how.batch)?;
            // A constraint-unaware strategy's invalid proposals are records too.
            for record in session.take_invalid() {
                let kept = keep(storage.record(session.space(), &how.worker, &record, budget)?);
                on_record(&record, kept);
            }
            let asked = match asked {
                Asked::Stop(stop) => return Ok(stop),
                Asked::Evaluate(configs) => configs,
            };
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
        }
        if held.is_empty() {
            if waiting {
                // The rest of the budget is held by other workers: wait for their records,
                // or for their claims to expire.
                std::thread::sleep(how.poll);
            }
            continue;
        }

        runner.set_incumbent(session.best_value());
        runner.set_time_left(session.time_left());
        let (outcomes, ended) = evaluate_batch(runner, session.space(), &held)?;
        let done = outcomes.len();
        // Claims on configurations not reached are released by their lease.
        session.abandon(&held[done..], false);
        let mut clock = session.clock();
        let mut told = Vec::with_capacity(done);
        for (config, outcome) in held.into_iter().zip(outcomes) {
            clock += outcome.timings().total();
            let record = Record {
                config,
                outcome,
                clock,
            };
            let kept = keep(storage.record(session.space(), &how.worker, &record, budget)?);
            on_record(&record, kept);
            told.push((record.config, record.outcome));
        }
        session.tell(told)?;
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
