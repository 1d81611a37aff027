//! Watching the loop: progress bars, JSON lines, log lines and dashboards are observers of
//! a study's loop (as argmin's `Observe`), not code inside a driver. They are told when the
//! loop starts (the session then knows the records the study held), every record this
//! process makes, and why the loop stopped. They read the session and never change it; one
//! that wants the run to end (its reader has gone) raises the session's stop flag.

use crate::{Kept, Record, Session, StopReason};

/// An observer of a study's loop; every method does nothing by default.
pub trait Observe {
    /// The loop starts; `session` knows what the study held (resumed records).
    fn start(&mut self, session: &Session<'_>) {
        let _ = session;
    }

    /// This process made `record` (an evaluation, or an invalid proposal), and the storage
    /// did `kept` with it; `session` has been told it.
    fn record(&mut self, session: &Session<'_>, record: &Record, kept: Kept) {
        let _ = (session, record, kept);
    }

    /// The loop ended for `stop`.
    fn stop(&mut self, session: &Session<'_>, stop: StopReason) {
        let _ = (session, stop);
    }
}

/// No observer.
impl Observe for () {}

/// Every observer of the list, in order.
impl Observe for Vec<Box<dyn Observe + '_>> {
    fn start(&mut self, session: &Session<'_>) {
        for o in self.iter_mut() {
            o.start(session);
        }
    }
    fn record(&mut self, session: &Session<'_>, record: &Record, kept: Kept) {
        for o in self.iter_mut() {
            o.record(session, record, kept);
        }
    }
    fn stop(&mut self, session: &Session<'_>, stop: StopReason) {
        for o in self.iter_mut() {
            o.stop(session, stop);
        }
    }
}
