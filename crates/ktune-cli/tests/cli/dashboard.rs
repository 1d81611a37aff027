//! `ktune dashboard` end to end: a study's page open in headless Chromium (driven over the
//! DevTools protocol) shows a record written by a worker within 2 seconds, without a reload,
//! and says so when the storage goes away; refusals at the start.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Succeeds, assert_mentions, gcc_missing, gcc_spec, ktune, ktune_in, written};
use crate::report::chromium;

/// Kills its process when dropped (a failed test leaves no server or browser behind).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The dashboard on a free port: the process and its base URL.
fn dashboard(args: &[&str]) -> (Killed, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ktune"))
        .arg("dashboard")
        .args(args)
        .args(["--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // `http://127.0.0.1:PORT/...`: the base, without the path the line may add.
    let rest = line
        .trim()
        .strip_prefix("ktune dashboard: http://")
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    (Killed(child), format!("http://{host}"))
}

/// A response to a plain HTTP GET (empty where the connection failed: callers retry).
fn http_get(host_port: &str, path: &str) -> String {
    http_get_as(host_port, host_port, path)
}

/// [`http_get`] with the `Host` header `host`.
fn http_get_as(host_port: &str, host: &str, path: &str) -> String {
    let Ok(mut s) = std::net::TcpStream::connect(host_port) else {
        return String::new();
    };
    let _ = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    // Chromium's DevTools server keeps the connection open: read up to Content-Length.
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            });
            if length.is_some_and(|n| body.len() >= n) {
                break;
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The body of [`http_get`].
fn http_body(host_port: &str, path: &str) -> String {
    let text = http_get(host_port, path);
    text.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// A page of headless Chromium, evaluated in over the DevTools protocol.
struct Browser {
    _process: Killed,
    socket: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
    id: u64,
}

impl Browser {
    fn open(chromium: &Path, profile: &Path, url: &str) -> Browser {
        let mut child = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Chromium says where DevTools listens on its standard error, and goes on writing
        // there: a thread reads it all, so that a full pipe never stops the browser.
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (found, port) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if let Some(rest) = line.split("DevTools listening on ws://").nth(1) {
                    let _ = found.send(rest.split('/').next().unwrap_or_default().to_string());
                }
            }
        });
        let host_port = port
            .recv_timeout(Duration::from_secs(30))
            .expect("Chromium said where DevTools listens");
        let deadline = Instant::now() + Duration::from_secs(20);
        let ws = loop {
            let list: serde_json::Value =
                serde_json::from_str(&http_body(&host_port, "/json/list")).unwrap_or_default();
            let found = list.as_array().into_iter().flatten().find(|t| {
                t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.starts_with("http"))
            });
            if let Some(t) = found {
                break t["webSocketDebuggerUrl"].as_str().unwrap().to_string();
            }
            assert!(Instant::now() < deadline, "no page in Chromium: {list}");
            std::thread::sleep(Duration::from_millis(100));
        };
        let (socket, _) = tungstenite::connect(ws.as_str()).unwrap();
        Browser {
            _process: Killed(child),
            socket,
            id: 0,
        }
    }

    /// The value of a JavaScript expression in the page (as text).
    fn eval(&mut self, expression: &str) -> String {
        self.id += 1;
        let request = serde_json::json!({
            "id": self.id,
            "method": "Runtime.evaluate",
            "params": { "expression": expression, "returnByValue": true },
        });
        self.socket.send(request.to_string().into()).unwrap();
        loop {
            let message = self.socket.read().unwrap();
            let Ok(reply) =
                serde_json::from_str::<serde_json::Value>(message.to_text().unwrap_or(""))
            else {
                continue;
            };
            if reply["id"] == self.id {
                let v = &reply["result"]["result"]["value"];
                return v.as_str().map_or_else(|| v.to_string(), str::to_string);
            }
        }
    }

    /// Opens `url` in the page, and waits until it has loaded.
    fn navigate(&mut self, url: &str) {
        self.id += 1;
        let request = serde_json::json!({
            "id": self.id,
            "method": "Page.navigate",
            "params": { "url": url },
        });
        self.socket.send(request.to_string().into()).unwrap();
        self.wait_for("document.readyState", "complete", Duration::from_secs(10));
        self.wait_for("location.href", url, Duration::from_secs(10));
    }

    /// Waits until `expression` is `want`, for at most `limit`: how long it took.
    fn wait_for(&mut self, expression: &str, want: &str, limit: Duration) -> Duration {
        let started = Instant::now();
        loop {
            let got = self.eval(expression);
            if got == want {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < limit,
                "`{expression}` is {got:?}, not {want:?}, after {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn a_record_written_while_the_page_is_open_appears_within_two_seconds() {
    let Some(chromium) = chromium() else {
        eprintln!("SKIPPED: no Chromium (set KTUNE_CHROMIUM, or install Debian's chromium)");
        return;
    };
    if gcc_missing() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    written(
        dir.path(),
        "prog.c",
        "#include <stdio.h>\nint main(void) { printf(\"time: %d ms\\n\", (X - 5) * (X - 5) + 1); return 0; }\n",
    );
    let spec = gcc_spec(
        "[[parameter]]\nname = \"X\"\nvalues = [1, 2, 3, 4, 5, 6, 7, 8]\n",
        0,
        4,
    );
    written(dir.path(), "ktune.toml", &spec);
    let storage = format!("sqlite:///{}", dir.path().join("s.db").display());
    let tune = |evals: &str| {
        ktune_in(dir.path())
            .args([
                "tune",
                "ktune.toml",
                "--quiet",
                "--storage",
                &storage,
                "--study",
                "live",
            ])
            .args(["--max-evals", evals])
            .succeeds();
    };
    tune("4");
    let (mut server, url) = dashboard(&["--storage", &storage]);
    let mut page = Browser::open(&chromium, &dir.path().join("profile"), &format!("{url}/"));
    // The list of studies first: one row, four evaluations.
    let listed = "document.querySelector('#studies tbody tr td:nth-child(3)').textContent";
    page.wait_for(listed, "4", Duration::from_secs(20));
    page.navigate(&format!("{url}/study/live"));
    let count = "document.querySelector('main').dataset.evaluations";
    page.wait_for(count, "4", Duration::from_secs(20));
    page.wait_for(
        "String(document.getElementById('live').textContent.startsWith('live: 4 evaluations'))",
        "true",
        Duration::from_secs(5),
    );
    // A worker records a fifth evaluation while the page is open.
    tune("5");
    let took = page.wait_for(count, "5", Duration::from_secs(2));
    assert_eq!(
        page.eval("document.getElementById('n-evaluations').textContent"),
        "5"
    );
    assert_eq!(
        page.eval("String(performance.getEntriesByType('navigation').length)"),
        "1"
    );
    eprintln!("the new record appeared after {took:?}");

    // The list of studies follows too (it is polled every two seconds).
    page.navigate(&format!("{url}/"));
    page.wait_for(listed, "5", Duration::from_secs(5));
    tune("6");
    let took = page.wait_for(listed, "6", Duration::from_secs(3));
    eprintln!("the list of studies followed after {took:?}");
    page.navigate(&format!("{url}/study/live"));
    page.wait_for(count, "6", Duration::from_secs(5));

    // The storage goes away: the page says so, and the server goes on.
    for f in ["s.db", "s.db-wal", "s.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(f));
    }
    page.wait_for(
        "String(document.getElementById('live').textContent.startsWith('cannot read the study now'))",
        "true",
        Duration::from_secs(5),
    );
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "the dashboard stopped"
    );
    assert!(
        !dir.path().join("s.db").exists(),
        "the dashboard made a database"
    );
}

#[test]
fn the_dashboard_refuses_to_listen_beyond_the_loopback_without_a_token_and_names_a_port_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    std::fs::copy(
        crate::common::repo("crates/ktune-report/tests/fixture/study.db"),
        &db,
    )
    .unwrap();
    let db = db.display().to_string();
    ktune()
        .args(["dashboard", &db, "--bind", "0.0.0.0:0"])
        .fails_saying(&["0.0.0.0:0", "--token"]);
    ktune()
        .args(["dashboard", &db, "--bind", "0.0.0.0:0", "--token", "short"])
        .fails_saying(&["at least 16 characters"]);
    let (_server, url) = dashboard(&[&db]);
    let taken = url.trim_start_matches("http://");
    ktune()
        .args(["dashboard", &db, "--bind", taken])
        .fails_saying(&[taken, "choose another port"]);
    ktune()
        .args([
            "dashboard",
            &dir.path().join("none.db").display().to_string(),
        ])
        .fails_saying(&["none.db", "does not exist"]);
}

#[test]
fn without_a_token_only_requests_to_a_loopback_name_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    std::fs::copy(
        crate::common::repo("crates/ktune-report/tests/fixture/study.db"),
        &db,
    )
    .unwrap();
    let (_server, url) = dashboard(&[&db.display().to_string()]);
    let host = url.trim_start_matches("http://").to_string();
    let port = host.rsplit_once(':').unwrap().1;
    let status = |name: &str, path: &str| {
        http_get_as(&host, name, path)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    };
    // A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its
    // own name: it gets nothing.
    for path in ["/", "/api/studies", "/study/fixture"] {
        assert_mentions(&status(&format!("evil.example:{port}"), path), &["403"]);
        assert_mentions(&status(&format!("localhost:{port}"), path), &["200"]);
    }
    assert_mentions(&status(&host, "/api/studies"), &["200"]);
}

#[test]
fn with_a_token_every_request_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    std::fs::copy(
        crate::common::repo("crates/ktune-report/tests/fixture/study.db"),
        &db,
    )
    .unwrap();
    let token = "a-token-of-20-chars!";
    let (_server, url) = dashboard(&[&db.display().to_string(), "--token", token]);
    let host = url.trim_start_matches("http://").to_string();
    let status = |path: &str| {
        http_get(&host, path)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    };
    assert_mentions(&status("/study/fixture"), &["403"]);
    assert_mentions(&status("/api/studies?token=wrong-token-of-20-ch"), &["403"]);
    assert_mentions(
        &status("/api/studies?token=a-token-of-20-chars%21"),
        &["200"],
    );
    assert_mentions(
        &status("/study/fixture?token=a-token-of-20-chars%21"),
        &["200"],
    );

    // A worker measuring: the study's state names it with its claims.
    let fingerprint = ktune_store::Store::open_existing_study(&db, Some("fixture"))
        .and_then(|s| s.fingerprint())
        .unwrap();
    let mut store = ktune_store::Location::Sqlite(db.clone())
        .open_study("fixture", &fingerprint)
        .unwrap();
    let lease = Duration::from_secs(120);
    let mut granted = 0;
    for i in 0..5u32 {
        for j in 0..4u32 {
            let config = vec![i, j, 0, 0];
            if granted < 2
                && store.claim(&config, "w-busy", lease, None).unwrap()
                    == ktune_core::Claim::Granted
            {
                granted += 1;
            }
        }
    }
    assert_eq!(
        granted, 2,
        "the fixture has unmeasured configurations to claim"
    );
    let state = http_body(
        &host,
        "/api/study/fixture/state?token=a-token-of-20-chars%21",
    );
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(state["claims"], 2, "{state}");
    assert_eq!(
        state["claimed_by"],
        serde_json::json!([{ "worker": "w-busy", "claims": 2 }])
    );
    let index = http_get(&host, "/?token=a-token-of-20-chars%21");
    assert_mentions(&index, &["running: 2 being measured by w-busy (2)"]);
}
