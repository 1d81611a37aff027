//! A batch's programs built on worker threads while this thread measures, in order, the
//! configurations already built: the CUDA runner's compiles and the OpenCL runner's builds
//! both go through here.
//!
//! Where the device is the CPU itself (an OpenCL CPU device such as PoCL), building beside a
//! measurement takes cores from the kernel being timed: on the 2-core project machine, with
//! overlapped builds the vector-add configurations ktune and Kernel Tuner both measured were 9%
//! slower in ktune (median ratio), and the builds took 1.5-1.7x as long (BENCHMARKS.md, OpenCL
//! on PoCL). There the batch is built first, still on all workers, and measured after.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use ktune_core::{FailureKind, Outcome, Timings};

use super::launch::Launch;

/// Whether builds run while configurations are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overlap {
    /// Measure each configuration as soon as it is built (a GPU: building uses the CPU).
    WhileMeasuring,
    /// Build the whole batch, then measure (the device is the CPU).
    BuildFirst,
}

/// Builds the configurations of `launches` with `build` on `jobs` worker threads, in order of
/// need, and gives each to `measure` (with its launch and its build, or why it has none) in
/// order on this thread. Stops when `out_of_time` says so before a configuration (the rest
/// are neither built nor measured) or when `measure` says the device is lost (its second
/// value). `what` names the build step in messages (`NVRTC`, `clBuildProgram`).
pub(crate) fn build_and_measure<B: Send>(
    launches: &[Result<Launch, String>],
    jobs: usize,
    overlap: Overlap,
    what: &str,
    build: &(dyn Fn(&Launch) -> Result<B, String> + Sync),
    out_of_time: &dyn Fn() -> bool,
    measure: &mut dyn FnMut(&Launch, B) -> (Outcome, bool),
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Result<B, String>)>();
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(launches.len());
    let workers = jobs
        .min(launches.iter().filter(|l| l.is_ok()).count())
        .max(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(l) = launches.get(i) else { break };
                    let r = match l {
                        Ok(launch) => build(launch),
                        Err(_) => Err(String::new()),
                    };
                    if tx.send((i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut ready: Vec<Option<Result<B, String>>> = launches.iter().map(|_| None).collect();
        let mut received = 0;
        let receive = |ready: &mut Vec<Option<Result<B, String>>>| match rx.recv() {
            Ok((j, r)) => {
                ready[j] = Some(r);
                true
            }
            Err(_) => false,
        };
        if overlap == Overlap::BuildFirst {
            while received < launches.len() && receive(&mut ready) {
                received += 1;
            }
        }
        for (i, launch) in launches.iter().enumerate() {
            if out_of_time() {
                next.store(usize::MAX / 2, Ordering::Relaxed);
                break;
            }
            while ready[i].is_none() && receive(&mut ready) {}
            let (outcome, lost) = match (launch, ready[i].take()) {
                (Err(why), _) => (
                    Outcome::failed(
                        FailureKind::Runtime,
                        format!("cannot be launched: {why}"),
                        Timings::default(),
                    ),
                    false,
                ),
                (Ok(_), Some(Err(log))) => (
                    Outcome::failed(
                        FailureKind::Compile,
                        format!("{what}: {}", super::tail(&log)),
                        Timings::default(),
                    ),
                    false,
                ),
                (Ok(launch), Some(Ok(built))) => measure(launch, built),
                (Ok(_), None) => (
                    Outcome::failed(
                        FailureKind::Compile,
                        format!("the {what} thread did not report"),
                        Timings::default(),
                    ),
                    false,
                ),
            };
            outcomes.push(outcome);
            if lost {
                // Stop the workers; what was measured is returned.
                next.store(usize::MAX / 2, Ordering::Relaxed);
                break;
            }
        }
    });
    outcomes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launches(n: usize) -> Vec<Result<Launch, String>> {
        (0..n)
            .map(|i| {
                if i == 2 {
                    Err("no grid".into())
                } else {
                    Ok(Launch {
                        grid: [i as u32 + 1, 1, 1],
                        block: [1, 1, 1],
                        shared_bytes: 0,
                        defines: Vec::new(),
                        name_expression: "k".into(),
                        flops: None,
                    })
                }
            })
            .collect()
    }

    fn built_then_measured(overlap: Overlap) -> (Vec<Outcome>, Vec<String>) {
        let log = std::sync::Mutex::new(Vec::new());
        let ls = launches(5);
        let build = |l: &Launch| {
            log.lock().unwrap().push(format!("build {}", l.grid[0]));
            if l.grid[0] == 4 {
                Err("bad".to_string())
            } else {
                Ok(l.grid[0])
            }
        };
        let mut measure = |_: &Launch, b: u32| {
            log.lock().unwrap().push(format!("measure {b}"));
            (Outcome::ok(vec![f64::from(b)], Timings::default()), false)
        };
        let out = build_and_measure(&ls, 2, overlap, "cc", &build, &|| false, &mut measure);
        (out, log.into_inner().unwrap())
    }

    #[test]
    fn every_configuration_gets_one_outcome_in_order_with_its_failure() {
        for overlap in [Overlap::WhileMeasuring, Overlap::BuildFirst] {
            let (out, _) = built_then_measured(overlap);
            let kinds: Vec<Option<FailureKind>> = out.iter().map(|o| o.failure()).collect();
            assert_eq!(
                kinds,
                [
                    None,
                    None,
                    Some(FailureKind::Runtime),
                    Some(FailureKind::Compile),
                    None
                ]
            );
            let Outcome::Failed { reason, .. } = &out[3] else {
                unreachable!()
            };
            assert_eq!(reason, "cc: bad");
        }
    }

    #[test]
    fn building_first_measures_nothing_before_every_build_is_done() {
        let (_, log) = built_then_measured(Overlap::BuildFirst);
        let first_measure = log.iter().position(|l| l.starts_with("measure")).unwrap();
        assert_eq!(first_measure, 4, "{log:?}");
    }

    #[test]
    fn a_lost_device_or_no_time_left_stops_the_batch() {
        let ls = launches(5);
        let build = |l: &Launch| Ok::<u32, String>(l.grid[0]);
        let mut measure = |_: &Launch, b: u32| (Outcome::ok(vec![1.0], Timings::default()), b == 2);
        let out = build_and_measure(
            &ls,
            2,
            Overlap::WhileMeasuring,
            "cc",
            &build,
            &|| false,
            &mut measure,
        );
        assert_eq!(out.len(), 2);
        let calls = std::cell::Cell::new(0);
        let out_of_time = || {
            calls.set(calls.get() + 1);
            calls.get() > 3
        };
        let mut measure = |_: &Launch, _: u32| (Outcome::ok(vec![1.0], Timings::default()), false);
        let out = build_and_measure(
            &ls,
            2,
            Overlap::WhileMeasuring,
            "cc",
            &build,
            &out_of_time,
            &mut measure,
        );
        assert_eq!(out.len(), 3);
    }
}
