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
