//! The always-on trace table and CPTRAP in running processes: the entry
//! counts per type, selection by typenum, the virtual machine interface
//! (X'3E', data cut to 264), CP interface zaps (X'3F') beside an OS/2
//! trace that stays byte-identical, and loss through a small transfer
//! buffer.

mod common;

use cptrap::{CptrapFile, Record, Selection, TypeNum};
use kernel_sim::systable::{CptrapConfig, Zap};
use kernel_sim::{ConsoleBuffer, Outcome, Process};
use stda::StdaFormat;

fn process(program: &testprogs::Program) -> (tempfile::TempDir, Process, ConsoleBuffer) {
    let (p, out, dir) = common::testprogs_process(program, 50_000_000);
    (dir, p, out)
}

fn selection(words: &str) -> Selection {
    Selection::parse(&words.split_whitespace().collect::<Vec<_>>()).unwrap()
}

/// Runs CPTRAP32 under CPTRAP with `cfg`; returns the file's records and
/// the process.
fn run_cptrap32(cfg: &CptrapConfig) -> (Vec<Record>, Process) {
    let program = testprogs::cptrap32().unwrap();
    let (_dir, mut p, out) = process(&program);
    p.cptrap_start(cfg).unwrap();
    assert_eq!(p.run(), Outcome::Exited(0), "{}", out.text());
    assert_eq!(out.text().as_bytes(), testprogs::cptrap32::MESSAGE);
    let result = p.cptrap_finish().unwrap();
    let file = CptrapFile::parse(&result.file).unwrap();
    let records = file.records().iter().map(|r| r.record.clone()).collect();
    (records, p)
}

const MAPPED: [TypeNum; 9] = [
    TypeNum::SCHEDULE,
    TypeNum::SEM_WAIT,
    TypeNum::API,
    TypeNum::EXCEPTION,
    TypeNum::IO_DONE,
    TypeNum::ALLOC,
    TypeNum::FREE,
    TypeNum::DISPATCH,
    TypeNum::IO_START,
];

#[test]
fn the_table_counts_each_kind_of_event_and_cptrap_selects_by_typenum() {
    let (all, p) = run_cptrap32(&CptrapConfig::new(Selection::all()));
    let table = p.trace_table();
    // CPTRAPVM x3, DosSetExceptionHandler, DosUnsetExceptionHandler,
    // DosAllocMem, DosFreeMem, DosWrite, DosSleep, DosCreateEventSem,
    // DosWaitEventSem, DosCloseEventSem (DosExit ends the run).
    let expected = [
        (TypeNum::API, 12),
        (TypeNum::SCHEDULE, 1),
        (TypeNum::SEM_WAIT, 1),
        (TypeNum::EXCEPTION, 1),
        (TypeNum::IO_START, 1),
        (TypeNum::IO_DONE, 1),
        (TypeNum::ALLOC, 1),
        (TypeNum::FREE, 1),
        (TypeNum::DISPATCH, 1),
    ];
    for (t, n) in expected {
        assert_eq!(table.count(t), n, "{}", t.name());
        let in_file = all.iter().filter(|r| r.typenum() == t).count() as u64;
        assert_eq!(in_file, n, "{} in the file", t.name());
    }
    for t in MAPPED {
        let (only, _) = run_cptrap32(&CptrapConfig::new(selection(&format!("TYPE {:02X}", t.0))));
        assert!(!only.is_empty(), "{}", t.name());
        assert!(
            only.iter().all(|r| r.typenum() == t),
            "TYPE {:02X}: {only:?}",
            t.0
        );
        assert_eq!(only.len() as u64, p.trace_table().count(t), "{}", t.name());
    }
}

#[test]
fn the_virtual_machine_interface_records_three_codes_and_cuts_at_264() {
    let (records, _) = run_cptrap32(&CptrapConfig::new(selection("TYPE 3E")));
    let vm: Vec<(u16, Vec<u8>)> = records
        .iter()
        .filter_map(|r| match r {
            Record::Interface { record, .. } => Some((record.code, record.data().to_vec())),
            _ => None,
        })
        .collect();
    let pattern = testprogs::cptrap32::vm_pattern;
    assert_eq!(
        vm,
        vec![
            (1, testprogs::cptrap32::VM_DATA8.to_vec()),
            (2, pattern(264)),
            (3, pattern(264)),
        ]
    );
    let (codes, _) = run_cptrap32(&CptrapConfig::new(selection("TYPE 3E CODE 2")));
    assert_eq!(codes.len(), 1);
}

#[test]
fn with_cptrap_off_the_interface_returns_and_the_table_still_counts() {
    let program = testprogs::cptrap32().unwrap();
    let (_dir, mut p, _) = process(&program);
    assert_eq!(p.run(), Outcome::Exited(0));
    assert!(p.cptrap_finish().is_none());
    assert_eq!(p.trace_table().count(TypeNum::API), 12);
}

/// LOOP32 with its trace program applied, and optionally a zap on the
/// loop's routine: the exit, the STDA, and the CPTRAP records.
fn loop32(
    zap: Option<&str>,
    transfer_blocks: usize,
    rate: u64,
) -> (Outcome, Vec<u8>, Option<Vec<Record>>, u64) {
    let program = testprogs::loop32().unwrap();
    let (_dir, mut p, _) = process(&program);
    let file = rpn_vm::parse("LOOP32.RPN", &program.rpn).unwrap();
    p.trace_start(StdaFormat::New, 63).unwrap();
    p.trace_apply("LOOP32", &file, None, None).unwrap();
    if let Some(spec) = zap {
        let mut cfg = CptrapConfig::new(selection("TYPE 3F"));
        cfg.zaps = vec![Zap::parse(spec).unwrap()];
        cfg.transfer_blocks = transfer_blocks;
        cfg.blocks_per_second = rate;
        p.cptrap_start(&cfg).unwrap();
    }
    let outcome = p.run();
    let stda = p.system_trace_mut().unwrap().buffer_mut().get_stda().stda;
    let result = p.cptrap_finish();
    let lost = result.as_ref().map_or(0, |r| r.stats.lost_records);
    let records = result.map(|r| {
        CptrapFile::parse(&r.file)
            .unwrap()
            .records()
            .iter()
            .map(|x| x.record.clone())
            .collect()
    });
    (outcome, stda, records, lost)
}

#[test]
fn a_cp_interface_zap_records_every_call_and_changes_nothing_else() {
    let step = testprogs::loop32().unwrap().symbol("Step").unwrap().clone();
    let spec = format!("LOOP32:1:{:#x},9,ESP+4,4", step.offset);
    let (plain, plain_stda, _, _) = loop32(None, 16, 1000);
    let (zapped, zapped_stda, records, lost) = loop32(Some(&spec), 16, 1_000_000);
    assert_eq!(plain, zapped);
    assert!(matches!(plain, Outcome::Exited(0)), "{plain}");
    assert!(
        plain_stda == zapped_stda,
        "the OS/2 trace is unchanged by the zap"
    );
    assert_eq!(lost, 0);
    let records = records.unwrap();
    assert_eq!(records.len(), 1000, "one record per call of Step");
    for (i, r) in records.iter().enumerate() {
        let Record::Interface { record: data, .. } = r else {
            panic!("not an interface record: {r:?}")
        };
        assert_eq!(data.code, 9);
        assert_eq!(data.header()[0], 0x3F);
        // Step's argument is the count of steps left, 1000 down to 1.
        assert_eq!(data.data(), (1000 - i as u32).to_le_bytes());
    }
}

#[test]
fn a_small_transfer_buffer_loses_records_counts_them_and_marks_the_place() {
    let step = testprogs::loop32().unwrap().symbol("Step").unwrap().clone();
    let spec = format!("LOOP32:1:{:#x},9,ESP+4,264", step.offset);
    let (outcome, _, records, lost) = loop32(Some(&spec), 1, 1);
    assert!(matches!(outcome, Outcome::Exited(0)), "{outcome}");
    let records = records.unwrap();
    assert!(lost > 0, "records were lost");
    let marks = records
        .iter()
        .filter(|r| r.typenum() == TypeNum::DATA_LOST)
        .count();
    assert!(marks >= 1, "a data-lost record marks the hole");
    let kept = records
        .iter()
        .filter(|r| r.typenum() == TypeNum::CP_INTERFACE)
        .count() as u64;
    assert_eq!(
        kept + lost,
        1000,
        "every call is either kept or counted lost"
    );
}
