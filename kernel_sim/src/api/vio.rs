//! The screen behind the console, and the VIOCALLS that use it:
//! VioPopUp, VioEndPopUp, VioReadCharStr.
//!
//! Decisions: the screen is 80 columns by 25 rows of characters. Every
//! byte written to the console (standard output and error, VioWrtTTY,
//! DosPutMessage) is also put on it as a teletype does: CR to column 0,
//! LF down a row, BS back a column, TAB to the next multiple of 8, BEL
//! nothing; the last row scrolls up. Attributes are not kept. The cursor
//! calls (VioGetCurPos, VioSetCurPos) keep their earlier teletype
//! behaviour and do not move this cursor.
//!
//! A pop-up belongs to the one process: VioPopUp while it has one is
//! ERROR_VIO_EXISTING_POPUP, with or without VP_WAIT (waiting for itself
//! would never end). An opaque pop-up starts blank with the cursor at
//! the top left; a transparent one keeps the screen. VioEndPopUp brings
//! back the screen as it was.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

const ERROR_VIO_ROW: u32 = 358;
const ERROR_VIO_COL: u32 = 359;
const ERROR_VIO_NO_POPUP: u32 = 405;
const ERROR_VIO_EXISTING_POPUP: u32 = 406;

/// VP_WAIT, VP_TRANSPARENT.
const VP_WAIT: u16 = 0x0001;
const VP_TRANSPARENT: u16 = 0x0002;

/// Rows of the screen.
pub const ROWS: usize = 25;
/// Columns of the screen.
pub const COLS: usize = 80;

/// The characters on the screen and the teletype's position.
#[derive(Clone, Debug)]
pub(crate) struct Screen {
    cells: Vec<u8>,
    row: usize,
    col: usize,
    /// The screen under the pop-up, while there is one.
    saved: Option<Box<(Vec<u8>, usize, usize)>>,
}

impl Default for Screen {
    fn default() -> Screen {
        Screen {
            cells: vec![b' '; ROWS * COLS],
            row: 0,
            col: 0,
            saved: None,
        }
    }
}

impl Screen {
    /// Puts `data` on the screen as a teletype.
    pub(crate) fn tty(&mut self, data: &[u8]) {
        for &b in data {
            match b {
                b'\r' => self.col = 0,
                b'\n' => self.down(),
                8 => self.col = self.col.saturating_sub(1),
                b'\t' => {
                    self.col = (self.col / 8 + 1) * 8;
                    if self.col >= COLS {
                        self.col = 0;
                        self.down();
                    }
                }
                7 => {}
                _ => {
                    self.cells[self.row * COLS + self.col] = b;
                    self.col += 1;
                    if self.col == COLS {
                        self.col = 0;
                        self.down();
                    }
                }
            }
        }
    }

    fn down(&mut self) {
        if self.row + 1 < ROWS {
            self.row += 1;
        } else {
            self.cells.copy_within(COLS.., 0);
            self.cells[(ROWS - 1) * COLS..].fill(b' ');
        }
    }
}

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("VIOCALLS" 1 "VioEndPopUp" Far16 [W] end_popup),
    api!("VIOCALLS" 11 "VioPopUp" Far16 [P, W] popup),
    api!("VIOCALLS" 30 "VioReadCharStr" Far16 [P, P, W, W, W] read_char_str),
];

fn handle(h: u16) -> ApiResult<()> {
    if h == 0 {
        Ok(())
    } else {
        Err(ERROR_VIO_INVALID_HANDLE)
    }
}

/// VioPopUp(&fWait, hvio).
fn popup(p: &mut Process, c: &Call) -> ApiResult<()> {
    handle(c.w(1))?;
    let f = p.arg_bytes(c, 0, 2)?;
    let flags = u16::from_le_bytes([f[0], f[1]]);
    if flags & !(VP_WAIT | VP_TRANSPARENT) != 0 {
        return Err(ERROR_VIO_INVALID_PARMS);
    }
    let s = &mut p.pcb.screen;
    if s.saved.is_some() {
        return Err(ERROR_VIO_EXISTING_POPUP);
    }
    s.saved = Some(Box::new((s.cells.clone(), s.row, s.col)));
    if flags & VP_TRANSPARENT == 0 {
        s.cells.fill(b' ');
        s.row = 0;
        s.col = 0;
    }
    Ok(())
}

/// VioEndPopUp(hvio).
fn end_popup(p: &mut Process, c: &Call) -> ApiResult<()> {
    handle(c.w(0))?;
    let s = &mut p.pcb.screen;
    let (cells, row, col) = *s.saved.take().ok_or(ERROR_VIO_NO_POPUP)?;
    s.cells = cells;
    s.row = row;
    s.col = col;
    Ok(())
}

/// VioReadCharStr(buffer, &cb, row, column, hvio): up to `cb`
/// characters from (row, column) on, along the rows, to the screen's
/// end; `cb` gets the count.
fn read_char_str(p: &mut Process, c: &Call) -> ApiResult<()> {
    handle(c.w(4))?;
    let (row, col) = (usize::from(c.w(2)), usize::from(c.w(3)));
    if row >= ROWS {
        return Err(ERROR_VIO_ROW);
    }
    if col >= COLS {
        return Err(ERROR_VIO_COL);
    }
    let cb = p.arg_bytes(c, 1, 2)?;
    let cb = usize::from(u16::from_le_bytes([cb[0], cb[1]]));
    let at = row * COLS + col;
    let n = cb.min(ROWS * COLS - at);
    let text = p.pcb.screen.cells[at..at + n].to_vec();
    p.put_bytes(c, 0, &text)?;
    p.put_u16(c, 1, n as u16)
}
