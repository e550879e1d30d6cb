//! SYSTRC16.EXE: a 16-bit NE program that logs its own records with
//! DosSysTrace (DOSCALLS.90), static tracepoints of major 0xF5 and 0xF6.
//!
//! `main` makes three calls, `Dos16SysTrace(major, cBuffer, minor,
//! pBuffer)`, far pascal:
//! 1. major 0xF5, minor 1, [`MESSAGE`] (its result is kept in `rc1`);
//! 2. major 0xF5, minor 2, no buffer;
//! 3. major 0xF6, minor 1, the 4 bytes of `rc1`.
//!
//! Each returns 0 when TRACE ON selected its major and minor, else 150.
//! The exit code is the first call's result, so a run tells whether
//! 0xF5/1 was selected. The records' FMTs are in SYSTRC16.TSF (@STATIC).

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::link;
use crate::segment::{Code, Data};

/// The data of the first record.
pub const MESSAGE: &[u8] = b"static record from SYSTRC16";

const DOSSYSTRACE16: crate::segment::Ref = doscalls(90, "DOSSYSTRACE");

pub(crate) fn build() -> Result<Program> {
    const P: &str = "SYSTRC16";
    let mut d = Data::new();
    let msg = d.bytes("msg", MESSAGE);
    let rc1 = d.word("rc1", 0xFFFF);
    d.word("rc1_high", 0);
    let data = d.finish("_DATA", "DATA", NE_DATA);

    let mut c = Code::new(P, 16)?;
    let mut exit = c.label();
    c.public("main")?;
    let calls: [(i32, i32, i32, Option<u32>, &'static str); 3] = [
        (0xF5, MESSAGE.len() as i32, 1, Some(msg), "call_trace1"),
        (0xF5, 0, 2, None, "call_trace2"),
        (0xF6, 4, 1, Some(rc1), "call_trace3"),
    ];
    for (i, (major, len, minor, buffer, name)) in calls.into_iter().enumerate() {
        let pointer = match buffer {
            Some(offset) => Arg::Dgroup(offset),
            None => Arg::Imm(0),
        };
        let args = match buffer {
            Some(_) => vec![Arg::Imm(major), Arg::Imm(len), Arg::Imm(minor), pointer],
            // A null far pointer: two zero words.
            None => vec![
                Arg::Imm(major),
                Arg::Imm(len),
                Arg::Imm(minor),
                Arg::Imm(0),
                Arg::Imm(0),
            ],
        };
        Call::pascal(DOSSYSTRACE16, &args)
            .public(name)
            .emit(&mut c)?;
        if i == 0 {
            c.op(|a| a.mov(word_ptr(u64::from(rc1)), ax))?;
        }
    }
    c.op(|a| a.mov(ax, word_ptr(u64::from(rc1))))?;
    let target = exit;
    c.op(|a| a.jmp(target))?;
    c.place(&mut exit)?;
    c.public("exit")?;
    exit16(&mut c)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "SYSTRC16.EXE",
        description: "SYSTRC16.EXE: DosSysTrace static records (os2trace testprogs)",
        major: 0xF5,
        tracepoints: vec![exit_rc16(3, "SYSTRC16 exit code")],
    };
    link(exe.ne(vec![code, data]))
}
