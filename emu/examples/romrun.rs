//! Boot a 64 KB BIOS ROM image: `cargo run -p emu --release --example romrun
//! -- ROM.bin [--post-port 0x190] [--model 286|386|486] [--limit N]`.
//!
//! The ROM (64 KB, or 128 KB for test386.asm's ROM128 build) is mapped
//! to end at physical 0x100000 and at 0x100000000, the CPU starts at
//! the reset vector, each byte written to the POST port is printed as
//! `POST XX`, and the run ends (HLT, shutdown or the instruction limit) with
//! `final POST XX`. `--out-port P --out-file F` saves the bytes written to
//! port P (test386.asm's OUT_PORT); `--trace N [--stop-at EIP]` single-steps
//! and prints the last N CS:EIP values.

use emu::{CpuModel, Exit, Gpr, Limits, Machine, MachineConfig, PortBus, SegReg};
use std::cell::Cell;
use std::process::ExitCode;
use std::rc::Rc;

struct PostBus {
    port: u16,
    last: Rc<Cell<Option<u8>>>,
    out_port: Option<u16>,
    out: Vec<u8>,
    out_file: Option<String>,
}

impl Drop for PostBus {
    fn drop(&mut self) {
        if let Some(f) = &self.out_file
            && let Err(e) = std::fs::write(f, &self.out)
        {
            eprintln!("romrun: {f}: {e}");
        }
    }
}

impl PortBus for PostBus {
    fn read(&mut self, _port: u16, _size: u8) -> u32 {
        u32::MAX
    }
    fn write(&mut self, port: u16, _size: u8, value: u32) {
        if Some(port) == self.out_port {
            self.out.push(value as u8);
        }
        if port == self.port {
            let v = value as u8;
            println!("POST {v:02X}");
            self.last.set(Some(v));
        }
    }
}

fn parse_num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut rom_path = None;
    let mut post_port = 0x190u16;
    let mut model = CpuModel::I386;
    let mut limit = 500_000_000u64;
    let mut trace = 0usize;
    let mut stop_at = None;
    let mut out_port = None;
    let mut out_file = None;
    let mut i = 0;
    while i < args.len() {
        let val = args.get(i + 1).map(String::as_str).unwrap_or("");
        match args[i].as_str() {
            "--post-port" => {
                post_port = parse_num(val).unwrap_or(0x190) as u16;
                i += 1;
            }
            "--model" => {
                model = match val {
                    "286" => CpuModel::I286,
                    "486" => CpuModel::I486,
                    _ => CpuModel::I386,
                };
                i += 1;
            }
            "--trace" => {
                trace = parse_num(val).unwrap_or(32) as usize;
                i += 1;
            }
            "--out-port" => {
                out_port = parse_num(val).map(|v| v as u16);
                i += 1;
            }
            "--out-file" => {
                out_file = Some(val.to_string());
                i += 1;
            }
            "--stop-at" => {
                stop_at = parse_num(val).map(|v| v as u32);
                i += 1;
            }
            "--limit" => {
                limit = parse_num(val).unwrap_or(limit);
                i += 1;
            }
            other => rom_path = Some(other.to_string()),
        }
        i += 1;
    }
    let Some(rom_path) = rom_path else {
        eprintln!(
            "usage: romrun ROM.bin [--post-port 0x190] [--model 286|386|486] [--limit N] [--out-port P --out-file F] [--trace N] [--stop-at EIP]"
        );
        return ExitCode::from(2);
    };
    let rom = match std::fs::read(&rom_path) {
        Ok(r) if r.len() == 0x10000 || r.len() == 0x20000 => r,
        Ok(r) => {
            eprintln!(
                "romrun: {rom_path}: expected 65536 or 131072 bytes, got {}",
                r.len()
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("romrun: {rom_path}: {e}");
            return ExitCode::from(2);
        }
    };
    let last = Rc::new(Cell::new(None));
    let bus = PostBus {
        port: post_port,
        last: last.clone(),
        out_port,
        out: Vec::new(),
        out_file,
    };
    let mut m = Machine::with_bus(
        MachineConfig {
            ram_size: 16 << 20,
            model,
        },
        Box::new(bus),
    );
    let low = 0x10_0000 - rom.len() as u32;
    m.map_rom(low, rom.clone());
    m.map_rom(0xFFF0_0000 | low, rom);
    let start = std::time::Instant::now();
    let exit = if trace == 0 {
        m.run(Limits {
            instructions: Some(limit),
            cycles: None,
        })
    } else {
        // Single-step, remembering the last `trace` instruction addresses.
        let mut ring = std::collections::VecDeque::with_capacity(trace);
        let exit = loop {
            if m.instructions() >= limit {
                break Exit::InstructionLimit;
            }
            if stop_at == Some(m.cpu().eip) {
                break Exit::InstructionLimit;
            }
            if ring.len() == trace {
                ring.pop_front();
            }
            ring.push_back((m.cpu().seg[SegReg::Cs].selector, m.cpu().eip));
            if let Some(e) = m.step() {
                break e;
            }
        };
        let c = m.cpu();
        eprintln!(
            "cr0 {:08X} cr3 {:08X} cpl {} ss {:04X} base {:08X} esp {:08X} eflags {:08X} gpr {:08X?}",
            c.cr0,
            c.cr3,
            c.cpl,
            c.seg[SegReg::Ss].selector,
            c.seg[SegReg::Ss].base,
            c.gpr[Gpr::Esp],
            c.eflags,
            c.gpr
        );
        for (cs, eip) in ring {
            eprintln!("  {cs:04X}:{eip:08X}");
        }
        exit
    };
    let secs = start.elapsed().as_secs_f64();
    let c = m.cpu();
    eprintln!(
        "exit {exit:?} after {} instructions, {} cycles, {:.2} s; CS:EIP {:04X}:{:08X}",
        m.instructions(),
        m.cycles(),
        secs,
        c.seg[SegReg::Cs].selector,
        c.eip
    );
    drop(m);
    match last.get() {
        Some(v) => println!("final POST {v:02X}"),
        None => println!("final POST none"),
    }
    if exit == Exit::Halted {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
