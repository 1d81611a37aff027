//! Running one compile or run step: in a process group of its own, with a timeout that kills
//! the whole group, its output kept to a limit; and the process groups in flight, so that an
//! abandoned run can end them.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// How a step ended.
pub(super) enum Step {
    Finished {
        status: i32,
        stdout: String,
        stderr: String,
    },
    Signalled {
        signal: i32,
        stdout: String,
        stderr: String,
    },
    TimedOut {
        stderr: String,
    },
    SpawnFailed(std::io::Error),
}

/// How close to the time budget's end a step counts as cut by it, and the least time left
/// in which a new configuration is started.
pub(super) const BUDGET_SLACK: Duration = Duration::from_millis(50);

/// The process groups of the steps running now, so that a run the user abandons (a second
/// Ctrl-C) can end them: steps run in process groups of their own (so that a timeout kills
/// all they started), which the terminal's SIGINT does not reach. Process-wide because the
/// interrupt handler that needs it can reach nothing else.
static RUNNING: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Kills the process groups of every compile or run step in flight (for a run that is
/// abandoned: ktune exits right after). Returns how many there were.
pub fn kill_running_steps() -> usize {
    let groups = RUNNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    for &g in &groups {
        // SAFETY: kill(2) on a process group ktune started; no memory is involved.
        unsafe {
            libc::kill(-g, libc::SIGKILL);
        }
    }
    groups.len()
}

/// Registers a running step's process group for as long as it lives.
struct Registered(i32);

impl Registered {
    fn new(group: i32) -> Registered {
        RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(group);
        Registered(group)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        RUNNING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|&g| g != self.0);
    }
}

/// Runs a command in its own process group, output to files in `dir` (no pipe can fill up),
/// and kills the whole group when it runs past `timeout`.
pub(crate) fn run_step(
    mut cmd: Command,
    dir: &Path,
    name: &str,
    timeout: Duration,
    limit: u64,
) -> Step {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use wait_timeout::ChildExt;
    let out_path = dir.join(format!("{name}.stdout"));
    let err_path = dir.join(format!("{name}.stderr"));
    let (out, err) = match (
        std::fs::File::create(&out_path),
        std::fs::File::create(&err_path),
    ) {
        (Ok(o), Ok(e)) => (o, e),
        (Err(e), _) | (_, Err(e)) => return Step::SpawnFailed(e),
    };
    cmd.stdout(out).stderr(err).process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Step::SpawnFailed(e),
    };
    let _registered = Registered::new(child.id() as i32);
    let read = |p: &Path| read_tail(p, limit);
    match child.wait_timeout(timeout) {
        Ok(Some(status)) => match status.code() {
            Some(code) => Step::Finished {
                status: code,
                stdout: read(&out_path),
                stderr: read(&err_path),
            },
            None => Step::Signalled {
                signal: status.signal().unwrap_or(0),
                stdout: read(&out_path),
                stderr: read(&err_path),
            },
        },
        Ok(None) | Err(_) => {
            // SAFETY: kill(2) on the child's process group (its pid, as process_group(0) made
            // it a group leader); no memory is involved.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.wait();
            Step::TimedOut {
                stderr: read(&err_path),
            }
        }
    }
}

/// The last `limit` bytes of an output file as text, with a note in front when more was
/// written; a file over the limit is cut to what was kept, so the build directory does not
/// keep gigabytes either.
fn read_tail(path: &Path, limit: u64) -> String {
    use std::io::{Read, Seek, SeekFrom, Write};
    let Ok(mut file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let skipped = len.saturating_sub(limit);
    let mut kept = Vec::with_capacity(len.min(limit) as usize);
    if file.seek(SeekFrom::Start(skipped)).is_err()
        || Read::by_ref(&mut file)
            .take(limit)
            .read_to_end(&mut kept)
            .is_err()
    {
        return String::new();
    }
    let text = String::from_utf8_lossy(&kept).into_owned();
    if skipped == 0 {
        return text;
    }
    let note = format!(
        "[ktune: {skipped} bytes of output before this were dropped (max_output = {limit})]\n"
    );
    // Cut the file on disk to the same tail.
    let _ = file
        .set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)).map(|_| ()))
        .and_then(|()| file.write_all(note.as_bytes()))
        .and_then(|()| file.write_all(&kept));
    note + &text
}

/// The last few lines of what a failed step said: its error output, or, where it wrote none,
/// its standard output (many programs report their errors there).
pub(super) fn said(stderr: &str, stdout: &str) -> String {
    if stderr.trim().is_empty() && !stdout.trim().is_empty() {
        format!("(on stdout) {}", tail(stdout))
    } else {
        tail(stderr)
    }
}

/// The last few lines of an output, for failure reasons.
pub(super) fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let start = lines.len().saturating_sub(6);
    let t = lines[start..].join("\n");
    if t.is_empty() {
        "(no output)".into()
    } else {
        t
    }
}
