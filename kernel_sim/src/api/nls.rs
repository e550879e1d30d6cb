//! NLS: country information, the DBCS environment and case mapping, in
//! their 16-bit (NLS.1-4) and 32-bit (NLS.5-7) entries. The IBM C
//! runtime asks for the DBCS environment first thing at start-up.
//!
//! The system is the United States (country 1) with code page 437, and
//! also knows code page 850. A COUNTRYCODE of 0 means "the current
//! country / code page of the process". Both code pages are single-byte:
//! their DBCS lead-byte range list is empty (just the terminating pair of
//! zeros). Case mapping follows the code page's upper-case table:
//! accented small letters become their capitals where the code page has
//! them (437 has fewer: `é` 0x82 becomes `É` 0x90, `â` 0x83 becomes `A`).

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// The NLS entries.
pub static DEFS: &[ApiDef] = &[
    api!("NLS" 1 "DosCaseMap" Far16 [W, P, P] map_case),
    api!("NLS" 2 "DosGetCollate" Far16 [W, P, P, P] query_collate),
    api!("NLS" 3 "DosGetCtryInfo" Far16 [W, P, P, P] query_ctry_info),
    api!("NLS" 4 "DosGetDBCSEv" Far16 [W, P, P] query_dbcs_env),
    api!("NLS" 5 "DosQueryCtryInfo" Sys32 [L, P, P, P] query_ctry_info),
    api!("NLS" 6 "DosQueryDBCSEnv" Sys32 [L, P, P] query_dbcs_env),
    api!("NLS" 7 "DosMapCase" Sys32 [L, P, P] map_case),
    api!("NLS" 8 "DosQueryCollate" Sys32 [L, P, P, P] query_collate),
];

/// The country of the system.
const COUNTRY_US: u32 = 1;
/// The process's code page.
const CODE_PAGE: u32 = 437;

/// Reads the COUNTRYCODE at argument `i` (two USHORTs in 16-bit calls,
/// two ULONGs in 32-bit ones) and resolves 0s: (country, code page).
fn country_code(p: &mut Process, c: &Call, i: usize) -> ApiResult<(u32, u32)> {
    let (country, cp) = if c.far16 {
        let b = p.arg_bytes(c, i, 4)?;
        (
            u32::from(u16::from_le_bytes([b[0], b[1]])),
            u32::from(u16::from_le_bytes([b[2], b[3]])),
        )
    } else {
        let b = p.arg_bytes(c, i, 8)?;
        (
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        )
    };
    let country = if country == 0 { COUNTRY_US } else { country };
    if country != COUNTRY_US {
        return Err(ERROR_NLS_NO_CTRY_CODE);
    }
    let cp = if cp == 0 { CODE_PAGE } else { cp };
    if cp != 437 && cp != 850 {
        return Err(ERROR_CODE_PAGE_NOT_FOUND);
    }
    Ok((country, cp))
}

/// DosQueryDBCSEnv(cb, COUNTRYCODE, buffer) / DosGetDBCSEv: the list of
/// DBCS lead-byte ranges, ended by a pair of zeros; empty for 437 and
/// 850. A buffer under 2 bytes gets what fits and
/// ERROR_NLS_TABLE_TRUNCATED.
fn query_dbcs_env(p: &mut Process, c: &Call) -> ApiResult<()> {
    country_code(p, c, 1)?;
    let table = [0u8, 0];
    let n = (c.l(0) as usize).min(table.len());
    if n > 0 {
        p.put_bytes(c, 2, &table[..n])?;
    }
    if n < table.len() {
        return Err(ERROR_NLS_TABLE_TRUNCATED);
    }
    Ok(())
}

/// DosQueryCollate(cb, COUNTRYCODE, table, &cbActual) / DosGetCollate:
/// the 256-byte sort-weight table of the code page. A byte's weight is
/// its upper-case form ([`upper`]), so sorting ignores case and puts an
/// accented letter with the capital the code page gives it (with the
/// plain letter where it has no capital of its own). A shorter buffer
/// gets what fits and ERROR_NLS_TABLE_TRUNCATED; cbActual gets the bytes
/// stored.
fn query_collate(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (_, cp) = country_code(p, c, 1)?;
    let table: Vec<u8> = (0..=255u8).map(|b| upper(cp, b)).collect();
    let n = (c.l(0) as usize).min(table.len());
    if n > 0 {
        p.put_bytes(c, 2, &table[..n])?;
    }
    if c.far16 {
        p.put_u16(c, 3, n as u16)?;
    } else {
        p.put_u32(c, 3, n as u32)?;
    }
    if n < table.len() {
        return Err(ERROR_NLS_TABLE_TRUNCATED);
    }
    Ok(())
}

/// DosQueryCtryInfo(cb, COUNTRYCODE, COUNTRYINFO, &cbActual) /
/// DosGetCtryInfo: the United States' formats (date mm-dd-yy, `$`, `,`
/// thousands, `.` decimal, `-` date and `:` time separators, 12-hour
/// time, two decimals, `,` list separator). The 16-bit COUNTRYINFO has
/// USHORT country, code page and date format (38 bytes), the 32-bit one
/// ULONGs (44 bytes). A shorter buffer gets what fits and
/// ERROR_NLS_TABLE_TRUNCATED; cbActual gets the bytes stored.
fn query_ctry_info(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (country, cp) = country_code(p, c, 1)?;
    let mut info = Vec::with_capacity(44);
    let number = |v: u32, info: &mut Vec<u8>| {
        if c.far16 {
            info.extend((v as u16).to_le_bytes());
        } else {
            info.extend(v.to_le_bytes());
        }
    };
    number(country, &mut info);
    number(cp, &mut info);
    number(0, &mut info); // fsDateFmt: 0 = mm dd yy
    info.extend(b"$\0\0\0\0"); // szCurrency
    info.extend(b",\0"); // szThousandsSeparator
    info.extend(b".\0"); // szDecimal
    info.extend(b"-\0"); // szDateSeparator
    info.extend(b":\0"); // szTimeSeparator
    info.push(0); // fsCurrencyFmt: symbol before, no space
    info.push(2); // cDecimalPlace
    info.push(0); // fsTimeFmt: 12-hour
    info.extend([0; 4]); // abReserved1
    info.extend(b",\0"); // szDataSeparator
    info.extend([0; 10]); // abReserved2
    let n = (c.l(0) as usize).min(info.len());
    if n > 0 {
        p.put_bytes(c, 2, &info[..n])?;
    }
    if c.far16 {
        p.put_u16(c, 3, n as u16)?;
    } else {
        p.put_u32(c, 3, n as u32)?;
    }
    if n < info.len() {
        return Err(ERROR_NLS_TABLE_TRUNCATED);
    }
    Ok(())
}

/// Code page 437's capitals of its accented small letters (the rest of
/// its accented letters have no capital and map to the plain letter).
const UPPER_437: &[(u8, u8)] = &[
    (0x81, 0x9A),
    (0x82, 0x90),
    (0x83, b'A'),
    (0x84, 0x8E),
    (0x85, b'A'),
    (0x86, 0x8F),
    (0x87, 0x80),
    (0x88, b'E'),
    (0x89, b'E'),
    (0x8A, b'E'),
    (0x8B, b'I'),
    (0x8C, b'I'),
    (0x8D, b'I'),
    (0x91, 0x92),
    (0x93, b'O'),
    (0x94, 0x99),
    (0x95, b'O'),
    (0x96, b'U'),
    (0x97, b'U'),
    (0x98, b'Y'),
    (0xA0, b'A'),
    (0xA1, b'I'),
    (0xA2, b'O'),
    (0xA3, b'U'),
    (0xA4, 0xA5),
];

/// Code page 850's capitals of its accented small letters (`ÿ` has no
/// capital in 850 and maps to `Y`; `ß` stays).
const UPPER_850: &[(u8, u8)] = &[
    (0x81, 0x9A),
    (0x82, 0x90),
    (0x83, 0xB6),
    (0x84, 0x8E),
    (0x85, 0xB7),
    (0x86, 0x8F),
    (0x87, 0x80),
    (0x88, 0xD2),
    (0x89, 0xD3),
    (0x8A, 0xD4),
    (0x8B, 0xD8),
    (0x8C, 0xD7),
    (0x8D, 0xDE),
    (0x91, 0x92),
    (0x93, 0xE2),
    (0x94, 0x99),
    (0x95, 0xE3),
    (0x96, 0xEA),
    (0x97, 0xEB),
    (0x98, b'Y'),
    (0x9B, 0x9D),
    (0xA0, 0xB5),
    (0xA1, 0xD6),
    (0xA2, 0xE0),
    (0xA3, 0xE9),
    (0xA4, 0xA5),
    (0xC6, 0xC7),
    (0xD0, 0xD1),
    (0xE4, 0xE5),
    (0xE7, 0xE8),
    (0xEC, 0xED),
];

/// The upper-case form of a byte in a code page.
pub fn upper(cp: u32, b: u8) -> u8 {
    if b.is_ascii_lowercase() {
        return b.to_ascii_uppercase();
    }
    let table = if cp == 850 { UPPER_850 } else { UPPER_437 };
    table.iter().find(|(l, _)| *l == b).map_or(b, |(_, u)| *u)
}

/// DosMapCase(cb, COUNTRYCODE, string) / DosCaseMap: the `cb` bytes
/// become upper case in place, in pieces of at most 4 KB (the length is
/// the guest's).
fn map_case(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (_, cp) = country_code(p, c, 1)?;
    let len = if c.far16 { c.l(0) & 0xFFFF } else { c.l(0) };
    if len == 0 {
        return Ok(());
    }
    let lin = p.arg_ptr(c, 2, len)?;
    let mut done = 0u32;
    while done < len {
        let n = (len - done).min(4096);
        let at = lin.wrapping_add(done);
        let mut s = p.read_mem(at, n).ok_or(ERROR_INVALID_ADDRESS)?;
        for b in &mut s {
            *b = upper(cp, *b);
        }
        if !p.write_mem(at, &s) {
            return Err(ERROR_INVALID_ADDRESS);
        }
        done += n;
    }
    Ok(())
}
