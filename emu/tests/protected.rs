//! Protected mode: segment checks and their error codes, privilege
//! transitions through call gates and the IDT with TSS stack switches,
//! and the descriptor-inspection instructions.

mod common;

use common::*;
use emu::{Exit, Fault, Gpr, Limits, SegReg, flags, vector};
use iced_x86::code_asm::*;

fn run_fault(m: &mut emu::Machine, v: u8) -> Fault {
    run_to_fault(m, v, 1000)
}

#[test]
fn limit_violation_is_gp0_at_the_faulting_instruction() {
    let head = asm(32, 0x2000, |a| {
        a.mov(ax, SMALL as i32).unwrap();
        a.mov(ds, ax).unwrap();
        a.mov(eax, dword_ptr(0xFFC)).unwrap();
    });
    let at = 0x2000 + head.len() as u32;
    let mut code = head;
    code.extend(asm(32, u64::from(at), |a| {
        a.mov(eax, dword_ptr(0xFFD)).unwrap();
        a.hlt().unwrap();
    }));
    let mut m = prot_machine(&code);
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0));
    assert_eq!(m.cpu().eip, at);
}

#[test]
fn expand_down_segment_accepts_offsets_above_the_limit() {
    let head = asm(32, 0x2000, |a| {
        a.mov(ax, EXPDOWN as i32).unwrap();
        a.mov(es, ax).unwrap();
        a.mov(eax, dword_ptr(0x2000).es()).unwrap();
    });
    let at = 0x2000 + head.len() as u32;
    let mut code = head;
    code.extend(asm(32, u64::from(at), |a| {
        a.mov(eax, dword_ptr(0x800).es()).unwrap();
        a.hlt().unwrap();
    }));
    let mut m = prot_machine(&code);
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0));
    assert_eq!(m.cpu().eip, at);
}

#[test]
fn segment_load_errors_carry_the_selector() {
    let code = asm(32, 0x2000, |a| {
        a.mov(ax, ABSENT as i32).unwrap();
        a.mov(ds, ax).unwrap();
    });
    let mut m = prot_machine(&code);
    assert_eq!(run_fault(&mut m, vector::NP), Fault::np(u32::from(ABSENT)));

    let code = asm(32, 0x2000, |a| {
        a.xor(eax, eax).unwrap();
        a.mov(ss, ax).unwrap();
    });
    let mut m = prot_machine(&code);
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0));

    // Beyond the GDT limit.
    let code = asm(32, 0x2000, |a| {
        a.mov(ax, 0x1F8).unwrap();
        a.mov(fs, ax).unwrap();
    });
    let mut m = prot_machine(&code);
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0x1F8));

    // CS as a data segment is not writable.
    let head = asm(32, 0x2000, |a| {
        a.mov(ax, CODE32 as i32).unwrap();
        a.mov(ds, ax).unwrap();
        a.mov(eax, dword_ptr(0x100)).unwrap();
    });
    let at = 0x2000 + head.len() as u32;
    let mut code = head;
    code.extend([0xA3, 0, 1, 0, 0]); // mov [0x100], eax
    let mut m = prot_machine(&code);
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0));
    assert_eq!(m.cpu().eip, at);
}

/// Ring 0 -> ring 3 by RETF, back to ring 0 through a call gate with a
/// TSS stack switch, and out again by RETF.
#[test]
fn call_gate_switches_stacks_and_returns() {
    let ring0 = retf_to_ring3();
    let mut m = prot_machine(&ring0);
    // Ring 3 at 0x2100: call far GATE:0 ; hlt (privileged -> #GP at CPL 3).
    let mut ring3 = vec![0x9A, 0, 0, 0, 0];
    ring3.extend_from_slice(&GATE.to_le_bytes());
    ring3.push(0xF4);
    m.write_phys(0x2100, &ring3);
    // Gate target at 0x2800: record CPL via the stack, then retf.
    m.write_phys(0x2800, &[0xCB]);
    m.add_host_call(0x2800);
    assert_eq!(m.run(Limits::default()), Exit::HostCall { linear: 0x2800 });
    let c = m.cpu();
    assert_eq!(c.cpl, 0);
    assert_eq!(c.seg[SegReg::Ss as usize].selector, DATA32);
    assert_eq!(c.gpr[Gpr::Esp], 0x9000 - 16);
    let mut frame = [0u8; 16];
    m.read_phys(0x9000 - 16, &mut frame);
    let w = |i: usize| u32::from_le_bytes(frame[4 * i..4 * i + 4].try_into().unwrap());
    assert_eq!(w(0), 0x2107, "return EIP");
    assert_eq!(w(1) & 0xFFFF, u32::from(CODE3));
    assert_eq!(w(2), 0x7000, "outer ESP");
    assert_eq!(w(3) & 0xFFFF, u32::from(DATA3));
    // RETF back to ring 3, where HLT faults.
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0));
    let c = m.cpu();
    assert_eq!(c.cpl, 3);
    assert_eq!(c.eip, 0x2107);
    assert_eq!(c.gpr[Gpr::Esp], 0x7000);
    assert_eq!(c.seg[SegReg::Ss as usize].selector, DATA3);
}

#[test]
fn software_interrupt_from_ring3_through_the_idt() {
    let ring0 = asm(32, 0x2000, |a| {
        a.push(DATA3 as i32).unwrap();
        a.push(0x7000).unwrap();
        a.pushfd().unwrap();
        a.or(dword_ptr(esp), 0x200).unwrap();
        a.push(CODE3 as i32).unwrap();
        a.push(0x2100).unwrap();
        a.iretd().unwrap();
    });
    let mut m = prot_machine(&ring0);
    m.write_phys(0x2100, &[0xCD, 0x80, 0xCD, 0x81, 0xF4]); // int 80h ; int 81h
    set_int_gate(&mut m, 0x80, 0x2900, 3);
    set_int_gate(&mut m, 0x81, 0x2A00, 0);
    m.write_phys(0x2900, &[0xCF]); // iretd
    m.add_host_call(0x2900);
    assert_eq!(m.run(Limits::default()), Exit::HostCall { linear: 0x2900 });
    let c = m.cpu();
    assert_eq!(c.cpl, 0);
    assert_eq!(c.eflags & flags::IF, 0, "interrupt gate clears IF");
    assert_eq!(c.gpr[Gpr::Esp], 0x9000 - 20);
    // IRETD back to ring 3; INT 81h's gate has DPL 0: #GP(81h*8+2).
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0x81 * 8 + 2));
    let c = m.cpu();
    assert_eq!(c.cpl, 3);
    assert_eq!(c.eip, 0x2102);
    assert_ne!(c.eflags & flags::IF, 0, "IRET restored IF");
}

#[test]
fn exception_through_idt_pushes_error_code() {
    let code = asm(32, 0x2000, |a| {
        a.mov(ax, ABSENT as i32).unwrap();
        a.mov(gs, ax).unwrap();
    });
    let mut m = prot_machine(&code);
    set_int_gate(&mut m, vector::NP, 0x2C00, 0);
    m.write_phys(0x2C00, &[0xF4]);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    let mut st = [0u8; 8];
    m.read_phys(m.cpu().gpr[Gpr::Esp], &mut st);
    assert_eq!(
        u32::from_le_bytes(st[0..4].try_into().unwrap()),
        u32::from(ABSENT)
    );
    assert_eq!(u32::from_le_bytes(st[4..8].try_into().unwrap()), 0x2004);
}

#[test]
fn lar_lsl_verr_verw_arpl() {
    let code = asm(32, 0x2000, |a| {
        a.mov(ecx, SMALL as i32).unwrap();
        a.lsl(eax, ecx).unwrap();
        a.lar(ebx, ecx).unwrap();
        a.mov(ecx, CODE32 as i32).unwrap();
        a.verw(cx).unwrap();
        a.setz(dl).unwrap();
        a.verr(cx).unwrap();
        a.setz(dh).unwrap();
        a.mov(si, 0x10).unwrap();
        a.mov(di, 3).unwrap();
        a.arpl(si, di).unwrap();
        a.hlt().unwrap();
    });
    let mut m = prot_machine(&code);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    let g = m.cpu().gpr;
    assert_eq!(g[0], 0xFFF);
    assert_eq!(g[3], 0x0040_9200, "LAR does not set the accessed bit");
    assert_eq!(
        g[2] & 0xFFFF,
        0x0100,
        "VERW code = ZF0, VERR readable code = ZF1"
    );
    assert_eq!(g[6] & 0xFFFF, 0x13);
}

#[test]
fn iopl_rules_for_cli_and_io() {
    let ring0 = asm(32, 0x2000, |a| {
        a.push(DATA3 as i32).unwrap();
        a.push(0x7000).unwrap();
        a.push(0x2).unwrap();
        a.push(CODE3 as i32).unwrap();
        a.push(0x2100).unwrap();
        a.iretd().unwrap();
    });
    let mut m = prot_machine(&ring0);
    m.write_phys(0x2100, &[0xFA]); // cli at CPL 3, IOPL 0
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0));
    assert_eq!(m.cpu().eip, 0x2100);
    // IN with an I/O bitmap that allows port 0x60 only.
    m.write_phys(0x2100, &[0xE4, 0x60, 0xE4, 0x61]);
    m.write_phys(0x3000 + 0x68 + 12, &[0xFE]);
    let mut tr = m.cpu().tr;
    tr.limit = 0x68 + 32;
    m.cpu_mut_flush_tlb().tr = tr;
    assert_eq!(run_fault(&mut m, vector::GP), Fault::gp(0));
    assert_eq!(m.cpu().eip, 0x2102);
}

/// CALL to a TSS runs the other task with NT and a back link; its IRET
/// returns to the caller, leaving the busy bits and TS as the manual says.
#[test]
fn task_switch_by_call_and_iret() {
    let mut call = vec![0x9A, 0, 0, 0, 0, 0x50, 0x00]; // call far 0x50:0
    call.push(0xF4);
    let mut m = prot_machine(&call);
    let tss2 = 0x3100u32;
    m.write_phys(GDT + 0x50, &desc(tss2, 0x67, 0x89, 0).to_le_bytes());
    m.cpu_mut_flush_tlb().gdtr.limit = 0x57;
    // Mark the running task's TSS busy, as LTR would have.
    m.write_phys(GDT + u32::from(TSS) + 5, &[0x8B]);
    let put = |m: &mut emu::Machine, off: u32, v: u32| m.write_phys(tss2 + off, &v.to_le_bytes());
    put(&mut m, 0x20, 0x2400);
    put(&mut m, 0x24, 0x2);
    put(&mut m, 0x38, 0x6000);
    for (off, sel) in [
        (0x48, DATA32),
        (0x4C, CODE32),
        (0x50, DATA32),
        (0x54, DATA32),
    ] {
        put(&mut m, off, u32::from(sel));
    }
    // Task 2: mov eax, 0x1234 ; iretd
    m.write_phys(0x2400, &[0xB8, 0x34, 0x12, 0, 0, 0xCF]);
    m.gpr_mut()[Gpr::Eax] = 0x55;
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    let c = m.cpu().clone();
    assert_eq!(c.eip, 0x2008, "back in task 1 after the CALL");
    assert_eq!(
        c.gpr[Gpr::Eax],
        0x55,
        "task 1 registers restored from its TSS"
    );
    assert_eq!(c.tr.selector, TSS);
    assert_ne!(c.cr0 & 8, 0, "CR0.TS set by the switch");
    assert_eq!(c.eflags & flags::NT, 0);
    let mut b = [0u8; 4];
    m.read_phys(tss2 + 0x28, &mut b);
    assert_eq!(u32::from_le_bytes(b), 0x1234, "task 2 EAX saved");
    m.read_phys(tss2, &mut b);
    assert_eq!(u16::from_le_bytes([b[0], b[1]]), TSS, "back link");
    m.read_phys(GDT + 0x55, &mut b[..1]);
    assert_eq!(b[0], 0x89, "task 2 no longer busy after IRET");
    m.read_phys(GDT + u32::from(TSS) + 5, &mut b[..1]);
    assert_eq!(b[0], 0x8B, "task 1 still busy");
}

/// A machine running `code` with a second 386 TSS at GDT selector 0x50
/// whose DS selector lies beyond the GDT (EIP 0x2400, EAX 0x7777).
fn machine_with_a_bad_tss(code: &[u8]) -> emu::Machine {
    let mut m = prot_machine(code);
    let tss2 = 0x3100u32;
    m.write_phys(GDT + 0x50, &desc(tss2, 0x67, 0x89, 0).to_le_bytes());
    m.cpu_mut_flush_tlb().gdtr.limit = 0x57;
    m.write_phys(GDT + u32::from(TSS) + 5, &[0x8B]);
    let put = |m: &mut emu::Machine, off: u32, v: u32| m.write_phys(tss2 + off, &v.to_le_bytes());
    put(&mut m, 0x20, 0x2400); // EIP
    put(&mut m, 0x24, 0x2); // EFLAGS
    put(&mut m, 0x28, 0x7777); // EAX
    put(&mut m, 0x38, 0x6000); // ESP
    for (off, sel) in [
        (0x48, DATA32),
        (0x4C, CODE32),
        (0x50, DATA32),
        (0x54, BEYOND_GDT), // DS
    ] {
        put(&mut m, off, u32::from(sel));
    }
    m
}

const BEYOND_GDT: u16 = 0x60;

/// The fault after the commit point of a switch to the bad TSS: #TS with
/// the selector, raised in the new task (TR, EIP, registers and NT are the
/// new task's).
fn assert_faulted_in_the_new_task(m: &mut emu::Machine) {
    assert_eq!(run_fault(m, vector::TS), Fault::ts(u32::from(BEYOND_GDT)));
    let c = m.cpu();
    assert_eq!(c.tr.selector, 0x50, "TR is the new task's");
    assert_eq!(c.eip, 0x2400, "EIP is the new task's");
    assert_eq!(c.gpr[Gpr::Eax], 0x7777, "registers are the new task's");
    assert_ne!(
        c.eflags & flags::NT,
        0,
        "nested, as the CALL or INT made it"
    );
}

#[test]
fn a_bad_selector_in_the_incoming_tss_faults_in_the_new_task() {
    // call far 0x50:0; hlt
    let mut m = machine_with_a_bad_tss(&[0x9A, 0, 0, 0, 0, 0x50, 0x00, 0xF4]);
    assert_faulted_in_the_new_task(&mut m);
}

#[test]
fn an_idt_task_gate_to_a_bad_tss_faults_in_the_new_task() {
    // int 0x40; hlt, with a task gate for 0x40 naming the bad TSS.
    let mut m = machine_with_a_bad_tss(&[0xCD, 0x40, 0xF4]);
    m.write_phys(IDT + 8 * 0x40, &gate(0x50, 0, 0x85, 0).to_le_bytes());
    assert_faulted_in_the_new_task(&mut m);
}

/// The same for an exception delivered through a task gate: the #TS after
/// the commit point is a new exception in the new task, not a double fault
/// (which a contributory #TS while delivering a #GP would otherwise be).
#[test]
fn an_exception_through_a_task_gate_to_a_bad_tss_faults_in_the_new_task() {
    // mov ax, 0x68; mov ds, ax (beyond the GDT: #GP); hlt, with a task
    // gate for #GP naming the bad TSS.
    let mut m = machine_with_a_bad_tss(&[0x66, 0xB8, 0x68, 0x00, 0x8E, 0xD8, 0xF4]);
    m.write_phys(
        IDT + 8 * u32::from(vector::GP),
        &gate(0x50, 0, 0x85, 0).to_le_bytes(),
    );
    assert_faulted_in_the_new_task(&mut m);
}
