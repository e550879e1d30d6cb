//! The benches' calls that need `unsafe`: the thread's CPU clock and
//! running rbpf's JIT output. The crate's only module with `unsafe` code.
#![allow(unsafe_code)]

use std::time::Duration;

/// CPU time the calling thread has used. Wall time on a shared machine
/// counts other processes' turns; this does not.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the
    // call; CLOCK_THREAD_CPUTIME_ID needs nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// An eBPF program compiled by rbpf's JIT, only ever built by
/// [`crate::sixteen::ebpf_jit`] from the fixed, verified `sixteen` program.
pub struct EbpfJit<'a>(pub(crate) rbpf::EbpfVmRaw<'a>);

impl EbpfJit<'_> {
    /// Runs the program over `mem` (r1 = `mem`, 72 bytes).
    #[inline(never)]
    pub fn run(&self, mem: &mut [u8]) -> u64 {
        assert!(mem.len() >= crate::sixteen::EBPF_MEM_LEN);
        // SAFETY: the program is the fixed `sixteen` program, which rbpf's
        // verifier accepted and its interpreter (which checks every access)
        // ran before it was compiled; it reads only the first 72 bytes of
        // `mem` (checked above) and writes only its own stack.
        unsafe { self.0.execute_program_jit(mem).expect("jit run") }
    }
}
