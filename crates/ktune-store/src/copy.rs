//! Copying a study between storages (`ktune results --storage … --export sqlite:///file.db`):
//! a [`StudyDump`] holds every column of one study as stored, so that the copy reads back
//! exactly as the original.

use std::path::Path;

use rusqlite::{TransactionBehavior, params};

use crate::{Store, StoreError, sqlite_error};

/// One study as stored: its fingerprint, metadata, workers and evaluations.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyDump {
    /// The study's name.
    pub name: String,
    /// Its [`Fingerprint`](crate::Fingerprint) as JSON.
    pub fingerprint: String,
    /// When it was made (seconds since the epoch).
    pub created: Option<f64>,
    /// Its metadata, by key.
    pub meta: Vec<(String, String)>,
    /// Its workers.
    pub workers: Vec<WorkerRow>,
    /// Its evaluations, in order.
    pub evaluations: Vec<EvaluationRow>,
}

/// A worker of a study as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerRow {
    /// Its id.
    pub worker: String,
    /// Its machine.
    pub host: String,
    /// Its device.
    pub device: String,
    /// When it joined (seconds since the epoch).
    pub joined: Option<f64>,
}

/// An evaluation as stored, column by column.
#[derive(Clone, Debug, PartialEq)]
pub struct EvaluationRow {
    /// Its position.
    pub seq: i64,
    /// The configuration's value indices, joined by commas.
    pub config: String,
    /// The parameter values (JSON).
    pub params_json: String,
    /// `ok` or the failure kind.
    pub status: String,
    /// The objective value.
    pub objective: Option<f64>,
    /// Every metric value (JSON).
    pub values_json: String,
    /// Why it failed.
    pub reason: Option<String>,
    /// Compile, benchmark, verification and framework seconds, and the clock.
    pub times: [Option<f64>; 5],
    /// What the runner observed (JSON).
    pub observed: Option<String>,
    /// The repeated measurements (JSON).
    pub samples: Option<String>,
    /// The worker that made it.
    pub worker: Option<String>,
}

impl Store {
    /// The study's workers, in the order they joined.
    pub fn workers(&self) -> Result<Vec<WorkerRow>, StoreError> {
        self.conn
            .prepare(
                "SELECT worker, host, device, joined FROM workers WHERE study = ?1 \
                 ORDER BY joined, worker",
            )
            .and_then(|mut s| {
                s.query_map([self.study], |r| {
                    Ok(WorkerRow {
                        worker: r.get(0)?,
                        host: r.get(1)?,
                        device: r.get(2)?,
                        joined: r.get(3)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// The whole study, column by column.
    pub fn dump(&self) -> Result<StudyDump, StoreError> {
        let sqlite = |e| sqlite_error(&self.path, e);
        let (name, fingerprint, created): (String, String, Option<f64>) = self
            .conn
            .query_row(
                "SELECT name, fingerprint, created FROM studies WHERE id = ?1",
                [self.study],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sqlite)?;
        let meta = self
            .conn
            .prepare("SELECT key, value FROM study_meta WHERE study = ?1 ORDER BY key")
            .and_then(|mut s| {
                s.query_map([self.study], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(sqlite)?;
        let workers = self.workers()?;
        let evaluations = self
            .conn
            .prepare(
                "SELECT seq, config, params_json, status, objective, values_json, reason, \
                 compile, benchmark, verification, framework, clock, observed, samples, worker \
                 FROM evaluations WHERE study = ?1 ORDER BY seq",
            )
            .and_then(|mut s| {
                s.query_map([self.study], |r| {
                    Ok(EvaluationRow {
                        seq: r.get(0)?,
                        config: r.get(1)?,
                        params_json: r.get(2)?,
                        status: r.get(3)?,
                        objective: r.get(4)?,
                        values_json: r.get(5)?,
                        reason: r.get(6)?,
                        times: [r.get(7)?, r.get(8)?, r.get(9)?, r.get(10)?, r.get(11)?],
                        observed: r.get(12)?,
                        samples: r.get(13)?,
                        worker: r.get(14)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()
            })
            .map_err(|e| self.read_error(e))?;
        Ok(StudyDump {
            name,
            fingerprint,
            created,
            meta,
            workers,
            evaluations,
        })
    }

    /// Writes `dump` as a new study of the database at `path` (created if missing), in one
    /// transaction; a study of that name already in the file is an error, and the file is
    /// left as it was.
    pub fn import(path: &Path, dump: &StudyDump) -> Result<Store, StoreError> {
        if let Err(e) = serde_json::from_str::<crate::Fingerprint>(&dump.fingerprint) {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                message: format!("the study to copy has a bad fingerprint: {e}"),
            });
        }
        if path.exists() {
            let existing = Store::open_existing(path)?;
            if existing.studies()?.contains(&dump.name) {
                return Err(StoreError::Study {
                    path: path.to_path_buf(),
                    message: format!(
                        "it already has a study `{}`; export to another file",
                        dump.name
                    ),
                });
            }
        }
        // An older file is brought up to this version first: the copy is written in it.
        let mut store = Store::open_writable(path)?;
        let sqlite = |e| sqlite_error(path, e);
        let tx = store
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sqlite)?;
        tx.execute(
            "INSERT INTO studies (name, fingerprint, created) VALUES (?1, ?2, ?3)",
            params![dump.name, dump.fingerprint, dump.created],
        )
        .map_err(sqlite)?;
        let study = tx.last_insert_rowid();
        for (key, value) in &dump.meta {
            tx.execute(
                "INSERT INTO study_meta (study, key, value) VALUES (?1, ?2, ?3)",
                params![study, key, value],
            )
            .map_err(sqlite)?;
        }
        for w in &dump.workers {
            tx.execute(
                "INSERT INTO workers (study, worker, host, device, joined) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![study, w.worker, w.host, w.device, w.joined],
            )
            .map_err(sqlite)?;
        }
        for e in &dump.evaluations {
            let [compile, benchmark, verification, framework, clock] = e.times;
            tx.execute(
                "INSERT INTO evaluations (study, seq, config, params_json, status, objective, \
                 values_json, reason, compile, benchmark, verification, framework, clock, \
                 observed, samples, worker) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                params![
                    study,
                    e.seq,
                    e.config,
                    e.params_json,
                    e.status,
                    e.objective,
                    e.values_json,
                    e.reason,
                    compile,
                    benchmark,
                    verification,
                    framework,
                    clock,
                    e.observed,
                    e.samples,
                    e.worker
                ],
            )
            .map_err(sqlite)?;
        }
        tx.commit().map_err(sqlite)?;
        store.study = study;
        store.study_name = dump.name.clone();
        Ok(store)
    }
}
