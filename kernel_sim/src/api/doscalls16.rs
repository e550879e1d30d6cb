//! DOSCALLS, 16-bit entries (OS/2 1.x far pascal) and the absolute
//! values DOSHUGESHIFT / DOSHUGEINCR.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, shared};
use crate::fs::Stamps;
use crate::layout::TILE;
use crate::process::Process;
use crate::rc::*;

/// Huge segment selector shift: consecutive tiles are 8 apart.
pub const HUGE_SHIFT: u32 = 3;

/// The 16-bit entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 3 "DosEnterCritSec" Far16 [] |p, _| {
        if p.pcb.critsec == u32::from(u16::MAX) {
            return Err(ERROR_CRITSEC_OVERFLOW);
        }
        p.pcb.critsec += 1;
        Ok(())
    }),
    api!("DOSCALLS" 5 "DosExit" Far16 [W, W] raw shared::exit),
    api!("DOSCALLS" 6 "DosExitCritSec" Far16 [] |p, _| {
        p.pcb.critsec = p.pcb.critsec.checked_sub(1).ok_or(ERROR_CRITSEC_UNDERFLOW)?;
        Ok(())
    }),
    api!("DOSCALLS" 8 "DosGetInfoSeg" Far16 [P, P] get_info_seg),
    api!("DOSCALLS" 13 "DosHoldSignal" Far16 [W] |_, _| Ok(())),
    api!("DOSCALLS" 14 "DosSetSigHandler" Far16 [P, P, P, W, W] set_sig_handler),
    api!("DOSCALLS" 32 "DosSleep" Far16 [L] raw shared::sleep),
    api!("DOSCALLS" 33 "DosGetDateTime" Far16 [P] shared::get_date_time),
    api!("DOSCALLS" 34 "DosAllocSeg" Far16 [W, P, W] alloc_seg),
    api!("DOSCALLS" 38 "DosReallocSeg" Far16 [W, W] |p, c| p.resize_segment(c.w(1), u32::from(c.w(0)))),
    api!("DOSCALLS" 39 "DosFreeSeg" Far16 [W] |p, c| p.free_segment(c.w(0))),
    api!("DOSCALLS" 40 "DosAllocHuge" Far16 [W, W, P, W, W] alloc_huge),
    api!("DOSCALLS" 41 "DosGetHugeShift" Far16 [P] |p, c| p.put_u16(c, 0, HUGE_SHIFT as u16)),
    api!("DOSCALLS" 42 "DosReallocHuge" Far16 [W, W, W] realloc_huge),
    api!("DOSCALLS" 49 "DosGetMachineMode" Far16 [P] |p, c| p.put_bytes(c, 0, &[1])),
    api!("DOSCALLS" 50 "DosBeep" Far16 [W, W] shared::beep),
    api!("DOSCALLS" 57 "DosChDir" Far16 [S, L] shared::set_current_dir),
    api!("DOSCALLS" 58 "DosChgFilePtr" Far16 [W, L, W, P] shared::set_file_ptr),
    api!("DOSCALLS" 59 "DosClose" Far16 [W] shared::close),
    api!("DOSCALLS" 60 "DosDelete" Far16 [S, L] shared::delete),
    api!("DOSCALLS" 63 "DosFindClose" Far16 [W] shared::find_close),
    api!("DOSCALLS" 64 "DosFindFirst" Far16 [S, P, W, P, W, P, L] |p, c| p.find_first(c, 1)),
    api!("DOSCALLS" 65 "DosFindNext" Far16 [W, P, W, P] shared::find_next),
    api!("DOSCALLS" 84 "DosSetFileMode" Far16 [S, W, L] |p, c| {
        let name = p.arg_sz(c, 0)?;
        p.files().set_path_info(&name, [None; 3], Some(c.w(1)))
    }),
    api!("DOSCALLS" 95 "DosOpen2" Far16 [S, P, P, L, W, W, L, P, L] |p, c| {
        shared::open_with_eas(p, c, 7)
    }),
    api!("DOSCALLS" 184 "DosFindFirst2" Far16 [S, P, W, P, W, P, W, L] |p, c| {
        p.find_first(c, u32::from(c.w(6)))
    }),
    api!("DOSCALLS" 66 "DosMkDir" Far16 [S, L] shared::create_dir),
    api!("DOSCALLS" 68 "DosNewSize" Far16 [W, L] shared::set_file_size),
    api!("DOSCALLS" 70 "DosOpen" Far16 [S, P, P, L, W, W, W, L] shared::open),
    api!("DOSCALLS" 71 "DosQCurDir" Far16 [W, P, P] q_cur_dir),
    api!("DOSCALLS" 72 "DosQCurDisk" Far16 [P, P] shared::query_current_disk),
    api!("DOSCALLS" 75 "DosQFileMode" Far16 [S, P, L] |p, c| {
        let s = p.arg_sz(c, 0)?;
        let a = p.files().file_mode(&s)?;
        p.put_u16(c, 1, a)
    }),
    api!("DOSCALLS" 77 "DosQHandType" Far16 [W, P, P] |p, c| {
        let (t, a) = p.pcb.files.handle_type(c.w(0))?;
        p.put_u16_opt(c, 1, t)?;
        p.put_u16_opt(c, 2, a)
    }),
    api!("DOSCALLS" 85 "DosSetMaxFH" Far16 [W] shared::set_max_fh),
    api!("DOSCALLS" 89 "DosSetVec" Far16 [W, P, P] set_vec),
    api!("DOSCALLS" 91 "DosGetEnv" Far16 [P, P] |p, c| {
        let (sel, off) = (p.pcb.env_sel, p.pcb.cmd_offset);
        p.put_u16(c, 0, sel)?;
        p.put_u16(c, 1, off)
    }),
    api!("DOSCALLS" 92 "DosGetVersion" Far16 [P] |p, c| p.put_u16(c, 0, 0x1428)),
    api!("DOSCALLS" 94 "DosGetPID" Far16 [P] |p, c| {
        // PID, TID (the main thread), parent PID (none).
        let [lo, hi] = p.pcb.pid.to_le_bytes();
        p.put_bytes(c, 0, &[lo, hi, 1, 0, 0, 0])
    }),
    // DosError(fEnable): 0 disables the hard-error pop-ups, 1 enables
    // them. There are no pop-ups here (a hard error is returned to the
    // caller either way), so only the argument is checked.
    api!("DOSCALLS" 120 "DosError" Far16 [W] |_, c| match c.w(0) {
        0 | 1 => Ok(()),
        _ => Err(ERROR_INVALID_PARAMETER),
    }),
    api!("DOSCALLS" 130 "DosGetCP" Far16 [W, P, P] shared::query_cp),
    api!("DOSCALLS" 135 "DOSHUGESHIFT" value HUGE_SHIFT),
    api!("DOSCALLS" 136 "DOSHUGEINCR" value 1 << HUGE_SHIFT),
    api!("DOSCALLS" 137 "DosRead" Far16 [W, P, W, P] raw shared::read_any),
    api!("DOSCALLS" 138 "DosWrite" Far16 [W, P, W, P] raw shared::write_any),
    api!("DOSCALLS" 151 "DosSearchPath" Far16 [W, S, S, P, W] shared::search_path),
];

fn alloc_seg(p: &mut Process, c: &Call) -> ApiResult<()> {
    if c.w(2) & 0xFFF0 != 0 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let sel = p.alloc_segments(1, u32::from(c.w(0)), 1)?;
    p.put_u16(c, 1, sel)
}

fn alloc_huge(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (n, last) = (u32::from(c.w(0)), u32::from(c.w(1)));
    let count = n + u32::from(last != 0);
    if count == 0 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let max = count.max(u32::from(c.w(3)));
    let sel = p.alloc_segments(count, last, max)?;
    p.put_u16(c, 2, sel)
}

fn realloc_huge(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (n, last, sel) = (u32::from(c.w(0)), u32::from(c.w(1)), c.w(2));
    let count = n + u32::from(last != 0);
    let base = crate::layout::tile_base(sel);
    let reserved = match p.pcb.mem.region(base) {
        Some(r) if r.kind == crate::memory::RegionKind::Segment => r.size / TILE,
        _ => return Err(ERROR_INVALID_SEGMENT_NUMBER),
    };
    if count == 0 || count > reserved {
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    p.kernel.desc.untile(&mut p.machine, base, reserved * TILE);
    for i in 0..count {
        let size = if i + 1 == count && last != 0 {
            last
        } else {
            TILE
        };
        p.kernel
            .desc
            .tile(&mut p.machine, base + i * TILE, size, crate::desc::DATA3);
    }
    Ok(())
}

fn set_vec(p: &mut Process, c: &Call) -> ApiResult<()> {
    let v = usize::from(c.w(0));
    if v >= p.pcb.vectors.len() || matches!(v, 1..=3) {
        return Err(ERROR_INVALID_FUNCTION);
    }
    let old = p.pcb.vectors[v];
    p.put_u32_opt(c, 2, old)?;
    p.pcb.vectors[v] = c.l(1);
    Ok(())
}

fn set_sig_handler(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.put_u32_opt(c, 1, 0)?;
    p.put_u16_opt(c, 2, 0)
}

fn get_info_seg(p: &mut Process, c: &Call) -> ApiResult<()> {
    let g = p.alloc_segments(1, 0x40, 1)?;
    let l = p.alloc_segments(1, 0x40, 1)?;
    let t = p.kernel.clock.now(p.machine.cycles());
    let mut gi = Vec::new();
    gi.extend(0u32.to_le_bytes());
    gi.extend((p.now_millis() as u32).to_le_bytes());
    gi.extend([t.hour, t.minute, t.second, t.hundredths]);
    gi.extend(0u16.to_le_bytes());
    gi.extend(310u16.to_le_bytes());
    gi.extend([t.day, t.month]);
    gi.extend(t.year.to_le_bytes());
    gi.extend([t.weekday, 20, 40, 0, 1, 16, HUGE_SHIFT as u8, 1]);
    gi.extend(1u16.to_le_bytes());
    gi.extend([1, 1]);
    gi.extend(32u16.to_le_bytes());
    gi.extend(248u16.to_le_bytes());
    gi.push(3);
    let mut li = Vec::new();
    for w in [1u16, 0, 0x200, 1, 1] {
        li.extend(w.to_le_bytes());
    }
    li.extend([0, 0, 1, 0, 0]);
    li.extend(p.pcb.env_sel.to_le_bytes());
    li.extend(p.pcb.cmd_offset.to_le_bytes());
    let ok = p.write_mem(crate::layout::tile_base(g), &gi)
        && p.write_mem(crate::layout::tile_base(l), &li);
    if !ok {
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    p.put_u16(c, 0, g)?;
    p.put_u16(c, 1, l)
}

fn q_cur_dir(p: &mut Process, c: &Call) -> ApiResult<()> {
    if !matches!(c.w(0), 0 | 3) {
        return Err(ERROR_INVALID_DRIVE);
    }
    let mut dir = crate::process::latin1(&p.pcb.files.cwd_text());
    dir.push(0);
    let lin = p.arg_ptr(c, 2, 2)?;
    let cap = p
        .read_mem(lin, 2)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
    p.put_u16(c, 2, dir.len() as u16)?;
    if dir.len() > usize::from(cap) {
        return Err(ERROR_BUFFER_OVERFLOW);
    }
    p.put_bytes(c, 1, &dir)
}

/// FILESTATUS (level 1): three date/time pairs, size, allocation, attribute.
pub(crate) fn file_status(size: u64, attr: u16, s: &Stamps, attr32: bool) -> Vec<u8> {
    let mut v = Vec::new();
    for (date, time) in [s.created, s.accessed, s.written] {
        v.extend(date.to_le_bytes());
        v.extend(time.to_le_bytes());
    }
    v.extend((size.min(u64::from(u32::MAX)) as u32).to_le_bytes());
    v.extend((crate::layout::round_up(size.min(0xFFFF_0000) as u32, 512)).to_le_bytes());
    if attr32 {
        v.extend(u32::from(attr).to_le_bytes());
    } else {
        v.extend(attr.to_le_bytes());
    }
    v
}
