//! FMT strings: from TSF text to the TFF encoding ([`compile_fmt`]), from
//! the TFF encoding to items ([`parse_fmt`]), and the formatting engine that
//! applies them to a record's data ([`format_record`], [`hex_dump`]).
//!
//! In a TFF a format control is byte 0x01 followed by an upper-case letter
//! (`%Innn` keeps its digits after the `I`); everything else is literal
//! text. The controls (trcust-trace-customizer.txt §1.3.5.7, 1.4):
//!
//! | control | consumes | prints |
//! |---|---|---|
//! | `%Innn ` | nnn bytes | nothing (the space after the digits is eaten) |
//! | `%P` | the 3-byte prefix | nothing, or the fault it reports |
//! | `%B` | 1 | `01` |
//! | `%C` | 1 | the character, `.` outside 0x20..0x7E |
//! | `%W` | 2 | `0001` |
//! | `%D` | 4 | `0000 4B2C` (high word, low word) |
//! | `%F` | 4 | `00004B2C` |
//! | `%A` | 4 | `00B7:0001` (selector in the high word) |
//! | `%Q` | 8 | `00004B2C 00000001` (two dwords in logged order) |
//! | `%R` + control | see below | the control repeated, space separated |
//! | `%S` | a string | the string |
//! | `%U` | the rest | lower-case hex bytes, space separated |
//! | `%X` `%Y` | nothing | major, minor as 4 hex digits |
//!
//! Decisions where the documents are silent (written down here for the
//! OS/2 developer reading the output):
//!
//! * The data position runs on from one FMT line to the next.
//! * `%P` first skips whatever the previous prefixed item left unread (its
//!   length is known), then reads status (0 memory, 1 string, 0xFF invalid
//!   selector, 0xFE selector not present, 0xFD page not present) and a u16
//!   length. A fault item prints `<invalid selector at 001F:0000>`,
//!   `<selector not present at 001F:0000>` or `<page not present at
//!   0x0003F000>` in place of the data, and the data control that follows
//!   prints nothing; so does a prefix that runs out (it prints `<no data>`
//!   once). An unknown status prints `<bad prefix status 0x05>`
//!   and the item is read as memory.
//! * `%Px` is `%P%x` (the handbook allows it) when `x` is a data control
//!   letter standing alone: followed by neither a letter nor a digit.
//! * `%R` in a dynamic record (flags bit 3) reads a prefix as `%P` does and
//!   repeats over its length; in a static record it repeats over the rest
//!   of the data. Bytes too few for one more repetition print as
//!   `<partial: 01 02>`. `%R%C` repeats without spaces.
//! * `%S` right after `%P` prints the item's bytes. A bare `%S` reads the
//!   system tracepoints' layout (a reserved byte 0 or 1, a u16 length, the
//!   string) when those three bytes are consistent with the data, and else a
//!   NUL-terminated string (the NUL is consumed). Control characters in
//!   strings print as `.`.
//! * Data that runs out prints `<no data>`, or `<only 2 bytes: 01 02>` when
//!   part of a value is there; formatting never fails.
//! * Text bytes are shown as ISO-8859-1 characters; control bytes other than
//!   tab as `.`.

mod compile;
mod engine;
mod prepared;

pub use compile::compile_fmt;
pub(crate) use engine::push_hex;
pub use engine::{FormatInput, format_record, hex_dump};
pub use prepared::PreparedRule;

/// A format control letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Control {
    /// `%A` segmented address.
    A,
    /// `%B` byte.
    B,
    /// `%C` character.
    C,
    /// `%D` double word as two words.
    D,
    /// `%F` flat address.
    F,
    /// `%P` data prefix.
    P,
    /// `%Q` quad word.
    Q,
    /// `%R` repeat the next control.
    R,
    /// `%S` string.
    S,
    /// `%U` the rest as bytes.
    U,
    /// `%W` word.
    W,
    /// `%X` major code.
    X,
    /// `%Y` minor code.
    Y,
}

impl Control {
    /// The control for a letter (either case); `I` is not one (it carries
    /// digits, see [`FmtItem::Ignore`]).
    pub fn from_letter(c: u8) -> Option<Self> {
        Some(match c.to_ascii_uppercase() {
            b'A' => Control::A,
            b'B' => Control::B,
            b'C' => Control::C,
            b'D' => Control::D,
            b'F' => Control::F,
            b'P' => Control::P,
            b'Q' => Control::Q,
            b'R' => Control::R,
            b'S' => Control::S,
            b'U' => Control::U,
            b'W' => Control::W,
            b'X' => Control::X,
            b'Y' => Control::Y,
            _ => return None,
        })
    }

    /// Bytes one value of this control takes, for the fixed-size ones.
    pub fn width(self) -> Option<usize> {
        match self {
            Control::B | Control::C => Some(1),
            Control::W => Some(2),
            Control::D | Control::F | Control::A => Some(4),
            Control::Q => Some(8),
            _ => None,
        }
    }
}

/// One piece of a stored FMT string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FmtItem<'a> {
    /// Literal text.
    Text(&'a [u8]),
    /// A control.
    Control(Control),
    /// `%Innn`: skip nnn bytes.
    Ignore(u32),
}

/// The marker byte of a control in a TFF.
pub const CONTROL_BYTE: u8 = 0x01;

/// Splits a stored FMT string (controls as 0x01 + letter) into items.
/// A 0x01 not followed by a known letter is text.
pub fn parse_fmt(fmt: &[u8]) -> Vec<FmtItem<'_>> {
    let mut items = Vec::new();
    let mut text_start = 0;
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != CONTROL_BYTE || i + 1 >= fmt.len() {
            i += 1;
            continue;
        }
        let letter = fmt[i + 1];
        let (item, mut end) = if letter.eq_ignore_ascii_case(&b'I') {
            let digits = fmt[i + 2..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let n = fmt[i + 2..i + 2 + digits].iter().fold(0u32, |n, d| {
                n.saturating_mul(10).saturating_add(u32::from(d - b'0'))
            });
            let mut end = i + 2 + digits;
            if fmt.get(end) == Some(&b' ') {
                end += 1;
            }
            (FmtItem::Ignore(n), end)
        } else if let Some(c) = Control::from_letter(letter) {
            (FmtItem::Control(c), i + 2)
        } else {
            i += 1;
            continue;
        };
        if text_start < i {
            items.push(FmtItem::Text(&fmt[text_start..i]));
        }
        items.push(item);
        if item == FmtItem::Control(Control::P)
            && let Some(c) = fmt.get(end).and_then(|&b| px_letter(b))
            && !fmt.get(end + 1).is_some_and(u8::is_ascii_alphanumeric)
        {
            items.push(FmtItem::Control(c));
            end += 1;
        }
        text_start = end;
        i = end;
    }
    if text_start < fmt.len() {
        items.push(FmtItem::Text(&fmt[text_start..]));
    }
    items
}

/// The data control a letter after `%P` stands for (`%Px`).
fn px_letter(b: u8) -> Option<Control> {
    match Control::from_letter(b)? {
        c @ (Control::A
        | Control::B
        | Control::C
        | Control::D
        | Control::F
        | Control::Q
        | Control::S
        | Control::U
        | Control::W) => Some(c),
        _ => None,
    }
}
