//! Helpers the API implementations share: pointer arguments, console
//! output, segment allocation.

use std::io::Write;

use crate::api::Call;
use crate::desc::DATA3;
use crate::layout::*;
use crate::memory::RegionKind;
use crate::process::Process;
use crate::rc::*;

/// An API result: the return code on error.
pub type ApiResult<T> = Result<T, u32>;

impl Process {
    /// Linear address of pointer argument `i` with room for `len` bytes.
    pub(crate) fn arg_ptr(&self, c: &Call, i: usize, len: u32) -> ApiResult<u32> {
        self.ptr(c.l(i), c.far16, len).ok_or(ERROR_INVALID_ADDRESS)
    }

    /// `len` bytes at pointer argument `i`.
    pub(crate) fn arg_bytes(&mut self, c: &Call, i: usize, len: u32) -> ApiResult<Vec<u8>> {
        if len == 0 {
            return Ok(Vec::new());
        }
        let lin = self.arg_ptr(c, i, len)?;
        self.read_mem(lin, len).ok_or(ERROR_INVALID_ADDRESS)
    }

    /// The string at pointer argument `i`.
    pub(crate) fn arg_sz(&mut self, c: &Call, i: usize) -> ApiResult<Vec<u8>> {
        self.read_sz(c.l(i), c.far16, 0x1_0000)
            .ok_or(ERROR_INVALID_ADDRESS)
    }

    /// Store bytes at pointer argument `i`.
    pub(crate) fn put_bytes(&mut self, c: &Call, i: usize, data: &[u8]) -> ApiResult<()> {
        let lin = self.arg_ptr(c, i, data.len() as u32)?;
        if self.write_mem(lin, data) {
            Ok(())
        } else {
            Err(ERROR_INVALID_ADDRESS)
        }
    }

    /// Store a word at pointer argument `i`.
    pub(crate) fn put_u16(&mut self, c: &Call, i: usize, v: u16) -> ApiResult<()> {
        self.put_bytes(c, i, &v.to_le_bytes())
    }

    /// Store a dword at pointer argument `i`.
    pub(crate) fn put_u32(&mut self, c: &Call, i: usize, v: u32) -> ApiResult<()> {
        self.put_bytes(c, i, &v.to_le_bytes())
    }

    /// Store a word if pointer argument `i` is not null.
    pub(crate) fn put_u16_opt(&mut self, c: &Call, i: usize, v: u16) -> ApiResult<()> {
        if c.l(i) == 0 {
            Ok(())
        } else {
            self.put_u16(c, i, v)
        }
    }

    /// Store a dword if pointer argument `i` is not null.
    pub(crate) fn put_u32_opt(&mut self, c: &Call, i: usize, v: u32) -> ApiResult<()> {
        if c.l(i) == 0 {
            Ok(())
        } else {
            self.put_u32(c, i, v)
        }
    }

    /// Write to the console (handle 1 stdout, 2 stderr).
    pub(crate) fn console(&mut self, h: u8, data: &[u8]) {
        self.pcb.screen.tty(data);
        let out: &mut dyn Write = if h == 2 {
            &mut *self.host.stderr
        } else {
            &mut *self.host.stdout
        };
        let _ = out.write_all(data);
        let _ = out.flush();
    }

    /// Write to any handle; returns bytes written.
    pub(crate) fn write_handle(&mut self, h: u16, data: &[u8]) -> ApiResult<usize> {
        match self.pcb.files.get(h) {
            Some(crate::fs::Handle::Std(n)) => {
                let n = *n;
                match n {
                    0 => return Err(ERROR_ACCESS_DENIED),
                    4 => {}
                    3 => self.console(1, data),
                    _ => self.console(n, data),
                }
                Ok(data.len())
            }
            // Not blocking: what does not fit in the pipe is not written.
            Some(crate::fs::Handle::Pipe(e)) if e.write => e.write(data),
            Some(crate::fs::Handle::Pipe(_)) => Err(ERROR_ACCESS_DENIED),
            Some(crate::fs::Handle::NPipe(_)) => crate::api::npipes::write_once(self, h, data),
            Some(_) => self.files().write_file(h, data),
            None => Err(ERROR_INVALID_HANDLE),
        }
    }

    /// Read from any handle.
    pub(crate) fn read_handle(&mut self, h: u16, n: usize) -> ApiResult<Vec<u8>> {
        match self.pcb.files.get(h) {
            Some(crate::fs::Handle::Std(4)) => Ok(Vec::new()),
            Some(crate::fs::Handle::Std(0 | 3)) => {
                // One console read returns at most a line: `n` is the
                // guest's and must not size the host buffer.
                let mut buf = vec![0; n.min(0x1_0000)];
                let got = self.host.stdin.read(&mut buf).unwrap_or(0);
                buf.truncate(got);
                Ok(buf)
            }
            Some(crate::fs::Handle::Std(_)) => Err(ERROR_ACCESS_DENIED),
            // Not blocking: an empty pipe reads as end of file.
            Some(crate::fs::Handle::Pipe(e)) if !e.write => Ok(e.read(n).unwrap_or_default()),
            Some(crate::fs::Handle::Pipe(_)) => Err(ERROR_ACCESS_DENIED),
            Some(crate::fs::Handle::NPipe(_)) => crate::api::npipes::read_once(self, h, n),
            Some(_) => self.pcb.files.read_file(h, n),
            None => Err(ERROR_INVALID_HANDLE),
        }
    }

    /// Allocate `count` consecutive 64 KB tiles as segments, the last one
    /// `last` bytes long (0 = 64 KB), with room reserved for `reserve`
    /// tiles. Returns the first selector.
    pub(crate) fn alloc_segments(&mut self, count: u32, last: u32, reserve: u32) -> ApiResult<u16> {
        let count = count.max(1);
        let total = count
            .max(reserve)
            .checked_mul(TILE)
            .ok_or(ERROR_NOT_ENOUGH_MEMORY)?;
        let base = self
            .pcb
            .mem
            .reserve(total, false, RegionKind::Segment)
            .map_err(|_| ERROR_NOT_ENOUGH_MEMORY)?;
        if self
            .pcb
            .mem
            .map(&mut self.machine, base, total, true)
            .is_err()
        {
            self.pcb.mem.release(&mut self.machine, base);
            return Err(ERROR_NOT_ENOUGH_MEMORY);
        }
        for i in 0..count {
            let size = if i + 1 == count && last != 0 {
                last
            } else {
                TILE
            };
            self.kernel
                .desc
                .tile(&mut self.machine, base + i * TILE, size, DATA3);
        }
        tile_selector(base).ok_or(ERROR_NOT_ENOUGH_MEMORY)
    }

    /// Change the limit of the segment `sel` (whose tile is wholly mapped).
    pub(crate) fn resize_segment(&mut self, sel: u16, size: u32) -> ApiResult<()> {
        if sel & 4 == 0 {
            return Err(ERROR_INVALID_SEGMENT_NUMBER);
        }
        let base = tile_base(sel);
        let access = self
            .kernel
            .desc
            .get(sel)
            .ok_or(ERROR_INVALID_SEGMENT_NUMBER)?
            .access();
        let owned = self
            .pcb
            .mem
            .regions
            .range(..=base)
            .next_back()
            .is_some_and(|(&b, r)| {
                b + r.size > base && matches!(r.kind, RegionKind::Segment | RegionKind::Module)
            });
        if !owned || !self.pcb.mem.is_mapped(base) {
            return Err(ERROR_INVALID_SEGMENT_NUMBER);
        }
        let size = if size == 0 { TILE } else { size };
        self.kernel.desc.set(
            &mut self.machine,
            sel,
            crate::desc::make(base, size - 1, access, false),
        );
        Ok(())
    }

    /// Free a segment allocated by DosAllocSeg / DosAllocHuge, or one
    /// access to a shared segment (DosAllocShrSeg / DosGetShrSeg).
    pub(crate) fn free_segment(&mut self, sel: u16) -> ApiResult<()> {
        let base = tile_base(sel);
        if sel & 4 != 0
            && let Some(r) = crate::api::sharedmem::free(self, base)
        {
            return r;
        }
        match self.pcb.mem.region(base) {
            Some(r) if sel & 4 != 0 && r.kind == RegionKind::Segment => {
                let size = r.size;
                self.kernel.desc.untile(&mut self.machine, base, size);
                self.pcb.mem.release(&mut self.machine, base);
                Ok(())
            }
            _ => Err(ERROR_INVALID_SEGMENT_NUMBER),
        }
    }

    /// DosSearchPath: find `name` in the current directory (ctl bit 0)
    /// and along `path` (an environment variable's value when ctl bit 1);
    /// returns the full path found.
    pub(crate) fn search_path(&mut self, ctl: u32, path: &[u8], name: &[u8]) -> ApiResult<Vec<u8>> {
        let has_dir = name.iter().any(|&c| c == b'\\' || c == b'/' || c == b':');
        if has_dir {
            let r = self.files().resolve(name)?;
            return match r.exists {
                Some(false) => Ok(crate::process::latin1(&r.os2)),
                _ => Err(ERROR_FILE_NOT_FOUND),
            };
        }
        let mut dirs: Vec<Vec<u8>> = Vec::new();
        if ctl & 1 != 0 {
            dirs.push(b".".to_vec());
        }
        let list: Vec<u8> = if ctl & 2 != 0 {
            let key = String::from_utf8_lossy(path).to_string();
            match self
                .cfg
                .env
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(&key))
            {
                Some((_, v)) => crate::process::latin1(v),
                None => return Err(ERROR_ENVVAR_NOT_FOUND),
            }
        } else {
            path.to_vec()
        };
        dirs.extend(
            list.split(|&c| c == b';')
                .filter(|d| !d.is_empty())
                .map(<[u8]>::to_vec),
        );
        for d in dirs {
            let mut p = d.clone();
            if !matches!(p.last(), Some(b'\\' | b'/')) {
                p.push(b'\\');
            }
            p.extend_from_slice(name);
            if let Ok(r) = self.files().resolve(&p)
                && r.exists == Some(false)
            {
                // The directory normalized (as found on disk), the name as
                // the caller spelled it.
                let dir_os2 = self.files().resolve(&d).map(|r| r.os2).unwrap_or_default();
                let mut full = crate::process::latin1(&dir_os2);
                if !full.ends_with(b"\\") {
                    full.push(b'\\');
                }
                full.extend_from_slice(name);
                return Ok(full);
            }
        }
        Err(ERROR_FILE_NOT_FOUND)
    }
}
