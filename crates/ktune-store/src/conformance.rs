//! The storage conformance suite (the idea of Optuna's storage tests): what every
//! [`Storage`] must do, run against each implementation with the same assertions. Call
//! [`run_all`] with a function that opens a study (by name, for a fingerprint) on a fresh
//! handle of the storage under test; every handle must see the others' writes, as the worker
//! processes of one study do. Study names are made unique per call, so a shared server can be
//! used.

use std::collections::BTreeSet;
use std::time::Duration;

use ktune_core::{Claim, Outcome, Record, Recorded, Storage, Timings, Worker};
use ktune_space::{Configuration, Parameter, SearchSpace};

use crate::{Fingerprint, StoreError};

/// Opens the study `name` made for `fingerprint` on a new handle.
pub type Open<'a> = dyn Fn(&str, &Fingerprint) -> Result<Box<dyn Storage>, StoreError> + Sync + 'a;

/// Opens a study that must open.
fn opened(open: &Open<'_>, study: &str, fingerprint: &Fingerprint) -> Box<dyn Storage> {
    open(study, fingerprint).unwrap_or_else(|e| panic!("cannot open study `{study}`: {e}"))
}

/// The space the suite uses: 100 configurations of one integer parameter.
pub fn space() -> SearchSpace {
    SearchSpace::new(
        vec![Parameter::integer_range("x", 0, 99, 1).expect("a valid parameter")],
        &[] as &[&str],
    )
    .expect("a valid space")
}

/// One check of the suite.
pub type Check = fn(&Open<'_>);

/// Runs every check of the suite, panicking with the check's name on the first failure.
pub fn run_all(open: &Open<'_>) {
    let checks: [(&str, Check); 14] = [
        (
            "claims_are_exclusive_and_settled_by_records",
            claims_are_exclusive_and_settled_by_records,
        ),
        (
            "the_budget_counts_records_and_live_claims",
            the_budget_counts_records_and_live_claims,
        ),
        (
            "expired_claims_are_taken_over_once",
            expired_claims_are_taken_over_once,
        ),
        (
            "heartbeats_keep_claims_and_release_drops_them",
            heartbeats_keep_claims_and_release_drops_them,
        ),
        (
            "records_since_reads_in_order_with_their_workers",
            records_since_reads_in_order_with_their_workers,
        ),
        (
            "studies_are_independent_and_keep_their_fingerprint",
            studies_are_independent_and_keep_their_fingerprint,
        ),
        (
            "workers_on_other_hardware_are_refused_unless_allowed",
            workers_on_other_hardware_are_refused_unless_allowed,
        ),
        (
            "workers_are_ranked_in_the_order_they_join",
            workers_are_ranked_in_the_order_they_join,
        ),
        (
            "workers_joining_at_once_get_distinct_ranks",
            workers_joining_at_once_get_distinct_ranks,
        ),
        ("metadata_round_trips", metadata_round_trips),
        (
            "the_first_metadata_writer_wins",
            the_first_metadata_writer_wins,
        ),
        (
            "a_study_refuses_another_problem",
            a_study_refuses_another_problem,
        ),
        (
            "records_keep_samples_observations_and_odd_values",
            records_keep_samples_observations_and_odd_values,
        ),
        (
            "concurrent_claims_never_grant_twice_or_beyond_the_budget",
            concurrent_claims_never_grant_twice_or_beyond_the_budget,
        ),
    ];
    for (name, check) in checks {
        eprintln!("storage conformance: {name}");
        check(open);
    }
}

/// `name` made unique to this process and moment: a study name that no other test, run or
/// benchmark on a shared storage has used.
pub fn unique(name: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{name}-{}-{nanos}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn fingerprint(space: &SearchSpace) -> Fingerprint {
    Fingerprint::new(space, r#"{"runner":"conformance"}"#, "time")
}

fn record(x: u32) -> Record {
    Record {
        config: vec![x],
        outcome: Outcome::ok(
            vec![f64::from(x) + 0.5],
            Timings {
                benchmark: 0.25,
                ..Timings::default()
            },
        ),
        clock: f64::from(x),
    }
}

const LONG: Duration = Duration::from_secs(600);
const SHORT: Duration = Duration::from_millis(150);

fn expire() {
    std::thread::sleep(SHORT + Duration::from_millis(150));
}

/// A claim is the claimer's until it records; then nobody can claim it.
pub fn claims_are_exclusive_and_settled_by_records(open: &Open<'_>) {
    let space = space();
    let study = unique("exclusive");
    let mut a = opened(open, &study, &fingerprint(&space));
    let mut b = opened(open, &study, &fingerprint(&space));
    let x: Configuration = vec![7];
    assert_eq!(a.claim(&x, "a", LONG, None).unwrap(), Claim::Granted);
    assert_eq!(b.claim(&x, "b", LONG, None).unwrap(), Claim::Held);
    assert_eq!(
        a.claim(&x, "a", LONG, None).unwrap(),
        Claim::Granted,
        "renewal"
    );
    assert_eq!(
        a.record(&space, "a", &record(7), None).unwrap(),
        Recorded::New(0)
    );
    assert_eq!(b.claim(&x, "b", LONG, None).unwrap(), Claim::Recorded);
    assert_eq!(a.claim(&x, "a", LONG, None).unwrap(), Claim::Recorded);
    assert_eq!(
        b.record(&space, "b", &record(7), None).unwrap(),
        Recorded::Duplicate(0)
    );
    let all = b.records_since(&space, None).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].record, record(7));
    assert_eq!(all[0].worker.as_deref(), Some("a"));
}

/// Records and live claims together never exceed the study's budget.
pub fn the_budget_counts_records_and_live_claims(open: &Open<'_>) {
    let space = space();
    let study = unique("budget");
    let mut s = opened(open, &study, &fingerprint(&space));
    let budget = Some(2);
    assert_eq!(
        s.claim(&vec![1], "a", LONG, budget).unwrap(),
        Claim::Granted
    );
    assert_eq!(
        s.claim(&vec![2], "b", LONG, budget).unwrap(),
        Claim::Granted
    );
    assert_eq!(
        s.claim(&vec![3], "c", LONG, budget).unwrap(),
        Claim::BudgetSpent
    );
    assert_eq!(
        s.record(&space, "a", &record(1), budget).unwrap(),
        Recorded::New(0)
    );
    assert_eq!(
        s.claim(&vec![3], "c", LONG, budget).unwrap(),
        Claim::BudgetSpent
    );
    // A claim of one's own is renewed, not counted twice.
    assert_eq!(
        s.claim(&vec![2], "b", LONG, budget).unwrap(),
        Claim::Granted
    );
    assert_eq!(
        s.record(&space, "b", &record(2), budget).unwrap(),
        Recorded::New(1)
    );
    assert_eq!(
        s.claim(&vec![3], "c", LONG, budget).unwrap(),
        Claim::BudgetSpent
    );
    // Recording without a claim once the budget is spent stores nothing.
    assert_eq!(
        s.record(&space, "c", &record(3), budget).unwrap(),
        Recorded::OverBudget
    );
    assert_eq!(s.records_since(&space, None).unwrap().len(), 2);
    // Without a budget, anything unrecorded may be claimed.
    assert_eq!(s.claim(&vec![3], "c", LONG, None).unwrap(), Claim::Granted);
}

/// The claim of a worker that stopped renewing expires: it is taken over by exactly one
/// worker, and it no longer counts against the budget; a late record of the first worker
/// and the second worker's record settle the configuration once.
pub fn expired_claims_are_taken_over_once(open: &Open<'_>) {
    let space = space();
    let study = unique("expiry");
    let mut a = opened(open, &study, &fingerprint(&space));
    let mut b = opened(open, &study, &fingerprint(&space));
    let mut c = opened(open, &study, &fingerprint(&space));
    assert_eq!(
        a.claim(&vec![4], "a", SHORT, Some(1)).unwrap(),
        Claim::Granted
    );
    assert_eq!(
        b.claim_expired(&space, "b", LONG, Some(1)).unwrap(),
        None,
        "not expired yet"
    );
    assert_eq!(
        b.claim(&vec![5], "b", LONG, Some(1)).unwrap(),
        Claim::BudgetSpent
    );
    expire();
    assert_eq!(
        b.claim_expired(&space, "b", LONG, Some(1)).unwrap(),
        Some(vec![4])
    );
    assert_eq!(
        c.claim_expired(&space, "c", LONG, Some(1)).unwrap(),
        None,
        "taken once"
    );
    assert_eq!(c.claim(&vec![4], "c", LONG, Some(1)).unwrap(), Claim::Held);
    // The first worker comes back late: its claim is gone and the budget is held by b.
    assert_eq!(
        a.record(&space, "a", &record(4), Some(1)).unwrap(),
        Recorded::New(0)
    );
    assert_eq!(
        b.record(&space, "b", &record(4), Some(1)).unwrap(),
        Recorded::Duplicate(0)
    );
    assert_eq!(c.records_since(&space, None).unwrap().len(), 1);
    // An expired claim frees its share of the budget.
    assert_eq!(
        c.claim(&vec![6], "c", SHORT, Some(2)).unwrap(),
        Claim::Granted
    );
    expire();
    assert_eq!(
        a.claim(&vec![8], "a", LONG, Some(2)).unwrap(),
        Claim::Granted
    );
    assert_eq!(
        b.claim_expired(&space, "b", LONG, Some(2)).unwrap(),
        None,
        "budget spent"
    );
    assert_eq!(a.release_expired().unwrap(), 1);
}

/// Heartbeats keep a worker's claims alive past their first lease; release drops them.
pub fn heartbeats_keep_claims_and_release_drops_them(open: &Open<'_>) {
    let space = space();
    let study = unique("heartbeat");
    let mut a = opened(open, &study, &fingerprint(&space));
    let mut b = opened(open, &study, &fingerprint(&space));
    assert_eq!(a.claim(&vec![1], "a", SHORT, None).unwrap(), Claim::Granted);
    assert_eq!(a.claim(&vec![2], "a", SHORT, None).unwrap(), Claim::Granted);
    assert_eq!(a.heartbeat("a", LONG).unwrap(), 2);
    assert_eq!(b.heartbeat("b", LONG).unwrap(), 0);
    expire();
    assert_eq!(b.claim(&vec![1], "b", LONG, None).unwrap(), Claim::Held);
    assert_eq!(b.claim_expired(&space, "b", LONG, None).unwrap(), None);
    assert_eq!(a.release("a").unwrap(), 2);
    assert_eq!(b.claim(&vec![1], "b", LONG, None).unwrap(), Claim::Granted);
}

/// Records are numbered from 0 in the order they were made and read back after any
/// sequence number, with everything they hold.
pub fn records_since_reads_in_order_with_their_workers(open: &Open<'_>) {
    let space = space();
    let study = unique("since");
    let mut a = opened(open, &study, &fingerprint(&space));
    let mut b = opened(open, &study, &fingerprint(&space));
    let failed = Record {
        config: vec![9],
        outcome: Outcome::failed(
            ktune_core::FailureKind::Compile,
            "nvcc: error",
            Timings {
                compile: 1.5,
                ..Timings::default()
            },
        ),
        clock: 3.0,
    };
    assert_eq!(a.evaluations().unwrap(), 0);
    assert_eq!(
        a.record(&space, "a", &record(3), None).unwrap(),
        Recorded::New(0)
    );
    assert_eq!(
        b.record(&space, "b", &failed, None).unwrap(),
        Recorded::New(1)
    );
    assert_eq!(
        a.record(&space, "a", &record(1), None).unwrap(),
        Recorded::New(2)
    );
    let all = b.records_since(&space, None).unwrap();
    let seqs: Vec<u64> = all.iter().map(|r| r.seq).collect();
    assert_eq!(seqs, vec![0, 1, 2]);
    // Counted without reading them, failures included, by any worker.
    assert_eq!(a.evaluations().unwrap(), 3);
    assert_eq!(b.evaluations().unwrap(), 3);
    assert_eq!(all[1].record, failed);
    assert_eq!(all[1].worker.as_deref(), Some("b"));
    let later = a.records_since(&space, Some(0)).unwrap();
    assert_eq!(later.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![1, 2]);
    assert!(a.records_since(&space, Some(2)).unwrap().is_empty());
}

/// Two studies in one storage share nothing; a study keeps the fingerprint it was made for.
pub fn studies_are_independent_and_keep_their_fingerprint(open: &Open<'_>) {
    let space = space();
    let (one, two) = (unique("one"), unique("two"));
    let mut a = opened(open, &one, &fingerprint(&space));
    let other = Fingerprint::new(&space, r#"{"runner":"other"}"#, "time");
    let mut b = opened(open, &two, &other);
    assert_eq!(a.study(), one);
    assert_eq!(
        a.claim(&vec![1], "w", LONG, Some(1)).unwrap(),
        Claim::Granted
    );
    assert_eq!(
        b.claim(&vec![1], "w", LONG, Some(1)).unwrap(),
        Claim::Granted
    );
    assert_eq!(
        a.record(&space, "w", &record(1), Some(1)).unwrap(),
        Recorded::New(0)
    );
    assert!(b.records_since(&space, None).unwrap().is_empty());
    assert_eq!(
        b.record(&space, "w", &record(1), Some(1)).unwrap(),
        Recorded::New(0)
    );
    assert!(!a.location().is_empty());
}

/// Workers on other hardware than the study's first are refused unless allowed.
pub fn workers_on_other_hardware_are_refused_unless_allowed(open: &Open<'_>) {
    let space = space();
    let study = unique("hardware");
    let mut s = opened(open, &study, &fingerprint(&space));
    let worker = |id: &str, device: &str| Worker {
        id: id.into(),
        host: "node1".into(),
        device: device.into(),
    };
    s.join(&worker("a", "NVIDIA H100"), false).unwrap();
    s.join(&worker("b", "NVIDIA H100"), false).unwrap();
    let e = s
        .join(&worker("c", "NVIDIA A100"), false)
        .unwrap_err()
        .to_string();
    ktune_core::testing::assert_mentions(
        &e,
        &["NVIDIA H100", "NVIDIA A100", "--allow-mixed-hardware"],
    );
    s.join(&worker("c", "NVIDIA A100"), true).unwrap();
}

/// A worker's rank is how many other workers the study had when it joined, per study; a
/// worker joining again counts every other.
pub fn workers_are_ranked_in_the_order_they_join(open: &Open<'_>) {
    let space = space();
    let fp = fingerprint(&space);
    let (one, two) = (unique("rank"), unique("rank"));
    let mut s = opened(open, &one, &fp);
    let worker = |id: &str| Worker {
        id: id.into(),
        host: "node1".into(),
        device: "NVIDIA H100".into(),
    };
    assert_eq!(s.join(&worker("a"), false).unwrap(), 0);
    assert_eq!(s.join(&worker("b"), false).unwrap(), 1);
    assert_eq!(s.join(&worker("c"), false).unwrap(), 2);
    assert_eq!(s.join(&worker("a"), false).unwrap(), 2);
    let mut t = opened(open, &two, &fp);
    assert_eq!(t.join(&worker("c"), false).unwrap(), 0);
}

/// Workers that join a study at the same moment, each on its own connection, get the ranks
/// 0, 1, 2, ... once each (so their seeds differ).
pub fn workers_joining_at_once_get_distinct_ranks(open: &Open<'_>) {
    let space = space();
    let study = unique("ranks");
    let fp = fingerprint(&space);
    drop(opened(open, &study, &fp));
    let mut ranks: Vec<usize> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|w| {
                let (study, fp) = (&study, &fp);
                scope.spawn(move || {
                    let mut s = opened(open, study, fp);
                    s.join(
                        &Worker {
                            id: format!("w{w}"),
                            host: format!("node{w}"),
                            device: "NVIDIA H100".into(),
                        },
                        false,
                    )
                    .unwrap()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect()
    });
    ranks.sort_unstable();
    assert_eq!(ranks, (0..6).collect::<Vec<_>>());
}

/// Study metadata is stored per study.
pub fn metadata_round_trips(open: &Open<'_>) {
    let space = space();
    let study = unique("meta");
    let mut s = opened(open, &study, &fingerprint(&space));
    assert_eq!(s.meta("strategy").unwrap(), None);
    s.set_meta("strategy", "bayes_opt").unwrap();
    s.set_meta("strategy", "random").unwrap();
    let mut t = opened(open, &study, &fingerprint(&space));
    assert_eq!(t.meta("strategy").unwrap().as_deref(), Some("random"));
    let mut u = opened(open, &unique("meta-other"), &fingerprint(&space));
    assert_eq!(u.meta("strategy").unwrap(), None);
    // The first writer wins: a value already there is kept and returned.
    assert_eq!(t.meta_or_insert("strategy", "tpe").unwrap(), "random");
    assert_eq!(u.meta_or_insert("strategy", "tpe").unwrap(), "tpe");
    assert_eq!(u.meta_or_insert("strategy", "auto").unwrap(), "tpe");
    assert_eq!(s.meta("strategy").unwrap().as_deref(), Some("random"));
}

/// Eight processes storing one key at once: all of them are told the same first value.
pub fn the_first_metadata_writer_wins(open: &Open<'_>) {
    let space = space();
    let study = unique("first-writer");
    let fp = fingerprint(&space);
    drop(opened(open, &study, &fp));
    let told: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (study, fp) = (&study, &fp);
                s.spawn(move || {
                    let mut st = opened(open, study, fp);
                    st.meta_or_insert("direction", &format!("worker {i}"))
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(told.windows(2).all(|w| w[0] == w[1]), "{told:?}");
    let mut st = opened(open, &study, &fp);
    assert_eq!(st.meta("direction").unwrap().as_ref(), Some(&told[0]));
}

/// Eight workers racing for the same 50 configurations with a budget of 30: every
/// configuration is granted at most once and exactly 30 are granted.
pub fn concurrent_claims_never_grant_twice_or_beyond_the_budget(open: &Open<'_>) {
    let space = space();
    let study = unique("race");
    let fp = fingerprint(&space);
    drop(opened(open, &study, &fp));
    let granted: Vec<Vec<u32>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|w| {
                let (study, fp, space) = (&study, &fp, &space);
                scope.spawn(move || {
                    let mut s = opened(open, study, fp);
                    let id = format!("w{w}");
                    let mut mine = Vec::new();
                    for i in 0..50u32 {
                        let x = (i + w * 7) % 50;
                        if s.claim(&vec![x], &id, LONG, Some(30)).unwrap() == Claim::Granted {
                            mine.push(x);
                            if x % 2 == 0 {
                                let _ = s.record(space, &id, &record(x), Some(30)).unwrap();
                            }
                        }
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect()
    });
    let all: Vec<u32> = granted.into_iter().flatten().collect();
    let distinct: BTreeSet<u32> = all.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        all.len(),
        "a configuration was granted twice"
    );
    assert_eq!(all.len(), 30, "granted beyond or below the budget");
}

/// Opening a study for another problem (another fingerprint) is refused with what differs,
/// and leaves the study as it was.
pub fn a_study_refuses_another_problem(open: &Open<'_>) {
    let space = space();
    let study = unique("mismatch");
    let mut s = opened(open, &study, &fingerprint(&space));
    assert_eq!(
        s.record(&space, "a", &record(4), None).unwrap(),
        Recorded::New(0)
    );
    let other = Fingerprint::new(&space, r#"{"runner":"conformance","repeats":7}"#, "time");
    let e = open(&study, &other)
        .err()
        .expect("another problem was accepted");
    let text = e.to_string();
    assert!(
        matches!(e, StoreError::Mismatch { .. }) && text.contains("repeats"),
        "{text}"
    );
    let mut again = opened(open, &study, &fingerprint(&space));
    assert_eq!(again.records_since(&space, None).unwrap().len(), 1);
}

/// A record reads back exactly: its samples, what the runner observed, infinite and
/// missing timings, and a reason with quotes and newlines.
pub fn records_keep_samples_observations_and_odd_values(open: &Open<'_>) {
    let space = space();
    let study = unique("exact");
    let mut s = opened(open, &study, &fingerprint(&space));
    let mut observed = ktune_core::Observed::new();
    observed.insert("device".into(), serde_json::json!("NVIDIA H100 80GB HBM3"));
    observed.insert("sm_clock_mhz".into(), serde_json::json!([1980, 1755]));
    let measured = Record {
        config: vec![11],
        outcome: Outcome::ok(
            vec![1.25, f64::INFINITY],
            Timings {
                compile: 0.125,
                benchmark: 2.0,
                verification: 0.0,
                framework: 1e-9,
            },
        )
        .with_samples(ktune_core::Samples {
            values: vec![1.25, 1.5, 1.0],
            runs_per_sample: 4,
            aborted: true,
            statistic: ktune_core::Statistic::default(),
        })
        .with_observed(observed),
        clock: 1234.5,
    };
    let failed = Record {
        config: vec![12],
        outcome: Outcome::failed(
            ktune_core::FailureKind::Runtime,
            "it said \"no\"\nand then 'stopped'; DROP TABLE claims; --",
            Timings::default(),
        ),
        clock: 1235.0,
    };
    s.record(&space, "w", &measured, None).unwrap();
    s.record(&space, "w", &failed, None).unwrap();
    let back = opened(open, &study, &fingerprint(&space))
        .records_since(&space, None)
        .unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!(back[0].record, measured);
    assert_eq!(back[1].record, failed);
}
