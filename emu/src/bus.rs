//! I/O port bus: IN/OUT/INS/OUTS go through a host-provided [`PortBus`].

/// The I/O address space as seen by the CPU. `size` is 1, 2 or 4 bytes.
pub trait PortBus {
    /// IN from `port`; the low `size` bytes of the result are used.
    fn read(&mut self, port: u16, size: u8) -> u32;
    /// OUT `value` (low `size` bytes) to `port`.
    fn write(&mut self, port: u16, size: u8, value: u32);
}

/// A bus with nothing attached: reads float high (all ones), writes vanish.
#[derive(Clone, Copy, Debug, Default)]
pub struct NullBus;

impl PortBus for NullBus {
    fn read(&mut self, _port: u16, _size: u8) -> u32 {
        u32::MAX
    }
    fn write(&mut self, _port: u16, _size: u8, _value: u32) {}
}

/// A bus that records every OUT and answers reads with all ones; useful for
/// POST-code capture and tests.
#[derive(Clone, Debug, Default)]
pub struct RecordingBus {
    /// Every OUT as (port, size, value), in order.
    pub writes: Vec<(u16, u8, u32)>,
}

impl PortBus for RecordingBus {
    fn read(&mut self, _port: u16, _size: u8) -> u32 {
        u32::MAX
    }
    fn write(&mut self, port: u16, size: u8, value: u32) {
        self.writes.push((port, size, value));
    }
}
