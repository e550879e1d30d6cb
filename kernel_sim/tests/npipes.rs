//! Named pipes (issue 12): a server thread creates, connects, reads and
//! answers; a client opens the name, transacts, peeks, queries and
//! closes; DosCallNPipe; the end of file after a close; blocking under
//! the deterministic scheduler; the error codes.

mod common;

use common::DATA;
use common::threaded::{Arg, Prog, dword_at, run_reading};
use kernel_sim::Outcome;

const CALL: u32 = 240;
const CONNECT: u32 = 241;
const DISCONNECT: u32 = 242;
const CREATE: u32 = 243;
const PEEK: u32 = 244;
const QUERY_STATE: u32 = 245;
const SET_STATE: u32 = 250;
const TRANSACT: u32 = 252;
const WAIT: u32 = 253;
const OPEN: u32 = 273;
const CLOSE: u32 = 257;
const READ: u32 = 281;
const WRITE: u32 = 282;

const NAME: u32 = DATA + 0x100;
const NONE: u32 = DATA + 0x120;
const BAD: u32 = DATA + 0x140;
const HS: u32 = DATA + 0x160; // server handle
const HC: u32 = DATA + 0x164; // client handle
const H2: u32 = DATA + 0x168;
const ACT: u32 = DATA + 0x16C;
const N: u32 = DATA + 0x170;
const PING: u32 = DATA + 0x180;
const PONG: u32 = DATA + 0x188;
const SBUF: u32 = DATA + 0x1A0; // what the server read
const CBUF: u32 = DATA + 0x1E0; // what the client got
const OUT: u32 = DATA + 0x220; // results

use Arg::{Imm, Mem};

/// The server thread: create (duplex, message, one instance), listen,
/// read the request, answer "pong", read the end of file, disconnect.
fn server(p: &mut Prog) -> u32 {
    let at = p.here();
    // NP_ACCESS_DUPLEX; NP_TYPE_MESSAGE | NP_READMODE_MESSAGE | 1.
    let create = [NAME, HS, 2, 0x0501, 512, 512, 100].map(Imm);
    p.api(CREATE, &create, 0, 0xA0);
    // A second instance is too many.
    p.api(
        CREATE,
        &[NAME, H2, 2, 0x0501, 512, 512, 100].map(Imm),
        231,
        0xA1,
    );
    p.api(CONNECT, &[Mem(HS)], 0, 0xA2);
    p.api(READ, &[Mem(HS), Imm(SBUF), Imm(64), Imm(OUT)], 0, 0xA3);
    p.api(
        WRITE,
        &[Mem(HS), Imm(PONG), Imm(4), Imm(OUT + 0x04)],
        0,
        0xA4,
    );
    // The client closes: the end of file.
    p.api(
        READ,
        &[Mem(HS), Imm(SBUF + 0x20), Imm(64), Imm(OUT + 0x08)],
        0,
        0xA5,
    );
    p.api(DISCONNECT, &[Mem(HS)], 0, 0xA6);
    p.api(CLOSE, &[Mem(HS)], 0, 0xA7);
    p.ret0();
    at
}

#[test]
fn a_server_thread_and_a_client_talk_through_a_message_pipe() {
    let mut p = Prog::new();
    let srv = server(&mut p);
    p.start_main();
    p.text(NAME, "\\PIPE\\TEST")
        .text(NONE, "\\pipe\\none")
        .text(BAD, "\\NOPIPE\\X")
        .text(PING, "ping")
        .text(PONG, "pong");
    p.c.store(OUT + 0x08, 0xFFFF);
    // Before the server: no such pipe; a name outside \PIPE\.
    p.api(WAIT, &[Imm(NAME), Imm(u32::MAX)], 3, 0xB0);
    p.api(CREATE, &[BAD, H2, 2, 1, 0, 0, 0].map(Imm), 3, 0xB1);
    p.api(CREATE, &[NAME, H2, 3, 1, 0, 0, 0].map(Imm), 87, 0xB2);
    p.thread(DATA + 0x40, srv);
    p.sleep(1);
    // Wait until it listens, then open it.
    p.api(WAIT, &[Imm(NAME), Imm(u32::MAX)], 0, 0xB3);
    let open = [
        Imm(NAME),
        Imm(HC),
        Imm(ACT),
        Imm(0),
        Imm(0),
        Imm(1),
        Imm(0x42),
        Imm(0),
    ];
    p.api(OPEN, &open, 0, 0xB4);
    p.api(OPEN, &[NONE, H2, ACT, 0, 0, 1, 0x42, 0].map(Imm), 3, 0xB5);
    // A second client: the one instance is taken.
    p.api(OPEN, &[NAME, H2, ACT, 0, 0, 1, 0x42, 0].map(Imm), 231, 0xB6);
    // The client end is no server.
    p.api(CONNECT, &[Mem(HC)], 230, 0xB7);
    p.api(SET_STATE, &[Mem(HC), Imm(0x0100)], 0, 0xB8);
    p.api(QUERY_STATE, &[Mem(HC), Imm(OUT + 0x10)], 0, 0xB9);
    p.api(SET_STATE, &[Mem(HC), Imm(0x0001)], 87, 0xBA);
    // Transact: "ping" out, "pong" back (the server thread runs
    // meanwhile: the client blocks for the answer).
    let tr = [
        Mem(HC),
        Imm(PING),
        Imm(4),
        Imm(CBUF),
        Imm(64),
        Imm(OUT + 0x14),
    ];
    p.api(TRANSACT, &tr, 0, 0xBB);
    // Nothing more to read: a peek says so, and the state.
    let peek = [
        Mem(HC),
        Imm(CBUF + 0x10),
        Imm(16),
        Imm(OUT + 0x18),
        Imm(OUT + 0x1C),
        Imm(OUT + 0x20),
    ];
    p.api(PEEK, &peek, 0, 0xBC);
    p.api(CLOSE, &[Mem(HC)], 0, 0xBD);
    p.wait(DATA + 0x40, 0, 0, 0xBE);
    let (o, mem) = run_reading(p.finish(), 0x300);
    assert_eq!(o, Outcome::Exited(0));
    let at = |a: u32| (a - DATA) as usize;
    assert_eq!(&mem[at(SBUF)..at(SBUF) + 4], b"ping");
    assert_eq!(dword_at(&mem, OUT), 4, "the server read one message");
    assert_eq!(&mem[at(CBUF)..at(CBUF) + 4], b"pong");
    assert_eq!(dword_at(&mem, OUT + 0x14), 4);
    assert_eq!(dword_at(&mem, OUT + 0x08), 0, "end of file after the close");
    // Message read mode, message type, one instance, client end.
    assert_eq!(dword_at(&mem, OUT + 0x10), 0x0501);
    assert_eq!(dword_at(&mem, OUT + 0x18), 0, "peeked nothing");
    assert_eq!(dword_at(&mem, OUT + 0x20), 3, "NP_STATE_CONNECTED");
}

/// A byte pipe: partial message reads do not apply; a message pipe's
/// short read gives ERROR_MORE_DATA and the rest next; DosCallNPipe.
#[test]
fn more_data_byte_reads_and_dos_call_npipe() {
    let mut p = Prog::new();
    // The server: answer one DosCallNPipe with "answer".
    let srv = p.here();
    p.api(CREATE, &[NAME, HS, 2, 0x0501, 0, 0, 0].map(Imm), 0, 0xA0);
    p.api(CONNECT, &[Mem(HS)], 0, 0xA1);
    p.api(READ, &[Mem(HS), Imm(SBUF), Imm(64), Imm(OUT)], 0, 0xA2);
    p.api(WRITE, &[Mem(HS), Imm(PONG), Imm(6), Imm(OUT + 4)], 0, 0xA3);
    p.api(
        READ,
        &[Mem(HS), Imm(SBUF + 0x20), Imm(64), Imm(OUT + 8)],
        0,
        0xA4,
    );
    p.api(DISCONNECT, &[Mem(HS)], 0, 0xA5);
    p.ret0();
    p.start_main();
    p.text(NAME, "\\PIPE\\CALL")
        .text(PING, "hello")
        .text(PONG, "answer")
        .text(BAD, "\\PIPE\\BYTES");
    p.thread(DATA + 0x40, srv);
    p.sleep(1);
    let call = [NAME, PING, 5, CBUF, 3, OUT + 0x10, u32::MAX].map(Imm);
    // The answer is longer than the buffer: the first part, MORE_DATA.
    p.api(CALL, &call, 234, 0xB0);
    p.wait(DATA + 0x40, 0, 0, 0xB1);
    // An inbound byte pipe: the server end cannot write, a byte read
    // reads across writes.
    p.api(CREATE, &[BAD, H2, 0, 0x0001, 0, 0, 0].map(Imm), 0, 0xB2);
    p.api(WRITE, &[Mem(H2), Imm(PING), Imm(1), Imm(N)], 5, 0xB3);
    p.api(
        TRANSACT,
        &[Mem(H2), Imm(PING), Imm(1), Imm(CBUF), Imm(4), Imm(N)],
        11,
        0xB4,
    );
    let (o, mem) = run_reading(p.finish(), 0x300);
    assert_eq!(o, Outcome::Exited(0));
    let at = |a: u32| (a - DATA) as usize;
    assert_eq!(&mem[at(SBUF)..at(SBUF) + 5], b"hello");
    assert_eq!(&mem[at(CBUF)..at(CBUF) + 3], b"ans");
    assert_eq!(dword_at(&mem, OUT + 0x10), 3);
    // DosCallNPipe closed its handle after the answer: the server read
    // the end of file.
    assert_eq!(dword_at(&mem, OUT + 8), 0);
}

/// The 16-bit NAMPIPES entries on one thread: a nonblocking server
/// listens, a client opens the name with DosOpen, bytes go both ways.
#[test]
fn the_16_bit_nampipes_calls() {
    use common::{ne_program, push};
    // (module, ordinal, pascal arguments: words, DS:offsets, dwords)
    enum A {
        W(u16),
        Ptr(u16),
        Dw(u16),
        L(u32),
    }
    let mut c = Vec::new();
    let mut calls: Vec<(u32, &'static str, u32)> = Vec::new();
    let mut api =
        |c: &mut Vec<u8>, module: &'static str, ord: u32, args: &[A], rc: u16, tag: u16| {
            for a in args {
                match *a {
                    A::W(v) => c.extend(push(v)),
                    A::Ptr(off) => {
                        c.push(0x1E);
                        c.extend(push(off));
                    }
                    A::Dw(off) => {
                        // push word [off]
                        let [lo, hi] = off.to_le_bytes();
                        c.extend([0xFF, 0x36, lo, hi]);
                    }
                    A::L(v) => {
                        c.extend(push((v >> 16) as u16));
                        c.extend(push(v as u16));
                    }
                }
            }
            calls.push((c.len() as u32, module, ord));
            c.extend([0x9A, 0, 0, 0, 0]);
            // cmp ax, rc; jz over; DosExit(1, tag)
            c.push(0x3D);
            c.extend(rc.to_le_bytes());
            c.extend([0x74, 11]);
            c.extend(push(1));
            c.extend(push(tag));
            calls.push((c.len() as u32, "DOSCALLS", 5));
            c.extend([0x9A, 0, 0, 0, 0]);
        };
    // Data: 0x00 name, 0x20 server h, 0x22 client h, 0x24 action,
    // 0x26 count, 0x28 state, 0x30 "ab", 0x40 read buffer, 0x50 avail.
    let np = "NAMPIPES";
    api(
        &mut c,
        np,
        1,
        &[
            A::Ptr(0),
            A::Ptr(0x20),
            A::W(2),
            A::W(1),
            A::W(0),
            A::W(0),
            A::L(0),
        ],
        0,
        1,
    );
    api(&mut c, np, 5, &[A::Dw(0x20), A::Ptr(0x28)], 0, 2);
    api(&mut c, np, 6, &[A::Dw(0x20), A::W(0x8000)], 0, 3);
    api(&mut c, np, 3, &[A::Dw(0x20)], 233, 4);
    // DosOpen(name, &h, &action, 0L, 0, 1, 0x42, 0L)
    let open = [
        A::Ptr(0),
        A::Ptr(0x22),
        A::Ptr(0x24),
        A::L(0),
        A::W(0),
        A::W(1),
        A::W(0x42),
        A::L(0),
    ];
    api(&mut c, "DOSCALLS", 70, &open, 0, 5);
    api(&mut c, np, 3, &[A::Dw(0x20)], 0, 6);
    // DosWrite(client, "ab", 2, &n); DosRead(server, buf, 16, &n)
    api(
        &mut c,
        "DOSCALLS",
        138,
        &[A::Dw(0x22), A::Ptr(0x30), A::W(2), A::Ptr(0x26)],
        0,
        7,
    );
    let peek = [
        A::Dw(0x20),
        A::Ptr(0x40),
        A::W(16),
        A::Ptr(0x26),
        A::Ptr(0x50),
        A::Ptr(0x2A),
    ];
    api(&mut c, np, 7, &peek, 0, 8);
    api(
        &mut c,
        "DOSCALLS",
        137,
        &[A::Dw(0x20), A::Ptr(0x40), A::W(16), A::Ptr(0x26)],
        0,
        9,
    );
    // Empty now, nonblocking: ERROR_NO_DATA.
    api(
        &mut c,
        "DOSCALLS",
        137,
        &[A::Dw(0x20), A::Ptr(0x44), A::W(16), A::Ptr(0x26)],
        232,
        10,
    );
    // DosWrite(1, ds:0x20, 0x40, ds:0x60): the data area to stdout.
    api(
        &mut c,
        "DOSCALLS",
        138,
        &[A::W(1), A::Ptr(0x20), A::W(0x40), A::Ptr(0x60)],
        0,
        11,
    );
    c.extend(push(1));
    c.extend(push(0));
    calls.push((c.len() as u32, "DOSCALLS", 5));
    c.extend([0x9A, 0, 0, 0, 0]);
    let mut data = vec![0u8; 0x80];
    data[..8].copy_from_slice(b"\\PIPE\\X\0");
    data[0x30..0x32].copy_from_slice(b"ab");
    let exe = ne_program(&c, &data, &calls);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), exe).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut proc = kernel_sim::Process::new(cfg).unwrap();
    let out = common::capture_console(&mut proc);
    assert_eq!(proc.run(), Outcome::Exited(0));
    let b = out.contents();
    let w = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    // DosQNmPHandState: server end, one instance, byte pipe.
    assert_eq!(w(0x08), 0x4001);
    assert_eq!(&b[0x20..0x22], b"ab", "what the server read");
    assert_eq!(w(0x06), 2, "the last count (the failed read wrote none)");
    // DosPeekNmPipe: 2 bytes in the pipe, connected.
    assert_eq!(w(0x30), 2);
    assert_eq!(w(0x0A), 3);
}
