//! [`Store`] as a [`Storage`]: the embedded default, shared by the processes of one machine
//! through one file (SQLite serialises writers; every claim and record is one immediate
//! transaction, so claims are atomic across processes).

use std::time::Duration;

use ktune_core::{Claim, CoreError, Recorded, Storage, StudyRecord, Worker};
use ktune_space::{Configuration, SearchSpace};

use crate::{Store, StoreError};

impl From<StoreError> for CoreError {
    fn from(e: StoreError) -> CoreError {
        CoreError::Storage(Box::new(e))
    }
}

impl Storage for Store {
    fn location(&self) -> String {
        format!(
            "sqlite://{}",
            std::path::absolute(self.path())
                .unwrap_or_else(|_| self.path().to_path_buf())
                .display()
        )
    }

    fn study(&self) -> &str {
        Store::study(self)
    }

    fn join(&mut self, worker: &Worker, allow_mixed_hardware: bool) -> Result<usize, CoreError> {
        Ok(Store::join(self, worker, allow_mixed_hardware)?)
    }

    fn claim(
        &mut self,
        config: &Configuration,
        worker: &str,
        lease: Duration,
        budget: Option<usize>,
    ) -> Result<Claim, CoreError> {
        Ok(Store::claim(
            self,
            config,
            worker,
            lease.as_secs_f64(),
            budget,
        )?)
    }

    fn claim_expired(
        &mut self,
        space: &SearchSpace,
        worker: &str,
        lease: Duration,
        budget: Option<usize>,
    ) -> Result<Option<Configuration>, CoreError> {
        Ok(Store::claim_expired(
            self,
            space,
            worker,
            lease.as_secs_f64(),
            budget,
        )?)
    }

    fn record(
        &mut self,
        space: &SearchSpace,
        worker: &str,
        record: &ktune_core::Record,
        budget: Option<usize>,
    ) -> Result<Recorded, CoreError> {
        Ok(self.record_by(space, Some(worker), record, budget)?)
    }

    fn records_since(
        &mut self,
        space: &SearchSpace,
        after: Option<u64>,
    ) -> Result<Vec<StudyRecord>, CoreError> {
        Ok(Store::records_since(self, space, after)?)
    }

    fn evaluations(&mut self) -> Result<usize, CoreError> {
        Ok(Store::len(self)?)
    }

    fn heartbeat(&mut self, worker: &str, lease: Duration) -> Result<usize, CoreError> {
        Ok(Store::heartbeat(self, worker, lease.as_secs_f64())?)
    }

    fn release(&mut self, worker: &str) -> Result<usize, CoreError> {
        Ok(Store::release(self, worker)?)
    }

    fn release_expired(&mut self) -> Result<usize, CoreError> {
        Ok(Store::release_expired(self)?)
    }

    fn set_meta(&mut self, key: &str, value: &str) -> Result<(), CoreError> {
        Ok(Store::set_meta(self, key, value)?)
    }

    fn meta(&mut self, key: &str) -> Result<Option<String>, CoreError> {
        Ok(Store::meta(self, key)?)
    }

    fn meta_or_insert(&mut self, key: &str, value: &str) -> Result<String, CoreError> {
        Ok(Store::meta_or_insert(self, key, value)?)
    }
}
