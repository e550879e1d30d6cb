//! DosSetExtLIBPATH / DosQueryExtLIBPATH: the process's BEGINLIBPATH and
//! ENDLIBPATH, searched for DLLs before and after LIBPATH
//! (`loading.rs`).
//!
//! Decisions: each is at most 1024 bytes (a longer one is
//! ERROR_INVALID_PARAMETER, as is a flag other than BEGIN_LIBPATH (1) or
//! END_LIBPATH (2)); `%BEGINLIBPATH%` and `%ENDLIBPATH%` in a new value
//! (any case) stand for the current values. DosQueryExtLIBPATH writes
//! the value and its NUL (the caller's buffer is 1024 bytes, as
//! documented). A child process starts with a copy of its parent's
//! (DosExecPgm, `children.rs`), as documented; CMD.EXE's
//! `SET BEGINLIBPATH=` and `SET ENDLIBPATH=` set its own (`cmd.rs`).

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// BEGIN_LIBPATH / END_LIBPATH.
const BEGIN_LIBPATH: u32 = 1;
const END_LIBPATH: u32 = 2;

/// The longest value.
const MAX_EXT_LIBPATH: usize = 1024;

/// The process's extended LIBPATHs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ExtLibpath {
    /// BEGINLIBPATH.
    pub(crate) begin: Vec<u8>,
    /// ENDLIBPATH.
    pub(crate) end: Vec<u8>,
}

impl ExtLibpath {
    /// The directories of one of them, in order.
    pub(crate) fn dirs(v: &[u8]) -> Vec<String> {
        v.split(|&b| b == b';')
            .filter(|d| !d.is_empty())
            .map(|d| d.iter().map(|&b| char::from(b)).collect())
            .collect()
    }
}

/// The entries (16-bit and 32-bit).
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 873 "DosSetExtLIBPATH" Sys32 [S, L] set),
    api!("DOSCALLS" 874 "DosQueryExtLIBPATH" Sys32 [P, L] query),
    api!("DOSCALLS" 998 "DosSetExtLIBPATH" Far16 [S, L] set),
    api!("DOSCALLS" 999 "DosQueryExtLIBPATH" Far16 [P, L] query),
];

fn set(p: &mut Process, c: &Call) -> ApiResult<()> {
    let flag = c.l(1);
    if flag != BEGIN_LIBPATH && flag != END_LIBPATH {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let given = p.arg_sz(c, 0)?;
    let value = substitute(p, &given);
    if value.len() > MAX_EXT_LIBPATH {
        return Err(ERROR_INVALID_PARAMETER);
    }
    if flag == BEGIN_LIBPATH {
        p.pcb.ext_libpath.begin = value;
    } else {
        p.pcb.ext_libpath.end = value;
    }
    Ok(())
}

fn query(p: &mut Process, c: &Call) -> ApiResult<()> {
    let mut v = match c.l(1) {
        BEGIN_LIBPATH => p.pcb.ext_libpath.begin.clone(),
        END_LIBPATH => p.pcb.ext_libpath.end.clone(),
        _ => return Err(ERROR_INVALID_PARAMETER),
    };
    v.push(0);
    p.put_bytes(c, 0, &v)
}

/// `given` with `%BEGINLIBPATH%` and `%ENDLIBPATH%` replaced.
fn substitute(p: &Process, given: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < given.len() {
        let rest = &given[i..];
        let key = [&b"%BEGINLIBPATH%"[..], b"%ENDLIBPATH%"]
            .into_iter()
            .find(|k| rest.len() >= k.len() && rest[..k.len()].eq_ignore_ascii_case(k));
        match key {
            Some(k) => {
                let cur = if k.len() == 14 {
                    &p.pcb.ext_libpath.begin
                } else {
                    &p.pcb.ext_libpath.end
                };
                out.extend_from_slice(cur);
                i += k.len();
            }
            None => {
                out.push(given[i]);
                i += 1;
            }
        }
    }
    out
}

/// Checked here so the loader can rely on it.
const _: () = assert!(b"%BEGINLIBPATH%".len() == 14 && b"%ENDLIBPATH%".len() == 12);

impl Process {
    /// The directories searched for a DLL before and after LIBPATH.
    pub(crate) fn ext_libpath_dirs(&self) -> (Vec<String>, Vec<String>) {
        (
            ExtLibpath::dirs(&self.pcb.ext_libpath.begin),
            ExtLibpath::dirs(&self.pcb.ext_libpath.end),
        )
    }
}
