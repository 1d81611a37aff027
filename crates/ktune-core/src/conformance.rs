//! The observer conformance suite: what every [`Observe`] implementation must take.
//!
//! An observer is told of a study's loop and must never be the reason the loop fails or
//! stops: [`check_observer`] drives fresh observers through the loops a study can have (an
//! evaluation budget with failures and an invalid proposal, a time budget alone and a
//! maximised objective, a resumed study whose records come back as stored, duplicate and
//! over budget, a study already over when it starts, and every reason to stop) and checks
//! that none panics and none raises the stop flag it was given (only an observer whose
//! reader has gone may). The loop is the one [`cooperate`](crate::cooperate) runs: `start`
//! once the session knows the study's records, `record` for each record this process made,
//! in order, with the session already told it, then `stop`.
//!
//! ```
//! use ktune_core::conformance::check_observer;
//! use ktune_core::{Kept, Observe, Record, Session};
//!
//! /// Counts this process's stored records.
//! struct Count(usize);
//! impl Observe for Count {
//!     fn record(&mut self, _: &Session<'_>, _: &Record, kept: Kept) {
//!         self.0 += usize::from(matches!(kept, Kept::Stored(_)));
//!     }
//! }
//! check_observer(|_stop| Count(0));
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ktune_space::{Configuration, SearchSpace};
use rand::SeedableRng;

use crate::testing::{FnRunner, InOrder, landscape, small_space};
use crate::{
    Asked, Budget, Direction, History, Kept, Observation, Observe, Record, Rng, Runner, Session,
    StopReason, Strategy,
};

/// Runs the suite on observers made by `make`, which is given the stop flag of the loop the
/// observer watches (an observer that may end the run raises it).
pub fn check_observer<O: Observe>(mut make: impl FnMut(Arc<AtomicBool>) -> O) {
    let space = small_space();
    let mut check = |case: &str, body: &mut dyn FnMut(&mut dyn Observe)| {
        let stop = Arc::new(AtomicBool::new(false));
        let mut observer = make(stop.clone());
        body(&mut observer);
        assert!(
            !stop.load(Ordering::SeqCst),
            "{case}: the observer raised the stop flag"
        );
    };
    check("an evaluation budget", &mut |o| {
        let mut session = session(&space, Budget::evaluations(15), Direction::Minimize);
        let stop = drive(
            o,
            &mut session,
            &mut FnRunner::values(landscape::bowl),
            |_| Kept::Stored(0),
        );
        assert_eq!(stop, StopReason::Evaluations);
        let records = session.records();
        assert!(records.iter().any(|r| r.outcome.failure().is_some()));
    });
    check("a time budget alone, maximised", &mut |o| {
        let mut session = session(&space, Budget::seconds(6.0), Direction::Maximize);
        let mut runner = FnRunner::values(landscape::bowl)
            .metric("f", Direction::Maximize)
            .seconds(1.0);
        let stop = drive(o, &mut session, &mut runner, |_| Kept::Stored(0));
        assert_eq!(stop, StopReason::Time);
    });
    check("a resumed study", &mut |o| {
        let mut session = session(&space, Budget::evaluations(12), Direction::Minimize);
        session.observe(earlier(&space, 5));
        let kept = |i: usize| match i % 3 {
            0 => Kept::Stored(i as u64),
            1 => Kept::Duplicate,
            _ => Kept::OverBudget,
        };
        drive(
            o,
            &mut session,
            &mut FnRunner::values(landscape::bowl),
            kept,
        );
    });
    check("a study over before it starts", &mut |o| {
        let mut session = session(&space, Budget::evaluations(4), Direction::Minimize);
        session.observe(earlier(&space, 4));
        let records = session.records().len();
        let stop = drive(
            o,
            &mut session,
            &mut FnRunner::values(landscape::bowl),
            |_| Kept::Stored(0),
        );
        assert_eq!(
            (stop, session.records().len()),
            (StopReason::Evaluations, records)
        );
    });
    for reason in StopReason::ALL {
        check(&format!("stopped for {reason:?}"), &mut |o| {
            let session = session(&space, Budget::evaluations(3), Direction::Minimize);
            o.start(&session);
            o.stop(&session, reason);
        });
    }
}

/// A session of [`Walk`] on `space`.
fn session(space: &SearchSpace, budget: Budget, direction: Direction) -> Session<'_> {
    Session::new(
        space,
        Box::new(Walk::default()),
        budget,
        direction,
        Rng::seed_from_u64(0),
    )
    .unwrap_or_else(|e| panic!("the suite's session: {e}"))
}

/// The loop of [`cooperate`](crate::cooperate) without a storage: the observer is told
/// each record this session makes, kept as `kept` says by its index.
fn drive(
    observer: &mut dyn Observe,
    session: &mut Session<'_>,
    runner: &mut dyn Runner,
    kept: impl Fn(usize) -> Kept,
) -> StopReason {
    observer.start(session);
    let mut told = session.records().len();
    loop {
        let asked = session.ask(2).unwrap_or_else(|e| panic!("ask: {e}"));
        if let Asked::Evaluate(configs) = &asked {
            let outcomes = runner
                .evaluate(session.space(), configs)
                .unwrap_or_else(|e| panic!("evaluate: {e}"));
            let results = configs.iter().cloned().zip(outcomes).collect();
            session
                .tell(results)
                .unwrap_or_else(|e| panic!("tell: {e}"));
        }
        for (i, record) in session.records().iter().enumerate().skip(told) {
            observer.record(session, record, kept(i));
        }
        told = session.records().len();
        if let Asked::Stop(stop) = asked {
            observer.stop(session, stop);
            return stop;
        }
    }
}

/// `n` records of an earlier run: the first configurations of the space, each measured at
/// its rank.
fn earlier(space: &SearchSpace, n: u64) -> Vec<Record> {
    (0..n)
        .map(|r| Record {
            config: space.configuration(r),
            outcome: crate::Outcome::ok(vec![r as f64 + 1.0], crate::Timings::default()),
            clock: r as f64,
        })
        .collect()
}

/// Proposes one configuration outside the space's constraints first (recorded as invalid),
/// then the space in rank order.
#[derive(Default)]
struct Walk {
    invalid_proposed: bool,
    in_order: InOrder,
}

impl Strategy for Walk {
    fn name(&self) -> &str {
        "walk"
    }

    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        let mut out = Vec::new();
        if !std::mem::replace(&mut self.invalid_proposed, true) {
            // x = 15, y = 11: past x + y <= 20.
            out.push(vec![11, 11, 0]);
        }
        out.extend(
            self.in_order
                .ask(space, history, n.saturating_sub(out.len()), rng),
        );
        out
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        self.in_order.tell(space, observations);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes every call: counts them, and panics where the loop breaks its contract.
    #[derive(Default)]
    struct Strict {
        started: bool,
        stopped: bool,
        records: usize,
    }

    impl Observe for Strict {
        fn start(&mut self, _: &Session<'_>) {
            assert!(!self.started && !self.stopped, "started twice");
            self.started = true;
        }
        fn record(&mut self, session: &Session<'_>, record: &Record, _: Kept) {
            assert!(self.started && !self.stopped, "a record outside the loop");
            assert!(
                session.records().contains(record),
                "the session was not told the record first"
            );
            self.records += 1;
        }
        fn stop(&mut self, _: &Session<'_>, _: StopReason) {
            assert!(self.started && !self.stopped, "stopped twice");
            self.stopped = true;
        }
    }

    #[test]
    fn no_observer_and_lists_of_observers_conform() {
        check_observer(|_| ());
        check_observer(|_| -> Vec<Box<dyn Observe>> {
            vec![Box::new(Strict::default()), Box::new(())]
        });
    }

    #[test]
    fn the_suite_catches_an_observer_that_panics_or_stops_the_run() {
        /// Assumes an evaluation budget.
        struct Fragile;
        impl Observe for Fragile {
            fn start(&mut self, session: &Session<'_>) {
                let _ = session
                    .budget()
                    .max_evaluations
                    .expect("an evaluation budget");
            }
        }
        /// Stops the run when it sees a failure.
        struct Quitter(Arc<AtomicBool>);
        impl Observe for Quitter {
            fn record(&mut self, _: &Session<'_>, record: &Record, _: Kept) {
                if record.outcome.failure().is_some() {
                    self.0.store(true, Ordering::SeqCst);
                }
            }
        }
        let fragile = std::panic::catch_unwind(|| check_observer(|_| Fragile));
        assert!(fragile.is_err());
        let quitter = std::panic::catch_unwind(|| check_observer(Quitter));
        let message = quitter.expect_err("the quitter passed");
        let text = message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(text.contains("raised the stop flag"), "{text}");
    }

    #[test]
    fn the_loop_tells_every_record_this_session_made_once_in_order() {
        let space = small_space();
        let mut s = session(&space, Budget::evaluations(15), Direction::Minimize);
        s.observe(earlier(&space, 3));
        let mut strict = Strict::default();
        drive(
            &mut strict,
            &mut s,
            &mut FnRunner::values(landscape::bowl),
            |_| Kept::Stored(0),
        );
        assert!(strict.stopped);
        // 15 in all: 3 resumed, an invalid proposal and 11 evaluations.
        assert_eq!((s.records().len(), strict.records), (15, 12));
        assert!(
            s.records()[3].outcome.failure() == Some(crate::FailureKind::Invalid),
            "{:?}",
            s.records()[3]
        );
    }
}
