//! DosSysTrace: a program's own records in the run's STDA, with TRACE ON's
//! static selection (by major, then minors) honoured, and TRACEFMT
//! formatting them with the TFF of a TSF's @STATIC tracepoints.

mod common;

use kernel_sim::trace::TraceCommands;
use kernel_sim::{Outcome, Process, ProcessConfig};
use stda::{RecordFlags, Stda, tracefmt};

/// A logged record: major, minor, flags, data.
type Logged = (u8, u16, RecordFlags, Vec<u8>);

/// Runs SYSTRC16 with TRACE ON `statics` (None: no trace buffer at all);
/// returns the exit and the records (major, minor, flags, data).
fn run(statics: Option<&[&str]>) -> (Outcome, Vec<Logged>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    testprogs::systrc16().unwrap().write_to(dir.path()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "SYSTRC16.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    if let Some(ops) = statics {
        let commands = TraceCommands {
            traces: ops.iter().map(|s| s.to_string()).collect(),
            ..TraceCommands::default()
        };
        p.trace_commands(&commands).unwrap();
    }
    let outcome = p.run();
    let records = match p.system_trace_mut() {
        Some(t) => {
            let snap = t.buffer_mut().get_stda();
            Stda::parse(&snap.stda)
                .unwrap()
                .records()
                .into_iter()
                .map(|r| (r.major, r.minor, r.flags, r.data))
                .collect()
        }
        None => Vec::new(),
    };
    (outcome, records, dir)
}

#[test]
fn records_are_logged_only_for_the_majors_and_minors_trace_on_selected() {
    let msg = testprogs::systrc16::MESSAGE.to_vec();
    let (outcome, records, _) = run(None);
    assert_eq!(
        outcome,
        Outcome::Exited(150),
        "no trace buffer: ERROR_SYSTEM_TRACE"
    );
    assert!(records.is_empty());

    let (outcome, records, _) = run(Some(&[]));
    assert_eq!(outcome, Outcome::Exited(150), "nothing selected");
    assert!(records.is_empty());

    let (outcome, records, _) = run(Some(&["245(1)"]));
    assert_eq!(outcome, Outcome::Exited(0));
    let flags = RecordFlags::API | RecordFlags::PROTECT;
    assert_eq!(records, vec![(0xF5, 1, flags, msg.clone())]);

    let (outcome, records, _) = run(Some(&["0xF5", "246(1-3)"]));
    assert_eq!(outcome, Outcome::Exited(0));
    assert_eq!(
        records,
        vec![
            (0xF5, 1, flags, msg),
            (0xF5, 2, flags, Vec::new()),
            (0xF6, 1, flags, vec![0, 0, 0, 0]),
        ]
    );
    assert!(records.iter().all(|r| !r.2.contains(RecordFlags::DYNAMIC)));
}

#[test]
fn tracefmt_formats_static_records_with_the_tff_of_static_tracepoints() {
    let (_, records, dir) = run(Some(&["245"]));
    assert_eq!(records.len(), 2);
    std::fs::write(
        dir.path().join("STATIC.TSF"),
        "MAJOR=0xF5\n\
         TRACE MINOR=1, TP=@STATIC, DESC=\"SYSTRC16 static record\", FMT=\"text=%R%C\"\n\
         TRACE MINOR=2, TP=@STATIC, DESC=\"SYSTRC16 empty record\", FMT=\"(no data)\"\n",
    )
    .unwrap();
    let compiled = tdf::trcust::run(
        &["STATIC.TSF".to_string()],
        dir.path(),
        tdf::trcust::PathStyle::Dos,
    );
    assert_eq!(compiled.exit_code, 0, "{}", compiled.text());
    let (rules, problems) = tracefmt::Rules::load_dir(dir.path(), [0xF5]);
    assert!(problems.is_empty(), "{problems:?}");
    // Re-run to get the buffer itself for formatting.
    let mut cfg = ProcessConfig::new(dir.path(), "SYSTRC16.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    p.set_console(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
    );
    p.trace_commands(&TraceCommands {
        traces: vec!["245".into()],
        ..TraceCommands::default()
    })
    .unwrap();
    assert_eq!(p.run(), Outcome::Exited(0));
    let snap = p.system_trace_mut().unwrap().buffer_mut().get_stda();
    let text = tracefmt::format_stda(&Stda::parse(&snap.stda).unwrap(), &rules);
    assert!(text.contains("SYSTRC16 static record"), "{text}");
    assert!(text.contains("text=static record from SYSTRC16"), "{text}");
    assert!(text.contains("SYSTRC16 empty record"), "{text}");
    assert!(text.contains("CONTEXT=API:PROTECT"), "{text}");
    assert!(!text.contains("DYNAMIC"), "{text}");
}

#[test]
fn thirty_two_bit_code_logs_through_its_sixteen_bit_thunk() {
    let run32 = |statics: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        testprogs::systrc32().unwrap().write_to(dir.path()).unwrap();
        let mut cfg = ProcessConfig::new(dir.path(), "SYSTRC32.EXE");
        cfg.max_instructions = Some(1_000_000);
        let mut p = Process::new(cfg).unwrap();
        p.set_console(
            Box::new(std::io::sink()),
            Box::new(std::io::sink()),
            Box::new(std::io::empty()),
        );
        p.trace_commands(&TraceCommands {
            traces: statics.iter().map(|s| s.to_string()).collect(),
            ..TraceCommands::default()
        })
        .unwrap();
        let outcome = p.run();
        let snap = p.system_trace_mut().unwrap().buffer_mut().get_stda();
        let records: Vec<Logged> = Stda::parse(&snap.stda)
            .unwrap()
            .records()
            .into_iter()
            .map(|r| (r.major, r.minor, r.flags, r.data))
            .collect();
        (outcome, records)
    };
    let (outcome, records) = run32(&["0xF5"]);
    assert_eq!(outcome, Outcome::Exited(150));
    assert!(records.is_empty());
    let (outcome, records) = run32(&["0xF7(1)"]);
    assert_eq!(outcome, Outcome::Exited(0));
    assert_eq!(
        records,
        vec![(
            0xF7,
            1,
            RecordFlags::API | RecordFlags::PROTECT,
            testprogs::systrc32::MESSAGE.to_vec()
        )]
    );
}
