//! The storage extension point: one study shared by any number of workers.
//!
//! A [`Storage`] holds the records of studies (by name, each made for one problem) and hands
//! out work safely: a worker [claims](Storage::claim) a configuration before it measures it,
//! atomically, so that no configuration is measured twice and the study's evaluation budget
//! is never exceeded; a claim is a lease that a [heartbeat](Storage::heartbeat) renews, and
//! the claim of a worker that died expires and is [taken over](Storage::claim_expired) by
//! another. Every worker reads the others' records with [`records_since`](Storage::records_since)
//! and tells them to its [`Session`](crate::Session). The SQLite and PostgreSQL
//! implementations live in `ktune-store`, with the conformance suite both pass.

use std::time::Duration;

use ktune_space::{Configuration, SearchSpace};

use crate::{CoreError, Record};

/// A worker of a study: who measures, and on what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worker {
    /// Unique among the study's workers (e.g. `host:pid:start`).
    pub id: String,
    /// The machine it runs on.
    pub host: String,
    /// The device it measures on (a GPU's name, or the CPU model).
    pub device: String,
}

impl Worker {
    /// This process on this machine, measuring on `device` (default: the CPU model). Its id
    /// is `host:pid:start-milliseconds`, unique among the workers of a study.
    pub fn local(device: Option<String>) -> Worker {
        let host = host_name();
        Worker {
            id: format!(
                "{host}:{}:{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis())
            ),
            host,
            device: device.unwrap_or_else(cpu_model),
        }
    }
}

/// This machine's name.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// The CPU model, for workers that name no device.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The answer to a [claim](Storage::claim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The configuration is this worker's to measure until its lease expires.
    Granted,
    /// It is recorded already.
    Recorded,
    /// Another worker holds a live claim on it.
    Held,
    /// The study's records and live claims already reach its budget.
    BudgetSpent,
}

/// What [recording](Storage::record) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// Stored with this sequence number.
    New(u64),
    /// The configuration was recorded already (by a worker that took over this worker's
    /// expired claim): nothing was stored.
    Duplicate(u64),
    /// The study's budget was spent while this worker held no live claim on the
    /// configuration: nothing was stored.
    OverBudget,
}

/// One record of a study with its position and maker.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyRecord {
    /// Its sequence number in the study (0 for the first).
    pub seq: u64,
    /// The record.
    pub record: Record,
    /// The worker that made it (`None` for a single-process run).
    pub worker: Option<String>,
}

/// The seed of the worker of rank `rank` (see [`Storage::join`]) in a study run with
/// `seed`: `seed` itself for the first worker, and for the others a stream of their own
/// (SplitMix64's finaliser of the rank, so that neighbouring ranks and seeds do not
/// overlap), the same on every run.
pub fn worker_seed(seed: u64, rank: usize) -> u64 {
    if rank == 0 {
        return seed;
    }
    let mut z = (rank as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    seed ^ z ^ (z >> 31)
}

/// A store of studies that many workers share. Every method commits before it returns.
pub trait Storage: Send {
    /// Where the storage is, for messages (`sqlite:///path`, `postgresql://host/db`).
    fn location(&self) -> String;

    /// The study this handle is opened on.
    fn study(&self) -> &str;

    /// Registers `worker` (its host and device) and returns its rank: how many other
    /// workers the study had when it joined (0 for the first). Workers draw their random
    /// numbers from [`worker_seed`]`(seed, rank)`, so that each has its own stream and a
    /// study's first worker makes the proposals of a single-process run with that seed.
    /// A study whose earlier workers measured on other hardware refuses it unless
    /// `allow_mixed_hardware`.
    fn join(&mut self, worker: &Worker, allow_mixed_hardware: bool) -> Result<usize, CoreError>;

    /// Claims `config` for `worker` for `lease`, atomically (see [`Claim`]); with a `budget`,
    /// a new claim is refused once the study's records and live claims reach it. Renews the
    /// worker's own live claim.
    fn claim(
        &mut self,
        config: &Configuration,
        worker: &str,
        lease: Duration,
        budget: Option<usize>,
    ) -> Result<Claim, CoreError>;

    /// Takes over the oldest expired claim (a configuration whose worker died) for `worker`,
    /// unless the study's budget is spent.
    fn claim_expired(
        &mut self,
        space: &SearchSpace,
        worker: &str,
        lease: Duration,
        budget: Option<usize>,
    ) -> Result<Option<Configuration>, CoreError>;

    /// Records an evaluation by `worker` and settles its claim (see [`Recorded`]).
    fn record(
        &mut self,
        space: &SearchSpace,
        worker: &str,
        record: &Record,
        budget: Option<usize>,
    ) -> Result<Recorded, CoreError>;

    /// The study's records after sequence number `after` (all with `None`), in order.
    fn records_since(
        &mut self,
        space: &SearchSpace,
        after: Option<u64>,
    ) -> Result<Vec<StudyRecord>, CoreError>;

    /// How many evaluations the study holds (without reading them).
    fn evaluations(&mut self) -> Result<usize, CoreError>;

    /// Extends the worker's live claims to `lease` from now; how many.
    fn heartbeat(&mut self, worker: &str, lease: Duration) -> Result<usize, CoreError>;

    /// Drops the worker's claims (a clean exit); how many.
    fn release(&mut self, worker: &str) -> Result<usize, CoreError>;

    /// Drops every expired claim of the study; how many.
    fn release_expired(&mut self) -> Result<usize, CoreError>;

    /// Stores study metadata under `key`.
    fn set_meta(&mut self, key: &str, value: &str) -> Result<(), CoreError>;

    /// The study metadata under `key`.
    fn meta(&mut self, key: &str) -> Result<Option<String>, CoreError>;

    /// Stores `value` under `key` unless the study holds a value there already, atomically
    /// (of two processes calling it at once, one is first); returns the value the study
    /// holds afterwards: the first writer's.
    fn meta_or_insert(&mut self, key: &str, value: &str) -> Result<String, CoreError>;
}
