//! NLS from 32-bit guest code: DosQueryDBCSEnv (what the IBM C runtime
//! asks first), DosQueryCtryInfo and DosMapCase, with their error codes.

mod common;

use kernel_sim::Outcome;

/// Runs a program; returns the outcome and the 256 bytes at 0x20000
/// (the start of the stack object, used as scratch memory).
fn run(bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    common::threaded::run_reading_within(bytes, 256, 100_000)
}

fn push(c: &mut Vec<u8>, v: u32) {
    c.push(0x68);
    c.extend(v.to_le_bytes());
}

/// Stores `country`, `cp` at 0x20000 (the COUNTRYCODE), then calls
/// NLS.`ordinal` with `args` (C order; pushed right to left) and exits
/// with its return code.
fn nls_call(country: u32, cp: u32, ordinal: u32, args: &[u32]) -> Vec<u8> {
    let (c, calls) = nls_code(country, cp, ordinal, args);
    common::lx_program(&c, &calls)
}

const CC: u32 = 0x20000;
const BUF: u32 = 0x20010;

#[test]
fn dbcs_env_of_437_is_the_empty_list() {
    let (o, _) = run(nls_call(0, 0, 6, &[12, CC, BUF]));
    assert_eq!(o, Outcome::Exited(0));
    let (o, _) = run(nls_call(0, 0, 6, &[1, CC, BUF]));
    assert_eq!(o, Outcome::Exited(399), "ERROR_NLS_TABLE_TRUNCATED");
    let (o, _) = run(nls_call(49, 0, 6, &[12, CC, BUF]));
    assert_eq!(o, Outcome::Exited(398), "ERROR_NLS_NO_CTRY_CODE");
    let (o, _) = run(nls_call(1, 932, 6, &[12, CC, BUF]));
    assert_eq!(o, Outcome::Exited(476), "ERROR_CODE_PAGE_NOT_FOUND");
    let (o, _) = run(nls_call(1, 850, 6, &[12, CC, 0x7000_0000]));
    assert_eq!(o, Outcome::Exited(487), "ERROR_INVALID_ADDRESS");
}

#[test]
fn country_info_of_the_united_states() {
    let (o, mem) = run(nls_call(0, 850, 5, &[64, CC, BUF, 0x20008]));
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(&mem[8..12], &44u32.to_le_bytes(), "cbActual");
    let info = &mem[0x10..0x10 + 44];
    assert_eq!(&info[0..4], &1u32.to_le_bytes(), "country");
    assert_eq!(&info[4..8], &850u32.to_le_bytes(), "code page");
    assert_eq!(&info[12..17], b"$\0\0\0\0");
    assert_eq!(&info[17..25], b",\0.\0-\0:\0");
    assert_eq!(info[26], 2, "decimal places");
    assert_eq!(&info[32..34], b",\0", "list separator");
    let (o, mem) = run(nls_call(0, 0, 5, &[10, CC, BUF, 0x20008]));
    assert_eq!(o, Outcome::Exited(399));
    assert_eq!(&mem[8..12], &10u32.to_le_bytes());
    assert_eq!(&mem[0x10 + 4..0x10 + 8], &437u32.to_le_bytes());
    assert_eq!(mem[0x10 + 10], 0, "nothing past cb");
}

#[test]
fn map_case_uses_the_code_page() {
    // The program writes the string at 0x20010 first.
    let text = [b'a', b'z', b'1', 0x82, 0x83, 0x87, 0xA4, 0xE1];
    let prog = |cp: u32| {
        let mut code = Vec::new();
        for (i, b) in text.iter().enumerate() {
            code.extend([0xC6, 0x05]); // mov byte [BUF+i], b
            code.extend((BUF + i as u32).to_le_bytes());
            code.push(*b);
        }
        let base = code.len() as u32;
        let (c, calls) = nls_code(0, cp, 7, &[text.len() as u32, CC, BUF]);
        code.extend(c);
        let calls: Vec<_> = calls.iter().map(|(o, m, n)| (o + base, *m, *n)).collect();
        common::lx_program(&code, &calls)
    };
    let (o, mem) = run(prog(437));
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(
        &mem[0x10..0x18],
        &[b'A', b'Z', b'1', 0x90, b'A', 0x80, 0xA5, 0xE1]
    );
    let (o, mem) = run(prog(850));
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(
        &mem[0x10..0x18],
        &[b'A', b'Z', b'1', 0x90, 0xB6, 0x80, 0xA5, 0xE1]
    );
}

/// The code of [`nls_call`] and its call sites.
fn nls_code(
    country: u32,
    cp: u32,
    ordinal: u32,
    args: &[u32],
) -> (Vec<u8>, Vec<(u32, &'static str, u32)>) {
    let mut c = Vec::new();
    c.extend([0xC7, 0x05, 0x00, 0x00, 0x02, 0x00]);
    c.extend(country.to_le_bytes());
    c.extend([0xC7, 0x05, 0x04, 0x00, 0x02, 0x00]);
    c.extend(cp.to_le_bytes());
    for a in args.iter().rev() {
        push(&mut c, *a);
    }
    let mut calls = vec![(c.len() as u32, "NLS", ordinal)];
    c.extend([0xE8, 0, 0, 0, 0]);
    c.extend([0x83, 0xC4, (4 * args.len()) as u8]);
    c.extend([0x50, 0x6A, 0x01]);
    calls.push((c.len() as u32, "DOSCALLS", 234));
    c.extend([0xE8, 0, 0, 0, 0]);
    (c, calls)
}

#[test]
fn collate_table_weighs_letters_by_their_capitals() {
    // DosQueryCollate(cb, COUNTRYCODE, table, &cbActual): 200 of the 256
    // bytes fit the scratch memory read back, so the table is truncated.
    let (o, mem) = run(nls_call(0, 850, 8, &[200, CC, BUF, 0x20008]));
    assert_eq!(o, Outcome::Exited(399), "ERROR_NLS_TABLE_TRUNCATED");
    assert_eq!(&mem[8..12], &200u32.to_le_bytes(), "cbActual");
    let table = &mem[0x10..0x10 + 200];
    assert_eq!(table[usize::from(b'a')], b'A');
    assert_eq!(table[usize::from(b'A')], b'A');
    assert_eq!(table[usize::from(b'1')], b'1');
    assert_eq!(table[0x82], 0x90, "e acute weighs as E acute in 850");
    let (o, _) = run(nls_call(1, 932, 8, &[256, CC, BUF, 0x20008]));
    assert_eq!(o, Outcome::Exited(476), "ERROR_CODE_PAGE_NOT_FOUND");
}
