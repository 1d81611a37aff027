//! `ktune report` end to end: the committed fixture study (two workers, failures of every kind
//! the command runner reports, a re-ranking) rendered by `ktune report` and loaded in a real
//! headless Chromium, whose DOM is counted and whose console must stay silent.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Succeeds, assert_mentions, ktune, repo};

/// Chromium: `KTUNE_CHROMIUM` (scripts/test.sh sets it), else one on the PATH.
pub(crate) fn chromium() -> Option<PathBuf> {
    let named = std::env::var("KTUNE_CHROMIUM")
        .ok()
        .filter(|c| !c.is_empty());
    named
        .into_iter()
        .chain(["chromium", "chromium-browser", "google-chrome"].map(String::from))
        .find_map(|c| {
            let out = Command::new("sh")
                .args(["-c", &format!("command -v {c}")])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
        })
}

/// Chromium headless with `args` on `page`: its stdout and stderr. The flags keep it from
/// reaching for Google's services (this machine has no network) and from the GPU.
fn headless(chromium: &Path, profile: &Path, args: &[&str], page: &Path) -> (String, String) {
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The fixture copied into `dir` (reading a study may write SQLite's side files).
fn fixture(dir: &Path) -> PathBuf {
    let db = dir.join("study.db");
    std::fs::copy(repo("crates/ktune-report/tests/fixture/study.db"), &db).unwrap();
    db
}

#[test]
fn the_fixture_study_renders_in_a_real_browser_with_every_mark_and_no_console_message() {
    let Some(chromium) = chromium() else {
        eprintln!("SKIPPED: no Chromium (set KTUNE_CHROMIUM, or install Debian's chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = fixture(dir.path());
    let page = dir.path().join("report.html");
    let out = ktune()
        .arg("report")
        .arg(&db)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_mentions(
        &String::from_utf8_lossy(&out.stderr),
        &["wrote", "80 evaluations"],
    );

    // What the figures must hold, from the study as `ktune results` reads it.
    let json = ktune()
        .args(["results", "--format", "json"])
        .arg(&db)
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let rows = rows.as_array().expect("a list of evaluations");
    let count = |status: &str| rows.iter().filter(|r| r["status"] == status).count();
    assert_eq!(rows.len(), 80);
    for kind in ["compile", "runtime", "timeout", "wrong_output"] {
        assert!(count(kind) > 0, "the fixture has no {kind} failure");
    }

    let profile = dir.path().join("profile");
    let (dom, log) = headless(&chromium, &profile, &["--dump-dom"], &page);
    // The page asks for nothing (its policy is default-src 'none', so a request would be a
    // console message as well as a failure) and writes nothing to the console.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    for attribute in [" src=", " href=", "<script", "<link", "url("] {
        assert!(
            !dom.contains(attribute),
            "the page loads something: {attribute}"
        );
    }
    let marks = |class: &str| dom.matches(&format!("class=\"{class}\"")).count();
    assert_eq!(marks("pt ok"), count("ok"));
    assert_eq!(marks("fail f-compile"), count("compile"));
    assert_eq!(marks("fail f-runtime"), count("runtime"));
    assert_eq!(marks("fail f-timeout"), count("timeout"));
    assert_eq!(marks("fail f-wrong"), count("wrong_output"));
    assert_eq!(
        dom.matches("class=\"worker-line").count(),
        2,
        "a line per worker"
    );
    assert_eq!(marks("worker-row"), 2);
    assert_eq!(marks("rerank-row"), 3);
    assert_eq!(marks("top-row"), 20);
    assert_eq!(marks("pc-line") + marks("pc-line pc-best"), 20);
    assert_mentions(
        &dom,
        &[
            "Drawn: 65 of 65 successful measurements; 15 of 15 failures.",
            "the winner changed",
            "wrong output (run exited with 3",
            "too much shared memory",
        ],
    );

    // A screenshot for review, where cargo keeps the tests' files.
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-fixture.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        &chromium,
        &profile,
        &[
            "--window-size=1100,3600",
            &format!("--screenshot={}", shot.display()),
        ],
        &page,
    );
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 50_000,
        "no screenshot at {} ({size} bytes)",
        shot.display()
    );
    eprintln!("screenshot of the fixture's report: {}", shot.display());
}

#[test]
fn a_report_is_refused_with_the_reason_for_a_missing_or_empty_database() {
    let dir = tempfile::tempdir().unwrap();
    let out = ktune()
        .arg("report")
        .arg(dir.path().join("none.db"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_mentions(&String::from_utf8_lossy(&out.stderr), &["none.db"]);
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let out = ktune()
        .arg("report")
        .arg(&empty)
        .arg("-o")
        .arg(dir.path().join("r.html"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_mentions(
        &String::from_utf8_lossy(&out.stderr),
        &["empty.db", "not a ktune results database"],
    );
    assert!(!dir.path().join("r.html").exists(), "nothing is written");
}

#[test]
fn a_report_goes_to_a_readable_file_and_the_unwritable_folder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture(dir.path());
    let page = dir.path().join("r.html");
    ktune()
        .arg("report")
        .arg(&db)
        .arg("-o")
        .arg(&page)
        .assert()
        .success();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&page).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "a report is for others to read");
    }
    let out = ktune()
        .arg("report")
        .arg(&db)
        .arg("-o")
        .arg(dir.path().join("no/such/folder/r.html"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_mentions(&String::from_utf8_lossy(&out.stderr), &["no/such/folder"]);
}

#[test]
fn a_postgresql_study_is_reported_with_its_default_marked() {
    let Ok(url) = std::env::var("KTUNE_PG_URL") else {
        eprintln!(
            "SKIPPED: no PostgreSQL server: {} (`bash scripts/test.sh` starts one)",
            std::env::var("KTUNE_PG_SKIP").unwrap_or_else(|_| "KTUNE_PG_URL is not set".into())
        );
        return;
    };
    if crate::common::gcc_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    crate::common::written(
        dir.path(),
        "prog.c",
        "#include <stdio.h>\nint main(void) { printf(\"time: %d ms\\n\", (X - 3) * (X - 3) + 1); return 0; }\n",
    );
    let spec = crate::common::gcc_spec(
        "[[parameter]]\nname = \"X\"\nvalues = [1, 2, 3, 4, 5]\ndefault = 5\n",
        0,
        5,
    )
    .replace("name = \"random\"", "name = \"brute_force\"");
    let spec = crate::common::written(dir.path(), "ktune.toml", &spec);
    let study = format!("report-{}", std::process::id());
    crate::common::ktune_in(dir.path())
        .args([
            "tune",
            "ktune.toml",
            "--quiet",
            "--storage",
            &url,
            "--study",
            &study,
        ])
        .succeeds();
    let page = dir.path().join("pg.html");
    let out = ktune()
        .args(["report", "--storage", &url, "--study", &study, "-o"])
        .arg(&page)
        .succeeds();
    assert_mentions(&String::from_utf8_lossy(&out.stderr), &["5 evaluations"]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("class=\"pt ok\"").count(), 5);
    // The spec is where the study says: its default (X = 5, time 5) is marked.
    assert!(html.contains("class=\"default-line\""), "no default line");
    assert!(html.contains("<b>5×</b>better than the default (5)"));
    // The password-free URL only.
    assert!(!html.contains("password="));
    assert_mentions(
        &html,
        &["5 evaluations of its budget of 5; the last worker stopped because"],
    );
    // The facts name the ktune that tuned it.
    assert!(html.contains(&format!(
        "<tr><th>ktune_version</th><td>{}</td></tr>",
        env!("CARGO_PKG_VERSION")
    )));
    let _ = spec;
}

#[test]
fn a_kernel_tuner_cache_is_reported_in_its_file_order() {
    let cache = crate::common::shared_space("convolution_A100");
    if !cache.exists() {
        eprintln!("SKIPPED: no ../shared/data/spaces beside the checkout");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("cache.html");
    let out = ktune()
        .arg("report")
        .arg(&cache)
        .arg("-o")
        .arg(&page)
        .succeeds();
    assert_mentions(
        &String::from_utf8_lossy(&out.stderr),
        &["4362 evaluations", "no clock"],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // 4,201 measured and 161 failed configurations, as the cache holds them.
    assert!(html.contains(r#"<b id="n-evaluations">4362</b>"#));
    assert!(html.contains(r#"<b id="n-failed">161</b>"#));
    assert!(html.contains("of 4201 successful measurements (the lowest and highest"));
    assert_mentions(&html, &["Kernel Tuner cache", "NVIDIA A100"]);
}

#[test]
fn a_t4_file_is_reported_with_its_failure_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture(dir.path());
    let t4 = dir.path().join("fixture.t4.json");
    ktune()
        .arg("results")
        .arg(&db)
        .args(["--format", "t4", "--out"])
        .arg(&t4)
        .succeeds();
    let page = dir.path().join("t4.html");
    ktune()
        .arg("report")
        .arg(&t4)
        .arg("-o")
        .arg(&page)
        .succeeds();
    let html = std::fs::read_to_string(&page).unwrap();
    let from_study = dir.path().join("study.html");
    ktune()
        .arg("report")
        .arg(&db)
        .arg("-o")
        .arg(&from_study)
        .succeeds();
    let study = std::fs::read_to_string(&from_study).unwrap();
    // The same marks as the study's own report: every kind survives the round trip.
    for class in [
        "pt ok",
        "fail f-compile",
        "fail f-runtime",
        "fail f-timeout",
        "fail f-wrong",
    ] {
        let marks = |page: &str| page.matches(&format!("class=\"{class}\"")).count();
        assert_eq!(marks(&html), marks(&study), "{class}");
        assert!(marks(&html) > 0, "{class}");
    }
    assert_mentions(&html, &["T4", "records no default configuration"]);
}
