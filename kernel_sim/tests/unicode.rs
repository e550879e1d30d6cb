//! The Unicode API from 32-bit guest code: UCONV's conversion objects
//! (code pages 437, 850, 1252, UTF-8) and LIBUNI's string, character and
//! locale functions, with their error codes and what a bad pointer does.

mod common;

use common::{Code, DATA};
use kernel_sim::Outcome;

/// Runs a program; returns the outcome and the 512 bytes at DATA.
fn run(bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    common::threaded::run_reading_within(bytes, 512, 1_000_000)
}

/// Store bytes at `at` (dword by dword, zero-padded).
fn bytes(c: &mut Code, at: u32, b: &[u8]) {
    for (i, ch) in b.chunks(4).enumerate() {
        let mut w = [0u8; 4];
        w[..ch.len()].copy_from_slice(ch);
        c.store(at + 4 * i as u32, u32::from_le_bytes(w));
    }
}

/// Store a NUL-terminated UniChar string at `at`.
fn ustr(c: &mut Code, at: u32, s: &str) {
    let b: Vec<u8> = s
        .encode_utf16()
        .chain([0])
        .flat_map(u16::to_le_bytes)
        .collect();
    bytes(c, at, &b);
}

fn u16s(mem: &[u8], at: u32, n: usize) -> Vec<u16> {
    let o = (at - DATA) as usize;
    mem[o..o + 2 * n]
        .chunks(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect()
}

fn u32at(mem: &[u8], at: u32) -> u32 {
    let o = (at - DATA) as usize;
    u32::from_le_bytes(mem[o..o + 4].try_into().unwrap())
}

const NAME: u32 = DATA;
const OBJ: u32 = DATA + 0x40;
const INBUF: u32 = DATA + 0x44;
const INLEN: u32 = DATA + 0x48;
const OUTBUF: u32 = DATA + 0x4C;
const OUTLEN: u32 = DATA + 0x50;
const SUBST: u32 = DATA + 0x54;
const IN: u32 = DATA + 0x80;
const OUT: u32 = DATA + 0x100;

/// UniCreateUconvObject(name) then UniUconvToUcs of `input` into 16
/// UniChars; exits with the conversion's result.
fn to_ucs(cp: &str, input: &[u8]) -> (Outcome, Vec<u8>) {
    let mut c = Code::new();
    ustr(&mut c, NAME, cp);
    c.push(OBJ).push(NAME).call("UCONV", 1, 8).expect(0, 1001);
    bytes(&mut c, IN, input);
    c.store(INBUF, IN)
        .store(INLEN, input.len() as u32)
        .store(OUTBUF, OUT)
        .store(OUTLEN, 16)
        .push(SUBST)
        .push(OUTLEN)
        .push(OUTBUF)
        .push(INLEN)
        .push(INBUF)
        .push_mem(OBJ)
        .call("UCONV", 2, 24);
    run(c.exit_eax())
}

#[test]
fn code_pages_convert_to_ucs_with_their_own_tables() {
    let input = [0x9B, 0xD5, b'A', 0x82];
    let (o, mem) = to_ucs("IBM-850", &input);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(u16s(&mem, OUT, 4), [0x00F8, 0x0131, 0x41, 0x00E9]);
    assert_eq!(u32at(&mem, INBUF), IN + 4, "input pointer moved on");
    assert_eq!(u32at(&mem, INLEN), 0);
    assert_eq!(u32at(&mem, OUTBUF), OUT + 8);
    assert_eq!(u32at(&mem, OUTLEN), 12);
    let (o, mem) = to_ucs("IBM-437", &input);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(u16s(&mem, OUT, 4), [0x00A2, 0x2552, 0x41, 0x00E9]);
    let (o, mem) = to_ucs("IBM-1252", &[0x80, 0x9F]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(u16s(&mem, OUT, 2), [0x20AC, 0x0178]);
}

#[test]
fn conversion_errors_stop_at_the_bad_byte() {
    // UTF-8 without substitution: 0xFF is no character.
    let (o, mem) = to_ucs("IBM-1208@sub=no", &[b'a', 0xFF, b'b']);
    assert_eq!(o, Outcome::Exited(0x0002_0402), "UCONV_EILSEQ");
    assert_eq!(u32at(&mem, INBUF), IN + 1);
    assert_eq!(u32at(&mem, INLEN), 2);
    assert_eq!(u32at(&mem, OUTLEN), 15);
    // With substitution (the default) it becomes U+FFFD, counted.
    let (o, mem) = to_ucs("IBM-1208", &[b'a', 0xFF, b'b']);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(u16s(&mem, OUT, 3), [0x61, 0xFFFD, 0x62]);
    assert_eq!(u32at(&mem, SUBST), 1);
    // A character cut at the end of the input.
    let (o, _) = to_ucs("UTF-8", &[b'a', 0xE2, 0x82]);
    assert_eq!(o, Outcome::Exited(0x0002_040E), "UCONV_EINVAL");
    // 20 bytes into 16 UniChars.
    let (o, mem) = to_ucs("IBM-850", &[b'x'; 20]);
    assert_eq!(o, Outcome::Exited(0x0002_0412), "UCONV_E2BIG");
    assert_eq!(u32at(&mem, INLEN), 4);
    assert_eq!(u32at(&mem, OUTLEN), 0);
}

#[test]
fn unknown_code_pages_and_objects_are_refused() {
    let mut c = Code::new();
    ustr(&mut c, NAME, "IBM-4242");
    c.push(OBJ).push(NAME).call("UCONV", 1, 8);
    let (o, _) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(0x0002_040E), "UCONV_EINVAL");
    // Freeing twice: the second is UCONV_EBADF.
    let mut c = Code::new();
    ustr(&mut c, NAME, "");
    c.push(OBJ).push(NAME).call("UCONV", 1, 8).expect(0, 1);
    c.push_mem(OBJ).call("UCONV", 4, 4).expect(0, 2);
    c.push_mem(OBJ).call("UCONV", 4, 4);
    let (o, _) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(0x0002_040F), "UCONV_EBADF");
}

#[test]
fn from_ucs_substitutes_what_the_page_lacks() {
    let mut c = Code::new();
    ustr(&mut c, NAME, "IBM-437");
    c.push(OBJ).push(NAME).call("UCONV", 1, 8).expect(0, 1);
    ustr(&mut c, IN, "a\u{20AC}\u{E9}");
    c.store(INBUF, IN)
        .store(INLEN, 3)
        .store(OUTBUF, OUT)
        .store(OUTLEN, 8)
        .push(SUBST)
        .push(OUTLEN)
        .push(OUTBUF)
        .push(INLEN)
        .push(INBUF)
        .push_mem(OBJ)
        .call("UCONV", 3, 24);
    let (o, mem) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(0));
    let out = (OUT - DATA) as usize;
    assert_eq!(&mem[out..out + 3], [b'a', 0x1A, 0x82]);
    assert_eq!(u32at(&mem, SUBST), 1);
    assert_eq!(u32at(&mem, OUTLEN), 5);
}

#[test]
fn map_cp_names_the_page_and_checks_room() {
    let mut c = Code::new();
    c.push(8)
        .push(OUT)
        .push(850)
        .call("UCONV", 10, 12)
        .expect(0, 1);
    c.push(8)
        .push(OUT + 0x20)
        .push(0)
        .call("UCONV", 10, 12)
        .expect(0, 2);
    c.push(4).push(OUT + 0x40).push(1252).call("UCONV", 10, 12);
    let (o, mem) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(0x0002_0412), "UCONV_E2BIG");
    let text = |at: u32| String::from_utf16(&u16s(&mem, at, 7)).unwrap();
    assert_eq!(text(OUT), "IBM-850");
    assert_eq!(text(OUT + 0x20), "IBM-437");
}

#[test]
fn string_functions() {
    let (a, b, d) = (DATA + 0x80, DATA + 0xC0, DATA + 0x100);
    let mut c = Code::new();
    ustr(&mut c, a, "Hello, ");
    ustr(&mut c, b, "w\u{F6}rld");
    // UniStrcpy(d, a); UniStrcat(d, b); UniStrlen(d) -> [DATA]
    c.push(a).push(d).call("LIBUNI", 36, 8);
    c.push(b).push(d).call("LIBUNI", 31, 8);
    c.push(d).call("LIBUNI", 40, 4);
    c.c.extend([0xA3]);
    c.c.extend(DATA.to_le_bytes()); // mov [DATA], eax
    // UniStrupr(d); UniStrchr(d, 'W') - d -> [DATA+4]
    c.push(d).call("LIBUNI", 61, 4);
    c.push(u32::from(b'W')).push(d).call("LIBUNI", 32, 8);
    c.c.extend([0xA3]);
    c.c.extend((DATA + 4).to_le_bytes());
    // UniStrcmpi(NULL, a, "HELLO, ") == 0 -> else exit 3
    ustr(&mut c, DATA + 0x40, "HELLO, ");
    c.push(DATA + 0x40)
        .push(a)
        .push(0)
        .call("LIBUNI", 34, 12)
        .expect(0, 3);
    // UniStrtoul(NULL, " 0x1F!", &end, 0, &v)
    ustr(&mut c, DATA + 0x60, " 0x1F!");
    c.push(DATA + 8)
        .push(0)
        .push(DATA + 12)
        .push(DATA + 0x60)
        .push(0)
        .call("LIBUNI", 52, 20)
        .expect(0, 4);
    c.push(0).call("LIBUNI", 40, 4); // UniStrlen(NULL): the access violation
    let (o, mem) = run(c.exit_eax());
    match o {
        Outcome::GuestFault {
            vector: 14, cr2, ..
        } => assert_eq!(cr2, Some(0)),
        other => panic!("{other:?}"),
    }
    assert_eq!(u32at(&mem, DATA), 12);
    assert_eq!(
        String::from_utf16(&u16s(&mem, d, 12)).unwrap(),
        "HELLO, W\u{D6}RLD"
    );
    assert_eq!(u32at(&mem, DATA + 4), d + 14);
    assert_eq!(u32at(&mem, DATA + 8), 31, "0x1F");
    assert_eq!(u32at(&mem, DATA + 12), DATA + 0x60 + 10, "end at '!'");
}

#[test]
fn locales_and_classes() {
    let mut c = Code::new();
    // UniCreateLocaleObject(UNI_MBS_STRING_POINTER, "C", &loc)
    bytes(&mut c, DATA + 0x20, b"C\0");
    c.push(DATA)
        .push(DATA + 0x20)
        .push(2)
        .call("LIBUNI", 20, 12)
        .expect(0, 1);
    // UniCreateLocaleObject(UNI_UCS_STRING_POINTER, "", &loc2)
    ustr(&mut c, DATA + 0x30, "");
    c.push(DATA + 4)
        .push(DATA + 0x30)
        .push(3)
        .call("LIBUNI", 20, 12)
        .expect(0, 2);
    // e-acute is alpha in the system locale, not in C.
    c.push(0xE9)
        .push_mem(DATA + 4)
        .call("LIBUNI", 6, 8)
        .expect(1, 3);
    c.push(0xE9)
        .push_mem(DATA)
        .call("LIBUNI", 6, 8)
        .expect(0, 4);
    c.push(u32::from(b'f'))
        .push_mem(DATA)
        .call("LIBUNI", 1, 8)
        .expect(1, 5);
    c.push_mem(DATA).call("LIBUNI", 21, 4).expect(0, 6);
    c.push_mem(DATA)
        .call("LIBUNI", 21, 4)
        .expect(0x0002_040F, 7);
    // An unknown but well-formed name; a malformed one.
    bytes(&mut c, DATA + 0x20, b"xx_YY\0");
    c.push(DATA)
        .push(DATA + 0x20)
        .push(2)
        .call("LIBUNI", 20, 12)
        .expect(0x0002_0414, 8);
    bytes(&mut c, DATA + 0x20, b"klingon\0");
    c.push(DATA)
        .push(DATA + 0x20)
        .push(2)
        .call("LIBUNI", 20, 12);
    let (o, _) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(0x0002_040E), "ULS_INVALID");
}

/// UniStrncpy pads with NULs up to its count, as strncpy does; a count
/// past the guest's memory ends at an access violation where that memory
/// ends, and sizes nothing on the host (the hostile-arguments sweep once
/// made it reserve 8 GB).
#[test]
fn strncpy_pads_and_a_huge_count_faults() {
    let (a, d) = (DATA + 0x80, DATA + 0x100);
    let mut c = Code::new();
    ustr(&mut c, a, "abc");
    bytes(&mut c, d, &[0xEE; 16]);
    // UniStrncpy(d, a, 5): "abc", two NULs, the rest untouched.
    c.push(5).push(a).push(d).call("LIBUNI", 44, 12);
    let (o, mem) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(d));
    assert_eq!(u16s(&mem, d, 6), [0x61, 0x62, 0x63, 0, 0, 0xEEEE]);

    let mut c = Code::new();
    ustr(&mut c, a, "abc");
    c.push(u32::MAX).push(a).push(d).call("LIBUNI", 44, 12);
    let (o, _) = run(c.exit_eax());
    match o {
        Outcome::GuestFault {
            vector: 14,
            cr2: Some(cr2),
            ..
        } => assert!(cr2 > d && cr2 & 0xFFF == 0, "cr2 {cr2:#x}"),
        other => panic!("{other:?}"),
    }
}
