//! DOSCALLS, 32-bit entries (OS/2 2.x `_System`).

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, shared};
use crate::layout::{PAGE, round_up};
use crate::memory::RegionKind;
use crate::process::Process;
use crate::rc::*;

const PAG_COMMIT: u32 = 0x10;
const PAG_DECOMMIT: u32 = 0x20;

/// The 32-bit entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 209 "DosSetMaxFH" Sys32 [L] shared::set_max_fh),
    api!("DOSCALLS" 224 "DosQueryHType" Sys32 [L, P, P] |p, c| {
        let (t, a) = p.pcb.files.handle_type(c.l(0) as u16)?;
        p.put_u32(c, 1, u32::from(t))?;
        p.put_u32(c, 2, u32::from(a))
    }),
    api!("DOSCALLS" 227 "DosScanEnv" Sys32 [S, P] |p, c| {
        let key = String::from_utf8_lossy(&p.arg_sz(c, 0)?).to_string();
        let mut off = 0u32;
        for (k, v) in p.cfg.env.clone() {
            let len = (k.len() + 1 + v.len() + 1) as u32;
            if k.eq_ignore_ascii_case(&key) {
                let at = p.pcb.env_base + off + k.len() as u32 + 1;
                return p.put_u32(c, 1, at);
            }
            off += len;
        }
        Err(ERROR_ENVVAR_NOT_FOUND)
    }),
    api!("DOSCALLS" 228 "DosSearchPath" Sys32 [L, S, S, P, L] shared::search_path),
    api!("DOSCALLS" 229 "DosSleep" Sys32 [L] raw shared::sleep),
    api!("DOSCALLS" 230 "DosGetDateTime" Sys32 [P] shared::get_date_time),
    api!("DOSCALLS" 234 "DosExit" Sys32 [L, L] raw shared::exit),
    api!("DOSCALLS" 255 "DosSetCurrentDir" Sys32 [S] shared::set_current_dir),
    api!("DOSCALLS" 256 "DosSetFilePtr" Sys32 [L, L, L, P] shared::set_file_ptr),
    api!("DOSCALLS" 257 "DosClose" Sys32 [L] shared::close),
    api!("DOSCALLS" 259 "DosDelete" Sys32 [S] shared::delete),
    api!("DOSCALLS" 263 "DosFindClose" Sys32 [L] shared::find_close),
    api!("DOSCALLS" 264 "DosFindFirst" Sys32 [S, P, L, P, L, P, L] |p, c| p.find_first(c, c.l(6))),
    api!("DOSCALLS" 265 "DosFindNext" Sys32 [L, P, L, P] shared::find_next),
    api!("DOSCALLS" 270 "DosCreateDir" Sys32 [S, P] shared::create_dir),
    api!("DOSCALLS" 272 "DosSetFileSize" Sys32 [L, L] shared::set_file_size),
    api!("DOSCALLS" 273 "DosOpen" Sys32 [S, P, P, L, L, L, L, P] |p, c| {
        shared::open_with_eas(p, c, 7)
    }),
    api!("DOSCALLS" 274 "DosQueryCurrentDir" Sys32 [L, P, P] |p, c| {
        if !matches!(c.l(0), 0 | 3) {
            return Err(ERROR_INVALID_DRIVE);
        }
        let mut dir = crate::process::latin1(&p.pcb.files.cwd_text());
        dir.push(0);
        let lin = p.arg_ptr(c, 2, 4)?;
        let cap = p.read_mem(lin, 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        p.put_u32(c, 2, dir.len() as u32)?;
        if dir.len() > cap as usize {
            return Err(ERROR_BUFFER_OVERFLOW);
        }
        p.put_bytes(c, 1, &dir)
    }),
    api!("DOSCALLS" 275 "DosQueryCurrentDisk" Sys32 [P, P] shared::query_current_disk),
    api!("DOSCALLS" 281 "DosRead" Sys32 [L, P, L, P] raw shared::read_any),
    api!("DOSCALLS" 282 "DosWrite" Sys32 [L, P, L, P] raw shared::write_any),
    api!("DOSCALLS" 286 "DosBeep" Sys32 [L, L] shared::beep),
    api!("DOSCALLS" 291 "DosQueryCp" Sys32 [L, P, P] shared::query_cp),
    api!("DOSCALLS" 299 "DosAllocMem" Sys32 [P, L, L] |p, c| {
        let size = c.l(1);
        if size == 0 {
            return Err(ERROR_INVALID_PARAMETER);
        }
        let base = p
            .pcb.mem
            .reserve(size, false, RegionKind::Mem)
            .map_err(|_| ERROR_NOT_ENOUGH_MEMORY)?;
        let len = round_up(size, PAGE);
        if p.pcb.mem.map(&mut p.machine, base, len, true).is_err() {
            p.pcb.mem.release(&mut p.machine, base);
            return Err(ERROR_NOT_ENOUGH_MEMORY);
        }
        p.kernel.desc.tile(&mut p.machine, base, size, crate::desc::DATA3);
        if c.l(2) & PAG_COMMIT == 0 {
            for pg in (0..len).step_by(PAGE as usize) {
                p.pcb.mem.set_present(&mut p.machine, base + pg, false);
            }
        }
        p.put_u32(c, 0, base)
    }),
    api!("DOSCALLS" 304 "DosFreeMem" Sys32 [P] |p, c| {
        let base = c.l(0);
        if let Some(r) = crate::api::sharedmem::free(p, base) {
            return r;
        }
        match p.pcb.mem.region(base) {
            Some(r) if r.kind == RegionKind::Mem => {
                let size = r.size;
                p.kernel.desc.untile(&mut p.machine, base, size);
                p.pcb.mem.release(&mut p.machine, base);
                Ok(())
            }
            _ => Err(ERROR_INVALID_ADDRESS),
        }
    }),
    api!("DOSCALLS" 305 "DosSetMem" Sys32 [P, L, L] |p, c| {
        let (base, size, flags) = (c.l(0), c.l(1), c.l(2));
        let inside = p
            .pcb.mem
            .regions
            .range(..=base)
            .next_back()
            .is_some_and(|(&b, r)| r.kind == RegionKind::Mem && u64::from(base) + u64::from(size) <= u64::from(b) + u64::from(r.size));
        if !inside || size == 0 {
            return Err(ERROR_INVALID_ADDRESS);
        }
        if flags & (PAG_COMMIT | PAG_DECOMMIT) != 0 {
            let present = flags & PAG_COMMIT != 0;
            let first = base & !(PAGE - 1);
            let end = round_up(base + size, PAGE);
            for pg in (first..end).step_by(PAGE as usize) {
                if !p.pcb.mem.set_present(&mut p.machine, pg, present) {
                    return Err(ERROR_INVALID_ADDRESS);
                }
            }
        }
        Ok(())
    }),
    api!("DOSCALLS" 312 "DosGetInfoBlocks" Sys32 [P, P] |p, c| {
        let (tib, pib) = (p.pcb.tib, p.pcb.pib);
        p.put_u32_opt(c, 0, tib)?;
        p.put_u32_opt(c, 1, pib)
    }),
    api!("DOSCALLS" 348 "DosQuerySysInfo" Sys32 [L, L, P, L] query_sys_info),
    api!("DOSCALLS" 354 "DosSetExceptionHandler" Sys32 [P] |p, c| {
        // Link the registration record at the head of the TIB's chain.
        let rec = p.arg_ptr(c, 0, 8)?;
        let tib = p.pcb.tib;
        let head = p.read_mem(tib, 4).ok_or(ERROR_INVALID_ADDRESS)?;
        if !p.write_mem(rec, &head) || !p.write_mem(tib, &rec.to_le_bytes()) {
            return Err(ERROR_INVALID_ADDRESS);
        }
        Ok(())
    }),
    api!("DOSCALLS" 355 "DosUnsetExceptionHandler" Sys32 [P] |p, c| {
        let rec = p.arg_ptr(c, 0, 8)?;
        let tib = p.pcb.tib;
        let head = p.read_mem(tib, 4).ok_or(ERROR_INVALID_ADDRESS)?;
        if head != rec.to_le_bytes() {
            return Err(ERROR_INVALID_PARAMETER);
        }
        let prev = p.read_mem(rec, 4).ok_or(ERROR_INVALID_ADDRESS)?;
        if !p.write_mem(tib, &prev) {
            return Err(ERROR_INVALID_ADDRESS);
        }
        Ok(())
    }),
    api!("DOSCALLS" 356 "DosRaiseException" Sys32 [P] raw crate::xcpt::raise_exception),
    api!("DOSCALLS" 357 "DosUnwindException" Sys32 [P, P, P] raw crate::xcpt::unwind_exception),
    // DosFlatToSel and DosSelToFlat take their argument in EAX and return
    // the result in EAX (not `_System`): the host call's result is EAX.
    api!("DOSCALLS" 425 "DosFlatToSel" Sys32 [] raw |p, _| {
        let lin = p.machine.cpu().gpr[emu::Gpr::Eax];
        Ok(flat_to_sel(lin))
    }),
    api!("DOSCALLS" 426 "DosSelToFlat" Sys32 [] raw |p, _| {
        let v = p.machine.cpu().gpr[emu::Gpr::Eax];
        Ok(sel_to_flat(p, v))
    }),
    api!("DOSCALLS" 382 "DosSetRelMaxFH" Sys32 [P, P] |p, c| {
        let lin = p.arg_ptr(c, 0, 4)?;
        let b = p.read_mem(lin, 4).ok_or(ERROR_INVALID_ADDRESS)?;
        let delta = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let n = (p.pcb.files.max_handles as i64 + i64::from(delta)).clamp(20, 32768) as usize;
        p.pcb.files.max_handles = n;
        p.put_u32(c, 1, n as u32)
    }),
];

/// The 16:16 address of a flat one by the tiling rule (CRMA): the tile's
/// selector and the offset in it. Addresses beyond the tiled region have
/// no 16:16 form; OS/2 returns 0 for them.
fn flat_to_sel(lin: u32) -> u32 {
    crate::layout::tile_selector(lin).map_or(0, |sel| (u32::from(sel) << 16) | (lin & 0xFFFF))
}

/// The flat address of a 16:16 one: the selector's base plus the offset.
/// A selector with no descriptor gives 0.
fn sel_to_flat(p: &Process, v: u32) -> u32 {
    let (sel, off) = ((v >> 16) as u16, v & 0xFFFF);
    p.selector_to_linear(sel, off, 1).unwrap_or(0)
}

fn query_sys_info(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (first, last) = (c.l(0), c.l(1));
    if first == 0 || last < first || last > 26 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let n = last - first + 1;
    if c.l(3) < n * 4 {
        return Err(ERROR_BUFFER_OVERFLOW);
    }
    let ms = p.now_millis() as u32;
    let t = p.kernel.clock.now(p.machine.cycles());
    let unix = t.unix_seconds();
    let mut v = Vec::new();
    for id in first..=last {
        let x: u32 = match id {
            1 => 260,
            2 | 3 => 16,
            4 => 0,
            5 => 3,
            6..=8 => 1,
            9 => 3,
            10 => PAGE,
            11 => 20,
            12 => 40,
            13 => 0,
            14 => ms,
            15 => unix,
            16 => 0,
            17 | 20 | 21 => p.cfg.ram_size as u32,
            18 => 0,
            19 => p.cfg.ram_size as u32 / 2,
            22 => 310,
            23 => 255,
            24..=26 => 1,
            _ => 0,
        };
        v.extend(x.to_le_bytes());
    }
    p.put_bytes(c, 2, &v)
}
