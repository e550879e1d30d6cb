//! 32-bit TNF references (`tnf_ref32_t`, reference §1.5).
//!
//! ```text
//! bits 1..0   type: 00 FULL/FWD, 01 PAIR, 10 TAG, 11 reserved
//! bit 31 = 1  permanent: bits 30..2 are an offset from the start of the file
//! bit 31 = 0  reclaimable: bits 30..0, sign bit 30, hold
//!             (gen_delta << file_log_size) | byte_delta
//! ```
//!
//! How a reclaimable value splits into its two parts is this crate's reading
//! of "(gen_delta << file_log_size) + byte_delta": the byte delta is taken
//! modulo the file's power-of-two span (`1 << file_log_size`), so it is the
//! low `file_log_size` bits and the generation delta is what lies above,
//! signed. The target is `(source + byte_delta) mod span`, in the block whose
//! generation is the source block's plus `gen_delta`; a target that fails
//! either test was overwritten, and the reference reads as NULL.

/// The type bits of a reference or of a record's first word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefType {
    /// A plain reference or a forwarding cell.
    Full,
    /// An event's tag word: tag16 and ref16 in one word.
    Pair,
    /// A record's tag (to its type record).
    Tag,
    /// The reserved pattern.
    Reserved,
}

/// The two low bits of a word.
pub fn ref_type(word: u32) -> RefType {
    match word & 3 {
        0 => RefType::Full,
        1 => RefType::Pair,
        2 => RefType::Tag,
        _ => RefType::Reserved,
    }
}

/// Type bits for FULL.
pub const FULL: u32 = 0;
/// Type bits for PAIR.
pub const PAIR: u32 = 1;
/// Type bits for TAG.
pub const TAG: u32 = 2;
/// The permanent-space bit.
pub const PERMANENT: u32 = 0x8000_0000;

/// A permanent reference to `offset` (4-aligned, below 1 GB) of `kind`.
pub fn permanent(offset: u32, kind: u32) -> u32 {
    PERMANENT | (offset & 0x3FFF_FFFC) | kind
}

/// A reclaimable reference from `source` to `target`, `gen_delta`
/// generations apart, in a file of span `1 << log`. None if the generation
/// delta does not fit beside the byte delta.
pub fn reclaimable(source: u32, target: u32, gen_delta: i32, log: u32, kind: u32) -> Option<u32> {
    let span_mask = (1u64 << log) - 1;
    let byte = (u64::from(target).wrapping_sub(u64::from(source))) & span_mask;
    let room = 30 - log as i32; // bits for the signed generation delta
    if room < 1 || gen_delta < -(1 << room) || gen_delta >= (1 << room) {
        return None;
    }
    let v = (i64::from(gen_delta) << log) | byte as i64;
    Some(((v as u32) & 0x7FFF_FFFC) | kind)
}

/// Where a reference points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The zero reference.
    Null,
    /// A file offset in the permanent space.
    Permanent(u32),
    /// A file offset, valid only if its block's generation is the source
    /// block's plus `gen_delta`.
    Reclaimable {
        /// The target offset.
        offset: u32,
        /// The generation difference.
        gen_delta: i32,
    },
}

/// Decodes the reference `word` found at `source` in a file of span `1 << log`.
pub fn decode(word: u32, source: u32, log: u32) -> Target {
    let value = word & !3;
    if value == 0 {
        return Target::Null;
    }
    if word & PERMANENT != 0 {
        return Target::Permanent(value & 0x3FFF_FFFC);
    }
    // Sign-extend bit 30.
    let v = i64::from(((value << 1) as i32) >> 1);
    let span_mask = (1i64 << log) - 1;
    let byte = v & span_mask;
    let gen_delta = (v >> log) as i32;
    let offset = ((i64::from(source) + byte) & span_mask) as u32;
    Target::Reclaimable { offset, gen_delta }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reclaimable_round_trips_both_ways() {
        for (s, t, g) in [
            (0x18010, 0x18040, 0),
            (0x18400, 0x18010, 0),
            (0x18010, 0x1FE00, -1),
        ] {
            let w = reclaimable(s, t, g, 17, FULL).unwrap();
            assert_eq!(w & PERMANENT, 0);
            assert_eq!(
                decode(w, s, 17),
                Target::Reclaimable {
                    offset: t,
                    gen_delta: g
                }
            );
        }
        assert_eq!(
            decode(permanent(0x10010, TAG), 0, 17),
            Target::Permanent(0x10010)
        );
        assert!(reclaimable(0, 8, 1 << 13, 17, FULL).is_none());
    }
}
