//! The SQLite file's tables: made in a new file, upgraded from older schema versions (in
//! place, or through a temporary copy when the file is read-only), and opened read-only
//! (immutable where the directory cannot be written).

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::NOW;
use super::{
    ADD_OBSERVED, ADD_SAMPLES, BUSY_TIMEOUT_MS, DEFAULT_STUDY, SCHEMA_KEY, SCHEMA_VERSION, Store,
};
use crate::{Fingerprint, StoreError, open_error, sqlite_error};

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

impl Store {
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
                older_state: false,
            }
        } else {
            Store::connect(path, flags)?
        };
        store.table_count()?;
        Ok(store)
    }

    pub(crate) fn connect(path: &Path, flags: OpenFlags) -> Result<Store, StoreError> {
        let conn =
            Connection::open_with_flags(path, flags).map_err(|source| open_error(path, source))?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
            study: 1,
            study_name: DEFAULT_STUDY.to_string(),
            copy: None,
            older_state: false,
        };
        store
            .conn
            .busy_timeout(std::time::Duration::from_millis(BUSY_TIMEOUT_MS))
            .map_err(|e| store.sqlite(e))?;
        Ok(store)
    }

    /// How many tables the file has; the first read, so a file that is not SQLite fails here.
    /// Opens `path` for writing: ktune's tables created in a new file, an older ktune file
    /// upgraded to this version, anything else refused.
    pub(crate) fn open_writable(path: &Path) -> Result<Store, StoreError> {
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
        Ok(store)
    }

    pub(crate) fn table_count(&self) -> Result<i64, StoreError> {
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
    pub(crate) fn create(&mut self) -> Result<(), StoreError> {
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
    pub(super) fn enter_study(
        &mut self,
        name: &str,
        fingerprint: &Fingerprint,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(fingerprint).map_err(|e| self.corrupt(e.to_string()))?;
        let (tx, path) = self.write()?;
        let sqlite = |source| sqlite_error(&path, source);
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
    pub(crate) fn check_schema(&mut self) -> Result<i64, StoreError> {
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
    pub(super) fn upgrade(&mut self, version: i64) -> Result<(), StoreError> {
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
    pub(super) fn upgraded_copy(self, version: i64) -> Result<Store, StoreError> {
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
        reader.older_state = self.older_state;
        Ok(reader)
    }
}

/// Whether a database has no write-ahead log with content (none, or an empty one).
pub(crate) fn wal_is_empty(path: &Path) -> bool {
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
