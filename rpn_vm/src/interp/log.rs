//! The record being built during a hit, and the logging rules shared by
//! the interpreter and the native-code tier's callbacks: whole items up to
//! the log limit, memory and string items with their 3-byte prefix, and
//! fault items.

use super::{Stack, Stop, TOKEN_MEMORY, TOKEN_STRING};
use crate::machine::{MemFault, TracedMachine};
use crate::opcode::Op;

/// The most data a record can hold: the length field of an item is a word.
pub(crate) const LOG_CAPACITY: usize = 0xFFFF;

/// The record being built: a fixed buffer, so that logging never grows a
/// vector in the middle of a hit. Writers check the log limit first.
///
/// The interpreter owns its buffer (`B` = `Box<[u8]>`); the native-code
/// tier's callbacks log through a view of the same bytes (`B` =
/// `&mut [u8]`), with the same methods.
#[derive(Debug, Clone)]
pub(crate) struct LogBuffer<B = Box<[u8]>> {
    pub(crate) bytes: B,
    pub(crate) len: usize,
}

impl LogBuffer {
    pub(crate) fn new() -> LogBuffer {
        LogBuffer {
            bytes: vec![0; LOG_CAPACITY].into_boxed_slice(),
            len: 0,
        }
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> LogBuffer<B> {
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    #[inline(always)]
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.bytes.as_ref()[..self.len]
    }

    /// Appends fixed bytes; the caller has checked the log limit.
    #[inline(always)]
    pub(crate) fn put<const N: usize>(&mut self, bytes: [u8; N]) {
        self.bytes.as_mut()[self.len..self.len + N].copy_from_slice(&bytes);
        self.len += N;
    }

    /// Appends the first `N` bytes of `bytes`; the caller has checked the
    /// log limit.
    #[inline(always)]
    pub(crate) fn put_prefix<const N: usize>(&mut self, bytes: [u8; 4]) {
        self.bytes.as_mut()[self.len..self.len + N].copy_from_slice(&bytes[..N]);
        self.len += N;
    }

    /// Appends `n` bytes for the caller to fill.
    #[inline(always)]
    pub(crate) fn extend(&mut self, n: usize) -> &mut [u8] {
        let start = self.len;
        self.len += n;
        &mut self.bytes.as_mut()[start..start + n]
    }

    /// Overwrites bytes already logged.
    pub(crate) fn patch<const N: usize>(&mut self, at: usize, bytes: [u8; N]) {
        self.bytes.as_mut()[at..at + N].copy_from_slice(&bytes);
    }

    /// `Log DN,n` (`W` = 4) or `Log WN,n` (`W` = 2): the top `n` entries,
    /// popped, as dwords or low words, as far as the log limit allows.
    #[inline(always)]
    pub(crate) fn log_items<const W: usize>(
        &mut self,
        st: &mut Stack,
        n: u32,
        logmax: usize,
        cycles: &mut u64,
    ) -> Result<(), Stop> {
        let op = if W == 4 { Op::LogDn } else { Op::LogWn };
        let fit = ((logmax.saturating_sub(self.len())) / W).min(n as usize);
        for _ in 0..fit {
            let item = st.pop().to_le_bytes();
            self.put_prefix::<W>(item);
        }
        *cycles += u64::from(op.info().cycles_per_unit) * fit as u64;
        if fit < n as usize {
            st.pop();
            return Err(Stop::Incomplete);
        }
        Ok(())
    }

    /// Logs a fault item if it fits; the hit then ends incomplete.
    pub(crate) fn log_fault(&mut self, fault: MemFault, logmax: usize) -> Stop {
        if self.len() + 7 <= logmax {
            let [a, b, c, d] = fault.address.to_le_bytes();
            self.put([fault.kind.token(), 4, 0, a, b, c, d]);
        }
        Stop::Incomplete
    }

    /// Logs a memory or string item of `length` bytes at `at`. Kept out of
    /// line, with the other memory reads, so that the interpreter loop
    /// stays small.
    #[inline(never)]
    pub(crate) fn log_item<M: TracedMachine + ?Sized>(
        &mut self,
        machine: &mut M,
        at: ItemAt,
        length: u32,
        string: bool,
        logmax: usize,
        cycles: &mut u64,
    ) -> Result<(), Stop> {
        let start = self.len();
        if start + 3 > logmax {
            // Not even the prefix fits.
            return Err(Stop::Incomplete);
        }
        let room = logmax - (start + 3);
        let per_unit = u64::from(if string {
            Op::LogArs.info().cycles_per_unit
        } else {
            Op::LogMrs.info().cycles_per_unit
        });
        if !string {
            if length as usize > room {
                return Err(Stop::Incomplete);
            }
            let [lo, hi] = (length as u16).to_le_bytes();
            self.put([TOKEN_MEMORY, lo, hi]);
            if let Err(fault) = at.read(machine, 0, self.extend(length as usize)) {
                self.truncate(start);
                return Err(self.log_fault(fault, logmax));
            }
            *cycles += per_unit * u64::from(length);
            return Ok(());
        }
        self.put([TOKEN_STRING, 0, 0]);
        let mut logged: u32 = 0;
        while logged < length {
            let mut byte = [0u8];
            if let Err(fault) = at.read(machine, logged, &mut byte) {
                self.truncate(start);
                return Err(self.log_fault(fault, logmax));
            }
            *cycles += per_unit;
            if byte[0] == 0 {
                break;
            }
            if logged as usize >= room {
                self.truncate(start);
                return Err(Stop::Incomplete);
            }
            self.put(byte);
            logged += 1;
        }
        self.patch(start + 1, (logged as u16).to_le_bytes());
        Ok(())
    }
}

/// Where a memory or string item is read from (`Log MRS/ARS` or
/// `Log MRF/ARF`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum ItemAt {
    /// `selector:offset`.
    Segmented {
        /// The selector.
        selector: u16,
        /// The offset of the first byte.
        offset: u32,
    },
    /// A flat address.
    Flat(u32),
}

impl ItemAt {
    /// Reads `buf.len()` bytes starting `skip` bytes into the item.
    fn read<M: TracedMachine + ?Sized>(
        self,
        machine: &mut M,
        skip: u32,
        buf: &mut [u8],
    ) -> Result<(), MemFault> {
        match self {
            ItemAt::Segmented { selector, offset } => {
                machine.read_segmented(selector, offset.wrapping_add(skip), buf)
            }
            ItemAt::Flat(address) => machine.read_flat(address.wrapping_add(skip), buf),
        }
    }
}
