//! The result store: one SQLite file per tuning problem.
//!
//! Every evaluation is committed in its own transaction when it is [recorded](Store::record),
//! so a run that is killed loses at most the evaluation in flight. Opening the same file again
//! gives back every stored [`Record`] in evaluation order, so a resumed run re-measures
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

mod export;
mod fingerprint;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use ktune_core::{FailureKind, Observed, Outcome, Record, Timings};
use ktune_space::{SearchSpace, Value};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde_json::Value as Json;

pub use export::{Row, to_csv, to_json, to_kernel_tuner_cache, value_display};
pub use fingerprint::Fingerprint;

/// The schema version this crate writes and reads.
pub const SCHEMA_VERSION: i64 = 3;

/// Version 1 lacked the `observed` column, versions 1 and 2 the `samples` column; such files
/// are upgraded in place when opened for writing (and read as having no observations or
/// samples otherwise).
const ADD_OBSERVED: &str = "ALTER TABLE evaluations ADD COLUMN observed TEXT";
const ADD_SAMPLES: &str = "ALTER TABLE evaluations ADD COLUMN samples TEXT";

/// The `meta` key holding the schema version (reserved: [`Store::set_meta`] refuses it).
const SCHEMA_KEY: &str = "schema_version";

/// How long a statement waits for another connection's write lock, in milliseconds.
const BUSY_TIMEOUT_MS: u64 = 10_000;

/// Errors of the result store. Each names the database file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The file cannot be opened or created (a missing or unwritable directory, a path under
    /// a file, a directory, ...).
    #[error("cannot open or create the results database `{}`: {reason}", path.display())]
    Open {
        /// The database path.
        path: PathBuf,
        /// Why, as far as can be told (a missing directory, a file in the way, ...).
        reason: String,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// [`Store::open_existing`] found no file.
    #[error("no results database at `{}`", path.display())]
    Missing {
        /// The database path.
        path: PathBuf,
    },
    /// The file is not a ktune results database (not SQLite at all, or another program's
    /// SQLite database).
    #[error("`{}` is not a ktune results database ({reason})", path.display())]
    NotADatabase {
        /// The database path.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// The database was written by a newer (or unknown) version of ktune.
    #[error(
        "`{}` has results schema version {found}; this ktune reads version {SCHEMA_VERSION}",
        path.display()
    )]
    SchemaVersion {
        /// The database path.
        path: PathBuf,
        /// The version found, as stored.
        found: String,
    },
    /// The database was made for a different tuning problem.
    #[error(
        "`{}` holds results of a different tuning problem:\n{}\npass another --db path, or delete the file to start over",
        path.display(),
        differences.iter().map(|d| format!("  - {d}")).collect::<Vec<_>>().join("\n")
    )]
    Mismatch {
        /// The database path.
        path: PathBuf,
        /// What differs (see [`Fingerprint::differences`]).
        differences: Vec<String>,
    },
    /// A configuration was recorded twice.
    #[error(
        "`{}`: configuration {configuration} is already recorded (evaluation {seq})",
        path.display()
    )]
    Duplicate {
        /// The database path.
        path: PathBuf,
        /// The configuration, described.
        configuration: String,
        /// The evaluation that recorded it.
        seq: i64,
    },
    /// A record or stored row does not fit the search space.
    #[error("`{}`: {message}", path.display())]
    Space {
        /// The database path.
        path: PathBuf,
        /// What does not fit.
        message: String,
    },
    /// SQLite found the file damaged (a corrupt page, a truncated file, ...).
    #[error(
        "`{}` is damaged ({detail}); check it with `sqlite3 {} \"PRAGMA integrity_check\"`, and save what can still be read with `sqlite3 {} .recover > recovered.sql`",
        path.display(), path.display(), path.display()
    )]
    Damaged {
        /// The database path.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// A stored row cannot be read back (the file was edited or damaged).
    #[error("`{}`: damaged results database: {message}", path.display())]
    Corrupt {
        /// The database path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The caller tried to overwrite a key the store manages.
    #[error("`{}`: the metadata key `{key}` is reserved", path.display())]
    ReservedKey {
        /// The database path.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// An SQLite operation failed (disk full, file locked too long, read-only file, ...).
    #[error("results database `{}`: {source}", path.display())]
    Sqlite {
        /// The database path.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
}

const SCHEMA: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE fingerprint (json TEXT NOT NULL);
CREATE TABLE evaluations (
    seq INTEGER PRIMARY KEY,
    config TEXT NOT NULL UNIQUE,
    params_json TEXT NOT NULL,
    status TEXT NOT NULL,
    objective REAL,
    values_json TEXT NOT NULL,
    reason TEXT,
    compile REAL,
    benchmark REAL,
    verification REAL,
    framework REAL,
    clock REAL,
    observed TEXT,
    samples TEXT
);
";

/// A results database: one file per tuning problem.
///
/// # Example
/// ```
/// use ktune_core::{FailureKind, Observed, Outcome, Record, Timings};
/// use ktune_space::{Parameter, SearchSpace};
/// use ktune_store::{Fingerprint, Store};
///
/// let space = SearchSpace::new(vec![Parameter::integer("tile", [1, 2, 4])?], &["tile < 4"])?;
/// let fingerprint = Fingerprint::new(&space, r#"{"repeats":3}"#, "time");
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("results.db");
///
/// let t = Timings { compile: 0.5, benchmark: 0.25, ..Timings::default() };
/// let first = Record { config: vec![1], outcome: Outcome::ok(vec![2.5], t), clock: 0.75 };
/// let second = Record {
///     config: vec![0],
///     outcome: Outcome::failed(FailureKind::Compile, "nvcc: error", t),
///     clock: 1.5,
/// };
/// {
///     let mut store = Store::open(&path, &fingerprint)?;
///     store.set_meta("strategy", "random")?;
///     store.record(&space, &first)?; // committed before it returns
///     store.record(&space, &second)?;
/// }
///
/// // A resumed run gets every record back, in order.
/// let store = Store::open(&path, &fingerprint)?;
/// assert_eq!(store.records(&space)?, vec![first, second]);
/// assert_eq!(store.meta("strategy")?.as_deref(), Some("random"));
/// let rows = store.rows()?;
/// assert_eq!(rows[1].status, "compile");
/// assert!(ktune_store::to_csv(&rows, "time").starts_with("seq,tile,status,time,"));
///
/// // Another problem (here: other runner settings) is refused, saying what changed.
/// let other = Fingerprint::new(&space, r#"{"repeats":5}"#, "time");
/// let err = Store::open(&path, &other).err().unwrap().to_string();
/// assert!(err.contains("`repeats` is 5 instead of 3"), "{err}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// False only for a version-1 file that could not be upgraded (opened read-only).
    observed_column: bool,
    samples_column: bool,
}

impl Store {
    /// Creates or opens the database at `path` for this fingerprint. A database made for
    /// another fingerprint is an error listing the differences (and telling the user to pass
    /// another `--db` path or delete the file); an unwritable path or a file that is not a
    /// ktune database is an error naming the path. Neither kind of error changes the file.
    pub fn open(path: &Path, fingerprint: &Fingerprint) -> Result<Store, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut store = Store::connect(path, flags)?;
        if store.table_count()? == 0 {
            store.create(fingerprint)?;
        } else {
            store.check_schema()?;
        }
        let stored = store.fingerprint()?;
        let differences = fingerprint.differences(&stored);
        if !differences.is_empty() {
            return Err(StoreError::Mismatch {
                path: store.path,
                differences,
            });
        }
        Ok(store)
    }

    /// Opens an existing database read-only, without checking its fingerprint (for `ktune
    /// results`): it never creates or changes the file ([`record`](Self::record) and
    /// [`set_meta`](Self::set_meta) fail), and it works on a read-only file or directory.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        let mut store = match Store::read_only(path, false) {
            // A database in a directory where SQLite cannot create its shared-memory file
            // (`-shm`): read it as immutable, which is exact while there is no write-ahead log
            // holding results not yet copied into the file (a writer would need that
            // directory too).
            Err(StoreError::Open { source, .. })
                if source.sqlite_error_code() == Some(rusqlite::ErrorCode::CannotOpen)
                    && wal_is_empty(path) =>
            {
                Store::read_only(path, true)?
            }
            other => other?,
        };
        if store.table_count()? == 0 {
            return Err(StoreError::NotADatabase {
                path: store.path,
                reason: "it is empty".into(),
            });
        }
        store.check_schema()?;
        Ok(store)
    }

    /// The database's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The fingerprint the database was made for.
    pub fn fingerprint(&self) -> Result<Fingerprint, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT json FROM fingerprint LIMIT 1", [], |r| r.get(0))
            .optional()
            .map_err(|e| self.sqlite(e))?;
        let text = text.ok_or_else(|| self.corrupt("no fingerprint stored".into()))?;
        serde_json::from_str(&text).map_err(|e| self.corrupt(format!("bad fingerprint: {e}")))
    }

    /// Stores one evaluation, committed in its own transaction before returning. Its
    /// sequence number is the next position (0 for the first). The configuration must be
    /// within `space`'s domains (it may violate the constraints: a constraint-unaware
    /// strategy's invalid proposals are recorded too); recording a configuration twice is an
    /// error.
    pub fn record(&mut self, space: &SearchSpace, record: &Record) -> Result<(), StoreError> {
        if !space.is_in_bounds(&record.config) {
            return Err(StoreError::Space {
                path: self.path.clone(),
                message: format!(
                    "configuration {:?} is not in the search space ({} parameters)",
                    record.config,
                    space.dims()
                ),
            });
        }
        let values = space.values(&record.config);
        let params: Vec<(&str, Json)> = space
            .params()
            .iter()
            .zip(&values)
            .map(|(p, v)| (p.name(), v.to_json()))
            .collect();
        let params_json =
            serde_json::to_string(&params).map_err(|e| self.corrupt(e.to_string()))?;
        let config = config_key(&record.config);
        let (status, metric_values, reason) = match &record.outcome {
            Outcome::Ok { values, .. } => ("ok", values.as_slice(), None),
            Outcome::Failed { kind, reason, .. } => (kind.name(), &[][..], Some(reason.as_str())),
        };
        let values_json = Json::Array(metric_values.iter().map(|&v| float_json(v)).collect());
        let observed = (!record.outcome.observed().is_empty())
            .then(|| serde_json::to_string(record.outcome.observed()))
            .transpose()
            .map_err(|e| self.corrupt(e.to_string()))?;
        let samples = record
            .outcome
            .samples()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| self.corrupt(e.to_string()))?;
        let t = record.outcome.timings();
        let path = self.path.clone();
        let sqlite = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT seq FROM evaluations WHERE config = ?1",
                [&config],
                |r| r.get(0),
            )
            .optional()
            .map_err(sqlite)?;
        if let Some(seq) = existing {
            return Err(StoreError::Duplicate {
                path: path.clone(),
                configuration: space.describe(&record.config),
                seq,
            });
        }
        let seq: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM evaluations",
                [],
                |r| r.get(0),
            )
            .map_err(sqlite)?;
        tx.execute(
            "INSERT INTO evaluations (seq, config, params_json, status, objective, values_json, \
             reason, compile, benchmark, verification, framework, clock, observed, samples) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                seq,
                config,
                params_json,
                status,
                record.outcome.objective(),
                values_json.to_string(),
                reason,
                t.compile,
                t.benchmark,
                t.verification,
                t.framework,
                record.clock,
                observed,
                samples,
            ],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)
    }

    /// Every stored record in evaluation order, with configurations as value indices of
    /// `space` (found from the stored parameter values). A record whose parameters or values
    /// are not in `space` is an error.
    pub fn records(&self, space: &SearchSpace) -> Result<Vec<Record>, StoreError> {
        let names: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
        self.stored()?
            .into_iter()
            .map(|s| {
                let stored_names: Vec<&str> =
                    s.row.params.iter().map(|(n, _)| n.as_str()).collect();
                if stored_names != names {
                    return Err(self.space_error(format!(
                        "evaluation {} has parameters {} but the search space has {}",
                        s.row.seq,
                        stored_names.join(", "),
                        names.join(", ")
                    )));
                }
                let values: Option<Vec<Value>> =
                    s.row.params.iter().map(|(_, v)| value_of(v)).collect();
                let config = values
                    .and_then(|v| space.configuration_of(&v))
                    .ok_or_else(|| {
                        let shown: Vec<String> = s
                            .row
                            .params
                            .iter()
                            .map(|(n, v)| format!("{n}={v}"))
                            .collect();
                        self.space_error(format!(
                            "evaluation {} has values {} that are not in the search space",
                            s.row.seq,
                            shown.join(", ")
                        ))
                    })?;
                Ok(Record {
                    config,
                    outcome: s.outcome,
                    clock: s.row.clock_s,
                })
            })
            .collect()
    }

    /// Every stored evaluation as a [`Row`], in evaluation order, for listing and export
    /// without the search space.
    /// Permutations are shown by their item names (`["i", "k", "j"]`) where the database
    /// stored them, as index lists otherwise.
    pub fn rows(&self) -> Result<Vec<Row>, StoreError> {
        let fingerprint = self.fingerprint()?;
        Ok(self
            .stored()?
            .into_iter()
            .map(|s| {
                let mut row = s.row;
                for (name, value) in &mut row.params {
                    if let Some(items) = fingerprint.items_of(name) {
                        name_items(value, items);
                    }
                }
                row
            })
            .collect())
    }

    /// How many evaluations are stored.
    pub fn len(&self) -> Result<usize, StoreError> {
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM evaluations", [], |r| r.get(0))
            .map_err(|e| self.sqlite(e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Whether no evaluation is stored.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }

    /// Stores free-form metadata (e.g. `strategy`, `seed`, `started`), replacing an earlier
    /// value of `key`; committed before returning. `schema_version` is reserved.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        if key == SCHEMA_KEY {
            return Err(StoreError::ReservedKey {
                path: self.path.clone(),
                key: key.to_string(),
            });
        }
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                [key, value],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(())
    }

    /// The metadata stored under `key`, if any.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// A read-only connection whose first read has succeeded (`immutable`: without locks or
    /// the shared-memory file, for a directory that cannot be written).
    pub(crate) fn read_only(path: &Path, immutable: bool) -> Result<Store, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let store = if immutable {
            let uri = format!("file:{}?immutable=1", uri_path(path));
            let conn = Connection::open_with_flags(&uri, flags | OpenFlags::SQLITE_OPEN_URI)
                .map_err(|source| open_error(path, source))?;
            Store {
                conn,
                path: path.to_path_buf(),
                observed_column: true,
                samples_column: true,
            }
        } else {
            Store::connect(path, flags)?
        };
        store.table_count()?;
        Ok(store)
    }

    fn connect(path: &Path, flags: OpenFlags) -> Result<Store, StoreError> {
        let conn =
            Connection::open_with_flags(path, flags).map_err(|source| open_error(path, source))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
            observed_column: true,
            samples_column: true,
        };
        store
            .conn
            .busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))
            .map_err(|e| store.sqlite(e))?;
        Ok(store)
    }

    /// How many tables the file has; the first read, so a file that is not SQLite fails here.
    fn table_count(&self) -> Result<i64, StoreError> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::NotADatabase) => StoreError::NotADatabase {
                    path: self.path.clone(),
                    reason: "it is not an SQLite database".into(),
                },
                Some(rusqlite::ErrorCode::CannotOpen) => open_error(&self.path, e),
                _ => self.sqlite(e),
            })
    }

    /// Makes a new, empty database for `fingerprint`.
    fn create(&mut self, fingerprint: &Fingerprint) -> Result<(), StoreError> {
        let path = self.path.clone();
        let open_error = |source| open_error(&path, source);
        // Write-ahead logging is a property of the file; it cannot change inside a transaction.
        self.conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .map_err(open_error)?;
        let json = serde_json::to_string(fingerprint).map_err(|e| self.corrupt(e.to_string()))?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(open_error)?;
        // Another process may have created it since we looked.
        let tables: i64 = tx
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(open_error)?;
        if tables == 0 {
            tx.execute_batch(SCHEMA).map_err(open_error)?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)",
                [SCHEMA_KEY, &SCHEMA_VERSION.to_string()],
            )
            .map_err(open_error)?;
            tx.execute("INSERT INTO fingerprint (json) VALUES (?1)", [&json])
                .map_err(open_error)?;
        }
        tx.commit().map_err(open_error)?;
        if tables != 0 {
            self.check_schema()?;
        }
        Ok(())
    }

    /// Checks that the file is a ktune database of a version this crate reads.
    fn check_schema(&mut self) -> Result<(), StoreError> {
        let not_ours = || StoreError::NotADatabase {
            path: self.path.clone(),
            reason: "an SQLite database without ktune's tables".into(),
        };
        let tables: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
                .map_err(|e| self.sqlite(e))?;
            stmt.query_map([], |r| r.get(0))
                .and_then(|rows| rows.collect::<Result<_, _>>())
                .map_err(|e| self.sqlite(e))?
        };
        if !["meta", "fingerprint", "evaluations"]
            .iter()
            .all(|t| tables.iter().any(|n| n == t))
        {
            return Err(self.damaged_or(not_ours()));
        }
        let version: Option<String> = self
            .conn
            .query_row(
                "SELECT CAST(value AS TEXT) FROM meta WHERE key = ?1",
                [SCHEMA_KEY],
                |r| r.get(0),
            )
            .optional()
            .map_err(|_| self.damaged_or(not_ours()))?;
        match version {
            None => Err(self.damaged_or(not_ours())),
            Some(v) if v.trim() == SCHEMA_VERSION.to_string() => Ok(()),
            Some(v) if v.trim() == "1" || v.trim() == "2" => {
                // Upgrade in place; a read-only file is read as having no observations (1)
                // and no samples (1, 2).
                let old = v.trim() == "1";
                let add = if old {
                    format!("{ADD_OBSERVED}; {ADD_SAMPLES}")
                } else {
                    ADD_SAMPLES.to_string()
                };
                let upgraded = self.conn.execute_batch(&format!(
                    "BEGIN IMMEDIATE; {add}; \
                     UPDATE meta SET value = '{SCHEMA_VERSION}' WHERE key = '{SCHEMA_KEY}'; COMMIT;"
                ));
                if upgraded.is_err() {
                    let _ = self.conn.execute_batch("ROLLBACK");
                    self.observed_column = !old;
                    self.samples_column = false;
                }
                Ok(())
            }
            Some(found) => Err(StoreError::SchemaVersion {
                path: self.path.clone(),
                found,
            }),
        }
    }

    /// Every stored row with its full outcome, in evaluation order.
    fn stored(&self) -> Result<Vec<Stored>, StoreError> {
        let sql = format!(
            "SELECT seq, params_json, status, values_json, reason, compile, benchmark, \
             verification, framework, clock, {}, {} FROM evaluations ORDER BY seq",
            if self.observed_column {
                "observed"
            } else {
                "NULL"
            },
            if self.samples_column {
                "samples"
            } else {
                "NULL"
            },
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.sqlite(e))?;
        let raw = stmt
            .query_map([], |r| {
                Ok(RawRow {
                    seq: r.get(0)?,
                    params_json: r.get(1)?,
                    status: r.get(2)?,
                    values_json: r.get(3)?,
                    reason: r.get(4)?,
                    times: [r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?],
                    observed: r.get(10)?,
                    samples: r.get(11)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| match e {
                rusqlite::Error::FromSqlConversionFailure(..)
                | rusqlite::Error::InvalidColumnType(..) => self.corrupt(e.to_string()),
                e => self.sqlite(e),
            })?;
        raw.into_iter().map(|r| self.decode(r)).collect()
    }

    fn decode(&self, r: RawRow) -> Result<Stored, StoreError> {
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            self.corrupt(format!("evaluation {}: bad {what}: {e}", r.seq))
        };
        let params: Vec<(String, Json)> =
            serde_json::from_str(&r.params_json).map_err(|e| bad("parameter values", &e))?;
        let values: Vec<Json> =
            serde_json::from_str(&r.values_json).map_err(|e| bad("metric values", &e))?;
        let values: Vec<f64> = values
            .iter()
            .map(|v| float_of(v).ok_or_else(|| bad("metric value", v)))
            .collect::<Result<_, _>>()?;
        // SQLite stores NaN as NULL.
        let [compile, benchmark, verification, framework, clock] =
            r.times.map(|t| t.unwrap_or(f64::NAN));
        let timings = Timings {
            compile,
            benchmark,
            verification,
            framework,
        };
        let observed: Observed = match &r.observed {
            Some(text) => serde_json::from_str(text).map_err(|e| bad("observed values", &e))?,
            None => Observed::new(),
        };
        let samples: Option<ktune_core::Samples> = r
            .samples
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| bad("samples", &e))?;
        if samples.as_ref().is_some_and(|s| s.values.is_empty()) {
            return Err(bad("samples", &"an empty list"));
        }
        let outcome = if r.status == "ok" {
            let o = Outcome::ok(values, timings);
            match samples.clone() {
                Some(s) => o.with_samples(s),
                None => o,
            }
        } else {
            let kind = kind_of(&r.status).ok_or_else(|| bad("status", &r.status))?;
            Outcome::failed(kind, r.reason.clone().unwrap_or_default(), timings)
        }
        .with_observed(observed.clone());
        let row = Row {
            seq: r.seq,
            params,
            status: r.status,
            objective: outcome.objective(),
            reason: match &outcome {
                Outcome::Ok { .. } => None,
                Outcome::Failed { reason, .. } => Some(reason.clone()),
            },
            compile_s: compile,
            benchmark_s: benchmark,
            verification_s: verification,
            framework_s: framework,
            clock_s: clock,
            observed,
            samples,
        };
        Ok(Stored { row, outcome })
    }

    fn sqlite(&self, source: rusqlite::Error) -> StoreError {
        if source.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) {
            return self.damaged(&source);
        }
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn damaged(&self, source: &rusqlite::Error) -> StoreError {
        StoreError::Damaged {
            path: self.path.clone(),
            detail: match source {
                rusqlite::Error::SqliteFailure(e, Some(m)) if !m.contains(&e.to_string()) => {
                    format!("{m}: {e}")
                }
                rusqlite::Error::SqliteFailure(e, _) => e.to_string(),
                other => other.to_string(),
            },
        }
    }

    /// When the file's own check fails: it is damaged, not someone else's database.
    fn damaged_or(&self, otherwise: StoreError) -> StoreError {
        let check: Result<String, _> = self.conn.query_row("PRAGMA quick_check", [], |r| r.get(0));
        match check {
            Ok(ok) if ok == "ok" => otherwise,
            Ok(problem) => StoreError::Damaged {
                path: self.path.clone(),
                // SQLite's report, first problems only, on one line.
                detail: problem
                    .lines()
                    .filter(|l| !l.starts_with("***") && !l.trim().is_empty())
                    .take(2)
                    .collect::<Vec<_>>()
                    .join("; "),
            },
            Err(e) => self.damaged(&e),
        }
    }

    fn corrupt(&self, message: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            message,
        }
    }

    fn space_error(&self, message: String) -> StoreError {
        StoreError::Space {
            path: self.path.clone(),
            message,
        }
    }
}

/// An [`StoreError::Open`] with the likeliest reason: SQLite only says it cannot open the
/// file, so look at the path.
/// Whether a database has no write-ahead log with content (none, or an empty one).
fn wal_is_empty(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(std::path::PathBuf::from(wal)).map_or(true, |m| m.len() == 0)
}

/// A path for an SQLite `file:` URI: absolute, with `%`, `?` and `#` escaped.
fn uri_path(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for c in abs.to_string_lossy().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

fn open_error(path: &Path, source: rusqlite::Error) -> StoreError {
    let reason = if path.is_dir() {
        "it is a directory".to_string()
    } else {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let blocker = parent.and_then(|p| {
            p.ancestors()
                .filter(|a| !a.as_os_str().is_empty())
                .find(|a| a.exists())
                .filter(|a| !a.is_dir())
        });
        match (parent, blocker) {
            (_, Some(file)) => format!("`{}` is a file, not a directory", file.display()),
            (Some(dir), None) if !dir.exists() => {
                format!("the directory `{}` does not exist", dir.display())
            }
            _ => match source.sqlite_error_code() {
                Some(rusqlite::ErrorCode::CannotOpen) => {
                    "the file or its directory cannot be written (check permissions)".into()
                }
                _ => source.to_string(),
            },
        }
    };
    StoreError::Open {
        path: path.to_path_buf(),
        reason,
        source,
    }
}

/// The columns of one stored evaluation, before decoding.
struct RawRow {
    seq: i64,
    params_json: String,
    status: String,
    values_json: String,
    reason: Option<String>,
    times: [Option<f64>; 5],
    observed: Option<String>,
    samples: Option<String>,
}

/// One decoded evaluation.
struct Stored {
    row: Row,
    outcome: Outcome,
}

/// The `config` column: value indices joined by commas.
fn config_key(config: &[u32]) -> String {
    config
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A metric value as JSON, exactly: finite values as numbers, others as text.
fn float_json(v: f64) -> Json {
    match serde_json::Number::from_f64(v) {
        Some(n) => Json::Number(n),
        None if v.is_nan() => Json::from("NaN"),
        None if v > 0.0 => Json::from("inf"),
        None => Json::from("-inf"),
    }
}

fn float_of(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

fn kind_of(name: &str) -> Option<FailureKind> {
    [
        FailureKind::Invalid,
        FailureKind::Compile,
        FailureKind::Runtime,
        FailureKind::Timeout,
        FailureKind::WrongOutput,
    ]
    .into_iter()
    .find(|k| k.name() == name)
}

/// Replaces an ordering of item indices by the items' names; anything else (an index out of
/// range: a damaged row) is left as it is.
fn name_items(value: &mut Json, items: &[String]) {
    let Json::Array(order) = value else { return };
    let names: Option<Vec<Json>> = order
        .iter()
        .map(|i| {
            let i = usize::try_from(i.as_u64()?).ok()?;
            items.get(i).map(|n| Json::String(n.clone()))
        })
        .collect();
    if let Some(names) = names {
        *value = Json::Array(names);
    }
}

/// A parameter value from its JSON form ([`Value::to_json`]).
fn value_of(v: &Json) -> Option<Value> {
    match v {
        Json::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .or_else(|| n.as_f64().map(Value::Real)),
        Json::Bool(b) => Some(Value::Bool(*b)),
        Json::String(s) => Some(Value::Str(s.clone())),
        Json::Array(items) => items
            .iter()
            .map(|i| i.as_u64().and_then(|i| u32::try_from(i).ok()))
            .collect::<Option<Vec<u32>>>()
            .map(Value::Perm),
        _ => None,
    }
}
