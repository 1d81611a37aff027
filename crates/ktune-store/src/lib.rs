//! The result store: one SQLite file per tuning problem.
//!
//! Every evaluation is committed in its own transaction when it is [recorded](Store::record),
//! so a run that is killed loses at most the evaluation in flight. Opening the same file again
//! gives back every stored [`Record`](ktune_core::Record) in evaluation order, so a resumed run re-measures
//! nothing. The problem a file was made for is stored as a [`Fingerprint`]; opening it for a
//! different problem is refused with a message saying what changed.
//!
//! The file holds the tables `meta(key, value)` (with `schema_version`), `fingerprint(json)`
//! and `evaluations` (one row per evaluation: `seq`, `config` (value indices joined by
//! commas), `params_json` (the parameter values), `status`, `objective`, `values_json` (all
//! metric values), `reason`, the timings and the clock). It uses SQLite's write-ahead log, so
//! readers (`ktune results`) never block the tuner. [`Row`]s, [`to_csv`], [`to_json`] and
//! [`to_kernel_tuner_cache`] list and export results without the search space.
#![deny(missing_docs)]

mod codec;
pub mod conformance;
mod conninfo;
mod copy;
mod error;
mod export;
mod fingerprint;
mod location;
#[cfg(feature = "postgres")]
mod pg;
#[cfg(feature = "postgres")]
mod pg_tls;
mod sqlite;
#[cfg(test)]
mod tests;

pub use codec::value_of as stored_value;
pub use conninfo::redact;
pub use copy::{EvaluationRow, StudyDump, WorkerRow};
pub use error::StoreError;
pub use export::{CacheHeader, Row, to_csv, to_json, to_kernel_tuner_cache, value_display};
pub use fingerprint::Fingerprint;
pub use location::{Location, StudySummary};
#[cfg(feature = "postgres")]
pub use pg::PgStore;
pub use sqlite::{DEFAULT_STUDY, SCHEMA_VERSION, Store};

/// The study metadata keys of a study's facts (see [`ktune_core::StudyFacts`]).
pub use ktune_core::{BUDGET_KEY, DIRECTION_KEY, UNIT_KEY};

pub(crate) use codec::{
    RawRow, Stored, config_key, decode, encode, named_rows, parse_config_key, study_records,
};
pub(crate) use error::{damaged, open_error, sqlite_error};
