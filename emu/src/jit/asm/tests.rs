//! [`Asm`] against iced-x86's `CodeAssembler`: every method the emitter
//! uses, on random registers of every size (AH..BH and the REX-only byte
//! registers among them), memory operands (every base, index and scale,
//! no base, displacements of every size) and immediates (both imm8 and
//! full forms, the accumulator forms): the same bytes, or both refuse.

use super::{self as asm, Addr, Asm, Gp, MemOp};
use iced_x86::Register;
use iced_x86::code_asm::{self as ia, AsmMemoryOperand, CodeAssembler};

/// A random operand pair's iced side.
#[derive(Clone, Copy)]
enum I {
    R8(ia::AsmRegister8),
    R16(ia::AsmRegister16),
    R32(ia::AsmRegister32),
    R64(ia::AsmRegister64),
    M(AsmMemoryOperand),
    Imm(i32),
}

struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const R64: [Register; 16] = [
    Register::RAX,
    Register::RCX,
    Register::RDX,
    Register::RBX,
    Register::RSP,
    Register::RBP,
    Register::RSI,
    Register::RDI,
    Register::R8,
    Register::R9,
    Register::R10,
    Register::R11,
    Register::R12,
    Register::R13,
    Register::R14,
    Register::R15,
];

/// A random register of `size` bytes, ours and iced's.
fn reg(r: &mut Rng, size: u8) -> (Gp, I) {
    let n = r.next(16) as u8;
    match size {
        1 => {
            // 0..16: AL..R15L as iced numbers them (4..7 = AH..BH), then
            // 16..20: SPL..DIL.
            let k = r.next(20) as u8;
            let (ours, iced) = match k {
                0..=3 => (Gp::new(k, 1, false), Register::AL as u32 + u32::from(k)),
                4..=7 => (Gp::new(k - 4, 1, true), Register::AL as u32 + u32::from(k)),
                8..=15 => (
                    Gp::new(k, 1, false),
                    Register::R8L as u32 + u32::from(k - 8),
                ),
                _ => (
                    Gp::new(k - 12, 1, false),
                    Register::SPL as u32 + u32::from(k - 16),
                ),
            };
            let iced = Register::values().nth(iced as usize).expect("a register");
            (ours, I::R8(ia::get_gpr8(iced).expect("gpr8")))
        }
        2 => (
            Gp::new(n, 2, false),
            I::R16(
                ia::get_gpr16(
                    Register::values()
                        .nth(Register::AX as usize + usize::from(n))
                        .expect("r"),
                )
                .expect("gpr16"),
            ),
        ),
        4 => (
            Gp::new(n, 4, false),
            I::R32(
                ia::get_gpr32(
                    Register::values()
                        .nth(Register::EAX as usize + usize::from(n))
                        .expect("r"),
                )
                .expect("gpr32"),
            ),
        ),
        _ => (
            Gp::new(n, 8, false),
            I::R64(ia::get_gpr64(R64[usize::from(n)]).expect("gpr64")),
        ),
    }
}

/// A random memory operand of `size` bytes.
fn mem(r: &mut Rng, size: u8) -> (MemOp, I) {
    let disps = [0, 1, -1, 0x7F, 0x80, -0x80, -0x81, 0x1234_5678, i32::MIN];
    let disp = disps[r.next(disps.len() as u64) as usize];
    let base = (r.next(8) != 0).then(|| r.next(16) as u8);
    let index = (base.is_none() || r.next(2) == 0).then(|| {
        let i = r.next(15) as u8;
        if i >= 4 { i + 1 } else { i }
    });
    let scale = [1u8, 2, 4, 8][r.next(4) as usize];
    let scale = if index.is_some() { scale } else { 1 };
    let ours = Addr::new(base, index, scale, disp);
    let g = |n: u8| ia::get_gpr64(R64[usize::from(n)]).expect("gpr64");
    let iced: AsmMemoryOperand = match (base, index) {
        (Some(b), Some(i)) => g(b) + g(i) * u32::from(scale) + disp,
        (Some(b), None) => g(b) + disp,
        (None, Some(i)) => g(i) * u32::from(scale) + disp,
        (None, None) => unreachable!(),
    };
    let (ours, iced) = match size {
        1 => (asm::byte_ptr(ours), ia::byte_ptr(iced)),
        2 => (asm::word_ptr(ours), ia::word_ptr(iced)),
        4 => (asm::dword_ptr(ours), ia::dword_ptr(iced)),
        _ => (asm::qword_ptr(ours), ia::qword_ptr(iced)),
    };
    (ours, I::M(iced))
}

/// A random immediate for an operand of `size` bytes (imm8 and full).
fn imm(r: &mut Rng, size: u8) -> i32 {
    let v = [
        0,
        1,
        2,
        0x7F,
        -0x80,
        -1,
        0x80,
        0x7FFF,
        -0x8000,
        0x1234_5678,
        i32::MIN,
    ][r.next(11) as usize];
    match size {
        1 => i32::from(v as i8),
        2 => i32::from(v as i16),
        _ => v,
    }
}

/// Compare: `ours` and `iced` both refuse, or give the same bytes.
fn same(
    what: &str,
    ours: (Asm, Result<(), asm::AsmError>),
    iced: (CodeAssembler, Result<(), iced_x86::IcedError>),
) {
    let (a, ra) = ours;
    let (mut c, rc) = iced;
    let ib = rc.ok().and_then(|_| c.assemble(0).ok());
    match (ra, ib) {
        (Ok(()), Some(ib)) => assert_eq!(a.bytes(), &ib[..], "{what}"),
        (Err(_), None) => {}
        (ra, ib) => panic!("{what}: ours {ra:?}, iced {ib:02X?}"),
    }
}

fn pair() -> (Asm, CodeAssembler) {
    (Asm::default(), CodeAssembler::new(64).expect("64-bit"))
}

macro_rules! two {
    ($m:ident, $r:expr, $forms:expr) => {{
        let r: &mut Rng = $r;
        for _ in 0..4000 {
            let size = [1u8, 2, 4, 8][r.next(4) as usize];
            let form = $forms[r.next($forms.len() as u64) as usize];
            let (d, di) = if form == "mi" || form == "mr" { let (m, i) = mem(r, size); (asm::Opnd::from(m), i) } else { let (g, i) = reg(r, size); (asm::Opnd::from(g), i) };
            let (s, si) = match form {
                "rr" | "mr" => { let (g, i) = reg(r, size); (asm::Opnd::from(g), i) }
                "rm" => { let (m, i) = mem(r, size); (asm::Opnd::from(m), i) }
                _ => { let v = imm(r, size); (asm::Opnd::from(v), I::Imm(v)) }
            };
            let (mut a, mut c) = pair();
            let ra = a.$m(d, s);
            let rc = match (di, si) {
                (I::R8(d), I::R8(s)) => c.$m(d, s),
                (I::R16(d), I::R16(s)) => c.$m(d, s),
                (I::R32(d), I::R32(s)) => c.$m(d, s),
                (I::R64(d), I::R64(s)) => c.$m(d, s),
                (I::M(d), I::R8(s)) => c.$m(d, s),
                (I::M(d), I::R16(s)) => c.$m(d, s),
                (I::M(d), I::R32(s)) => c.$m(d, s),
                (I::M(d), I::R64(s)) => c.$m(d, s),
                (I::R8(d), I::Imm(v)) => c.$m(d, v),
                (I::R16(d), I::Imm(v)) => c.$m(d, v),
                (I::R32(d), I::Imm(v)) => c.$m(d, v),
                (I::R64(d), I::Imm(v)) => two!(@ri64 $m, c, d, v),
                (I::M(d), I::Imm(v)) => c.$m(d, v),
                (d, I::M(s)) => two!(@rm $m, c, d, s),
                _ => unreachable!(),
            };
            same(&format!("{} {form} {d:?}, {s:?}", stringify!($m)), (a, ra), (c, rc));
        }
    }};
    (@rm test, $c:expr, $d:expr, $s:expr) => {{ let _ = ($d, $s); unreachable!() }};
    // (The emitter moves no immediate to a 64-bit register.)
    (@ri64 mov, $c:expr, $d:expr, $v:expr) => {{ let _ = ($d, $v); continue }};
    (@ri64 $m:ident, $c:expr, $d:expr, $v:expr) => { $c.$m($d, $v) };
    (@rm $m:ident, $c:expr, $d:expr, $s:expr) => {
        match $d {
            I::R8(d) => $c.$m(d, $s),
            I::R16(d) => $c.$m(d, $s),
            I::R32(d) => $c.$m(d, $s),
            I::R64(d) => $c.$m(d, $s),
            _ => unreachable!(),
        }
    };
}

#[test]
fn two_operand_ops_encode_as_iceds() {
    let r = &mut Rng(0x2545_F491_4F6C_DD1D);
    let all = ["rr", "mr", "rm", "ri", "mi"];
    two!(add, r, all);
    two!(or, r, all);
    two!(adc, r, all);
    two!(sbb, r, all);
    two!(and, r, all);
    two!(sub, r, all);
    two!(xor, r, all);
    two!(cmp, r, all);
    two!(mov, r, all);
    two!(test, r, ["rr", "mr", "ri", "mi"]);
}

#[test]
fn one_operand_ops_encode_as_iceds() {
    let r = &mut Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..20_000 {
        let size = [1u8, 2, 4, 8][r.next(4) as usize];
        let (d, di) = if r.next(2) == 0 {
            let (m, i) = mem(r, size);
            (asm::Opnd::from(m), i)
        } else {
            let (g, i) = reg(r, size);
            (asm::Opnd::from(g), i)
        };
        let op = r.next(4);
        let (mut a, mut c) = pair();
        macro_rules! call {
            ($m:ident) => {{
                let ra = a.$m(d);
                let rc = match di {
                    I::R8(d) => c.$m(d),
                    I::R16(d) => c.$m(d),
                    I::R32(d) => c.$m(d),
                    I::R64(d) => c.$m(d),
                    I::M(d) => c.$m(d),
                    I::Imm(_) => unreachable!(),
                };
                (ra, rc)
            }};
        }
        let (ra, rc) = match op {
            0 => call!(inc),
            1 => call!(dec),
            2 => call!(not),
            _ => call!(neg),
        };
        same(&format!("unary {op} {d:?}"), (a, ra), (c, rc));
    }
}

#[test]
fn extensions_lea_shifts_and_stack_ops_encode_as_iceds() {
    let r = &mut Rng(0x0123_4567_89AB_CDEF);
    for _ in 0..20_000 {
        let dsize = [2u8, 4, 8][r.next(3) as usize];
        let (d, di) = reg(r, dsize);
        let ssize = [1u8, 2][r.next(2) as usize];
        let (s, si) = if r.next(2) == 0 {
            let (m, i) = mem(r, ssize);
            (asm::Opnd::from(m), i)
        } else {
            let (g, i) = reg(r, ssize);
            (asm::Opnd::from(g), i)
        };
        let sign = r.next(2) == 0;
        let (mut a, mut c) = pair();
        let ra = if sign { a.movsx(d, s) } else { a.movzx(d, s) };
        macro_rules! ext {
            ($m:ident) => {
                match (di, si) {
                    (I::R16(d), I::R8(s)) => c.$m(d, s),
                    (I::R16(d), I::R16(s)) => c.$m(d, s),
                    (I::R32(d), I::R8(s)) => c.$m(d, s),
                    (I::R32(d), I::R16(s)) => c.$m(d, s),
                    (I::R64(d), I::R8(s)) => c.$m(d, s),
                    (I::R64(d), I::R16(s)) => c.$m(d, s),
                    (I::R16(d), I::M(s)) => c.$m(d, s),
                    (I::R32(d), I::M(s)) => c.$m(d, s),
                    (I::R64(d), I::M(s)) => c.$m(d, s),
                    _ => unreachable!(),
                }
            };
        }
        let rc = if sign { ext!(movsx) } else { ext!(movzx) };
        same(&format!("movzx/sx {d:?}, {s:?}"), (a, ra), (c, rc));

        // LEA
        let (m, mi) = mem(r, 8);
        let I::M(mi) = mi else { unreachable!() };
        let (mut a, mut c) = pair();
        let ra = a.lea(d, m);
        let rc = match di {
            I::R16(d) => c.lea(d, mi),
            I::R32(d) => c.lea(d, mi),
            I::R64(d) => c.lea(d, mi),
            _ => unreachable!(),
        };
        same(&format!("lea {d:?}, {m:?}"), (a, ra), (c, rc));

        // SHL/SHR/SAR r, imm
        let n = [1u32, 0, 3, 4, 12, 18, 31][r.next(7) as usize];
        let gsize = [1u8, 2, 4, 8][r.next(4) as usize];
        let (g, gi) = reg(r, gsize);
        let how = r.next(3);
        let (mut a, mut c) = pair();
        let ra = match how {
            0 => a.shl(g, n),
            1 => a.shr(g, n),
            _ => a.sar(g, n),
        };
        macro_rules! sh {
            ($g:expr) => {
                match how {
                    0 => c.shl($g, n),
                    1 => c.shr($g, n),
                    _ => c.sar($g, n),
                }
            };
        }
        let rc = match gi {
            I::R8(g) => sh!(g),
            I::R16(g) => sh!(g),
            I::R32(g) => sh!(g),
            I::R64(g) => sh!(g),
            _ => unreachable!(),
        };
        same(&format!("shift {how} {g:?} {n}"), (a, ra), (c, rc));

        // XCHG r, r
        let xsize = [1u8, 2, 4, 8][r.next(4) as usize];
        let ((x, xi), (y, yi)) = (reg(r, xsize), reg(r, xsize));
        let (mut a, mut c) = pair();
        let ra = a.xchg(x, y);
        let rc = match (xi, yi) {
            (I::R8(x), I::R8(y)) => c.xchg(x, y),
            (I::R16(x), I::R16(y)) => c.xchg(x, y),
            (I::R32(x), I::R32(y)) => c.xchg(x, y),
            (I::R64(x), I::R64(y)) => c.xchg(x, y),
            _ => unreachable!(),
        };
        same(&format!("xchg {x:?}, {y:?}"), (a, ra), (c, rc));

        // BT r64, r64; PUSH/POP r64 and qword memory.
        let ((x, xi), (y, yi)) = (reg(r, 8), reg(r, 8));
        let (I::R64(xi), I::R64(yi)) = (xi, yi) else {
            unreachable!()
        };
        let (mut a, mut c) = pair();
        let ra = a.bt(x, y);
        let rc = c.bt(xi, yi);
        same("bt", (a, ra), (c, rc));
        let (mut a, mut c) = pair();
        let ra = a.push(x).and_then(|_| a.pop(y));
        let rc = c.push(xi).and_then(|_| c.pop(yi));
        same("push/pop", (a, ra), (c, rc));
        let (q, qi) = mem(r, 8);
        let I::M(qi) = qi else { unreachable!() };
        let (mut a, mut c) = pair();
        let ra = a.push(q).and_then(|_| a.pop(q));
        let rc = c.push(qi).and_then(|_| c.pop(qi));
        same(&format!("push/pop {q:?}"), (a, ra), (c, rc));
    }
}

#[test]
fn sign_extensions_encode_as_iceds() {
    type Pair = (Asm, CodeAssembler);
    /// Both assemblers' call, and whether each took it.
    type Form = fn(&mut Pair) -> (bool, bool);
    let forms: [(Form, &str); 4] = [
        (|(a, c)| (a.cbw().is_ok(), c.cbw().is_ok()), "cbw"),
        (|(a, c)| (a.cwde().is_ok(), c.cwde().is_ok()), "cwde"),
        (|(a, c)| (a.cwd().is_ok(), c.cwd().is_ok()), "cwd"),
        (|(a, c)| (a.cdq().is_ok(), c.cdq().is_ok()), "cdq"),
    ];
    for (f, what) in forms {
        let mut p = pair();
        assert_eq!(f(&mut p), (true, true), "{what}");
        let (a, mut c) = p;
        assert_eq!(a.bytes(), &c.assemble(0).expect("iced")[..], "{what}");
    }
}

#[test]
fn branches_take_their_rel32_forms_patched_to_their_labels() {
    use asm::regs::*;
    let mut a = Asm::default();
    let mut top = a.create_label();
    let mut out = a.create_label();
    a.set_label(&mut top).unwrap();
    a.inc(eax).unwrap();
    a.jcc(iced_x86::ConditionCode::ne, out).unwrap();
    a.jrcxz(out).unwrap();
    a.jmp(top).unwrap();
    a.set_label(&mut out).unwrap();
    a.pushfq().unwrap();
    a.popfq().unwrap();
    a.ret().unwrap();
    let bytes = a.finish().unwrap();
    assert_eq!(
        bytes,
        [
            0xFF, 0xC0, // inc eax
            0x0F, 0x85, 7, 0, 0, 0, // jne out
            0xE3, 5, // jrcxz out
            0xE9, 0xF1, 0xFF, 0xFF, 0xFF, // jmp top
            0x9C, 0x9D, 0xC3,
        ]
    );
    let mut a = Asm::default();
    let never = a.create_label();
    a.jmp(never).unwrap();
    assert_eq!(a.finish(), Err(asm::AsmError::Branch));
}
