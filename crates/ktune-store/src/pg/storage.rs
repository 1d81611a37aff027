//! [`PgStore`] as a [`Storage`]: claims, records and metadata, each in one transaction of
//! the server, so that workers on many machines share a study safely.

use std::path::PathBuf;
use std::time::Duration;

use ktune_core::{Claim, CoreError, Record, Recorded, Storage, StudyRecord, Worker};
use ktune_space::{Configuration, SearchSpace};

use super::{NOW, PgStore, pg_error, used};
use crate::{StoreError, config_key, encode, parse_config_key, study_records};

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
