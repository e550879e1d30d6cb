//! Differential test: the interpreter against unicorn-engine (QEMU) in
//! lockstep, on random instruction sequences and on small programs, in
//! real mode and 16- and 32-bit protected mode. See `diff/mod.rs` for what
//! is compared and `diff/random.rs` for what the generator leaves out.
//!
//! `cargo test -p emu --features unicorn` runs a few thousand random
//! instructions per mode; the long run is
//! `DIFF_STEPS=1000000 cargo test -p emu --features unicorn --release --test differential -- --ignored --nocapture`.
#![cfg(feature = "unicorn")]

mod common;
mod diff;

use common::asm;
use diff::random::{self, Rng};
use diff::{CODE_BASE, Mode, Pair};
use emu::unicorn::UnicornMachine;
use emu::{Exit, Gpr, Limits, MachineConfig};
use iced_x86::code_asm::*;

/// Run `steps` random instructions in `mode`; the divergences found.
fn random_run(mode: Mode, seed: u64, steps: u64, keep_going: bool) -> (u64, Vec<String>) {
    let mut rng = Rng::new(seed);
    let gpr: [u32; 8] = std::array::from_fn(|_| rng.value());
    let mut p = Pair::new(mode, gpr, rng.next() as u32);
    let mut data = vec![0u8; 0x50000];
    for b in data.iter_mut() {
        *b = rng.next() as u8;
    }
    p.write(0x20000, &data);
    let mut found = Vec::new();
    for _ in 0..steps {
        random::tend(&mut rng, &mut p);
        let bytes = random::instruction(&mut rng, &p);
        let eip = p.m.cpu().eip;
        p.write(CODE_BASE + eip, &bytes);
        match p.step() {
            Ok(Exit::Exception { .. }) => {
                p.m.set_eip(eip + bytes.len() as u32);
                p.sync();
            }
            Ok(_) => {}
            Err(d) => {
                found.push(d);
                if !keep_going {
                    break;
                }
                p.m.set_eip(eip + bytes.len() as u32);
                p.sync();
            }
        }
    }
    (p.steps, found)
}

fn check_random(mode: Mode, seed: u64, steps: u64) {
    let (n, found) = random_run(mode, seed, steps, false);
    assert!(found.is_empty(), "after {n} steps:\n{}", found[0]);
    assert_eq!(n, steps);
}

#[test]
fn random_real_mode() {
    check_random(Mode::Real, 1, 3000);
}

#[test]
fn random_protected_16() {
    check_random(Mode::Prot16, 2, 3000);
}

#[test]
fn random_protected_32() {
    check_random(Mode::Prot32, 3, 3000);
}

/// The long run: `DIFF_STEPS` (default one million) per mode, continuing
/// past divergences and printing a summary.
#[test]
#[ignore]
fn random_long() {
    let seed: u64 = std::env::var("DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let steps: u64 = std::env::var("DIFF_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let runs: Vec<_> = [Mode::Real, Mode::Prot16, Mode::Prot32]
        .into_iter()
        .enumerate()
        .map(|(i, mode)| {
            std::thread::spawn(move || (mode, random_run(mode, seed + i as u64, steps, true)))
        })
        .collect();
    let mut total = 0;
    let mut all = Vec::new();
    for r in runs {
        let (mode, (n, found)) = r.join().expect("run");
        println!("{mode:?}: {n} instructions, {} divergences", found.len());
        for d in found.iter().take(20) {
            println!("---\n{d}");
        }
        total += n;
        all.extend(found);
    }
    println!("total {total} instructions, {} divergences", all.len());
    assert!(all.is_empty());
}

/// The far routine `calls_program` calls at offset 0x800.
fn far_routine(bits: u32) -> Vec<u8> {
    asm(bits, 0x800, |a| {
        a.xadd(bx, ax).unwrap();
        a.cmpxchg(si, bx).unwrap();
        a.bswap(ebx).unwrap();
        a.retf().unwrap();
    })
}

/// Run a program in lockstep until HLT (at most `max` steps).
fn run_program(mode: Mode, code: &[u8], max: u64) -> Pair {
    let mut p = Pair::new(mode, [0x1234, 0, 0, 0, 0, 0, 0, 0], 0);
    p.write(CODE_BASE + 0x100, code);
    p.write(CODE_BASE + 0x800, &far_routine(mode.bitness()));
    let mut data = vec![0u8; 0x100];
    for (i, b) in data.iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    p.write(0x20000, &data);
    for _ in 0..max {
        match p.step() {
            Ok(Exit::Halted) => return p,
            Ok(Exit::InstructionLimit) => {}
            Ok(e) => panic!("{mode:?}: unexpected exit {e:?} at {:X}", p.m.cpu().eip),
            Err(d) => panic!("{d}"),
        }
    }
    panic!("{mode:?}: no HLT after {max} steps");
}

/// A checksum over DS:0..0x100 with LODSB, copies with REP MOVSB/MOVSW,
/// REPE CMPSB, REP STOSB, REPNE SCASB, MUL/DIV and LOOP.
fn strings_program(bits: u32) -> Vec<u8> {
    asm(bits, 0x100, |a| {
        let mut top = a.create_label();
        a.cld().unwrap();
        a.xor(si, si).unwrap();
        a.xor(dx, dx).unwrap();
        a.mov(cx, 0x100u32).unwrap();
        a.set_label(&mut top).unwrap();
        a.lodsb().unwrap();
        a.add(dl, al).unwrap();
        a.adc(dh, 0).unwrap();
        a.rol(dx, 3).unwrap();
        a.loop_(top).unwrap();
        a.xor(si, si).unwrap();
        a.mov(di, 0x200u32).unwrap();
        a.mov(cx, 0x80u32).unwrap();
        a.rep().movsb().unwrap();
        a.mov(si, 0x10u32).unwrap();
        a.mov(di, 0x300u32).unwrap();
        a.mov(cx, 0x20u32).unwrap();
        a.rep().movsw().unwrap();
        a.xor(si, si).unwrap();
        a.mov(di, 0x200u32).unwrap();
        a.mov(cx, 0x80u32).unwrap();
        a.repe().cmpsb().unwrap();
        a.mov(al, 0x5Au32).unwrap();
        a.mov(di, 0x400u32).unwrap();
        a.mov(cx, 0x40u32).unwrap();
        a.rep().stosb().unwrap();
        a.mov(al, 0x30u32).unwrap();
        a.xor(di, di).unwrap();
        a.mov(cx, 0x100u32).unwrap();
        a.repne().scasb().unwrap();
        a.mov(ax, dx).unwrap();
        a.mov(bx, 0x1234u32).unwrap();
        a.mul(bx).unwrap();
        a.mov(bx, 0x77u32).unwrap();
        a.xor(dx, dx).unwrap();
        a.div(bx).unwrap();
        a.hlt().unwrap();
    })
}

/// Near and far calls, ENTER/LEAVE, segment loads and pushes, Jcc, SETcc,
/// BSWAP/XADD/CMPXCHG, PUSHA/POPA, POPF. `far_cs` is the code selector.
fn calls_program(bits: u32, far_cs: u16, data_sel: u16) -> Vec<u8> {
    asm(bits, 0x100, |a| {
        let mut sub = a.create_label();
        let mut back = a.create_label();
        let mut skip = a.create_label();
        a.mov(ax, u32::from(data_sel)).unwrap();
        a.mov(es, ax).unwrap();
        a.push(ds).unwrap();
        a.pop(fs).unwrap();
        a.mov(cx, 5u32).unwrap();
        a.set_label(&mut back).unwrap();
        a.call(sub).unwrap();
        // CALL FAR far_cs:0x800 (ptr16:16 or ptr16:32)
        let mut b = vec![0x9A, 0x00, 0x08];
        if bits == 32 {
            b.extend([0, 0]);
        }
        b.extend(far_cs.to_le_bytes());
        a.db(&b).unwrap();
        a.dec(cx).unwrap();
        a.jnz(back).unwrap();
        a.pushf().unwrap();
        a.pusha().unwrap();
        a.popa().unwrap();
        a.popf().unwrap();
        a.cmp(ax, bx).unwrap();
        a.setl(dl).unwrap();
        a.jmp(skip).unwrap();
        a.set_label(&mut sub).unwrap();
        a.enter(8u32, 0u32).unwrap();
        a.mov(word_ptr(bp - 2), cx).unwrap();
        a.add(ax, word_ptr(bp - 2)).unwrap();
        a.leave().unwrap();
        a.ret().unwrap();
        a.set_label(&mut skip).unwrap();
        a.mov(word_ptr(0x40), es).unwrap();
        a.mov(gs, word_ptr(0x40)).unwrap();
        a.hlt().unwrap();
    })
}

#[test]
fn program_strings_all_modes() {
    for mode in [Mode::Real, Mode::Prot16, Mode::Prot32] {
        let p = run_program(mode, &strings_program(mode.bitness()), 5000);
        assert!(p.steps > 1000, "{mode:?}: {} steps", p.steps);
    }
}

#[test]
fn program_calls_all_modes() {
    for mode in [Mode::Real, Mode::Prot16, Mode::Prot32] {
        let sels = diff::selectors(mode);
        let code = calls_program(mode.bitness(), sels[1], sels[0]);
        let p = run_program(mode, &code, 2000);
        assert!(p.steps > 40, "{mode:?}: {} steps", p.steps);
    }
}

/// Regression (found by the random run): XADD with the same register as
/// both operands. Intel SDM XADD: TEMP <- SRC + DEST; SRC <- DEST;
/// DEST <- TEMP, so the destination write (the sum) lands last: XADD DX,DX
/// with DX = 8 leaves 0x10 (unicorn agrees). The interpreter writes the
/// destination first and the source (old value) last, leaving 8.
#[test]
fn regression_xadd_same_register() {
    for mode in [Mode::Real, Mode::Prot32] {
        let code = asm(mode.bitness(), 0x100, |a| {
            a.mov(dx, 8u32).unwrap();
            a.xadd(dx, dx).unwrap();
            a.xadd(eax, eax).unwrap();
            a.hlt().unwrap();
        });
        let p = run_program(mode, &code, 10);
        assert_eq!(p.m.cpu().gpr[Gpr::Edx] & 0xFFFF, 0x10);
    }
}

/// Regression (backend, found by the long run): a fault right after an
/// INT n of the same vector must not be reported as a software interrupt
/// (unicorn's hook gives no such bit; the bytes before EIP read `CD 05`).
#[test]
fn regression_bound_fault_after_int5() {
    let code = asm(16, 0x100, |a| {
        a.mov(ax, 100u32).unwrap();
        a.int(5).unwrap();
        a.bound(ax, dword_ptr(0x40)).unwrap();
        a.hlt().unwrap();
    });
    let mut p = Pair::new(Mode::Prot16, [0; 8], 0);
    p.write(CODE_BASE + 0x100, &code);
    p.write(0x20040, &[0, 0, 10, 0]);
    assert_eq!(p.step(), Ok(Exit::InstructionLimit));
    let e = p.step().unwrap();
    assert!(matches!(e, Exit::Exception { software: true, .. }), "{e:?}");
    let e = p.step().unwrap();
    assert!(
        matches!(e, Exit::Exception { fault, software: false } if fault.vector == 5),
        "{e:?}"
    );
}

/// The unicorn backend's own host-facing API: HLT, host calls with the
/// resume rule, an intercepted INT3, budgets, code patching.
#[test]
fn unicorn_api() {
    let code = asm(16, 0x100, |a| {
        a.mov(ax, 1u32).unwrap();
        a.add(ax, 2u32).unwrap();
        a.int3().unwrap();
        a.inc(ax).unwrap();
        a.hlt().unwrap();
    });
    let mut u = UnicornMachine::new(MachineConfig {
        ram_size: 1 << 20,
        ..MachineConfig::default()
    })
    .unwrap();
    u.write_phys(0x100, &code).unwrap();
    let mut s = u.cpu().unwrap();
    s.eip = 0x100;
    s.gpr[Gpr::Esp] = 0x8000;
    u.set_cpu(&s).unwrap();
    u.intercept(3, true);
    u.add_host_call(0x103).unwrap();
    let one = Limits {
        instructions: Some(1),
        cycles: None,
    };
    assert_eq!(u.run(one).unwrap(), Exit::InstructionLimit);
    assert_eq!(u.cpu().unwrap().eip, 0x103);
    assert_eq!(
        u.run(Limits::default()).unwrap(),
        Exit::HostCall { linear: 0x103 }
    );
    assert_eq!(u.cpu().unwrap().gpr[Gpr::Eax], 1);
    let e = u.run(Limits::default()).unwrap();
    assert!(
        matches!(e, Exit::Exception { fault, software: true } if fault.vector == 3),
        "{e:?}"
    );
    assert_eq!(u.cpu().unwrap().eip, 0x107);
    assert_eq!(u.cpu().unwrap().gpr[Gpr::Eax], 3);
    // Patch the INC into INT3 and run again from it.
    u.patch_code(0x107, &[0xCC]).unwrap();
    let e = u.run(Limits::default()).unwrap();
    assert!(matches!(e, Exit::Exception { software: true, .. }), "{e:?}");
    assert_eq!(u.cpu().unwrap().eip, 0x108);
    assert_eq!(u.run(Limits::default()).unwrap(), Exit::Halted);
    assert_eq!(u.cpu().unwrap().eip, 0x109);
    assert!(u.halted());
    assert_eq!(u.run(Limits::default()).unwrap(), Exit::Halted);
}

/// Not intercepted in real mode: delivered through the IVT.
#[test]
fn unicorn_real_mode_ivt_delivery() {
    let code = asm(16, 0x100, |a| {
        a.xor(bx, bx).unwrap();
        a.div(bx).unwrap();
        a.hlt().unwrap();
    });
    let handler = asm(16, 0x200, |a| {
        a.mov(cx, 0x55u32).unwrap();
        a.hlt().unwrap();
    });
    let mut u = UnicornMachine::new(MachineConfig {
        ram_size: 1 << 20,
        ..MachineConfig::default()
    })
    .unwrap();
    u.write_phys(0x100, &code).unwrap();
    u.write_phys(0x200, &handler).unwrap();
    u.write_phys(0, &[0x00, 0x02, 0x00, 0x00]).unwrap();
    let mut s = u.cpu().unwrap();
    s.eip = 0x100;
    s.gpr[Gpr::Esp] = 0x8000;
    u.set_cpu(&s).unwrap();
    assert_eq!(u.run(Limits::default()).unwrap(), Exit::Halted);
    let s = u.cpu().unwrap();
    assert_eq!(
        (s.gpr[Gpr::Ecx], s.eip, s.gpr[Gpr::Esp]),
        (0x55, 0x204, 0x7FFA)
    );
    let mut ret = [0u8; 2];
    u.read_linear(0x7FFA, &mut ret).unwrap();
    assert_eq!(u16::from_le_bytes(ret), 0x102, "#DE pushes the DIV's IP");
}
