//! Tracing set up before the run sees the DLL initialization routines:
//! `Process::new` only queues them, so TRACE ON / DTRACE APPLY given
//! between it and `Process::run` put their tracepoints into a DLL before
//! its `DLLINIT` (NE) or `_DLL_InitTerm` (LX) runs, as OS/2's TRACE ON
//! does when it precedes the program.

use kernel_sim::trace::TraceCommands;
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};
use stda::Stda;

/// The DLL and its caller in a fresh sandbox, loaded, with the DLL's
/// trace program file applied.
fn traced(dll: &testprogs::Program, exe: &testprogs::Program) -> (tempfile::TempDir, Process) {
    let dir = tempfile::tempdir().unwrap();
    dll.write_to(dir.path()).unwrap();
    exe.write_to(dir.path()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), exe.file_name);
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = ConsoleBuffer::new();
    p.set_console(
        Box::new(out.clone()),
        Box::new(out),
        Box::new(std::io::empty()),
    );
    let rpn = dir.path().join(dll.rpn_file_name());
    let commands = TraceCommands {
        applies: vec![rpn.to_string_lossy().into_owned()],
        ..TraceCommands::default()
    };
    p.trace_commands(&commands).unwrap();
    (dir, p)
}

/// A buffer record as (major, minor, data).
type Record = (u8, u16, Vec<u8>);

/// The hits of each tracepoint of DTO 0 and the buffer's records.
fn hits_and_records(p: &mut Process) -> (Vec<u64>, Vec<Record>) {
    let trace = p.system_trace_mut().unwrap();
    let hits = trace.runtime().dtos()[0]
        .tracepoints
        .iter()
        .map(|t| t.hits)
        .collect();
    let snap = trace.buffer_mut().get_stda();
    let records = Stda::parse(&snap.stda)
        .unwrap()
        .records()
        .iter()
        .map(|r| (r.major, r.minor, r.data.clone()))
        .collect();
    (hits, records)
}

#[test]
fn a_tracepoint_on_dllinit_fires_before_the_program_starts() {
    let dll = testprogs::tpdll16().unwrap();
    let (_dir, mut p) = traced(&dll, &testprogs::dllcal16().unwrap());
    let handle = p.module("TPDLL16").unwrap().handle;
    let ds = p.module("TPDLL16").unwrap().object(2).unwrap().selector;
    assert_eq!(p.run(), Outcome::Exited(0));
    let (hits, records) = hits_and_records(&mut p);
    assert_eq!(hits, [1, 1, 1, 1], "DLLINIT, ADDNUMS, PUTMSG, GETCOUNT");
    // DLLINIT logs AX (the module handle OS/2 1.x passes) and DS (its
    // automatic data, loaded just before), as words; it is the first
    // record, before anything DLLCAL16 calls.
    let (major, minor, data) = &records[0];
    assert_eq!((*major, *minor), (0xC2, 1));
    let mut want = handle.to_le_bytes().to_vec();
    want.extend(ds.to_le_bytes());
    assert_eq!(data, &want);
    assert_eq!(records.len(), 4);
}

#[test]
fn a_tracepoint_on_dll_initterm_sees_its_system_arguments() {
    let dll = testprogs::tpdll32().unwrap();
    let (_dir, mut p) = traced(&dll, &testprogs::dllcal32().unwrap());
    let handle = u32::from(p.module("TPDLL32").unwrap().handle);
    assert_eq!(p.run(), Outcome::Exited(0));
    let (hits, records) = hits_and_records(&mut p);
    // Initialization, then (global) termination as the process ends.
    assert_eq!(hits[0], 2, "_DLL_InitTerm ran twice, traced: {hits:?}");
    let (major, minor, data) = &records[0];
    assert_eq!((*major, *minor), (0xC3, 1));
    // 12 bytes of memory at ESP (a 3-byte length header first): _System
    // (hmod, flag), so the return address, the handle, 0 (init).
    assert_eq!(data[..3], [0, 12, 0]);
    assert_eq!(data[7..11], handle.to_le_bytes());
    assert_eq!(data[11..15], 0u32.to_le_bytes());
    let term = records
        .iter()
        .rfind(|r| (r.0, r.1) == (0xC3, 1))
        .expect("the termination's record");
    assert_eq!(term.2[7..11], handle.to_le_bytes());
    assert_eq!(term.2[11..15], 1u32.to_le_bytes(), "1: termination");
}

#[test]
fn an_instruction_limit_inside_an_init_routine_ends_the_run_as_such() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tpdll16().unwrap().write_to(dir.path()).unwrap();
    let exe = testprogs::dllcal16().unwrap();
    exe.write_to(dir.path()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), exe.file_name);
    cfg.max_instructions = Some(2);
    let mut p = Process::new(cfg).unwrap();
    assert_eq!(p.run(), Outcome::InstructionLimit(2));
}
