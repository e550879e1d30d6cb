//! The one place of the binary that uses `unsafe`: signal dispositions.
//! SIGPIPE gets its default action back, so that `os2trace ... | head`
//! ends quietly when the reader goes away, as command-line tools do,
//! instead of panicking in `println!` (Rust ignores SIGPIPE by default).
//! SIGINT (Ctrl-C) during `run` sets a flag the emulated machine polls, so
//! the run ends at an instruction boundary and its outputs are written.
#![allow(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the SIGINT handler; read by [`interrupted`] and polled by the
/// emulated machine through [`interrupt_flag`].
static INTERRUPTED: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();

fn flag() -> &'static Arc<AtomicBool> {
    INTERRUPTED.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

#[cfg(unix)]
extern "C" fn on_sigint(_: libc::c_int) {
    // Only async-signal-safe work: an atomic store and signal(2). A second
    // Ctrl-C then ends the process the default way.
    if let Some(f) = INTERRUPTED.get() {
        f.store(true, Ordering::SeqCst);
    }
    // SAFETY: signal(2) is async-signal-safe; SIG_DFL installs no code.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// Catches the first SIGINT (Ctrl-C) so that a run stops at the next
/// instruction boundary and still writes what was asked for; returns the
/// flag the run polls.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let f = flag().clone();
    #[cfg(unix)]
    // SAFETY: the handler only stores to an atomic that exists before it is
    // installed (the OnceLock above is initialized first) and calls
    // signal(2), both async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    f
}

/// Restores SIGPIPE's default action (terminate) on Unix; nothing elsewhere.
pub fn restore_default() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists;
    // signal(2) with SIG_DFL installs no handler code, it only resets the
    // disposition of SIGPIPE for this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
