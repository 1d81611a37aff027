//! [`PgStore`]: the PostgreSQL storage, for studies whose workers run on several machines.
//!
//! The tables are those of the SQLite file (schema version 4), in a schema `ktune` of the
//! database, with the same text encodings, so a study copies between the two column by
//! column. Claims, records and joins are each one transaction that first locks the study's
//! row (`SELECT … FOR UPDATE`): the budget check and the insert are then atomic across every
//! worker of the study, and the studies of one server do not wait for each other. A claim
//! is an `INSERT … ON CONFLICT DO UPDATE` and an expired claim is taken with
//! `FOR UPDATE SKIP LOCKED`. Leases use the server's clock, so workers' clocks may disagree.

use std::path::PathBuf;
use std::time::Duration;

use ::postgres::{Client, Config, NoTls, Transaction};

use crate::copy::{EvaluationRow, StudyDump, WorkerRow};
use crate::location::{claims_sql, name_list, summary, summary_sql};
use crate::pg_tls;
use crate::sqlite::SCHEMA_KEY;
use crate::{
    Fingerprint, RawRow, Row, SCHEMA_VERSION, StoreError, StudySummary, decode, named_rows, redact,
};

/// The server's clock in seconds since the epoch (not the transaction's start time: a
/// transaction that waited for the study's lock must not see its leases as younger).
const NOW: &str = "extract(epoch from clock_timestamp())::float8";

/// Creates the tables where they are missing (the first worker of a new database).
const TABLES: &str = "
CREATE SCHEMA IF NOT EXISTS ktune;
CREATE TABLE IF NOT EXISTS ktune.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ktune.studies (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    fingerprint TEXT NOT NULL,
    created DOUBLE PRECISION
);
CREATE TABLE IF NOT EXISTS ktune.study_meta (
    study BIGINT NOT NULL REFERENCES ktune.studies (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (study, key)
);
CREATE TABLE IF NOT EXISTS ktune.evaluations (
    study BIGINT NOT NULL REFERENCES ktune.studies (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    config TEXT NOT NULL,
    params_json TEXT NOT NULL,
    status TEXT NOT NULL,
    objective DOUBLE PRECISION,
    values_json TEXT NOT NULL,
    reason TEXT,
    compile DOUBLE PRECISION,
    benchmark DOUBLE PRECISION,
    verification DOUBLE PRECISION,
    framework DOUBLE PRECISION,
    clock DOUBLE PRECISION,
    observed TEXT,
    samples TEXT,
    worker TEXT,
    PRIMARY KEY (study, seq),
    UNIQUE (study, config)
);
CREATE TABLE IF NOT EXISTS ktune.claims (
    study BIGINT NOT NULL REFERENCES ktune.studies (id) ON DELETE CASCADE,
    config TEXT NOT NULL,
    worker TEXT NOT NULL,
    expires DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (study, config)
);
CREATE INDEX IF NOT EXISTS claims_by_expiry ON ktune.claims (study, expires);
CREATE TABLE IF NOT EXISTS ktune.workers (
    study BIGINT NOT NULL REFERENCES ktune.studies (id) ON DELETE CASCADE,
    worker TEXT NOT NULL,
    host TEXT NOT NULL,
    device TEXT NOT NULL,
    joined DOUBLE PRECISION,
    PRIMARY KEY (study, worker)
);
";

/// A study in a PostgreSQL database.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let fingerprint: ktune_store::Fingerprint = todo!();
/// let mut store = ktune_store::PgStore::open_study(
///     "postgresql://tuner@db.cluster/ktune", "gemm-h100", &fingerprint)?;
/// # Ok(()) }
/// ```
pub struct PgStore {
    client: Client,
    location: String,
    study: i64,
    study_name: String,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("location", &self.location)
            .field("study", &self.study_name)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgresql://user[:password]@host[:port]/db`,
    /// or the key-value form of libpq), creates ktune's tables where missing, and opens the
    /// study `name` for `fingerprint`, creating it if it does not exist. A study of that name
    /// made for another problem is refused with the differences.
    pub fn open_study(
        url: &str,
        name: &str,
        fingerprint: &Fingerprint,
    ) -> Result<PgStore, StoreError> {
        let mut store = PgStore::connect(url)?;
        store.create_tables()?;
        let json = serde_json::to_string(fingerprint).map_err(|e| store.corrupt(e.to_string()))?;
        let location = store.location.clone();
        let pg = |e| pg_error(&location, e);
        let made = store
            .client
            .query_opt(
                &format!(
                    "WITH made AS (INSERT INTO ktune.studies (name, fingerprint, created) \
                     VALUES ($1, $2, {NOW}) ON CONFLICT (name) DO NOTHING RETURNING id) \
                     SELECT id FROM made UNION ALL SELECT id FROM ktune.studies WHERE name = $1"
                ),
                &[&name, &json],
            )
            .map_err(pg)?;
        // A worker that made the study at the same moment committed after this statement's
        // snapshot was taken: the insert gave way and the select could not see it yet; a
        // new statement does.
        let row = match made {
            Some(row) => row,
            None => store
                .client
                .query_one("SELECT id FROM ktune.studies WHERE name = $1", &[&name])
                .map_err(pg)?,
        };
        store.study = row.get(0);
        store.study_name = name.to_string();
        let differences = fingerprint.differences(&store.fingerprint()?);
        if !differences.is_empty() {
            return Err(StoreError::Mismatch {
                path: PathBuf::from(format!("{}#{name}", store.location)),
                differences,
            });
        }
        Ok(store)
    }

    /// Opens an existing study for reading (`ktune results`): `name`, or the only study of
    /// the database; nothing is created.
    pub fn open_existing_study(url: &str, name: Option<&str>) -> Result<PgStore, StoreError> {
        let mut store = PgStore::open_database(url)?;
        let names = store.studies()?;
        let chosen = match name {
            Some(n) => n.to_string(),
            None if names.len() == 1 => names[0].clone(),
            None => {
                return Err(StoreError::Study {
                    path: PathBuf::from(&store.location),
                    message: if names.is_empty() {
                        "it holds no study yet".into()
                    } else {
                        format!(
                            "it holds several studies: {} (choose one with --study, or with `#study` after a prior's name)",
                            name_list(&names)
                        )
                    },
                });
            }
        };
        let id = store
            .client
            .query_opt("SELECT id FROM ktune.studies WHERE name = $1", &[&chosen])
            .map_err(|e| store.pg(e))?;
        let Some(id) = id else {
            return Err(StoreError::Study {
                path: PathBuf::from(&store.location),
                message: format!(
                    "it has no study `{chosen}`; its studies are: {} (choose one with --study, or with `#study` after a prior's name)",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        name_list(&names)
                    }
                ),
            });
        };
        store.study = id.get(0);
        store.study_name = chosen;
        Ok(store)
    }

    fn connect(url: &str) -> Result<PgStore, StoreError> {
        let location = redact(url);
        let home = std::env::home_dir();
        let (url, tls) = pg_tls::split(url, home.as_deref()).map_err(|e| StoreError::Url {
            url: location.clone(),
            reason: e.to_string(),
        })?;
        let mut config: Config = url.parse().map_err(|e: ::postgres::Error| StoreError::Url {
            url: location.clone(),
            reason: format!(
                "not a PostgreSQL connection string ({e}); e.g. postgresql://user@host:5432/database"
            ),
        })?;
        password::fill_in(&mut config, home.as_deref());
        if config.get_connect_timeout().is_none() {
            // An unreachable host must not hang a worker for minutes.
            config.connect_timeout(Duration::from_secs(15));
        }
        if config.get_application_name().is_none() {
            config.application_name("ktune");
        }
        // As in libpq, sslmode is ignored for Unix-domain sockets: PostgreSQL never offers
        // TLS on them, and they do not leave the machine.
        let local = !config.get_hosts().is_empty()
            && config
                .get_hosts()
                .iter()
                .all(|h| matches!(h, ::postgres::config::Host::Unix(_)));
        let connector = if local {
            config.ssl_mode(::postgres::config::SslMode::Disable);
            None
        } else {
            config.ssl_mode(tls.ssl_mode());
            tls.connector().map_err(|e| StoreError::Url {
                url: location.clone(),
                reason: e.to_string(),
            })?
        };
        let connected = match connector {
            Some(connector) => config.connect(connector),
            None => config.connect(NoTls),
        };
        let client = connected.map_err(|e| {
            let failed_tls = tls_failure(&e);
            let mut error = pg_error(&location, e);
            if let (true, StoreError::Postgres { detail, .. }) = (failed_tls, &mut error) {
                let hint = tls.hint(detail);
                detail.push_str(&format!(" ({hint})"));
            }
            error
        })?;
        Ok(PgStore {
            client,
            location,
            study: 0,
            study_name: String::new(),
        })
    }

    /// Creates the schema where missing, once: concurrent first workers wait for each other
    /// on an advisory lock (`CREATE … IF NOT EXISTS` alone races in PostgreSQL).
    fn create_tables(&mut self) -> Result<(), StoreError> {
        let location = self.location.clone();
        let pg = |e| pg_error(&location, e);
        let mut tx = self.client.transaction().map_err(pg)?;
        tx.execute("SELECT pg_advisory_xact_lock(7407016323)", &[])
            .map_err(pg)?;
        tx.batch_execute(TABLES).map_err(pg)?;
        tx.execute(
            "INSERT INTO ktune.meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
            &[&SCHEMA_KEY, &SCHEMA_VERSION.to_string()],
        )
        .map_err(pg)?;
        tx.commit().map_err(pg)?;
        self.check_schema()
    }

    fn check_schema(&mut self) -> Result<(), StoreError> {
        let version: Option<String> = self
            .client
            .query_opt(
                "SELECT value FROM ktune.meta WHERE key = $1",
                &[&SCHEMA_KEY],
            )
            .map_err(|e| self.pg(e))?
            .map(|r| r.get(0));
        match version.as_deref().map(str::trim) {
            Some(v) if v == SCHEMA_VERSION.to_string() => Ok(()),
            other => Err(StoreError::SchemaVersion {
                path: PathBuf::from(&self.location),
                found: other.unwrap_or("none").to_string(),
            }),
        }
    }

    /// Connects to a database that holds ktune's tables, at no study yet (nothing is
    /// created).
    pub(crate) fn open_database(url: &str) -> Result<PgStore, StoreError> {
        let mut store = PgStore::connect(url)?;
        let has_tables: bool = store
            .client
            .query_one("SELECT to_regclass('ktune.studies') IS NOT NULL", &[])
            .map_err(|e| store.pg(e))?
            .get(0);
        if !has_tables {
            return Err(StoreError::Study {
                path: PathBuf::from(&store.location),
                message: "the database holds no ktune study (no `ktune` schema)".into(),
            });
        }
        store.check_schema()?;
        Ok(store)
    }

    /// The configurations claimed now, per study and worker (see
    /// [`crate::Location::live_claims`]).
    pub fn live_claims(&mut self) -> Result<Vec<(String, String, u64)>, StoreError> {
        let rows = self
            .client
            .query(&claims_sql("ktune.", NOW), &[])
            .map_err(|e| self.pg(e))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get::<_, i64>(2).max(0) as u64))
            .collect())
    }

    /// Every study in the database, summarised, oldest first.
    pub fn summaries(&mut self) -> Result<Vec<StudySummary>, StoreError> {
        let rows = self
            .client
            .query(&summary_sql("ktune.", NOW), &[])
            .map_err(|e| self.pg(e))?;
        Ok(rows
            .iter()
            .map(|r| {
                summary(
                    r.get(0),
                    r.get(1),
                    r.get(2),
                    r.get(3),
                    r.get(4),
                    r.get(5),
                    r.get(6),
                    r.get(7),
                    r.get(8),
                    r.get(9),
                )
            })
            .collect())
    }

    /// The server and database, without the password.
    pub fn location_url(&self) -> &str {
        &self.location
    }

    /// The names of every study in the database, oldest first.
    pub fn studies(&mut self) -> Result<Vec<String>, StoreError> {
        let rows = self
            .client
            .query("SELECT name FROM ktune.studies ORDER BY id", &[])
            .map_err(|e| self.pg(e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// The fingerprint the study was made for.
    pub fn fingerprint(&mut self) -> Result<Fingerprint, StoreError> {
        let text: String = self
            .client
            .query_one(
                "SELECT fingerprint FROM ktune.studies WHERE id = $1",
                &[&self.study],
            )
            .map_err(|e| self.pg(e))?
            .get(0);
        serde_json::from_str(&text).map_err(|e| self.corrupt(format!("bad fingerprint: {e}")))
    }

    /// Every evaluation of the study as a [`Row`], in order.
    pub fn rows(&mut self) -> Result<Vec<Row>, StoreError> {
        let fingerprint = self.fingerprint()?;
        Ok(named_rows(&fingerprint, self.stored(None)?))
    }

    /// The whole study, column by column (see [`Store::import`](crate::Store::import)).
    pub fn dump(&mut self) -> Result<StudyDump, StoreError> {
        let location = self.location.clone();
        let pg = |e| pg_error(&location, e);
        let study = self.study;
        // One snapshot, so that a study being written to copies consistently.
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(::postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(pg)?;
        let head = tx
            .query_one(
                "SELECT name, fingerprint, created FROM ktune.studies WHERE id = $1",
                &[&study],
            )
            .map_err(pg)?;
        let meta = tx
            .query(
                "SELECT key, value FROM ktune.study_meta WHERE study = $1 ORDER BY key",
                &[&study],
            )
            .map_err(pg)?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let workers = tx
            .query(
                "SELECT worker, host, device, joined FROM ktune.workers WHERE study = $1 \
                 ORDER BY joined, worker",
                &[&study],
            )
            .map_err(pg)?
            .iter()
            .map(|r| WorkerRow {
                worker: r.get(0),
                host: r.get(1),
                device: r.get(2),
                joined: r.get(3),
            })
            .collect();
        let evaluations = tx
            .query(
                "SELECT seq, config, params_json, status, objective, values_json, reason, \
                 compile, benchmark, verification, framework, clock, observed, samples, worker \
                 FROM ktune.evaluations WHERE study = $1 ORDER BY seq",
                &[&study],
            )
            .map_err(pg)?
            .iter()
            .map(|r| EvaluationRow {
                seq: r.get(0),
                config: r.get(1),
                params_json: r.get(2),
                status: r.get(3),
                objective: r.get(4),
                values_json: r.get(5),
                reason: r.get(6),
                times: [r.get(7), r.get(8), r.get(9), r.get(10), r.get(11)],
                observed: r.get(12),
                samples: r.get(13),
                worker: r.get(14),
            })
            .collect();
        tx.commit().map_err(pg)?;
        Ok(StudyDump {
            name: head.get(0),
            fingerprint: head.get(1),
            created: head.get(2),
            meta,
            workers,
            evaluations,
        })
    }

    /// Deletes the study and everything in it (its records, claims, workers and metadata).
    pub fn delete_study(&mut self) -> Result<(), StoreError> {
        self.client
            .execute("DELETE FROM ktune.studies WHERE id = $1", &[&self.study])
            .map_err(|e| self.pg(e))?;
        Ok(())
    }

    fn stored(&mut self, after: Option<u64>) -> Result<Vec<crate::Stored>, StoreError> {
        let after = after.map_or(-1, |a| i64::try_from(a).unwrap_or(i64::MAX));
        let rows = self
            .client
            .query(
                "SELECT e.seq, e.params_json, e.status, e.values_json, e.reason, e.compile, \
                 e.benchmark, e.verification, e.framework, e.clock, e.observed, e.samples, \
                 e.worker, w.device FROM ktune.evaluations e \
                 LEFT JOIN ktune.workers w ON w.study = e.study AND w.worker = e.worker \
                 WHERE e.study = $1 AND e.seq > $2 ORDER BY e.seq",
                &[&self.study, &after],
            )
            .map_err(|e| self.pg(e))?;
        let path = PathBuf::from(&self.location);
        rows.iter()
            .map(|r| {
                decode(
                    &path,
                    RawRow {
                        seq: r.get(0),
                        params_json: r.get(1),
                        status: r.get(2),
                        values_json: r.get(3),
                        reason: r.get(4),
                        times: [r.get(5), r.get(6), r.get(7), r.get(8), r.get(9)],
                        observed: r.get(10),
                        samples: r.get(11),
                        worker: r.get(12),
                        device: r.get(13),
                    },
                )
            })
            .collect()
    }

    /// Starts a transaction holding the study's row lock: claims, records and joins of the
    /// study's workers run one after another.
    fn locked(&mut self) -> Result<Transaction<'_>, StoreError> {
        let location = self.location.clone();
        let mut tx = self
            .client
            .transaction()
            .map_err(|e| pg_error(&location, e))?;
        tx.execute(
            "SELECT id FROM ktune.studies WHERE id = $1 FOR UPDATE",
            &[&self.study],
        )
        .map_err(|e| pg_error(&location, e))?;
        Ok(tx)
    }

    fn pg(&self, source: ::postgres::Error) -> StoreError {
        pg_error(&self.location, source)
    }

    fn corrupt(&self, message: String) -> StoreError {
        StoreError::Corrupt {
            path: PathBuf::from(&self.location),
            message,
        }
    }
}

/// How much of the study's budget is used: its records and its live claims but the one on
/// `except`.
fn used(tx: &mut Transaction<'_>, study: i64, except: &str) -> Result<i64, ::postgres::Error> {
    Ok(tx
        .query_one(
            &format!(
                "SELECT (SELECT COUNT(*) FROM ktune.evaluations WHERE study = $1) + \
                 (SELECT COUNT(*) FROM ktune.claims WHERE study = $1 AND expires > {NOW} \
                 AND config <> $2)"
            ),
            &[&study, &except],
        )?
        .get::<_, Option<i64>>(0)
        .unwrap_or(0))
}

/// Whether a connection failed in its TLS handshake (a certificate refused, no TLS on the
/// server), where the message gains what was checked.
fn tls_failure(error: &::postgres::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(c) = cause {
        let inner = c
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|e| e as &(dyn std::error::Error + 'static));
        if c.is::<rustls::Error>() || inner.is_some_and(|e| e.is::<rustls::Error>()) {
            return true;
        }
        cause = c.source();
    }
    error.to_string().contains("TLS")
}

fn pg_error(location: &str, source: ::postgres::Error) -> StoreError {
    let detail = match source.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut text = source.to_string();
            let mut cause = std::error::Error::source(&source);
            while let Some(c) = cause {
                let more = c.to_string();
                if !text.contains(&more) {
                    text = format!("{text}: {more}");
                }
                cause = c.source();
            }
            text
        }
    };
    StoreError::Postgres {
        location: location.to_string(),
        detail,
        source,
    }
}

mod password;
mod storage;
#[cfg(test)]
mod tests;
