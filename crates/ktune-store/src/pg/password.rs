//! The password of a connection whose URL has none, found where libpq finds it: the
//! `PGPASSWORD` environment variable, else the password file (`PGPASSFILE`, default
//! `~/.pgpass`). Without it a study recorded with a PostgreSQL prior or storage (recorded
//! without its password, so that none is ever stored) could not be opened again by the
//! means `psql` users keep their passwords in.
//!
//! Written here rather than taken from a crate: the `postgres` crate reads neither, and the
//! file's format is five fields a line (libpq's documentation, "The Password File").

use std::path::Path;

use ::postgres::Config;
use ::postgres::config::Host;

/// Sets `config`'s password from `PGPASSWORD` or the password file where it has none.
pub(super) fn fill_in(config: &mut Config, home: Option<&Path>) {
    if config.get_password().is_some() {
        return;
    }
    if let Some(p) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
        config.password(p.as_encoded_bytes());
        return;
    }
    let file = match std::env::var_os("PGPASSFILE") {
        Some(f) => std::path::PathBuf::from(f),
        None => match home {
            Some(h) => h.join(".pgpass"),
            None => return,
        },
    };
    if !private(&file) {
        return;
    }
    let Ok(text) = std::fs::read_to_string(&file) else {
        return;
    };
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        // libpq matches a Unix-domain socket as `localhost`.
        Some(Host::Unix(_)) | None => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let database = config.get_dbname().unwrap_or(&user).to_string();
    if let Some(p) = lookup(&text, [&host, &port, &database, &user]) {
        config.password(p);
    }
}

/// As libpq: a password file that others can read is not used.
fn private(file: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o077 == 0)
    }
    #[cfg(not(unix))]
    {
        file.is_file()
    }
}

/// The password of the first line of a password file whose host, port, database and user
/// match `wanted` (`*` matches anything; `\` escapes `:` and `\`; `#` starts a comment).
pub(super) fn lookup(text: &str, wanted: [&str; 4]) -> Option<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let fields = fields(l.trim_end_matches('\r'));
            (fields.len() == 5).then_some(fields)
        })
        .find(|f| f[..4].iter().zip(wanted).all(|(f, w)| f == "*" || f == w))
        .map(|mut f| f.swap_remove(4))
}

/// A line's fields, split at unescaped `:`, unescaped.
fn fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().unwrap().extend(chars.next()),
            // Past the fourth field, the password takes the rest of the line.
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let text = "# comment\n\
                    other:5432:*:*:no\n\
                    db.cluster:5432:ktune:tuner:first\n\
                    *:*:*:tuner:second\n";
        let want = |h: &str, port: &str, d: &str, u: &str| lookup(text, [h, port, d, u]);
        assert_eq!(
            want("db.cluster", "5432", "ktune", "tuner").as_deref(),
            Some("first")
        );
        assert_eq!(
            want("db.cluster", "5433", "ktune", "tuner").as_deref(),
            Some("second")
        );
        assert_eq!(want("other", "5432", "x", "y").as_deref(), Some("no"));
        assert_eq!(want("db.cluster", "5432", "ktune", "someone"), None);
    }

    #[test]
    fn escapes_and_colons_in_the_password_are_read_as_libpq_reads_them() {
        let text = "h\\:6:5432:d:u:p\\\\w:x\n";
        assert_eq!(
            lookup(text, ["h:6", "5432", "d", "u"]).as_deref(),
            Some("p\\w:x")
        );
        // A line of fewer than five fields is not a line of the file.
        assert_eq!(lookup("h:5432:d:u\n", ["h", "5432", "d", "u"]), None);
    }

    #[test]
    fn a_file_others_can_read_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "*:*:*:*:secret\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert!(!private(&file));
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        assert!(private(&file));
    }
}
