//! DosFindFirst / DosFindFirst2 / DosFindNext / DosFindClose for both
//! conventions.
//!
//! 16-bit level 1 entries are FILEFINDBUF packed back to back (23 bytes
//! of fields, the name length, the name and its NUL); 32-bit entries are
//! FILEFINDBUF3 with `oNextEntryOffset` (0 in the last), packed likewise.
//! Level 2 (FIL_QUERYEASIZE: FILEFINDBUF2, FILEFINDBUF4) adds `cbList`
//! before the name: the size of the file's extended attributes as a
//! FEALIST, 4 (an empty list) as the sandbox keeps no extended
//! attributes. Level 3 (FIL_QUERYEASFROMLIST) is not implemented
//! (ERROR_INVALID_LEVEL), nor is any other level.

use crate::api::Call;
use crate::api::util::ApiResult;
use crate::fs::{FindEntry, FindState};
use crate::process::Process;
use crate::rc::*;

/// The size of an empty FEALIST (its `cbList` alone).
const EMPTY_FEALIST: u32 = 4;

fn entry_bytes(e: &FindEntry, far16: bool, level: u32) -> Vec<u8> {
    let mut v = Vec::new();
    if !far16 {
        v.extend(0u32.to_le_bytes());
    }
    v.extend(crate::api::doscalls16::file_status(
        e.size, e.attr, &e.stamps, !far16,
    ));
    if level == 2 {
        v.extend(EMPTY_FEALIST.to_le_bytes());
    }
    let name = crate::process::latin1(&e.name);
    v.push(name.len().min(255) as u8);
    v.extend(&name[..name.len().min(255)]);
    v.push(0);
    v
}

impl Process {
    /// Fill the caller's buffer from a find state; returns the count.
    fn find_fill(
        &mut self,
        c: &Call,
        hdir: u16,
        buf: usize,
        cb: usize,
        count: usize,
    ) -> ApiResult<()> {
        let Some(state) = self.pcb.files.finds.get_mut(&hdir) else {
            return Err(ERROR_INVALID_HANDLE);
        };
        if state.next >= state.entries.len() {
            return Err(ERROR_NO_MORE_FILES);
        }
        let mut out = Vec::new();
        let mut n = 0;
        let mut last_start = 0;
        while n < count.max(1) && state.next < state.entries.len() {
            let e = entry_bytes(&state.entries[state.next], c.far16, state.level);
            if out.len() + e.len() > cb {
                break;
            }
            if !c.far16 && n > 0 {
                let off = (out.len() - last_start) as u32;
                out[last_start..last_start + 4].copy_from_slice(&off.to_le_bytes());
            }
            last_start = out.len();
            out.extend(e);
            state.next += 1;
            n += 1;
        }
        if n == 0 {
            return Err(ERROR_BUFFER_OVERFLOW);
        }
        self.put_bytes(c, buf, &out)?;
        if c.far16 {
            self.put_u16(c, if buf == 3 { 5 } else { 3 }, n as u16)
        } else {
            self.put_u32(c, if buf == 3 { 5 } else { 3 }, n as u32)
        }
    }

    /// DosFindFirst: args (spec, phdir, attr, buf, cb, pcount, ...).
    pub(crate) fn find_first(&mut self, c: &Call, level: u32) -> ApiResult<()> {
        if level != 1 && level != 2 {
            return Err(ERROR_INVALID_LEVEL);
        }
        let spec = self.arg_sz(c, 0)?;
        let hsize = if c.far16 { 2 } else { 4 };
        let lin = self.arg_ptr(c, 1, hsize)?;
        let raw = self.read_mem(lin, hsize).ok_or(ERROR_INVALID_ADDRESS)?;
        let requested = u16::from_le_bytes([raw[0], raw[1]]);
        let hdir = if requested == 0xFFFF {
            (2u16..)
                .find(|h| !self.pcb.files.finds.contains_key(h))
                .ok_or(ERROR_INVALID_HANDLE)?
        } else {
            requested
        };
        let plin = self.arg_ptr(c, 5, hsize)?;
        let craw = self.read_mem(plin, hsize).ok_or(ERROR_INVALID_ADDRESS)?;
        let count = usize::from(u16::from_le_bytes([craw[0], craw[1]]));
        let entries = self.files().find(&spec, (c.l(2) & 0xFFFF) as u16)?;
        self.pcb.files.finds.insert(
            hdir,
            FindState {
                entries,
                next: 0,
                level,
            },
        );
        if c.far16 {
            self.put_u16(c, 1, hdir)?;
        } else {
            self.put_u32(c, 1, u32::from(hdir))?;
        }
        let cb = if c.far16 {
            usize::from(c.w(4))
        } else {
            c.l(4) as usize
        };
        self.find_fill(c, hdir, 3, cb, count)
    }

    /// DosFindNext: args (hdir, buf, cb, pcount).
    pub(crate) fn find_next(&mut self, c: &Call) -> ApiResult<()> {
        let hsize = if c.far16 { 2 } else { 4 };
        let plin = self.arg_ptr(c, 3, hsize)?;
        let craw = self.read_mem(plin, hsize).ok_or(ERROR_INVALID_ADDRESS)?;
        let count = usize::from(u16::from_le_bytes([craw[0], craw[1]]));
        let cb = if c.far16 {
            usize::from(c.w(2))
        } else {
            c.l(2) as usize
        };
        self.find_fill(c, c.l(0) as u16, 1, cb, count)
    }

    /// DosFindClose.
    pub(crate) fn find_close(&mut self, hdir: u32) -> ApiResult<()> {
        self.pcb
            .files
            .finds
            .remove(&(hdir as u16))
            .map(|_| ())
            .ok_or(ERROR_INVALID_HANDLE)
    }
}
