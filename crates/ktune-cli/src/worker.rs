//! `ktune tune --storage URL --study NAME`: one worker of a shared study.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use ktune_core::{Budget, Cooperation, Kept, Rng, Session, Worker, cooperate};
use ktune_store::Location;
use rand::SeedableRng;

use crate::spec::{Opened, open_spec};
use crate::tune_args::{TuneArgs, strategy_and_budget};
use ktune_problem::ProblemSpec;

pub fn run(args: &TuneArgs, problem: &ProblemSpec) -> Result<()> {
    if args.db.is_some() {
        bail!("give either --db (one process) or --storage (a shared study), not both");
    }
    // The flags over the spec's [storage] section.
    let location = match (&args.storage, &problem.storage) {
        (Some(url), _) => Location::parse(url)?,
        (None, Some(s)) => s.location.clone(),
        (None, None) => {
            bail!("--study needs --storage (e.g. --storage sqlite:///scratch/study.db)")
        }
    };
    let lease =
        ktune_core::checked_seconds(args.lease).map_err(|m| anyhow::anyhow!("--lease {m}"))?;
    let Opened {
        space,
        mut runner,
        jobs,
        ..
    } = open_spec(problem, !args.quiet && !args.json, args.max_enumeration)?;
    let objective = runner.metrics()[0].clone();
    let (strategy_name, strategy, budget) = strategy_and_budget(args, problem)?;
    let study = args.study.clone().unwrap_or_else(|| problem.study_name());
    let fingerprint = problem.fingerprint(&space, &objective.name);
    let mut store = location.open_study(&study, &fingerprint)?;
    let worker = Worker::local(args.device.clone().or_else(|| runner.device()));
    let rank = store.join(&worker, args.allow_mixed_hardware)?;
    // The study's budget is the first worker's; later workers keep it.
    if let Some(m) = budget.max_evaluations {
        match store.meta(ktune_store::BUDGET_KEY)? {
            Some(stored) if stored != m.to_string() => eprintln!(
                "warning: study `{study}` has a budget of {stored} evaluations; this worker's {m} is ignored"
            ),
            Some(_) => {}
            None => store.set_meta(ktune_store::BUDGET_KEY, &m.to_string())?,
        }
    }
    let budget = Budget {
        max_evaluations: store
            .meta(ktune_store::BUDGET_KEY)?
            .and_then(|m| m.parse().ok())
            .or(budget.max_evaluations),
        ..budget
    };
    if store.meta("strategy")?.is_none() {
        store.set_meta("strategy", &strategy_name)?;
    }
    if let Some(unit) = problem.runner.as_ref().and_then(|r| r.unit())
        && store.meta(ktune_store::UNIT_KEY)?.is_none()
    {
        store.set_meta(ktune_store::UNIT_KEY, unit)?;
    }
    if store.meta(ktune_store::DIRECTION_KEY)?.is_none() {
        store.set_meta(ktune_store::DIRECTION_KEY, objective.direction.name())?;
    }
    // Another machine's copy of the program, or this one edited since the results.
    let stored_results = store.evaluations()?;
    crate::spec::note_inputs(store.as_mut(), problem, stored_results)?;

    // Heartbeats from a connection of their own, so that a long evaluation keeps its claims.
    let beating = Arc::new(AtomicBool::new(true));
    let heart = {
        let (beating, location, study, fingerprint, id) = (
            beating.clone(),
            location.clone(),
            study.clone(),
            fingerprint.clone(),
            worker.id.clone(),
        );
        std::thread::spawn(move || -> Result<()> {
            let mut store = location.open_study(&study, &fingerprint)?;
            let period = lease / 3;
            let mut waited = Duration::ZERO;
            while beating.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                waited += Duration::from_millis(50);
                if waited >= period {
                    waited = Duration::ZERO;
                    store.heartbeat(&id, lease)?;
                }
            }
            Ok(())
        })
    };

    if !args.quiet && !args.json {
        eprintln!(
            "ktune tune: worker {} ({}) on study `{study}` in {}: {} configurations, strategy {strategy_name}{}",
            worker.id,
            worker.device,
            store.location(),
            space.size(),
            budget
                .max_evaluations
                .map_or(String::new(), |m| format!(", {m} evaluations shared"))
        );
    }
    let seed = ktune_core::worker_seed(args.seed, rank);
    let mut session = Session::new(
        &space,
        strategy,
        budget.clone(),
        objective.direction,
        Rng::seed_from_u64(seed),
    )?;
    let how = Cooperation {
        worker: worker.id.clone(),
        lease,
        poll: Duration::from_millis(200),
        batch: jobs,
    };
    let mut mine = 0usize;
    let quiet = args.quiet || args.json;
    let result = cooperate(
        &mut session,
        runner.as_mut(),
        store.as_mut(),
        &how,
        &mut |record, kept| {
            if let Kept::Stored(seq) = kept {
                mine += 1;
                if !quiet {
                    eprintln!(
                        "[{}] {} -> {}",
                        seq + 1,
                        space.describe(&record.config),
                        record.outcome.objective().map_or_else(
                            || format!("{:?}", record.outcome.failure()),
                            |v| format!("{v}")
                        )
                    );
                }
            }
        },
    );
    beating.store(false, Ordering::Relaxed);
    let released = store.release(&worker.id)?;
    let beat = heart.join();
    let stop = result?;
    if let Ok(Err(e)) = beat {
        eprintln!("warning: heartbeats failed: {e:#}");
    }
    let all: Vec<ktune_core::Record> = store
        .records_since(&space, None)?
        .into_iter()
        .map(|r| r.record)
        .collect();
    let best = all
        .iter()
        .filter_map(|r| r.outcome.objective().map(|v| (v, r)))
        .reduce(|a, b| {
            if objective.direction.better(b.0, a.0) {
                b
            } else {
                a
            }
        });
    let line = format!(
        "worker {}: {mine} evaluations recorded ({stop:?}){}; study `{study}` holds {}{}; best {}",
        worker.id,
        if released > 0 {
            format!(", {released} claims released")
        } else {
            String::new()
        },
        all.len(),
        budget
            .max_evaluations
            .map_or(String::new(), |m| format!(" of {m}")),
        best.map_or("none".into(), |(v, r)| format!(
            "{} = {v} at {}",
            objective.name,
            space.describe(&r.config)
        ))
    );
    if args.json {
        crate::outln!(
            "{}",
            serde_json::json!({"worker": worker.id, "recorded": mine, "study": study, "study_evaluations": all.len(), "best": best.map(|(v, _)| v)})
        )?;
    } else {
        eprintln!("{line}");
    }
    Ok(())
}
