//! TNFPROBE: the TNF probe DLL (libtnfprobe's part on OS/2). A probe site
//! calls `TNF_PROBE` (32-bit, near `_System`) or `TNF_PROBE16` (16-bit,
//! far) with no arguments; the kernel finds the probe from the return
//! address ([`crate::tnf`]). The result (EAX/AX) is 0 and nothing else
//! changes, so a site needs no cleanup.

use emu::{Gpr, SegReg};

use super::{ApiDef, Call, Stop};
use crate::error::Outcome;
use crate::process::Process;

/// TNFPROBE's entries.
pub static DEFS: &[ApiDef] = &[
    api!("TNFPROBE" 1 "TNF_PROBE" Sys32 [] raw probe32),
    api!("TNFPROBE" 2 "TNF_PROBE16" Far16 [] raw probe16),
];

fn fire(p: &mut Process, ret: Option<u32>) -> Result<u32, Stop> {
    let ret = ret
        .ok_or_else(|| Stop::Outcome(Outcome::HostError("TNF_PROBE: no return address".into())))?;
    p.tnf_fire(ret)
        .map_err(|e| Stop::Outcome(Outcome::HostError(e)))?;
    Ok(0)
}

fn probe32(p: &mut Process, _: &Call) -> Result<u32, Stop> {
    let cpu = p.machine.cpu();
    let (ss, esp, cs) = (
        cpu.seg[SegReg::Ss].base,
        cpu.gpr[Gpr::Esp],
        cpu.seg[SegReg::Cs].base,
    );
    let mut b = [0u8; 4];
    let ret = p
        .machine
        .read_linear(ss.wrapping_add(esp), &mut b)
        .ok()
        .map(|_| cs.wrapping_add(u32::from_le_bytes(b)));
    fire(p, ret)
}

fn probe16(p: &mut Process, _: &Call) -> Result<u32, Stop> {
    let cpu = p.machine.cpu();
    let at = cpu.seg[SegReg::Ss]
        .base
        .wrapping_add(cpu.gpr[Gpr::Esp] & 0xFFFF);
    let mut b = [0u8; 4];
    let ret = p.machine.read_linear(at, &mut b).ok().and_then(|_| {
        let (ip, cs) = (
            u16::from_le_bytes([b[0], b[1]]),
            u16::from_le_bytes([b[2], b[3]]),
        );
        p.selector_to_linear(cs, u32::from(ip), 1)
    });
    fire(p, ret)
}
