//! Every implemented API of the host-call table with hostile arguments
//! (issue 13, items 3 and 10; the `api_args` fuzz target picks them at
//! random, this goes through all of them): each entry is called by a
//! crafted guest, 32-bit or 16-bit after its convention, with every
//! argument at its maximum, with every pointer aimed at the guest's own
//! data and every number at its maximum, and with every argument zero.
//! No call may panic, or run past the wall clock a whole run has, or
//! allocate without bound (the run happens in an 8 MB machine; a length
//! the guest gives never sizes a host buffer).

mod common;

use std::time::Duration;

use kernel_sim::api::{self, ApiDef, Arg, Conv};
use kernel_sim::{Outcome, Process, ProcessConfig};
use rayon::prelude::*;

/// How a call's arguments are chosen.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    /// Every argument all ones.
    Max,
    /// Pointers at the guest's own data, numbers all ones.
    OwnData,
    /// Every argument zero.
    Zero,
}

/// The stack object's bottom in `common::lx_program` (ESP starts 16 KB
/// above).
const DATA32: u32 = 0x20000;

/// A 32-bit program: `def` called with `pattern`'s arguments, then
/// DosExit(1, EAX).
fn program32(def: &ApiDef, pattern: Pattern) -> Vec<u8> {
    let mut c = Vec::new();
    for arg in def.args.iter().rev() {
        let v = match (pattern, arg) {
            (Pattern::Max, _) => u32::MAX,
            (Pattern::OwnData, Arg::P | Arg::S) => DATA32,
            (Pattern::OwnData, _) => u32::MAX,
            (Pattern::Zero, _) => 0,
        };
        c.push(0x68);
        c.extend(v.to_le_bytes());
    }
    let call = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0]);
    // add esp, 4*n (the _System caller pops); push eax; push 1; DosExit
    c.extend([0x81, 0xC4]);
    c.extend((4 * def.args.len() as u32).to_le_bytes());
    c.extend([0x50, 0x6A, 0x01]);
    let exit = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0]);
    common::lx_program(
        &c,
        &[(call, def.module, def.ordinal), (exit, "DOSCALLS", 234)],
    )
}

/// A 16-bit program: `def` called far with `pattern`'s arguments (a
/// pointer to the guest's own data is DS:0), then DosExit(1, AX).
fn program16(def: &ApiDef, pattern: Pattern) -> Vec<u8> {
    let mut c = Vec::new();
    let push16 = |c: &mut Vec<u8>, v: u16| c.extend(common::push(v));
    for arg in def.args {
        match (pattern, arg) {
            (Pattern::Max, Arg::W) | (Pattern::OwnData, Arg::W) => push16(&mut c, 0xFFFF),
            (Pattern::Max, _) | (Pattern::OwnData, Arg::L) => {
                push16(&mut c, 0xFFFF);
                push16(&mut c, 0xFFFF);
            }
            (Pattern::OwnData, Arg::P | Arg::S) => {
                c.push(0x1E); // push ds
                push16(&mut c, 0);
            }
            (Pattern::Zero, Arg::W) => push16(&mut c, 0),
            (Pattern::Zero, _) => {
                push16(&mut c, 0);
                push16(&mut c, 0);
            }
        }
    }
    let call = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    push16(&mut c, 1);
    c.push(0x50); // push ax
    let exit = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    common::ne_program(
        &c,
        &[0; 0x200],
        &[(call, def.module, def.ordinal), (exit, "DOSCALLS", 5)],
    )
}

/// Runs `exe` in a small machine with a budget: how it ended.
fn run(exe: &[u8]) -> Option<Outcome> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), exe).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(100_000);
    cfg.max_wall = Some(Duration::from_secs(20));
    cfg.ram_size = 8 << 20;
    let mut p = Process::new(cfg).ok()?;
    p.set_console(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
    );
    Some(p.run())
}

/// Set in the child process that runs the sweep.
const CHILD: &str = "OS2TRACE_HOSTILE_SWEEP_CHILD";

/// The child's address space (`ulimit -v`, KB): the sweep needs tens of
/// MB; a call that sizes a host buffer by a guest's number fails.
const LIMIT_KB: u64 = 2_000_000;

/// The sweep runs in a child process of this test binary with its address
/// space limited, so a call that allocates without bound fails this test
/// with the allocation's message (instead of the machine's OOM killer
/// ending the whole run, as happened in CI).
#[test]
fn every_api_survives_hostile_arguments() {
    if std::env::var_os(CHILD).is_some() {
        sweep();
        return;
    }
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {LIMIT_KB} && exec \"$0\" --exact every_api_survives_hostile_arguments --nocapture"
        ))
        .arg(std::env::current_exe().unwrap())
        .env(CHILD, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the sweep failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 passed"), "the sweep ran: {stdout}");
}

fn sweep() {
    let entries: Vec<&ApiDef> = api::table()
        .filter(|d| d.func.is_some() && matches!(d.conv, Conv::Far16 | Conv::Sys32))
        .collect();
    assert!(entries.len() > 100, "the table: {} entries", entries.len());
    let cases: Vec<(&ApiDef, Pattern)> = entries
        .iter()
        .flat_map(|d| [Pattern::Max, Pattern::OwnData, Pattern::Zero].map(|p| (*d, p)))
        .collect();
    let results: Vec<Result<bool, String>> = cases
        .par_iter()
        .map(|&(def, pattern)| {
            let exe = match def.conv {
                Conv::Sys32 => program32(def, pattern),
                _ => program16(def, pattern),
            };
            let what = format!("{}.{} {} {pattern:?}", def.module, def.ordinal, def.name);
            match std::panic::catch_unwind(|| run(&exe)) {
                Err(_) => Err(format!("{what}: panicked")),
                Ok(Some(Outcome::TimeLimit(_))) => Err(format!("{what}: ran 20 s")),
                // The call returned to the guest, which exited with its rc.
                Ok(Some(Outcome::Exited(_))) => Ok(true),
                Ok(_) => Ok(false),
            }
        })
        .collect();
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // Nine in ten calls at least return to the guest (the rest end the run
    // as a guest fault, a limit or DosExit's own way): the calls ran.
    let returned = results.iter().filter(|r| matches!(r, Ok(true))).count();
    assert!(
        returned * 10 >= cases.len() * 9,
        "{returned} of {} calls returned",
        cases.len()
    );
}
