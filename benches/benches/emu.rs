//! Guest MIPS of the emu machine on three workloads: a tight register
//! loop (32-bit flat), a memory copy and checksum (32-bit flat, 64 KB), and
//! 16-bit protected-mode code doing far calls and segment loads. `interp`
//! is the interpreter alone (native tier off), `jit` the default machine
//! (hot register-only blocks in host code on x86-64 hosts).
//! Throughput is the number of guest instructions per run, so criterion's
//! elements/s read as instructions per second.
//!
//! With `--features unicorn` the same workloads also run on the
//! unicorn-engine backend (same memory image and registers, no budget, so
//! no per-instruction hook), side by side in the same group:
//! `cargo bench -p benches --features unicorn --bench emu`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use emu::{CpuModel, Descriptor, Exit, Gpr, Limits, Machine, MachineConfig, SegReg};
use std::hint::black_box;

fn desc(base: u32, limit: u32, access: u8, flags: u8) -> u64 {
    Descriptor::encode(base, limit, access, flags).0
}

/// A protected-mode machine with `gdt` at 0x800, CS/DS/SS from `cs`, `ds`.
fn machine(gdt: &[u64], cs: u16, ds: u16, eip: u32, esp: u32) -> Machine {
    let mut m = Machine::new(MachineConfig {
        ram_size: 8 << 20,
        model: CpuModel::I486,
    });
    for (i, e) in gdt.iter().enumerate() {
        m.write_phys(0x800 + 8 * i as u32, &e.to_le_bytes());
    }
    {
        let c = m.cpu_mut_flush_tlb();
        c.cr0 |= 1;
        c.gdtr.base = 0x800;
        c.gdtr.limit = (gdt.len() * 8 - 1) as u16;
        c.eip = eip;
        c.gpr[Gpr::Esp] = esp;
    }
    m.set_segment(
        SegReg::Cs,
        Descriptor(gdt[usize::from(cs >> 3)]).to_segment(cs),
    );
    for s in [SegReg::Ds, SegReg::Es, SegReg::Ss] {
        m.set_segment(s, Descriptor(gdt[usize::from(ds >> 3)]).to_segment(ds));
    }
    m
}

fn flat(code: &[u8]) -> Machine {
    let gdt = [
        0,
        desc(0, u32::MAX, 0x9A, 0x4),
        desc(0, u32::MAX, 0x92, 0x4),
    ];
    let mut m = machine(&gdt, 8, 0x10, 0x1000, 0x8000);
    m.write_phys(0x1000, code);
    m
}

/// Builds a workload: the machine and its instruction count.
type Build = fn() -> (Machine, u64);

const LOOP_N: u32 = 100_000;

fn tight_loop() -> (Machine, u64) {
    let mut code = vec![0xB9];
    code.extend(LOOP_N.to_le_bytes());
    code.extend([0x01, 0xC8, 0x31, 0xC3, 0x49, 0x75, 0xF9, 0xF4]);
    (flat(&code), 2 + 4 * u64::from(LOOP_N))
}

const COPY_DWORDS: u32 = 16384;

fn copy_checksum() -> (Machine, u64) {
    let mut c = vec![0xBE, 0, 0, 0x10, 0, 0xBF, 0, 0, 0x20, 0, 0xB9];
    c.extend(COPY_DWORDS.to_le_bytes());
    c.extend([
        0x8B, 0x06, 0x89, 0x07, 0x83, 0xC6, 0x04, 0x83, 0xC7, 0x04, 0x49, 0x75, 0xF3,
    ]);
    c.extend([0xBE, 0, 0, 0x20, 0, 0xB9]);
    c.extend(COPY_DWORDS.to_le_bytes());
    c.extend([
        0x31, 0xD2, 0x03, 0x16, 0x83, 0xC6, 0x04, 0x49, 0x75, 0xF8, 0xF4,
    ]);
    let mut m = flat(&c);
    let data: Vec<u8> = (0..COPY_DWORDS * 4).map(|i| (i * 7) as u8).collect();
    m.write_phys(0x10_0000, &data);
    (
        m,
        3 + 6 * u64::from(COPY_DWORDS) + 3 + 4 * u64::from(COPY_DWORDS) + 1,
    )
}

const CALLS: u16 = 10_000;

fn far_calls16() -> (Machine, u64) {
    let gdt = [
        0,
        desc(0x1_0000, 0xFFFF, 0x9A, 0),
        desc(0x4_0000, 0xFFFF, 0x92, 0),
        desc(0x2_0000, 0xFFFF, 0x9A, 0),
        desc(0x3_0000, 0xFFFF, 0x92, 0),
    ];
    let mut m = machine(&gdt, 8, 0x10, 0, 0xFFF0);
    let mut main = vec![0xB9];
    main.extend(CALLS.to_le_bytes());
    main.extend([0x9A, 0, 0, 0x18, 0, 0x49, 0x75, 0xF8, 0xF4]);
    m.write_phys(0x1_0000, &main);
    m.write_phys(
        0x2_0000,
        &[
            0x1E, 0xB8, 0x20, 0x00, 0x8E, 0xD8, 0xFF, 0x06, 0, 0, 0x1F, 0xCB,
        ],
    );
    (m, 2 + 9 * u64::from(CALLS))
}

/// One run from the initial registers on an already-built machine (its
/// decoded-instruction cache and translated blocks stay warm across runs,
/// as in a long guest), with the native tier on or off.
fn run(build: Build, jit: bool) -> impl FnMut() {
    let (mut m, n) = build();
    m.set_jit(jit);
    let start = m.cpu().clone();
    move || {
        *m.cpu_mut_flush_tlb() = start.clone();
        m.set_halted(false);
        let before = m.instructions();
        let e = m.run(Limits::default());
        assert_eq!(e, Exit::Halted);
        assert_eq!(m.instructions() - before, n);
        black_box(m.cpu().gpr[Gpr::Eax]);
    }
}

fn bench(c: &mut Criterion) {
    let workloads: [(&str, Build); 3] = [
        ("tight_loop", tight_loop),
        ("copy_checksum", copy_checksum),
        ("far_calls16", far_calls16),
    ];
    let mut g = c.benchmark_group("emu_mips");
    for (name, build) in workloads {
        let (_, n) = build();
        g.throughput(Throughput::Elements(n));
        for (tier, jit) in [("interp", false), ("jit", true)] {
            let mut f = run(build, jit);
            g.bench_function(format!("{tier}/{name}"), |b| b.iter(&mut f));
        }
    }
    #[cfg(feature = "unicorn")]
    for (name, build) in workloads {
        let (_, n) = build();
        g.throughput(Throughput::Elements(n));
        let mut f = uni::run(build);
        g.bench_function(format!("unicorn/{name}"), |b| b.iter(&mut f));
    }
    g.finish();
}

/// The workloads on the unicorn backend.
#[cfg(feature = "unicorn")]
mod uni {
    use super::*;
    use emu::unicorn::UnicornMachine;

    /// A unicorn machine with the interpreter machine's RAM and registers.
    fn mirror(m: &Machine) -> UnicornMachine {
        let size = m.mem().ram_size();
        let mut u = UnicornMachine::new(MachineConfig {
            ram_size: size,
            model: CpuModel::I486,
        })
        .expect("unicorn");
        let mut ram = vec![0u8; size];
        m.read_phys(0, &mut ram);
        u.write_phys(0, &ram).expect("ram");
        u.set_cpu(m.cpu()).expect("registers");
        u
    }

    /// One run from the initial registers (unicorn's translated blocks stay
    /// cached across runs). Both backends first run the workload once and
    /// must end with the same registers.
    pub(super) fn run(build: Build) -> impl FnMut() {
        let (mut m, _) = build();
        let mut u = mirror(&m);
        let start = m.cpu().clone();
        assert_eq!(m.run(Limits::default()), Exit::Halted);
        assert_eq!(u.run(Limits::default()).expect("unicorn run"), Exit::Halted);
        let (a, b) = (m.cpu(), u.cpu().expect("registers"));
        assert_eq!(
            (a.gpr, a.eip),
            (b.gpr, b.eip),
            "interpreter and unicorn disagree"
        );
        move || {
            u.set_cpu(&start).expect("registers");
            u.set_halted(false);
            let e = u.run(Limits::default()).expect("unicorn run");
            assert_eq!(e, Exit::Halted);
            black_box(u.cpu().expect("registers").gpr[Gpr::Eax]);
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
