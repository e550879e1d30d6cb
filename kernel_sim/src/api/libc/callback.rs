//! The runtime's calls into guest code, and the control transfers:
//! `_callback_opt_sys` (how the start-up code calls main), qsort's and
//! bsearch's comparisons, atexit's functions run by exit, system's
//! DosExecPgm, setjmp/longjmp.
//!
//! A host call that needs guest code keeps a continuation ([`Cont`]) on
//! the calling thread's list and makes the thread call the guest
//! function with its return address at the runtime's return slot (a
//! thunk bound to [`RESUME`]). The guest frame is built below the
//! original call's return address; when the function returns there, the
//! continuation either calls again or returns to the original caller
//! with ESP just above its return address, as a host call would.
//! EBX, ESI, EDI and EBP are the callee's to keep (`_Optlink`,
//! `_System`).

use emu::Gpr;

use super::{Call, Process, Stop, cstr, free, malloc, rt, stack_arg};
use crate::api::uconv::{rd32, read, wr32, write};
use crate::api::{ApiDef, Conv, Func};
use crate::layout::THUNK_BASE;

/// The return slot's entry.
static RESUME: ApiDef = ApiDef {
    module: "LIBCM",
    ordinal: 0,
    name: "(return to the C runtime)",
    conv: Conv::Sys32,
    args: &[],
    func: Some(Func::Raw(resume)),
};

/// Continuations of one thread, innermost last.
pub(crate) type Conts = Vec<Cont>;

/// The original call: ESP at its entry (at its return address) and the
/// return address.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    esp: u32,
    ret: u32,
}

/// A bsearch under way: the key, the array (`size`-byte elements), the
/// comparison function and the interval of elements left, `lo..hi`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Search {
    key: u32,
    base: u32,
    size: u32,
    cmp: u32,
    lo: u32,
    hi: u32,
}

impl Search {
    /// The element compared next.
    fn mid(&self) -> u32 {
        self.lo + (self.hi - self.lo) / 2
    }

    /// The address of element `i`.
    fn element(&self, i: u32) -> u32 {
        self.base.wrapping_add(i.wrapping_mul(self.size))
    }
}

/// What a host call does when the guest function it called returns.
#[derive(Debug)]
pub(crate) enum Cont {
    /// qsort: the sort, the array and its element size.
    Qsort {
        frame: Frame,
        sort: MergeSort,
        base: u32,
        size: u32,
        cmp: u32,
    },
    /// bsearch: the search so far.
    Bsearch { frame: Frame, search: Search },
    /// exit: the remaining atexit functions, then the end.
    Exit { code: u32 },
    /// A call whose result is the original call's.
    Return { frame: Frame },
    /// system: the DosExecPgm block (RESULTCODES at +0) to read and free.
    System { frame: Frame, block: u32 },
}

/// The frame of the running host call.
fn frame(p: &mut Process) -> Result<Frame, Stop> {
    let esp = p.machine.cpu().gpr[Gpr::Esp];
    Ok(Frame {
        esp,
        ret: rd32(p, esp)?,
    })
}

/// The return slot's address.
fn resume_slot(p: &mut Process) -> u32 {
    let (slot, new) = p.kernel.thunks.bind("LIBCM", 0, "", Some(&RESUME));
    let addr = THUNK_BASE + 4 * slot;
    if new {
        p.machine.add_host_call(addr);
    }
    addr
}

/// Makes the thread call `target` below `frame`, returning to the
/// runtime's slot: `regs` in EAX, EDX, ECX and `stack` above the 12
/// bytes reserved for them (`_Optlink`), or `stack` right above the
/// return address (`sys`).
fn call_guest(
    p: &mut Process,
    frame: Frame,
    target: u32,
    regs: [u32; 3],
    stack: &[u32],
    sys: bool,
) -> Result<(), Stop> {
    let reserved = if sys { 0 } else { 12 };
    let size = 4 + reserved + 4 * stack.len() as u32;
    let esp = (frame.esp.wrapping_sub(64 + size)) & !3;
    let ret = resume_slot(p);
    let mut bytes = ret.to_le_bytes().to_vec();
    bytes.resize(4 + reserved as usize, 0);
    for v in stack {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    write(p, esp, &bytes)?;
    let gpr = p.machine.gpr_mut();
    gpr[Gpr::Esp] = esp;
    gpr[Gpr::Eax] = regs[0];
    gpr[Gpr::Edx] = regs[1];
    gpr[Gpr::Ecx] = regs[2];
    p.machine.set_eip(target);
    Ok(())
}

/// Returns from the original call with `value`.
fn finish(p: &mut Process, frame: Frame, value: u32) -> Stop {
    let gpr = p.machine.gpr_mut();
    gpr[Gpr::Esp] = frame.esp.wrapping_add(4);
    gpr[Gpr::Eax] = value;
    p.machine.set_eip(frame.ret);
    Stop::Resumed
}

fn push(p: &mut Process, c: Cont) {
    let tid = p.current_tid();
    rt(p).conts.entry(tid).or_default().push(c);
}

/// The return slot: the innermost continuation goes on with EAX.
fn resume(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    let tid = p.current_tid();
    let result = p.machine.cpu().gpr[Gpr::Eax];
    let Some(cont) = rt(p).conts.get_mut(&tid).and_then(Vec::pop) else {
        return Err(Stop::Outcome(crate::error::Outcome::HostError(
            "a return to the C runtime with nothing waiting for it".into(),
        )));
    };
    match cont {
        Cont::Qsort {
            frame,
            mut sort,
            base,
            size,
            cmp,
        } => {
            let next = sort.step(Some(result as i32));
            qsort_next(p, frame, sort, base, size, cmp, next)
        }
        Cont::Bsearch { frame, mut search } => {
            let mid = search.mid();
            let r = result as i32;
            if r == 0 {
                return Err(finish(p, frame, search.element(mid)));
            }
            if r < 0 {
                search.hi = mid;
            } else {
                search.lo = mid + 1;
            }
            bsearch_next(p, frame, search)
        }
        Cont::Exit { code } => exit_next(p, code),
        Cont::Return { frame } => Err(finish(p, frame, result)),
        Cont::System { frame, block } => {
            let rc = result;
            let code = if rc == 0 {
                rd32(p, block.wrapping_add(4))?
            } else {
                u32::MAX
            };
            free(p, block);
            if rc != 0 {
                super::set_errno(p, super::errno_of(rc))?;
            }
            Err(finish(p, frame, code))
        }
    }
}

// ---- main ----

/// _callback_opt_sys(a, b, c, function): calls a `_System` function
/// (main: the start-up code's main takes argc, argv and envp on the
/// stack) with three arguments and returns what it returns.
pub(super) fn callback_opt_sys(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let target = c.l(3);
    let frame = frame(p)?;
    call_guest(p, frame, target, [0; 3], &[c.l(0), c.l(1), c.l(2)], true)?;
    push(p, Cont::Return { frame });
    Err(Stop::Resumed)
}

// ---- qsort, bsearch ----

/// A bottom-up merge sort over element indices that stops at each
/// comparison: the elements stay where they are until the end, so the
/// comparison function always sees them in the array.
#[derive(Debug)]
pub(crate) struct MergeSort {
    n: usize,
    perm: Vec<u32>,
    tmp: Vec<u32>,
    width: usize,
    lo: usize,
    mid: usize,
    hi: usize,
    i: usize,
    j: usize,
}

impl MergeSort {
    pub(crate) fn new(n: usize) -> MergeSort {
        let mut s = MergeSort {
            n,
            perm: (0..n as u32).collect(),
            tmp: Vec::with_capacity(n),
            width: 1,
            lo: 0,
            mid: 0,
            hi: 0,
            i: 0,
            j: 0,
        };
        s.start_pair();
        s
    }

    fn start_pair(&mut self) {
        self.mid = (self.lo + self.width).min(self.n);
        self.hi = (self.lo + 2 * self.width).min(self.n);
        self.i = self.lo;
        self.j = self.mid;
    }

    /// Given the result of the last comparison asked for, the next pair
    /// of element indices to compare, or `None` when sorted.
    pub(crate) fn step(&mut self, last: Option<i32>) -> Option<(u32, u32)> {
        if let Some(r) = last {
            if r <= 0 {
                self.tmp.push(self.perm[self.i]);
                self.i += 1;
            } else {
                self.tmp.push(self.perm[self.j]);
                self.j += 1;
            }
        }
        loop {
            if self.width >= self.n {
                return None;
            }
            if self.i < self.mid && self.j < self.hi {
                return Some((self.perm[self.i], self.perm[self.j]));
            }
            self.tmp.extend_from_slice(&self.perm[self.i..self.mid]);
            self.tmp.extend_from_slice(&self.perm[self.j..self.hi]);
            self.lo = self.hi;
            if self.lo >= self.n {
                std::mem::swap(&mut self.perm, &mut self.tmp);
                self.tmp.clear();
                self.width *= 2;
                self.lo = 0;
            }
            self.start_pair();
        }
    }

    /// The sorted order (indices into the original array).
    pub(crate) fn order(&self) -> &[u32] {
        &self.perm
    }
}

/// Most elements qsort sorts (its index arrays are the host's).
const MAX_SORT: u32 = 0x40_0000;

/// qsort(base, n, size, compare).
pub(super) fn qsort(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (base, n, size) = (c.l(0), c.l(1), c.l(2));
    let cmp = stack_arg(p, 16)?;
    let frame = frame(p)?;
    if n < 2 || size == 0 {
        return Ok(0);
    }
    // The whole array must be there (as the real qsort would fault on
    // it): this also bounds n by guest memory.
    let total = n
        .checked_mul(size)
        .ok_or_else(|| super::fault(p, base, false))?;
    read(p, base, total)?;
    if n > MAX_SORT {
        return Err(Stop::Outcome(crate::error::Outcome::HostError(format!(
            "qsort of {n} elements: more than this runtime sorts ({MAX_SORT})"
        ))));
    }
    let mut sort = MergeSort::new(n as usize);
    let next = sort.step(None);
    qsort_next(p, frame, sort, base, size, cmp, next)
}

fn qsort_next(
    p: &mut Process,
    frame: Frame,
    sort: MergeSort,
    base: u32,
    size: u32,
    cmp: u32,
    next: Option<(u32, u32)>,
) -> Result<u32, Stop> {
    match next {
        Some((a, b)) => {
            let pa = base.wrapping_add(a.wrapping_mul(size));
            let pb = base.wrapping_add(b.wrapping_mul(size));
            call_guest(p, frame, cmp, [pa, pb, 0], &[], false)?;
            push(
                p,
                Cont::Qsort {
                    frame,
                    sort,
                    base,
                    size,
                    cmp,
                },
            );
            Err(Stop::Resumed)
        }
        None => {
            let total = sort.n as u32 * size;
            let old = read(p, base, total)?;
            let mut new = Vec::with_capacity(old.len());
            for &i in sort.order() {
                let at = i as usize * size as usize;
                new.extend_from_slice(&old[at..at + size as usize]);
            }
            write(p, base, &new)?;
            Err(finish(p, frame, 0))
        }
    }
}

/// bsearch(key, base, n, size, compare).
pub(super) fn bsearch(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (key, base, n) = (c.l(0), c.l(1), c.l(2));
    let size = stack_arg(p, 16)?;
    let cmp = stack_arg(p, 20)?;
    let frame = frame(p)?;
    let search = Search {
        key,
        base,
        size,
        cmp,
        lo: 0,
        hi: n,
    };
    bsearch_next(p, frame, search)
}

/// Compares the key with the middle of what is left (or ends the
/// search, not found, when nothing is).
fn bsearch_next(p: &mut Process, frame: Frame, search: Search) -> Result<u32, Stop> {
    if search.lo >= search.hi {
        return Err(finish(p, frame, 0));
    }
    let elem = search.element(search.mid());
    call_guest(p, frame, search.cmp, [search.key, elem, 0], &[], false)?;
    push(p, Cont::Bsearch { frame, search });
    Err(Stop::Resumed)
}

// ---- exit, atexit ----

/// Most atexit functions (ANSI asks for 32).
const MAX_ATEXIT: usize = 64;

/// atexit(function): 0, or nonzero when the table is full.
pub(super) fn atexit(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let r = rt(p);
    if r.atexit.len() >= MAX_ATEXIT {
        return Ok(1);
    }
    r.atexit.push(c.l(0));
    Ok(0)
}

/// exit(code): the atexit functions in reverse order (in guest code),
/// then the streams are flushed and closed and the process ends. A
/// nested exit (from an atexit function) goes on with the first code.
pub(super) fn exit(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let code = *rt(p).exiting.get_or_insert(c.l(0));
    exit_next(p, code)
}

fn exit_next(p: &mut Process, code: u32) -> Result<u32, Stop> {
    if let Some(f) = rt(p).atexit.pop() {
        let esp = p.machine.cpu().gpr[Gpr::Esp];
        let frame = Frame { esp, ret: 0 };
        call_guest(p, frame, f, [0; 3], &[], false)?;
        push(p, Cont::Exit { code });
        return Err(Stop::Resumed);
    }
    super::stdio::close_all(p);
    Err(Stop::Exit(code))
}

// ---- system ----

/// system(command): `CMD.EXE /C command` (COMSPEC, else C:\OS2\CMD.EXE)
/// run synchronously through DosExecPgm; returns its exit code, or -1
/// (errno set) when it cannot start. system(NULL) is 1: there is a
/// command processor.
pub(super) fn system(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    if c.l(0) == 0 {
        return Ok(1);
    }
    let cmd = cstr(p, c.l(0))?;
    let comspec = super::strings::env_value(p, b"COMSPEC")?
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| b"C:\\OS2\\CMD.EXE".to_vec());
    // RESULTCODES (8), then the program name, then the arguments.
    let mut block = vec![0u8; 8];
    let name_at = block.len() as u32;
    block.extend_from_slice(&comspec);
    block.push(0);
    let args_at = block.len() as u32;
    block.extend_from_slice(b"CMD.EXE\0/C ");
    block.extend_from_slice(&cmd);
    block.extend_from_slice(b"\0\0");
    let mem = malloc(p, block.len() as u32)?;
    if mem == 0 {
        return Ok(u32::MAX);
    }
    write(p, mem, &block)?;
    let frame = frame(p)?;
    let Some(exec) = crate::api::lookup("DOSCALLS", 283) else {
        free(p, mem);
        return Ok(u32::MAX);
    };
    let (slot, new) = p.kernel.thunks.bind("DOSCALLS", 283, "", Some(exec));
    let addr = THUNK_BASE + 4 * slot;
    if new {
        p.machine.add_host_call(addr);
    }
    // DosExecPgm(objbuf, cb, EXEC_SYNC, args, env (the caller's), results, name)
    let args = [0, 0, 0, mem + args_at, 0, mem, mem + name_at];
    call_guest(p, frame, addr, [0; 3], &args, true)?;
    push(p, Cont::System { frame, block: mem });
    Err(Stop::Resumed)
}

// ---- setjmp, longjmp ----

/// setjmp(buf): EBX, ESI, EDI, EBP, the caller's ESP after the return,
/// the return address and FS:0's registration record (8 dwords, the
/// size of VisualAge C++'s jmp_buf); returns 0.
pub(super) fn setjmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let cpu = p.machine.cpu();
    let g = cpu.gpr;
    let esp = g[Gpr::Esp];
    let fs = cpu.seg[emu::SegReg::Fs].base;
    let ret = rd32(p, esp)?;
    let xcpt = rd32(p, fs)?;
    let vals = [
        g[Gpr::Ebx],
        g[Gpr::Esi],
        g[Gpr::Edi],
        g[Gpr::Ebp],
        esp.wrapping_add(4),
        ret,
        xcpt,
        0x4A4D_5042,
    ];
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(p, c.l(0), &bytes)?;
    Ok(0)
}

/// longjmp(buf, value): back to setjmp's caller with `value` (1 for 0);
/// FS:0 gets its record back, and continuations of frames being left
/// are dropped.
pub(super) fn longjmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let b = read(p, c.l(0), 32)?;
    let v = |i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    let fs = p.machine.cpu().seg[emu::SegReg::Fs].base;
    wr32(p, fs, v(6))?;
    let tid = p.current_tid();
    let esp = v(4);
    if let Some(list) = rt(p).conts.get_mut(&tid) {
        list.retain(|k| match k {
            Cont::Qsort { frame, .. }
            | Cont::Bsearch { frame, .. }
            | Cont::System { frame, .. }
            | Cont::Return { frame } => frame.esp >= esp,
            Cont::Exit { .. } => true,
        });
    }
    let gpr = p.machine.gpr_mut();
    gpr[Gpr::Ebx] = v(0);
    gpr[Gpr::Esi] = v(1);
    gpr[Gpr::Edi] = v(2);
    gpr[Gpr::Ebp] = v(3);
    gpr[Gpr::Esp] = esp;
    gpr[Gpr::Eax] = if c.l(1) == 0 { 1 } else { c.l(1) };
    p.machine.set_eip(v(5));
    Err(Stop::Resumed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sort(v: &[i32]) -> Vec<i32> {
        let mut s = MergeSort::new(v.len());
        let mut last = None;
        let mut compares = 0;
        while let Some((a, b)) = s.step(last) {
            compares += 1;
            last = Some(v[a as usize].cmp(&v[b as usize]) as i32);
        }
        assert!(compares <= v.len() * 8 + 1);
        s.order().iter().map(|&i| v[i as usize]).collect()
    }

    #[test]
    fn merge_sort_sorts_and_is_stable() {
        assert_eq!(sort(&[]), Vec::<i32>::new());
        assert_eq!(sort(&[1]), vec![1]);
        assert_eq!(sort(&[3, 1, 2]), vec![1, 2, 3]);
        let v: Vec<i32> = (0..100).map(|i| (i * 37 + 11) % 23).collect();
        let mut want = v.clone();
        want.sort();
        assert_eq!(sort(&v), want);
        // Stable: equal keys keep their order.
        let keys = [2, 1, 2, 1];
        let mut s = MergeSort::new(4);
        let mut last = None;
        while let Some((a, b)) = s.step(last) {
            last = Some(keys[a as usize].cmp(&keys[b as usize]) as i32);
        }
        assert_eq!(s.order(), &[1, 3, 0, 2]);
    }
}
