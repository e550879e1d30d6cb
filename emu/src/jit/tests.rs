//! Single instructions in host code against the interpreter, over edge
//! values and both carry states: registers and the six arithmetic flags.

use super::{emit, native, select};
use crate::cpu::flags::{AF, STATUS};
use crate::{Gpr, Limits, Machine, MachineConfig, SegReg, Segment};

const VALUES: [u32; 10] = [
    0,
    1,
    2,
    0x0F,
    0x7F,
    0x80,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFE,
    0xFFFF_FFFF,
];

/// ModRM-form opcodes (op r/m32, r32) of the two-operand ALU ops and MOV.
const BIN: [u8; 10] = [0x01, 0x11, 0x29, 0x19, 0x21, 0x09, 0x31, 0x39, 0x85, 0x89];

/// An interpreter-only machine in real mode with a 32-bit CS.
fn interpreter() -> Machine {
    let mut m = Machine::new(MachineConfig {
        ram_size: 1 << 16,
        ..MachineConfig::default()
    });
    m.set_jit(false);
    let mut cs = Segment::real(0, true);
    cs.flags = 4;
    m.set_segment(SegReg::Cs, cs);
    m
}

/// EAX = a, EBX = b, status flags = `fl`; run `code` (then HLT) on the
/// interpreter.
fn interpret(m: &mut Machine, code: &[u8], a: u32, b: u32, fl: u32) -> ([u32; 8], u32) {
    m.write_phys(0x100, code);
    m.write_phys(0x100 + code.len() as u32, &[0xF4]);
    m.set_halted(false);
    let c = m.cpu_mut_flush_tlb();
    c.eip = 0x100;
    c.gpr = [0; 8];
    c.gpr[Gpr::Eax] = a;
    c.gpr[Gpr::Ebx] = b;
    c.eflags = (c.eflags & !STATUS) | fl;
    let _ = m.run(Limits::default());
    (m.cpu().gpr, m.cpu().eflags & STATUS)
}

/// The same through selection, emission and a native call.
fn native_run(code: &[u8], a: u32, b: u32, fl: u32) -> ([u32; 8], u32) {
    let src = select::Source {
        bytes: code,
        eip: 0x100,
        code32: true,
        stack32: true,
        df: false,
    };
    let plan = select::select(src, |_| false).expect("eligible");
    assert_eq!(plan.next_eip, 0x100 + code.len() as u32, "whole code taken");
    let e = emit::emit(&plan).expect("emit");
    assert_eq!(e.bytes()[0], 0x53, "starts with push rbx");
    ARENA.with(|arena| {
        let mut arena = arena.borrow_mut();
        let c = arena.put(&e).expect("map");
        call_block(&arena, &c, &plan, a, b, fl)
    })
}

thread_local! {
    /// One arena for all of a test thread's blocks, as a machine has.
    static ARENA: std::cell::RefCell<native::Arena> = std::cell::RefCell::new(native::Arena::default());
}

/// Run the block `c` of `plan` on EAX = a, EBX = b and flags `fl`.
fn call_block(
    arena: &native::Arena,
    c: &native::Code,
    plan: &select::Plan,
    a: u32,
    b: u32,
    fl: u32,
) -> ([u32; 8], u32) {
    let mut gpr = [0; 8];
    gpr[Gpr::Eax] = a;
    gpr[Gpr::Ebx] = b;
    let mut st = native::State {
        gpr,
        flags: u64::from(fl) | super::HOST_FLAGS,
        budget: 1,
        ..native::State::default()
    };
    arena.call(c, &mut st, None);
    assert_eq!(st.exit, emit::EXIT_NEXT);
    assert_eq!(st.eip, plan.next_eip);
    let host = if plan.load_flags {
        STATUS
    } else {
        plan.written
    };
    let mut f = (st.flags as u32 & host) | (fl & !host);
    if plan.clear_af {
        f &= !AF;
    }
    (st.gpr, f)
}

#[test]
fn each_op_matches_the_interpreter() {
    let mut codes: Vec<Vec<u8>> = Vec::new();
    for op in BIN {
        codes.push(vec![op, 0xD8]); // op eax, ebx
        codes.push(vec![op, 0xC0]); // op eax, eax
    }
    for ext in 0..8u8 {
        codes.push(vec![0x81, 0xC0 | (ext << 3), 0x80, 0, 0, 0x80]); // op eax, imm32
        codes.push(vec![0x83, 0xC3 | (ext << 3), 0xFF]); // op ebx, -1
    }
    codes.push(vec![0xB8, 0x78, 0x56, 0x34, 0x12]); // mov eax, imm32
    codes.push(vec![0xA9, 1, 0, 0, 0]); // test eax, 1
    codes.push(vec![0x40]); // inc eax
    codes.push(vec![0x4B]); // dec ebx
    codes.push(vec![0xF7, 0xD8]); // neg eax
    codes.push(vec![0xF7, 0xD3]); // not ebx
    // 16-bit forms.
    for op in BIN {
        codes.push(vec![0x66, op, 0xD8]); // op ax, bx
    }
    codes.push(vec![0x66, 0x81, 0xD0, 0x34, 0x92]); // adc ax, 0x9234
    codes.push(vec![0x66, 0x83, 0xDB, 0x80]); // sbb bx, -0x80
    codes.push(vec![0x66, 0xB8, 0xFF, 0x7F]); // mov ax, 0x7fff
    codes.push(vec![0x66, 0x40, 0x66, 0xF7, 0xDB]); // inc ax; neg bx
    // 8-bit forms (AL/AH/BL/BH; CL with AL).
    for op in [0x00, 0x10, 0x28, 0x18, 0x20, 0x08, 0x30, 0x38, 0x84, 0x88] {
        codes.push(vec![op, 0xDC]); // op ah, bl
        codes.push(vec![op, 0xF8]); // op al, bh
        codes.push(vec![op, 0xC1]); // op cl, al
    }
    codes.push(vec![0x80, 0xD4, 0x81]); // adc ah, 0x81
    codes.push(vec![0xB7, 0x80, 0xFE, 0xC4, 0xF6, 0xDB]); // mov bh,0x80; inc ah; neg bl
    // LEA.
    codes.push(vec![0x8D, 0x44, 0x58, 0x7F]); // lea eax, [eax+ebx*2+0x7f]
    codes.push(vec![0x8D, 0x1C, 0x9D, 0, 0, 0, 0x80]); // lea ebx, [ebx*4+0x80000000]
    codes.push(vec![0x8D, 0x05, 0x78, 0x56, 0x34, 0x12]); // lea eax, [0x12345678]
    codes.push(vec![0x8D, 0x5B, 0xFF]); // lea ebx, [ebx-1]
    // Shifts by one (the AF of an earlier writer survives them), CBW and
    // kin, XCHG.
    for sh in [0xE0, 0xE8, 0xF8, 0xF0] {
        codes.push(vec![0xD1, sh]); // shl/shr/sar/sal eax, 1
        codes.push(vec![0xD0, sh + 4]); // ... ah, 1
        codes.push(vec![0x66, 0xD1, sh + 3]); // ... bx, 1
        codes.push(vec![0xC1, sh + 3, 0x21]); // ... ebx, 33 (masked to 1)
        codes.push(vec![0x01, 0xD8, 0xD1, sh]); // add eax, ebx; ... eax, 1
        codes.push(vec![0x24, 0x0F, 0xD0, sh + 3]); // and al, 15; ... bl, 1
    }
    codes.push(vec![0x98, 0x66, 0x98, 0x99, 0x66, 0x99]); // cwde; cbw; cdq; cwd
    codes.push(vec![
        0x87, 0xD8, 0x93, 0x86, 0xE3, 0x66, 0x87, 0xC3, 0x86, 0xC1,
    ]); // xchg
    // An ADC/SBB chain after a flag writer.
    codes.push(vec![0x01, 0xD8, 0x11, 0xC3, 0x19, 0xD8, 0x11, 0xD8]);
    let mut m = interpreter();
    for code in &codes {
        for a in VALUES {
            for b in VALUES {
                for fl in [0, STATUS] {
                    assert_eq!(
                        native_run(code, a, b, fl),
                        interpret(&mut m, code, a, b, fl),
                        "{code:02X?} eax={a:#x} ebx={b:#x} flags={fl:#x}"
                    );
                }
            }
        }
    }
}

#[test]
fn emitter_refuses_what_the_host_cannot_encode() {
    let src = select::Source {
        bytes: &[0x00, 0xC4], // add ah, al
        eip: 0,
        code32: true,
        stack32: true,
        df: false,
    };
    let mut plan = select::select(src, |_| false).expect("eligible");
    assert!(emit::emit(&plan).is_ok());
    plan.ops[0] = select::Op::Unary {
        m: iced_x86::Mnemonic::Inc,
        dst: select::Reg::Hi8(1),
    };
    assert!(matches!(
        emit::emit(&plan),
        Err(emit::EmitError::NoHostRegister)
    ));
    plan.ops[0] = select::Op::Bin {
        m: iced_x86::Mnemonic::Add,
        dst: select::Reg::R32(0),
        src: select::Src::Reg(select::Reg::R16(1)),
    };
    assert!(matches!(emit::emit(&plan), Err(emit::EmitError::Sizes)));
}

/// `add eax, ebx; inc eax` selected and emitted.
fn add_inc() -> (select::Plan, native::Emitted) {
    let src = select::Source {
        bytes: &[0x01, 0xD8, 0x40],
        eip: 0x100,
        code32: true,
        stack32: true,
        df: false,
    };
    let plan = select::select(src, |_| false).expect("eligible");
    let e = emit::emit(&plan).expect("emit");
    (plan, e)
}

#[test]
fn arena_blocks_stay_runnable_across_chunks() {
    blocks_across_chunks(native::Arena::default());
}

#[test]
fn single_mapped_arena_blocks_stay_runnable_across_chunks() {
    blocks_across_chunks(native::Arena::single_mapped());
}

fn blocks_across_chunks(mut arena: native::Arena) {
    let (plan, e) = add_inc();
    // Enough blocks to fill several chunks, and one block larger than a
    // chunk (a NOP slide into the same code, which is position
    // independent) in the middle.
    let mut codes = Vec::new();
    for i in 0..3000u32 {
        if i == 1500 {
            let mut big = vec![0x90; 300 << 10];
            big.extend_from_slice(e.bytes());
            codes.push(arena.put(&native::Emitted::from_emitter(big)).expect("map"));
        }
        codes.push(arena.put(&e).expect("map"));
    }
    assert!(arena.mapped() > 2 * (300 << 10), "{}", arena.mapped());
    let mut m = interpreter();
    for (i, c) in codes.iter().enumerate() {
        let a = (i as u32).wrapping_mul(0x0101_0101);
        assert_eq!(
            call_block(&arena, c, &plan, a, 7, 0),
            interpret(&mut m, &[0x01, 0xD8, 0x40], a, 7, 0),
            "block {i}"
        );
    }
    // After a reset the first chunk is reused for new blocks.
    arena.reset();
    let c = arena.put(&e).expect("map");
    assert_eq!(call_block(&arena, &c, &plan, 1, 2, 0).0[0], 4);
}

#[test]
fn a_dropped_arenas_chunk_serves_the_next_arena_with_its_own_blocks() {
    let (plan, e) = add_inc();
    // `dec eax; jnz self` in the first arena, filling part of its chunk.
    let src = select::Source {
        bytes: &[0x48, 0x75, 0xFD],
        eip: 0x100,
        code32: true,
        stack32: true,
        df: false,
    };
    let other = emit::emit(&select::select(src, |_| false).expect("eligible")).expect("emit");
    let mut one = native::Arena::default();
    for _ in 0..100 {
        one.put(&other).expect("map");
    }
    drop(one);
    // The next arena (likely on the same chunk) runs what it put there.
    let mut two = native::Arena::default();
    let c = two.put(&e).expect("map");
    assert_eq!(call_block(&two, &c, &plan, 1, 2, 0).0[0], 4);
}

#[test]
#[should_panic(expected = "a retired block was called")]
fn arena_refuses_a_retired_block() {
    let (plan, e) = add_inc();
    let mut arena = native::Arena::default();
    let c = arena.put(&e).expect("map");
    assert_eq!(call_block(&arena, &c, &plan, 1, 2, 0).0[0], 4);
    arena.reset();
    let _ = call_block(&arena, &c, &plan, 1, 2, 0);
}

#[test]
#[should_panic(expected = "a retired block was called")]
fn arena_refuses_another_arenas_block() {
    let (plan, e) = add_inc();
    let mut one = native::Arena::default();
    let two = native::Arena::default();
    let c = one.put(&e).expect("map");
    let _ = call_block(&two, &c, &plan, 1, 2, 0);
}

/// Guest opcodes (with their 0x0F or prefix bytes) the generated blocks of
/// `emitted_code_is_unchanged` draw from: the forms the tier takes, and a
/// few it refuses (which end a block).
const GOLDEN_OPCODES: &[&[u8]] = &[
    &[0x00],
    &[0x01],
    &[0x02],
    &[0x03],
    &[0x08],
    &[0x09],
    &[0x0A],
    &[0x0B],
    &[0x10],
    &[0x11],
    &[0x12],
    &[0x13],
    &[0x18],
    &[0x19],
    &[0x1A],
    &[0x1B],
    &[0x20],
    &[0x21],
    &[0x22],
    &[0x23],
    &[0x28],
    &[0x29],
    &[0x2A],
    &[0x2B],
    &[0x30],
    &[0x31],
    &[0x32],
    &[0x33],
    &[0x38],
    &[0x39],
    &[0x3A],
    &[0x3B],
    &[0x04],
    &[0x05],
    &[0x24],
    &[0x25],
    &[0x3C],
    &[0x3D],
    &[0x80],
    &[0x81],
    &[0x83],
    &[0x84],
    &[0x85],
    &[0x88],
    &[0x89],
    &[0x8A],
    &[0x8B],
    &[0x8C],
    &[0x8D],
    &[0x8E],
    &[0xA8],
    &[0xA9],
    &[0xB0],
    &[0xB4],
    &[0xB8],
    &[0xBB],
    &[0xC6],
    &[0xC7],
    &[0xF6],
    &[0xF7],
    &[0xFE],
    &[0xFF],
    &[0x40],
    &[0x43],
    &[0x4D],
    &[0x50],
    &[0x53],
    &[0x58],
    &[0x5E],
    &[0x06],
    &[0x07],
    &[0x0E],
    &[0x16],
    &[0x17],
    &[0x1E],
    &[0x1F],
    &[0x0F, 0xA0],
    &[0x0F, 0xA1],
    &[0x0F, 0xB6],
    &[0x0F, 0xB7],
    &[0x0F, 0xBE],
    &[0x0F, 0xBF],
    &[0x0F, 0xB2],
    &[0x0F, 0xB4],
    &[0x0F, 0xB5],
    &[0xC4],
    &[0xC5],
    &[0xA4],
    &[0xA5],
    &[0xAA],
    &[0xAB],
    &[0xAC],
    &[0xAD],
    &[0xF3, 0xA4],
    &[0xF3, 0xA5],
    &[0xF3, 0xAB],
    &[0xF3, 0xAA],
    &[0xF3, 0xAD],
    &[0x74],
    &[0x75],
    &[0x7C],
    &[0x0F, 0x85],
    &[0xEB],
    &[0xE9],
    &[0xE8],
    &[0xC3],
    &[0xC2],
    &[0xCB],
    &[0xCA],
    &[0x9A],
    &[0xEA],
    &[0x26],
    &[0x2E],
    &[0x36],
    &[0x3E],
    &[0x64],
    &[0x65],
    &[0x66],
    &[0x67],
    &[0x90],
    &[0x99],
    &[0xCC],
    &[0xF4],
];

/// Some 4,000 generated blocks (opcodes from [`GOLDEN_OPCODES`] with
/// random operand bytes, in 16- and 32-bit code, either stack size and DF,
/// real or protected mode), each with its guest bytes and mode bits.
fn generated_blocks() -> Vec<(String, u64, select::Plan, native::Emitted)> {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut blocks = Vec::new();
    let mut tries = 0;
    while blocks.len() < 4000 {
        tries += 1;
        assert!(tries < 1_000_000, "too few blocks selected");
        let mut code = Vec::new();
        for _ in 0..1 + next() % 6 {
            let op = GOLDEN_OPCODES[(next() % GOLDEN_OPCODES.len() as u64) as usize];
            code.extend_from_slice(op);
            code.extend_from_slice(&next().to_le_bytes()[..6]);
        }
        let r = next();
        let src = select::Source {
            bytes: &code,
            eip: 0x100,
            code32: r & 1 != 0,
            stack32: r & 2 != 0,
            df: r & 4 != 0,
        };
        let Some(mut plan) = select::select(src, |_| false) else {
            continue;
        };
        plan.real = r & 8 != 0;
        let Ok(e) = emit::emit(&plan) else {
            continue;
        };
        let taken = (plan.last_byte + 1 - 0x100) as usize;
        let guest: String = code[..taken].iter().map(|b| format!("{b:02x}")).collect();
        blocks.push((guest, r & 15, plan, e));
    }
    blocks
}

/// The host code of the [`generated_blocks`], as FNV-1a hashes recorded
/// before the emitter's assembler was replaced: a change to any block's
/// bytes shows here with the block's guest code. `OS2TRACE_BLESS=1`
/// rewrites the file.
#[test]
fn emitted_code_is_unchanged() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/jit/emit_golden.txt");
    let fnv = |b: &[u8]| {
        b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
        })
    };
    let lines: Vec<String> = generated_blocks()
        .iter()
        .map(|(guest, mode, _, e)| format!("{:016x} {mode:x} {guest}", fnv(e.bytes())))
        .collect();
    let got = lines.join("\n") + "\n";
    if std::env::var_os("OS2TRACE_BLESS").is_some() {
        std::fs::write(path, &got).expect("write the golden file");
        return;
    }
    let want = std::fs::read_to_string(path).expect("the golden file");
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(
            g, w,
            "block {i}: host code differs (hash, mode bits, guest bytes)"
        );
    }
    assert_eq!(got.lines().count(), want.lines().count());
}

/// Every callee-saved host register (RBX, RBP, R12..R15) a block writes
/// is one its prologue pushed (and its epilogue pops): the Rust code that
/// calls a block keeps its own values there. Checked on the host code of
/// the [`generated_blocks`] and of blocks of every op kind, with and
/// without memory operands, decoded with iced-x86.
#[test]
fn blocks_save_every_callee_saved_register_they_write() {
    use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, Mnemonic, OpAccess, Register};
    let callee_saved = [
        Register::RBX,
        Register::RBP,
        Register::R12,
        Register::R13,
        Register::R14,
        Register::R15,
    ];
    let codes: [&[u8]; 10] = [
        &[0xD1, 0xE0, 0x40],             // shl eax,1; inc eax
        &[0x66, 0xD1, 0xFB, 0x43],       // sar bx,1; inc ebx
        &[0xD0, 0xEC, 0x98, 0x99],       // shr ah,1; cwde; cdq
        &[0x87, 0xD8, 0x40, 0xE2, 0xFB], // xchg eax,ebx; inc eax; loop
        &[0x40, 0xE3, 0x10],             // inc eax; jecxz
        &[0xFF, 0xE0],                   // jmp eax
        &[0x8B, 0x03, 0xD1, 0xE0],       // mov eax,[ebx]; shl eax,1
        &[0xFF, 0x33, 0x5B],             // push dword [ebx]; pop ebx
        &[0xC9, 0xC3],                   // leave; ret
        &[0x01, 0xD8, 0x75, 0xFC],       // add eax,ebx; jnz
    ];
    let mut blocks: Vec<(String, native::Emitted)> = generated_blocks()
        .into_iter()
        .map(|(guest, _, _, e)| (guest, e))
        .collect();
    for code in codes {
        let src = select::Source {
            bytes: code,
            eip: 0x100,
            code32: true,
            stack32: true,
            df: false,
        };
        let plan = select::select(src, |_| false).expect("eligible");
        blocks.push((format!("{code:02x?}"), emit::emit(&plan).expect("emit")));
    }
    let mut info = InstructionInfoFactory::new();
    for (guest, e) in &blocks {
        let mut pushed = Vec::new();
        let mut prologue = true;
        for insn in Decoder::new(64, e.bytes(), DecoderOptions::NONE) {
            if prologue && insn.mnemonic() == Mnemonic::Push {
                pushed.push(insn.op0_register());
                continue;
            }
            prologue = false;
            for r in info.info(&insn).used_registers() {
                let full = r.register().full_register();
                let writes = !matches!(
                    r.access(),
                    OpAccess::Read | OpAccess::CondRead | OpAccess::NoMemAccess
                );
                assert!(
                    !(writes && callee_saved.contains(&full) && !pushed.contains(&full)),
                    "{guest}: {insn} writes {full:?}, which the prologue did not save ({pushed:?})"
                );
            }
        }
    }
}
