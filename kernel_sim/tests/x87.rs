//! The x87 arithmetic the kernel emulates when the machine raises #UD
//! for it: a program converts a 64-bit integer, multiplies, compares and
//! stores, as compiled C does.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

const DATA: u32 = 0x20000;

#[test]
fn integer_and_double_arithmetic_with_a_compare() {
    let mut c = Vec::new();
    let store = |c: &mut Vec<u8>, at: u32, v: u32| {
        c.extend([0xC7, 0x05]);
        c.extend(at.to_le_bytes());
        c.extend(v.to_le_bytes());
    };
    // DATA: i64 1_000_000_007; DATA+8: f64 2.5; results from DATA+0x20.
    store(&mut c, DATA, 1_000_000_007);
    store(&mut c, DATA + 4, 0);
    let d = 2.5f64.to_bits();
    store(&mut c, DATA + 8, d as u32);
    store(&mut c, DATA + 12, (d >> 32) as u32);
    let m = |c: &mut Vec<u8>, op: &[u8], at: u32| {
        c.extend(op);
        c.extend(at.to_le_bytes());
    };
    m(&mut c, &[0xDF, 0x2D], DATA); // fild qword [DATA]
    m(&mut c, &[0xDC, 0x0D], DATA + 8); // fmul qword [DATA+8]
    m(&mut c, &[0xDD, 0x15], DATA + 0x20); // fst qword [DATA+0x20]
    m(&mut c, &[0xDB, 0x1D], DATA + 0x28); // fistp dword [DATA+0x28] (nearest even)
    c.extend([0xD9, 0xE8]); // fld1
    m(&mut c, &[0xDC, 0x1D], DATA + 8); // fcomp qword [DATA+8]: 1 < 2.5
    c.extend([0xDF, 0xE0]); // fnstsw ax
    m(&mut c, &[0x66, 0xA3], DATA + 0x2C); // mov [DATA+0x2C], ax
    c.extend([0xD9, 0xEE, 0xD9, 0xE8]); // fldz; fld1
    c.extend([0xDE, 0xF9]); // fdivp st(1), st(0): 0 / 1 ... st(1)=st(1)/st(0)
    c.extend([0xD9, 0xE0]); // fchs
    m(&mut c, &[0xD9, 0x1D], DATA + 0x30); // fstp dword [DATA+0x30]
    c.extend([0x6A, 0x00, 0x6A, 0x01]);
    let calls = vec![(c.len() as u32, "DOSCALLS", 234)];
    c.extend([0xE8, 0, 0, 0, 0]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), common::lx_program(&c, &calls)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(100_000);
    let mut p = Process::new(cfg).unwrap();
    assert_eq!(p.run(), Outcome::Exited(0));
    let mut b = [0u8; 0x14];
    p.read_guest(DATA + 0x20, &mut b).unwrap();
    let prod = f64::from_le_bytes(b[..8].try_into().unwrap());
    assert_eq!(prod, 2_500_000_017.5);
    // 2_500_000_017.5 does not fit an i32: the integer indefinite.
    assert_eq!(i32::from_le_bytes(b[8..12].try_into().unwrap()), i32::MIN);
    let sw = u16::from_le_bytes([b[12], b[13]]);
    assert_eq!(sw & 0x4500, 0x0100, "C0 set: 1.0 < 2.5 ({sw:#06x})");
    assert_eq!((sw >> 11) & 7, 0, "the stack is empty again");
    let z = f32::from_le_bytes(b[16..20].try_into().unwrap());
    assert!(z == 0.0 && z.is_sign_negative(), "{z}");
}

/// A 32-bit program: `code`, then DosExit(1, 0). Runs it and returns
/// `len` bytes at DATA.
fn run_code(mut c: Vec<u8>, len: usize) -> Vec<u8> {
    c.extend([0x6A, 0x00, 0x6A, 0x01]);
    let calls = vec![(c.len() as u32, "DOSCALLS", 234)];
    c.extend([0xE8, 0, 0, 0, 0]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), common::lx_program(&c, &calls)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(100_000);
    let mut p = Process::new(cfg).unwrap();
    assert_eq!(p.run(), Outcome::Exited(0));
    let mut b = vec![0u8; len];
    p.read_guest(DATA, &mut b).unwrap();
    b
}

/// `op` then a 32-bit address.
fn at(c: &mut Vec<u8>, op: &[u8], a: u32) {
    c.extend(op);
    c.extend(a.to_le_bytes());
}

fn w(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

fn d(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap())
}

/// pi and 1.0 as 80-bit values, worked out by hand: pi's double is
/// 0x400921FB54442D18, so its extended mantissa is 1.921FB54442D18 << 11
/// = 0xC90FDAA22168C000 and its exponent 0x4000.
const PI80: [u8; 10] = [0x00, 0xC0, 0x68, 0x21, 0xA2, 0xDA, 0x0F, 0xC9, 0x00, 0x40];
const ONE80: [u8; 10] = [0, 0, 0, 0, 0, 0, 0, 0x80, 0xFF, 0x3F];

#[test]
fn fsave_and_frstor_in_the_32_and_16_bit_layouts() {
    let mut c = Vec::new();
    c.extend([0xDB, 0xE3]); // 0x10000 fninit
    c.extend([0xD9, 0xE8]); // 0x10002 fld1
    c.extend([0xD9, 0xEB]); // 0x10004 fldpi
    at(&mut c, &[0xDD, 0x35], DATA); // fnsave [DATA] (108 bytes)
    c.extend([0xDF, 0xE0]); // fnstsw ax
    at(&mut c, &[0x66, 0xA3], DATA + 0x200); // mov [DATA+0x200], ax
    at(&mut c, &[0xD9, 0x3D], DATA + 0x202); // fnstcw [DATA+0x202]
    at(&mut c, &[0xDD, 0x25], DATA); // frstor [DATA]
    at(&mut c, &[0x66, 0xDD, 0x35], DATA + 0x100); // fnsave (94 bytes)
    at(&mut c, &[0x66, 0xDD, 0x25], DATA + 0x100); // frstor (94 bytes)
    c.extend([0xDF, 0xE0]); // fnstsw ax
    at(&mut c, &[0x66, 0xA3], DATA + 0x204);
    at(&mut c, &[0xDD, 0x1D], DATA + 0x210); // fstp qword: pi
    at(&mut c, &[0xDD, 0x1D], DATA + 0x218); // fstp qword: 1.0
    let b = run_code(c, 0x220);
    // 32-bit: CW, SW (TOP 6), TW (physical 6 and 7 valid, the rest
    // empty), FIP (FLDPI), FCS and the opcode 0x1EB (D9 EB), FDP and FDS
    // (no memory operand yet), all dwords.
    let flat_cs = u32::from(kernel_sim::layout::FLAT_CS);
    assert_eq!(
        [
            d(&b, 0),
            d(&b, 4),
            d(&b, 8),
            d(&b, 12),
            d(&b, 16),
            d(&b, 20),
            d(&b, 24)
        ],
        [0x037F, 0x3000, 0x0FFF, 0x10004, 0x01EB_0000 | flat_cs, 0, 0]
    );
    assert_eq!(b[28..38], PI80);
    assert_eq!(b[38..48], ONE80);
    // FSAVE initialized the unit: SW 0, CW 0x037F.
    assert_eq!((w(&b, 0x200), w(&b, 0x202)), (0, 0x037F));
    // 16-bit: CW, SW, TW, FIP's offset, FCS, FDP, FDS, all words; then
    // the registers.
    let s = &b[0x100..];
    assert_eq!(
        [
            w(s, 0),
            w(s, 2),
            w(s, 4),
            w(s, 6),
            w(s, 8),
            w(s, 10),
            w(s, 12)
        ],
        [0x037F, 0x3000, 0x0FFF, 0x0004, flat_cs as u16, 0, 0]
    );
    assert_eq!(s[14..24], PI80);
    assert_eq!(s[24..34], ONE80);
    // Restored from it: TOP 6 again, and the values.
    assert_eq!(w(&b, 0x204), 0x3000);
    let q = |i: usize| f64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    assert_eq!((q(0x210), q(0x218)), (std::f64::consts::PI, 1.0));
}

#[test]
fn fstenv_masks_exceptions_and_fldenv_restores_them() {
    let mut c = Vec::new();
    // DATA+0x40: the control word 0x0360 (all exceptions unmasked);
    // DATA+0x48: 2.5.
    c.extend([0xC7, 0x05]);
    c.extend((DATA + 0x40).to_le_bytes());
    c.extend(0x0360u32.to_le_bytes());
    c.extend([0xC7, 0x05]);
    c.extend((DATA + 0x48).to_le_bytes());
    c.extend(0u32.to_le_bytes());
    c.extend([0xC7, 0x05]);
    c.extend((DATA + 0x4C).to_le_bytes());
    c.extend(0x4004_0000u32.to_le_bytes());
    c.extend([0xDB, 0xE3]); // fninit
    at(&mut c, &[0xD9, 0x2D], DATA + 0x40); // fldcw
    at(&mut c, &[0xDD, 0x05], DATA + 0x48); // fld qword [DATA+0x48]
    at(&mut c, &[0xD9, 0x35], DATA); // fnstenv [DATA] (28 bytes)
    at(&mut c, &[0xD9, 0x3D], DATA + 0x50); // fnstcw: masked now
    at(&mut c, &[0xD9, 0x25], DATA); // fldenv [DATA]
    at(&mut c, &[0xD9, 0x3D], DATA + 0x52); // fnstcw: as it was
    at(&mut c, &[0xDD, 0x1D], DATA + 0x58); // fstp qword
    let b = run_code(c, 0x60);
    let flat_ds = u32::from(kernel_sim::layout::FLAT_DS);
    let flat_cs = u32::from(kernel_sim::layout::FLAT_CS);
    // FLD m64 (DD 05 ...): opcode 0x505, its operand DS:DATA+0x48; the
    // register 7 holds 2.5 (valid), the others are empty.
    assert_eq!(
        [
            d(&b, 0),
            d(&b, 4),
            d(&b, 8),
            d(&b, 16),
            d(&b, 20),
            d(&b, 24)
        ],
        [
            0x0360,
            0x3800,
            0x3FFF,
            0x0505_0000 | flat_cs,
            DATA + 0x48,
            flat_ds
        ]
    );
    assert_eq!((w(&b, 0x50), w(&b, 0x52)), (0x037F, 0x0360));
    assert_eq!(f64::from_le_bytes(b[0x58..0x60].try_into().unwrap()), 2.5);
}

#[test]
fn fbld_and_fbstp_round_trip_packed_bcd() {
    let mut c = Vec::new();
    // DATA: -12345678901234 as packed BCD; DATA+0x10: 1e19 (f64).
    let bcd: [u8; 10] = [0x34, 0x12, 0x90, 0x78, 0x56, 0x34, 0x12, 0, 0, 0x80];
    for (i, ch) in bcd.chunks(2).enumerate() {
        c.extend([0x66, 0xC7, 0x05]);
        c.extend((DATA + 2 * i as u32).to_le_bytes());
        c.extend([ch[0], ch[1]]);
    }
    let big = 1e19f64.to_bits();
    for (i, v) in [big as u32, (big >> 32) as u32].into_iter().enumerate() {
        c.extend([0xC7, 0x05]);
        c.extend((DATA + 0x10 + 4 * i as u32).to_le_bytes());
        c.extend(v.to_le_bytes());
    }
    c.extend([0xDB, 0xE3]); // fninit
    at(&mut c, &[0xDF, 0x25], DATA); // fbld [DATA]
    c.extend([0xD9, 0xC0]); // fld st(0)
    at(&mut c, &[0xDF, 0x3D], DATA + 0x20); // fistp qword [DATA+0x20]
    at(&mut c, &[0xDF, 0x35], DATA + 0x30); // fbstp [DATA+0x30]
    at(&mut c, &[0xDD, 0x05], DATA + 0x10); // fld qword 1e19
    at(&mut c, &[0xDF, 0x35], DATA + 0x40); // fbstp: too big
    c.extend([0xDF, 0xE0]); // fnstsw ax
    at(&mut c, &[0x66, 0xA3], DATA + 0x50);
    let b = run_code(c, 0x60);
    assert_eq!(
        i64::from_le_bytes(b[0x20..0x28].try_into().unwrap()),
        -12_345_678_901_234
    );
    assert_eq!(b[0x30..0x3A], bcd);
    assert_eq!(b[0x40..0x4A], [0, 0, 0, 0, 0, 0, 0, 0xC0, 0xFF, 0xFF]);
    assert_eq!((w(&b, 0x50) >> 11) & 7, 0, "both FBSTPs popped");
}

#[test]
fn fcomi_sets_eflags_and_fcmov_moves_on_them() {
    let mut c = Vec::new();
    let flags = |c: &mut Vec<u8>, a: u32| {
        c.push(0x9C); // pushfd
        c.push(0x58); // pop eax
        at(c, &[0xA3], a); // mov [a], eax
    };
    c.extend([0xDB, 0xE3]); // fninit
    c.extend([0xD9, 0xE8, 0xD9, 0xEE]); // fld1; fldz: st0 0, st1 1
    c.extend([0xDB, 0xF1]); // fcomi st, st(1): 0 < 1
    flags(&mut c, DATA);
    c.extend([0xDA, 0xC1]); // fcmovb st, st(1): CF set, st0 = 1
    c.extend([0xDB, 0xF1]); // fcomi: equal
    flags(&mut c, DATA + 4);
    c.extend([0xD9, 0xEE]); // fldz: st0 0, st1 1, st2 1
    c.extend([0xDB, 0xC1]); // fcmovnb st, st(1): CF is clear, st0 = 1
    c.extend([0xDF, 0xF1]); // fcomip st, st(1): 1 == 1, pops
    flags(&mut c, DATA + 8);
    // 0/0 is a NaN: unordered.
    c.extend([0xD9, 0xEE, 0xD9, 0xEE, 0xDE, 0xF9]); // fldz; fldz; fdivp
    c.extend([0xDF, 0xE9]); // fucomip st, st(1): unordered, pops
    flags(&mut c, DATA + 12);
    c.extend([0xDF, 0xE0]); // fnstsw ax
    at(&mut c, &[0x66, 0xA3], DATA + 16);
    let b = run_code(c, 0x14);
    let zpc = |v: u32| v & 0x45;
    assert_eq!(zpc(d(&b, 0)), 0x01, "0 < 1: CF");
    assert_eq!(zpc(d(&b, 4)), 0x40, "1 == 1 after FCMOVB: ZF");
    assert_eq!(zpc(d(&b, 8)), 0x40, "FCMOVNB moved 1 over 0: ZF");
    assert_eq!(zpc(d(&b, 12)), 0x45, "unordered: ZF PF CF");
    // Loaded five, popped two (FCOMIP, FUCOMIP) and one (FDIVP): TOP 6.
    assert_eq!((w(&b, 16) >> 11) & 7, 6);
}
