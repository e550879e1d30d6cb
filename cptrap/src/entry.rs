//! The trace table entry: 32 bytes, fixed size, little endian.
//!
//! VM/SP's entries were 16 bytes (SC19-6203-2, "subtract 16 bytes from
//! TRACCURR"); z/VM's are 32 or 64. os2trace uses 32 so that every entry
//! holds the process, the thread and a full emulated time:
//!
//! ```text
//! offset size field
//! 0x00   1    typenum (01..1B, see typenum.rs)
//! 0x01   1    flags: bit 0 = the event came from 32-bit code
//! 0x02   2    PID
//! 0x04   2    TID
//! 0x06   2    aux (type specific, below)
//! 0x08   8    time: the emulated clock, in cycles
//! 0x10   4    w0 \
//! 0x14   4    w1  | type specific words
//! 0x18   4    w2  |
//! 0x1C   4    w3 /
//! ```
//!
//! | type | aux | w0 | w1 | w2 | w3 |
//! |---|---|---|---|---|---|
//! | 01 IRQ | IRQ line | vector | 0 | 0 | 0 |
//! | 02 API call | ordinal | module name bytes 0-3 | module name bytes 4-7 | return code | caller's return address |
//! | 03 exception | vector | faulting EIP (linear) | error code | fault address (CR2) | CS |
//! | 05 I/O done | handle or port | operation | bytes moved or value | return code | 0 |
//! | 06 allocate | 0 | address | size | allocation flags | return code |
//! | 07 free | 0 | address | size | 0 | return code |
//! | 08 scheduler | 0 | reason (1 = DosSleep) | milliseconds | 0 | 0 |
//! | 09 queue drop | 0 | semaphore or handle waited on | 0 | 0 | 0 |
//! | 0A dispatch | 0 | previous TID | 0 | 0 | 0 |
//! | 0B start I/O | handle or port | operation | length or value | buffer address | access size |
//! | 12 semaphore wait | 0 | semaphore handle | timeout (ms) | return code | 0 |
//!
//! The module name of an API call is up to 8 ASCII bytes, NUL padded. The
//! I/O operation is one of [`IoOp`]. The time of the emulated clock is in
//! cycles, so records of one run sort and select by it.
//!
//! The CPTRAP file stores an entry exactly as these 32 bytes, and its own
//! records (X'3C', X'3E', X'3F') begin with the same first 16 bytes.

use crate::typenum::TypeNum;

/// Size in bytes of a trace table entry.
pub const ENTRY_SIZE: usize = 32;

/// Size of the common frame (typenum, flags, PID, TID, aux, time) that every
/// CPTRAP file record starts with.
pub const FRAME_SIZE: usize = 16;

/// Entry flag: the event came from 32-bit code.
pub const FLAG_32BIT: u8 = 0x01;

/// The I/O operation of a start I/O (0B) or I/O done (05) entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum IoOp {
    /// File read (DosRead).
    FileRead = 0,
    /// File write (DosWrite).
    FileWrite = 1,
    /// Port input (IN).
    PortIn = 2,
    /// Port output (OUT).
    PortOut = 3,
}

impl IoOp {
    /// The operation with this code, if any.
    pub fn from_code(code: u32) -> Option<IoOp> {
        match code {
            0 => Some(IoOp::FileRead),
            1 => Some(IoOp::FileWrite),
            2 => Some(IoOp::PortIn),
            3 => Some(IoOp::PortOut),
            _ => None,
        }
    }

    /// TRAPRED's name of the operation.
    pub fn name(self) -> &'static str {
        match self {
            IoOp::FileRead => "FILE READ",
            IoOp::FileWrite => "FILE WRITE",
            IoOp::PortIn => "PORT IN",
            IoOp::PortOut => "PORT OUT",
        }
    }
}

/// The frame every CPTRAP record begins with (the first 16 bytes of an
/// entry): who and when.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frame {
    /// Record type.
    pub typenum: u8,
    /// Flags ([`FLAG_32BIT`]).
    pub flags: u8,
    /// Process ID.
    pub pid: u16,
    /// Thread ID.
    pub tid: u16,
    /// Type-specific 16-bit field.
    pub aux: u16,
    /// Emulated clock, in cycles.
    pub time: u64,
}

impl Frame {
    /// The 16 bytes of the frame.
    pub fn to_bytes(&self) -> [u8; FRAME_SIZE] {
        let mut b = [0u8; FRAME_SIZE];
        b[0] = self.typenum;
        b[1] = self.flags;
        b[2..4].copy_from_slice(&self.pid.to_le_bytes());
        b[4..6].copy_from_slice(&self.tid.to_le_bytes());
        b[6..8].copy_from_slice(&self.aux.to_le_bytes());
        b[8..16].copy_from_slice(&self.time.to_le_bytes());
        b
    }

    /// The frame in the first 16 bytes of `b`.
    pub fn from_bytes(b: &[u8; FRAME_SIZE]) -> Frame {
        let [typenum, flags, p0, p1, t0, t1, a0, a1, time @ ..] = *b;
        Frame {
            typenum,
            flags,
            pid: u16::from_le_bytes([p0, p1]),
            tid: u16::from_le_bytes([t0, t1]),
            aux: u16::from_le_bytes([a0, a1]),
            time: u64::from_le_bytes(time),
        }
    }
}

/// A trace table entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// Typenum, flags, PID, TID, aux and time.
    pub frame: Frame,
    /// The four type-specific words.
    pub words: [u32; 4],
}

impl Entry {
    /// An entry of type `t` with zero fields.
    pub fn new(t: TypeNum) -> Entry {
        Entry {
            frame: Frame {
                typenum: t.0,
                ..Frame::default()
            },
            words: [0; 4],
        }
    }

    /// An API call entry (02): `module` is cut to 8 bytes.
    pub fn api_call(module: &str, ordinal: u16, rc: u32, return_address: u32) -> Entry {
        let mut name = [0u8; 8];
        for (dst, src) in name.iter_mut().zip(module.bytes()) {
            *dst = src;
        }
        let mut e = Entry::new(TypeNum::API);
        e.frame.aux = ordinal;
        e.words = [
            u32::from_le_bytes([name[0], name[1], name[2], name[3]]),
            u32::from_le_bytes([name[4], name[5], name[6], name[7]]),
            rc,
            return_address,
        ];
        e
    }

    /// The typenum.
    pub fn typenum(&self) -> TypeNum {
        TypeNum(self.frame.typenum)
    }

    /// The module name of an API call entry (w0, w1 as 8 NUL-padded bytes).
    pub fn module_name(&self) -> String {
        let mut bytes = Vec::with_capacity(8);
        bytes.extend_from_slice(&self.words[0].to_le_bytes());
        bytes.extend_from_slice(&self.words[1].to_le_bytes());
        bytes
            .iter()
            .take_while(|&&b| b != 0)
            .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
            .collect()
    }

    /// The 32 bytes of the entry.
    pub fn to_bytes(&self) -> [u8; ENTRY_SIZE] {
        let mut b = [0u8; ENTRY_SIZE];
        b[..FRAME_SIZE].copy_from_slice(&self.frame.to_bytes());
        for (i, w) in self.words.iter().enumerate() {
            b[FRAME_SIZE + 4 * i..FRAME_SIZE + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// The entry in `b`.
    pub fn from_bytes(b: &[u8; ENTRY_SIZE]) -> Entry {
        let mut frame = [0u8; FRAME_SIZE];
        frame.copy_from_slice(&b[..FRAME_SIZE]);
        let word = |i: usize| {
            let o = FRAME_SIZE + 4 * i;
            u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
        };
        Entry {
            frame: Frame::from_bytes(&frame),
            words: [word(0), word(1), word(2), word(3)],
        }
    }
}

// A table entry is written at every API call: in memory it stays the
// size it has in the table and the file.
const _: () = {
    assert!(size_of::<Frame>() == FRAME_SIZE);
    assert!(size_of::<Entry>() == ENTRY_SIZE);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_call_entry_keeps_module_ordinal_rc() {
        let e = Entry::api_call("DOSCALLS", 282, 5, 0x1_0020);
        assert_eq!(e.typenum(), TypeNum::API);
        assert_eq!(e.module_name(), "DOSCALLS");
        assert_eq!(e.frame.aux, 282);
        assert_eq!(e.words[2], 5);
        let long = Entry::api_call("VERYLONGNAME", 1, 0, 0);
        assert_eq!(long.module_name(), "VERYLONG");
        assert_eq!(Entry::api_call("MSG", 1, 0, 0).module_name(), "MSG");
    }

    #[test]
    fn layout_is_the_documented_one() {
        let mut e = Entry::new(TypeNum::EXCEPTION);
        e.frame.flags = FLAG_32BIT;
        e.frame.pid = 0x0102;
        e.frame.tid = 0x0304;
        e.frame.aux = 0x000D;
        e.frame.time = 0x1122_3344_5566_7788;
        e.words = [0xA0A1A2A3, 1, 2, 3];
        let b = e.to_bytes();
        assert_eq!(b[0], 0x03);
        assert_eq!(b[1], 1);
        assert_eq!(b[2..8], [0x02, 0x01, 0x04, 0x03, 0x0D, 0x00]);
        assert_eq!(b[8..16], [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]);
        assert_eq!(b[16..20], [0xA3, 0xA2, 0xA1, 0xA0]);
        assert_eq!(Entry::from_bytes(&b), e);
    }
}
