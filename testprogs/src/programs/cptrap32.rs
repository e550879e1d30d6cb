//! CPTRAP32.EXE: a 32-bit LX program that passes data to CPTRAP through
//! the virtual machine interface and makes one event of each kind the
//! trace table records.
//!
//! `main`:
//! 1. three VM interface calls (`mov ebx, parmN; call CPTRAP.1`), each
//!    parameter list the seed's `LLLL CODE DATAADDR`: code 1 with 8 bytes
//!    ([`VM_DATA8`]), code 2 with 264 bytes and code 3 with 300 bytes (the
//!    system keeps 264) of [`vm_pattern`]. Before the first, EAX =
//!    0x12345678 and CF is set; after it both must be unchanged (exit 1);
//! 2. registers an exception handler (DosSetExceptionHandler), divides by
//!    zero (`div ecx`), and the handler skips the 2-byte instruction and
//!    continues; EAX must then hold 7 (exit 2), and the handler is
//!    unregistered;
//! 3. DosAllocMem of 4 KB (exit 3) and DosFreeMem (exit 4);
//! 4. DosWrite of [`MESSAGE`] to standard output (exit 5);
//! 5. DosSleep(1); DosCreateEventSem (posted, exit 6), DosWaitEventSem
//!    on it (exit 7) and DosCloseEventSem;
//! 6. exits 0.
//!
//! Tracepoint (major 0xCF): 1 at `exit` (EAX).

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{link, lx_base};
use crate::segment::{Code, Data, Ref};
use loader::SourceKind;

/// The line CPTRAP32 writes.
pub const MESSAGE: &[u8] = b"CPTRAP32 passed its data to CPTRAP\r\n";
/// The 8 bytes of the code-1 record.
pub const VM_DATA8: &[u8] = b"CPTRAP-1";

/// The code-2 and code-3 data: byte i is `i mod 251`.
pub fn vm_pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

const CPTRAPVM: Ref = Ref::Ordinal {
    module: "CPTRAP",
    ordinal: 1,
    name: "CPTRAPVM",
};
const DOSALLOCMEM32: Ref = doscalls(299, "DosAllocMem");
const DOSFREEMEM32: Ref = doscalls(304, "DosFreeMem");
const DOSSETEXCEPTIONHANDLER: Ref = doscalls(354, "DosSetExceptionHandler");
const DOSUNSETEXCEPTIONHANDLER: Ref = doscalls(355, "DosUnsetExceptionHandler");
const DOSSLEEP32: Ref = doscalls(229, "DosSleep");
const DOSCREATEEVENTSEM: Ref = doscalls(324, "DosCreateEventSem");
const DOSCLOSEEVENTSEM: Ref = doscalls(326, "DosCloseEventSem");
const DOSWAITEVENTSEM: Ref = doscalls(329, "DosWaitEventSem");

pub(crate) fn build() -> Result<Program> {
    const P: &str = "CPTRAP32";
    let base = lx_base(2);
    let mut d = Data::new();
    let msg = base + d.bytes("msg", MESSAGE);
    let written = base + d.dword("written", 0);
    let mem = base + d.dword("mem", 0);
    let hev = base + d.dword("hev", 0);
    d.bytes("data8", VM_DATA8);
    d.bytes("data264", &vm_pattern(264));
    d.bytes("data300", &vm_pattern(300));
    let mut parms = Vec::new();
    for (name, len, code, data) in [
        ("parm1", 8u16, 1u16, "data8"),
        ("parm2", 264, 2, "data264"),
        ("parm3", 300, 3, "data300"),
    ] {
        let at = base + d.word(name, len);
        d.anon(&code.to_le_bytes());
        d.ptr(SourceKind::Off32, Ref::Symbol(data));
        parms.push((name, at));
    }
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [
        c.label(),
        c.label(),
        c.label(),
        c.label(),
        c.label(),
        c.label(),
        c.label(),
    ];
    let mut exit = c.label();
    c.public("main")?;
    // 1. The virtual machine interface, registers and flags preserved.
    c.op(|a| a.mov(eax, 0x1234_5678u32))?;
    c.op(|a| a.stc())?;
    for (i, (name, at)) in parms.iter().enumerate() {
        c.mov_address(ebx, name, *at)?;
        c.call_rel32_import(CPTRAPVM)?;
        if i == 0 {
            let f = fails[0];
            c.op(|a| a.jnc(f))?;
            c.op(|a| a.cmp(eax, 0x1234_5678u32))?;
            c.op(|a| a.jne(f))?;
        }
    }
    // 2. A handled fault: the handler skips `div ecx` (2 bytes).
    let mut over = c.label();
    c.op(|a| a.call(over))?;
    c.local("handler")?;
    c.op(|a| a.mov(eax, dword_ptr(esp + 12)))?;
    c.op(|a| a.add(dword_ptr(eax + 156), 2))?;
    c.op(|a| a.mov(eax, -1))?;
    c.op(|a| a.ret())?;
    c.place(&mut over)?;
    // [esp] = the handler; the registration record is {prev, handler}.
    c.op(|a| a.push(-1))?;
    c.op(|a| a.mov(eax, esp))?;
    c.op(|a| a.push(eax))?;
    c.call_rel32_import(DOSSETEXCEPTIONHANDLER)?;
    c.op(|a| a.add(esp, 4))?;
    c.op(|a| a.xor(edx, edx))?;
    c.op(|a| a.xor(ecx, ecx))?;
    c.op(|a| a.mov(eax, 7))?;
    c.local("divide")?;
    c.op(|a| a.div(ecx))?;
    let f = fails[1];
    c.op(|a| a.cmp(eax, 7))?;
    c.op(|a| a.jne(f))?;
    c.op(|a| a.mov(eax, esp))?;
    c.op(|a| a.push(eax))?;
    c.call_rel32_import(DOSUNSETEXCEPTIONHANDLER)?;
    c.op(|a| a.add(esp, 12))?;
    // 3. DosAllocMem(&mem, 4096, PAG_COMMIT | PAG_READ | PAG_WRITE), DosFreeMem.
    Call::system(
        DOSALLOCMEM32,
        &[Arg::Address("mem", mem), Arg::Imm(4096), Arg::Imm(0x13)],
    )
    .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[2])?;
    c.data_ref("mem")?;
    c.op(|a| a.push(dword_ptr(u64::from(mem))))?;
    c.call_rel32_import(DOSFREEMEM32)?;
    c.op(|a| a.add(esp, 4))?;
    fail_unless_ok(&mut c, fails[3])?;
    // 4. DosWrite(1, msg, len, &written).
    let args = [
        Arg::Imm(1),
        Arg::Address("msg", msg),
        Arg::Imm(MESSAGE.len() as i32),
        Arg::Address("written", written),
    ];
    Call::system(DOSWRITE32, &args).emit(&mut c)?;
    fail_unless_ok(&mut c, fails[4])?;
    // 5. DosSleep(1); an event semaphore created posted, waited on, closed.
    Call::system(DOSSLEEP32, &[Arg::Imm(1)]).emit(&mut c)?;
    Call::system(
        DOSCREATEEVENTSEM,
        &[
            Arg::Imm(0),
            Arg::Address("hev", hev),
            Arg::Imm(0),
            Arg::Imm(1),
        ],
    )
    .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[5])?;
    Call::system(DOSWAITEVENTSEM, &[Arg::Dword("hev", hev), Arg::Imm(-1)]).emit(&mut c)?;
    fail_unless_ok(&mut c, fails[6])?;
    Call::system(DOSCLOSEEVENTSEM, &[Arg::Dword("hev", hev)]).emit(&mut c)?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "CPTRAP32.EXE",
        description: "CPTRAP32.EXE: the CPTRAP virtual machine interface (os2trace testprogs)",
        major: 0xCF,
        tracepoints: vec![exit_rc32(1, "CPTRAP32 exit code")],
    };
    link(exe.lx(code, data))
}
