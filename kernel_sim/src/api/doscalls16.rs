//! DOSCALLS, 16-bit entries (OS/2 1.x far pascal), NLS and the absolute
//! values DOSHUGESHIFT / DOSHUGEINCR.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, Stop};
use crate::layout::TILE;
use crate::process::Process;
use crate::rc::*;

/// Huge segment selector shift: consecutive tiles are 8 apart.
pub const HUGE_SHIFT: u32 = 3;

/// The 16-bit entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 3 "DosEnterCritSec" Far16 [] |_, _| Ok(())),
    api!("DOSCALLS" 5 "DosExit" Far16 [W, W] raw |_, c| Err(Stop::Exit(u32::from(c.w(1))))),
    api!("DOSCALLS" 6 "DosExitCritSec" Far16 [] |_, _| Ok(())),
    api!("DOSCALLS" 8 "DosGetInfoSeg" Far16 [P, P] get_info_seg),
    api!("DOSCALLS" 13 "DosHoldSignal" Far16 [W] |_, _| Ok(())),
    api!("DOSCALLS" 14 "DosSetSigHandler" Far16 [P, P, P, W, W] set_sig_handler),
    api!("DOSCALLS" 32 "DosSleep" Far16 [L] |p, c| {
        p.clock.sleep(u64::from(c.l(0)));
        Ok(())
    }),
    api!("DOSCALLS" 33 "DosGetDateTime" Far16 [P] get_date_time),
    api!("DOSCALLS" 34 "DosAllocSeg" Far16 [W, P, W] alloc_seg),
    api!("DOSCALLS" 35 "DosAllocHuge" Far16 [W, W, P, W, W] alloc_huge),
    api!("DOSCALLS" 38 "DosReallocSeg" Far16 [W, W] |p, c| p.resize_segment(c.w(1), u32::from(c.w(0)))),
    api!("DOSCALLS" 39 "DosFreeSeg" Far16 [W] |p, c| p.free_segment(c.w(0))),
    api!("DOSCALLS" 40 "DosReallocHuge" Far16 [W, W, W] realloc_huge),
    api!("DOSCALLS" 41 "DosGetHugeShift" Far16 [P] |p, c| p.put_u16(c, 0, HUGE_SHIFT as u16)),
    api!("DOSCALLS" 47 "DosError" Far16 [W] |_, _| Ok(())),
    api!("DOSCALLS" 49 "DosGetMachineMode" Far16 [P] |p, c| p.put_bytes(c, 0, &[1])),
    api!("DOSCALLS" 50 "DosBeep" Far16 [W, W] |p, c| {
        if !(0x25..=0x7FFF).contains(&c.w(0)) {
            return Err(ERROR_INVALID_PARAMETER);
        }
        p.beeps.push((u32::from(c.w(0)), u32::from(c.w(1))));
        p.clock.sleep(u64::from(c.w(1)));
        Ok(())
    }),
    api!("DOSCALLS" 57 "DosChDir" Far16 [S, L] |p, c| {
        let s = p.arg_sz(c, 0)?;
        p.files.chdir(&s)
    }),
    api!("DOSCALLS" 58 "DosChgFilePtr" Far16 [W, L, W, P] |p, c| {
        let pos = p.files.seek(c.w(0), i64::from(c.l(1) as i32), u32::from(c.w(2)))?;
        p.put_u32_opt(c, 3, pos as u32)
    }),
    api!("DOSCALLS" 59 "DosClose" Far16 [W] |p, c| p.files.close(c.w(0))),
    api!("DOSCALLS" 60 "DosDelete" Far16 [S, L] |p, c| {
        let s = p.arg_sz(c, 0)?;
        p.files.delete(&s)
    }),
    api!("DOSCALLS" 63 "DosFindClose" Far16 [W] |p, c| p.find_close(u32::from(c.w(0)))),
    api!("DOSCALLS" 64 "DosFindFirst" Far16 [S, P, W, P, W, P, L] |p, c| p.find_first(c, 1)),
    api!("DOSCALLS" 65 "DosFindNext" Far16 [W, P, W, P] |p, c| p.find_next(c)),
    api!("DOSCALLS" 66 "DosMkDir" Far16 [S, L] |p, c| {
        let s = p.arg_sz(c, 0)?;
        p.files.mkdir(&s)
    }),
    api!("DOSCALLS" 68 "DosNewSize" Far16 [W, L] |p, c| p.files.set_size(c.w(0), u64::from(c.l(1)))),
    api!("DOSCALLS" 70 "DosOpen" Far16 [S, P, P, L, W, W, W, L] dos_open),
    api!("DOSCALLS" 71 "DosQCurDir" Far16 [W, P, P] q_cur_dir),
    api!("DOSCALLS" 72 "DosQCurDisk" Far16 [P, P] |p, c| {
        p.put_u16(c, 0, 3)?;
        p.put_u32(c, 1, 0b100)
    }),
    api!("DOSCALLS" 74 "DosQFileInfo" Far16 [W, W, P, W] q_file_info),
    api!("DOSCALLS" 75 "DosQFileMode" Far16 [S, P, L] |p, c| {
        let s = p.arg_sz(c, 0)?;
        let a = p.files.file_mode(&s)?;
        p.put_u16(c, 1, a)
    }),
    api!("DOSCALLS" 77 "DosQHandType" Far16 [W, P, P] |p, c| {
        let (t, a) = p.files.handle_type(c.w(0))?;
        p.put_u16_opt(c, 1, t)?;
        p.put_u16_opt(c, 2, a)
    }),
    api!("DOSCALLS" 85 "DosSetMaxFH" Far16 [W] |p, c| {
        let n = usize::from(c.w(0));
        if !(20..=32768).contains(&n) {
            return Err(ERROR_INVALID_PARAMETER);
        }
        p.files.max_handles = n;
        Ok(())
    }),
    api!("DOSCALLS" 89 "DosSetVec" Far16 [W, P, P] set_vec),
    api!("DOSCALLS" 91 "DosGetEnv" Far16 [P, P] |p, c| {
        let (sel, off) = (p.env_sel, p.cmd_offset);
        p.put_u16(c, 0, sel)?;
        p.put_u16(c, 1, off)
    }),
    api!("DOSCALLS" 92 "DosGetVersion" Far16 [P] |p, c| p.put_u16(c, 0, 0x1428)),
    api!("DOSCALLS" 94 "DosGetPID" Far16 [P] |p, c| {
        // PID, TID (the main thread), parent PID (none).
        let [lo, hi] = p.pid.to_le_bytes();
        p.put_bytes(c, 0, &[lo, hi, 1, 0, 0, 0])
    }),
    api!("DOSCALLS" 130 "DosGetCP" Far16 [W, P, P] |p, c| {
        if c.w(0) < 2 {
            return Err(ERROR_CPLIST_TOO_SMALL);
        }
        p.put_u16(c, 1, 437)?;
        p.put_u16_opt(c, 2, 2)
    }),
    api!("DOSCALLS" 135 "DOSHUGESHIFT" value HUGE_SHIFT),
    api!("DOSCALLS" 136 "DOSHUGEINCR" value 1 << HUGE_SHIFT),
    api!("DOSCALLS" 137 "DosRead" Far16 [W, P, W, P] |p, c| {
        let data = p.read_handle(c.w(0), usize::from(c.w(2)))?;
        p.put_bytes(c, 1, &data)?;
        p.put_u16(c, 3, data.len() as u16)
    }),
    api!("DOSCALLS" 138 "DosWrite" Far16 [W, P, W, P] |p, c| {
        let data = p.arg_bytes(c, 1, u32::from(c.w(2)))?;
        let n = p.write_handle(c.w(0), &data)?;
        p.put_u16(c, 3, n as u16)
    }),
    api!("DOSCALLS" 151 "DosSearchPath" Far16 [W, S, S, P, W] |p, c| {
        let path = p.arg_sz(c, 1)?;
        let name = p.arg_sz(c, 2)?;
        let mut full = p.search_path(u32::from(c.w(0)), &path, &name)?;
        full.push(0);
        if full.len() > usize::from(c.w(4)) {
            return Err(ERROR_BUFFER_OVERFLOW);
        }
        p.put_bytes(c, 3, &full)
    }),
    api!("NLS" 1 "DosCaseMap" Far16 [W, P, P] |p, c| {
        let mut s = p.arg_bytes(c, 2, u32::from(c.w(0)))?;
        s.make_ascii_uppercase();
        p.put_bytes(c, 2, &s)
    }),
    api!("NLS" 4 "DosGetDBCSEv" Far16 [W, P, P] |p, c| {
        let zeros = vec![0u8; usize::from(c.w(0))];
        p.put_bytes(c, 2, &zeros)
    }),
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
    let reserved = match p.mem.region(base) {
        Some(r) if r.kind == crate::memory::RegionKind::Segment => r.size / TILE,
        _ => return Err(ERROR_INVALID_SEGMENT_NUMBER),
    };
    if count == 0 || count > reserved {
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    p.desc.untile(&mut p.m, base, reserved * TILE);
    for i in 0..count {
        let size = if i + 1 == count && last != 0 {
            last
        } else {
            TILE
        };
        p.desc
            .tile(&mut p.m, base + i * TILE, size, crate::desc::DATA3);
    }
    Ok(())
}

fn set_vec(p: &mut Process, c: &Call) -> ApiResult<()> {
    let v = usize::from(c.w(0));
    if v >= p.vectors.len() || matches!(v, 1..=3) {
        return Err(ERROR_INVALID_FUNCTION);
    }
    let old = p.vectors[v];
    p.put_u32_opt(c, 2, old)?;
    p.vectors[v] = c.l(1);
    Ok(())
}

fn set_sig_handler(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.put_u32_opt(c, 1, 0)?;
    p.put_u16_opt(c, 2, 0)
}

/// DATETIME: hours, minutes, seconds, hundredths, day, month, year (u16),
/// timezone (i16), weekday.
pub(crate) fn date_time_bytes(p: &Process) -> Vec<u8> {
    let t = p.clock.now(p.m.cycles());
    let mut v = vec![t.hour, t.minute, t.second, t.hundredths, t.day, t.month];
    v.extend(t.year.to_le_bytes());
    v.extend(0i16.to_le_bytes());
    v.push(t.weekday);
    v
}

fn get_date_time(p: &mut Process, c: &Call) -> ApiResult<()> {
    let b = date_time_bytes(p);
    p.put_bytes(c, 0, &b)
}

fn get_info_seg(p: &mut Process, c: &Call) -> ApiResult<()> {
    let g = p.alloc_segments(1, 0x40, 1)?;
    let l = p.alloc_segments(1, 0x40, 1)?;
    let t = p.clock.now(p.m.cycles());
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
    li.extend(p.env_sel.to_le_bytes());
    li.extend(p.cmd_offset.to_le_bytes());
    let ok = p.write_mem(crate::layout::tile_base(g), &gi)
        && p.write_mem(crate::layout::tile_base(l), &li);
    if !ok {
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    p.put_u16(c, 0, g)?;
    p.put_u16(c, 1, l)
}

fn dos_open(p: &mut Process, c: &Call) -> ApiResult<()> {
    let name = p.arg_sz(c, 0)?;
    let (h, action) = p.files.open(&name, c.w(5), c.w(6), u64::from(c.l(3)))?;
    p.put_u16(c, 1, h)?;
    p.put_u16(c, 2, action as u16)
}

fn q_cur_dir(p: &mut Process, c: &Call) -> ApiResult<()> {
    if !matches!(c.w(0), 0 | 3) {
        return Err(ERROR_INVALID_DRIVE);
    }
    let mut dir = crate::process::latin1(&p.files.cwd_text());
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
pub(crate) fn file_status(size: u64, attr: u16, date: u16, time: u16, attr32: bool) -> Vec<u8> {
    let mut v = Vec::new();
    for _ in 0..3 {
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

fn q_file_info(p: &mut Process, c: &Call) -> ApiResult<()> {
    if c.w(1) != 1 {
        return Err(ERROR_INVALID_FUNCTION);
    }
    let (size, attr, d, t) = p.files.file_info(c.w(0))?;
    let v = file_status(size, attr, d, t, false);
    if v.len() > usize::from(c.w(3)) {
        return Err(ERROR_BUFFER_OVERFLOW);
    }
    p.put_bytes(c, 2, &v)
}
