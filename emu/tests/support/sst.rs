//! SingleStepTests 80286 (real mode) runner shared by the `sst286` example
//! and the conformance test.
//!
//! Each test: load the initial registers (real mode, FLAGS bits 12..15
//! masked off as the 286 cannot set them there) and RAM bytes, run from
//! CS:IP until HLT, and compare registers and the listed RAM bytes with the
//! final state. Flags are compared under the metadata's `flags-mask` for
//! the opcode (and ModRM reg field); on an exception the FLAGS word pushed
//! at `flag_address` is compared under the same mask. Tests whose hash is
//! in `revocation_list.txt` are skipped.

use emu::{CpuModel, Exit, Limits, Machine, MachineConfig, SegReg, Segment};
use flate2::read::GzDecoder;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

/// Totals of one run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    /// Tests whose final state matched.
    pub passed: usize,
    /// Tests that differed.
    pub failed: usize,
    /// Revoked tests skipped.
    pub skipped: usize,
}

const REGS: [&str; 8] = ["ax", "cx", "dx", "bx", "sp", "bp", "si", "di"];
const SREGS: [(&str, SegReg); 4] = [
    ("es", SegReg::Es),
    ("cs", SegReg::Cs),
    ("ss", SegReg::Ss),
    ("ds", SegReg::Ds),
];

fn flags_mask(meta: &Value, file: &str) -> u16 {
    let stem = file.trim_end_matches(".json.gz");
    let mut parts = stem.split('.');
    let op = parts.next().unwrap_or("");
    let reg = parts.next();
    let entry = &meta["opcodes"][op];
    let e = match reg {
        Some(r) => &entry["reg"][r],
        None => entry,
    };
    e["flags-mask"].as_u64().map_or(0xFFFF, |m| m as u16)
}

fn get(v: &Value, k: &str) -> Option<u32> {
    v.get(k).and_then(Value::as_u64).map(|x| x as u32)
}

/// Run every `trim100/*.json.gz` under `dir` (optionally only files whose
/// name starts with `filter`), reporting each failure through `report`.
pub fn run_dir(
    dir: &Path,
    filter: Option<&str>,
    report: &mut dyn FnMut(String),
) -> Result<Totals, String> {
    let meta: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("metadata.json"))
            .map_err(|e| format!("metadata.json: {e}"))?,
    )
    .map_err(|e| format!("metadata.json: {e}"))?;
    let revoked: HashSet<String> = std::fs::read_to_string(dir.join("revocation_list.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_lowercase)
        .collect();
    let mut files: Vec<String> = std::fs::read_dir(dir.join("trim100"))
        .map_err(|e| format!("trim100: {e}"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json.gz"))
        .filter(|n| filter.is_none_or(|f| n.starts_with(f)))
        .collect();
    files.sort();
    let mut m = Machine::new(MachineConfig {
        ram_size: 16 << 20,
        model: CpuModel::I286,
    });
    let mut totals = Totals::default();
    for file in files {
        let mask = flags_mask(&meta, &file);
        let mut text = String::new();
        GzDecoder::new(
            std::fs::File::open(dir.join("trim100").join(&file))
                .map_err(|e| format!("{file}: {e}"))?,
        )
        .read_to_string(&mut text)
        .map_err(|e| format!("{file}: {e}"))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
        let tests = doc["tests"]
            .as_array()
            .ok_or(format!("{file}: no tests array"))?;
        for t in tests {
            let hash = t["hash"].as_str().unwrap_or("").to_lowercase();
            if revoked.contains(&hash) {
                totals.skipped += 1;
                continue;
            }
            match run_one(&mut m, t, mask) {
                Ok(()) => totals.passed += 1,
                Err(diff) => {
                    totals.failed += 1;
                    report(format!(
                        "FAIL {file} #{} `{}` {}: {diff}",
                        t["idx"],
                        t["name"].as_str().unwrap_or(""),
                        hash
                    ));
                }
            }
        }
    }
    Ok(totals)
}

fn run_one(m: &mut Machine, t: &Value, mask: u16) -> Result<(), String> {
    let ini = &t["initial"];
    let fin = &t["final"];
    let ir = &ini["regs"];
    m.reset();
    {
        let c = m.cpu_mut_flush_tlb();
        c.cr0 = 0;
        c.idtr.base = 0;
        c.idtr.limit = 0x3FF;
        for (i, r) in REGS.iter().enumerate() {
            c.gpr[i] = get(ir, r).unwrap_or(0);
        }
        for (name, s) in SREGS {
            c.seg[s as usize] = Segment::real(get(ir, name).unwrap_or(0) as u16, s == SegReg::Cs);
        }
        c.eip = get(ir, "ip").unwrap_or(0);
        c.eflags = (get(ir, "flags").unwrap_or(0) & 0x0FD7) | 2;
    }
    for pair in ini["ram"].as_array().into_iter().flatten() {
        let a = pair[0].as_u64().unwrap_or(0) as u32;
        let b = pair[1].as_u64().unwrap_or(0) as u8;
        m.write_phys(a, &[b]);
    }
    let exit = m.run(Limits {
        instructions: Some(64),
        cycles: None,
    });
    let mut diffs = Vec::new();
    if exit != Exit::Halted {
        diffs.push(format!("exit {exit:?}"));
    }
    let fr = &fin["regs"];
    let c = m.cpu();
    for (i, r) in REGS.iter().enumerate() {
        let want = get(fr, r).or(get(ir, r)).unwrap_or(0);
        let got = c.gpr[i] & 0xFFFF;
        if got != want {
            diffs.push(format!("{r} {got:04x} want {want:04x}"));
        }
    }
    for (name, s) in SREGS {
        let want = get(fr, name).or(get(ir, name)).unwrap_or(0);
        let got = u32::from(c.seg[s as usize].selector);
        if got != want {
            diffs.push(format!("{name} {got:04x} want {want:04x}"));
        }
    }
    let want_ip = get(fr, "ip").or(get(ir, "ip")).unwrap_or(0);
    if c.eip != want_ip {
        diffs.push(format!("ip {:04x} want {want_ip:04x}", c.eip));
    }
    let (want_fl, fmask) = match get(fr, "flags") {
        Some(f) => (f, u32::from(mask)),
        None => (get(ir, "flags").unwrap_or(0), u32::from(mask) & 0x0FFF),
    };
    let got_fl = c.eflags & 0xFFFF;
    if (got_fl ^ want_fl) & fmask != 0 {
        diffs.push(format!(
            "flags {got_fl:04x} want {want_fl:04x} (mask {fmask:04x})"
        ));
    }
    // The FLAGS word an exception pushed sits at SS:SP+4 after delivery
    // (the capture's `flag_address` is off by one when SP is odd).
    let flag_addr = t.get("exception").map(|_| {
        let ss = get(fr, "ss").or(get(ir, "ss")).unwrap_or(0);
        let sp = get(fr, "sp").or(get(ir, "sp")).unwrap_or(0);
        (ss << 4) + ((sp + 4) & 0xFFFF)
    });
    let mut want_ram: HashMap<u32, u8> = HashMap::new();
    for pair in fin["ram"].as_array().into_iter().flatten() {
        want_ram.insert(
            pair[0].as_u64().unwrap_or(0) as u32,
            pair[1].as_u64().unwrap_or(0) as u8,
        );
    }
    let mut addrs: Vec<_> = want_ram.keys().copied().collect();
    addrs.sort_unstable();
    for a in addrs {
        let want = want_ram[&a];
        let mut got = [0u8];
        m.read_phys(a, &mut got);
        let bm = match flag_addr {
            Some(fa) if a == fa => mask as u8,
            Some(fa) if a == fa + 1 => (mask >> 8) as u8,
            _ => 0xFF,
        };
        if (got[0] ^ want) & bm != 0 {
            diffs.push(format!("ram[{a:06x}] {:02x} want {want:02x}", got[0]));
        }
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join(", "))
    }
}
