//! A spec opened for running: read and checked, its space built, its runner opened.
//! `ktune tune`, its shared-study workers and `ktune results --rerank` all start here.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};
use ktune_core::Runner;
use ktune_problem::{ProblemSpec, RunnerSpec};
use ktune_runners::{CommandRunner, CudaError, CudaRunner};
use ktune_space::SearchSpace;

/// A spec read and its runner opened.
pub(crate) struct Opened {
    pub(crate) space: SearchSpace,
    pub(crate) runner: Box<dyn Runner>,
    /// Configurations to ask for at a time (compiled in parallel).
    pub(crate) jobs: usize,
    /// Set by a runner that can only go on in a new process (a CUDA context poisoned by a
    /// kernel fault): `ktune tune` then restarts itself and resumes from the database.
    pub(crate) fresh_process: Option<Arc<AtomicBool>>,
}

/// Reads the spec at `spec_path` (every section typed and checked, see [`ProblemSpec`]).
pub(crate) fn read_spec(spec_path: &Path) -> Result<ProblemSpec> {
    let problem = ProblemSpec::from_path(spec_path)?;
    for w in &problem.space.warnings {
        eprintln!("warning: {w}");
    }
    Ok(problem)
}

/// Builds the problem's space and opens its runner.
pub(crate) fn open_spec(problem: &ProblemSpec, verbose: bool, max_checks: f64) -> Result<Opened> {
    let spec_path = &problem.path;
    let space = crate::space::build_with_progress(&problem.space, max_checks)?;
    let Some(runner_spec) = &problem.runner else {
        bail!(
            "`{}` has no [runner] section: say how to compile and run a configuration",
            spec_path.display()
        );
    };
    let mut fresh_process: Option<Arc<AtomicBool>> = None;
    let (runner, jobs): (Box<dyn Runner>, usize) = match runner_spec {
        RunnerSpec::Command(runner_spec) => {
            let jobs = runner_spec.jobs;
            (
                Box::new(CommandRunner::new(runner_spec, &space, &problem.dir)?),
                jobs,
            )
        }
        RunnerSpec::Cuda(runner_spec) => {
            let runner = CudaRunner::new(runner_spec, &space, &problem.dir).map_err(|e| {
                let spec_problem = matches!(e, CudaError::Spec(_) | CudaError::Source { .. });
                let e = anyhow::Error::from(e);
                if spec_problem {
                    e.context(format!("the [runner] section of `{}`", spec_path.display()))
                } else {
                    e
                }
            })?;
            if verbose {
                let d = runner.device();
                let (version, library) = runner.compiler();
                eprintln!(
                    "ktune tune: {} (compute capability {}.{}), NVRTC {} ({}), {} compile jobs",
                    d.name,
                    d.compute_capability / 10,
                    d.compute_capability % 10,
                    version.map_or("?".into(), |(a, b)| format!("{a}.{b}")),
                    library.display(),
                    runner.jobs()
                );
            }
            let jobs = runner.jobs();
            fresh_process = Some(runner.fresh_process_needed());
            (Box::new(runner), jobs)
        }
        other => bail!(
            "[runner] kind = \"{}\" in `{}` cannot be tuned by this ktune",
            other.kind(),
            spec_path.display()
        ),
    };
    Ok(Opened {
        space,
        runner,
        jobs,
        fresh_process,
    })
}

/// The key under which a study keeps the digests of the files its runner reads.
const INPUTS_KEY: &str = "inputs";

/// Warns when a file the runner reads changed under the `results` the study holds, and keeps
/// the digests where [`check_inputs`] says: `ktune tune` and its shared-study workers both
/// call it when they open a study.
pub(crate) fn note_inputs(
    store: &mut dyn ktune_core::Storage,
    problem: &ProblemSpec,
    results: usize,
) -> Result<()> {
    let (keep, changed) = check_inputs(
        store.meta(INPUTS_KEY)?.as_deref(),
        &problem.input_digest(),
        results,
    );
    if let Some(k) = keep {
        store.set_meta(INPUTS_KEY, &k)?;
    }
    if let Some(w) = changed {
        eprintln!("warning: {w}");
    }
    Ok(())
}

/// Compares the digests of the runner's files (`current`, see
/// [`ProblemSpec::input_digest`]) with those a study keeps (`stored`, JSON) when it holds
/// `results`. Returns what to keep (the current digests, unless the stored ones describe the
/// results already there) and a warning naming the files that changed under those results:
/// they are resumed as they are, as Kernel Tuner's cache is, but not without a word.
pub(crate) fn check_inputs(
    stored: Option<&str>,
    current: &std::collections::BTreeMap<String, String>,
    results: usize,
) -> (Option<String>, Option<String>) {
    let fresh = || Some(serde_json::to_string(current).unwrap_or_default());
    let stored: Option<std::collections::BTreeMap<String, String>> =
        stored.and_then(|s| serde_json::from_str(s).ok());
    let Some(stored) = stored.filter(|_| results > 0) else {
        return (fresh(), None);
    };
    let changed: Vec<&str> = stored
        .iter()
        .filter(|(f, d)| current.get(*f) != Some(*d))
        .map(|(f, _)| f.as_str())
        .collect();
    if changed.is_empty() {
        return (None, None);
    }
    let warning = format!(
        "{} changed since the {results} stored {} measured; they are resumed as they are (to \
         measure afresh, give another --db or study name)",
        changed.join(", "),
        if results == 1 {
            "result was"
        } else {
            "results were"
        },
    );
    (None, Some(warning))
}

#[cfg(test)]
mod input_tests {
    use std::collections::BTreeMap;

    use super::check_inputs;

    fn digests(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(f, d)| (f.to_string(), d.to_string()))
            .collect()
    }

    #[test]
    fn a_changed_input_under_stored_results_is_named_and_the_old_digest_kept() {
        let before = digests(&[("kernel.cu", "aa"), ("A.npy", "bb")]);
        let stored = serde_json::to_string(&before).unwrap();
        // Unchanged: nothing to say or store.
        assert_eq!(check_inputs(Some(&stored), &before, 5), (None, None));
        // The kernel edited: named, and the stored digest (of the results') stays.
        let after = digests(&[("kernel.cu", "cc"), ("A.npy", "bb")]);
        let (keep, warning) = check_inputs(Some(&stored), &after, 5);
        assert_eq!(keep, None);
        let warning = warning.unwrap();
        assert!(
            warning.starts_with("kernel.cu changed since the 5 stored results were measured"),
            "{warning}"
        );
        assert!(!warning.contains("A.npy"), "{warning}");
        // A file gone counts as changed; a new one does not (the results did not read it).
        let (_, warning) = check_inputs(
            Some(&stored),
            &digests(&[("kernel.cu", "aa"), ("B.npy", "dd")]),
            1,
        );
        assert!(
            warning
                .unwrap()
                .starts_with("A.npy changed since the 1 stored result was"),
            "singular"
        );
    }

    #[test]
    fn a_study_without_results_or_digests_takes_the_current_ones() {
        let now = digests(&[("matmul.c", "ee")]);
        let json = serde_json::to_string(&now).unwrap();
        assert_eq!(check_inputs(None, &now, 0), (Some(json.clone()), None));
        // Results from before digests were kept: nothing to compare with, so no warning.
        assert_eq!(check_inputs(None, &now, 7), (Some(json.clone()), None));
        // Digests of a study emptied of results are replaced.
        let old = serde_json::to_string(&digests(&[("matmul.c", "00")])).unwrap();
        assert_eq!(check_inputs(Some(&old), &now, 0), (Some(json), None));
    }
}
