//! The one place of the binary that uses `unsafe`: restoring the default
//! SIGPIPE action, so that `os2trace ... | head` ends quietly when the
//! reader goes away, as command-line tools do, instead of panicking in
//! `println!` (Rust ignores SIGPIPE by default).
#![allow(unsafe_code)]

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
