//! The `main` DLLCAL16 and DLLCAL32 share: three calls into their DLL
//! (TPDLL16 far pascal, TPDLL32 `_System`), each checked.

use iced_x86::code_asm::CodeLabel;

use super::{Arg, Call, fail_unless_ok, fail_unless_returned};
use crate::error::Result;
use crate::segment::{Code, Ref};

/// The DLL a DLLCAL program calls and the names it uses.
pub(crate) struct Dll {
    /// Module name (`TPDLL16`).
    pub module: &'static str,
    /// Export 2, imported by name.
    pub putmsg: &'static str,
    /// Export 1, imported by ordinal.
    pub addnums: &'static str,
    /// Export 3, imported by name.
    pub getcount: &'static str,
    /// The local label of the instruction after the ADDNUMS call.
    pub after_addnums: &'static str,
}

/// `main` up to the epilogue: PUTMSG(`greeting`) returns 0 (else
/// `fails[0]`), ADDNUMS(2, 3) returns 5 (else `fails[1]`), GETCOUNT()
/// returns 1 (else `fails[2]`). The calls are named `call_putmsg`,
/// `call_addnums` and `call_getcount`.
pub(crate) fn call_dll(
    c: &mut Code,
    dll: &Dll,
    greeting: Arg,
    fails: &[CodeLabel; 3],
) -> Result<()> {
    let bits = c.a.bitness();
    let module = dll.module;
    c.public("main")?;
    let putmsg = Ref::Named {
        module,
        name: dll.putmsg,
    };
    Call::api(bits, putmsg, &[greeting])
        .public("call_putmsg")
        .emit(c)?;
    fail_unless_ok(c, fails[0])?;
    let addnums = Ref::Ordinal {
        module,
        ordinal: 1,
        name: dll.addnums,
    };
    Call::api(bits, addnums, &[Arg::Imm(2), Arg::Imm(3)])
        .public("call_addnums")
        .after(dll.after_addnums)
        .emit(c)?;
    fail_unless_returned(c, 5, fails[1])?;
    let getcount = Ref::Named {
        module,
        name: dll.getcount,
    };
    Call::api(bits, getcount, &[])
        .public("call_getcount")
        .emit(c)?;
    fail_unless_returned(c, 1, fails[2])
}
