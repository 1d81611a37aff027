//! The errors of the storages: each names the database (the file, or the server without its
//! password) and what is wrong with it.

use std::path::{Path, PathBuf};

use crate::SCHEMA_VERSION;

/// Errors of the result store. Each names the database file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The file cannot be opened or created (a missing or unwritable directory, a path under
    /// a file, a directory, ...).
    #[error("cannot open or create the results database `{}`: {reason}", path.display())]
    Open {
        /// The database path.
        path: PathBuf,
        /// Why, as far as can be told (a missing directory, a file in the way, ...).
        reason: String,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// [`Store::open_existing`](crate::Store::open_existing) found no file.
    #[error("no results database at `{}`", path.display())]
    Missing {
        /// The database path.
        path: PathBuf,
    },
    /// The file is not a ktune results database (not SQLite at all, or another program's
    /// SQLite database).
    #[error("`{}` is not a ktune results database ({reason})", path.display())]
    NotADatabase {
        /// The database path.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// The database was written by a newer (or unknown) version of ktune.
    #[error(
        "`{}` has results schema version {found}; this ktune reads version {SCHEMA_VERSION}",
        path.display()
    )]
    SchemaVersion {
        /// The database path.
        path: PathBuf,
        /// The version found, as stored.
        found: String,
    },
    /// The database was made for a different tuning problem.
    #[error(
        "`{}` holds results of a different tuning problem:\n{}\nuse another --db path or --study name, or delete the old results to start over",
        path.display(),
        differences.iter().map(|d| format!("  - {d}")).collect::<Vec<_>>().join("\n")
    )]
    Mismatch {
        /// The database path.
        path: PathBuf,
        /// What differs (see [`Fingerprint::differences`](crate::Fingerprint::differences)).
        differences: Vec<String>,
    },
    /// A configuration was recorded twice.
    #[error(
        "`{}`: configuration {configuration} is already recorded (evaluation {seq})",
        path.display()
    )]
    Duplicate {
        /// The database path.
        path: PathBuf,
        /// The configuration, described.
        configuration: String,
        /// The evaluation that recorded it.
        seq: i64,
    },
    /// The study asked for is not in the file (or the file holds several and none was named).
    #[error("`{}`: {message}", path.display())]
    Study {
        /// The database path.
        path: PathBuf,
        /// What is wrong, with the studies there are.
        message: String,
    },
    /// A worker on other hardware than the study's earlier workers.
    #[error(
        "`{}`: study `{study}` was measured on {} but this worker has {device}; results on different hardware are not comparable (pass --allow-mixed-hardware to join anyway, or use another --study)",
        path.display(), others.join(", ")
    )]
    MixedHardware {
        /// The database path.
        path: PathBuf,
        /// The study.
        study: String,
        /// This worker's device.
        device: String,
        /// The other devices, with their hosts.
        others: Vec<String>,
    },
    /// A record or stored row does not fit the search space.
    #[error("`{}`: {message}", path.display())]
    Space {
        /// The database path.
        path: PathBuf,
        /// What does not fit.
        message: String,
    },
    /// SQLite found the file damaged (a corrupt page, a truncated file, ...).
    #[error(
        "`{}` is damaged ({detail}); check it with `sqlite3 {} \"PRAGMA integrity_check\"`, and save what can still be read with `sqlite3 {} .recover > recovered.sql`",
        path.display(), path.display(), path.display()
    )]
    Damaged {
        /// The database path.
        path: PathBuf,
        /// What SQLite said.
        detail: String,
    },
    /// A stored row cannot be read back (the file was edited or damaged).
    #[error("`{}`: damaged results database: {message}", path.display())]
    Corrupt {
        /// The database path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The caller tried to overwrite a key the store manages.
    #[error("`{}`: the metadata key `{key}` is reserved", path.display())]
    ReservedKey {
        /// The database path.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// An SQLite operation failed (disk full, file locked too long, read-only file, ...).
    #[error("results database `{}`: {source}", path.display())]
    Sqlite {
        /// The database path.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// A PostgreSQL operation failed (the server cannot be reached, refused the login, ...).
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL storage `{location}`: {detail}")]
    Postgres {
        /// The server and database (without the password).
        location: String,
        /// What the server or the connection said, on one line.
        detail: String,
        /// The client library's error.
        #[source]
        source: ::postgres::Error,
    },
    /// A storage URL (`--storage`, `[storage]`, `storage=`) that names no storage this build has.
    #[error("storage URL `{url}`: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong, with an example.
        reason: String,
    },
}

pub(crate) fn space_error(path: &Path, message: String) -> StoreError {
    StoreError::Space {
        path: path.to_path_buf(),
        message,
    }
}

/// An SQLite error of the database at `path`: [`StoreError::Damaged`] where SQLite found the
/// file corrupt.
pub(crate) fn sqlite_error(path: &Path, source: rusqlite::Error) -> StoreError {
    if source.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) {
        return damaged(path, &source);
    }
    StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

pub(crate) fn damaged(path: &Path, source: &rusqlite::Error) -> StoreError {
    StoreError::Damaged {
        path: path.to_path_buf(),
        detail: match source {
            rusqlite::Error::SqliteFailure(e, Some(m)) if !m.contains(&e.to_string()) => {
                format!("{m}: {e}")
            }
            rusqlite::Error::SqliteFailure(e, _) => e.to_string(),
            other => other.to_string(),
        },
    }
}

/// An [`StoreError::Open`] with the likeliest reason: SQLite only says it cannot open the
/// file, so look at the path.
pub(crate) fn open_error(path: &Path, source: rusqlite::Error) -> StoreError {
    let reason = if path.is_dir() {
        "it is a directory".to_string()
    } else {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let blocker = parent.and_then(|p| {
            p.ancestors()
                .filter(|a| !a.as_os_str().is_empty())
                .find(|a| a.exists())
                .filter(|a| !a.is_dir())
        });
        match (parent, blocker) {
            (_, Some(file)) => format!("`{}` is a file, not a directory", file.display()),
            (Some(dir), None) if !dir.exists() => {
                format!("the directory `{}` does not exist", dir.display())
            }
            _ => match source.sqlite_error_code() {
                Some(rusqlite::ErrorCode::CannotOpen) => {
                    "the file or its directory cannot be written (check permissions)".into()
                }
                _ => source.to_string(),
            },
        }
    };
    StoreError::Open {
        path: path.to_path_buf(),
        reason,
        source,
    }
}
