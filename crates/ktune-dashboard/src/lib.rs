//! `ktune dashboard`: a local web server over a storage (SQLite or PostgreSQL) that lists its
//! studies and shows each one's report (`ktune-report`) live while workers tune it.
//!
//! It only reads: each request opens the storage, reads and lets go (SQLite in WAL mode and
//! PostgreSQL never make a writer wait for a reader), so workers are not slowed. A page polls
//! its study's state once a second, one small query, and fetches the report again only when
//! the study holds more evaluations; a study's report is rendered at most once per
//! [`Options::min_render_interval`] whatever the number of pages open, and a render runs off
//! the server's event loop.
//!
//! It binds to 127.0.0.1 unless told otherwise; any other address needs an access token, which
//! every request must then carry (`?token=`, kept in the page's links and polls).

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use ktune_store::{Location, StudySummary};

/// What the dashboard serves and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// The storage.
    pub location: Location,
    /// Where to listen.
    pub bind: SocketAddr,
    /// The token every request must carry; required to listen beyond the loopback.
    pub token: Option<String>,
    /// The least time between two renders of one study's report.
    pub min_render_interval: Duration,
    /// Print each request to standard error.
    pub log: bool,
}

/// Why the dashboard could not start.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// Listening beyond the loopback without a token.
    #[error(
        "--bind {0}: other machines could reach it; a dashboard listens beyond 127.0.0.1 only with --token (every request must then carry ?token=...)"
    )]
    Exposed(SocketAddr),
    /// A token too short to guard anything.
    #[error("--token must be at least 16 characters")]
    WeakToken,
    /// The address is taken or not ours.
    #[error("cannot listen on {addr}: {source}{hint}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// What the OS said.
        source: std::io::Error,
        /// What to do.
        hint: &'static str,
    },
    /// The storage cannot be read at the start.
    #[error(transparent)]
    Store(#[from] ktune_store::StoreError),
    /// The server stopped on an error.
    #[error("the dashboard stopped: {0}")]
    Serve(std::io::Error),
}

struct Shared {
    options: Options,
    /// The last render of each study.
    renders: Mutex<HashMap<String, Render>>,
}

/// A study's report as last rendered.
#[derive(Clone)]
struct Render {
    /// The evaluations it shows.
    evaluations: u64,
    /// When it was made.
    at: Instant,
    /// The page.
    page: Arc<String>,
}

/// Checks `options`, listens, calls `ready` with the address listened on (the port chosen
/// where it was 0), and serves until the process ends.
pub fn serve(options: Options, ready: impl FnOnce(SocketAddr)) -> Result<(), DashboardError> {
    if !options.bind.ip().is_loopback() && options.token.is_none() {
        return Err(DashboardError::Exposed(options.bind));
    }
    if options
        .token
        .as_ref()
        .is_some_and(|t| t.chars().count() < 16)
    {
        return Err(DashboardError::WeakToken);
    }
    // The storage must be readable at the start: a wrong URL is said now, not in the page.
    options.location.studies()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(DashboardError::Serve)?;
    runtime.block_on(async move {
        let bind = options.bind;
        let listener = tokio::net::TcpListener::bind(bind).await.map_err(|source| {
            let hint = match source.kind() {
                std::io::ErrorKind::AddrInUse => {
                    ": another program listens there; choose another port (--bind 127.0.0.1:8081, or port 0 for any free one)"
                }
                std::io::ErrorKind::PermissionDenied => ": ports below 1024 need privileges; choose a port above it",
                _ => "",
            };
            DashboardError::Bind { addr: bind, source, hint }
        })?;
        let addr = listener.local_addr().map_err(DashboardError::Serve)?;
        let shared = Arc::new(Shared {
            options,
            renders: Mutex::new(HashMap::new()),
        });
        let app = Router::new()
            .route("/", get(index))
            .route("/live.js", get(script))
            .route("/api/studies", get(studies_json))
            .route("/api/study/{name}/state", get(state_json))
            .route("/study/{name}", get(study_page))
            .layer(axum::middleware::from_fn_with_state(
                shared.clone(),
                loopback_names_only,
            ))
            .with_state(shared);
        ready(addr);
        axum::serve(listener, app).await.map_err(DashboardError::Serve)
    })
}

type Q = Query<HashMap<String, String>>;

/// Without a token (a dashboard on the loopback), a 403 for a request whose `Host` is not a
/// loopback name: a web page elsewhere could otherwise read the dashboard through a name of
/// its own that resolves to 127.0.0.1 (DNS rebinding).
async fn loopback_names_only(
    State(shared): State<Arc<Shared>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if shared.options.token.is_none() && !loopback_name(host) {
        return (
            StatusCode::FORBIDDEN,
            "this dashboard answers requests to localhost, 127.0.0.1 or [::1] only\n",
        )
            .into_response();
    }
    next.run(request).await
}

/// Whether a `Host` header (`name[:port]`, `[v6][:port]`) names this machine's loopback.
fn loopback_name(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A 403 response unless the request carries the token (where one is set).
fn refused(shared: &Shared, query: &HashMap<String, String>) -> Option<Response> {
    let token = shared.options.token.as_ref()?;
    let given = query.get("token").map(String::as_bytes).unwrap_or_default();
    // Compared in time independent of where they differ.
    let same = given.len() == token.len()
        && given
            .iter()
            .zip(token.as_bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    (!same).then(|| {
        (
            StatusCode::FORBIDDEN,
            "this dashboard needs its token: open the URL it printed\n",
        )
            .into_response()
    })
}

fn log(shared: &Shared, what: &str) {
    if shared.options.log {
        {
            // A closed stderr drops the notice (`eprintln!` would panic).
            let _ = writeln!(std::io::stderr(), "ktune dashboard: {what}");
        }
    }
}

/// `?token=...` to append to the page's links, or nothing.
fn token_suffix(shared: &Shared) -> String {
    shared
        .options
        .token
        .as_ref()
        .map_or(String::new(), |t| format!("?token={}", encode(t)))
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Runs blocking storage work off the event loop (`Err`: it panicked, said as text).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| format!("the dashboard failed: {e}\n"))
}

fn failed(message: String) -> Response {
    (StatusCode::INTERNAL_SERVER_ERROR, message).into_response()
}

fn unreadable(e: impl std::fmt::Display) -> Response {
    let body = serde_json::json!({ "error": e.to_string() }).to_string();
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

async fn script(State(shared): State<Arc<Shared>>, Query(q): Q) -> Response {
    if let Some(r) = refused(&shared, &q) {
        return r;
    }
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        include_str!("live.js"),
    )
        .into_response()
}

fn summary_json(s: &StudySummary) -> serde_json::Value {
    serde_json::json!({
        "name": s.name,
        "evaluations": s.evaluations,
        "failed": s.failed,
        "best": s.best,
        "direction": s.direction,
        "budget": s.budget,
        "workers": s.workers,
        "claims": s.claims,
        "created": s.created,
    })
}

async fn studies_json(State(shared): State<Arc<Shared>>, Query(q): Q) -> Response {
    if let Some(r) = refused(&shared, &q) {
        return r;
    }
    let location = shared.options.location.clone();
    let read =
        move || Ok::<_, ktune_store::StoreError>((location.studies()?, location.live_claims()?));
    match blocking(read).await {
        Err(m) => failed(m),
        Ok(Err(e)) => unreadable(e),
        Ok(Ok((list, claims))) => {
            let body =
                serde_json::Value::Array(list.iter().map(|s| state_of(s, &claims)).collect())
                    .to_string();
            ([(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
    }
}

/// A study's summary with who is measuring what now: each worker with its live claims.
fn state_of(s: &StudySummary, claims: &[(String, String, u64)]) -> serde_json::Value {
    let mut state = summary_json(s);
    state["claimed_by"] = claims
        .iter()
        .filter(|c| c.0 == s.name)
        .map(|c| serde_json::json!({ "worker": c.1, "claims": c.2 }))
        .collect();
    state
}

async fn state_json(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
    Query(q): Q,
) -> Response {
    if let Some(r) = refused(&shared, &q) {
        return r;
    }
    let location = shared.options.location.clone();
    let read =
        move || Ok::<_, ktune_store::StoreError>((location.studies()?, location.live_claims()?));
    match blocking(read).await {
        Err(m) => failed(m),
        Ok(Err(e)) => unreadable(e),
        Ok(Ok((list, claims))) => match list.iter().find(|s| s.name == name) {
            Some(s) => (
                [(header::CONTENT_TYPE, "application/json")],
                state_of(s, &claims).to_string(),
            )
                .into_response(),
            None => unreadable(format!("the storage holds no study `{name}` now")),
        },
    }
}

async fn index(State(shared): State<Arc<Shared>>, Query(q): Q) -> Response {
    if let Some(r) = refused(&shared, &q) {
        return r;
    }
    log(&shared, "GET /");
    let location = shared.options.location.clone();
    let shown = location.display();
    let suffix = token_suffix(&shared);
    let read =
        move || Ok::<_, ktune_store::StoreError>((location.studies()?, location.live_claims()?));
    let (warning, list, claims) = match blocking(read).await {
        Err(m) => return failed(m),
        Ok(Err(e)) => (
            format!(
                r#"<p class="warning">Cannot read the storage now: {}</p>"#,
                ktune_report::svg::escape(&e.to_string())
            ),
            Vec::new(),
            Vec::new(),
        ),
        Ok(Ok((list, claims))) => (String::new(), list, claims),
    };
    Html(index_page(&shown, &warning, &list, &claims, &suffix)).into_response()
}

/// The list of studies as first drawn; the page's script keeps it current (`/api/studies`).
fn index_page(
    shown: &str,
    warning: &str,
    list: &[StudySummary],
    claims: &[(String, String, u64)],
    suffix: &str,
) -> String {
    let empty = format!(
        "<p id=\"no-studies\"{}>This storage holds no study yet: start one with <code>ktune tune SPEC --storage URL</code>; it appears here when its first worker joins.</p>",
        if list.is_empty() { "" } else { " hidden" }
    );
    let table = studies_table(list, claims, suffix);
    let esc = ktune_report::svg::escape;
    format!(
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'"><title>ktune dashboard</title><style>body{{font:15px/1.45 system-ui,sans-serif;max-width:980px;margin:0 auto;padding:0 18px}}table{{border-collapse:collapse;width:100%}}th,td{{border-bottom:1px solid #d9dde5;padding:4px 6px;text-align:left}}.running{{color:#1f77b4;font-weight:600}}.finished{{color:#2ca02c}}.warning{{background:#fff4e5;border-left:4px solid #ff7f0e;padding:6px 10px}}.caption{{color:#5b6475;font-size:13px}}</style><script src="/live.js{suffix}" defer></script></head><body data-studies="/api/studies"><h1>ktune dashboard</h1><p>{} · read only · kept current</p><p id="live"></p>{warning}{empty}{table}</body></html>"#,
        esc(shown)
    )
}

fn studies_table(list: &[StudySummary], claims: &[(String, String, u64)], suffix: &str) -> String {
    let esc = ktune_report::svg::escape;
    let mut out = String::from(
        "<table id=\"studies\"><thead><tr><th>study</th><th>state</th><th>evaluations</th><th>failed</th><th>best</th><th>budget</th><th>workers</th><th>created</th></tr></thead><tbody>",
    );
    for s in list {
        let (class, state) = if s.claims > 0 {
            let by: Vec<String> = claims
                .iter()
                .filter(|c| c.0 == s.name)
                .map(|c| format!("{} ({})", esc(&c.1), c.2))
                .collect();
            (
                "running",
                format!("running: {} being measured by {}", s.claims, by.join(", ")),
            )
        } else if s.budget.is_some_and(|b| s.evaluations >= b) {
            ("finished", "finished".to_string())
        } else {
            ("stopped", "stopped".to_string())
        };
        out.push_str(&format!(
            r#"<tr class="study {class}"><td><a href="/study/{}{suffix}">{}</a></td><td class="{class}">{state}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            encode(&s.name),
            esc(&s.name),
            s.evaluations,
            s.failed,
            s.best.map_or("-".into(), ktune_report::svg::number),
            s.budget.map_or("-".into(), |b| b.to_string()),
            s.workers,
            s.created.map_or("-".into(), ktune_core::utc_text),
        ));
    }
    out.push_str("</tbody></table>");
    out
}

async fn study_page(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
    Query(q): Q,
) -> Response {
    if let Some(r) = refused(&shared, &q) {
        return r;
    }
    log(&shared, &format!("GET /study/{name}"));
    let location = shared.options.location.clone();
    let key = name.clone();
    // The count first (one small query): an unchanged study is served from the last render.
    let count = match blocking({
        let location = location.clone();
        move || location.studies()
    })
    .await
    {
        Err(m) => return failed(m),
        Ok(Err(e)) => return page_error(&e.to_string()),
        Ok(Ok(list)) => match list.iter().find(|s| s.name == name) {
            Some(s) => s.evaluations,
            None => return page_error(&format!("the storage holds no study `{name}`")),
        },
    };
    let cached = shared
        .renders
        .lock()
        .ok()
        .and_then(|r| r.get(&key).cloned());
    if let Some(r) = &cached
        && (r.evaluations == count || r.at.elapsed() < shared.options.min_render_interval)
    {
        return Html(r.page.as_str().to_string()).into_response();
    }
    let suffix = token_suffix(&shared);
    let live = ktune_report::Live {
        script: format!("/live.js{suffix}"),
        state: format!("/api/study/{}/state", encode(&name)),
        body: format!("/study/{}", encode(&name)),
    };
    let shown = location.display();
    let rendered = blocking(move || {
        let study = ktune_problem::report::study_for_report(&location, Some(&name), &shown)
            .map_err(|e| e.to_string())?;
        let options = ktune_report::Options {
            generator: format!("ktune dashboard {}", env!("CARGO_PKG_VERSION")),
            generated: ktune_core::utc_text(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64()),
            ),
            live_script: Some(live),
            ..ktune_report::Options::default()
        };
        let n = study.rows.len() as u64;
        ktune_report::render(&study, &options)
            .map(|p| (n, p))
            .map_err(|e| e.to_string())
    })
    .await;
    match rendered {
        Err(m) => failed(m),
        Ok(Err(e)) => page_error(&e),
        Ok(Ok((n, page))) => {
            let page = Arc::new(page);
            if let Ok(mut r) = shared.renders.lock() {
                r.insert(
                    key,
                    Render {
                        evaluations: n,
                        at: Instant::now(),
                        page: page.clone(),
                    },
                );
            }
            Html(page.as_str().to_string()).into_response()
        }
    }
}

fn page_error(message: &str) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Html(format!(
            r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>ktune dashboard</title></head><body><h1>ktune dashboard</h1><p class="warning" id="error">{}</p><p><a href="/">all studies</a></p></body></html>"#,
            ktune_report::svg::escape(message)
        )),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_names_are_taken_for_a_dashboard_without_a_token() {
        for host in [
            "127.0.0.1:8080",
            "localhost:80",
            "LOCALHOST",
            "[::1]:8080",
            "127.0.0.2",
        ] {
            assert!(loopback_name(host), "{host}");
        }
        for host in [
            "evil.com",
            "evil.com:8080",
            "10.0.0.1:80",
            "",
            "[::2]:1",
            "localhost.evil.com",
        ] {
            assert!(!loopback_name(host), "{host}");
        }
    }

    fn summary(name: &str, evaluations: u64, budget: Option<u64>, claims: u64) -> StudySummary {
        StudySummary {
            name: name.into(),
            evaluations,
            failed: 0,
            best: Some(1.5),
            direction: Some("minimize".into()),
            budget,
            workers: 1,
            claims,
            created: None,
        }
    }

    #[test]
    fn an_empty_storage_says_how_studies_get_there() {
        let page = index_page("sqlite:///s.db", "", &[], &[], "");
        assert!(page.contains("<p id=\"no-studies\">This storage holds no study yet"));
        assert!(!page.contains("<tr class=\"study"));
    }

    #[test]
    fn studies_are_running_finished_or_stopped_and_names_are_escaped() {
        let list = [
            summary("a<b>", 3, Some(10), 2),
            summary("done", 10, Some(10), 0),
            summary("idle", 4, None, 0),
        ];
        let claims = [
            ("a<b>".to_string(), "w&1".to_string(), 1),
            ("a<b>".to_string(), "w2".to_string(), 1),
        ];
        let page = index_page("x", "", &list, &claims, "?token=t");
        assert!(page.contains("<p id=\"no-studies\" hidden>"));
        assert!(page.contains("running: 2 being measured by w&amp;1 (1), w2 (1)"));
        assert!(page.contains(r#"<tr class="study finished">"#));
        assert!(page.contains(r#"<tr class="study stopped">"#));
        assert!(page.contains(r#"href="/study/a%3Cb%3E?token=t">a&lt;b&gt;</a>"#));
        assert!(!page.contains("<b>"));
    }
}
