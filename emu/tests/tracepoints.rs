//! Tracepoints the emulator keeps (`Machine::insert_tracepoint`) against
//! the way hits used to run: the host put the original byte back, set TF,
//! and re-inserted the INT3 at the #DB after the one instruction.
//!
//! Every case runs six ways (the old host, the emulator keeping the
//! original with hits at exits or inside the run loop through a
//! `TrapHandler`; interpreter and native tier) and
//! must end in the same registers, flags, memory, cycles and instruction
//! count, with the same hits and the same guest #DBs. Cases: a tracepoint
//! on a jump, a call, a far call, a `ret`, a `loop`, a REP string
//! instruction, an instruction that faults, a guest that reads or writes
//! the patched byte, self-modifying code over a tracepoint, a guest that
//! single-steps through one, removal at a hit, a stop at a hit (SysDump),
//! two tracepoints in one block, a tracepoint in a native hot loop; in
//! real mode, 16- and 32-bit protected mode, and with paging. One more
//! case shows tracepoints belong to physical memory: two page directories
//! mapping one linear page to two frames have their own.

mod common;

use common::*;
use emu::{Descriptor, Exit, Fault, Gpr, Limits, Machine, SegReg, TrapHandler, flags, vector};
use iced_x86::code_asm::*;

/// How the host runs the original instruction at a hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Host {
    /// The old way: patch the byte back, single-step with TF, re-insert.
    Patch,
    /// The emulator keeps the original and runs it out of line.
    Keep,
    /// As `Keep`, with the hits taken inside the run loop by a
    /// [`TrapHandler`] (`Machine::run_with`), no exit.
    InLoop,
}

/// The `InLoop` host's handler: the `Keep` host's work at a hit.
struct InLoop<'a> {
    hits: &'a mut Vec<(u32, u32, u32)>,
    live: &'a mut Vec<u32>,
    originals: &'a [(u32, u8)],
    plan: Plan,
    stopped: bool,
}

impl TrapHandler for InLoop<'_> {
    fn breakpoint(&mut self, m: &mut Machine, at: u32) -> bool {
        assert_eq!(at, linear_eip(m).wrapping_sub(1));
        assert!(self.live.contains(&at), "a guest INT3 at {at:#x}");
        let g = m.cpu().gpr;
        self.hits.push((at, g[0], g[1]));
        let n = self.hits.len();
        assert_eq!(m.resume_at_tracepoint(), at);
        if self.plan.stop_at == Some(n) {
            self.stopped = true;
            return false;
        }
        if self.plan.remove_at == Some(n) {
            self.live.retain(|&a| a != at);
            let original = self.originals.iter().find(|(a, _)| *a == at).unwrap().1;
            assert_eq!(m.remove_tracepoint(at).unwrap(), Some(original));
        }
        true
    }
}

/// What the host does at a hit.
#[derive(Clone, Copy, Debug, Default)]
struct Plan {
    /// Remove the tracepoint at this hit (1-based), as `Remove` does.
    remove_at: Option<usize>,
    /// Stop the run at this hit, as `SysDump` does.
    stop_at: Option<usize>,
    /// Vectors whose exceptions end the run (the guest's faults).
    stop_on: &'static [u8],
}

/// How a run ended and what it saw.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    end: String,
    /// (linear address, EAX, ECX) at each hit.
    hits: Vec<(u32, u32, u32)>,
    /// EIP at each #DB the guest asked for.
    guest_steps: Vec<u32>,
    gpr: [u32; 8],
    eip: u32,
    eflags: u32,
    cycles: u64,
    instructions: u64,
    memory: Vec<u8>,
}

fn linear_eip(m: &Machine) -> u32 {
    m.cpu().sreg(SegReg::Cs).base.wrapping_add(m.cpu().eip)
}

/// Runs `m` to HLT (or a stop) with tracepoints at `tps`.
fn run(mut m: Machine, tps: &[u32], host: Host, jit: bool, plan: Plan) -> Run {
    m.set_jit(jit);
    // The threshold these cases were sized for.
    m.set_jit_threshold(32);
    let mut originals = Vec::new();
    for &tp in tps {
        let original = match host {
            Host::Keep | Host::InLoop => m.insert_tracepoint(tp).unwrap(),
            Host::Patch => {
                let mut b = [0u8];
                m.read_linear(tp, &mut b).unwrap();
                m.patch_code(tp, &[0xCC]).unwrap();
                b[0]
            }
        };
        originals.push((tp, original));
    }
    m.intercept(vector::BP, true);
    m.intercept(vector::DB, true);
    for &v in plan.stop_on {
        m.intercept(v, true);
    }
    let mut hits = Vec::new();
    let mut guest_steps = Vec::new();
    // The old host's single step in flight: (address, guest's own TF).
    let mut stepping: Option<(u32, bool)> = None;
    let mut live: Vec<u32> = tps.to_vec();
    let end = loop {
        let limits = Limits {
            instructions: Some(100_000),
            cycles: None,
        };
        let exit = if host == Host::InLoop {
            let mut h = InLoop {
                hits: &mut hits,
                live: &mut live,
                originals: &originals,
                plan,
                stopped: false,
            };
            let exit = m.run_with(limits, Some(&mut h));
            if h.stopped {
                break "stopped".to_string();
            }
            exit
        } else {
            m.run(limits)
        };
        match exit {
            Exit::Halted => break "halted".to_string(),
            Exit::Exception {
                fault,
                software: true,
            } if fault.vector == vector::BP => {
                assert_ne!(host, Host::InLoop, "a hit the handler declined");
                let at = linear_eip(&m).wrapping_sub(1);
                assert!(live.contains(&at), "a guest INT3 at {at:#x}");
                let g = m.cpu().gpr;
                hits.push((at, g[0], g[1]));
                let n = hits.len();
                let original = originals.iter().find(|(a, _)| *a == at).unwrap().1;
                let eip = m.cpu().eip.wrapping_sub(1);
                let eip = if m.cpu().sreg(SegReg::Cs).big() {
                    eip
                } else {
                    eip & 0xFFFF
                };
                match host {
                    Host::Keep | Host::InLoop => {
                        assert_eq!(m.resume_at_tracepoint(), at);
                    }
                    Host::Patch => m.set_eip(eip),
                }
                if plan.stop_at == Some(n) {
                    break "stopped".to_string();
                }
                if plan.remove_at == Some(n) {
                    live.retain(|&a| a != at);
                    match host {
                        Host::Keep | Host::InLoop => {
                            assert_eq!(m.remove_tracepoint(at).unwrap(), Some(original))
                        }
                        Host::Patch => m.patch_code(at, &[original]).unwrap(),
                    }
                    continue;
                }
                if host == Host::Patch {
                    m.patch_code(at, &[original]).unwrap();
                    let tf = *m.eflags_mut() & flags::TF != 0;
                    *m.eflags_mut() |= flags::TF;
                    stepping = Some((at, tf));
                }
            }
            Exit::Exception { fault, .. } if fault.vector == vector::DB => {
                if let Some((at, guest_tf)) = stepping.take() {
                    if live.contains(&at) {
                        m.patch_code(at, &[0xCC]).unwrap();
                    }
                    if !guest_tf {
                        *m.eflags_mut() &= !flags::TF;
                        m.dr_mut()[6] &= !0x4000;
                        continue;
                    }
                }
                guest_steps.push(linear_eip(&m));
            }
            Exit::Exception { fault, .. } if plan.stop_on.contains(&fault.vector) => {
                break format!("fault {fault:?}");
            }
            other => panic!("unexpected exit {other:?} at {:#x}", linear_eip(&m)),
        }
    };
    let mut memory = vec![0u8; 0x3000];
    m.read_phys(0, &mut memory);
    Run {
        end,
        hits,
        guest_steps,
        gpr: m.cpu().gpr,
        eip: m.cpu().eip,
        eflags: m.cpu().eflags,
        cycles: m.cycles(),
        instructions: m.instructions(),
        memory,
    }
}

/// Runs `make()` all six ways and checks they agree; returns the run.
/// `tf_differs`: a run that stops at a fault inside the old host's single
/// step, where only the old host had set TF.
fn same_four_ways(make: impl Fn() -> Machine, tps: &[u32], plan: Plan, tf_differs: bool) -> Run {
    let reference = run(make(), tps, Host::Patch, false, plan);
    for (host, jit) in [
        (Host::Patch, true),
        (Host::Keep, false),
        (Host::Keep, true),
        (Host::InLoop, false),
        (Host::InLoop, true),
    ] {
        let mut r = run(make(), tps, host, jit, plan);
        let mut want_flags = reference.eflags;
        if tf_differs && host != Host::Patch {
            assert_eq!(r.eflags & flags::TF, 0, "the guest's own TF at its fault");
            want_flags &= !flags::TF;
            r.eflags &= !flags::TF;
        }
        assert_eq!(r.eflags, want_flags, "{host:?} jit={jit}");
        assert_eq!(
            (&r.end, &r.hits, &r.guest_steps),
            (&reference.end, &reference.hits, &reference.guest_steps),
            "{host:?} jit={jit}"
        );
        assert_eq!(
            (r.gpr, r.eip, r.cycles, r.instructions),
            (
                reference.gpr,
                reference.eip,
                reference.cycles,
                reference.instructions
            ),
            "{host:?} jit={jit}"
        );
        let mut want = reference.memory.clone();
        if tf_differs {
            // The old host had put the original byte back for its step.
            for &tp in tps {
                want[tp as usize] = r.memory[tp as usize];
            }
        }
        assert!(r.memory == want, "{host:?} jit={jit}: memory");
    }
    reference
}

/// Real mode: code at 0000:0100.
const REAL: u32 = 0x100;
/// Protected mode: code at 0x2000 (flat).
const PROT: u32 = 0x2000;

/// A 16-bit protected-mode code segment (base 0, limit 64 KB).
const CODE16: u16 = 0x50;

fn prot16_machine(code: &[u8]) -> Machine {
    let mut m = prot_machine(code);
    let d = desc(0, 0xFFFF, 0x9A, 0);
    m.write_phys(GDT + u32::from(CODE16), &d.to_le_bytes());
    m.cpu_mut_flush_tlb().gdtr.limit = 0x57;
    m.set_segment(SegReg::Cs, Descriptor(d).to_segment(CODE16));
    m
}

fn paged_machine(code: &[u8]) -> Machine {
    const PD: u32 = 0x10_0000;
    const PT: u32 = 0x10_1000;
    let mut m = prot_machine(code);
    m.write_phys(PD, &(PT | 7).to_le_bytes());
    for p in 0..1024u32 {
        m.write_phys(PT + p * 4, &((p << 12) | 7).to_le_bytes());
    }
    let c = m.cpu_mut_flush_tlb();
    c.cr3 = PD;
    c.cr0 |= 0x8000_0000;
    m
}

/// Assembles `f` at `base` with labels the case needs; returns the code
/// and the addresses of the labels named in `marks`, in order.
fn code(
    bits: u32,
    base: u32,
    f: impl FnOnce(&mut CodeAssembler, &mut Vec<CodeLabel>),
) -> (Vec<u8>, Vec<u32>) {
    let mut a = CodeAssembler::new(bits).unwrap();
    let mut marks = Vec::new();
    f(&mut a, &mut marks);
    let r = a
        .assemble_options(
            u64::from(base),
            iced_x86::BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS,
        )
        .unwrap();
    let addrs = marks
        .iter()
        .map(|l| r.label_ip(l).unwrap() as u32)
        .collect();
    (r.inner.code_buffer, addrs)
}

/// As [`code`], for code that uses the addresses of its own marks as
/// constants: `f` gets them (placeholders on a first pass that finds them).
fn code_at(
    bits: u32,
    base: u32,
    f: impl Fn(&mut CodeAssembler, &mut Vec<CodeLabel>, &[u32]),
) -> (Vec<u8>, Vec<u32>) {
    let (_, found) = code(bits, base, |a, m| f(a, m, &[0x0100_0000; 8]));
    let (bytes, again) = code(bits, base, |a, m| f(a, m, &found));
    assert_eq!(found, again, "the layout does not depend on the constants");
    (bytes, again)
}

/// Places a fresh label here and remembers it as a mark.
fn mark(a: &mut CodeAssembler, marks: &mut Vec<CodeLabel>) {
    let mut l = a.create_label();
    mark_at(a, marks, &mut l);
}

/// Places `l` here and remembers it as a mark.
fn mark_at(a: &mut CodeAssembler, marks: &mut Vec<CodeLabel>, l: &mut CodeLabel) {
    a.set_label(l).unwrap();
    marks.push(*l);
}

/// Control transfers at tracepoints: JMP, CALL, RET, LOOP and REP MOVSB in
/// 16-bit code (real mode or 16-bit protected mode).
fn flow16(base: u32) -> (Vec<u8>, Vec<u32>) {
    code(16, base, |a, m| {
        let mut sub = a.create_label();
        let mut over = a.create_label();
        let mut top = a.create_label();
        a.mov(cx, 3).unwrap();
        mark_at(a, m, &mut top); // jmp
        a.jmp(over).unwrap();
        a.nop().unwrap();
        mark_at(a, m, &mut over); // call
        a.call(sub).unwrap();
        a.add(ax, 7).unwrap();
        mark(a, m); // loop
        a.loop_(top).unwrap();
        a.mov(si, 0x1800).unwrap();
        a.mov(di, 0x1900).unwrap();
        a.mov(cx, 0x40).unwrap();
        a.cld().unwrap();
        mark(a, m); // rep movsb
        a.rep().movsb().unwrap();
        a.hlt().unwrap();
        a.set_label(&mut sub).unwrap();
        a.inc(bx).unwrap();
        mark(a, m); // ret
        a.ret().unwrap();
    })
}

#[test]
fn jump_call_ret_loop_and_rep_string_in_real_mode() {
    let (c, tps) = flow16(REAL);
    let r = same_four_ways(
        || {
            let mut m = real_machine(&c);
            m.write_phys(0x1800, &[0x5A; 0x40]);
            m
        },
        &tps,
        Plan::default(),
        false,
    );
    assert_eq!(r.hits.len(), 3 * 4 + 1);
    assert_eq!(r.memory[0x1900..0x1940], [0x5A; 0x40]);
}

#[test]
fn jump_call_ret_loop_and_rep_string_in_16_bit_protected_mode() {
    let (c, tps) = flow16(PROT);
    let r = same_four_ways(
        || {
            let mut m = prot16_machine(&c);
            m.write_phys(0x1800, &[0xA5; 0x40]);
            m
        },
        &tps,
        Plan::default(),
        false,
    );
    assert_eq!(r.hits.len(), 13);
    assert_eq!(r.memory[0x1900..0x1940], [0xA5; 0x40]);
}

#[test]
fn far_calls_in_real_mode_and_32_bit_protected_mode() {
    // Real mode: call far 0000:0106 / hlt / 0106: inc ax / retf.
    let real = vec![0x9A, 0x06, 0x01, 0x00, 0x00, 0xF4, 0x40, 0xCB];
    let r = same_four_ways(
        || real_machine(&real),
        &[REAL, REAL + 7],
        Plan::default(),
        false,
    );
    assert_eq!(r.hits.len(), 2);
    assert_eq!(r.gpr[Gpr::Eax] & 0xFFFF, 1);

    // 32-bit protected mode: call far CODE32:far / hlt / far: inc eax / retf.
    let far_at = PROT + 0x40;
    let mut c32 = vec![0x9A];
    c32.extend(far_at.to_le_bytes());
    c32.extend(CODE32.to_le_bytes());
    c32.push(0xF4);
    c32.resize(0x40, 0x90);
    c32.extend([0x40, 0xCB]);
    let r = same_four_ways(
        || prot_machine(&c32),
        &[PROT, far_at + 1],
        Plan::default(),
        false,
    );
    assert_eq!(r.hits.len(), 2);
    assert_eq!(r.gpr[Gpr::Eax], 1);
}

/// A register-only loop the native tier takes, with two tracepoints in its
/// block: `xor` and `dec`.
fn hot_loop() -> (Vec<u8>, Vec<u32>) {
    code(32, PROT, |a, m| {
        let mut top = a.create_label();
        a.mov(ecx, 300).unwrap();
        a.set_label(&mut top).unwrap();
        a.add(eax, ecx).unwrap();
        mark(a, m);
        a.xor(ebx, eax).unwrap();
        a.lea(edx, dword_ptr(edx + ebx * 2)).unwrap();
        mark(a, m);
        a.dec(ecx).unwrap();
        a.jne(top).unwrap();
        mark(a, m); // never reached: after the HLT
        a.hlt().unwrap();
        a.mov(eax, 1).unwrap();
    })
}

#[test]
fn tracepoints_in_a_native_hot_loop_two_in_one_block() {
    let (c, tps) = hot_loop();
    let r = same_four_ways(|| prot_machine(&c), &tps[..2], Plan::default(), false);
    assert_eq!(r.hits.len(), 600);
    // With paging too.
    let r = same_four_ways(|| paged_machine(&c), &tps[..1], Plan::default(), false);
    assert_eq!(r.hits.len(), 300);
}

#[test]
fn a_tracepoint_never_reached_costs_the_native_tier_nothing() {
    let (c, tps) = hot_loop();
    let never = tps[2] + 1; // the MOV after the HLT
    for paged in [false, true] {
        let make = || {
            if paged {
                paged_machine(&c)
            } else {
                prot_machine(&c)
            }
        };
        let mut plain = make();
        assert_eq!(plain.run(Limits::default()), Exit::Halted);
        let mut traced = make();
        traced.insert_tracepoint(never).unwrap();
        assert_eq!(traced.run(Limits::default()), Exit::Halted);
        assert!(plain.jit_stats().instructions > 0, "the loop ran natively");
        assert_eq!(traced.jit_stats(), plain.jit_stats(), "no block split");
        assert_eq!(traced.cpu().gpr, plain.cpu().gpr);
        assert_eq!(traced.cycles(), plain.cycles());
    }
}

#[test]
fn a_faulting_instruction_at_a_tracepoint_faults_at_its_own_eip() {
    // mov ax,SMALL / mov ds,ax / mov eax,[0xFFD] (past the limit: #GP).
    let (c, tps) = code(32, PROT, |a, m| {
        a.mov(ax, SMALL as i32).unwrap();
        a.mov(ds, ax).unwrap();
        mark(a, m);
        a.mov(eax, dword_ptr(0xFFD)).unwrap();
        a.hlt().unwrap();
    });
    let plan = Plan {
        stop_on: &[vector::GP],
        ..Plan::default()
    };
    let r = same_four_ways(|| prot_machine(&c), &tps, plan, true);
    assert_eq!(r.end, format!("fault {:?}", Fault::gp(0)));
    assert_eq!(r.hits.len(), 1);
    assert_eq!(r.eip, tps[0], "the fault is at the traced instruction");
    // Under paging: a not-present page read at a tracepoint.
    let (c, tps) = code(32, PROT, |a, m| {
        mark(a, m);
        a.mov(eax, dword_ptr(0x0020_0000)).unwrap();
        a.hlt().unwrap();
    });
    let make = || {
        let mut m = paged_machine(&c);
        m.write_phys(0x10_1000 + 0x200 * 4, &0u32.to_le_bytes());
        m
    };
    let plan = Plan {
        stop_on: &[vector::PF],
        ..Plan::default()
    };
    let r = same_four_ways(make, &tps, plan, true);
    assert_eq!(r.eip, tps[0]);
}

#[test]
fn the_guest_reads_and_writes_the_patched_byte() {
    // Reads its own tracepoint byte (0xCC, as on OS/2) then runs it.
    let (c, tps) = code_at(32, PROT, |a, m, at| {
        let mut tp = a.create_label();
        a.mov(esi, 0).unwrap();
        a.mov(bl, byte_ptr(at[0])).unwrap();
        mark_at(a, m, &mut tp);
        a.inc(esi).unwrap();
        a.hlt().unwrap();
    });
    let r = same_four_ways(|| prot_machine(&c), &tps, Plan::default(), false);
    assert_eq!(r.gpr[Gpr::Ebx] & 0xFF, 0xCC, "the guest sees the INT3");
    assert_eq!((r.hits.len(), r.gpr[Gpr::Esi]), (1, 1));

    // Writes 0xCC over it (it stays a tracepoint), then a NOP (it is gone).
    let (c, tps) = code_at(32, PROT, |a, m, at| {
        let mut tp = a.create_label();
        let mut top = a.create_label();
        a.mov(ecx, 3).unwrap();
        a.set_label(&mut top).unwrap();
        a.mov(byte_ptr(at[0]), 0xCC).unwrap();
        a.cmp(ecx, 1).unwrap();
        a.jne(tp).unwrap();
        a.mov(byte_ptr(at[0]), 0x90).unwrap();
        mark_at(a, m, &mut tp);
        a.inc(esi).unwrap(); // 0x46: becomes NOP + the rest on the last pass
        a.dec(ecx).unwrap();
        a.jne(top).unwrap();
        a.hlt().unwrap();
    });
    let r = same_four_ways(|| prot_machine(&c), &tps, Plan::default(), false);
    assert_eq!(r.hits.len(), 2, "hit until the guest overwrote the INT3");
}

#[test]
fn self_modifying_code_over_a_tracepoint() {
    // The immediate of the traced MOV changes between passes.
    let (c, tps) = code_at(32, PROT, |a, m, at| {
        let mut tp = a.create_label();
        let mut top = a.create_label();
        a.mov(ecx, 3).unwrap();
        a.set_label(&mut top).unwrap();
        a.mov(dword_ptr(at[0] + 1), ecx).unwrap();
        mark_at(a, m, &mut tp);
        a.mov(eax, 0x1234_5678).unwrap();
        a.add(ebx, eax).unwrap();
        a.dec(ecx).unwrap();
        a.jne(top).unwrap();
        a.hlt().unwrap();
    });
    let r = same_four_ways(|| prot_machine(&c), &tps, Plan::default(), false);
    assert_eq!(r.hits.len(), 3);
    assert_eq!(
        r.gpr[Gpr::Ebx],
        3 + 2 + 1,
        "each pass ran the rewritten immediate"
    );
}

#[test]
fn a_guest_single_stepping_through_a_tracepoint_gets_its_own_steps() {
    for (bits, base) in [(16, REAL), (32, PROT)] {
        let (c, tps) = code(bits, base, |a, m| {
            if bits == 16 {
                a.pushf().unwrap();
                a.pop(ax).unwrap();
                a.or(ax, 0x100).unwrap();
                a.push(ax).unwrap();
                a.popf().unwrap();
            } else {
                a.pushfd().unwrap();
                a.or(dword_ptr(esp), 0x100).unwrap();
                a.popfd().unwrap();
            }
            a.nop().unwrap();
            mark(a, m);
            if bits == 16 {
                a.inc(bx).unwrap();
            } else {
                a.inc(ebx).unwrap();
            }
            a.nop().unwrap();
            if bits == 16 {
                a.pushf().unwrap();
                a.pop(ax).unwrap();
                a.and(ax, !0x100).unwrap();
                a.push(ax).unwrap();
                a.popf().unwrap();
            } else {
                a.pushfd().unwrap();
                a.and(dword_ptr(esp), !0x100).unwrap();
                a.popfd().unwrap();
            }
            a.hlt().unwrap();
        });
        let make = || {
            if bits == 16 {
                real_machine(&c)
            } else {
                prot_machine(&c)
            }
        };
        let r = same_four_ways(make, &tps, Plan::default(), false);
        assert_eq!(r.hits.len(), 1);
        assert!(
            r.guest_steps.contains(&(tps[0] + 1)),
            "the guest's #DB after the traced instruction: {:x?}",
            r.guest_steps
        );
    }
}

#[test]
fn remove_and_sysdump_at_a_hit() {
    let (c, tps) = hot_loop();
    let remove = Plan {
        remove_at: Some(2),
        ..Plan::default()
    };
    let r = same_four_ways(|| prot_machine(&c), &tps[..1], remove, false);
    assert_eq!(r.hits.len(), 2);
    assert_eq!(r.memory[tps[0] as usize..][..1], [0x31], "original back");
    let stop = Plan {
        stop_at: Some(5),
        ..Plan::default()
    };
    let r = same_four_ways(|| prot_machine(&c), &tps[..1], stop, false);
    assert_eq!(r.end, "stopped");
    assert_eq!(r.eip, tps[0], "stopped on the traced instruction");
}

/// Tracepoints are physical: with two page directories that map the
/// code's linear page to two frames, one inserted through the first is
/// not in the second, whose own INT3 there stays the guest's; one
/// inserted by physical address into the second (not on the CPU) is hit
/// when the second is loaded.
#[test]
fn each_address_space_has_its_own_tracepoints() {
    const PD2: u32 = 0x10_2000;
    const PT2: u32 = 0x10_3000;
    const FRAME2: u32 = 0x20_0000;
    // inc esi; hlt
    let code = [0x46, 0xF4];
    let mut m = paged_machine(&code);
    let pd1 = m.cpu().cr3;
    m.write_phys(PD2, &(PT2 | 7).to_le_bytes());
    for p in 0..1024u32 {
        let frame = if p == PROT >> 12 { FRAME2 } else { p << 12 };
        m.write_phys(PT2 + p * 4, &(frame | 7).to_le_bytes());
    }
    let at2 = FRAME2 | (PROT & 0xFFF);
    m.write_phys(at2, &code);
    m.intercept(vector::BP, true);
    let start = |m: &mut Machine, pd: u32| {
        let c = m.cpu_mut_flush_tlb();
        c.cr3 = pd;
        c.eip = PROT;
        c.gpr[Gpr::Esi] = 0;
        m.set_halted(false);
    };
    let limits = Limits {
        instructions: Some(100),
        cycles: None,
    };
    assert_eq!(m.insert_tracepoint(PROT).unwrap(), 0x46);
    assert_eq!(m.phys_of(PROT), Some(PROT));
    // The second space: its byte is its own, no tracepoint.
    start(&mut m, PD2);
    assert_eq!(m.phys_of(PROT), Some(at2));
    assert_eq!(m.tracepoint(PROT), None);
    assert_eq!(m.run(limits), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Esi], 1, "no hit");
    // A guest INT3 of its own there is the guest's: #BP, EIP after it.
    m.write_phys(at2, &[0xCC]);
    start(&mut m, PD2);
    assert!(matches!(m.run(limits), Exit::Exception { fault, .. } if fault.vector == vector::BP));
    assert_eq!(m.cpu().eip, PROT + 1);
    m.write_phys(at2, &[0x46]);
    // The first space: the tracepoint, then the original instruction.
    start(&mut m, pd1);
    assert!(matches!(m.run(limits), Exit::Exception { fault, .. } if fault.vector == vector::BP));
    assert_eq!(m.resume_at_tracepoint(), PROT);
    assert_eq!(m.run(limits), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Esi], 1);
    // Inserted by physical address into the second while the first runs.
    assert_eq!(m.insert_tracepoint_phys(at2), 0x46);
    assert_eq!(m.tracepoint_phys(at2), Some(0x46));
    start(&mut m, PD2);
    assert!(matches!(m.run(limits), Exit::Exception { fault, .. } if fault.vector == vector::BP));
    // Removing the first space's leaves the second's.
    start(&mut m, pd1);
    assert_eq!(m.remove_tracepoint(PROT).unwrap(), Some(0x46));
    assert_eq!(m.tracepoint_phys(at2), Some(0x46));
    assert_eq!(m.run(limits), Exit::Halted);
    assert_eq!(m.remove_tracepoint_phys(at2), Some(0x46));
    start(&mut m, PD2);
    assert_eq!(m.run(limits), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Esi], 1);
}
