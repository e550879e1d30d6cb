//! The `sixteen` program of the `rpn` bench: sixteen RPN instructions with
//! a conditional jump and variable updates, and the same work in eBPF for
//! rbpf, so the two engines can be compared side by side.

use crate::host::EbpfJit;
use rpn_vm::{Hit, Program, parse};

/// The RPN source.
pub const RPN: &str = "vars=2\nmajor=0xC8\nminor=0x10\n\
    Push EAX\nPush W,0x100\nSub\nJmp ZN,skip\nInc V,0\nskip: Pop N,1\nPush V,0\nPush EBX\nAdd\n\
    Move V,1\nPush ESI\nPush EDI\nPush ECX\nPush EDX\nLog DN,4\nLog WN,1\n";

/// The same work in eBPF: r1 points at the registers (EAX at 0, ECX 4, EDX 8,
/// EBX 12, ESI 24, EDI 28) and the variables (64, 68); the log and the
/// variable stores go to the eBPF stack.
pub const EBPF: &str = "
    ldxw r2, [r1+0]
    sub32 r2, 0x100
    ldxw r3, [r1+64]
    jeq r2, 0, +1
    add32 r3, 1
    stxw [r10-16], r3
    ldxw r4, [r1+12]
    add32 r4, r3
    stxw [r10-12], r4
    ldxw r5, [r1+24]
    ldxw r6, [r1+28]
    ldxw r7, [r1+4]
    ldxw r8, [r1+8]
    stxw [r10-64], r8
    stxw [r10-60], r7
    stxw [r10-56], r6
    stxw [r10-52], r5
    stxh [r10-48], r4
    mov r0, 18
    exit
";

/// Bytes of the eBPF program's input area.
pub const EBPF_MEM_LEN: usize = 72;

/// Bytes both programs log per run.
pub const LOGGED: usize = 18;

/// The first tracepoint of an RPN source: its program, the hit that runs
/// it (major 0xC8) and the number of variables.
pub fn rpn_program(src: &str) -> (Program, Hit, u32) {
    let file = parse("bench.rpn", src).expect("benchmark program assembles");
    let tp = &file.tracepoints[0];
    let hit = Hit {
        major: 0xC8,
        minor: tp.minor,
        logmax: file.header.logmax() as usize,
    };
    (tp.program.clone(), hit, file.header.vars())
}

/// The eBPF program's bytecode.
pub fn ebpf_code() -> Vec<u8> {
    rbpf::assembler::assemble(EBPF).expect("eBPF assembles")
}

/// The eBPF input area: EAX = 0x1234, EBX = 0xABCD, the rest zero.
pub fn ebpf_mem() -> Vec<u8> {
    let mut mem = vec![0u8; EBPF_MEM_LEN];
    mem[0..4].copy_from_slice(&0x1234u32.to_le_bytes());
    mem[12..16].copy_from_slice(&0xABCDu32.to_le_bytes());
    mem
}

/// rbpf's interpreter for `code`, checked to log [`LOGGED`] bytes.
pub fn ebpf_interpreter(code: &[u8]) -> rbpf::EbpfVmMbuff<'_> {
    let vm = rbpf::EbpfVmMbuff::new(Some(code)).expect("eBPF verifies");
    assert_eq!(
        vm.execute_program(&ebpf_mem(), &[]).expect("eBPF runs"),
        LOGGED as u64
    );
    vm
}

/// rbpf's JIT for `code`, after its interpreter ran it (which checks every
/// access), checked to give the same result.
pub fn ebpf_jit(code: &[u8]) -> EbpfJit<'_> {
    ebpf_interpreter(code);
    let mut vm = rbpf::EbpfVmRaw::new(Some(code)).expect("eBPF verifies");
    vm.jit_compile().expect("eBPF compiles");
    let jit = EbpfJit(vm);
    assert_eq!(jit.run(&mut ebpf_mem()), LOGGED as u64);
    jit
}
