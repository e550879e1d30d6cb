//! The entries issue 20 moved to the ordinals the toolkit's import
//! libraries give, called by ordinal from testprogs-built modules: each
//! does its job at its new ordinal, and the ordinals they left stop the
//! program with the right name.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

fn run(program: &testprogs::Program) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    program.write_to(dir.path()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), program.file_name);
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    p.run()
}

/// DosAllocHuge at 40, DosGetHugeShift at 41, DosReallocHuge at 42,
/// DosGetModHandle at 47, DosError at 120, VioGetConfig at 46: ORDS16
/// exits 0 when each did its job (see `testprogs::ords` for the checks).
#[test]
fn moved_entries_work_at_their_ordinals() {
    let o = run(&testprogs::ords16().unwrap());
    assert_eq!(o, Outcome::Exited(0), "ORDS16's failed check: {o}");
}

/// The ordinals that held the wrong entries: calling one not implemented
/// yet stops with the libraries' name (DOSCALLS.35 DosAllocShrSeg and
/// DOSCALLS.7 DosExitList, once here, are implemented now: tests/syssem.rs;
/// so is VIOCALLS.30 VioReadCharStr: tests/vio_popup.rs).
#[test]
fn vacated_ordinals_stop_with_their_real_names() {
    let o = run(&testprogs::call16("DOSCALLS", 12, "DOSPTRACE").unwrap());
    assert_eq!(o.to_string(), "unimplemented DOSCALLS.12 (DOSPTRACE)");
}
