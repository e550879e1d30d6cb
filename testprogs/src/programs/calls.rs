//! The call sequences the programs repeat: pushing a call's arguments,
//! a far pascal (16-bit) or `_System` (32-bit) call, naming it for the
//! tracepoints, and checking what it returned.

use iced_x86::code_asm::*;

use crate::error::Result;
use crate::segment::{Code, Ref};

/// One argument of a call: what one `push` (two for [`Arg::Dgroup`]) puts
/// on the stack.
#[derive(Clone, Copy)]
pub(crate) enum Arg {
    /// `push imm`.
    Imm(i32),
    /// `push ds; push offset`: the far address of a DGROUP variable
    /// (16-bit).
    Dgroup(u32),
    /// `push reg16`.
    Reg16(AsmRegister16),
    /// `push sreg`.
    Seg(AsmRegisterSegment),
    /// `push reg32`.
    Reg32(AsmRegister32),
    /// `push [mem]`; the operand's size is the pushed size.
    Mem(AsmMemoryOperand),
    /// `push imm32` of the flat address of `symbol` (an off32 fixup;
    /// 32-bit); the value is the address at the preferred base.
    Address(&'static str, u32),
    /// `push dword [symbol]` (an off32 displacement fixup; 32-bit); the
    /// value is the address at the preferred base.
    Dword(&'static str, u32),
}

impl Arg {
    fn push(self, c: &mut Code) -> Result<()> {
        match self {
            Arg::Imm(v) => c.op(|a| a.push(v)),
            Arg::Dgroup(offset) => {
                c.op(|a| a.push(ds))?;
                c.op(|a| a.push(offset as i32))
            }
            Arg::Reg16(r) => c.op(|a| a.push(r)),
            Arg::Seg(r) => c.op(|a| a.push(r)),
            Arg::Reg32(r) => c.op(|a| a.push(r)),
            Arg::Mem(m) => c.op(|a| a.push(m)),
            Arg::Address(symbol, value) => c.push_address(symbol, value),
            Arg::Dword(symbol, value) => {
                c.data_ref(symbol)?;
                c.op(|a| a.push(dword_ptr(u64::from(value))))
            }
        }
    }
}

/// A call to an import or to a label of the module, built with
/// [`Call::pascal`] or [`Call::system`], named with [`Call::public`],
/// [`Call::local`] and [`Call::after`], and assembled with
/// [`Call::emit`].
pub(crate) struct Call<'a> {
    target: Ref,
    args: &'a [Arg],
    system: bool,
    name: Option<(&'static str, bool)>,
    after: Option<&'static str>,
}

impl<'a> Call<'a> {
    /// A far pascal call (`call far ptr16:16`, 16-bit): `args` are pushed
    /// in the order given (left to right); the callee pops them.
    pub(crate) fn pascal(target: Ref, args: &'a [Arg]) -> Call<'a> {
        Call {
            target,
            args,
            system: false,
            name: None,
            after: None,
        }
    }

    /// A `_System` call (`call rel32`, 32-bit): `args` are given in C
    /// order and pushed right to left; the caller pops them with
    /// `add esp, 4n`.
    pub(crate) fn system(target: Ref, args: &'a [Arg]) -> Call<'a> {
        Call {
            system: true,
            ..Call::pascal(target, args)
        }
    }

    /// The OS/2 API convention of `bits`-bit code: [`Call::pascal`] for
    /// 16, [`Call::system`] for 32.
    pub(crate) fn api(bits: u32, target: Ref, args: &'a [Arg]) -> Call<'a> {
        if bits == 16 {
            Call::pascal(target, args)
        } else {
            Call::system(target, args)
        }
    }

    /// Names the call instruction with a public label (in the MAP file).
    pub(crate) fn public(self, name: &'static str) -> Call<'a> {
        Call {
            name: Some((name, true)),
            ..self
        }
    }

    /// Names the call instruction with a local label.
    pub(crate) fn local(self, name: &'static str) -> Call<'a> {
        Call {
            name: Some((name, false)),
            ..self
        }
    }

    /// Names the instruction right after the call (a local label), where
    /// the result is first seen.
    pub(crate) fn after(self, name: &'static str) -> Call<'a> {
        Call {
            after: Some(name),
            ..self
        }
    }

    /// Assembles the pushes, the call and (`_System`) the `add esp`.
    pub(crate) fn emit(self, c: &mut Code) -> Result<()> {
        if self.system {
            for arg in self.args.iter().rev() {
                arg.push(c)?;
            }
        } else {
            for arg in self.args {
                arg.push(c)?;
            }
        }
        match self.name {
            Some((name, true)) => c.public(name)?,
            Some((name, false)) => c.local(name)?,
            None => {}
        }
        if self.system {
            c.call_rel32_import(self.target)?;
        } else {
            c.call_far_import(self.target)?;
        }
        if let Some(name) = self.after {
            c.local(name)?;
        }
        let bytes = 4 * self.args.len() as i32;
        if self.system && bytes > 0 {
            c.op(|a| a.add(esp, bytes))?;
        }
        Ok(())
    }
}

/// `test (e)ax, (e)ax; jnz fail`: go to `fail` unless the call returned 0.
pub(crate) fn fail_unless_ok(c: &mut Code, fail: CodeLabel) -> Result<()> {
    if c.a.bitness() == 16 {
        c.op(|a| a.test(ax, ax))?;
    } else {
        c.op(|a| a.test(eax, eax))?;
    }
    c.op(|a| a.jnz(fail))
}

/// `cmp (e)ax, value; jne fail`: go to `fail` unless the call returned
/// `value`.
pub(crate) fn fail_unless_returned(c: &mut Code, value: i32, fail: CodeLabel) -> Result<()> {
    if c.a.bitness() == 16 {
        c.op(|a| a.cmp(ax, value))?;
    } else {
        c.op(|a| a.cmp(eax, value))?;
    }
    c.op(|a| a.jne(fail))
}

/// `cmp (d)word [symbol], value; jne fail`: go to `fail` unless the
/// variable `symbol` at `addr` holds `value`. 16-bit: a DGROUP word at
/// offset `addr`; 32-bit: a dword at the flat address `addr` (preferred
/// base) with an off32 fixup.
pub(crate) fn fail_unless_var(
    c: &mut Code,
    symbol: &'static str,
    addr: u32,
    value: i32,
    fail: CodeLabel,
) -> Result<()> {
    if c.a.bitness() == 16 {
        c.op(|a| a.cmp(word_ptr(u64::from(addr)), value))?;
    } else {
        c.data_ref(symbol)?;
        c.op(|a| a.cmp(dword_ptr(u64::from(addr)), value))?;
    }
    c.op(|a| a.jne(fail))
}

/// How a 16-bit routine returns: `ret n` (near) or `retf n` (far), `n`
/// the bytes of arguments it pops (pascal).
#[derive(Clone, Copy)]
pub(crate) enum Ret16 {
    /// `ret n`.
    Near(u32),
    /// `retf n`.
    Far(u32),
}

/// A public 16-bit pascal routine `name` with a BP frame: `push bp;
/// mov bp, sp`, the `body` (the arguments are at `[bp+4]` and up when
/// near, `[bp+6]` and up when far), `pop bp` and the return.
pub(crate) fn routine16(
    c: &mut Code,
    name: &'static str,
    ret: Ret16,
    body: impl FnOnce(&mut Code) -> Result<()>,
) -> Result<()> {
    c.public(name)?;
    c.op(|a| a.push(bp))?;
    c.op(|a| a.mov(bp, sp))?;
    body(c)?;
    c.op(|a| a.pop(bp))?;
    match ret {
        Ret16::Near(n) => c.op(|a| a.ret_1(n)),
        Ret16::Far(n) => c.op(|a| a.retf_1(n)),
    }
}
