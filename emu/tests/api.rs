//! Host-facing API: exits, budgets, host calls, interrupt delivery,
//! single-step, INT3 patching and self-modifying code through the
//! decoded-instruction cache.

mod common;

use common::{asm, real_machine};
use emu::{Exit, Fault, Gpr, Limits, flags, vector};
use iced_x86::code_asm::*;

#[test]
fn halt_exit_and_registers() {
    let code = asm(16, 0x100, |a| {
        a.mov(ax, 0x1234).unwrap();
        a.add(ax, 0x1111).unwrap();
        a.hlt().unwrap();
    });
    let mut m = real_machine(&code);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Eax] & 0xFFFF, 0x2345);
    assert_eq!(m.cpu().eip, 0x100 + code.len() as u32);
    assert_eq!(m.instructions(), 3);
    assert!(m.cycles() > 0);
    // A halted CPU stays halted until woken.
    assert_eq!(m.run(Limits::default()), Exit::Halted);
}

#[test]
fn instruction_and_cycle_budgets() {
    let code = asm(16, 0x100, |a| {
        let mut l = a.create_label();
        a.set_label(&mut l).unwrap();
        a.inc(cx).unwrap();
        a.jmp(l).unwrap();
    });
    let mut m = real_machine(&code);
    let r = m.run(Limits {
        instructions: Some(10),
        cycles: None,
    });
    assert_eq!(r, Exit::InstructionLimit);
    assert_eq!(m.cpu().gpr[Gpr::Ecx] & 0xFFFF, 5);
    let c0 = m.cycles();
    let r = m.run(Limits {
        instructions: None,
        cycles: Some(100),
    });
    assert_eq!(r, Exit::CycleLimit);
    assert!(m.cycles() >= c0 + 100);
}

#[test]
fn host_call_exit_and_resume() {
    let code = asm(16, 0x100, |a| {
        a.call(0x500u64).unwrap();
        a.hlt().unwrap();
    });
    let mut m = real_machine(&code);
    // The function body the host may choose to run: mov ax, 7; ret.
    m.write_phys(0x500, &[0xB8, 7, 0, 0xC3]);
    m.add_host_call(0x500);
    assert_eq!(m.run(Limits::default()), Exit::HostCall { linear: 0x500 });
    assert_eq!(m.cpu().eip, 0x500);
    // Emulate the function on the host: AX = 42, then RET.
    let stk = m.cpu().gpr[Gpr::Esp];
    let mut ret = [0u8; 2];
    m.read_phys(stk, &mut ret);
    {
        let c = m.cpu_mut_flush_tlb();
        c.gpr[Gpr::Eax] = 42;
        c.eip = u32::from(u16::from_le_bytes(ret));
        c.gpr[Gpr::Esp] = stk + 2;
    }
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Eax], 42);

    // Running again without moving EIP executes the guest code there.
    let mut m = real_machine(&code);
    m.write_phys(0x500, &[0xB8, 7, 0, 0xC3]);
    m.add_host_call(0x500);
    assert_eq!(m.run(Limits::default()), Exit::HostCall { linear: 0x500 });
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Eax] & 0xFFFF, 7);
}

#[test]
fn int3_patching_invalidates_cached_code() {
    let code = asm(16, 0x100, |a| {
        let mut l = a.create_label();
        a.set_label(&mut l).unwrap();
        a.inc(ax).unwrap();
        a.cmp(ax, 3).unwrap();
        a.jne(l).unwrap();
        a.hlt().unwrap();
    });
    let mut m = real_machine(&code);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Eax] & 0xFFFF, 3);
    assert!(m.icache_len() >= 4, "the loop was cached");
    // Patch INT3 over the CMP (offset 1) and intercept #BP.
    let cmp_at = 0x101;
    let mut orig = [0u8];
    m.read_phys(cmp_at, &mut orig);
    m.patch_code(cmp_at, &[0xCC]).unwrap();
    m.intercept(vector::BP, true);
    m.set_halted(false);
    m.set_eip(0x100);
    m.gpr_mut()[Gpr::Eax] = 0;
    let r = m.run(Limits::default());
    assert_eq!(
        r,
        Exit::Exception {
            fault: Fault::new(vector::BP),
            software: true
        }
    );
    assert_eq!(m.cpu().eip, cmp_at + 1, "INT3 is a trap: EIP after it");
    assert_eq!(m.cpu().gpr[Gpr::Eax] & 0xFFFF, 1);
    // Remove the breakpoint and re-execute the original instruction.
    m.patch_code(cmp_at, &orig).unwrap();
    m.set_eip(cmp_at);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Eax] & 0xFFFF, 3);
}

#[test]
fn int3_without_intercept_goes_through_the_ivt() {
    let code = [0xCC, 0xF4];
    let mut m = real_machine(&code);
    m.write_phys(3 * 4, &[0x00, 0x03, 0x00, 0x00]);
    m.write_phys(0x300, &[0xF4]);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().eip, 0x301);
    let stk = m.cpu().gpr[Gpr::Esp];
    let mut ip = [0u8; 2];
    m.read_phys(stk, &mut ip);
    assert_eq!(u16::from_le_bytes(ip), 0x101);
}

#[test]
fn self_modifying_code_is_seen() {
    // target: mov al,1 ; add bl,al ; inc cx ; mov byte [target+1],5 ;
    // cmp cx,2 ; jne target ; hlt
    let code = [
        0xB0, 0x01, // mov al,1   (0x100)
        0x00, 0xC3, // add bl,al
        0x41, // inc cx
        0xC6, 0x06, 0x01, 0x01, 0x05, // mov byte [0x101],5
        0x83, 0xF9, 0x02, // cmp cx,2
        0x75, 0xF1, // jne 0x100
        0xF4,
    ];
    let mut m = real_machine(&code);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(
        m.cpu().gpr[Gpr::Ebx] & 0xFF,
        6,
        "second pass ran the modified MOV"
    );
}

#[test]
fn single_step_traps_after_each_instruction() {
    let code = [0x90, 0x40, 0xF4];
    let mut m = real_machine(&code);
    *m.eflags_mut() |= flags::TF;
    m.intercept(vector::DB, true);
    for want in [0x101, 0x102] {
        let r = m.run(Limits::default());
        assert_eq!(
            r,
            Exit::Exception {
                fault: Fault::new(vector::DB),
                software: false
            }
        );
        assert_eq!(m.cpu().eip, want);
        assert_ne!(m.cpu().dr[6] & 0x4000, 0, "DR6.BS");
    }
    // Delivered through the IVT when not intercepted: the handler runs
    // with TF clear and the pushed FLAGS keep it.
    m.intercept(vector::DB, false);
    m.write_phys(4, &[0x00, 0x03, 0x00, 0x00]);
    m.write_phys(0x300, &[0xF4]);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().eip, 0x301);
    assert_eq!(m.cpu().eflags & flags::TF, 0);
    let mut fl = [0u8; 2];
    m.read_phys(m.cpu().gpr[Gpr::Esp] + 4, &mut fl);
    assert_ne!(u16::from_le_bytes(fl) as u32 & flags::TF, 0);
}

#[test]
fn divide_error_pushes_faulting_ip() {
    let code = [0x30, 0xDB, 0xF6, 0xF3, 0xF4]; // xor bl,bl ; div bl ; hlt
    let mut m = real_machine(&code);
    m.write_phys(0, &[0x00, 0x03, 0x00, 0x00]);
    m.write_phys(0x300, &[0xF4]);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().eip, 0x301);
    let mut ip = [0u8; 2];
    m.read_phys(m.cpu().gpr[Gpr::Esp], &mut ip);
    assert_eq!(u16::from_le_bytes(ip), 0x102);
    // Intercepted, the registers are those of the faulting instruction.
    let mut m = real_machine(&code);
    m.intercept(vector::DE, true);
    let r = m.run(Limits::default());
    assert_eq!(
        r,
        Exit::Exception {
            fault: Fault::new(vector::DE),
            software: false
        }
    );
    assert_eq!(m.cpu().eip, 0x102);
}

#[test]
fn host_delivers_an_interrupt() {
    let code = [0xF4];
    let mut m = real_machine(&code);
    m.write_phys(0x21 * 4, &[0x00, 0x04, 0x00, 0x00]);
    m.write_phys(0x400, &[0xF4]);
    m.deliver_interrupt(0x21, None).unwrap();
    assert_eq!(m.cpu().eip, 0x400);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().eip, 0x401);
}

#[test]
fn memory_access_paths_agree() {
    let mut m = real_machine(&[0xF4]);
    m.write_linear(0x1234, &[1, 2, 3]).unwrap();
    let mut b = [0u8; 3];
    m.read_phys(0x1234, &mut b);
    assert_eq!(b, [1, 2, 3]);
    m.write_virt(emu::SegReg::Ds, 0x1237, &[4]).unwrap();
    let mut v = [0u8; 4];
    m.read_virt(emu::SegReg::Ds, 0x1234, &mut v).unwrap();
    assert_eq!(v, [1, 2, 3, 4]);
    // Past the 64 KB limit of a real-mode segment: #GP, not a panic.
    assert!(m.read_virt(emu::SegReg::Ds, 0xFFFF, &mut v).is_err());
    // Beyond RAM reads float high.
    m.read_phys(0xFFFF_FFF0, &mut v);
    assert_eq!(v, [0xFF; 4]);
}

#[test]
fn instruction_straddling_a_page_sees_writes_to_either_page() {
    let mut m = real_machine(&[0xF4]);
    let code = [
        0x66, 0xB8, 0x11, 0x22, 0x33, 0x44, // 0FFC: mov eax,0x44332211 (crosses 0x1000)
        0x66, 0x01, 0xC3, // add ebx,eax
        0x41, // inc cx
        0xC6, 0x06, 0x01, 0x10, 0x55, // mov byte [0x1001],0x55
        0x83, 0xF9, 0x02, // cmp cx,2
        0x75, 0xEC, // jne 0FFC
        0xF4,
    ];
    m.write_phys(0xFFC, &code);
    m.set_eip(0xFFC);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Ebx], 0x4433_2211 + 0x5533_2211);
}

/// Regression (differential test): XADD with one register on both sides
/// leaves the sum.
#[test]
fn xadd_same_register() {
    let mut m = real_machine(&[0x0F, 0xC1, 0xD2, 0xF4]); // xadd dx,dx
    m.gpr_mut()[Gpr::Edx] = 8;
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Edx] & 0xFFFF, 16);
}

/// `write_phys` over ROM and past the end of RAM: RAM bytes are written,
/// ROM bytes and bytes beyond RAM are dropped, and the address wraps at
/// 4 GB, as byte writes would.
#[test]
fn physical_bulk_writes_skip_rom_and_open_bus() {
    let mut m = real_machine(&[0xF4]);
    m.map_rom(0x3800, vec![0xAA; 0x100]);
    let data: Vec<u8> = (0..0x1400u32).map(|i| (i * 3 + 1) as u8).collect();
    m.write_phys(0x2E00, &data);
    let mut got = vec![0u8; 0x1400];
    m.read_phys(0x2E00, &mut got);
    for (i, (&g, &d)) in got.iter().zip(&data).enumerate() {
        let a = 0x2E00 + i;
        let want = if (0x3800..0x3900).contains(&a) {
            0xAA
        } else {
            d
        };
        assert_eq!(g, want, "byte at {a:#x}");
    }
    // 1 MB of RAM: the bytes at 0xFFFFFFF8.. are dropped, those at 0..
    // after the wrap written.
    m.write_phys(0xFFFF_FFF8, &data[..0x10]);
    let mut low = [0u8; 8];
    m.read_phys(0, &mut low);
    assert_eq!(low, data[8..0x10]);
    let mut high = [0u8; 8];
    m.read_phys(0xFFFF_FFF8, &mut high);
    assert_eq!(high, [0xFF; 8]);
}
