//! TNF probes in guest programs: discovery of TNF16's and TNF32's probe
//! tables, enabled probes recording typed arguments with the emulated
//! clock, &debug output, the cost of a disabled probe, and malformed
//! descriptors refused with the module and address.

mod common;

use kernel_sim::tnf::ProbeAction;
use kernel_sim::{ConsoleBuffer, Outcome, Process};
use testprogs::tnf::Probes;
use tnf::{ArgType, Endian, TnfFile, TnfWriter};

fn process(program: &testprogs::Program) -> (Process, ConsoleBuffer, tempfile::TempDir) {
    common::testprogs_process(program, 1_000_000)
}

/// Runs with every probe set to `action`; returns the outcome, the
/// console, the cycles and the trace file.
fn run(program: &testprogs::Program, action: ProbeAction) -> (Outcome, String, u64, Vec<u8>) {
    let (mut p, out, _dir) = process(program);
    let n = p.tnf_discover().map(|_| p.tnf_probes().len()).unwrap();
    for i in 0..n {
        p.tnf_set_action(i, action);
    }
    p.tnf_start(TnfWriter::new(128 * 1024, Endian::Little).unwrap());
    let o = p.run();
    let bytes = p.tnf_finish().unwrap().into_bytes();
    (o, out.text(), p.machine().cycles(), bytes)
}

const RECORD: ProbeAction = ProbeAction {
    record: true,
    debug: false,
};

#[test]
fn tnf32_probes_are_found_before_the_program_runs() {
    let (mut p, _out, _dir) = process(&testprogs::tnf32().unwrap());
    assert_eq!(p.tnf_discover().unwrap(), 0);
    let probes = p.tnf_probes();
    assert_eq!(probes.len(), 2);
    let inloop = &probes[0].desc;
    assert_eq!(
        inloop.attributes(),
        "name inloop;slots loop_count total_iterations ;keys cookie main loop;file cookie2.c;line 50;sunw%debug in the loop"
    );
    assert_eq!(inloop.args[0].0, ArgType::ULong);
    assert!(
        probes[0].object.ends_with("TNF32.EXE"),
        "{}",
        probes[0].object
    );
    assert!(!probes[0].bits16);
    let end = &probes[1];
    assert_eq!(
        end.desc.attributes(),
        "name end;slots node_struct ;keys cookie main end;file cookie2.c;line 41;sunw%debug exiting program"
    );
    assert_eq!(
        end.desc.args,
        [(ArgType::Record, "node_struct".to_string())]
    );
    assert_eq!(end.desc.records.len(), 1);
    assert_eq!(end.desc.records[0].name, "node_tnf");
    assert_eq!(
        end.desc.records[0].members,
        [
            (ArgType::Long, "cur_sum".to_string()),
            (ArgType::Long, "max_cnt".to_string())
        ]
    );
    assert_eq!(end.member_offsets, [vec![0, 4]]);
    // Reading again finds nothing new.
    assert_eq!(p.tnf_discover().unwrap(), 2);
    assert_eq!(p.tnf_probes().len(), 2);
}

#[test]
fn tnf32_records_the_cookie_loop() {
    let (o, text, _, bytes) = run(&testprogs::tnf32().unwrap(), RECORD);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    let file = TnfFile::parse(&bytes).unwrap();
    let dump = tnf::dump::cooked(&file, false).unwrap();
    let lines: Vec<&str> = dump.lines().collect();
    assert_eq!(lines.len(), 2 + 3 + 12 + 1, "{dump}");
    assert!(
        lines[5].ends_with("inloop                    loop_count: 0 total_iterations: 0"),
        "{dump}"
    );
    // Rounds of 5 and 7, as in the man page.
    assert!(
        lines[10].ends_with("loop_count: 0 total_iterations: 5"),
        "{dump}"
    );
    // The man page's end: a node_tnf record read through the structure's
    // address, its members at their offsets.
    assert!(
        lines[17].ends_with(
            "end                       node_struct: { type: node_tnf cur_sum: 9 max_cnt: 12 }"
        ),
        "{dump}"
    );
    assert!(lines[17].contains("    1     1          1   - "), "{dump}");
}

#[test]
fn tnf16_records_strings_frames_and_debug_output() {
    let action = ProbeAction {
        record: true,
        debug: true,
    };
    let (o, text, _, bytes) = run(&testprogs::tnf16().unwrap(), action);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    assert!(
        text.starts_with("probe start; sunw%debug \"starting up\"; program=\"TNF16\"; count=5;\n"),
        "{text}"
    );
    assert!(text.contains("probe step; i=3; where=0x1234;\n"), "{text}");
    assert!(
        text.ends_with(
            "probe done; sum=10;\nprobe summary; state={ type: tnf16_state sum=10; program=\"TNF16\"; };\n"
        ),
        "{text}"
    );
    let file = TnfFile::parse(&bytes).unwrap();
    let dump = tnf::dump::cooked(&file, true).unwrap();
    assert!(dump.contains("probe\t tnf_name: \"start\" tnf_string: \"keys tnf16 io;file tnf16.c;line 10;debug;sunw%debug 'starting up'\"\n"), "{dump}");
    assert!(
        dump.contains(" start                     program: \"TNF16\" count: 5\n"),
        "{dump}"
    );
    assert!(
        dump.contains(" step                      i: 4 where: 0x1234\n"),
        "{dump}"
    );
    assert!(
        dump.contains(" done                      sum: 0xa\n"),
        "-x prints unsigned in hex: {dump}"
    );
    // A record through a 16:16 pointer, with a 16:16 string member.
    assert!(
        dump.contains(
            " summary                   state: { type: tnf16_state sum: 0xa program: \"TNF16\" }\n"
        ),
        "{dump}"
    );
}

/// A disabled probe costs the guest no more than a call and a return:
/// the program with disabled probes against the same program without
/// probe sites, and with sites that call a `ret`.
#[test]
fn a_disabled_probe_costs_at_most_a_call_and_a_return() {
    for bits16 in [false, true] {
        let none = ProbeAction::default();
        let program = |p| testprogs::tnf_variant(bits16, p).unwrap();
        let (o, _, disabled, bytes) = run(&program(Probes::Tnf), none);
        assert_eq!(o, Outcome::Exited(0));
        let (_, _, nprobe, _) = run(&program(Probes::Nprobe), none);
        let (_, _, stub, _) = run(&program(Probes::Stub), none);
        let sites = if bits16 { 1 + 5 + 1 + 1 } else { 12 + 1 };
        let per_probe = (disabled - nprobe) as f64 / f64::from(sites);
        let call_ret = (stub - nprobe) as f64 / f64::from(sites);
        println!("bits16={bits16}: disabled probe {per_probe} cycles, call+ret {call_ret} cycles");
        assert!(
            disabled - nprobe <= stub - nprobe,
            "{per_probe} > {call_ret}"
        );
        assert!(disabled > nprobe);
        let file = TnfFile::parse(&bytes).unwrap();
        assert!(
            file.records()
                .iter()
                .all(|r| !matches!(r.kind, tnf::reader::RecordKind::Event(_)))
        );
    }
}

#[test]
fn malformed_descriptors_are_refused_with_module_and_address() {
    let program = testprogs::tnf32().unwrap();
    let list = program.symbol("TNF_PROBE_LIST").unwrap().clone();
    let (mut p, _out, _dir) = process(&program);
    let table = p
        .module("TNF32")
        .unwrap()
        .flat(list.object, list.offset)
        .unwrap();
    let mut desc = [0u8; 4];
    p.read_guest(table + 8, &mut desc).unwrap();
    let desc = u32::from_le_bytes(desc);

    // A bad argument count.
    p.write_guest(desc + 28, &[9]).unwrap();
    let e = p.tnf_discover().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "TNF32: TNF probe table at {:#010x}: 9 arguments (at most 5)",
            desc + 28
        )
    );

    // A name that is not a C identifier.
    let (mut p, _out, _dir) = process(&program);
    p.write_guest(desc + 28, &[2]).unwrap();
    let mut name = [0u8; 4];
    p.read_guest(desc + 8, &mut name).unwrap();
    p.write_guest(u32::from_le_bytes(name), b"9x").unwrap();
    let e = p.tnf_discover().unwrap_err();
    assert!(e.to_string().contains("is not a C identifier"), "{e}");

    // A count beyond the limit, and a bad magic.
    let (mut p, _out, _dir) = process(&program);
    p.write_guest(table + 4, &100_000u32.to_le_bytes()).unwrap();
    assert!(
        p.tnf_discover()
            .unwrap_err()
            .to_string()
            .contains("100000 probes")
    );
    let (mut p, _out, _dir) = process(&program);
    p.write_guest(table, b"XXXX").unwrap();
    assert!(p.tnf_discover().unwrap_err().to_string().contains("'TNFL'"));

    // The end probe's record type: a bad magic, a nested record, a member
    // offset out of range, no record types (flag 2 clear), unknown flags.
    let (mut p, _out, _dir) = process(&program);
    let mut end = [0u8; 4];
    p.read_guest(table + 12, &mut end).unwrap();
    let end = u32::from_le_bytes(end);
    let mut rt = [0u8; 4];
    p.read_guest(end + 92, &mut rt).unwrap();
    let rt = u32::from_le_bytes(rt);
    let refused = |patch: &[(u32, &[u8])], want: &str, at: u32| {
        let (mut p, _out, _dir) = process(&program);
        for (addr, bytes) in patch {
            p.write_guest(*addr, bytes).unwrap();
        }
        let e = p.tnf_discover().unwrap_err();
        assert_eq!(e.address, at, "{e}");
        assert!(e.to_string().contains(want), "{e} lacks {want}");
    };
    refused(&[(rt, b"XXXX")], "'TNFR'", rt);
    refused(&[(rt + 12, &[10])], "member type code 10", rt + 12);
    refused(&[(rt + 8, &[6])], "6 record members", rt + 8);
    refused(
        &[(rt + 16, &0x10000u32.to_le_bytes())],
        "beyond 64 KB",
        rt + 16,
    );
    refused(&[(end + 29, &[0])], "without record types", end + 32);
    refused(&[(end + 29, &[0x82])], "unknown bits", end + 29);
    refused(&[(end + 92, &[0, 0, 0, 0])], "not readable", 0);
}

/// A DLL loaded by DosLoadModule while the program runs: its probe is
/// found at its first hit and the probe policy (prex's history) decides
/// what it does; the program's own probe keeps the action it was given.
#[test]
fn probes_of_a_dll_loaded_later_get_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tnfld32().unwrap().write_to(dir.path()).unwrap();
    testprogs::tnfdll32().unwrap().write_to(dir.path()).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "TNFLD32.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    assert_eq!(p.tnf_discover().unwrap(), 0);
    let names: Vec<&str> = p
        .tnf_probes()
        .iter()
        .map(|g| g.desc.name.as_str())
        .collect();
    assert_eq!(
        names,
        ["loaded", "types_a", "types_b"],
        "the DLL is not loaded yet"
    );
    let asked = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = asked.clone();
    p.tnf_set_policy(Box::new(move |g| {
        seen.borrow_mut().push(g.desc.name.clone());
        ProbeAction {
            record: g.desc.keys.split(' ').any(|k| k == "tick"),
            debug: false,
        }
    }));
    p.tnf_start(TnfWriter::new(128 * 1024, Endian::Little).unwrap());
    assert_eq!(p.run(), Outcome::Exited(0));
    assert_eq!(*asked.borrow(), ["tick"], "asked once, for the new probe");
    let probes = p.tnf_probes();
    assert_eq!(probes.len(), 4);
    assert!(
        probes[3].object.ends_with("TNFDLL32.DLL"),
        "{}",
        probes[3].object
    );
    let bytes = p.tnf_finish().unwrap().into_bytes();
    let dump = tnf::dump::cooked(&TnfFile::parse(&bytes).unwrap(), false).unwrap();
    let events: Vec<&str> = dump.lines().skip(4).map(|l| &l[61..]).collect();
    assert_eq!(
        events,
        [
            "tick                      n: 0 module: \"TNFDLL32\"",
            "tick                      n: 1 module: \"TNFDLL32\"",
            "tick                      n: 2 module: \"TNFDLL32\"",
        ],
        "{dump}"
    );
}

/// TNFLD32 with a number N calls Tick N times (the bench's workload).
#[test]
fn tnfld32_takes_a_count() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tnfld32().unwrap().write_to(dir.path()).unwrap();
    testprogs::tnfdll32().unwrap().write_to(dir.path()).unwrap();
    for (arg, want) in [("0", 0), ("12", 12)] {
        let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "TNFLD32.EXE");
        cfg.args = vec![arg.to_string()];
        cfg.max_instructions = Some(1_000_000);
        let mut p = Process::new(cfg).unwrap();
        p.tnf_set_policy(Box::new(|_| RECORD));
        p.tnf_start(TnfWriter::new(128 * 1024, Endian::Little).unwrap());
        assert_eq!(p.run(), Outcome::Exited(0), "{arg}");
        let bytes = p.tnf_finish().unwrap().into_bytes();
        let file = TnfFile::parse(&bytes).unwrap();
        let ticks = tnf::dump::cooked(&file, false)
            .unwrap()
            .matches(" tick      ")
            .count();
        assert_eq!(ticks, want, "{arg}");
    }
}

/// Every predefined TNF type read from guest data as its C type: 32-bit
/// int/long, 64-bit long long, float and double, a pointer, a string, and
/// a constant.
#[test]
fn every_tnf_type_is_read_from_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tnfld32().unwrap().write_to(dir.path()).unwrap();
    testprogs::tnfdll32().unwrap().write_to(dir.path()).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "TNFLD32.EXE");
    cfg.args = vec!["0".into()];
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    p.tnf_discover().unwrap();
    for i in 0..p.tnf_probes().len() {
        p.tnf_set_action(i, RECORD);
    }
    p.tnf_start(TnfWriter::new(128 * 1024, Endian::Little).unwrap());
    assert_eq!(p.run(), Outcome::Exited(0));
    let bytes = p.tnf_finish().unwrap().into_bytes();
    let dump = tnf::dump::cooked(&TnfFile::parse(&bytes).unwrap(), false).unwrap();
    let data: Vec<&str> = dump
        .lines()
        .filter(|l| l.get(61..67) == Some("types_"))
        .map(|l| &l[87..])
        .collect();
    assert_eq!(data.join("\n"), testprogs::tnf::TNFLD32_TYPES, "{dump}");
    let types: Vec<ArgType> = p.tnf_probes()[1..3]
        .iter()
        .flat_map(|g| g.desc.args.iter().map(|a| a.0))
        .collect();
    let mut all = ArgType::ALL.to_vec();
    all.sort();
    let mut got = types.clone();
    got.sort();
    assert_eq!(got, all, "one argument of each type");
}

/// TNF in a program with two threads: each event carries its thread's ID
/// (the schedule records' tid and lwpid), both threads' events are in one
/// file in time order, and the system probes record the switches between
/// the threads.
#[test]
fn events_carry_their_thread_and_switches_are_recorded() {
    let (mut p, _out, _dir) = process(&testprogs::tnfmt32().unwrap());
    p.tnf_discover().unwrap();
    for i in 0..p.tnf_probes().len() {
        p.tnf_set_action(i, RECORD);
    }
    let mut record = [false; kernel_sim::tnf::SYSTEM_PROBES];
    record[kernel_sim::tnf::THREAD_SWITCH] = true;
    p.tnf_kernel_control(&kernel_sim::tnf::KernelControl {
        buffer: Some(256 * 1024),
        tracing: true,
        filter: None,
        record,
    })
    .unwrap();
    p.tnf_start(TnfWriter::new(128 * 1024, Endian::Little).unwrap());
    assert_eq!(p.run(), Outcome::Exited(0));
    let bytes = p.tnf_finish().unwrap().into_bytes();
    let dump = tnf::dump::cooked(&TnfFile::parse(&bytes).unwrap(), false).unwrap();
    // (lwpid, tid, probe and data) of each event.
    let events: Vec<String> = dump
        .lines()
        .skip(5)
        .map(|l| {
            format!(
                "{} {} {}",
                l[40..45].trim(),
                l[46..56].trim(),
                l[61..].trim_end()
            )
        })
        .collect();
    let want_main: Vec<String> = (0..testprogs::tnf::TNFMT32_ROUNDS)
        .map(|i| format!("1 1 main_step                 i: {i}"))
        .collect();
    let want_worker: Vec<String> = (0..testprogs::tnf::TNFMT32_ROUNDS)
        .map(|i| format!("2 2 worker_step               i: {i} param: 7"))
        .collect();
    let of = |tid: &str| {
        events
            .iter()
            .filter(|e| e.starts_with(tid))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(of("1 1 "), want_main, "{dump}");
    assert_eq!(of("2 2 "), want_worker, "{dump}");
    // The threads take turns at each sleep: the events interleave.
    assert!(events.windows(2).any(|w| w[0][..2] != w[1][..2]), "{dump}");
    let kernel = p.tnf_kernel_buffer().unwrap().to_vec();
    let kdump = tnf::dump::cooked(&TnfFile::parse(&kernel).unwrap(), false).unwrap();
    assert!(
        kdump.contains(" thread_switch             from: 0 to: 1\n"),
        "{kdump}"
    );
    assert!(
        kdump.contains(" thread_switch             from: 1 to: 2\n"),
        "{kdump}"
    );
    assert!(
        kdump.contains(" thread_switch             from: 2 to: 1\n"),
        "{kdump}"
    );
}

/// A string argument longer than 255 characters is logged cut to 255, as
/// TNF_STRING_LIMIT cuts it (not dropped).
#[test]
fn long_strings_are_cut_at_255() {
    let dir = tempfile::tempdir().unwrap();
    let program = testprogs::tnfld32().unwrap();
    program.write_to(dir.path()).unwrap();
    testprogs::tnfdll32().unwrap().write_to(dir.path()).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "TNFLD32.EXE");
    cfg.args = vec!["0".into()];
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    p.tnf_discover().unwrap();
    for i in 0..p.tnf_probes().len() {
        p.tnf_set_action(i, RECORD);
    }
    // types_b's string, made 300 characters with no NUL (what follows it,
    // the probe table, is read already).
    let sym = program.symbol("v_string").unwrap().clone();
    let at = p
        .module("TNFLD32")
        .unwrap()
        .flat(sym.object, sym.offset)
        .unwrap();
    p.write_guest(at, &[b'x'; 300]).unwrap();
    p.tnf_start(TnfWriter::new(128 * 1024, Endian::Little).unwrap());
    assert_eq!(p.run(), Outcome::Exited(0));
    let bytes = p.tnf_finish().unwrap().into_bytes();
    let dump = tnf::dump::cooked(&TnfFile::parse(&bytes).unwrap(), false).unwrap();
    let want = format!(" s: \"{}\" ul: 42\n", "x".repeat(255));
    assert!(dump.contains(&want), "{dump}");
}
