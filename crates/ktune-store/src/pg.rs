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
use ktune_core::{Claim, CoreError, Record, Recorded, Storage, StudyRecord, Worker};
use ktune_space::{Configuration, SearchSpace};

use crate::copy::{EvaluationRow, StudyDump, WorkerRow};
use crate::pg_tls;
use crate::{
    Fingerprint, RawRow, Row, SCHEMA_KEY, SCHEMA_VERSION, StoreError, StudySummary, config_key,
    decode, encode, name_list, named_rows, parse_config_key, redact, study_records, summary,
    summary_sql,
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
                            "it holds several studies: {} (choose one with --study)",
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
                    "it has no study `{chosen}`; its studies are: {} (choose one with --study)",
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

    /// Every study in the database, summarised, oldest first.
    pub fn summaries(&mut self) -> Result<Vec<StudySummary>, StoreError> {
        let rows = self
            .client
            .query(&summary_sql("ktune."), &[])
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

impl Storage for PgStore {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn study(&self) -> &str {
        &self.study_name
    }

    fn join(&mut self, worker: &Worker, allow_mixed_hardware: bool) -> Result<usize, CoreError> {
        let (location, study, name) = (self.location.clone(), self.study, self.study_name.clone());
        let pg = |e| pg_error(&location, e);
        let mut tx = self.locked()?;
        let others: Vec<String> = tx
            .query(
                "SELECT device, host FROM ktune.workers WHERE study = $1 AND device <> $2 \
                 GROUP BY device, host ORDER BY MIN(joined) LIMIT 3",
                &[&study, &worker.device],
            )
            .map_err(pg)?
            .iter()
            .map(|r| format!("{} on {}", r.get::<_, String>(0), r.get::<_, String>(1)))
            .collect();
        if !others.is_empty() && !allow_mixed_hardware {
            return Err(StoreError::MixedHardware {
                path: PathBuf::from(&location),
                study: name,
                device: worker.device.clone(),
                others,
            }
            .into());
        }
        // Under the study's lock, like the insert, so that workers joining at once get
        // distinct ranks.
        let rank: i64 = tx
            .query_one(
                "SELECT COUNT(*) FROM ktune.workers WHERE study = $1 AND worker <> $2",
                &[&study, &worker.id],
            )
            .map_err(pg)?
            .get(0);
        tx.execute(
            &format!(
                "INSERT INTO ktune.workers (study, worker, host, device, joined) \
                 VALUES ($1, $2, $3, $4, {NOW}) ON CONFLICT (study, worker) DO UPDATE \
                 SET host = EXCLUDED.host, device = EXCLUDED.device, joined = EXCLUDED.joined"
            ),
            &[&study, &worker.id, &worker.host, &worker.device],
        )
        .map_err(pg)?;
        tx.commit().map_err(pg)?;
        Ok(rank as usize)
    }

    fn claim(
        &mut self,
        config: &Configuration,
        worker: &str,
        lease: Duration,
        budget: Option<usize>,
    ) -> Result<Claim, CoreError> {
        let key = config_key(config);
        let (location, study) = (self.location.clone(), self.study);
        let pg = |e| pg_error(&location, e);
        let mut tx = self.locked()?;
        let recorded = tx
            .query_opt(
                "SELECT 1 FROM ktune.evaluations WHERE study = $1 AND config = $2",
                &[&study, &key],
            )
            .map_err(pg)?
            .is_some();
        if recorded {
            return Ok(Claim::Recorded);
        }
        let holder: Option<String> = tx
            .query_opt(
                &format!(
                    "SELECT worker FROM ktune.claims WHERE study = $1 AND config = $2 \
                     AND expires > {NOW}"
                ),
                &[&study, &key],
            )
            .map_err(pg)?
            .map(|r| r.get(0));
        match holder {
            Some(h) if h != worker => return Ok(Claim::Held),
            Some(_) => {}
            None => {
                if let Some(budget) = budget
                    && used(&mut tx, study, &key).map_err(pg)? >= budget as i64
                {
                    return Ok(Claim::BudgetSpent);
                }
            }
        }
        tx.execute(
            &format!(
                "INSERT INTO ktune.claims (study, config, worker, expires) \
                 VALUES ($1, $2, $3, {NOW} + $4) ON CONFLICT (study, config) DO UPDATE \
                 SET worker = EXCLUDED.worker, expires = EXCLUDED.expires"
            ),
            &[&study, &key, &worker, &lease.as_secs_f64()],
        )
        .map_err(pg)?;
        tx.commit().map_err(pg)?;
        Ok(Claim::Granted)
    }

    fn claim_expired(
        &mut self,
        space: &SearchSpace,
        worker: &str,
        lease: Duration,
        budget: Option<usize>,
    ) -> Result<Option<Configuration>, CoreError> {
        let (location, study) = (self.location.clone(), self.study);
        let pg = |e| pg_error(&location, e);
        let mut tx = self.locked()?;
        let expired: Option<String> = tx
            .query_opt(
                &format!(
                    "SELECT config FROM ktune.claims WHERE study = $1 AND expires <= {NOW} \
                     ORDER BY expires LIMIT 1 FOR UPDATE SKIP LOCKED"
                ),
                &[&study],
            )
            .map_err(pg)?
            .map(|r| r.get(0));
        let Some(key) = expired else {
            return Ok(None);
        };
        if let Some(budget) = budget
            && used(&mut tx, study, &key).map_err(pg)? >= budget as i64
        {
            return Ok(None);
        }
        tx.execute(
            &format!(
                "UPDATE ktune.claims SET worker = $3, expires = {NOW} + $4 \
                 WHERE study = $1 AND config = $2"
            ),
            &[&study, &key, &worker, &lease.as_secs_f64()],
        )
        .map_err(pg)?;
        tx.commit().map_err(pg)?;
        let config = parse_config_key(&key)
            .filter(|c| space.is_in_bounds(c))
            .ok_or_else(|| {
                self.corrupt(format!("claim of a configuration `{key}` not in the space"))
            })?;
        Ok(Some(config))
    }

    fn record(
        &mut self,
        space: &SearchSpace,
        worker: &str,
        record: &Record,
        budget: Option<usize>,
    ) -> Result<Recorded, CoreError> {
        if !space.is_in_bounds(&record.config) {
            return Err(StoreError::Space {
                path: PathBuf::from(&self.location),
                message: format!(
                    "configuration {:?} is not in the search space ({} parameters)",
                    record.config,
                    space.dims()
                ),
            }
            .into());
        }
        let encoded = encode(space, record).map_err(|e| self.corrupt(e))?;
        let key = config_key(&record.config);
        let (location, study) = (self.location.clone(), self.study);
        let pg = |e| pg_error(&location, e);
        let mut tx = self.locked()?;
        let existing: Option<i64> = tx
            .query_opt(
                "SELECT seq FROM ktune.evaluations WHERE study = $1 AND config = $2",
                &[&study, &key],
            )
            .map_err(pg)?
            .map(|r| r.get(0));
        if let Some(seq) = existing {
            return Ok(Recorded::Duplicate(u64::try_from(seq).unwrap_or(0)));
        }
        if let Some(budget) = budget {
            let holds = tx
                .query_opt(
                    &format!(
                        "SELECT 1 FROM ktune.claims WHERE study = $1 AND config = $2 \
                         AND worker = $3 AND expires > {NOW}"
                    ),
                    &[&study, &key, &worker],
                )
                .map_err(pg)?
                .is_some();
            if !holds && used(&mut tx, study, &key).map_err(pg)? >= budget as i64 {
                return Ok(Recorded::OverBudget);
            }
        }
        let t = record.outcome.timings();
        let seq: i64 = tx
            .query_one(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM ktune.evaluations WHERE study = $1",
                &[&study],
            )
            .map_err(pg)?
            .get(0);
        tx.execute(
            "INSERT INTO ktune.evaluations (study, seq, config, params_json, status, \
                 objective, values_json, reason, compile, benchmark, verification, framework, \
                 clock, observed, samples, worker) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
            &[
                &study,
                &seq,
                &key,
                &encoded.params_json,
                &encoded.status,
                &record.outcome.objective(),
                &encoded.values_json,
                &encoded.reason,
                &t.compile,
                &t.benchmark,
                &t.verification,
                &t.framework,
                &record.clock,
                &encoded.observed,
                &encoded.samples,
                &worker,
            ],
        )
        .map_err(pg)?;
        tx.execute(
            "DELETE FROM ktune.claims WHERE study = $1 AND config = $2",
            &[&study, &key],
        )
        .map_err(pg)?;
        tx.commit().map_err(pg)?;
        Ok(Recorded::New(u64::try_from(seq).unwrap_or(0)))
    }

    fn records_since(
        &mut self,
        space: &SearchSpace,
        after: Option<u64>,
    ) -> Result<Vec<StudyRecord>, CoreError> {
        let stored = self.stored(after)?;
        Ok(study_records(
            &PathBuf::from(&self.location),
            space,
            stored,
        )?)
    }

    fn evaluations(&mut self) -> Result<usize, CoreError> {
        let n: i64 = self
            .client
            .query_one(
                "SELECT COUNT(*) FROM ktune.evaluations WHERE study = $1",
                &[&self.study],
            )
            .map_err(|e| pg_error(&self.location, e))?
            .get(0);
        Ok(usize::try_from(n).unwrap_or(0))
    }

    fn heartbeat(&mut self, worker: &str, lease: Duration) -> Result<usize, CoreError> {
        let n = self
            .client
            .execute(
                &format!(
                    "UPDATE ktune.claims SET expires = {NOW} + $3 WHERE study = $1 \
                     AND worker = $2 AND expires > {NOW}"
                ),
                &[&self.study, &worker, &lease.as_secs_f64()],
            )
            .map_err(|e| self.pg(e))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn release(&mut self, worker: &str) -> Result<usize, CoreError> {
        let n = self
            .client
            .execute(
                "DELETE FROM ktune.claims WHERE study = $1 AND worker = $2",
                &[&self.study, &worker],
            )
            .map_err(|e| self.pg(e))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn release_expired(&mut self) -> Result<usize, CoreError> {
        let n = self
            .client
            .execute(
                &format!("DELETE FROM ktune.claims WHERE study = $1 AND expires <= {NOW}"),
                &[&self.study],
            )
            .map_err(|e| self.pg(e))?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<(), CoreError> {
        self.client
            .execute(
                "INSERT INTO ktune.study_meta (study, key, value) VALUES ($1, $2, $3) \
                 ON CONFLICT (study, key) DO UPDATE SET value = EXCLUDED.value",
                &[&self.study, &key, &value],
            )
            .map_err(|e| self.pg(e))?;
        Ok(())
    }

    fn meta(&mut self, key: &str) -> Result<Option<String>, CoreError> {
        Ok(self
            .client
            .query_opt(
                "SELECT value FROM ktune.study_meta WHERE study = $1 AND key = $2",
                &[&self.study, &key],
            )
            .map_err(|e| self.pg(e))?
            .map(|r| r.get(0)))
    }

    fn meta_or_insert(&mut self, key: &str, value: &str) -> Result<String, CoreError> {
        // The no-op update makes RETURNING give the row that was there first.
        Ok(self
            .client
            .query_one(
                "INSERT INTO ktune.study_meta (study, key, value) VALUES ($1, $2, $3) \
                 ON CONFLICT (study, key) DO UPDATE SET value = ktune.study_meta.value \
                 RETURNING value",
                &[&self.study, &key, &value],
            )
            .map_err(|e| self.pg(e))?
            .get(0))
    }
}

#[cfg(test)]
mod tests {
    use ktune_core::{Outcome, Record, Storage, Timings, Worker};
    use ktune_space::{Parameter, SearchSpace};

    use super::PgStore;
    use crate::{Fingerprint, Location, Store, StoreError, conformance};

    /// The test server's URL (`scripts/test.sh` starts one), or `None` after saying why the
    /// test is skipped.
    fn server() -> Option<String> {
        match std::env::var("KTUNE_PG_URL") {
            Ok(url) if !url.is_empty() => Some(url),
            _ => {
                eprintln!(
                    "SKIPPED: no PostgreSQL server: {} (run the tests with `bash scripts/test.sh`, which starts one, or set KTUNE_PG_URL)",
                    std::env::var("KTUNE_PG_SKIP")
                        .unwrap_or_else(|_| "KTUNE_PG_URL is not set".into())
                );
                None
            }
        }
    }

    /// The test server's URL and the directory of its test certificates (`ca.pem`,
    /// `other-ca.pem`, `client.pem`, `client.key`), where `scripts/test.sh` made them: in
    /// the server's folder, which also holds its Unix-domain socket.
    fn tls_server() -> Option<(String, std::path::PathBuf)> {
        let url = server()?;
        match std::env::var("KTUNE_PG_TLS") {
            Ok(dir) if !dir.is_empty() => Some((url, dir.into())),
            _ => {
                eprintln!(
                    "SKIPPED: the PostgreSQL server has no TLS: {}",
                    std::env::var("KTUNE_PG_TLS_SKIP").unwrap_or_else(|_| {
                        "KTUNE_PG_TLS is not set (scripts/test.sh sets it)".into()
                    })
                );
                None
            }
        }
    }

    /// Whether the store's connection is encrypted, as the server sees it.
    fn encrypted(store: &mut PgStore) -> bool {
        store
            .client
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .unwrap()
            .get(0)
    }

    /// Each `sslmode` encrypts and checks what libpq's does: the test server's certificate is
    /// signed by `ca.pem` for the name `localhost` only.
    #[test]
    fn tls_modes_encrypt_and_check_as_in_libpq() {
        let Some((url, dir)) = tls_server() else {
            return;
        };
        let ca = dir.join("ca.pem").display().to_string();
        let other = dir.join("other-ca.pem").display().to_string();
        let by_name = url.replace("127.0.0.1", "localhost");
        let connect = |url: &str| PgStore::connect(url);
        // The default, prefer, encrypts when the server offers TLS.
        assert!(encrypted(&mut connect(&url).unwrap()));
        assert!(!encrypted(
            &mut connect(&format!("{url}?sslmode=disable")).unwrap()
        ));
        assert!(encrypted(
            &mut connect(&format!("{url}?sslmode=require")).unwrap()
        ));
        let full = format!("{by_name}?sslmode=verify-full&sslrootcert={ca}");
        assert!(encrypted(&mut connect(&full).unwrap()));
        // verify-ca checks the chain only, so the address works where the name is expected.
        assert!(encrypted(
            &mut connect(&format!("{url}?sslmode=verify-ca&sslrootcert={ca}")).unwrap()
        ));
        let e = connect(&format!("{url}?sslmode=verify-full&sslrootcert={ca}")).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, StoreError::Postgres { .. })
                && text.contains("not valid for name")
                && text.contains("host name were checked against")
                && text.contains("ca.pem"),
            "{text}"
        );
        // A certificate signed by another CA is refused, even by verify-ca and by require
        // with a root certificate.
        for mode in ["verify-ca", "require"] {
            let e = connect(&format!("{by_name}?sslmode={mode}&sslrootcert={other}")).unwrap_err();
            let text = e.to_string();
            assert!(
                text.contains("UnknownIssuer") && text.contains(&format!("sslmode={mode}")),
                "{mode}: {text}"
            );
        }
        // On the server's Unix-domain socket (in the folder above the certificates') sslmode
        // is ignored, as in libpq: there is no TLS there.
        let port = url.rsplit_once(':').unwrap().1.split('/').next().unwrap();
        let socket_dir = dir.parent().unwrap().display().to_string();
        let socket = format!(
            "postgresql://postgres@{}:{port}/postgres?sslmode=verify-full&sslrootcert={ca}",
            socket_dir.replace('/', "%2F")
        );
        assert!(!encrypted(&mut connect(&socket).unwrap()));
        // A missing root certificate is named before anything is sent.
        let e = connect(&format!("{url}?sslmode=verify-ca&sslrootcert=/no/such.pem")).unwrap_err();
        assert!(
            matches!(e, StoreError::Url { .. }) && e.to_string().contains("/no/such.pem"),
            "{e}"
        );
    }

    /// The whole storage works over a checked TLS connection.
    #[test]
    fn postgres_over_verified_tls_passes_the_storage_conformance_suite() {
        let Some((url, dir)) = tls_server() else {
            return;
        };
        let url = format!(
            "{}?sslmode=verify-full&sslrootcert={}",
            url.replace("127.0.0.1", "localhost"),
            dir.join("ca.pem").display()
        );
        conformance::run_all(&|study, fingerprint| {
            let mut store = PgStore::open_study(&url, study, fingerprint)?;
            assert!(encrypted(&mut store));
            Ok(Box::new(store))
        });
    }

    /// A role that may log in only with a client certificate (`cert` in pg_hba.conf) logs in
    /// with `sslcert` and `sslkey`, and is refused without them.
    #[test]
    fn client_certificates_log_in() {
        let Some((url, dir)) = tls_server() else {
            return;
        };
        let mut admin = PgStore::connect(&url).unwrap();
        admin
            .client
            .batch_execute(
                "DO $$ BEGIN CREATE ROLE ktune_cert LOGIN; \
                 EXCEPTION WHEN duplicate_object THEN NULL; END $$",
            )
            .unwrap();
        let as_cert = url
            .replace("postgres@", "ktune_cert@")
            .replace("127.0.0.1", "localhost");
        let ca = dir.join("ca.pem").display().to_string();
        let mut store = PgStore::connect(&format!(
            "{as_cert}?sslmode=verify-full&sslrootcert={ca}&sslcert={}&sslkey={}",
            dir.join("client.pem").display(),
            dir.join("client.key").display()
        ))
        .unwrap();
        assert!(encrypted(&mut store));
        let user: String = store
            .client
            .query_one("SELECT current_user::text", &[])
            .unwrap()
            .get(0);
        assert_eq!(user, "ktune_cert");
        let e = PgStore::connect(&format!("{as_cert}?sslmode=verify-full&sslrootcert={ca}"))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("requires a valid client certificate"),
            "{e}"
        );
    }

    fn unique(name: &str) -> String {
        format!(
            "{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        )
    }

    #[test]
    fn postgres_passes_the_storage_conformance_suite() {
        let Some(url) = server() else { return };
        conformance::run_all(&|study, fingerprint| {
            Ok(Box::new(PgStore::open_study(&url, study, fingerprint)?))
        });
    }

    #[test]
    fn postgres_studies_are_summarised() {
        let Some(url) = server() else { return };
        crate::tests::studies_are_summarised(&Location::parse(&url).unwrap());
    }

    /// Sixteen workers starting at the same moment on a study that does not exist yet (a
    /// Slurm job's first seconds) all open the one study.
    #[test]
    fn workers_starting_together_make_one_study() {
        let Some(url) = server() else { return };
        let space = conformance::space();
        let fp = Fingerprint::new(&space, "{}", "time");
        let name = unique("together");
        let barrier = std::sync::Barrier::new(16);
        let studies: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        let s = PgStore::open_study(&url, &name, &fp).unwrap();
                        format!("{}", s.study)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(studies.windows(2).all(|w| w[0] == w[1]), "{studies:?}");
        let mut one = PgStore::open_existing_study(&url, Some(&name)).unwrap();
        assert_eq!(format!("{}", one.study), studies[0]);
        one.delete_study().unwrap();
    }

    /// A study measured in PostgreSQL copies into an SQLite file that reads back the same
    /// records, rows, workers and metadata; the copy of the copy is the same again.
    #[test]
    fn a_postgres_study_exports_to_sqlite_exactly() {
        let Some(url) = server() else { return };
        let space = SearchSpace::new(
            vec![
                Parameter::integer("tile", [8, 16, 32]).unwrap(),
                Parameter::permutation("order", ["i", "j", "k"]).unwrap(),
            ],
            &["tile > 8"],
        )
        .unwrap();
        let fp = Fingerprint::new(&space, r#"{"command":"./gemm"}"#, "time");
        let name = unique("export");
        let mut pg = PgStore::open_study(&url, &name, &fp).unwrap();
        pg.join(
            &Worker {
                id: "node3:41".into(),
                host: "node3".into(),
                device: "NVIDIA H200".into(),
            },
            false,
        )
        .unwrap();
        let records: Vec<Record> = (0..6u32)
            .map(|i| Record {
                config: vec![i % 3, i],
                outcome: if i == 2 {
                    Outcome::failed(
                        ktune_core::FailureKind::Compile,
                        "ptxas: too many registers",
                        Timings::default(),
                    )
                } else {
                    Outcome::ok(
                        vec![1.0 / f64::from(i + 1)],
                        Timings {
                            compile: 0.5,
                            benchmark: f64::from(i),
                            ..Timings::default()
                        },
                    )
                },
                clock: f64::from(i) * 1.5,
            })
            .collect();
        for r in &records {
            pg.record(&space, "node3:41", r, Some(10)).unwrap();
        }
        pg.set_meta("max_evaluations", "10").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("copy.db");
        let dump = Location::Postgres(url.clone())
            .dump_study(Some(&name))
            .unwrap();
        let copy = Store::import(&file, &dump).unwrap();
        assert_eq!(copy.records(&space).unwrap(), records);
        assert_eq!(copy.rows().unwrap(), pg.rows().unwrap());
        assert_eq!(
            copy.rows().unwrap()[0].device.as_deref(),
            Some("NVIDIA H200")
        );
        assert_eq!(
            copy.rows().unwrap()[1].params[1].1,
            serde_json::json!(["i", "k", "j"])
        );
        assert_eq!(copy.meta("max_evaluations").unwrap().as_deref(), Some("10"));
        assert_eq!(copy.dump().unwrap(), dump);
        pg.delete_study().unwrap();
        let e = PgStore::open_existing_study(&url, Some(&name)).unwrap_err();
        assert!(e.to_string().contains(&format!("no study `{name}`")), "{e}");
    }

    /// A server that is not there, a wrong database and a bad URL are errors that say
    /// which and where, without the password.
    #[test]
    fn unreachable_servers_and_bad_urls_are_clear_errors() {
        let space = conformance::space();
        let fp = Fingerprint::new(&space, "{}", "time");
        // Nothing listens on port 1.
        let e = PgStore::open_study(
            "postgresql://tuner:secret@127.0.0.1:1/ktune?connect_timeout=5&sslpassword=hidden",
            "s",
            &fp,
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, StoreError::Url { .. }), "{text}");
        assert!(
            !text.contains("secret") && !text.contains("hidden"),
            "{text}"
        );
        let e = PgStore::open_study(
            "postgresql://tuner@127.0.0.1:1/ktune?connect_timeout=5&password=secret",
            "s",
            &fp,
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, StoreError::Postgres { .. }), "{text}");
        assert!(
            text.contains("postgresql://tuner@127.0.0.1:1/ktune") && !text.contains("secret"),
            "{text}"
        );
        assert!(text.to_lowercase().contains("connect"), "{text}");
        let e = PgStore::open_study("postgresql://host:notaport/db", "s", &fp).unwrap_err();
        assert!(
            matches!(e, StoreError::Url { .. }) && e.to_string().contains("e.g. postgresql://"),
            "{e}"
        );
        let Some(url) = server() else { return };
        let (base, _) = url.rsplit_once('/').unwrap();
        let e = PgStore::open_study(&format!("{base}/no_such_database"), "s", &fp).unwrap_err();
        assert!(
            e.to_string().contains("no_such_database") && e.to_string().contains("does not exist"),
            "{e}"
        );
    }

    /// A server that answers the TLS request with PostgreSQL's "no" (a minimal peer on a
    /// local port: the byte `N`), under `sslmode=require`: the message says TLS is needed
    /// and how to get it; `prefer` would go on without it and is not refused for TLS.
    #[test]
    fn a_server_without_tls_under_require_says_what_to_do() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let peer = std::thread::spawn(move || {
            // Two connections: require (refused after `N`), then prefer (goes on in plain
            // text, and gets closed).
            for _ in 0..2 {
                let (mut s, _) = listener.accept().unwrap();
                let mut request = [0u8; 8];
                s.read_exact(&mut request).unwrap();
                // Length 8, then the SSLRequest code 80877103.
                assert_eq!(request, [0, 0, 0, 8, 4, 210, 22, 47]);
                s.write_all(b"N").unwrap();
            }
        });
        let e = PgStore::connect(&format!(
            "postgresql://u@127.0.0.1:{port}/d?sslmode=require&connect_timeout=5"
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("server does not support TLS") && e.contains("(ssl = on)"),
            "{e}"
        );
        let e = PgStore::connect(&format!(
            "postgresql://u@127.0.0.1:{port}/d?connect_timeout=5"
        ))
        .unwrap_err()
        .to_string();
        assert!(!e.contains("TLS"), "{e}");
        peer.join().unwrap();
    }

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            crate::redact("postgresql://u:p@ss@h:5/d"),
            "postgresql://u@h:5/d"
        );
        assert_eq!(crate::redact("postgresql://h/d"), "postgresql://h/d");
        assert_eq!(
            crate::redact("postgresql://u@h/d?sslmode=require&password=p%40ss&sslpassword=k"),
            "postgresql://u@h/d?sslmode=require"
        );
        assert_eq!(
            crate::redact("postgresql://u:x@h/d?password=p"),
            "postgresql://u@h/d"
        );
        assert_eq!(
            crate::redact(r"host=h password='a \' b' user=u sslpassword=k dbname=d"),
            "host=h user=u dbname=d"
        );
        assert_eq!(crate::redact("host=h password = secret"), "host=h");
        assert_eq!(
            Location::parse("postgres://a:b@c/d").unwrap().display(),
            "postgres://a@c/d"
        );
    }
}
