//! DosInsertMessage (MSG.4) from 32-bit guest code: %1..%9 insertion and
//! its error codes.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

const RC: u32 = 0x20000;
const LEN: u32 = 0x20080;
const TABLE: u32 = 0x20140;
const BUF: u32 = 0x20180;
/// A MSGSEG32 object's contents (in the stack object, base 0x20000).
const SEG: u32 = 0x20200;
const MSG: &[u8] = b"Hi %2 and %1, %3%%0!";

/// Stores bytes at `at` with `mov byte` instructions.
fn store(code: &mut Vec<u8>, at: u32, bytes: &[u8]) {
    for (i, b) in bytes.iter().enumerate() {
        code.extend([0xC6, 0x05]);
        code.extend((at + i as u32).to_le_bytes());
        code.push(*b);
    }
}

/// `c`, then MSG.`ordinal` called with each argument list in turn
/// (pushed last first, 28 bytes removed after), its return code stored
/// at RC + 4n, then DosExit(1, 0): the LX program.
fn calls_program<const N: usize>(mut c: Vec<u8>, ordinal: u32, calls_args: &[[u32; N]]) -> Vec<u8> {
    let mut calls = Vec::new();
    for (n, args) in calls_args.iter().enumerate() {
        for a in args.iter().rev() {
            c.push(0x68);
            c.extend(a.to_le_bytes());
        }
        calls.push((c.len() as u32, "MSG", ordinal));
        c.extend([0xE8, 0, 0, 0, 0]);
        c.extend([0x83, 0xC4, 28]);
        c.push(0xA3);
        c.extend((RC + 4 * n as u32).to_le_bytes());
    }
    c.extend([0x6A, 0x00, 0x6A, 0x01]);
    calls.push((c.len() as u32, "DOSCALLS", 234));
    c.extend([0xE8, 0, 0, 0, 0]);
    common::lx_program(&c, &calls)
}

/// Sets up the strings, then calls DosInsertMessage once per argument
/// list, storing each return code at RC + 4i, and exits.
fn program(calls_args: &[[u32; 7]]) -> Vec<u8> {
    let mut c = Vec::new();
    store(&mut c, 0x20100, b"ab\0");
    store(&mut c, 0x20108, b"XYZ\0");
    store(&mut c, 0x20110, MSG);
    let mut table = Vec::new();
    table.extend(0x20100u32.to_le_bytes());
    table.extend(0x20108u32.to_le_bytes());
    table.extend(0x7000_0000u32.to_le_bytes());
    store(&mut c, TABLE, &table);
    calls_program(c, 4, calls_args)
}

/// Runs a program: the outcome and the 512 bytes at RC.
fn run(bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    const _: () = assert!(RC == common::DATA);
    common::threaded::run_reading_within(bytes, 512, 1_000_000)
}

fn u32_at(mem: &[u8], lin: u32) -> u32 {
    let i = (lin - RC) as usize;
    u32::from_le_bytes(mem[i..i + 4].try_into().unwrap())
}

#[test]
fn inserts_replace_their_markers() {
    let n = MSG.len() as u32;
    let (o, mem) = run(program(&[[TABLE, 2, 0x20110, n, BUF, 64, LEN]]));
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(u32_at(&mem, RC), 0);
    let want = b"Hi XYZ and ab, %3%%0!";
    assert_eq!(u32_at(&mem, LEN), want.len() as u32);
    let at = (BUF - RC) as usize;
    assert_eq!(&mem[at..at + want.len()], want);
    assert_eq!(mem[at + want.len()], 0, "nothing written past the text");
}

#[test]
fn errors() {
    let n = MSG.len() as u32;
    let (o, mem) = run(program(&[
        [TABLE, 10, 0x20110, n, BUF, 64, LEN],
        [TABLE, 2, 0x20110, n, BUF, 5, LEN],
        [TABLE, 3, 0x20110, n, BUF, 64, LEN],
        [TABLE, 2, 0x20110, n, BUF, 64, 0x7000_0000],
        [TABLE, 0, 0x20110, 2, BUF, 2, LEN],
    ]));
    assert_eq!(o, Outcome::Exited(0));
    let rc: Vec<u32> = (0..5).map(|i| u32_at(&mem, RC + 4 * i)).collect();
    assert_eq!(rc, [320, 316, 487, 487, 0]);
    assert_eq!(u32_at(&mem, LEN), 2, "only the last call stored a length");
    assert_eq!(&mem[(BUF - RC) as usize..][..3], b"Hi\0");
}

/// An MKMSGF file of component `TST`, messages 5.. with 16-bit offsets.
fn msg_file(msgs: &[&[u8]]) -> Vec<u8> {
    let mut f = b"\xFFMKMSGF\0TST".to_vec();
    f.extend((msgs.len() as u16).to_le_bytes());
    f.extend(5u16.to_le_bytes());
    f.push(1);
    f.extend(2u16.to_le_bytes());
    f.extend(0x1Fu16.to_le_bytes());
    f.resize(0x1F, 0);
    let mut at = 0x1F + 2 * msgs.len();
    for m in msgs {
        f.extend((at as u16).to_le_bytes());
        at += m.len();
    }
    for m in msgs {
        f.extend(*m);
    }
    f
}

/// Calls Dos32TrueGetMessage (MSG.6) once per argument list (the
/// message segment first, as OS2386.LIB's DosGetMessage stub passes it),
/// storing each return code at RC + 4i; the file name "T.MSG" is at
/// 0x20120.
fn get_program(calls_args: &[[u32; 8]], name: &[u8]) -> Vec<u8> {
    get_program_with(calls_args, name, &[])
}

/// [`get_program`] with `seg` stored at [`SEG`] first.
fn get_program_with(calls_args: &[[u32; 8]], name: &[u8], seg: &[u8]) -> Vec<u8> {
    let mut c = Vec::new();
    store(&mut c, SEG, seg);
    store(&mut c, 0x20100, b"ab\0");
    store(&mut c, 0x20120, name);
    store(&mut c, TABLE, &0x20100u32.to_le_bytes());
    // MSG.6 removes the message segment (the stub's argument).
    calls_program(c, 6, calls_args)
}

fn run_with(bytes: Vec<u8>, files: &[(&str, Vec<u8>)]) -> (Outcome, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    std::fs::create_dir(dir.path().join("MSGS")).unwrap();
    for (n, b) in files {
        std::fs::write(dir.path().join(n), b).unwrap();
    }
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.set_env("DPATH", "C:\\NONE;C:\\MSGS");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    let o = p.run();
    let mut mem = vec![0u8; 512];
    p.read_guest(RC, &mut mem).unwrap();
    (o, mem)
}

#[test]
fn get_message_reads_the_file_along_dpath() {
    let file = msg_file(&[b"EBad %1 thing\r\n", b"IHello %1%0\r\n", b"Wx"]);
    let name = 0x20120;
    // The failures first: each puts its own text in BUF.
    let (o, mem) = run_with(
        get_program(
            &[
                [0, TABLE, 1, BUF, 64, 8, name, LEN],
                [0, TABLE, 10, BUF, 64, 5, name, LEN],
                [0, TABLE, 1, BUF, 4, 5, name, LEN],
                [0, TABLE, 1, BUF, 64, 5, name, LEN],
                [0, TABLE, 1, BUF + 0x40, 64, 6, name, 0x20084],
            ],
            b"T.MSG\0",
        ),
        &[("MSGS/T.MSG", file.clone())],
    );
    assert_eq!(o, Outcome::Exited(0));
    let rc: Vec<u32> = (0..5).map(|i| u32_at(&mem, RC + 4 * i)).collect();
    assert_eq!(rc, [317, 320, 316, 0, 0]);
    let want = b"TST0005: Bad ab thing\r\n";
    assert_eq!(u32_at(&mem, LEN), want.len() as u32);
    assert_eq!(&mem[(BUF - RC) as usize..][..want.len()], want);
    assert_eq!(u32_at(&mem, 0x20084), 8);
    assert_eq!(&mem[(BUF + 0x40 - RC) as usize..][..9], b"Hello ab\0");
    // A failure's text: the system's message for the error, with the
    // message number and the file; a message too long is cut to the
    // buffer.
    for (call, want) in [
        (
            [0, TABLE, 1, BUF, 64, 8, name, LEN],
            &b"SYS0317: Message 0008 is not in message file T.MSG.\r\n"[..],
        ),
        ([0, TABLE, 1, BUF, 4, 5, name, LEN], b"TST0"),
    ] {
        let (_, mem) = run_with(
            get_program(&[call], b"T.MSG\0"),
            &[("MSGS/T.MSG", file.clone())],
        );
        assert_eq!(u32_at(&mem, LEN), want.len() as u32);
        assert_eq!(&mem[(BUF - RC) as usize..][..want.len()], want);
    }
    // No such file, and a file that is not a message file.
    let (_, mem) = run_with(
        get_program(&[[0, TABLE, 1, BUF, 64, 5, 0x20120, LEN]], b"NO.MSG\0"),
        &[],
    );
    assert_eq!(u32_at(&mem, RC), 318, "ERROR_MR_UN_ACC_MSGF");
    let want = b"SYS0318: Message file NO.MSG cannot be found or read.\r\n";
    assert_eq!(&mem[(BUF - RC) as usize..][..want.len()], want);
    let (_, mem) = run_with(
        get_program(&[[0, TABLE, 1, BUF, 64, 5, 0x20120, LEN]], b"C:\\T.MSG\0"),
        &[("T.MSG", b"not a message file at all, really".to_vec())],
    );
    assert_eq!(u32_at(&mem, RC), 319, "ERROR_MR_INV_MSGF_FORMAT");
    // OSO001.MSG without a file along DPATH: the system's own.
    let (_, mem) = run_with(
        get_program(&[[0, TABLE, 1, BUF, 64, 2, 0x20120, LEN]], b"OSO001.MSG\0"),
        &[],
    );
    assert_eq!(u32_at(&mem, RC), 0);
    let want = b"SYS0002: No file of that name was found.\r\n";
    assert_eq!(u32_at(&mem, LEN), want.len() as u32);
    assert_eq!(&mem[(BUF - RC) as usize..][..want.len()], want);
}

#[test]
fn hostile_message_files_are_format_errors() {
    use kernel_sim::api::msg::message;
    let mut f = msg_file(&[b"Ia", b"Ib"]);
    assert_eq!(message(&f, 6).unwrap().2, b"b");
    // An index running past the end, an offset past the end, reversed
    // offsets, and an empty file.
    f[0x0B] = 0xFF;
    assert_eq!(message(&f, 200).unwrap_err(), 319);
    let mut g = msg_file(&[b"Ia", b"Ib"]);
    g[0x1F] = 0xFF;
    assert_eq!(message(&g, 5).unwrap_err(), 319);
    let mut h = msg_file(&[b"Ia", b"Ib"]);
    h.swap(0x1F, 0x21);
    assert_eq!(message(&h, 5).unwrap_err(), 319);
    assert_eq!(message(&[], 5).unwrap_err(), 319);
    assert_eq!(message(&f, 4).unwrap_err(), 317);
}

/// A MSGSEG32 segment at [`SEG`] into which MSGBIND bound message 7 of
/// T.MSG (component TST): offsets from the object's base, 0x20000.
fn bound_segment() -> Vec<u8> {
    let mut s = b"\xFFMSGSEG32\0".to_vec();
    s.extend(0x8002u16.to_le_bytes());
    s.extend(0u16.to_le_bytes());
    s.extend(0x230u32.to_le_bytes()); // the bound-file table
    s.resize(0x30, 0);
    s.extend(1u16.to_le_bytes());
    s.extend(0x240u16.to_le_bytes()); // its name
    s.extend(0x250u16.to_le_bytes()); // its index
    s.resize(0x40, 0);
    s.extend(b"T.MSG\0");
    s.resize(0x50, 0);
    s.extend(b"TST");
    s.extend(1u16.to_le_bytes());
    s.extend(0x260u16.to_le_bytes());
    s.resize(0x60, 0);
    s.extend(7u16.to_le_bytes());
    s.extend(9u16.to_le_bytes());
    s.extend(b"EBound %1");
    s
}

#[test]
fn bound_messages_come_first_then_the_file() {
    let file = msg_file(&[b"EBad %1 thing\r\n"]);
    let name = 0x20120;
    let (o, mem) = run_with(
        get_program_with(
            &[
                [SEG, TABLE, 1, BUF, 64, 9, name, 0x20088],
                [SEG, TABLE, 1, BUF, 64, 7, name, LEN],
                [SEG, TABLE, 1, BUF + 0x40, 64, 5, name, 0x20084],
            ],
            b"C:\\MSGS\\T.MSG\0",
            &bound_segment(),
        ),
        &[("MSGS/T.MSG", file)],
    );
    assert_eq!(o, Outcome::Exited(0));
    let rc: Vec<u32> = (0..3).map(|i| u32_at(&mem, RC + 4 * i)).collect();
    assert_eq!(rc, [317, 0, 0], "in neither, bound, from the file");
    let want = b"TST0007: Bound ab";
    assert_eq!(u32_at(&mem, LEN), want.len() as u32);
    assert_eq!(&mem[(BUF - RC) as usize..][..want.len()], want);
    let want = b"TST0005: Bad ab thing\r\n";
    assert_eq!(u32_at(&mem, 0x20084), want.len() as u32);
    assert_eq!(&mem[(BUF + 0x40 - RC) as usize..][..want.len()], want);
}
