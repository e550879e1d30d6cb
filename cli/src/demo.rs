//! `os2trace demo`: the main job on the embedded default.
//!
//! Until the emulated OS/2 can run the sample modules, the demo runs the
//! five trace program examples of warp-debug-dtrace.txt §1.7 against the
//! fixed sample machine state of `rpn_vm::examples` and prints each
//! program's listing, its outcome, its cost and the record it logs.

use anyhow::Result;
use rpn_vm::examples::{EXAMPLES, sample_machine};
use rpn_vm::{Hit, Interpreter, Outcome, Reg, parse};

use crate::util::hex_spaced;

/// Entry point.
pub fn run(args: &[String]) -> Result<i32> {
    if !args.is_empty() {
        eprintln!("usage: os2trace demo");
        return Ok(2);
    }
    let machine = &mut sample_machine();
    use rpn_vm::Machine as _;
    println!("os2trace demo: the trace program examples of the DTRACE guide, section 1.7");
    print!("sample machine state:");
    for reg in Reg::ALL {
        print!(" {}={:X}", reg.name(), machine.reg(reg));
    }
    println!("\n");
    let mut interp = Interpreter::new();
    for (n, example) in EXAMPLES.iter().enumerate() {
        let file = parse("example.rpn", example.source)?;
        let header = &file.header;
        let tp = &file.tracepoints[0];
        println!("{}) {}", n + 1, example.title);
        for line in &tp.listing {
            let mut bytes = Vec::new();
            line.instr.encode(&mut bytes);
            println!(
                "   {:04X}  {:<15} {}",
                line.offset,
                hex_spaced(&bytes),
                line.text.trim()
            );
        }
        let hit = Hit {
            major: tp.effective_major(header).unwrap_or(0),
            minor: tp.minor,
            logmax: header.logmax() as usize,
        };
        let result = interp.run(&tp.program, machine, &mut [], hit);
        match result.outcome {
            Outcome::Logged(r) => {
                println!(
                    "   -> logged major 0x{:02X} minor 0x{:04X}{}, {} cycles, {} bytes: {}",
                    r.major,
                    r.minor,
                    if r.incomplete { " (incomplete)" } else { "" },
                    result.cycles,
                    r.data.len(),
                    hex_spaced(r.data)
                );
            }
            other => println!("   -> {} after {} cycles", other.name(), result.cycles),
        }
        println!();
    }
    Ok(0)
}
