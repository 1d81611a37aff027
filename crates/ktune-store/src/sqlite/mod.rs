//! The embedded default storage: one SQLite file holds any number of studies, shared by the
//! processes of one machine (SQLite serialises writers; every claim and record is one
//! immediate transaction, so claims are atomic across processes). [`Store`] is the file;
//! `schema.rs` makes, upgrades and opens it; `storage.rs` makes it a
//! [`Storage`](ktune_core::Storage).

mod schema;
mod storage;

use std::path::{Path, PathBuf};

use ktune_core::{Record, Recorded};
use ktune_space::{Configuration, SearchSpace};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use crate::location::{claims_sql, name_list, summary, summary_sql};
use crate::{
    Fingerprint, RawRow, Row, StoreError, Stored, StudySummary, config_key, damaged, decode,
    encode, named_rows, parse_config_key, sqlite_error, study_records,
};
pub(crate) use schema::wal_is_empty;

/// The schema version this crate writes and reads.
pub const SCHEMA_VERSION: i64 = 4;

/// The study of a database opened without a study name (`--db`), and the study that files of
/// schema versions 1 to 3 (one problem per file) become.
pub const DEFAULT_STUDY: &str = "default";

/// Version 1 lacked the `observed` column, versions 1 and 2 the `samples` column, versions 1
/// to 3 held one problem per file; such files are upgraded in place when opened for writing,
/// and read through an upgraded temporary copy otherwise.
pub(super) const ADD_OBSERVED: &str = "ALTER TABLE evaluations ADD COLUMN observed TEXT";
pub(super) const ADD_SAMPLES: &str = "ALTER TABLE evaluations ADD COLUMN samples TEXT";

/// The `meta` key holding the schema version (reserved: [`Store::set_meta`] refuses it).
pub(crate) const SCHEMA_KEY: &str = "schema_version";

/// How long a statement waits for another connection's write lock, in milliseconds.
pub(super) const BUSY_TIMEOUT_MS: u64 = 10_000;

/// A results database: one file per tuning problem.
///
/// # Example
/// ```
/// use ktune_core::{FailureKind, Observed, Outcome, Record, Recorded, Timings};
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
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    /// The study's row id and name.
    pub(crate) study: i64,
    pub(crate) study_name: String,
    /// An upgraded temporary copy of an old file opened read-only, deleted on drop.
    pub(crate) copy: Option<PathBuf>,
    /// Opened read-only without the write-ahead log that holds its latest results.
    pub(crate) older_state: bool,
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(copy) = &self.copy {
            let _ = std::fs::remove_file(copy);
        }
    }
}

/// The current time on the database's clock, in seconds since 1970 (leases use the store's
/// clock, not the workers').
pub(super) const NOW: &str = "unixepoch('subsec')";

impl Store {
    /// Creates or opens the database at `path` for this fingerprint, as its study
    /// [`DEFAULT_STUDY`]. See [`open_study`](Self::open_study).
    pub fn open(path: &Path, fingerprint: &Fingerprint) -> Result<Store, StoreError> {
        Store::open_study(path, DEFAULT_STUDY, fingerprint)
    }

    /// Creates or opens the database at `path` and in it the study `name` for this
    /// fingerprint. A study of that name made for another fingerprint is an error listing the
    /// differences (and telling the user to pass another path or study, or delete the file);
    /// an unwritable path or a file that is not a ktune database is an error naming the
    /// path. Neither kind of error changes the file. Any number of processes may open one
    /// file at once.
    pub fn open_study(
        path: &Path,
        name: &str,
        fingerprint: &Fingerprint,
    ) -> Result<Store, StoreError> {
        let mut store = Store::open_writable(path)?;
        store.enter_study(name, fingerprint)?;
        let stored = store.fingerprint()?;
        let differences = fingerprint.differences(&stored);
        if !differences.is_empty() {
            return Err(StoreError::Mismatch {
                path: store.path.clone(),
                differences,
            });
        }
        Ok(store)
    }

    /// Opens an existing database read-only, without checking its fingerprint (for `ktune
    /// results`), at its only study (or [`DEFAULT_STUDY`] where it has several). See
    /// [`open_existing_study`](Self::open_existing_study).
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        Store::open_existing_study(path, None)
    }

    /// Opens an existing database read-only at the study `name` (or its only study): it never
    /// creates or changes the file ([`record`](Self::record) and [`set_meta`](Self::set_meta)
    /// fail), and it works on a read-only file or directory.
    pub fn open_existing_study(path: &Path, name: Option<&str>) -> Result<Store, StoreError> {
        let mut store = Store::open_read(path)?;
        let names = store.studies()?;
        let chosen = match name {
            Some(n) => n.to_string(),
            None if names.len() == 1 => names[0].clone(),
            None => DEFAULT_STUDY.to_string(),
        };
        let id: Option<i64> = store
            .conn
            .query_row("SELECT id FROM studies WHERE name = ?1", [&chosen], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| store.sqlite(e))?;
        let Some(id) = id else {
            return Err(StoreError::Study {
                path: store.path.clone(),
                message: if names.is_empty() {
                    "it holds no study yet".to_string()
                } else {
                    format!(
                        "it has no study `{chosen}`; its studies are: {} (choose one with --study, or with `#study` after a prior's name)",
                        name_list(&names)
                    )
                },
            });
        };
        store.study = id;
        store.study_name = chosen;
        Ok(store)
    }

    /// An existing database opened read-only (upgraded through a temporary copy where its
    /// schema is older), at no study yet: for [`Store::summaries`].
    pub fn open_read(path: &Path) -> Result<Store, StoreError> {
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        let mut store = match Store::read_only(path, false) {
            // A database in a directory where SQLite cannot create its shared-memory file
            // (`-shm`; SQLite says it cannot open the file, or, for a file in write-ahead-log
            // mode, that it would have to write): read it as immutable. That is exact while
            // no write-ahead log holds results not yet copied into the file; where one does,
            // the file's own state is older, and the store says so (`older_state`).
            Err(StoreError::Open { source, .. } | StoreError::Sqlite { source, .. })
                if matches!(
                    source.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
                ) =>
            {
                let mut store = Store::read_only(path, true)?;
                store.older_state = !wal_is_empty(path);
                store
            }
            other => other?,
        };
        if store.table_count()? == 0 {
            return Err(StoreError::NotADatabase {
                path: store.path.clone(),
                reason: "it is empty".into(),
            });
        }
        let version = store.check_schema()?;
        if version < SCHEMA_VERSION {
            store = store.upgraded_copy(version)?;
        }
        Ok(store)
    }

    /// Whether what this store reads is an older state of the database: it was opened for
    /// reading where SQLite could not create its shared-memory file (a directory the user
    /// cannot write) while a write-ahead log (`<file>-wal`) held results not yet copied into
    /// the file, which only a process that can write there can read.
    pub fn older_state(&self) -> bool {
        self.older_state
    }

    /// The database's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The study's name.
    pub fn study(&self) -> &str {
        &self.study_name
    }

    /// The names of every study in the file, oldest first.
    pub fn studies(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM studies ORDER BY id")
            .map_err(|e| self.sqlite(e))?;
        stmt.query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect::<Result<_, _>>())
            .map_err(|e| self.sqlite(e))
    }

    /// Every study in the file, summarised, oldest first.
    pub fn summaries(&self) -> Result<Vec<StudySummary>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&summary_sql("", NOW))
            .map_err(|e| self.sqlite(e))?;
        stmt.query_map([], |r| {
            Ok(summary(
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
                r.get(9)?,
            ))
        })
        .and_then(|rows| rows.collect::<Result<_, _>>())
        .map_err(|e| self.sqlite(e))
    }

    /// The configurations claimed now, per study and worker (see [`Location::live_claims`]).
    ///
    /// [`Location::live_claims`]: crate::Location::live_claims
    pub fn live_claims(&self) -> Result<Vec<(String, String, u64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&claims_sql("", NOW))
            .map_err(|e| self.sqlite(e))?;
        stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.max(0) as u64))
        })
        .and_then(|rows| rows.collect::<Result<_, _>>())
        .map_err(|e| self.sqlite(e))
    }

    /// The fingerprint the study was made for.
    pub fn fingerprint(&self) -> Result<Fingerprint, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT fingerprint FROM studies WHERE id = ?1",
                [self.study],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))?;
        let text = text.ok_or_else(|| self.corrupt("no fingerprint stored".into()))?;
        serde_json::from_str(&text).map_err(|e| self.corrupt(format!("bad fingerprint: {e}")))
    }

    /// Stores one evaluation, committed in its own transaction before returning. Its
    /// sequence number is the next position of the study (0 for the first). The
    /// configuration must be within `space`'s domains (it may violate the constraints: a
    /// constraint-unaware strategy's invalid proposals are recorded too); recording a
    /// configuration twice is an error.
    pub fn record(&mut self, space: &SearchSpace, record: &Record) -> Result<(), StoreError> {
        match self.record_by(space, None, record, None)? {
            Recorded::New(_) | Recorded::OverBudget => Ok(()),
            Recorded::Duplicate(seq) => Err(StoreError::Duplicate {
                path: self.path.clone(),
                configuration: space.describe(&record.config),
                seq: i64::try_from(seq).unwrap_or(i64::MAX),
            }),
        }
    }

    /// Stores one evaluation made by `worker`, releasing its claim, unless the configuration
    /// is recorded already or (with a `budget`) the study's budget was spent while the worker
    /// held no live claim on it.
    pub fn record_by(
        &mut self,
        space: &SearchSpace,
        worker: Option<&str>,
        record: &Record,
        budget: Option<usize>,
    ) -> Result<Recorded, StoreError> {
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
        let encoded = encode(space, record).map_err(|e| self.corrupt(e))?;
        let config = config_key(&record.config);
        let study = self.study;
        let (tx, path) = self.write()?;
        let sqlite = |source| sqlite_error(&path, source);
        let existing: Option<i64> = tx
            .query_row(
                "SELECT seq FROM evaluations WHERE study = ?1 AND config = ?2",
                params![study, &config],
                |r| r.get(0),
            )
            .optional()
            .map_err(sqlite)?;
        if let Some(seq) = existing {
            return Ok(Recorded::Duplicate(u64::try_from(seq).unwrap_or(0)));
        }
        if let Some(budget) = budget {
            let holds: bool = tx
                .query_row(
                    &format!(
                        "SELECT COUNT(*) > 0 FROM claims WHERE study = ?1 AND config = ?2 \
                         AND worker = ?3 AND expires > {NOW}"
                    ),
                    params![study, &config, worker.unwrap_or("")],
                    |r| r.get(0),
                )
                .map_err(sqlite)?;
            if !holds && used(&tx, study, Some(&config)).map_err(sqlite)? >= budget as i64 {
                return Ok(Recorded::OverBudget);
            }
        }
        let seq: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM evaluations WHERE study = ?1",
                [study],
                |r| r.get(0),
            )
            .map_err(sqlite)?;
        let t = record.outcome.timings();
        tx.execute(
            "INSERT INTO evaluations (study, seq, config, params_json, status, objective, \
             values_json, reason, compile, benchmark, verification, framework, clock, observed, \
             samples, worker) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                study,
                seq,
                config,
                encoded.params_json,
                encoded.status,
                record.outcome.objective(),
                encoded.values_json,
                encoded.reason,
                t.compile,
                t.benchmark,
                t.verification,
                t.framework,
                record.clock,
                encoded.observed,
                encoded.samples,
                worker,
            ],
        )
        .map_err(sqlite)?;
        tx.execute(
            "DELETE FROM claims WHERE study = ?1 AND config = ?2",
            params![study, &config],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        Ok(Recorded::New(u64::try_from(seq).unwrap_or(0)))
    }

    /// Claims `config` for `worker` for `lease` seconds, atomically: granted unless it is
    /// recorded, held by another worker's live claim, or (with a `budget`) the study's
    /// records and live claims already reach the budget. A worker's own live claim is
    /// renewed.
    pub fn claim(
        &mut self,
        config: &[u32],
        worker: &str,
        lease: f64,
        budget: Option<usize>,
    ) -> Result<ktune_core::Claim, StoreError> {
        use ktune_core::Claim;
        let key = config_key(config);
        let study = self.study;
        let (tx, path) = self.write()?;
        let sqlite = |source| sqlite_error(&path, source);
        let recorded: bool = tx
            .query_row(
                "SELECT COUNT(*) > 0 FROM evaluations WHERE study = ?1 AND config = ?2",
                params![study, &key],
                |r| r.get(0),
            )
            .map_err(sqlite)?;
        if recorded {
            return Ok(Claim::Recorded);
        }
        let holder: Option<String> = tx
            .query_row(
                &format!(
                    "SELECT worker FROM claims WHERE study = ?1 AND config = ?2 AND expires > {NOW}"
                ),
                params![study, &key],
                |r| r.get(0),
            )
            .optional()
            .map_err(sqlite)?;
        match holder {
            Some(h) if h != worker => return Ok(Claim::Held),
            Some(_) => {}
            None => {
                if let Some(budget) = budget
                    && used(&tx, study, Some(&key)).map_err(sqlite)? >= budget as i64
                {
                    return Ok(Claim::BudgetSpent);
                }
            }
        }
        tx.execute(
            &format!(
                "INSERT OR REPLACE INTO claims (study, config, worker, expires) \
                 VALUES (?1, ?2, ?3, {NOW} + ?4)"
            ),
            params![study, &key, worker, lease],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        Ok(Claim::Granted)
    }

    /// Takes over the oldest expired claim of the study for `worker` (the configuration of a
    /// worker that died mid-evaluation), unless the study's budget is spent.
    pub fn claim_expired(
        &mut self,
        space: &SearchSpace,
        worker: &str,
        lease: f64,
        budget: Option<usize>,
    ) -> Result<Option<Configuration>, StoreError> {
        let study = self.study;
        let (tx, path) = self.write()?;
        let sqlite = |source| sqlite_error(&path, source);
        let expired: Option<String> = tx
            .query_row(
                &format!(
                    "SELECT config FROM claims WHERE study = ?1 AND expires <= {NOW} \
                     ORDER BY expires LIMIT 1"
                ),
                [study],
                |r| r.get(0),
            )
            .optional()
            .map_err(sqlite)?;
        let Some(key) = expired else {
            return Ok(None);
        };
        if let Some(budget) = budget
            && used(&tx, study, Some(&key)).map_err(sqlite)? >= budget as i64
        {
            return Ok(None);
        }
        tx.execute(
            &format!(
                "UPDATE claims SET worker = ?3, expires = {NOW} + ?4 WHERE study = ?1 AND config = ?2"
            ),
            params![study, &key, worker, lease],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        parse_config_key(&key)
            .filter(|c| space.is_in_bounds(c))
            .map(Some)
            .ok_or_else(|| {
                self.corrupt(format!("claim of a configuration `{key}` not in the space"))
            })
    }

    /// Extends every live claim of `worker` to `lease` seconds from now; how many.
    pub fn heartbeat(&mut self, worker: &str, lease: f64) -> Result<usize, StoreError> {
        self.conn
            .execute(
                &format!(
                    "UPDATE claims SET expires = {NOW} + ?3 WHERE study = ?1 AND worker = ?2 \
                     AND expires > {NOW}"
                ),
                params![self.study, worker, lease],
            )
            .map_err(|e| self.sqlite(e))
    }

    /// Drops every claim of `worker` (a worker that ends cleanly); how many.
    pub fn release(&mut self, worker: &str) -> Result<usize, StoreError> {
        self.conn
            .execute(
                "DELETE FROM claims WHERE study = ?1 AND worker = ?2",
                params![self.study, worker],
            )
            .map_err(|e| self.sqlite(e))
    }

    /// Drops every expired claim of the study; how many.
    pub fn release_expired(&mut self) -> Result<usize, StoreError> {
        self.conn
            .execute(
                &format!("DELETE FROM claims WHERE study = ?1 AND expires <= {NOW}"),
                [self.study],
            )
            .map_err(|e| self.sqlite(e))
    }

    /// Registers `worker` in the study. A study whose workers measured on other hardware
    /// refuses it unless `allow_mixed` (results on different GPUs are not comparable).
    pub fn join(
        &mut self,
        worker: &ktune_core::Worker,
        allow_mixed: bool,
    ) -> Result<usize, StoreError> {
        let study = self.study;
        let study_name = self.study_name.clone();
        let (tx, path) = self.write()?;
        let sqlite = |source| sqlite_error(&path, source);
        let others: Vec<(String, String)> = {
            let mut stmt = tx
                .prepare(
                    "SELECT DISTINCT device, host FROM workers WHERE study = ?1 AND device != ?2 \
                     ORDER BY joined LIMIT 3",
                )
                .map_err(sqlite)?;
            stmt.query_map(params![study, &worker.device], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .and_then(|rows| rows.collect::<Result<_, _>>())
            .map_err(sqlite)?
        };
        if !others.is_empty() && !allow_mixed {
            return Err(StoreError::MixedHardware {
                path,
                study: study_name,
                device: worker.device.clone(),
                others: others
                    .into_iter()
                    .map(|(d, h)| format!("{d} on {h}"))
                    .collect(),
            });
        }
        // Counted in the same immediate transaction as the insert, so that workers joining
        // at once get distinct ranks.
        let rank: i64 = tx
            .query_row(
                "SELECT COUNT(*) FROM workers WHERE study = ?1 AND worker != ?2",
                params![study, &worker.id],
                |r| r.get(0),
            )
            .map_err(sqlite)?;
        tx.execute(
            &format!(
                "INSERT OR REPLACE INTO workers (study, worker, host, device, joined) \
                 VALUES (?1, ?2, ?3, ?4, {NOW})"
            ),
            params![study, &worker.id, &worker.host, &worker.device],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        Ok(rank as usize)
    }

    /// Every stored record in evaluation order, with configurations as value indices of
    /// `space` (found from the stored parameter values). A record whose parameters or values
    /// are not in `space` is an error.
    pub fn records(&self, space: &SearchSpace) -> Result<Vec<Record>, StoreError> {
        Ok(self
            .records_since(space, None)?
            .into_iter()
            .map(|r| r.record)
            .collect())
    }

    /// The records with a sequence number after `after` (all with `None`), in order, with
    /// the worker that made each.
    pub fn records_since(
        &self,
        space: &SearchSpace,
        after: Option<u64>,
    ) -> Result<Vec<ktune_core::StudyRecord>, StoreError> {
        study_records(&self.path, space, self.stored(after)?)
    }

    /// Every stored evaluation as a [`Row`], in evaluation order, for listing and export
    /// without the search space.
    /// Permutations are shown by their item names (`["i", "k", "j"]`) where the database
    /// stored them, as index lists otherwise.
    pub fn rows(&self) -> Result<Vec<Row>, StoreError> {
        Ok(named_rows(&self.fingerprint()?, self.stored(None)?))
    }

    /// How many evaluations the study holds.
    pub fn len(&self) -> Result<usize, StoreError> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM evaluations WHERE study = ?1",
                [self.study],
                |r| r.get(0),
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Whether the study holds no evaluation.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        Ok(self.len()? == 0)
    }

    /// Refuses the key the file's own metadata reserves.
    fn unreserved(&self, key: &str) -> Result<(), StoreError> {
        if key == SCHEMA_KEY {
            return Err(StoreError::ReservedKey {
                path: self.path.clone(),
                key: key.to_string(),
            });
        }
        Ok(())
    }

    /// Stores free-form metadata of the study (e.g. `strategy`, `seed`, `started`),
    /// replacing an earlier value of `key`; committed before returning. `schema_version` is
    /// reserved.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.unreserved(key)?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO study_meta (study, key, value) VALUES (?1, ?2, ?3)",
                params![self.study, key, value],
            )
            .map_err(|e| self.sqlite(e))?;
        Ok(())
    }

    /// Stores `value` under `key` unless the study holds a value there already; returns the
    /// value it holds afterwards (the first writer's). One statement, so atomic across
    /// processes.
    pub fn meta_or_insert(&mut self, key: &str, value: &str) -> Result<String, StoreError> {
        self.unreserved(key)?;
        self.conn
            .query_row(
                "INSERT INTO study_meta (study, key, value) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (study, key) DO UPDATE SET value = study_meta.value RETURNING value",
                params![self.study, key, value],
                |r| r.get(0),
            )
            .map_err(|e| self.sqlite(e))
    }

    /// The study's metadata stored under `key` (the file's for `schema_version`), if any.
    pub fn meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        if key == SCHEMA_KEY {
            return self
                .conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()
                .map_err(|e| self.sqlite(e));
        }
        self.conn
            .query_row(
                "SELECT value FROM study_meta WHERE study = ?1 AND key = ?2",
                params![self.study, key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sqlite(e))
    }

    /// Every stored row with its full outcome, in evaluation order.
    fn stored(&self, after: Option<u64>) -> Result<Vec<Stored>, StoreError> {
        let sql = "SELECT e.seq, e.params_json, e.status, e.values_json, e.reason, e.compile, \
             e.benchmark, e.verification, e.framework, e.clock, e.observed, e.samples, e.worker, \
             w.device FROM evaluations e \
             LEFT JOIN workers w ON w.study = e.study AND w.worker = e.worker \
             WHERE e.study = ?1 AND e.seq > ?2 ORDER BY e.seq";
        let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.sqlite(e))?;
        let raw = stmt
            .query_map(params![self.study, after], |r| {
                Ok(RawRow {
                    seq: r.get(0)?,
                    params_json: r.get(1)?,
                    status: r.get(2)?,
                    values_json: r.get(3)?,
                    reason: r.get(4)?,
                    times: [r.get(5)?, r.get(6)?, r.get(7)?, r.get(8)?, r.get(9)?],
                    observed: r.get(10)?,
                    samples: r.get(11)?,
                    worker: r.get(12)?,
                    device: r.get(13)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.read_error(e))?;
        raw.into_iter().map(|r| decode(&self.path, r)).collect()
    }

    /// Begins a write transaction at once, so that two writers queue at its start instead of
    /// one failing mid-way on a lock it cannot upgrade; with the path its errors name.
    pub(super) fn write(&mut self) -> Result<(rusqlite::Transaction<'_>, PathBuf), StoreError> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sqlite_error(&path, e))?;
        Ok((tx, path))
    }

    fn sqlite(&self, source: rusqlite::Error) -> StoreError {
        sqlite_error(&self.path, source)
    }

    /// An error reading rows: a column of the wrong type is a damaged row, not a failed
    /// query.
    pub(crate) fn read_error(&self, source: rusqlite::Error) -> StoreError {
        match source {
            rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::InvalidColumnType(..) => self.corrupt(source.to_string()),
            e => self.sqlite(e),
        }
    }

    fn damaged(&self, source: &rusqlite::Error) -> StoreError {
        damaged(&self.path, source)
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
}

/// How much of the study's budget is used: its records and its live claims (but the claim
/// on `except`, which the caller is about to replace or settle).
fn used(tx: &rusqlite::Transaction<'_>, study: i64, except: Option<&str>) -> rusqlite::Result<i64> {
    tx.query_row(
        &format!(
            "SELECT (SELECT COUNT(*) FROM evaluations WHERE study = ?1) + \
             (SELECT COUNT(*) FROM claims WHERE study = ?1 AND expires > {NOW} AND config != ?2)"
        ),
        params![study, except.unwrap_or("")],
        |r| r.get(0),
    )
}
