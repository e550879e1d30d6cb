//! Threads and their deterministic scheduler.
//!
//! A process's threads are `Pcb::threads`; the running one's index is
//! `Pcb::current`, and its registers are the machine's. Every other thread
//! keeps its registers in [`Thread::cpu`].
//!
//! Decisions, where OS/2's documents leave room:
//! - **When threads switch:** only at a blocking call (DosSleep, a wait on
//!   a semaphore or a thread, DosExit of one thread) and when the running
//!   thread has used [`QUANTUM`] instructions while another thread is
//!   ready. Time never decides a switch, so the same program with the same
//!   inputs always interleaves the same way and writes the same trace
//!   buffer.
//! - **Who runs next:** round robin in thread-table order, starting after
//!   the thread that stops. Priorities (DosSetPriority) are recorded but do
//!   not change the order.
//! - **Time:** a blocked thread waits for a deadline on the emulated clock
//!   (the machine's cycles plus what sleeps added). When no thread can run,
//!   the clock jumps to the earliest deadline; with no deadline left the
//!   run ends with [`Outcome::Deadlock`].
//! - **Blocking calls** return when they are woken: the call's return
//!   frame is popped at once, and the waker puts the result code in the
//!   thread's saved EAX. Wake conditions are evaluated in thread-table
//!   order at every switch, so the first waiter in that order wins a
//!   mutex.
//! - **Stacks and TIBs:** DosCreateThread reserves the stack rounded up to
//!   4 KB plus one page above it for the thread's TIB and TIB2; all of it
//!   is committed and tiled (EMX calls 16-bit code on its stack). The TIB
//!   selector (FS, GDT 0x150B) is re-pointed at each switch, as OS/2 does.
//! - **Thread-local memory** (DosAllocThreadLocalMemory) is one 32-dword
//!   area at the same address in every thread, in the process's
//!   information-block page; its contents are swapped at each switch, and
//!   a new thread's are zero.
//! - **Thread IDs** are the lowest free; a thread that ended stays in the
//!   table (so DosWaitThread can collect it) until waited for or until its
//!   ID is needed again.
//! - **Thread 1:** DosExit(EXIT_THREAD) on thread 1, or its return from
//!   the entry point, ends the process, as OS/2 documents.

use emu::{CpuState, Gpr, SegReg};

use crate::error::Outcome;
use crate::layout::*;
use crate::memory::RegionKind;
use crate::process::Process;
use crate::rc::*;
use crate::semaphores::SemKind;

/// Instructions a thread runs before another ready thread gets the CPU.
pub const QUANTUM: u64 = 50_000;

/// Dwords of thread-local memory (DosAllocThreadLocalMemory).
pub const TLM_DWORDS: usize = 32;

/// Offset of the thread-local memory area in the information-block page.
pub const TLM_OFFSET: u32 = 0x100;

/// What a blocked thread waits for. Deadlines are clock cycles
/// ([`crate::Clock::cycles`]); `None` waits forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// DosSleep: until the clock reaches `until`.
    Sleep {
        /// The deadline.
        until: u64,
    },
    /// DosWaitEventSem: until the event is posted, or `until`.
    Event {
        /// The event semaphore.
        handle: u32,
        /// The timeout's deadline.
        until: Option<u64>,
    },
    /// DosRequestMutexSem: until the mutex is free (then it is taken).
    Mutex {
        /// The mutex semaphore.
        handle: u32,
        /// The timeout's deadline.
        until: Option<u64>,
    },
    /// DosWaitMuxWaitSem: until the muxwait semaphore's list is
    /// satisfied (`semaphores.rs`), or `until`; the satisfying record's
    /// user value goes to `out` (a linear address).
    Mux {
        /// The muxwait semaphore.
        handle: u32,
        /// The timeout's deadline.
        until: Option<u64>,
        /// Where the user value goes.
        out: u32,
    },
    /// DosWaitThread: until thread `tid` (0: any other) ends; its TID is
    /// written to `out` (a linear address).
    Thread {
        /// The thread waited for (0: any).
        tid: u32,
        /// Where its TID goes.
        out: u32,
    },
    /// DosSemWait / DosSemRequest on a 16-bit system semaphore
    /// (`syssem.rs`): until it is clear (then set for a request), or
    /// `until`.
    Sem16 {
        /// The system semaphore.
        handle: u32,
        /// The timeout's deadline.
        until: Option<u64>,
        /// DosSemRequest (else DosSemWait).
        request: bool,
    },
    /// DosRead on an empty pipe (`pipes.rs`): until bytes are queued or
    /// the write ends are closed; they go to `buf` (`len` at most) and
    /// their count to `out` (linear addresses; a dword if `wide`).
    PipeRead {
        /// The read handle.
        handle: u16,
        /// Where the bytes go.
        buf: u32,
        /// The most bytes wanted.
        len: u32,
        /// Where the count goes.
        out: u32,
        /// The count is a dword.
        wide: bool,
    },
    /// DosWrite on a full pipe (`pipes.rs`): `done` of the `len` bytes at
    /// `buf` are queued; until the rest is, or the read ends are closed.
    PipeWrite {
        /// The write handle.
        handle: u16,
        /// The bytes (a linear address).
        buf: u32,
        /// How many.
        len: u32,
        /// How many are queued.
        done: u32,
        /// Where the count goes.
        out: u32,
        /// The count is a dword.
        wide: bool,
    },
    /// DosConnectNPipe in blocking mode (`npipes.rs`): until a client
    /// opens the instance.
    NpConnect {
        /// The server's handle.
        handle: u16,
    },
    /// DosWaitNPipe (`npipes.rs`): until an instance of the name in
    /// the named-pipe table's wait slot `slot` listens, or `until`.
    NpWait {
        /// The name's slot.
        slot: u32,
        /// The timeout's deadline.
        until: Option<u64>,
    },
    /// DosReadQueue or DosPeekQueue (`api/queues.rs`): until there is
    /// an element to give, or the queue is closed.
    Queue(crate::api::queues::QueueWait),
    /// DosWaitChild, or DosExecPgm with EXEC_SYNC: until child `pid`
    /// (0: any child started with a result) ends (`children.rs`).
    Child {
        /// The child waited for (0: any).
        pid: u16,
        /// Its descendants must have ended too (DCWA_PROCESSTREE).
        tree: bool,
        /// Where its RESULTCODES go (a linear address).
        pres: u32,
        /// Where its PID goes (0: nowhere).
        ppid: u32,
        /// The codes and the PID are dwords (32-bit call), else words.
        wide: bool,
    },
}

/// A thread's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Can run.
    Ready,
    /// Waits; `far16` says how the result goes into EAX.
    Blocked { wait: Wait, far16: bool },
    /// Ended with this code and not yet collected by DosWaitThread.
    Ended(u32),
}

/// One thread.
#[derive(Clone, Debug)]
pub(crate) struct Thread {
    /// Thread ID (1 is the process's first).
    pub(crate) tid: u32,
    pub(crate) state: State,
    /// Registers while the thread is not on the CPU.
    pub(crate) cpu: Option<Box<CpuState>>,
    /// A thread that has not run yet: its segment registers are loaded at
    /// its first switch.
    pub(crate) fresh: bool,
    /// Linear address of its TIB.
    pub(crate) tib: u32,
    /// The region holding its stack and TIB (0 for thread 1, whose stack
    /// is the program's).
    pub(crate) region: u32,
    /// DosSuspendThread count is not nested in OS/2: suspended or not.
    pub(crate) suspended: bool,
    /// Its thread-local memory while it is not on the CPU.
    pub(crate) tlm: [u32; TLM_DWORDS],
    /// DosSetPriority's class and level, as given.
    pub(crate) priority: u32,
}

impl Thread {
    /// Thread 1, on the CPU, with the TIB at `tib`.
    pub(crate) fn first(tib: u32) -> Thread {
        Thread {
            tid: 1,
            state: State::Ready,
            cpu: None,
            fresh: false,
            tib,
            region: 0,
            suspended: false,
            tlm: [0; TLM_DWORDS],
            priority: 0x200,
        }
    }

    fn live(&self) -> bool {
        !matches!(self.state, State::Ended(_))
    }
}

/// The process's thread-local memory allocation: which dwords are taken,
/// and the length of each block by its first dword.
#[derive(Clone, Debug, Default)]
pub(crate) struct TlmMap {
    pub(crate) blocks: std::collections::BTreeMap<usize, usize>,
}

impl TlmMap {
    /// The first run of `n` free dwords.
    pub(crate) fn alloc(&mut self, n: usize) -> Option<usize> {
        let mut at = 0;
        for (&s, &l) in &self.blocks {
            if s - at >= n {
                break;
            }
            at = s + l;
        }
        (at + n <= TLM_DWORDS).then(|| {
            self.blocks.insert(at, n);
            at
        })
    }
}

/// How DosExit or a thread's return ends things.
pub(crate) enum ExitScope {
    /// The whole process, with this code.
    Process(u32),
    /// The running thread only; another runs next.
    Thread,
}

impl Process {
    /// The clock cycle `ms` milliseconds from now; `None` for
    /// SEM_INDEFINITE_WAIT (-1).
    pub(crate) fn deadline(&self, ms: u32) -> Option<u64> {
        (ms != u32::MAX).then(|| self.after_millis(ms))
    }

    /// The clock cycle `ms` milliseconds from now.
    pub(crate) fn after_millis(&self, ms: u32) -> u64 {
        let now = self.kernel.clock.cycles(self.machine.cycles());
        let add = u128::from(ms) * u128::from(self.kernel.clock.hz) / 1000;
        now.saturating_add(add as u64)
    }

    /// Is any thread blocked on semaphore `handle`?
    pub(crate) fn sem_waited(&self, handle: u32) -> bool {
        self.pcb.threads.iter().any(|t| match t.state {
            State::Blocked { wait, .. } => matches!(wait,
                Wait::Event { handle: h, .. }
                | Wait::Mutex { handle: h, .. }
                | Wait::Mux { handle: h, .. } if h == handle),
            _ => false,
        })
    }

    /// The owner of a mutex semaphore that thread `tid` of the running
    /// process takes: its PID in the high word, the TID in the low word,
    /// so threads of two processes with the same TID are told apart
    /// (DosQueryMutexSem gives both halves).
    pub(crate) fn sem_owner(&self, tid: u32) -> u32 {
        (u32::from(self.pcb.pid) << 16) | (tid & 0xFFFF)
    }

    /// The running thread's ID.
    pub(crate) fn current_tid(&self) -> u32 {
        self.pcb.threads.get(self.pcb.current).map_or(1, |t| t.tid)
    }

    /// Index of the live or ended thread with ID `tid`.
    pub(crate) fn thread_index(&self, tid: u32) -> Option<usize> {
        self.pcb.threads.iter().position(|t| t.tid == tid)
    }

    /// Live threads in the process.
    pub(crate) fn live_threads(&self) -> usize {
        self.pcb.threads.iter().filter(|t| t.live()).count()
    }

    /// Is the running thread the only one that could run (one thread,
    /// one process, or a child loading)?
    fn alone(&self) -> bool {
        (self.pcb.threads.len() < 2 && self.kernel.procs.is_empty())
            || self.kernel.loading_child > 0
    }

    /// Instructions the running thread may still run before the scheduler
    /// looks at other threads (no limit while it is alone).
    pub(crate) fn quantum_left(&self) -> u64 {
        if self.alone() || self.pcb.critsec > 0 {
            return u64::MAX;
        }
        self.pcb
            .slice_end
            .saturating_sub(self.kernel.executed)
            .max(1)
    }

    /// At the end of a machine slice: switch if the quantum is used up and
    /// another thread is ready.
    pub(crate) fn preempt_if_due(&mut self) -> Option<Outcome> {
        if self.alone() || self.pcb.critsec > 0 || self.kernel.executed < self.pcb.slice_end {
            return None;
        }
        self.reschedule()
    }

    /// Block the running thread (its call has returned; EAX is set when it
    /// wakes) and run another.
    pub(crate) fn block_current(&mut self, wait: Wait, far16: bool) -> Option<Outcome> {
        let cur = self.pcb.current;
        self.pcb.threads[cur].state = State::Blocked { wait, far16 };
        self.reschedule()
    }

    /// The running thread ends with `code`.
    pub(crate) fn end_current_thread(&mut self, code: u32) -> ExitScope {
        let cur = self.pcb.current;
        if self.pcb.threads[cur].tid == 1 || self.live_threads() <= 1 {
            return ExitScope::Process(code);
        }
        self.end_thread(cur, code);
        // A thread that ends leaves its critical section.
        self.pcb.critsec = 0;
        ExitScope::Thread
    }

    /// Thread `i` (not thread 1's stack) ends: its stack and TIB go.
    pub(crate) fn end_thread(&mut self, i: usize, code: u32) {
        let t = &mut self.pcb.threads[i];
        t.state = State::Ended(code);
        t.suspended = false;
        let tid = t.tid;
        let region = std::mem::take(&mut t.region);
        if region != 0
            && let Some(r) = self.pcb.mem.regions.get(&region)
        {
            let size = r.size;
            self.kernel.desc.untile(&mut self.machine, region, size);
            self.pcb.mem.release(&mut self.machine, region);
        }
        let owner = self.sem_owner(tid);
        self.kernel.sems.owner_died(owner);
    }

    /// Wake every blocked thread whose wait is over, in table order; again
    /// while a blocked pipe write queued more (a reader checked before it
    /// may now go on). Says whether a pipe write queued more.
    fn wake_ready(&mut self) -> bool {
        let mut moved = false;
        while self.wake_pass() {
            moved = true;
        }
        moved
    }

    /// One pass of [`Process::wake_ready`]: did a blocked pipe write
    /// queue more and wait on?
    fn wake_pass(&mut self) -> bool {
        let now = self.kernel.clock.cycles(self.machine.cycles());
        let mut moved = false;
        // By TID: collecting an ended thread removes it from the table.
        let tids: Vec<u32> = self.pcb.threads.iter().map(|t| t.tid).collect();
        for tid in tids {
            let Some(i) = self.thread_index(tid) else {
                continue;
            };
            let State::Blocked { wait, far16 } = self.pcb.threads[i].state else {
                continue;
            };
            let Some(rc) = self.wait_result(wait, tid, now) else {
                if let Some(i) = self.thread_index(tid)
                    && let State::Blocked { wait: after, .. } = self.pcb.threads[i].state
                {
                    moved |= after != wait;
                }
                continue;
            };
            let Some(i) = self.thread_index(tid) else {
                continue;
            };
            let t = &mut self.pcb.threads[i];
            t.state = State::Ready;
            // The running thread's registers are the machine's.
            let eax = match t.cpu.as_mut() {
                Some(cpu) => &mut cpu.gpr[Gpr::Eax],
                None => &mut self.machine.gpr_mut()[Gpr::Eax],
            };
            *eax = if far16 {
                (*eax & 0xFFFF_0000) | (rc & 0xFFFF)
            } else {
                rc
            };
        }
        moved
    }

    /// The result code of `wait` for thread `tid` if it is over now.
    pub(crate) fn wait_now(&mut self, wait: Wait, tid: u32) -> Option<u32> {
        let now = self.kernel.clock.cycles(self.machine.cycles());
        self.wait_result(wait, tid, now)
    }

    /// The result code of `wait` if it is over now (taking a mutex or
    /// collecting an ended thread as it does).
    fn wait_result(&mut self, wait: Wait, tid: u32, now: u64) -> Option<u32> {
        let owner = self.sem_owner(tid);
        let timed_out = |until: Option<u64>| until.is_some_and(|u| now >= u);
        match wait {
            Wait::Sleep { until } => (now >= until).then_some(NO_ERROR),
            Wait::Event { handle, until } => match self.kernel.sems.get_mut(handle, SemKind::Event)
            {
                Err(e) => Some(e),
                Ok(s) if s.count > 0 => Some(NO_ERROR),
                Ok(_) => timed_out(until).then_some(ERROR_TIMEOUT),
            },
            Wait::Mutex { handle, until } => match self.kernel.sems.get_mut(handle, SemKind::Mutex)
            {
                Err(e) => Some(e),
                Ok(s) if s.owner == 0 => {
                    s.owner = owner;
                    s.count = 1;
                    Some(std::mem::take(&mut s.owner_died_rc))
                }
                Ok(_) => timed_out(until).then_some(ERROR_TIMEOUT),
            },
            Wait::Mux { handle, until, out } => match self.kernel.sems.mux_ready(handle, owner) {
                Some((rc, user)) => {
                    let _ = self.machine.write_linear(out, &user.to_le_bytes());
                    Some(rc)
                }
                None => timed_out(until).then_some(ERROR_TIMEOUT),
            },
            Wait::Thread { tid: want, out } => {
                let found = self.pcb.threads.iter().position(|t| {
                    matches!(t.state, State::Ended(_)) && (want == 0 || t.tid == want)
                });
                match found {
                    Some(i) => {
                        let t = self.pcb.threads.remove(i);
                        if i < self.pcb.current {
                            self.pcb.current -= 1;
                        }
                        if out != 0 {
                            let _ = self.machine.write_linear(out, &t.tid.to_le_bytes());
                        }
                        Some(NO_ERROR)
                    }
                    // The thread it waited for was killed and collected by
                    // another waiter, or there is no other thread left.
                    None if want != 0 && self.thread_index(want).is_none() => {
                        Some(ERROR_INVALID_THREADID)
                    }
                    None if want == 0 && self.live_threads() <= 1 => Some(ERROR_INVALID_THREADID),
                    None => None,
                }
            }
            Wait::Child {
                pid,
                tree,
                pres,
                ppid,
                wide,
            } => self.collect_child(pid, tree, (pres, ppid), wide),
            Wait::Queue(w) => crate::api::queues::read_now(self, w),
            Wait::NpConnect { handle } => crate::api::npipes::connect_now(self, handle),
            Wait::NpWait { slot, until } => crate::api::npipes::wait_now(self, slot)
                .or_else(|| timed_out(until).then_some(ERROR_SEM_TIMEOUT)),
            Wait::Sem16 {
                handle,
                until,
                request,
            } => {
                let me = self.sem_owner(tid);
                crate::api::syssem::try_wait(self, handle, me, request)
                    .or_else(|| timed_out(until).then_some(ERROR_SEM_TIMEOUT))
            }
            Wait::PipeRead {
                handle,
                buf,
                len,
                out,
                wide,
            } => crate::api::pipes::read_now(self, handle, buf, len, out, wide),
            Wait::PipeWrite {
                handle,
                buf,
                len,
                done,
                out,
                wide,
            } => match crate::api::pipes::write_now(self, handle, (buf, len, done), out, wide) {
                Ok(rc) => Some(rc),
                Err(done) => {
                    // Part of it went: the thread waits on for the rest.
                    if let Some(i) = self.thread_index(tid)
                        && let State::Blocked { wait, .. } = &mut self.pcb.threads[i].state
                    {
                        *wait = Wait::PipeWrite {
                            handle,
                            buf,
                            len,
                            done,
                            out,
                            wide,
                        };
                    }
                    None
                }
            },
        }
    }

    /// The earliest deadline among blocked threads of every process.
    fn next_deadline(&self) -> Option<u64> {
        self.processes()
            .flat_map(|p| p.threads.iter())
            .filter_map(|t| match t.state {
                State::Blocked { wait, .. } => match wait {
                    Wait::Sleep { until } => Some(until),
                    Wait::Event { until, .. }
                    | Wait::Mutex { until, .. }
                    | Wait::Mux { until, .. }
                    | Wait::Sem16 { until, .. }
                    | Wait::NpWait { until, .. } => until,
                    Wait::NpConnect { .. } | Wait::Queue(_) => None,
                    Wait::Thread { .. }
                    | Wait::Child { .. }
                    | Wait::PipeRead { .. }
                    | Wait::PipeWrite { .. } => None,
                },
                _ => None,
            })
            .min()
    }

    /// The next thread of the running process that can run, round robin
    /// after the running one, which comes last if `itself`.
    fn pick_thread(&self, itself: bool) -> Option<usize> {
        let n = self.pcb.threads.len();
        if n == 0 {
            return None;
        }
        let cur = self.pcb.current;
        // In a critical section (DosEnterCritSec) only its thread runs.
        let only = (self.pcb.critsec > 0).then_some(cur);
        let last = if itself { n } else { n.saturating_sub(1) };
        (1..=last).map(|k| (cur + k) % n).find(|&i| {
            let t = &self.pcb.threads[i];
            t.state == State::Ready && !t.suspended && only.is_none_or(|o| o == i)
        })
    }

    /// Pick the next thread to run and switch to it, moving the clock on
    /// while every thread waits: the running process's other threads
    /// first (round robin), then the other processes in PID order after
    /// it, then the running thread (`children.rs`).
    pub(crate) fn reschedule(&mut self) -> Option<Outcome> {
        loop {
            // A pipe write that queued more in one process may let a
            // reader of another go on: no deadlock yet.
            let mut moved = self.wake_ready();
            if let Some(next) = self.pick_thread(false) {
                self.switch_to(next);
                return None;
            }
            if self.kernel.loading_child == 0 && !self.kernel.procs.is_empty() {
                let me = self.pcb.pid;
                for pid in self.process_order() {
                    self.switch_process(pid);
                    moved |= self.wake_ready();
                    if let Some(next) = self.pick_thread(true) {
                        self.switch_to(next);
                        return None;
                    }
                }
                if self.pcb.pid != me && self.switch_process(me) {
                    moved |= self.wake_ready();
                }
            }
            if let Some(next) = self.pick_thread(true) {
                self.switch_to(next);
                return None;
            }
            let now = self.kernel.clock.cycles(self.machine.cycles());
            match self.next_deadline() {
                Some(until) => self
                    .kernel
                    .clock
                    .add_cycles(until.saturating_sub(now).max(1)),
                None if moved => {}
                None => {
                    return Some(Outcome::Deadlock {
                        threads: self
                            .processes()
                            .map(|p| p.threads.iter().filter(|t| t.live()).count())
                            .sum(),
                    });
                }
            }
        }
    }

    /// Save the running thread's registers and thread-local memory (it
    /// leaves the CPU); nothing if they are saved already.
    pub(crate) fn park_running_thread(&mut self) {
        let cur = self.pcb.current;
        let tlm_at = self.pcb.tib_page + TLM_OFFSET;
        if let Some(t) = self.pcb.threads.get_mut(cur)
            && t.cpu.is_none()
        {
            t.cpu = Some(Box::new(self.machine.cpu().clone()));
            let mut tlm = [0u8; TLM_DWORDS * 4];
            if self.machine.read_linear(tlm_at, &mut tlm).is_ok() {
                for (d, b) in t.tlm.iter_mut().zip(tlm.chunks_exact(4)) {
                    *d = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
        }
    }

    /// Put thread `next` on the CPU: save the running one's registers and
    /// thread-local memory, load the next one's, re-point the TIB
    /// selector.
    pub(crate) fn switch_to(&mut self, next: usize) {
        self.pcb.slice_end = self.kernel.executed + QUANTUM;
        let cur = self.pcb.current;
        let running_saved = self.pcb.threads.get(cur).is_some_and(|t| t.cpu.is_some());
        if next == cur && !running_saved {
            return;
        }
        let tlm_at = self.pcb.tib_page + TLM_OFFSET;
        let mut tlm = [0u8; TLM_DWORDS * 4];
        self.park_running_thread();
        let from = self.pcb.threads.get(cur).map_or(0, |t| t.tid);
        let t = &mut self.pcb.threads[next];
        let cpu = t.cpu.take();
        let (tib, fresh, tid) = (t.tib, std::mem::take(&mut t.fresh), t.tid);
        for (b, d) in tlm.chunks_exact_mut(4).zip(t.tlm) {
            b.copy_from_slice(&d.to_le_bytes());
        }
        let _ = self.machine.write_linear(tlm_at, &tlm);
        self.kernel.desc.set(
            &mut self.machine,
            TIB_SEL,
            crate::desc::make(tib, PAGE - 1, crate::desc::DATA3, false),
        );
        if let Some(cpu) = cpu {
            *self.machine.cpu_mut_flush_tlb() = *cpu;
        }
        if fresh {
            let d = &self.kernel.desc;
            for (s, sel) in [
                (SegReg::Cs, FLAT_CS),
                (SegReg::Ss, FLAT_DS),
                (SegReg::Ds, FLAT_DS),
                (SegReg::Es, FLAT_DS),
                (SegReg::Fs, TIB_SEL),
            ] {
                d.load(&mut self.machine, s, sel);
            }
            self.machine.set_segment(SegReg::Gs, emu::Segment::null(0));
        } else if self.machine.cpu().sreg(SegReg::Fs).selector == TIB_SEL {
            self.kernel
                .desc
                .load(&mut self.machine, SegReg::Fs, TIB_SEL);
        }
        self.pcb.current = next;
        self.pcb.tib = tib;
        if from != tid {
            self.systable_event(cptrap::Entry::new(cptrap::TypeNum::DISPATCH));
            if self.kernel.tnf.system.on {
                self.tnf_thread_switch(from, tid);
            }
        }
    }

    /// The lowest thread ID no live thread has, for a new thread (an
    /// ended thread holding it is collected; `current` still points at
    /// the running thread).
    pub(crate) fn take_free_tid(&mut self) -> u32 {
        let tid = (1..).find(|&id| self.pcb.threads.iter().all(|t| t.tid != id || !t.live()));
        let tid = tid.unwrap_or(u32::MAX);
        self.pcb.threads.retain(|t| t.tid != tid);
        self.pcb.current = self
            .pcb
            .threads
            .iter()
            .position(|t| t.cpu.is_none())
            .unwrap_or(0);
        tid
    }

    /// DosCreateThread's work: a thread that starts at `entry` with
    /// `param` on a stack of `stack_size` bytes; its TID.
    pub(crate) fn create_thread(
        &mut self,
        entry: u32,
        param: u32,
        stack_size: u32,
        suspended: bool,
    ) -> Result<u32, u32> {
        if self.live_threads() >= MAX_THREADS {
            return Err(ERROR_MAX_THRDS_REACHED);
        }
        let stack = round_up(stack_size.max(1), PAGE);
        let total = stack.checked_add(PAGE).ok_or(ERROR_NOT_ENOUGH_MEMORY)?;
        let base = self
            .alloc_tiled(total, RegionKind::Mem)
            .map_err(|_| ERROR_NOT_ENOUGH_MEMORY)?;
        let (top, tib) = (base + stack, base + stack);
        let tid = self.take_free_tid();
        let block = tib_bytes(tid, tib, (base, top));
        let ret = THUNK_BASE
            + 4 * self
                .kernel
                .thunks
                .special(crate::thunks::Slot::ThreadReturn);
        self.machine.add_host_call(ret);
        let frame: Vec<u8> = [ret, param].iter().flat_map(|v| v.to_le_bytes()).collect();
        let esp = top - 8;
        if self.machine.write_linear(tib, &block).is_err()
            || self.machine.write_linear(esp, &frame).is_err()
        {
            self.pcb.mem.release(&mut self.machine, base);
            return Err(ERROR_NOT_ENOUGH_MEMORY);
        }
        if self.pcb.threads.len() == 1 {
            // The first quantum starts now that there is someone to share with.
            self.pcb.slice_end = self.kernel.executed + QUANTUM;
        }
        let mut cpu = self.machine.cpu().clone();
        cpu.gpr = [0; 8];
        cpu.gpr[Gpr::Esp] = esp;
        cpu.eip = entry;
        cpu.eflags = 0x202;
        self.pcb.threads.push(Thread {
            tid,
            state: State::Ready,
            cpu: Some(Box::new(cpu)),
            fresh: true,
            tib,
            region: base,
            suspended,
            tlm: [0; TLM_DWORDS],
            priority: 0x200,
        });
        Ok(tid)
    }
}

/// Threads a process may have at once (OS/2's default THREADS=).
pub const MAX_THREADS: usize = 256;

/// The TIB of thread `tid` at `tib` (its TIB2 at +0x40: the TID, priority
/// 0x200) for a stack from `stack_lo` to `top`: the bytes to write.
pub(crate) fn tib_bytes(tid: u32, tib: u32, (stack_lo, top): (u32, u32)) -> Vec<u8> {
    let mut block = Vec::new();
    for x in [u32::MAX, stack_lo, top, tib + 0x40, 20, tid] {
        block.extend(x.to_le_bytes());
    }
    block.resize(0x40, 0);
    for x in [tid, 0x200] {
        block.extend(x.to_le_bytes());
    }
    block.extend([20, 0, 0, 0]);
    block
}
