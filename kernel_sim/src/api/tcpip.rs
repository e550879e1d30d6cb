//! TCP32DLL: the address and host helpers of OS/2's TCP/IP 32-bit
//! library (`arpa/inet.h`, `sys/time.h`, `sys/itypes.h`), 32-bit
//! `_System` entries. The machine has no network; these are the calls
//! that need none, which command-line tools import for printing and
//! parsing addresses (the toolkit's WSFORMAT imports inet_ntoa).
//!
//! Decisions, where the headers leave room:
//! - **Address forms** are 4.3BSD's, as OS/2's stack takes them: one to
//!   four parts separated by dots, each decimal, octal (leading `0`) or
//!   hexadecimal (`0x`); with fewer than four parts the last fills the
//!   remaining bytes. Trailing white space ends the address; any other
//!   trailing character, an empty part or a part out of range makes
//!   inet_addr return INADDR_NONE (0xFFFFFFFF).
//! - **inet_ntoa** writes into one 18-byte buffer per process, which the
//!   next call overwrites (as the DLL's static buffer is).
//! - **The network split** (inet_lnaof, inet_netof, inet_makeaddr) is
//!   the classful one of 4.3BSD (class A, B, C by the top bits).
//! - **gettimeofday** reads the kernel's clock, which keeps UTC; the
//!   time zone it reports is 0 minutes west, no daylight saving.
//! - **gethostname** gives the HOSTNAME environment variable, as OS/2's
//!   TCP/IP configuration sets it, or `localhost` when it is unset. A
//!   name longer than the buffer is cut to it without a NUL (4.3BSD).
//! - **Bad pointers** end the run as an access violation would in the
//!   DLL's own code (see `uconv.rs`).

use super::uconv::{fault, write};
use super::{ApiDef, Call, Stop};
use crate::memory::RegionKind;
use crate::process::Process;

/// inet_addr's and inet_network's "not an address".
const INADDR_NONE: u32 = 0xFFFF_FFFF;

/// Longest address string read (a longer one is no address).
const MAX_ADDR: u32 = 256;

/// TCP32DLL's entries.
pub static DEFS: &[ApiDef] = &[
    api!("TCP32DLL" 2 "gettimeofday" Sys32 [P, P] raw gettimeofday),
    api!("TCP32DLL" 3 "lswap" Sys32 [L] raw |_, c| Ok(c.l(0).swap_bytes())),
    api!("TCP32DLL" 4 "bswap" Sys32 [L] raw |_, c| Ok(u32::from(c.w(0).swap_bytes()))),
    api!("TCP32DLL" 5 "inet_addr" Sys32 [S] raw |p, c| {
        let text = address_text(p, c.l(0))?;
        Ok(parse_parts(&text).and_then(|parts| pack(&parts)).map_or(INADDR_NONE, u32::swap_bytes))
    }),
    api!("TCP32DLL" 6 "inet_lnaof" Sys32 [L] raw |_, c| Ok(split(c.l(0).swap_bytes()).1)),
    api!("TCP32DLL" 7 "inet_netof" Sys32 [L] raw |_, c| Ok(split(c.l(0).swap_bytes()).0)),
    api!("TCP32DLL" 8 "inet_makeaddr" Sys32 [L, L] raw |_, c| Ok(make_addr(c.l(0), c.l(1)).swap_bytes())),
    api!("TCP32DLL" 9 "inet_network" Sys32 [S] raw |p, c| {
        let text = address_text(p, c.l(0))?;
        Ok(parse_parts(&text).map_or(INADDR_NONE, |parts| network(&parts)))
    }),
    api!("TCP32DLL" 10 "inet_ntoa" Sys32 [L] raw inet_ntoa),
    api!("TCP32DLL" 44 "gethostname" Sys32 [P, L] raw gethostname),
];

/// The string at `addr`, up to its NUL (at most [`MAX_ADDR`] bytes:
/// past that it is no address, and reads as an empty one).
fn address_text(p: &mut Process, addr: u32) -> Result<Vec<u8>, Stop> {
    if addr == 0 {
        return Err(fault(p, addr, false));
    }
    match p.read_sz(addr, false, MAX_ADDR) {
        Some(text) => Ok(text),
        // No NUL in the first MAX_ADDR bytes, all readable: too long.
        None if p.read_mem(addr, MAX_ADDR).is_some() => Ok(Vec::new()),
        None => Err(fault(p, addr, false)),
    }
}

/// One number of an address: decimal, octal (`0...`) or hex (`0x...`).
/// `None` for an empty part or one over 32 bits.
fn parse_number(s: &[u8]) -> Option<u32> {
    let (digits, radix) = match s {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16),
        [b'0', rest @ ..] if !rest.is_empty() => (rest, 8),
        _ => (s, 10),
    };
    if digits.is_empty() && radix != 16 {
        return None;
    }
    let mut v: u32 = 0;
    for &b in digits {
        let d = (b as char).to_digit(radix)?;
        v = v.checked_mul(radix)?.checked_add(d)?;
    }
    Some(v)
}

/// The dot-separated numbers of an address, 1 to 4 of them; white space
/// ends it.
fn parse_parts(text: &[u8]) -> Option<Vec<u32>> {
    let end = text
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let parts: Vec<u32> = text[..end]
        .split(|&b| b == b'.')
        .map(parse_number)
        .collect::<Option<_>>()?;
    (1..=4).contains(&parts.len()).then_some(parts)
}

/// The host-order address of 1 to 4 parts (a.b.c.d, a.b.c16, a.b24,
/// a32), or `None` when a part is out of its range.
fn pack(parts: &[u32]) -> Option<u32> {
    let (last, lead) = parts.split_last()?;
    if lead.iter().any(|&b| b > 0xFF) {
        return None;
    }
    let last_bits = 32 - 8 * lead.len() as u32;
    if last_bits < 32 && *last >> last_bits != 0 {
        return None;
    }
    Some(
        lead.iter()
            .enumerate()
            .fold(*last, |v, (i, &b)| v | b << (24 - 8 * i as u32)),
    )
}

/// inet_network: each part's low byte, the first the most significant.
fn network(parts: &[u32]) -> u32 {
    parts.iter().fold(0, |v, &b| v << 8 | (b & 0xFF))
}

/// A host-order address split into (network, local part) by its class.
fn split(a: u32) -> (u32, u32) {
    if a & 0x8000_0000 == 0 {
        (a >> 24, a & 0x00FF_FFFF)
    } else if a & 0xC000_0000 == 0x8000_0000 {
        (a >> 16, a & 0xFFFF)
    } else {
        (a >> 8, a & 0xFF)
    }
}

/// The host-order address of a network number and a local part.
fn make_addr(net: u32, host: u32) -> u32 {
    match net {
        0..0x80 => net << 24 | (host & 0x00FF_FFFF),
        0x80..0x1_0000 => net << 16 | (host & 0xFFFF),
        0x1_0000..0x100_0000 => net << 8 | (host & 0xFF),
        _ => net | host,
    }
}

/// inet_ntoa(in): "a.b.c.d" in the process's buffer.
fn inet_ntoa(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let [a, b, cc, d] = c.l(0).to_le_bytes();
    let mut text = format!("{a}.{b}.{cc}.{d}").into_bytes();
    text.push(0);
    let buf = match p.pcb.inet_ntoa_buf {
        0 => {
            let Ok(base) = p.alloc_tiled(18, RegionKind::System) else {
                return Err(fault(p, 0, true));
            };
            p.pcb.inet_ntoa_buf = base;
            base
        }
        b => b,
    };
    write(p, buf, &text)?;
    Ok(buf)
}

/// gettimeofday(&timeval, &timezone): 0.
fn gettimeofday(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (tv, tz) = (c.l(0), c.l(1));
    if tv != 0 {
        let secs = p.now().unix_seconds();
        let micros = (p.now_millis() % 1000) as u32 * 1000;
        let mut b = secs.to_le_bytes().to_vec();
        b.extend(micros.to_le_bytes());
        write(p, tv, &b)?;
    }
    if tz != 0 {
        write(p, tz, &[0; 8])?;
    }
    Ok(0)
}

/// gethostname(name, namelen): 0, or -1 for a negative length.
fn gethostname(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (at, len) = (c.l(0), c.l(1) as i32);
    if len < 0 {
        return Ok(u32::MAX);
    }
    let mut name = p
        .cfg
        .env
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("HOSTNAME"))
        .map_or_else(|| b"localhost".to_vec(), |(_, v)| v.as_bytes().to_vec());
    name.push(0);
    name.truncate(len as usize);
    write(p, at, &name)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> u32 {
        parse_parts(s.as_bytes())
            .and_then(|p| pack(&p))
            .unwrap_or(INADDR_NONE)
    }

    #[test]
    fn address_forms_of_one_to_four_parts() {
        assert_eq!(addr("127.0.0.1"), 0x7F00_0001);
        assert_eq!(addr("10.1.258"), 0x0A01_0102);
        assert_eq!(addr("10.65536"), 0x0A01_0000);
        assert_eq!(addr("0x7f000001"), 0x7F00_0001);
        assert_eq!(addr("0177.0.0.01"), 0x7F00_0001);
        assert_eq!(addr("1.2.3.4 trailing"), 0x0102_0304);
        assert_eq!(addr("0x.0.0.0"), 0);
    }

    #[test]
    fn malformed_addresses_are_inaddr_none() {
        for bad in [
            "",
            "1..2",
            "256.0.0.1",
            "1.2.3.4.5",
            "1.2.3.256",
            "1.2.65536",
            "08.1.1.1",
            "1.2.3.4x",
            "4294967296",
        ] {
            assert_eq!(addr(bad), INADDR_NONE, "{bad:?}");
        }
    }

    #[test]
    fn classful_split_and_make_are_inverse() {
        for a in [0x0A01_0203u32, 0x8001_0203, 0xC001_0203] {
            let (net, host) = split(a);
            assert_eq!(make_addr(net, host), a, "{a:08x}");
        }
        assert_eq!(split(0x0A01_0203), (0x0A, 0x01_0203));
        assert_eq!(split(0xAC10_0001), (0xAC10, 1));
        assert_eq!(split(0xC0A8_0101), (0xC0_A801, 1));
        assert_eq!(network(&[10, 1, 2]), 0x0A_0102);
    }
}
