//! A runner that can only go on in a new process (a CUDA context poisoned by a kernel fault):
//! `ktune tune` replaces itself with the same command, which resumes from the study where
//! every result is already committed.

use std::sync::atomic::{AtomicBool, Ordering};

/// How many times one `ktune tune` command restarts itself (the count travels in the
/// environment of the new process).
const RESTARTS_ENV: &str = "KTUNE_RESTARTS";
const MAX_RESTARTS: u32 = 100;

/// When the runner needs a new process (`flag` set), replaces this process with a new
/// `ktune tune` with the same arguments, which resumes from the database where every
/// result is already committed; returns `error` otherwise, or when the restart is refused
/// or fails.
pub(crate) fn restart_if_needed(flag: Option<&AtomicBool>, error: anyhow::Error) -> anyhow::Error {
    if !flag.is_some_and(|f| f.load(Ordering::SeqCst)) {
        return error;
    }
    let done: u32 = std::env::var(RESTARTS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if done >= MAX_RESTARTS {
        return error.context(format!(
            "ktune restarted itself {done} times in this command and stops here; run the same \
             command again to go on"
        ));
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return error.context(format!(
                "ktune cannot find its own executable to restart ({e}); run the same command \
                 again to go on"
            ));
        }
    };
    note!(
        "ktune tune: {error:#}\nktune tune: restarting to continue ({} of at most {MAX_RESTARTS})",
        done + 1
    );
    close_on_exec();
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(RESTARTS_ENV, (done + 1).to_string())
        .exec();
    error.context(format!(
        "restarting ktune failed ({e}); run the same command again to go on"
    ))
}

/// Marks every open file descriptor above stderr close-on-exec, so that the new process
/// does not inherit the GPU device files of the poisoned context (the driver frees that
/// context and its memory when they close) or the database's handle.
fn close_on_exec() {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on a descriptor number has no memory effects; one that closed in
        // the meantime just fails with EBADF.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}
