//! `ktune dashboard`: the storage's studies and their reports, live, in a browser.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use ktune_store::Location;

/// Arguments of `ktune dashboard`.
#[derive(clap::Args)]
pub struct DashboardArgs {
    /// A results database written by `ktune tune` (or give --storage).
    db: Option<PathBuf>,
    /// The storage: sqlite:///path/study.db or postgresql://user@host/db.
    #[arg(long, value_name = "URL")]
    storage: Option<String>,
    /// The study to open first (the printed URL goes to its page).
    #[arg(long, value_name = "NAME")]
    study: Option<String>,
    /// Where to listen (port 0: any free one). Beyond 127.0.0.1 only with --token.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT")]
    bind: SocketAddr,
    /// A token (16 characters or more) every request must carry as ?token=...; needed to
    /// listen beyond the loopback. Also read from KTUNE_DASHBOARD_TOKEN.
    #[arg(long, env = "KTUNE_DASHBOARD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Print each page request to standard error.
    #[arg(long)]
    log: bool,
}

pub fn run(args: &DashboardArgs) -> Result<()> {
    let location = match (&args.db, &args.storage) {
        (Some(_), Some(_)) => bail!("give either a results database or --storage URL, not both"),
        (None, None) => bail!(
            "which storage? give the database `ktune tune` wrote (ktune dashboard ktune.db) or --storage URL"
        ),
        (Some(db), None) => {
            crate::results::database_path(db)?;
            if !db.exists() {
                bail!("`{}` does not exist", db.display());
            }
            Location::Sqlite(db.clone())
        }
        (None, Some(url)) => Location::parse(url)?,
    };
    if let Some(study) = &args.study {
        ktune_core::checked_label(study).map_err(|m| anyhow::anyhow!("--study {m}"))?;
    }
    let shown = location.display();
    let options = ktune_dashboard::Options {
        location,
        bind: args.bind,
        token: args.token.clone(),
        min_render_interval: Duration::from_secs(1),
        log: args.log,
    };
    let study = args.study.clone();
    let token = args.token.clone();
    ktune_dashboard::serve(options, move |addr| {
        let path = study.map_or(String::new(), |s| format!("study/{s}"));
        let query = token.map_or(String::new(), |_| "?token=<your token>".into());
        // Scripts and tests read the address from this line (with port 0, the chosen port).
        println!("ktune dashboard: http://{addr}/{path}{query}");
        note!("serving {shown} read-only; Ctrl-C to stop");
    })?;
    Ok(())
}
