//! TCP32DLL's address and host helpers from 32-bit guest code: inet_addr
//! and inet_ntoa round trips, the classful split, gethostname from
//! HOSTNAME, gettimeofday from the kernel's clock, and what a bad pointer
//! does.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

/// Runs a program with `env`; returns the outcome and the process.
fn run(bytes: Vec<u8>, env: &[(&str, &str)]) -> (Outcome, Process) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    cfg.env = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut p = Process::new(cfg).unwrap();
    let o = p.run();
    (o, p)
}

/// Store a NUL-terminated string at `at`.
fn sz(c: &mut Code, at: u32, s: &str) {
    let mut b = s.as_bytes().to_vec();
    b.push(0);
    for (i, ch) in b.chunks(4).enumerate() {
        let mut w = [0u8; 4];
        w[..ch.len()].copy_from_slice(ch);
        c.store(at + 4 * i as u32, u32::from_le_bytes(w));
    }
}

/// `mov [at], eax`.
fn save_eax(c: &mut Code, at: u32) {
    c.c.push(0xA3);
    c.c.extend(at.to_le_bytes());
}

fn dword(p: &mut Process, at: u32) -> u32 {
    let mut b = [0u8; 4];
    p.read_guest(at, &mut b).unwrap();
    u32::from_le_bytes(b)
}

fn string(p: &mut Process, at: u32) -> String {
    let mut b = [0u8; 64];
    p.read_guest(at, &mut b).unwrap();
    let end = b.iter().position(|&x| x == 0).unwrap();
    String::from_utf8_lossy(&b[..end]).into_owned()
}

const ADDR_TEXT: u32 = DATA + 0x80;
const BAD_TEXT: u32 = DATA + 0xA0;
const HOST: u32 = DATA + 0x100;
const TIMEVAL: u32 = DATA + 0x140;
const TIMEZONE: u32 = DATA + 0x148;

#[test]
fn addresses_round_trip_and_host_facts_come_from_the_process() {
    let mut c = Code::new();
    sz(&mut c, ADDR_TEXT, "172.16.0x10.010");
    sz(&mut c, BAD_TEXT, "1.2.3.4x");
    c.push(ADDR_TEXT).call("TCP32DLL", 5, 4); // inet_addr
    save_eax(&mut c, DATA);
    c.c.push(0x50); // push eax: the in_addr by value
    c.call("TCP32DLL", 10, 4); // inet_ntoa
    save_eax(&mut c, DATA + 4);
    c.push_mem(DATA).call("TCP32DLL", 7, 4); // inet_netof
    save_eax(&mut c, DATA + 8);
    c.push_mem(DATA).call("TCP32DLL", 6, 4); // inet_lnaof
    save_eax(&mut c, DATA + 12);
    c.push(0x0102).push(10).call("TCP32DLL", 8, 8); // inet_makeaddr
    save_eax(&mut c, DATA + 16);
    c.push(BAD_TEXT).call("TCP32DLL", 5, 4);
    save_eax(&mut c, DATA + 20);
    c.push(ADDR_TEXT).call("TCP32DLL", 9, 4); // inet_network
    save_eax(&mut c, DATA + 24);
    c.push(0x1234_5678).call("TCP32DLL", 3, 4); // lswap
    save_eax(&mut c, DATA + 28);
    c.push(64).push(HOST).call("TCP32DLL", 44, 8).expect(0, 2);
    c.push(TIMEZONE)
        .push(TIMEVAL)
        .call("TCP32DLL", 2, 8)
        .expect(0, 3);
    c.c.extend([0x31, 0xC0]); // xor eax, eax
    let (o, mut p) = run(c.exit_eax(), &[("HOSTNAME", "build7")]);
    assert_eq!(o, Outcome::Exited(0));
    // 172.16.16.8 in network order, as it lies in memory.
    assert_eq!(dword(&mut p, DATA).to_le_bytes(), [172, 16, 16, 8]);
    let text = dword(&mut p, DATA + 4);
    assert_eq!(string(&mut p, text), "172.16.16.8");
    assert_eq!(dword(&mut p, DATA + 8), 0xAC10, "a class B network");
    assert_eq!(dword(&mut p, DATA + 12), 0x1008);
    assert_eq!(dword(&mut p, DATA + 16).to_le_bytes(), [10, 0, 1, 2]);
    assert_eq!(dword(&mut p, DATA + 20), 0xFFFF_FFFF, "INADDR_NONE");
    assert_eq!(dword(&mut p, DATA + 24), 0xAC10_1008, "host order");
    assert_eq!(dword(&mut p, DATA + 28), 0x7856_3412);
    assert_eq!(string(&mut p, HOST), "build7");
    let secs = dword(&mut p, TIMEVAL);
    assert_eq!(secs, p.now().unix_seconds());
    assert!(dword(&mut p, TIMEVAL + 4) < 1_000_000, "microseconds");
    assert_eq!(dword(&mut p, TIMEZONE), 0, "UTC");
}

#[test]
fn hostname_defaults_and_is_cut_to_the_buffer() {
    let mut c = Code::new();
    c.store(HOST, 0xAAAA_AAAA).store(HOST + 4, 0xAAAA_AAAA);
    c.push(4).push(HOST).call("TCP32DLL", 44, 8).expect(0, 2);
    c.push(64)
        .push(HOST + 0x20)
        .call("TCP32DLL", 44, 8)
        .expect(0, 3);
    c.c.extend([0x31, 0xC0]); // xor eax, eax
    let (o, mut p) = run(c.exit_eax(), &[]);
    assert_eq!(o, Outcome::Exited(0));
    let mut cut = [0u8; 6];
    p.read_guest(HOST, &mut cut).unwrap();
    assert_eq!(&cut, b"loca\xAA\xAA", "four bytes, no NUL");
    assert_eq!(string(&mut p, HOST + 0x20), "localhost");
}

#[test]
fn a_bad_address_string_is_an_access_violation() {
    let mut c = Code::new();
    c.push(0x10).call("TCP32DLL", 5, 4);
    c.c.extend([0x31, 0xC0]); // xor eax, eax
    let (o, _) = run(c.exit_eax(), &[]);
    match o {
        Outcome::GuestFault {
            vector: 14, cr2, ..
        } => assert_eq!(cr2, Some(0x10)),
        other => panic!("{other:?}"),
    }
}
