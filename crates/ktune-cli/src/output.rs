//! Standard output that reports a closed pipe instead of panicking (as `println!` does).
//!
//! Every command prints through `out!` and `outln!`, which return an
//! [`std::io::Result`]; `main` ends quietly when the first error in a chain is a broken pipe
//! (`ktune results db | head -1`), with the exit status a shell reports for a tool ended by
//! SIGPIPE. `ktune tune` stops tuning when its reader goes away, after recording the
//! evaluation in flight, as on Ctrl-C.
//!
//! Standard error is written through `note!` (a message that nothing depends on: a closed
//! stderr drops it, where `eprintln!` panics) or `errln!` (returning the error, for the
//! progress of `ktune tune`, which stops tuning when its reader goes away, as for stdout).

use std::io::Write;

/// Writes to standard output and flushes (so that a closed pipe is noticed at once).
pub fn write_stdout(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)?;
    out.flush()
}

/// Writes to standard error (unbuffered, so nothing to flush).
pub fn write_stderr(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    std::io::stderr().lock().write_fmt(args)
}

/// True when `e` (or what caused it) is a write to a pipe whose reader has gone.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The exit status of a tool ended by SIGPIPE, as shells report it (128 + 13).
pub const BROKEN_PIPE_STATUS: u8 = 141;

/// `print!` returning an [`std::io::Result`].
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::output::write_stdout(format_args!($($t)*)) };
}

/// `println!` returning an [`std::io::Result`].
#[macro_export]
macro_rules! outln {
    () => { $crate::output::write_stdout(format_args!("\n")) };
    ($($t:tt)*) => { $crate::output::write_stdout(format_args!("{}\n", format_args!($($t)*))) };
}

/// `eprintln!` returning an [`std::io::Result`].
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => { $crate::output::write_stderr(format_args!("{}\n", format_args!($($t)*))) };
}

/// `eprintln!` that drops the message where standard error is closed instead of panicking.
#[macro_export]
macro_rules! note {
    ($($t:tt)*) => {{ let _ = $crate::output::write_stderr(format_args!("{}\n", format_args!($($t)*))); }};
}
