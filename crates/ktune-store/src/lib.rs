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

pub mod conformance;
mod conninfo;
mod copy;
mod export;
mod fingerprint;
#[cfg(feature = "postgres")]
mod pg;
#[cfg(feature = "postgres")]
mod pg_tls;
mod sqlite;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use ktune_core::{FailureKind, Observed, Outcome, Record, Recorded, Timings};
use ktune_space::{Configuration, SearchSpace, Value};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde_json::Value as Json;

use conninfo::redact;
pub use copy::{EvaluationRow, StudyDump, WorkerRow};
pub use export::{Row, to_csv, to_json, to_kernel_tuner_cache, value_display};
pub use fingerprint::Fingerprint;
#[cfg(feature = "postgres")]
pub use pg::PgStore;

/// The study metadata key under which the objective's direction (`minimize`/`maximize`)
/// is stored by every program that records a study.
pub const DIRECTION_KEY: &str = "direction";

/// The study metadata key of a shared study's evaluation budget, stored by its first worker.
pub const BUDGET_KEY: &str = "max_evaluations";

/// The study metadata key of the objective's unit (`ms`, `s`, `GFLOP/s`), where known.
pub const UNIT_KEY: &str = "unit";

/// Where a shared study lives: a `--storage` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file (`sqlite:///abs/path.db` or `sqlite://relative.db`), shared by the
    /// processes of one machine or of a file system with working locks.
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgresql://user[:password]@host[:port]/database`, with
    /// libpq's TLS parameters `sslmode`, `sslrootcert`, `sslcert`, `sslkey`).
    Postgres(String),
}

impl Location {
    /// Reads a storage URL.
    pub fn parse(url: &str) -> Result<Location, StoreError> {
        let bad = |reason: &str| StoreError::Url {
            url: redact(url),
            reason: reason.to_string(),
        };
        if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(bad(
                    "no path after sqlite:// (e.g. sqlite:///scratch/study.db)",
                ));
            }
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        if url.starts_with("postgresql://") || url.starts_with("postgres://") {
            if cfg!(feature = "postgres") {
                return Ok(Location::Postgres(url.to_string()));
            }
            return Err(bad(
                "this ktune was built without PostgreSQL (cargo feature `postgres`)",
            ));
        }
        Err(bad(
            "not a storage URL; use sqlite:///path/to/study.db or postgresql://user@host/database",
        ))
    }

    /// The URL without a password, for messages.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => format!(
                "sqlite://{}",
                std::path::absolute(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
            ),
            Location::Postgres(url) => redact(url),
        }
    }

    /// Opens (creating where missing) the study `name` for `fingerprint`.
    pub fn open_study(
        &self,
        name: &str,
        fingerprint: &Fingerprint,
    ) -> Result<Box<dyn ktune_core::Storage>, StoreError> {
        match self {
            Location::Sqlite(path) => Ok(Box::new(Store::open_study(path, name, fingerprint)?)),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Ok(Box::new(PgStore::open_study(url, name, fingerprint)?)),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::Url {
                url: redact(url),
                reason: "this ktune was built without PostgreSQL".into(),
            }),
        }
    }

    /// Every study of the storage, summarised, oldest first.
    pub fn studies(&self) -> Result<Vec<StudySummary>, StoreError> {
        match self {
            Location::Sqlite(path) => Store::open_read(path)?.summaries(),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => PgStore::open_database(url)?.summaries(),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::Url {
                url: redact(url),
                reason: "this ktune was built without PostgreSQL".into(),
            }),
        }
    }

    /// An existing study (`name`, or the only one), column by column, for reading and
    /// copying.
    pub fn dump_study(&self, name: Option<&str>) -> Result<StudyDump, StoreError> {
        match self {
            Location::Sqlite(path) => Store::open_existing_study(path, name)?.dump(),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => PgStore::open_existing_study(url, name)?.dump(),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::Url {
                url: redact(url),
                reason: "this ktune was built without PostgreSQL".into(),
            }),
        }
    }
}

/// One study of a storage, summarised (`ktune results --studies`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StudySummary {
    /// Its name.
    pub name: String,
    /// Evaluations recorded.
    pub evaluations: u64,
    /// Of those, how many failed.
    pub failed: u64,
    /// The best objective value, in the study's direction (minimised where none is stored).
    pub best: Option<f64>,
    /// `minimize` or `maximize`, where the study stored it.
    pub direction: Option<String>,
    /// The study's evaluation budget, where it has one.
    pub budget: Option<u64>,
    /// Workers that joined it.
    pub workers: u64,
    /// When it was made, in seconds since the Unix epoch.
    pub created: Option<f64>,
}

/// The query behind [`StudySummary`], for the tables of both storages (`prefix`: their
/// schema, with its dot).
fn summary_sql(prefix: &str) -> String {
    let of = |table: &str| format!("{prefix}{table} x WHERE x.study = s.id");
    let meta = |key: &str| {
        format!(
            "(SELECT x.value FROM {} AND x.key = '{key}')",
            of("study_meta")
        )
    };
    format!(
        "SELECT s.name, s.created, \
         (SELECT COUNT(*) FROM {e}), \
         (SELECT COUNT(*) FROM {e} AND x.status <> 'ok'), \
         (SELECT MIN(x.objective) FROM {e} AND x.status = 'ok'), \
         (SELECT MAX(x.objective) FROM {e} AND x.status = 'ok'), \
         {direction}, {budget}, \
         (SELECT COUNT(*) FROM {w}) \
         FROM {prefix}studies s ORDER BY s.id",
        e = of("evaluations"),
        w = of("workers"),
        direction = meta(DIRECTION_KEY),
        budget = meta(BUDGET_KEY),
    )
}

/// A summary from the columns of [`summary_sql`].
#[allow(clippy::too_many_arguments)]
fn summary(
    name: String,
    created: Option<f64>,
    evaluations: i64,
    failed: i64,
    min: Option<f64>,
    max: Option<f64>,
    direction: Option<String>,
    budget: Option<String>,
    workers: i64,
) -> StudySummary {
    StudySummary {
        best: if direction.as_deref() == Some("maximize") {
            max
        } else {
            min
        },
        name,
        evaluations: evaluations.max(0) as u64,
        failed: failed.max(0) as u64,
        direction,
        budget: budget.and_then(|b| b.parse().ok()),
        workers: workers.max(0) as u64,
        created,
    }
}

/// Study names for a message: all of them, or the first twelve and how many more.
fn name_list(names: &[String]) -> String {
    const SHOWN: usize = 12;
    if names.len() <= SHOWN {
        names.join(", ")
    } else {
        format!(
            "{}, and {} more (list them with `ktune results --storage URL --studies`)",
            names[..SHOWN].join(", "),
            names.len() - SHOWN
        )
    }
}

/// The schema version this crate writes and reads.
pub const SCHEMA_VERSION: i64 = 4;

/// The study of a database opened without a study name (`--db`), and the study that files of
/// schema versions 1 to 3 (one problem per file) become.
pub const DEFAULT_STUDY: &str = "default";

/// Version 1 lacked the `observed` column, versions 1 and 2 the `samples` column, versions 1
/// to 3 held one problem per file; such files are upgraded in place when opened for writing,
/// and read through an upgraded temporary copy otherwise.
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
        "`{}` holds results of a different tuning problem:\n{}\nuse another --db path or --study name, or delete the old results to start over",
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
    /// The study asked for is not in the file (or the file holds several and none was named).
    #[error("`{}`: {message}", path.display())]
    Study {
        /// The database path.
        path: PathBuf,
        /// What is wrong, with the studies there are.
        message: String,
    },
    /// A worker on other hardware than the study's earlier workers.
    #[error(
        "`{}`: study `{study}` was measured on {} but this worker has {device}; results on different hardware are not comparable (pass --allow-mixed-hardware to join anyway, or use another --study)",
        path.display(), others.join(", ")
    )]
    MixedHardware {
        /// The database path.
        path: PathBuf,
        /// The study.
        study: String,
        /// This worker's device.
        device: String,
        /// The other devices, with their hosts.
        others: Vec<String>,
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
    /// A PostgreSQL operation failed (the server cannot be reached, refused the login, ...).
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL storage `{location}`: {detail}")]
    Postgres {
        /// The server and database (without the password).
        location: String,
        /// What the server or the connection said, on one line.
        detail: String,
        /// The client library's error.
        #[source]
        source: ::postgres::Error,
    },
    /// A storage URL (`--storage`, `[storage]`, `storage=`) that names no storage this build has.
    #[error("storage URL `{url}`: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong, with an example.
        reason: String,
    },
}

/// The file's own table: the schema version.
const META_TABLE: &str = "CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);";

/// The tables of the studies (schema version 4).
const STUDY_TABLES: &str = "
CREATE TABLE studies (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    fingerprint TEXT NOT NULL,
    created REAL
);
CREATE TABLE study_meta (
    study INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (study, key)
);
CREATE TABLE evaluations (
    study INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    config TEXT NOT NULL,
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
    samples TEXT,
    worker TEXT,
    PRIMARY KEY (study, seq),
    UNIQUE (study, config)
);
CREATE TABLE claims (
    study INTEGER NOT NULL,
    config TEXT NOT NULL,
    worker TEXT NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (study, config)
);
CREATE TABLE workers (
    study INTEGER NOT NULL,
    worker TEXT NOT NULL,
    host TEXT NOT NULL,
    device TEXT NOT NULL,
    joined REAL,
    PRIMARY KEY (study, worker)
);
";

/// Upgrades a version 3 file (one problem per file, `fingerprint` and `evaluations` tables)
/// to version 4 (studies); its problem becomes the study [`DEFAULT_STUDY`]. Runs with the
/// old `evaluations` table renamed to `evaluations_v3` and [`STUDY_TABLES`] created.
const UPGRADE_3_TO_4: &str = "
INSERT INTO studies (id, name, fingerprint, created)
    SELECT 1, 'default', json, unixepoch('subsec') FROM fingerprint LIMIT 1;
INSERT INTO study_meta (study, key, value)
    SELECT 1, key, value FROM meta WHERE key != 'schema_version';
DELETE FROM meta WHERE key != 'schema_version';
INSERT INTO evaluations (study, seq, config, params_json, status, objective, values_json,
    reason, compile, benchmark, verification, framework, clock, observed, samples)
    SELECT 1, seq, config, params_json, status, objective, values_json, reason, compile,
    benchmark, verification, framework, clock, observed, samples FROM evaluations_v3;
DROP TABLE evaluations_v3;
DROP TABLE fingerprint;
UPDATE meta SET value = '4' WHERE key = 'schema_version';
";

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
    conn: Connection,
    path: PathBuf,
    /// The study's row id and name.
    study: i64,
    study_name: String,
    /// An upgraded temporary copy of an old file opened read-only, deleted on drop.
    copy: Option<PathBuf>,
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
const NOW: &str = "unixepoch('subsec')";

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
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut store = Store::connect(path, flags)?;
        if store.table_count()? == 0 {
            store.create()?;
        } else {
            let version = store.check_schema()?;
            if version < SCHEMA_VERSION {
                store.upgrade(version)?;
            }
        }
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
                        "it has no study `{chosen}`; its studies are: {} (choose one with --study)",
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
    /// schema is older), at no study yet.
    fn open_read(path: &Path) -> Result<Store, StoreError> {
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
            .prepare(&summary_sql(""))
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
            ))
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
        let path = self.path.clone();
        let sqlite = |source| sqlite_error(&path, source);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
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
        let path = self.path.clone();
        let sqlite = |source| sqlite_error(&path, source);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
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
        let path = self.path.clone();
        let sqlite = |source| sqlite_error(&path, source);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
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
        let path = self.path.clone();
        let sqlite = |source| sqlite_error(&path, source);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
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
                path: self.path.clone(),
                study: self.study_name.clone(),
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

    /// Stores free-form metadata of the study (e.g. `strategy`, `seed`, `started`),
    /// replacing an earlier value of `key`; committed before returning. `schema_version` is
    /// reserved.
    pub fn set_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        if key == SCHEMA_KEY {
            return Err(StoreError::ReservedKey {
                path: self.path.clone(),
                key: key.to_string(),
            });
        }
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
        if key == SCHEMA_KEY {
            return Err(StoreError::ReservedKey {
                path: self.path.clone(),
                key: key.to_string(),
            });
        }
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
                study: 1,
                study_name: DEFAULT_STUDY.to_string(),
                copy: None,
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
            study: 1,
            study_name: DEFAULT_STUDY.to_string(),
            copy: None,
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

    /// Makes the tables of a new, empty database.
    fn create(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let open_error = |source| open_error(&path, source);
        // Write-ahead logging is a property of the file; it cannot change inside a transaction.
        // Switching needs the file to itself, and SQLite answers "locked" at once (without its
        // busy handler) while another process creating the same new file holds it: retry for
        // as long as any other wait.
        let deadline =
            std::time::Instant::now() + std::time::Duration::from_millis(BUSY_TIMEOUT_MS);
        loop {
            match self
                .conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            {
                Ok(_) => break,
                Err(e)
                    if matches!(
                        e.sqlite_error_code(),
                        Some(
                            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                        )
                    ) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => return Err(open_error(e)),
            }
        }
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
            tx.execute_batch(META_TABLE).map_err(open_error)?;
            tx.execute_batch(STUDY_TABLES).map_err(open_error)?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)",
                [SCHEMA_KEY, &SCHEMA_VERSION.to_string()],
            )
            .map_err(open_error)?;
        }
        tx.commit().map_err(open_error)?;
        if tables != 0 {
            let version = self.check_schema()?;
            if version < SCHEMA_VERSION {
                self.upgrade(version)?;
            }
        }
        Ok(())
    }

    /// Finds the study `name`, creating it for `fingerprint` when it does not exist.
    fn enter_study(&mut self, name: &str, fingerprint: &Fingerprint) -> Result<(), StoreError> {
        let json = serde_json::to_string(fingerprint).map_err(|e| self.corrupt(e.to_string()))?;
        let path = self.path.clone();
        let sqlite = |source| sqlite_error(&path, source);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        tx.execute(
            &format!(
                "INSERT OR IGNORE INTO studies (name, fingerprint, created) VALUES (?1, ?2, {NOW})"
            ),
            params![name, json],
        )
        .map_err(sqlite)?;
        let id: i64 = tx
            .query_row("SELECT id FROM studies WHERE name = ?1", [name], |r| {
                r.get(0)
            })
            .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        self.study = id;
        self.study_name = name.to_string();
        Ok(())
    }

    /// Checks that the file is a ktune database of a version this crate reads; its version.
    fn check_schema(&mut self) -> Result<i64, StoreError> {
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
        let has = |t: &str| tables.iter().any(|n| n == t);
        if !(has("meta") && has("evaluations") && (has("studies") || has("fingerprint"))) {
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
        match version.as_deref().map(str::trim) {
            None => Err(self.damaged_or(not_ours())),
            Some(v @ ("1" | "2" | "3" | "4")) => {
                let v: i64 = v.parse().unwrap_or(SCHEMA_VERSION);
                if (v == SCHEMA_VERSION) != has("studies") {
                    return Err(self.damaged_or(not_ours()));
                }
                Ok(v)
            }
            Some(_) => Err(StoreError::SchemaVersion {
                path: self.path.clone(),
                found: version.unwrap_or_default(),
            }),
        }
    }

    /// Upgrades a file of an older `version` in place, in one transaction.
    fn upgrade(&mut self, version: i64) -> Result<(), StoreError> {
        let columns = match version {
            1 => format!("{ADD_OBSERVED}; {ADD_SAMPLES};"),
            2 => format!("{ADD_SAMPLES};"),
            _ => String::new(),
        };
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| sqlite_error(&path, e))?;
        // Another process may have upgraded it since we looked.
        let now: String = tx
            .query_row(
                "SELECT CAST(value AS TEXT) FROM meta WHERE key = ?1",
                [SCHEMA_KEY],
                |r| r.get(0),
            )
            .map_err(|e| sqlite_error(&path, e))?;
        if now.trim() == version.to_string() {
            tx.execute_batch(&format!(
                "{columns} ALTER TABLE evaluations RENAME TO evaluations_v3; \
                 {STUDY_TABLES} {UPGRADE_3_TO_4}"
            ))
            .map_err(|e| sqlite_error(&path, e))?;
        }
        tx.commit().map_err(|e| sqlite_error(&path, e))
    }

    /// A read-only file of an older version, read through an upgraded temporary copy.
    fn upgraded_copy(self, version: i64) -> Result<Store, StoreError> {
        static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let copy = std::env::temp_dir().join(format!(
            "ktune-upgrade-{}-{}.db",
            std::process::id(),
            COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&copy);
        self.conn
            .execute("VACUUM INTO ?1", [copy.to_string_lossy()])
            .map_err(|e| self.sqlite(e))?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut upgraded = Store::connect(&copy, flags)?;
        upgraded.copy = Some(copy.clone());
        upgraded.upgrade(version)?;
        upgraded.copy = None;
        drop(upgraded);
        // Read-only again, so that nothing is written to a copy that is thrown away.
        let mut reader = Store::connect(&copy, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        reader.copy = Some(copy);
        reader.path = self.path.clone();
        Ok(reader)
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

    fn sqlite(&self, source: rusqlite::Error) -> StoreError {
        sqlite_error(&self.path, source)
    }

    /// An error reading rows: a column of the wrong type is a damaged row, not a failed
    /// query.
    fn read_error(&self, source: rusqlite::Error) -> StoreError {
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

/// Decodes one stored evaluation (of the database at `path`, for messages).
pub(crate) fn decode(path: &Path, r: RawRow) -> Result<Stored, StoreError> {
    let bad = |what: &str, e: &dyn std::fmt::Display| StoreError::Corrupt {
        path: path.to_path_buf(),
        message: format!("evaluation {}: bad {what}: {e}", r.seq),
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
        let kind = FailureKind::from_name(&r.status).ok_or_else(|| bad("status", &r.status))?;
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
        worker: r.worker,
        device: r.device,
    };
    Ok(Stored { row, outcome })
}

/// The records of `stored` as configurations of `space`; a row whose parameters or values
/// are not in `space` is an error.
pub(crate) fn study_records(
    path: &Path,
    space: &SearchSpace,
    stored: Vec<Stored>,
) -> Result<Vec<ktune_core::StudyRecord>, StoreError> {
    let names: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
    stored
        .into_iter()
        .map(|s| {
            let stored_names: Vec<&str> = s.row.params.iter().map(|(n, _)| n.as_str()).collect();
            if stored_names != names {
                return Err(space_error(
                    path,
                    format!(
                        "evaluation {} has parameters {} but the search space has {}",
                        s.row.seq,
                        stored_names.join(", "),
                        names.join(", ")
                    ),
                ));
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
                    space_error(
                        path,
                        format!(
                            "evaluation {} has values {} that are not in the search space",
                            s.row.seq,
                            shown.join(", ")
                        ),
                    )
                })?;
            Ok(ktune_core::StudyRecord {
                seq: u64::try_from(s.row.seq).unwrap_or(0),
                worker: s.row.worker.clone(),
                record: Record {
                    config,
                    outcome: s.outcome,
                    clock: s.row.clock_s,
                },
            })
        })
        .collect()
}

fn space_error(path: &Path, message: String) -> StoreError {
    StoreError::Space {
        path: path.to_path_buf(),
        message,
    }
}

/// The rows of `stored`, permutations by their items' names where `fingerprint` has them.
pub(crate) fn named_rows(fingerprint: &Fingerprint, stored: Vec<Stored>) -> Vec<Row> {
    stored
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
        .collect()
}

/// An SQLite error of the database at `path`: [`StoreError::Damaged`] where SQLite found the
/// file corrupt.
fn sqlite_error(path: &Path, source: rusqlite::Error) -> StoreError {
    if source.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) {
        return damaged(path, &source);
    }
    StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

fn damaged(path: &Path, source: &rusqlite::Error) -> StoreError {
    StoreError::Damaged {
        path: path.to_path_buf(),
        detail: match source {
            rusqlite::Error::SqliteFailure(e, Some(m)) if !m.contains(&e.to_string()) => {
                format!("{m}: {e}")
            }
            rusqlite::Error::SqliteFailure(e, _) => e.to_string(),
            other => other.to_string(),
        },
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

/// The columns of a record other than its position, study and worker.
pub(crate) struct Encoded {
    pub(crate) params_json: String,
    pub(crate) status: &'static str,
    pub(crate) values_json: String,
    pub(crate) reason: Option<String>,
    pub(crate) observed: Option<String>,
    pub(crate) samples: Option<String>,
}

/// Encodes a record's columns (shared by every storage, so that all store the same text).
pub(crate) fn encode(space: &SearchSpace, record: &Record) -> Result<Encoded, String> {
    let values = space.values(&record.config);
    let params: Vec<(&str, Json)> = space
        .params()
        .iter()
        .zip(&values)
        .map(|(p, v)| (p.name(), v.to_json()))
        .collect();
    let params_json = serde_json::to_string(&params).map_err(|e| e.to_string())?;
    let (status, metric_values, reason) = match &record.outcome {
        Outcome::Ok { values, .. } => ("ok", values.as_slice(), None),
        Outcome::Failed { kind, reason, .. } => (kind.name(), &[][..], Some(reason.clone())),
    };
    let values_json = Json::Array(metric_values.iter().map(|&v| float_json(v)).collect());
    let observed = (!record.outcome.observed().is_empty())
        .then(|| serde_json::to_string(record.outcome.observed()))
        .transpose()
        .map_err(|e| e.to_string())?;
    let samples = record
        .outcome
        .samples()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| e.to_string())?;
    Ok(Encoded {
        params_json,
        status,
        values_json: values_json.to_string(),
        reason,
        observed,
        samples,
    })
}

/// A configuration from its `config` column.
pub(crate) fn parse_config_key(key: &str) -> Option<Configuration> {
    if key.is_empty() {
        return Some(Vec::new());
    }
    key.split(',').map(|i| i.parse().ok()).collect()
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
pub(crate) struct RawRow {
    pub(crate) seq: i64,
    pub(crate) params_json: String,
    pub(crate) status: String,
    pub(crate) values_json: String,
    pub(crate) reason: Option<String>,
    pub(crate) times: [Option<f64>; 5],
    pub(crate) observed: Option<String>,
    pub(crate) samples: Option<String>,
    pub(crate) worker: Option<String>,
    pub(crate) device: Option<String>,
}

/// One decoded evaluation.
pub(crate) struct Stored {
    row: Row,
    outcome: Outcome,
}

/// The `config` column: value indices joined by commas.
pub(crate) fn config_key(config: &[u32]) -> String {
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
