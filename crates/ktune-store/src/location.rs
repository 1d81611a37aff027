//! Where a study lives: a storage URL (`sqlite:///path`, `postgresql://...`), and the
//! summary of the studies a storage holds.

use std::path::PathBuf;

#[cfg(feature = "postgres")]
use crate::PgStore;
use crate::{BUDGET_KEY, DIRECTION_KEY, Fingerprint, Store, StoreError, StudyDump, redact};

/// Where a shared study lives: a `--storage` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file (`sqlite:///abs/path.db` or `sqlite://relative.db`), shared by the
    /// processes of one machine or of a file system with working locks.
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgresql://user[:password]@host[:port]/database`, with
    /// libpq's TLS parameters `sslmode`, `sslrootcert`, `sslcert`, `sslkey`).
    Postgres(String),
}

impl Location {
    /// Reads a storage URL.
    pub fn parse(url: &str) -> Result<Location, StoreError> {
        let bad = |reason: &str| StoreError::Url {
            url: redact(url),
            reason: reason.to_string(),
        };
        if let Some(path) = url.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(bad(
                    "no path after sqlite:// (e.g. sqlite:///scratch/study.db)",
                ));
            }
            // `sqlite://user:pw@/path` would name a file `user:pw@/path`, said back in messages.
            if let Some((authority, _)) = path.split_once('/')
                && authority.contains('@')
            {
                return Err(bad(
                    "a sqlite:// URL takes no user or password: give the file's path alone (sqlite:///scratch/study.db)",
                ));
            }
            // SQLite's own URIs take parameters (`?mode=ro`); here they would silently become
            // part of the file's name.
            if let Some((_, query)) = path.split_once('?') {
                return Err(bad(&format!(
                    "a sqlite:// URL takes no parameters (`?{query}`); give the file's path alone \
                     (a file whose name has a `?` can be given with --db)"
                )));
            }
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        if url.starts_with("postgresql://") || url.starts_with("postgres://") {
            if cfg!(feature = "postgres") {
                crate::conninfo::check_postgres_url(url).map_err(|m| bad(&m))?;
                return Ok(Location::Postgres(url.to_string()));
            }
            return Err(bad(
                "this ktune was built without PostgreSQL (cargo feature `postgres`)",
            ));
        }
        Err(bad(
            "not a storage URL; use sqlite:///path/to/study.db or postgresql://user@host/database",
        ))
    }

    /// The URL without a password, for messages.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => format!(
                "sqlite://{}",
                std::path::absolute(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
            ),
            Location::Postgres(url) => redact(url),
        }
    }

    /// Opens (creating where missing) the study `name` for `fingerprint`.
    pub fn open_study(
        &self,
        name: &str,
        fingerprint: &Fingerprint,
    ) -> Result<Box<dyn ktune_core::Storage>, StoreError> {
        match self {
            Location::Sqlite(path) => Ok(Box::new(Store::open_study(path, name, fingerprint)?)),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Ok(Box::new(PgStore::open_study(url, name, fingerprint)?)),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::Url {
                url: redact(url),
                reason: "this ktune was built without PostgreSQL".into(),
            }),
        }
    }

    /// Every study of the storage, summarised, oldest first.
    pub fn studies(&self) -> Result<Vec<StudySummary>, StoreError> {
        match self {
            Location::Sqlite(path) => Store::open_read(path)?.summaries(),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => PgStore::open_database(url)?.summaries(),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::Url {
                url: redact(url),
                reason: "this ktune was built without PostgreSQL".into(),
            }),
        }
    }

    /// The configurations claimed now (being measured), per study and worker: `(study,
    /// worker, claims)`, by study and worker name.
    pub fn live_claims(&self) -> Result<Vec<(String, String, u64)>, StoreError> {
        match self {
            Location::Sqlite(path) => Store::open_read(path)?.live_claims(),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => PgStore::open_database(url)?.live_claims(),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::Url {
                url: redact(url),
                reason: "this ktune was built without PostgreSQL".into(),
            }),
        }
    }

    /// An existing study (`name`, or the only one), column by column, for reading and
    /// copying.
    pub fn dump_study(&self, name: Option<&str>) -> Result<StudyDump, StoreError> {
        match self {
            Location::Sqlite(path) => Store::open_existing_study(path, name)?.dump(),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => PgStore::open_existing_study(url, name)?.dump(),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::Url {
                url: redact(url),
                reason: "this ktune was built without PostgreSQL".into(),
            }),
        }
    }
}

/// One study of a storage, summarised (`ktune results --studies`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StudySummary {
    /// Its name.
    pub name: String,
    /// Evaluations recorded.
    pub evaluations: u64,
    /// Of those, how many failed.
    pub failed: u64,
    /// The best objective value, in the study's direction (minimised where none is stored).
    pub best: Option<f64>,
    /// `minimize` or `maximize`, where the study stored it.
    pub direction: Option<String>,
    /// The study's evaluation budget, where it has one.
    pub budget: Option<u64>,
    /// Workers that joined it.
    pub workers: u64,
    /// Configurations claimed by a worker now (being measured): a study with live claims is
    /// running.
    pub claims: u64,
    /// When it was made, in seconds since the Unix epoch.
    pub created: Option<f64>,
}

/// The query behind [`StudySummary`], for the tables of both storages (`prefix`: their
/// schema, with its dot; `now`: their expression for the time in seconds).
pub(crate) fn summary_sql(prefix: &str, now: &str) -> String {
    let of = |table: &str| format!("{prefix}{table} x WHERE x.study = s.id");
    let meta = |key: &str| {
        format!(
            "(SELECT x.value FROM {} AND x.key = '{key}')",
            of("study_meta")
        )
    };
    format!(
        "SELECT s.name, s.created, \
         (SELECT COUNT(*) FROM {e}), \
         (SELECT COUNT(*) FROM {e} AND x.status <> 'ok'), \
         (SELECT MIN(x.objective) FROM {e} AND x.status = 'ok'), \
         (SELECT MAX(x.objective) FROM {e} AND x.status = 'ok'), \
         {direction}, {budget}, \
         (SELECT COUNT(*) FROM {w}), \
         (SELECT COUNT(*) FROM {c} AND x.expires > {now}) \
         FROM {prefix}studies s ORDER BY s.id",
        e = of("evaluations"),
        w = of("workers"),
        c = of("claims"),
        direction = meta(DIRECTION_KEY),
        budget = meta(BUDGET_KEY),
    )
}

/// The query behind [`Location::live_claims`] (`prefix` and `now` as for [`summary_sql`]).
pub(crate) fn claims_sql(prefix: &str, now: &str) -> String {
    format!(
        "SELECT s.name, c.worker, COUNT(*) FROM {prefix}claims c JOIN {prefix}studies s \
         ON s.id = c.study WHERE c.expires > {now} GROUP BY s.name, c.worker \
         ORDER BY s.name, c.worker"
    )
}

/// A summary from the columns of [`summary_sql`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn summary(
    name: String,
    created: Option<f64>,
    evaluations: i64,
    failed: i64,
    min: Option<f64>,
    max: Option<f64>,
    direction: Option<String>,
    budget: Option<String>,
    workers: i64,
    claims: i64,
) -> StudySummary {
    StudySummary {
        best: if direction.as_deref() == Some("maximize") {
            max
        } else {
            min
        },
        name,
        evaluations: evaluations.max(0) as u64,
        failed: failed.max(0) as u64,
        direction,
        budget: budget.and_then(|b| b.parse().ok()),
        workers: workers.max(0) as u64,
        claims: claims.max(0) as u64,
        created,
    }
}

/// Study names for a message: all of them, or the first twelve and how many more.
pub(crate) fn name_list(names: &[String]) -> String {
    const SHOWN: usize = 12;
    if names.len() <= SHOWN {
        names.join(", ")
    } else {
        format!(
            "{}, and {} more (list them with `ktune results --storage URL --studies`)",
            names[..SHOWN].join(", "),
            names.len() - SHOWN
        )
    }
}
