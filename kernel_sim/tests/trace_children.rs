//! The dynamic trace across processes (issue 12, item 4, with the trace
//! facility): a DTO is the module's, so a traced program run as a child
//! (by CMD.EXE /C, by DosExecPgm synchronously or asynchronously, by
//! DosStartSession), a DLL loaded and freed at run time, and a
//! traced DLL loaded by several processes at different addresses are
//! traced in every copy, each hit logged into the one system trace
//! buffer with the PID of the process that hit it.

mod common;

use common::{Code, DATA};
use kernel_sim::trace::TraceCommands;
use kernel_sim::{Outcome, Process, ProcessConfig};
use stda::Stda;

/// DosExecPgm's object buffer, arguments, RESULTCODES, the program name,
/// the return codes the programs keep, a module handle and a procedure
/// address, in the data area.
const OBJ: u32 = DATA + 0x300;
const ARGS: u32 = DATA + 0x240;
const RES: u32 = DATA + 0x340;
const NAME: u32 = DATA + 0x200;
const RC: u32 = DATA + 0x380;
const HMOD: u32 = DATA + 0x3A0;
const PFN: u32 = DATA + 0x3A4;

/// EXEC_SYNC and EXEC_ASYNCRESULT.
const SYNC: u32 = 0;
const ASYNC_RESULT: u32 = 2;

/// A record as (PID, major, minor, data).
type Rec = (u16, u8, u16, Vec<u8>);

/// A traced run: how it ended, its console, the buffer's records and
/// bytes, the (PID, TID) of each sidecar entry, and the system.
struct Traced {
    outcome: Outcome,
    console: String,
    records: Vec<Rec>,
    stda: Vec<u8>,
    sidecar: Vec<(u16, u16)>,
    p: Process,
}

/// The bytes `s` at `addr` (whole dwords, zero-padded).
fn bytes(c: &mut Code, addr: u32, s: &[u8]) {
    for (i, ch) in s.chunks(4).enumerate() {
        let mut d = [0u8; 4];
        d[..ch.len()].copy_from_slice(ch);
        c.store(addr + 4 * i as u32, u32::from_le_bytes(d));
    }
}

/// `mov dword [addr], eax`.
fn store_eax(c: &mut Code, addr: u32) {
    c.c.push(0xA3);
    c.c.extend(addr.to_le_bytes());
}

/// DosExecPgm(OBJ, 32, `flag`, ARGS, NULL, RES, NAME) of `program`.
fn exec(c: &mut Code, flag: u32, program: &[u8]) {
    let mut name = program.to_vec();
    name.push(0);
    let mut args = name.clone();
    args.push(0);
    bytes(c, NAME, &name);
    bytes(c, ARGS, &args);
    for v in [NAME, RES, 0, ARGS, flag, 32, OBJ] {
        c.push(v);
    }
    c.call("DOSCALLS", 283, 28);
    store_eax(c, RC);
}

/// DosWaitChild(DCWA_PROCESS, DCWW_WAIT, RES, RC+4, the PID in RES).
fn wait_child(c: &mut Code) {
    c.push_mem(RES).push(RC + 4).push(RES).push(0).push(0);
    c.call("DOSCALLS", 280, 20);
}

/// DosLoadModule(OBJ, 32, `dll`, HMOD).
fn load_module(c: &mut Code, dll: &[u8], at: u32) {
    let mut name = dll.to_vec();
    name.push(0);
    bytes(c, at, &name);
    c.push(HMOD).push(at).push(32).push(OBJ);
    c.call("DOSCALLS", 318, 16);
    store_eax(c, RC + 8);
}

/// A sandbox with TPDLL32, DLLCAL32, their trace program files and
/// `extra` files; `program` run there with both trace program files
/// applied.
fn traced(extra: &[(&str, Vec<u8>)], program: &str, args: &[&str]) -> Traced {
    let dir = tempfile::tempdir().unwrap();
    let dll = testprogs::tpdll32().unwrap();
    let exe = testprogs::dllcal32().unwrap();
    dll.write_to(dir.path()).unwrap();
    exe.write_to(dir.path()).unwrap();
    for (name, bytes) in extra {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let mut cfg = ProcessConfig::new(dir.path(), program);
    cfg.args = args.iter().map(|a| a.to_string()).collect();
    cfg.max_instructions = Some(5_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let rpn = |prog: &testprogs::Program| {
        dir.path()
            .join(prog.rpn_file_name())
            .to_string_lossy()
            .into_owned()
    };
    let commands = TraceCommands {
        applies: vec![rpn(&exe), rpn(&dll)],
        ..TraceCommands::default()
    };
    p.trace_commands(&commands).unwrap();
    let outcome = p.run();
    let side = p.system_trace().unwrap().sidecar();
    let sidecar = side.entries.iter().map(|e| (e.pid, e.tid)).collect();
    let snap = p.system_trace_mut().unwrap().buffer_mut().get_stda();
    let records = Stda::parse(&snap.stda)
        .unwrap()
        .records()
        .into_iter()
        .map(|r| (r.pid, r.major, r.minor, r.data))
        .collect();
    Traced {
        outcome,
        console: out.text(),
        records,
        stda: snap.stda,
        sidecar,
        p,
    }
}

/// The records of process `pid`, without it, TPDLL32's init record's
/// return address left out (it returns into the system region, to a
/// thunk that depends on what ran before).
fn of(records: &[Rec], pid: u16) -> Vec<(u8, u16, Vec<u8>)> {
    records
        .iter()
        .filter(|r| r.0 == pid)
        .map(|(_, major, minor, data)| {
            let data = if (*major, *minor) == (0xC3, 1) {
                data[7..].to_vec()
            } else {
                data.clone()
            };
            (*major, *minor, data)
        })
        .collect()
}

/// What DLLCAL32 logs when it runs as the first process.
fn alone() -> Vec<(u8, u16, Vec<u8>)> {
    alone_with(&[])
}

/// What DLLCAL32 logs when it runs as the first process, with `extra`
/// files in the sandbox.
fn alone_with(extra: &[(&str, Vec<u8>)]) -> Vec<(u8, u16, Vec<u8>)> {
    let Traced {
        outcome: o,
        records,
        ..
    } = traced(extra, "DLLCAL32.EXE", &[]);
    assert_eq!(o, Outcome::Exited(0));
    assert!(records.iter().all(|r| r.0 == 1));
    // Nine records, and TPDLL32's global termination as the process ends.
    assert_eq!(records.len(), 10, "{records:?}");
    of(&records, 1)
}

#[test]
fn a_program_that_cmd_runs_is_traced_in_the_child_with_its_pid() {
    let want = alone();
    let run = || traced(&[], "C:\\OS2\\CMD.EXE", &["/C", "DLLCAL32"]);
    let Traced {
        outcome: o,
        console,
        records,
        stda,
        sidecar,
        p,
    } = run();
    assert_eq!(o, Outcome::Exited(0));
    assert!(console.starts_with("DLLCAL32 calls TPDLL32"), "{console}");
    // CMD.EXE (PID 1) is no traced module: every record is the child's.
    assert!(records.iter().all(|r| r.0 == 2), "{records:?}");
    assert_eq!(of(&records, 2), want);
    let report = p.trace_report().unwrap();
    assert_eq!(report.dtos[0].module, "DLLCAL32");
    assert_eq!(report.dtos[0].pids, [2]);
    assert_eq!(report.dtos[1].pids, [2]);
    assert!(report.dtos.iter().all(|d| d.refused.is_empty()));
    // The sidecar has each record's process and thread: the child's
    // thread 1.
    assert_eq!(sidecar, vec![(2, 1); records.len()]);
    // The child has ended: its copies are traced no more, and nothing of
    // them is left in the runtime.
    let dtos = p.system_trace().unwrap().runtime().dtos();
    assert!(dtos.iter().all(|d| d.instances.is_empty()));
    assert_eq!(run().stda, stda, "the same buffer on every run");
}

#[test]
fn a_child_started_synchronously_or_asynchronously_is_traced_with_its_pid() {
    let want = alone();
    for flag in [SYNC, ASYNC_RESULT] {
        let mut c = Code::new();
        exec(&mut c, flag, b"DLLCAL32.EXE");
        if flag == ASYNC_RESULT {
            wait_child(&mut c);
        }
        // Exit with DosExecPgm's code plus the child's exit code.
        c.load_eax(RC);
        c.c.extend([0x03, 0x05]);
        c.c.extend((RES + 4).to_le_bytes());
        let parent = c.exit_eax();
        let files = [("T.EXE", parent)];
        let Traced {
            outcome: o,
            records,
            stda,
            p,
            ..
        } = traced(&files, "T.EXE", &[]);
        assert_eq!(o, Outcome::Exited(0), "flag {flag}");
        assert!(records.iter().all(|r| r.0 == 2), "{records:?}");
        assert_eq!(of(&records, 2), want, "flag {flag}");
        assert_eq!(p.trace_report().unwrap().dtos[1].pids, [2]);
        assert_eq!(traced(&files, "T.EXE", &[]).stda, stda, "flag {flag}");
    }
}

#[test]
fn a_dll_loaded_by_two_processes_at_two_addresses_is_traced_in_both() {
    // GetCount also logs its copy's object 1 (Push OXF): each instance
    // has its own objects.
    let rpn = testprogs::tpdll32().unwrap().rpn.replace(
        "  Push EIP\n  Log DN,1\n",
        "  Push EIP\n  Log DN,1\n  Push OXF,1\n  Log DN,1\n",
    );
    assert_eq!(rpn.matches("Push OXF").count(), 1, "{rpn}");
    let rpn = ("TPDLL32.RPN", rpn.into_bytes());
    let want = alone_with(std::slice::from_ref(&rpn));
    // The parent loads TNFDLL32 and then TPDLL32 (so TPDLL32 is lower in
    // the DLL arena than in a process that loads it first), calls its
    // GetCount, then runs DLLCAL32 twice, one after the other.
    let mut c = Code::new();
    load_module(&mut c, b"TNFDLL32", DATA + 0x400);
    load_module(&mut c, b"TPDLL32", DATA + 0x420);
    // DosQueryProcAddr(hmod, 3 = GetCount, NULL, PFN); call [PFN]
    c.push(PFN).push(0).push(3).push_mem(HMOD);
    c.call("DOSCALLS", 321, 16);
    c.c.extend([0xFF, 0x15]);
    c.c.extend(PFN.to_le_bytes());
    exec(&mut c, SYNC, b"DLLCAL32.EXE");
    exec(&mut c, SYNC, b"DLLCAL32.EXE");
    c.push(0);
    c.c.push(0x58);
    let parent = c.exit_eax();
    let other = testprogs::tnfdll32().unwrap();
    let files = [
        ("T.EXE", parent),
        ("TNFDLL32.DLL", other.bytes.clone()),
        rpn,
    ];
    let Traced {
        outcome: o,
        records,
        stda,
        p,
        ..
    } = traced(&files, "T.EXE", &[]);
    assert_eq!(o, Outcome::Exited(0));
    // The parent's own hits: TPDLL32's initialization, GetCount and its
    // termination as the parent ends.
    let mine: Vec<(u8, u16)> = records
        .iter()
        .filter(|r| r.0 == 1)
        .map(|r| (r.1, r.2))
        .collect();
    assert_eq!(mine, [(0xC3, 1), (0xC3, 4), (0xC3, 1)]);
    // Each child's copy is traced as if it ran alone.
    assert_eq!(of(&records, 2), want);
    assert_eq!(of(&records, 3), want);
    // GetCount logs its EIP: the INT3 in each process's own copy.
    let get_count = testprogs::tpdll32().unwrap();
    let offset = get_count.symbol("GetCount").unwrap().offset;
    let base = p.module("TPDLL32").unwrap().objects[0].base;
    let dword = |d: &[u8]| u32::from_le_bytes(d.try_into().unwrap());
    let eips: Vec<(u16, u32, u32)> = records
        .iter()
        .filter(|r| (r.1, r.2) == (0xC3, 4))
        .map(|r| (r.0, dword(&r.3[..4]), dword(&r.3[4..8])))
        .collect();
    assert_eq!(eips[0], (1, base + offset + 1, base), "the parent's copy");
    let child = eips[1].1;
    assert_ne!(child, eips[0].1, "the copies are at different addresses");
    let child_base = child - offset - 1;
    assert_eq!(eips[1..], [(2, child, child_base), (3, child, child_base)]);
    let report = p.trace_report().unwrap();
    assert_eq!(report.dtos[1].pids, [1, 2, 3]);
    let tp = report.dtos[1]
        .tracepoints
        .iter()
        .find(|t| t.minor == 4)
        .unwrap();
    assert_eq!((tp.hits, tp.logged), (3, 3), "one module, three copies");
    // The parent's copy stays; the children's went with them.
    let dto = &p.system_trace().unwrap().runtime().dtos()[1];
    let pids: Vec<u16> = dto.instances.values().map(|i| i.pid).collect();
    assert_eq!(pids, [1]);
    assert_eq!(traced(&files, "T.EXE", &[]).stda, stda);
}

#[test]
fn a_copy_whose_bytes_differ_is_refused_and_runs_untraced() {
    // Both programs are module TESTLX; the tracepoint is on the parent's
    // `call DosExecPgm`, where the child has another instruction.
    let mut c = Code::new();
    exec(&mut c, SYNC, b"C.EXE");
    let call = c.calls.last().unwrap().0;
    c.load_eax(RES + 4);
    let parent = c.exit_eax();
    let mut child = Code::new();
    child.c.extend(std::iter::repeat_n(0x90, call as usize + 1));
    child.push(7);
    child.c.push(0x58);
    let child = child.exit_eax();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), parent).unwrap();
    std::fs::write(dir.path().join("C.EXE"), child).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    let _out = common::capture_console(&mut p);
    let src =
        format!("major=0xC9\nminor=1\nobject=1\noffset={call}\nopcode=0xE8\nPush W,7\nLog WN,1\n");
    let file = rpn_vm::parse("t.rpn", &src).unwrap();
    p.trace_start(stda::StdaFormat::New, 4).unwrap();
    p.trace_apply("TESTLX", &file, None, None).unwrap();
    assert_eq!(p.run(), Outcome::Exited(7), "the child ran, untraced");
    let report = p.trace_report().unwrap();
    assert_eq!(report.dtos[0].pids, [1]);
    assert_eq!(report.dtos[0].refused.len(), 1);
    let (pid, why) = &report.dtos[0].refused[0];
    assert_eq!(*pid, 2);
    assert!(why.contains("opcode mismatch"), "{why}");
    assert_eq!(report.dtos[0].tracepoints[0].hits, 1, "the parent's hit");
}

/// DosLoadModule brings a traced DLL in while the program runs: its copy
/// is traced from its initialization on; DosFreeModule takes the copy
/// out, and the copy a second DosLoadModule brings in (at another
/// address, the freed one's memory staying reserved) is traced anew.
#[test]
fn a_dll_loaded_at_run_time_is_traced_and_freeing_it_forgets_its_copy() {
    let mut c = Code::new();
    for _ in 0..2 {
        load_module(&mut c, b"TPDLL32", DATA + 0x420);
        c.push(PFN).push(0).push(3).push_mem(HMOD);
        c.call("DOSCALLS", 321, 16);
        c.c.extend([0xFF, 0x15]);
        c.c.extend(PFN.to_le_bytes());
        // DosFreeModule(hmod)
        c.push_mem(HMOD);
        c.call("DOSCALLS", 322, 4);
        store_eax(&mut c, RC + 12);
    }
    c.load_eax(RC + 12);
    let parent = c.exit_eax();
    let files = [("T.EXE", parent)];
    let Traced {
        outcome: o,
        records,
        stda,
        mut p,
        ..
    } = traced(&files, "T.EXE", &[]);
    assert_eq!(o, Outcome::Exited(0), "DosFreeModule succeeded");
    let got: Vec<(u16, u8, u16)> = records.iter().map(|r| (r.0, r.1, r.2)).collect();
    assert_eq!(
        got,
        [
            (1, 0xC3, 1),
            (1, 0xC3, 4),
            (1, 0xC3, 1),
            (1, 0xC3, 1),
            (1, 0xC3, 4),
            (1, 0xC3, 1)
        ],
        "init, GetCount and termination (in DosFreeModule) in each copy"
    );
    let eip = |r: &Rec| u32::from_le_bytes(r.3[..4].try_into().unwrap());
    assert_ne!(eip(&records[1]), eip(&records[4]), "two copies, two places");
    let dto = &p.system_trace().unwrap().runtime().dtos()[1];
    assert!(dto.instances.is_empty(), "both copies were freed");
    assert_eq!(dto.pids, [1]);
    // Nothing of the freed copies is a tracepoint any more: their bytes
    // are the DLL's own again.
    let offset = testprogs::tpdll32()
        .unwrap()
        .symbol("GetCount")
        .unwrap()
        .offset;
    for r in [&records[1], &records[4]] {
        let at = eip(r) - 1;
        assert_eq!(p.machine().tracepoint(at), None);
        let mut byte = [0u8];
        p.read_guest(at, &mut byte).unwrap();
        assert_ne!(byte[0], 0xCC, "GetCount+{offset:#x}");
    }
    assert_eq!(traced(&files, "T.EXE", &[]).stda, stda);
}

/// A program DosStartSession starts (a child session, in the one
/// machine) is traced in its process like any other child.
#[test]
fn a_program_started_as_a_session_is_traced_with_its_pid() {
    const SD: u32 = DATA + 0x100;
    let want = alone();
    let mut c = Code::new();
    bytes(&mut c, NAME, b"DLLCAL32.EXE\0");
    // STARTDATA: Length 32, Related, FgBg 0, TraceOpt 0, no title,
    // PgmName, no inputs, no termination queue or environment, the
    // default type.
    for (at, v) in [(0, 32 | (1 << 16)), (4, 0), (8, 0), (12, NAME)] {
        c.store(SD + at, v);
    }
    for at in [16, 20, 24, 28] {
        c.store(SD + at, 0);
    }
    c.push(RC + 4).push(RC + 8).push(SD);
    c.call("SESMGR", 37, 12);
    store_eax(&mut c, RC);
    // DosSleep(500): the session runs to its end meanwhile.
    c.push(500);
    c.call("DOSCALLS", 229, 4);
    c.load_eax(RC);
    let parent = c.exit_eax();
    let files = [("T.EXE", parent)];
    let Traced {
        outcome,
        records,
        stda,
        ..
    } = traced(&files, "T.EXE", &[]);
    assert_eq!(outcome, Outcome::Exited(0), "DosStartSession succeeded");
    assert!(records.iter().all(|r| r.0 == 2), "{records:?}");
    assert_eq!(of(&records, 2), want);
    assert_eq!(traced(&files, "T.EXE", &[]).stda, stda);
}

/// A child's threads hit its copy's tracepoint each with its own TID in
/// the sidecar, all with the child's PID in the records.
#[test]
fn a_childs_threads_hit_its_copy_with_their_tids() {
    use common::threaded::Prog;
    let mut c = Prog::new();
    // The traced function: nop; xor eax, eax; ret.
    let f = c.here();
    c.raw(&[0x90]);
    c.ret0();
    c.start_main();
    c.thread(DATA + 0x10, f);
    let at = c.here();
    c.raw(&[0xE8]).raw(&f.wrapping_sub(at + 5).to_le_bytes());
    c.wait(DATA + 0x10, 0, 0, 0xC1);
    let child = c.finish();
    let run = || {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("C.EXE"), &child).unwrap();
        let mut cfg = ProcessConfig::new(dir.path(), "C:\\OS2\\CMD.EXE");
        cfg.args = vec!["/C".into(), "C.EXE".into()];
        cfg.max_instructions = Some(1_000_000);
        let mut p = Process::new(cfg).unwrap();
        let _out = common::capture_console(&mut p);
        let src = format!(
            "major=0xC9\nminor=2\nobject=1\noffset={}\nopcode=0x90\nPush W,7\nLog WN,1\n",
            f - 0x10000
        );
        let file = rpn_vm::parse("t.rpn", &src).unwrap();
        p.trace_start(stda::StdaFormat::New, 4).unwrap();
        p.trace_apply("TESTLX", &file, None, None).unwrap();
        assert_eq!(p.run(), Outcome::Exited(0));
        let trace = p.system_trace_mut().unwrap();
        let side: Vec<(u16, u16)> = trace
            .sidecar()
            .entries
            .iter()
            .map(|e| (e.pid, e.tid))
            .collect();
        let snap = trace.buffer_mut().get_stda();
        let pids: Vec<u16> = Stda::parse(&snap.stda)
            .unwrap()
            .records()
            .iter()
            .map(|r| r.pid)
            .collect();
        (pids, side, snap.stda)
    };
    let (pids, mut side, stda) = run();
    assert_eq!(pids, [2, 2]);
    side.sort_unstable();
    assert_eq!(side, [(2, 1), (2, 2)], "thread 1 and thread 2 of PID 2");
    assert_eq!(run().2, stda);
}
