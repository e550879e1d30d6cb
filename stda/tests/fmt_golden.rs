//! Golden tests of the FMT engine: every control, with FMT strings taken
//! from the table of real OS/2 system tracepoints
//! (shared/reference/system-tracepoints.tsv) and from the documents'
//! examples, compiled as TRCUST stores them.

use stda::fmt::{FormatInput, PreparedRule, compile_fmt, format_record, hex_dump};
use stda::tff::TffRecord;

const TSV: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/reference/system-tracepoints.tsv"
));

/// The rule the table gives for (major, minor): DESC and the FMT column.
fn system_rule(major: u16, minor: u16) -> TffRecord {
    let (maj, min) = (format!("0x{major:04X}"), format!("0x{minor:04X}"));
    let row = TSV
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|c| c.len() > 8 && c[1] == maj && c[3] == min)
        .unwrap_or_else(|| panic!("no row {maj} {min}"));
    let fmt = row[8].trim_matches('"').replace("\"\"", "\"");
    TffRecord {
        minor,
        desc: row[4].as_bytes().to_vec(),
        fmts: vec![compile_fmt(fmt.as_bytes())],
    }
}

fn doc_rule(fmts: &[&str]) -> TffRecord {
    TffRecord {
        minor: 0x81,
        desc: b"doc example".to_vec(),
        fmts: fmts.iter().map(|f| compile_fmt(f.as_bytes())).collect(),
    }
}

/// The lines of `format_record`, checked against what the prepared rule
/// TRACEFMT uses writes.
fn run(rule: &TffRecord, major: u16, dynamic: bool, data: &[u8]) -> Vec<String> {
    let input = FormatInput {
        major,
        minor: rule.minor,
        dynamic,
        data,
    };
    let lines = format_record(rule, &input);
    let mut out = String::new();
    PreparedRule::new(rule).write(&input, "> ", &mut out);
    let want: String = lines.iter().map(|l| format!("> {l}\n")).collect();
    assert_eq!(out, want, "the prepared rule writes the same lines");
    lines
}

fn dw(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

#[test]
fn d_and_q_machine_exception() {
    let rule = system_rule(0x0003, 0x0001);
    let mut data = Vec::new();
    data.extend(dw(0x1234));
    data.extend(dw(0x5B));
    data.extend(dw(0x1A2B4));
    data.extend(dw(0x10246));
    assert_eq!(
        run(&rule, 3, false, &data),
        [
            "(OS) Machine Exception 00 - Divide by 0",
            "Error Code = 0000 1234, CS:EIP = 0000005B 0001A2B4, EFlags = 0001 0246"
        ]
    );
}

#[test]
fn x_y_b_w_kbd_deregister() {
    let rule = system_rule(0x0018, 0x0104);
    assert_eq!(
        run(&rule, 0x18, false, &[2, 1, 5, 0])[1],
        "Major = 0018 Minor = 0104 ProcStatus = 02 ProcType = 01 SessionID = 0005"
    );
}

#[test]
fn a_and_bare_s_with_its_prefix_win_register_class() {
    let rule = system_rule(0x00C2, 0x0064);
    let mut data = vec![4, 0];
    data.extend(dw(1));
    data.extend(dw(0x005F_1234));
    data.extend(dw(0x0067_0010));
    data.extend([0, 5, 0]);
    data.extend(b"MyWnd");
    assert_eq!(
        run(&rule, 0xC2, false, &data)[1],
        "CBWINDOWDATA = 0004, FLSTYLE = 0000 0001 PFNWNDPROC = 005F:1234, \
         PSZCLASSNAME = 0067:0010 PSZCLASSNAME -> MyWnd"
    );
}

#[test]
fn s_and_f_dos_open() {
    let rule = system_rule(0x0005, 0x0100);
    let mut data = vec![0, 13, 0];
    data.extend(b"C:\\CONFIG.SYS");
    data.extend([0x12, 0, 0x01, 0, 0x20, 0]);
    data.extend(dw(0x400));
    let want = "Filename = C:\\CONFIG.SYS Mode = 0012 Control = 0001 Attrib = 0020 Size = 00000400";
    assert_eq!(run(&rule, 5, false, &data)[1], want);
    // A static string may also be NUL-terminated (no prefix).
    let mut data = b"C:\\CONFIG.SYS\0".to_vec();
    data.extend([0x12, 0, 0x01, 0, 0x20, 0]);
    data.extend(dw(0x400));
    assert_eq!(run(&rule, 5, false, &data)[1], want);
}

#[test]
fn lower_case_r_w_vio_get_mode_static() {
    let rule = system_rule(0x0018, 0x0010);
    let data = [0, 0, 0x0C, 0, 1, 0, 4, 0];
    assert_eq!(
        run(&rule, 0x18, false, &data)[1],
        "Handle = 0000 ModeData = 000C 0001 0004"
    );
    // An odd byte left over shows plainly.
    let data = [0, 0, 0x0C, 0, 1, 0, 7];
    assert_eq!(
        run(&rule, 0x18, false, &data)[1],
        "Handle = 0000 ModeData = 000C 0001 <partial: 07>"
    );
}

#[test]
fn r_in_a_dynamic_record_reads_the_prefix() {
    let rule = doc_rule(&[
        "log a variable number of words from memory = %R%W",
        "after = %B",
    ]);
    let data = [0, 4, 0, 1, 0, 4, 0, 0xEE];
    assert_eq!(
        run(&rule, 0xC5, true, &data)[1..],
        [
            "log a variable number of words from memory = 0001 0004",
            "after = EE"
        ]
    );
}

#[test]
fn r_b_vio_read_char_str() {
    let rule = system_rule(0x0018, 0x001F);
    let data = [1, 0, 2, 0, 3, 0, 2, 0, b'H', b'I'];
    assert_eq!(
        run(&rule, 0x18, false, &data)[1],
        "Handle = 0001 Column = 0002 Row = 0003 Length = 0002 CharStr = 48 49"
    );
}

#[test]
fn i_dos_peek_queue_and_the_documents_example() {
    let rule = system_rule(0x0016, 0x0004);
    let mut data = vec![1, 0, 2, 0];
    data.extend(dw(3));
    data.extend([1, 0xFF]);
    assert_eq!(
        run(&rule, 0x16, false, &data)[1],
        "Handle=0001 Element Code=0002 Semaphore Handle=0000 0003 No Wait Flag=01"
    );
    let rule = doc_rule(&[
        "ignore ten bytes %I10 here",
        "       and two more %I2 here%B",
    ]);
    let data = [0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x42];
    assert_eq!(
        run(&rule, 0xC5, false, &data)[1..],
        ["ignore ten bytes here", "       and two more here42"]
    );
}

/// Dos32RaiseException: `Exception Number=%P %F` (TRCUST drops the space
/// after %P), then more %F from the same item.
#[test]
fn p_prefix_and_fault_tokens_dos32_raise_exception() {
    let rule = system_rule(0x0010, 0x0023);
    let mut data = vec![0, 36, 0];
    for v in [0xC000_0005u32, 0, 0, 0x1A2B4, 2, 0, 0x3F000, 9, 9] {
        data.extend(dw(v));
    }
    let line = &run(&rule, 0x10, true, &data)[1];
    assert!(
        line.starts_with(
            "Exception Report Record: Exception Number=C0000005 Handler Flags=00000000 \
             Nested Exception Report Record=00000000 Exception Address=0001A2B4 \
             Parameter Count=00000002 P1=00000000 P2=0003F000 P3=00000009 P4=00000009 Note:"
        ),
        "{line}"
    );
    // The item was not logged: page not present at 0x0003F000.
    let data = [0xFD, 4, 0, 0x00, 0xF0, 0x03, 0x00];
    let line = &run(&rule, 0x10, true, &data)[1];
    assert!(
        line.starts_with(
            "Exception Report Record: Exception Number=<page not present at 0x0003F000> \
             Handler Flags=<no data> Nested"
        ),
        "{line}"
    );
    let rule = doc_rule(&["a = %P%W", "b = %P%S"]);
    assert_eq!(
        run(&rule, 1, true, &[0xFF, 4, 0, 0x10, 0, 0x1F, 0])[1..],
        ["a = <invalid selector at 001F:0010>", "b = <no data>"]
    );
    assert_eq!(
        run(&rule, 1, true, &[0xFE, 4, 0, 0, 0, 0x27, 0])[1],
        "a = <selector not present at 0027:0000>"
    );
}

#[test]
fn p_items_are_skipped_by_their_length_and_s_takes_the_item() {
    let rule = doc_rule(&["w = %P%W", "s = %P%S", "px = %PB"]);
    let mut data = vec![0, 4, 0, 0x34, 0x12, 0xAA, 0xAA];
    data.extend([1, 5, 0]);
    data.extend(b"hello");
    data.extend([0, 1, 0, 0xC2]);
    assert_eq!(
        run(&rule, 1, true, &data)[1..],
        ["w = 1234", "s = hello", "px = C2"]
    );
}

#[test]
fn u_win_add_program_and_the_documents_example() {
    let rule = system_rule(0x00C0, 0x0012);
    let mut data = Vec::new();
    for v in [0x0001_0002u32, 0x0003_0004, 0x0005_0006] {
        data.extend(dw(v));
    }
    data.extend([7, 0, b'a', b'b', 0]);
    assert_eq!(
        run(&rule, 0xC0, false, &data)[1],
        "GrpHandle = 0001:0002, BufPtr = 0003:0004, hab = 0005:0006 progt -> 0007, \
         Title/Icon/Exec = 61 62 00"
    );
    let rule = doc_rule(&["garbage = %U"]);
    let data = [0, 0, 0, 3, 0xC2, 0xC1, 0xC4, 0xFF, 4, 0, 9, 0xC0, 0x18];
    assert_eq!(
        run(&rule, 0xC2, false, &data)[1],
        "garbage = 00 00 00 03 c2 c1 c4 ff 04 00 09 c0 18"
    );
}

#[test]
fn q_w_d_disk_driver_read() {
    let rule = system_rule(0x0007, 0x0001);
    let mut data = vec![0x80, 0];
    data.extend(dw(0x10));
    data.extend(dw(0));
    data.extend([8, 0]);
    data.extend(dw(0x00B7_0001));
    assert_eq!(
        run(&rule, 7, false, &data)[1],
        "Drive ID=0080 Relative Block Addr=00000010 00000000 Number of Sectors=0008 Buffer Addr=00B7 0001"
    );
}

#[test]
fn c_and_the_documents_examples() {
    let rule = doc_rule(&[
        "%C|%c",
        "major code = %X",
        "minor code = %Y",
        "segmented address in SS:SP = %A",
        "double word EAX = %D",
        "flat address EAX = %F",
    ]);
    let mut data = vec![b'A', 1];
    data.extend(dw(0x00B7_0001));
    data.extend(dw(0x4B2C));
    data.extend(dw(0x4B2C));
    assert_eq!(
        run(&rule, 0xC2, false, &data)[1..],
        [
            "A|.",
            "major code = 00C2",
            "minor code = 0081",
            "segmented address in SS:SP = 00B7:0001",
            "double word EAX = 0000 4B2C",
            "flat address EAX = 00004B2C"
        ]
    );
}

#[test]
fn data_that_runs_out_shows_plainly() {
    let rule = system_rule(0x0003, 0x0001);
    assert_eq!(
        run(&rule, 3, false, &[1, 2])[1],
        "Error Code = <only 2 bytes: 01 02>, CS:EIP = <no data>, EFlags = <no data>"
    );
    assert_eq!(
        run(&doc_rule(&["%P%W"]), 1, true, &[0])[1],
        "<only 1 bytes: 00>"
    );
}

#[test]
fn hex_dump_is_tracefmts_dump_layout() {
    let data = [
        0x04, 0x00, 0x5A, 0x00, 0x00, 0x0C, 0x00, 0x2B, 0xDF, 0xF6, 0xFF, 0xFF, 0xFF, 0x00, 0x00,
        0x01, 0x00, 0x01, 0xC0,
    ];
    assert_eq!(
        hex_dump(&data),
        [
            "Data [+0000  04 00 5A 00 00 0C 00 2B-DF F6 FF FF FF 00 00 01  ..Z....+........ ]",
            "Data [+0010  00 01 C0                                         ... ]"
        ]
    );
    assert!(hex_dump(&[]).is_empty());
}
