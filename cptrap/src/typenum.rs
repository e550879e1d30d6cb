//! Record type codes ("typenums") and sets of them.
//!
//! VM/SP's trace table types (SC19-6203-2, Trace Table Recording Facility)
//! are kept as numbers, and each is given the event of the emulated OS/2 that
//! is closest in spirit:
//!
//! | typenum | VM/SP event | os2trace event |
//! |---|---|---|
//! | 01 | external interrupt | hardware IRQ |
//! | 02 | SVC interrupt | API call (module, ordinal, return code) |
//! | 03 | program interrupt | CPU exception |
//! | 05 | I/O interrupt | I/O completion (file I/O, port I/O) |
//! | 06 | free storage (obtain) | memory allocation |
//! | 07 | return storage | memory freeing |
//! | 08 | enter scheduler | the running thread gives up the CPU |
//! | 09 | queue drop | a thread leaves the run queue (blocks) |
//! | 0A | run user | a thread is dispatched |
//! | 0B | start I/O | I/O started (file I/O, port I/O) |
//! | 12 | spinning on lock | semaphore wait |
//!
//! The other VM/SP codes (04, 0C..11, 13..1B) have no OS/2 counterpart and
//! are never produced; they are still valid typenums in a selection.
//! The CPTRAP file adds three record types of its own: X'3E' (virtual
//! machine interface data), X'3F' (CP interface data), as in the seed, and
//! X'3C', os2trace's "data lost" marker.

use std::fmt;

/// A record type code: a trace table type (01..1B) or a CPTRAP file type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TypeNum(pub u8);

impl TypeNum {
    /// 01: hardware interrupt (VM/SP external interrupt).
    pub const IRQ: TypeNum = TypeNum(0x01);
    /// 02: API call (VM/SP SVC interrupt).
    pub const API: TypeNum = TypeNum(0x02);
    /// 03: CPU exception (VM/SP program interrupt).
    pub const EXCEPTION: TypeNum = TypeNum(0x03);
    /// 05: I/O completion (VM/SP I/O interrupt).
    pub const IO_DONE: TypeNum = TypeNum(0x05);
    /// 06: memory allocation (VM/SP free storage, i.e. obtain).
    pub const ALLOC: TypeNum = TypeNum(0x06);
    /// 07: memory freeing (VM/SP return storage).
    pub const FREE: TypeNum = TypeNum(0x07);
    /// 08: the running thread enters the scheduler.
    pub const SCHEDULE: TypeNum = TypeNum(0x08);
    /// 09: a thread leaves the run queue (queue drop).
    pub const QUEUE_DROP: TypeNum = TypeNum(0x09);
    /// 0A: a thread is dispatched (run user).
    pub const DISPATCH: TypeNum = TypeNum(0x0A);
    /// 0B: I/O started (VM/SP start I/O).
    pub const IO_START: TypeNum = TypeNum(0x0B);
    /// 12: semaphore wait (VM/SP spinning on lock).
    pub const SEM_WAIT: TypeNum = TypeNum(0x12);
    /// X'3C': data lost (os2trace's marker in the CPTRAP file).
    pub const DATA_LOST: TypeNum = TypeNum(0x3C);
    /// X'3E': virtual machine interface data.
    pub const VM_INTERFACE: TypeNum = TypeNum(0x3E);
    /// X'3F': CP interface data.
    pub const CP_INTERFACE: TypeNum = TypeNum(0x3F);

    /// The highest trace table typenum (VM/SP's X'1B', clear I/O).
    pub const TABLE_MAX: u8 = 0x1B;

    /// The table types os2trace produces, in code order.
    pub const PRODUCED: [TypeNum; 11] = [
        Self::IRQ,
        Self::API,
        Self::EXCEPTION,
        Self::IO_DONE,
        Self::ALLOC,
        Self::FREE,
        Self::SCHEDULE,
        Self::QUEUE_DROP,
        Self::DISPATCH,
        Self::IO_START,
        Self::SEM_WAIT,
    ];

    /// Whether this is a trace table type (01..1B).
    pub fn is_table(self) -> bool {
        (1..=Self::TABLE_MAX).contains(&self.0)
    }

    /// Whether this is an interface record type (X'3E' or X'3F').
    pub fn is_interface(self) -> bool {
        self == Self::VM_INTERFACE || self == Self::CP_INTERFACE
    }

    /// A short name of the event, as TRAPRED shows it.
    pub fn name(self) -> &'static str {
        match self.0 {
            0x01 => "IRQ",
            0x02 => "API CALL",
            0x03 => "EXCEPTION",
            0x05 => "I/O DONE",
            0x06 => "ALLOCATE",
            0x07 => "FREE",
            0x08 => "SCHEDULER",
            0x09 => "QUEUE DROP",
            0x0A => "DISPATCH",
            0x0B => "START I/O",
            0x12 => "SEM WAIT",
            0x3C => "DATA LOST",
            0x3E => "VM INTERFACE",
            0x3F => "CP INTERFACE",
            t if t <= Self::TABLE_MAX => "VM/SP TYPE",
            _ => "UNKNOWN",
        }
    }
}

impl fmt::Display for TypeNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02X}", self.0)
    }
}

/// A set of typenums (0..=63), as a bit mask: bit n is typenum n.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TypeSet(u64);

impl TypeSet {
    /// No type.
    pub const NONE: TypeSet = TypeSet(0);

    /// Every table type (01..1B) and both interface types.
    pub fn all() -> TypeSet {
        let table = ((1u64 << (TypeNum::TABLE_MAX + 1)) - 1) & !1;
        TypeSet(table | 1 << 0x3E | 1 << 0x3F)
    }

    /// The set of the given typenums; typenums above 63 are ignored.
    pub fn of(types: &[TypeNum]) -> TypeSet {
        types.iter().fold(Self::NONE, |set, &t| set.with(t))
    }

    /// This set and `t`.
    #[must_use]
    pub fn with(self, t: TypeNum) -> TypeSet {
        match 1u64.checked_shl(u32::from(t.0)) {
            Some(bit) if t.0 < 64 => TypeSet(self.0 | bit),
            _ => self,
        }
    }

    /// Whether `t` is in the set.
    #[inline]
    pub fn contains(self, t: TypeNum) -> bool {
        t.0 < 64 && self.0 & (1u64 << t.0) != 0
    }

    /// Whether the set holds no type.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The typenums in the set, in code order.
    pub fn iter(self) -> impl Iterator<Item = TypeNum> {
        (0u8..64)
            .filter(move |&t| self.0 & (1u64 << t) != 0)
            .map(TypeNum)
    }

    /// The bit mask (bit n is typenum n).
    pub fn bits(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_holds_table_and_interface_types_only() {
        let all = TypeSet::all();
        assert!(!all.contains(TypeNum(0)));
        assert!(all.contains(TypeNum(1)) && all.contains(TypeNum(0x1B)));
        assert!(!all.contains(TypeNum(0x1C)) && !all.contains(TypeNum::DATA_LOST));
        assert!(all.contains(TypeNum::VM_INTERFACE) && all.contains(TypeNum::CP_INTERFACE));
        assert_eq!(all.iter().count(), 27 + 2);
        for t in TypeNum::PRODUCED {
            assert!(t.is_table() && all.contains(t), "{t}");
        }
    }

    #[test]
    fn with_ignores_typenums_past_63() {
        assert_eq!(TypeSet::NONE.with(TypeNum(64)), TypeSet::NONE);
        assert!(!TypeSet::NONE.with(TypeNum(200)).contains(TypeNum(200)));
        assert!(TypeSet::of(&[TypeNum(63)]).contains(TypeNum(63)));
    }
}
