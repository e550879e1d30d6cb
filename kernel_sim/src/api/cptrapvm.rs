//! CPTRAP: the virtual machine interface of VM/SP's trace table recording
//! facility, as a system DLL (see [`crate::systable`] for the calling
//! sequence). A program passes data to the CPTRAP file (records X'3E'):
//!
//! ```text
//! 32-bit:  mov ebx, offset parmlist     ; LLLL CODE DATAADDR (flat)
//!          call CPTRAPVM                ; CPTRAP.1, near
//! 16-bit:  les bx, parmlist             ; DATAADDR is sel:off
//!          call far ptr CPTRAPVM16      ; CPTRAP.2
//! ```
//!
//! Every register and flag comes back unchanged (the result register is
//! given its own value back), and with CPTRAP off the call only returns.

use cptrap::{Interface, TypeNum};
use emu::{Gpr, SegReg};

use super::{ApiDef, Call, Stop};
use crate::process::Process;

/// CPTRAP's entries.
pub static DEFS: &[ApiDef] = &[
    api!("CPTRAP" 1 "CPTRAPVM" Sys32 [] raw vm32),
    api!("CPTRAP" 2 "CPTRAPVM16" Far16 [] raw vm16),
];

/// The record, when CPTRAP wants it; the caller's EAX goes back unchanged.
fn vm(p: &mut Process, list_at: Option<u32>, far16: bool) -> Result<u32, Stop> {
    let eax = p.machine.cpu().gpr[Gpr::Eax];
    if !p.kernel.systable.recording() {
        return Ok(eax);
    }
    let Some(at) = list_at else { return Ok(eax) };
    let mut list = [0u8; 8];
    if p.machine.read_linear(at, &mut list).is_err() {
        return Ok(eax);
    }
    let code = u16::from_le_bytes([list[2], list[3]]);
    if !p
        .kernel
        .systable
        .wants_interface(TypeNum::VM_INTERFACE, code, p.pcb.pid)
    {
        return Ok(eax);
    }
    let record = crate::systable::interface_record(Interface::VirtualMachine, list, |addr, len| {
        let lin = if far16 {
            p.selector_to_linear((addr >> 16) as u16, addr & 0xFFFF, len as u32)?
        } else {
            addr
        };
        p.read_mem(lin, len as u32)
    });
    if let Some(record) = record {
        p.systable_interface(record);
    }
    Ok(eax)
}

fn vm32(p: &mut Process, _: &Call) -> Result<u32, Stop> {
    let at = p.machine.cpu().gpr[Gpr::Ebx];
    vm(p, Some(at), false)
}

fn vm16(p: &mut Process, _: &Call) -> Result<u32, Stop> {
    let cpu = p.machine.cpu();
    let (es, bx) = (cpu.sreg(SegReg::Es).selector, cpu.gpr[Gpr::Ebx] & 0xFFFF);
    let at = p.selector_to_linear(es, bx, 8);
    vm(p, at, true)
}
