//! Whether the program changed under a study's results: the SHA-256 of the files its runner
//! reads (see [`ProblemSpec::input_digest`]), kept in the study's metadata.

use crate::ProblemSpec;

/// The key under which a study keeps the digests of the files its runner reads.
const INPUTS_KEY: &str = "inputs";

/// Compares the files the runner reads with those the `results` the study holds were
/// measured with, and keeps the digests where [`check_inputs`] says; returns a warning naming
/// the files that changed under those results. Every front end calls it when it opens a
/// study of a problem file.
pub fn note_inputs(
    storage: &mut dyn ktune_core::Storage,
    problem: &ProblemSpec,
    results: usize,
) -> Result<Option<String>, ktune_core::CoreError> {
    let (keep, changed) = check_inputs(
        storage.meta(INPUTS_KEY)?.as_deref(),
        &problem.input_digest(),
        results,
    );
    if let Some(k) = keep {
        storage.set_meta(INPUTS_KEY, &k)?;
    }
    Ok(changed)
}

/// Compares the digests of the runner's files (`current`, see
/// [`ProblemSpec::input_digest`]) with those a study keeps (`stored`, JSON) when it holds
/// `results`. Returns what to keep (the current digests, unless the stored ones describe the
/// results already there) and a warning naming the files that changed under those results:
/// they are resumed as they are, as Kernel Tuner's cache is, but not without a word.
pub fn check_inputs(
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
    let (mut changed, mut gone) = (Vec::new(), Vec::new());
    for (f, d) in &stored {
        match current.get(f) {
            Some(now) if now == d => {}
            Some(_) => changed.push(f.as_str()),
            // Not readable now: deleted, moved, or its permissions changed.
            None => gone.push(f.as_str()),
        }
    }
    if changed.is_empty() && gone.is_empty() {
        return (None, None);
    }
    let mut what = Vec::new();
    if !changed.is_empty() {
        what.push(format!("{} changed", changed.join(", ")));
    }
    if !gone.is_empty() {
        what.push(format!(
            "{} {} no longer there (or no longer readable)",
            gone.join(", "),
            if gone.len() == 1 { "is" } else { "are" }
        ));
    }
    let warning = format!(
        "{} since the {results} stored {} measured; they are resumed as they are (to \
         measure afresh, give another --db or study name)",
        what.join(" and "),
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
        // A file gone is named as gone, not as changed; a new one is not named (the results
        // did not read it).
        let (_, warning) = check_inputs(
            Some(&stored),
            &digests(&[("kernel.cu", "aa"), ("B.npy", "dd")]),
            1,
        );
        assert_eq!(
            warning.unwrap(),
            "A.npy is no longer there (or no longer readable) since the 1 stored result was \
             measured; they are resumed as they are (to measure afresh, give another --db or \
             study name)"
        );
        let (_, warning) = check_inputs(Some(&stored), &digests(&[("kernel.cu", "cc")]), 2);
        assert!(
            warning.as_deref().unwrap().starts_with(
                "kernel.cu changed and A.npy is no longer there (or no longer readable) since the 2"
            ),
            "{warning:?}"
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
