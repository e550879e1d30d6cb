//! Child processes (issue 12, item 4): DosExecPgm (EXEC_SYNC,
//! EXEC_ASYNC, EXEC_ASYNCRESULT), DosWaitChild, DosKillProcess, the
//! RESULTCODES and the failing-object buffer, and the environment
//! segment a child gets, with self-built 32-bit programs.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

const EXEC_PGM: u32 = 283;
const WAIT_CHILD: u32 = 280;
const KILL_PROCESS: u32 = 235;
const GET_INFO_BLOCKS: u32 = 312;
const WRITE: u32 = 282;

/// Where the programs keep things, in their data area.
const NAME: u32 = DATA + 0x200;
const ARGS: u32 = DATA + 0x240;
const ENV: u32 = DATA + 0x2A0;
const OBJ: u32 = DATA + 0x300;
const RES: u32 = DATA + 0x340;
const OUT: u32 = DATA + 0x380;

#[derive(Clone, Copy)]
enum Arg {
    Imm(u32),
    Mem(u32),
}
use Arg::{Imm, Mem};

/// A 32-bit program being written.
struct Prog {
    c: Code,
}

impl Prog {
    fn new() -> Prog {
        Prog { c: Code::new() }
    }
    fn raw(&mut self, b: &[u8]) -> &mut Prog {
        self.c.c.extend(b);
        self
    }
    /// `mov dword [addr], eax`.
    fn store_eax(&mut self, addr: u32) -> &mut Prog {
        self.raw(&[0xA3]).raw(&addr.to_le_bytes())
    }
    /// The bytes `s` at `addr` (whole dwords, zero-padded).
    fn bytes(&mut self, addr: u32, s: &[u8]) -> &mut Prog {
        for (i, ch) in s.chunks(4).enumerate() {
            let mut d = [0u8; 4];
            d[..ch.len()].copy_from_slice(ch);
            self.c.store(addr + 4 * i as u32, u32::from_le_bytes(d));
        }
        self
    }
    /// A call of DOSCALLS.`ordinal` with dword arguments; EAX is stored
    /// at `rc_at`.
    fn api(&mut self, ordinal: u32, args: &[Arg], rc_at: u32) -> &mut Prog {
        for a in args.iter().rev() {
            match *a {
                Imm(v) => self.c.push(v),
                Mem(at) => self.c.push_mem(at),
            };
        }
        self.c.call("DOSCALLS", ordinal, 4 * args.len() as u8);
        self.store_eax(rc_at)
    }
    /// DosExecPgm(OBJ, 32, flag, ARGS, env, RES, NAME), its code at `rc_at`.
    fn exec(&mut self, flag: u32, env: u32, rc_at: u32) -> &mut Prog {
        self.exec_with(flag, ARGS, env, (RES, NAME), rc_at)
    }
    /// DosExecPgm(OBJ, 32, flag, args, env, results, name), its code to
    /// `rc_at`.
    fn exec_with(
        &mut self,
        flag: u32,
        args: u32,
        env: u32,
        (results, name): (u32, u32),
        rc_at: u32,
    ) -> &mut Prog {
        self.api(
            EXEC_PGM,
            &[
                Imm(OBJ),
                Imm(32),
                Imm(flag),
                Imm(args),
                Imm(env),
                Imm(results),
                Imm(name),
            ],
            rc_at,
        )
    }
    /// EAX = the dword at `offset` in the process's PIB
    /// (DosGetInfoBlocks, its pointers at DATA + 0x20 and + 0x24).
    fn pib_field(&mut self, offset: u8) -> &mut Prog {
        self.api(
            GET_INFO_BLOCKS,
            &[Imm(DATA + 0x20), Imm(DATA + 0x24)],
            DATA + 0x28,
        );
        self.c.load_eax(DATA + 0x24);
        self.raw(&[0x8B, 0x40, offset])
    }
    /// DosWaitChild(action, option, &RES, &ended at `ended`, pid), its
    /// code to `rc_at`.
    fn wait_child(
        &mut self,
        (action, option): (u32, u32),
        ended: u32,
        pid: Arg,
        rc_at: u32,
    ) -> &mut Prog {
        self.api(
            WAIT_CHILD,
            &[Imm(action), Imm(option), Imm(RES), Imm(ended), pid],
            rc_at,
        )
    }
    /// DosWrite(1, addr, len, &n).
    fn write(&mut self, addr: u32, len: u32) -> &mut Prog {
        self.api(
            WRITE,
            &[Imm(1), Imm(addr), Imm(len), Imm(DATA + 0x10)],
            DATA + 0x14,
        )
    }
    /// Write OUT..OUT+len to stdout, then exit with `code`.
    fn report(mut self, len: u32, code: u32) -> Vec<u8> {
        self.write(OUT, len);
        self.c.push(code);
        self.c.c.push(0x58);
        self.c.exit_eax()
    }
    fn exit(mut self, code: u32) -> Vec<u8> {
        self.c.push(code);
        self.c.c.push(0x58);
        self.c.exit_eax()
    }
}

/// A child that writes the first `len` bytes of its environment segment
/// (found through its PIB) to stdout and exits with `code`.
fn env_dumper(len: u32, code: u32) -> Vec<u8> {
    let mut p = Prog::new();
    p.pib_field(0x10); // pib_pchenv
    p.store_eax(DATA + 0x2C);
    p.api(
        WRITE,
        &[Imm(1), Mem(DATA + 0x2C), Imm(len), Imm(DATA + 0x10)],
        DATA + 0x14,
    );
    p.exit(code)
}

/// A child that writes `text` and exits with `code`.
fn printer(text: &[u8], code: u32) -> Vec<u8> {
    let mut p = Prog::new();
    p.bytes(DATA + 0x100, text);
    p.write(DATA + 0x100, text.len() as u32);
    p.exit(code)
}

/// A child that never ends by itself.
fn spinner() -> Vec<u8> {
    let mut p = Prog::new();
    p.raw(&[0xEB, 0xFE]);
    p.exit(0)
}

/// Run `T.EXE` with `files` beside it: (outcome, console, process).
fn run(files: &[(&str, Vec<u8>)]) -> (Outcome, Vec<u8>, Process) {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(20_000_000);
    cfg.env = vec![("PATH".into(), "C:\\".into()), ("X".into(), "1".into())];
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    (o, out.contents(), p)
}

fn dwords(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn a_synchronous_child_gets_its_arguments_and_environment_and_returns_its_codes() {
    let args = b"C.EXE\0one  two\0\0";
    let env = b"A=b\0PATH=C:\\BIN\0\0";
    let mut expected = env.to_vec();
    expected.extend(b"C:\\C.EXE\0");
    expected.extend(args);
    let mut p = Prog::new();
    p.bytes(NAME, b"C.EXE\0")
        .bytes(ARGS, args)
        .bytes(ENV, env)
        .exec(0, ENV, OUT)
        .c
        .load_eax(RES);
    p.store_eax(OUT + 4).c.load_eax(RES + 4);
    p.store_eax(OUT + 8);
    let parent = p.report(12, 0);
    let (o, out, _) = run(&[
        ("T.EXE", parent),
        ("C.EXE", env_dumper(expected.len() as u32, 7)),
    ]);
    assert_eq!(o, Outcome::Exited(0));
    let (child, parent) = out.split_at(expected.len());
    assert_eq!(child, &expected[..], "{}", String::from_utf8_lossy(child));
    // rc 0, TC_EXIT, result 7.
    assert_eq!(dwords(parent), [0, 0, 7]);
}

#[test]
fn a_null_environment_is_the_parents_and_null_arguments_are_empty() {
    let mut expected = b"PATH=C:\\\0X=1\0\0C:\\C.EXE\0\0\0".to_vec();
    let len = expected.len() as u32;
    let mut p = Prog::new();
    p.bytes(NAME, b"C.EXE\0");
    p.exec_with(0, 0, 0, (RES, NAME), OUT);
    let parent = p.report(4, 0);
    let (o, out, _) = run(&[("T.EXE", parent), ("C.EXE", env_dumper(len, 0))]);
    assert_eq!(o, Outcome::Exited(0));
    expected.extend([0; 4]);
    assert_eq!(out, expected);
}

#[test]
fn an_asynchronous_child_is_waited_for_with_its_pid_and_codes() {
    let mut p = Prog::new();
    p.bytes(NAME, b"C.EXE\0").bytes(ARGS, b"C.EXE\0\0");
    // EXEC_ASYNCRESULT: RES.codeTerminate is the PID.
    p.exec(2, 0, OUT).c.load_eax(RES);
    p.store_eax(OUT + 4);
    // DCWW_NOWAIT before the child ran: not complete.
    p.wait_child((0, 1), OUT + 12, Mem(OUT + 4), OUT + 8);
    // DCWW_WAIT for it.
    p.wait_child((0, 0), OUT + 16, Mem(OUT + 4), OUT + 20);
    p.c.load_eax(RES);
    p.store_eax(OUT + 24).c.load_eax(RES + 4);
    p.store_eax(OUT + 28);
    // No child left: any child, then that PID again.
    p.wait_child((0, 0), OUT + 12, Imm(0), OUT + 32);
    p.wait_child((0, 0), OUT + 12, Mem(OUT + 4), OUT + 36);
    // Bad action, bad option.
    p.wait_child((2, 0), OUT + 12, Imm(0), OUT + 40);
    p.wait_child((0, 2), OUT + 12, Imm(0), OUT + 44);
    let parent = p.report(48, 0);
    let (o, out, _) = run(&[("T.EXE", parent), ("C.EXE", printer(b"child\r\n", 42))]);
    assert_eq!(o, Outcome::Exited(0));
    let (child, rest) = out.split_at(7);
    assert_eq!(child, b"child\r\n");
    let v = dwords(rest);
    assert_eq!(v[0], 0, "DosExecPgm");
    assert_eq!(v[1], 2, "the child's PID");
    assert_eq!(v[2], 129, "ERROR_CHILD_NOT_COMPLETE");
    assert_eq!(v[5], 0, "DosWaitChild");
    assert_eq!(v[4], 2, "the PID DosWaitChild gives");
    assert_eq!((v[6], v[7]), (0, 42), "TC_EXIT and the result code");
    assert_eq!(v[8], 128, "ERROR_WAIT_NO_CHILDREN");
    assert_eq!(v[9], 303, "ERROR_INVALID_PROCID");
    assert_eq!((v[10], v[11]), (13, 13), "ERROR_INVALID_DATA");
}

#[test]
fn an_exec_async_childs_codes_are_not_collected_by_a_wait_for_any_child() {
    let mut p = Prog::new();
    p.bytes(NAME, b"C.EXE\0").bytes(ARGS, b"C.EXE\0\0");
    p.exec(1, 0, OUT);
    // Wait for any child: the one child has no result to give, and once
    // it has ended there is nothing left to wait for.
    p.wait_child((0, 0), OUT + 12, Imm(0), OUT + 4);
    let parent = p.report(8, 0);
    let (o, out, _) = run(&[("T.EXE", parent), ("C.EXE", printer(b"c", 5))]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(out[0], b'c');
    assert_eq!(dwords(&out[1..]), [0, 128]);
}

#[test]
fn dos_kill_process_ends_a_running_child_with_tc_killprocess() {
    let mut p = Prog::new();
    p.bytes(NAME, b"C.EXE\0").bytes(ARGS, b"C.EXE\0\0");
    p.exec(2, 0, OUT).c.load_eax(RES);
    p.store_eax(OUT + 4);
    // Let the child spin for a while (DosSleep 50 ms).
    p.c.push(50).call("DOSCALLS", 229, 4);
    p.api(KILL_PROCESS, &[Imm(1), Mem(OUT + 4)], OUT + 8);
    p.wait_child((0, 0), OUT + 40, Mem(OUT + 4), OUT + 12);
    p.c.load_eax(RES);
    p.store_eax(OUT + 16);
    // Killed and collected: no such process; itself: not a descendant;
    // a bad action.
    p.api(KILL_PROCESS, &[Imm(1), Mem(OUT + 4)], OUT + 20);
    p.api(KILL_PROCESS, &[Imm(1), Imm(1)], OUT + 24);
    p.api(KILL_PROCESS, &[Imm(2), Mem(OUT + 4)], OUT + 28);
    let parent = p.report(32, 0);
    let (o, out, p) = run(&[("T.EXE", parent), ("C.EXE", spinner())]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(dwords(&out), [0, 2, 0, 0, 3, 303, 305, 13]);
    // The spinner ran until the kill: well past the parent's own work.
    assert!(p.instructions() > 100_000, "{}", p.instructions());
}

#[test]
fn exec_errors_name_the_failing_object() {
    let mut p = Prog::new();
    p.bytes(NAME, b"NONE.EXE\0").bytes(ARGS, b"NONE.EXE\0\0");
    p.exec(0, 0, OUT);
    p.c.load_eax(OBJ);
    p.store_eax(OUT + 4).c.load_eax(OBJ + 4);
    p.store_eax(OUT + 8);
    // A program whose DLL is missing.
    p.bytes(NAME, b"D.EXE\0");
    p.exec(0, 0, OUT + 12);
    p.c.load_eax(OBJ);
    p.store_eax(OUT + 16);
    // A bad name pointer, a bad RESULTCODES pointer, an unknown flag.
    p.exec_with(0, 0, 0, (RES, 0x0BAD_0000), OUT + 20);
    p.exec_with(0, 0, 0, (0x0BAD_0000, NAME), OUT + 24);
    p.exec_with(7, 0, 0, (RES, NAME), OUT + 28);
    let parent = p.report(32, 0);
    // D.EXE imports MISSING.1.
    let mut d = Code::new();
    d.call("MISSING", 1, 0);
    let d = d.exit_eax();
    let (o, out, _) = run(&[("T.EXE", parent), ("D.EXE", d)]);
    assert_eq!(o, Outcome::Exited(0));
    let v = dwords(&out);
    assert_eq!(v[0], 2, "ERROR_FILE_NOT_FOUND");
    assert_eq!(&out[4..12], b"NONE.EXE");
    assert_eq!(v[3], 2, "a missing DLL");
    assert_eq!(&out[16..20], b"MISS");
    assert_eq!((v[5], v[6], v[7]), (487, 487, 1));
}

#[test]
fn a_faulting_child_ends_with_tc_exception_and_its_parent_goes_on() {
    let mut p = Prog::new();
    p.bytes(NAME, b"C.EXE\0").bytes(ARGS, b"C.EXE\0\0");
    p.exec(0, 0, OUT).c.load_eax(RES);
    p.store_eax(OUT + 4).c.load_eax(RES + 4);
    p.store_eax(OUT + 8);
    let parent = p.report(12, 0);
    let mut child = Prog::new();
    // mov eax, [0]: a page fault.
    child.raw(&[0xA1, 0, 0, 0, 0]);
    let (o, out, _) = run(&[("T.EXE", parent), ("C.EXE", child.exit(0))]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(dwords(&out), [0, 4, 0]);
}

/// Parent and an asynchronous child both write in a loop, each a byte at
/// a time: the interleaving comes from the quanta alone, and is the same
/// on every run.
#[test]
fn parent_and_child_interleave_the_same_way_every_time() {
    /// Writes `ch` `n` times with a delay loop after each.
    fn looper(ch: u8, n: u32) -> Prog {
        let mut p = Prog::new();
        p.c.store(DATA + 0x100, u32::from(ch));
        // mov ebx, n
        p.raw(&[0xBB]).raw(&n.to_le_bytes());
        let top = p.c.c.len();
        p.raw(&[0x53]);
        p.write(DATA + 0x100, 1);
        // a delay loop: mov ecx, 20000; loop $
        p.raw(&[0xB9, 0x20, 0x4E, 0, 0, 0xE2, 0xFE]);
        p.raw(&[0x5B, 0x4B, 0x0F, 0x85]);
        let back = top as i32 - (p.c.c.len() as i32 + 4);
        p.raw(&back.to_le_bytes());
        p
    }
    let mut whole = Prog::new();
    whole.bytes(NAME, b"C.EXE\0").bytes(ARGS, b"C.EXE\0\0");
    whole.exec(2, 0, OUT);
    whole.c.store(DATA + 0x100, u32::from(b'P'));
    whole.raw(&[0xBB]).raw(&20u32.to_le_bytes());
    let top = whole.c.c.len();
    whole.raw(&[0x53]);
    whole.write(DATA + 0x100, 1);
    whole.raw(&[0xB9, 0x20, 0x4E, 0, 0, 0xE2, 0xFE]);
    whole.raw(&[0x5B, 0x4B, 0x0F, 0x85]);
    let back = top as i32 - (whole.c.c.len() as i32 + 4);
    whole.raw(&back.to_le_bytes());
    // Wait for the child before ending.
    whole.wait_child((0, 0), OUT + 12, Imm(0), OUT + 4);
    let parent = whole.exit(0);
    let child = looper(b'c', 20).exit(0);
    let first = run(&[("T.EXE", parent.clone()), ("C.EXE", child.clone())]);
    let second = run(&[("T.EXE", parent), ("C.EXE", child)]);
    assert_eq!(first.0, Outcome::Exited(0));
    let text = String::from_utf8_lossy(&first.1).into_owned();
    assert_eq!(text.matches('P').count(), 20, "{text}");
    assert_eq!(text.matches('c').count(), 20, "{text}");
    // Both ran before either finished: the quanta interleave them.
    let (last_p, first_c) = (text.rfind('P').unwrap(), text.find('c').unwrap());
    assert!(first_c < last_p, "{text}");
    assert_eq!(first.1, second.1);
    assert_eq!(first.2.instructions(), second.2.instructions());
}

/// A 16-bit parent (NE, far pascal calls): DosExecPgm of testprogs'
/// SYSTRC16 with EXEC_ASYNCRESULT, DosCwait for it, DosGetPPID of
/// itself, then its own DosSysTrace record, run traced: (outcome, the
/// STDA's bytes). Both processes write into the one system trace
/// buffer, each record with its process's PID.
fn traced_16_bit_run() -> (Outcome, Vec<u8>) {
    use common::{ne_program, push};
    // Data: 0x00 program name, 0x20 arguments, 0x40 RESULTCODES,
    // 0x44 the PID DosCwait gives, 0x46 DosGetPPID's, 0x50 object buffer.
    let mut data = vec![0u8; 0x200];
    data[..13].copy_from_slice(b"SYSTRC16.EXE\0");
    data[0x20..0x2E].copy_from_slice(b"SYSTRC16.EXE\0\0");
    let mut c = Vec::new();
    let mut calls = Vec::new();
    let far = |c: &mut Vec<u8>, calls: &mut Vec<(u32, &'static str, u32)>, ord: u32| {
        calls.push((c.len() as u32, "DOSCALLS", ord));
        c.extend([0x9A, 0, 0, 0, 0]);
    };
    // DosExecPgm(DS:50, 32, EXEC_ASYNCRESULT, DS:20, NULL, DS:40, DS:0)
    c.push(0x1E);
    c.extend(push(0x50));
    c.extend(push(32));
    c.extend(push(2));
    c.push(0x1E);
    c.extend(push(0x20));
    c.extend(push(0));
    c.extend(push(0));
    c.push(0x1E);
    c.extend(push(0x40));
    c.push(0x1E);
    c.extend(push(0));
    far(&mut c, &mut calls, 144);
    // mov [0x48], ax (DosExecPgm's code)
    c.extend([0xA3, 0x48, 0]);
    // DosCwait(DCWA_PROCESS, DCWW_WAIT, DS:40, DS:44, pid = [DS:40])
    c.extend(push(0));
    c.extend(push(0));
    c.push(0x1E);
    c.extend(push(0x40));
    c.push(0x1E);
    c.extend(push(0x44));
    c.extend([0xFF, 0x36, 0x40, 0]);
    far(&mut c, &mut calls, 2);
    c.extend([0xA3, 0x4A, 0]);
    // DosGetPPID(1, DS:46)
    c.extend(push(1));
    c.push(0x1E);
    c.extend(push(0x46));
    far(&mut c, &mut calls, 156);
    // DosSysTrace(0xF5, 12, 9, DS:40): what the calls gave.
    c.extend(push(0xF5));
    c.extend(push(12));
    c.extend(push(9));
    c.push(0x1E);
    c.extend(push(0x40));
    far(&mut c, &mut calls, 90);
    // DosExit(EXIT_PROCESS, the child's result code)
    c.extend(push(1));
    c.extend([0xFF, 0x36, 0x42, 0]);
    far(&mut c, &mut calls, 5);
    let parent = ne_program(&c, &data, &calls);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), parent).unwrap();
    testprogs::systrc16().unwrap().write_to(dir.path()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(5_000_000);
    let mut p = Process::new(cfg).unwrap();
    let _out = common::capture_console(&mut p);
    let commands = kernel_sim::trace::TraceCommands {
        traces: vec!["245(1,9)".to_string()],
        ..Default::default()
    };
    p.trace_commands(&commands).unwrap();
    let o = p.run();
    let snap = p.system_trace_mut().unwrap().buffer_mut().get_stda();
    (o, snap.stda)
}

#[test]
fn a_16_bit_parent_execs_waits_and_both_trace_with_their_pids() {
    let (o, bytes) = traced_16_bit_run();
    assert_eq!(o, Outcome::Exited(0));
    let records = stda::Stda::parse(&bytes).unwrap().records();
    let got: Vec<(u16, u16)> = records.iter().map(|r| (r.minor, r.pid)).collect();
    assert_eq!(
        got,
        [(1, 2), (9, 1)],
        "the child's record, then the parent's"
    );
    // RESULTCODES (TC_EXIT, 0), the PID DosCwait gave, the parent's own
    // parent (none), DosExecPgm's and DosCwait's codes.
    let words: Vec<u16> = records[1]
        .data
        .chunks_exact(2)
        .map(|w| u16::from_le_bytes([w[0], w[1]]))
        .collect();
    assert_eq!(words, [0, 0, 2, 0, 0, 0]);
    // Two processes, the same buffer on every run, byte for byte.
    assert_eq!(traced_16_bit_run(), (Outcome::Exited(0), bytes));
}

/// A program that execs itself (EXEC_SYNC) and exits with the child's
/// result, or with DosExecPgm's code when it fails: the nesting stops at
/// the process limit with ERROR_NO_PROC_SLOTS, and the code comes back
/// up the chain. The host does not recurse: each level is a process.
#[test]
fn a_program_that_execs_itself_stops_at_the_process_limit() {
    let mut p = Prog::new();
    p.bytes(NAME, b"T.EXE\0").bytes(ARGS, b"T.EXE\0\0");
    p.exec(0, 0, OUT);
    // mov eax, [OUT]; test eax, eax; jnz exit_eax; mov eax, [RES+4]
    p.c.load_eax(OUT);
    p.raw(&[0x85, 0xC0, 0x75, 0x05]);
    p.c.load_eax(RES + 4);
    let bytes = p.c.exit_eax();
    let (o, _, p) = run(&[("T.EXE", bytes)]);
    assert_eq!(o, Outcome::Exited(89), "ERROR_NO_PROC_SLOTS");
    assert!(p.instructions() > 0);
}

/// C.EXE starts G.EXE (asynchronously) and ends at once; G sleeps, then
/// writes `g`. A wait for C's process tree returns only after G ended; a
/// wait for C alone does not wait for G.
#[test]
fn dcwa_processtree_waits_for_the_grandchildren_too() {
    fn parent(action: u32) -> Vec<u8> {
        let mut p = Prog::new();
        p.bytes(NAME, b"C.EXE\0").bytes(ARGS, b"C.EXE\0\0");
        p.exec(2, 0, OUT).c.load_eax(RES);
        p.store_eax(OUT + 4);
        p.wait_child((action, 0), OUT + 8, Mem(OUT + 4), OUT);
        p.bytes(DATA + 0x100, b"r");
        p.write(DATA + 0x100, 1);
        p.exit(0)
    }
    let mut c = Prog::new();
    c.bytes(NAME, b"G.EXE\0").bytes(ARGS, b"G.EXE\0\0");
    c.exec(1, 0, OUT);
    c.bytes(DATA + 0x100, b"c");
    c.write(DATA + 0x100, 1);
    let c = c.exit(0);
    let mut g = Prog::new();
    g.c.push(100).call("DOSCALLS", 229, 4);
    g.bytes(DATA + 0x100, b"g");
    g.write(DATA + 0x100, 1);
    let g = g.exit(0);
    let files = |t: Vec<u8>| vec![("T.EXE", t), ("C.EXE", c.clone()), ("G.EXE", g.clone())];
    let (o, out, _) = run(&files(parent(1)));
    assert_eq!((o, out.as_slice()), (Outcome::Exited(0), &b"cgr"[..]));
    let (o, out, _) = run(&files(parent(0)));
    assert_eq!((o, out.as_slice()), (Outcome::Exited(0), &b"cr"[..]));
}

/// DKP_PROCESSTREE ends a child and its own child; DKP_PROCESS only the
/// one named.
#[test]
fn dkp_processtree_kills_the_descendants() {
    fn parent(action: u32) -> Vec<u8> {
        let mut p = Prog::new();
        p.bytes(NAME, b"C.EXE\0").bytes(ARGS, b"C.EXE\0\0");
        p.exec(2, 0, OUT);
        p.c.push(50).call("DOSCALLS", 229, 4);
        // Kill C (PID 2) with `action`, then ask about G (PID 3).
        p.api(KILL_PROCESS, &[Imm(action), Imm(2)], OUT);
        p.api(KILL_PROCESS, &[Imm(1), Imm(3)], OUT + 4);
        p.report(8, 0)
    }
    let mut c = Prog::new();
    c.bytes(NAME, b"S.EXE\0").bytes(ARGS, b"S.EXE\0\0");
    c.exec(1, 0, OUT);
    c.raw(&[0xEB, 0xFE]);
    let c = c.exit(0);
    let files = |t: Vec<u8>| vec![("T.EXE", t), ("C.EXE", c.clone()), ("S.EXE", spinner())];
    // The tree: G is gone with C.
    let (o, out, _) = run(&files(parent(0)));
    assert_eq!((o, dwords(&out)), (Outcome::Exited(0), vec![0, 303]));
    // C alone: G lives on (an orphan that still descends from the caller)
    // until the second kill.
    let (o, out, _) = run(&files(parent(1)));
    assert_eq!((o, dwords(&out)), (Outcome::Exited(0), vec![0, 0]));
}

/// A child that writes its BEGINLIBPATH (DosQueryExtLIBPATH) and exits.
fn libpath_printer() -> Vec<u8> {
    let mut p = Prog::new();
    p.api(874, &[Imm(DATA + 0x400), Imm(1)], DATA + 0x10);
    // The length: repne scasb over the NUL-terminated value.
    p.raw(&[0xBF]).raw(&(DATA + 0x400).to_le_bytes());
    p.raw(&[0x31, 0xC0, 0xB9, 0xFF, 0x03, 0, 0, 0xF2, 0xAE, 0x89, 0xF8]);
    p.raw(&[0x2D]).raw(&(DATA + 0x401).to_le_bytes());
    p.store_eax(DATA + 0x18);
    p.api(
        WRITE,
        &[
            Imm(1),
            Imm(DATA + 0x400),
            Mem(DATA + 0x18),
            Imm(DATA + 0x10),
        ],
        DATA + 0x14,
    );
    p.exit(0)
}

/// The extended LIBPATHs go to a child as a copy (DosExecPgm), and
/// CMD.EXE's SET BEGINLIBPATH sets its own.
#[test]
fn a_child_inherits_the_extended_libpath() {
    let mut p = Prog::new();
    p.bytes(DATA + 0x500, b"C:\\MINE\0");
    p.api(873, &[Imm(DATA + 0x500), Imm(1)], OUT);
    p.bytes(NAME, b"Q.EXE\0").bytes(ARGS, b"Q.EXE\0\0");
    p.exec(0, 0, OUT + 4);
    let parent = p.report(8, 0);
    let (o, out, _) = run(&[("T.EXE", parent), ("Q.EXE", libpath_printer())]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(&out[..7], b"C:\\MINE");
    assert_eq!(dwords(&out[7..]), [0, 0]);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Q.EXE"), libpath_printer()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "C:\\OS2\\CMD.EXE");
    cfg.args = vec![
        "/C".into(),
        "set".into(),
        "beginlibpath=C:\\A&".into(),
        "Q".into(),
    ];
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(0));
    assert_eq!(out.text(), "C:\\A");
}

/// A shared mutex owned by the parent's thread 1 is not the child's
/// thread 1's; a mutex a child leaves owned when it ends is free, and its
/// next owner hears that the owner died.
#[test]
fn mutex_owners_are_threads_of_a_process() {
    fn parent(owned: u32, then_request: bool) -> Vec<u8> {
        let mut p = Prog::new();
        p.bytes(DATA + 0x500, b"\\SEM32\\M\0");
        p.api(
            331,
            &[Imm(DATA + 0x500), Imm(DATA + 0x510), Imm(1), Imm(owned)],
            OUT,
        );
        p.bytes(NAME, b"C.EXE\0").bytes(ARGS, b"C.EXE\0\0");
        p.exec(0, 0, OUT + 4).c.load_eax(RES + 4);
        p.store_eax(OUT + 8);
        if then_request {
            p.api(334, &[Mem(DATA + 0x510), Imm(0)], OUT + 12);
        }
        p.report(16, 0)
    }
    // The child opens the mutex and requests it without waiting; it ends
    // with the code (and leaves the mutex owned if it got it).
    let mut c = Prog::new();
    c.bytes(DATA + 0x500, b"\\SEM32\\M\0");
    c.api(332, &[Imm(DATA + 0x500), Imm(DATA + 0x510)], DATA + 0x520);
    c.api(334, &[Mem(DATA + 0x510), Imm(0)], DATA + 0x524);
    c.c.load_eax(DATA + 0x524);
    let child = c.c.exit_eax();
    let (o, out, _) = run(&[("T.EXE", parent(1, false)), ("C.EXE", child.clone())]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(
        dwords(&out)[..3],
        [0, 0, 640],
        "ERROR_TIMEOUT: the parent owns it"
    );
    let (o, out, _) = run(&[("T.EXE", parent(0, true)), ("C.EXE", child)]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(dwords(&out), [0, 0, 0, 105], "ERROR_SEM_OWNER_DIED");
}

/// A traced program that starts itself: the child's copy is where the
/// traced one is, so its hit is taken too, logged with its PID.
#[test]
fn a_childs_copy_of_a_traced_module_at_the_same_place_is_traced() {
    let mut p = Prog::new();
    p.pib_field(0x04); // pib_ulppid
    p.raw(&[0x85, 0xC0]); // test eax, eax
    let skip = p.c.jcc(common::JNZ, None);
    p.bytes(NAME, b"T.EXE\0").bytes(ARGS, b"T.EXE\0\0");
    p.exec(0, 0, OUT);
    p.c.land(skip);
    p.bytes(DATA + 0x100, b"x");
    p.write(DATA + 0x100, 1);
    let call = p.c.calls.last().unwrap().0;
    let bytes = p.exit(0);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut proc = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut proc);
    let src = format!(
        "major=0xC9\nminor=0x21\nobject=1\noffset={call}\nopcode=0xE8\nPush W,7\nLog WN,1\n"
    );
    let file = rpn_vm::parse("t.rpn", &src).unwrap();
    proc.trace_start(stda::StdaFormat::New, 4).unwrap();
    proc.trace_apply("TESTLX", &file, None, None).unwrap();
    assert_eq!(proc.run(), Outcome::Exited(0));
    assert_eq!(out.text(), "xx");
    let snap = proc.system_trace_mut().unwrap().buffer_mut().get_stda();
    let records = stda::Stda::parse(&snap.stda).unwrap().records();
    let got: Vec<(u16, Vec<u8>)> = records.iter().map(|r| (r.pid, r.data.clone())).collect();
    assert_eq!(got, [(2, vec![7, 0]), (1, vec![7, 0])]);
}
