//! Interface records: data a program (X'3E') or a zap in the system (X'3F')
//! passes to the CPTRAP file.
//!
//! Both interfaces take the seed's 8-byte parameter list, here in x86 byte
//! order (little endian), with no alignment requirement:
//!
//! ```text
//! 0x00 u16 LLLL      length of the data
//! 0x02 u16 CODE      individualizing code
//! 0x04 u32 DATA ADDR address of the data (a flat guest address)
//! ```
//!
//! The system adds the seed's 8-byte header in front of the data, also
//! little endian:
//!
//! ```text
//! 0x00 u8  X'3E' (virtual machine interface) or X'3F' (CP interface)
//! 0x01 u8  reserved (0)
//! 0x02 u16 individualizing code
//! 0x04 u16 total length: data length + 8
//! 0x06 u16 reserved (0)
//! 0x08     data
//! ```
//!
//! Data longer than [`MAX_DATA`] (264) bytes is cut to 264 with no
//! indication, as the seed says.

use crate::typenum::TypeNum;

/// The most data an interface record carries.
pub const MAX_DATA: usize = 264;

/// Size of the interface record header.
pub const HEADER_SIZE: usize = 8;

/// Size of the parameter list.
pub const PARAM_LIST_SIZE: usize = 8;

/// Which interface made a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interface {
    /// The virtual machine interface: a program calls it (X'3E').
    VirtualMachine,
    /// The CP interface: os2trace inserted the call (X'3F').
    Cp,
}

impl Interface {
    /// The record type of this interface.
    pub fn typenum(self) -> TypeNum {
        match self {
            Interface::VirtualMachine => TypeNum::VM_INTERFACE,
            Interface::Cp => TypeNum::CP_INTERFACE,
        }
    }

    /// The interface whose record type is `t`, if any.
    pub fn from_typenum(t: TypeNum) -> Option<Interface> {
        match t {
            TypeNum::VM_INTERFACE => Some(Interface::VirtualMachine),
            TypeNum::CP_INTERFACE => Some(Interface::Cp),
            _ => None,
        }
    }
}

/// The 8-byte parameter list a caller points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamList {
    /// LLLL: length of the data.
    pub length: u16,
    /// CODE: the individualizing code.
    pub code: u16,
    /// DATA ADDR: where the data is.
    pub data_address: u32,
}

impl ParamList {
    /// The parameter list in its 8 bytes.
    pub fn from_bytes(b: [u8; PARAM_LIST_SIZE]) -> ParamList {
        ParamList {
            length: u16::from_le_bytes([b[0], b[1]]),
            code: u16::from_le_bytes([b[2], b[3]]),
            data_address: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    /// The 8 bytes of the parameter list.
    pub fn to_bytes(&self) -> [u8; PARAM_LIST_SIZE] {
        let mut b = [0u8; PARAM_LIST_SIZE];
        b[0..2].copy_from_slice(&self.length.to_le_bytes());
        b[2..4].copy_from_slice(&self.code.to_le_bytes());
        b[4..8].copy_from_slice(&self.data_address.to_le_bytes());
        b
    }

    /// How many bytes of data the record takes: LLLL, at most [`MAX_DATA`].
    pub fn taken_length(&self) -> usize {
        usize::from(self.length).min(MAX_DATA)
    }
}

/// An interface record: the header fields and at most 264 bytes of data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterfaceRecord {
    /// Which interface made it.
    pub interface: Interface,
    /// The individualizing code.
    pub code: u16,
    data: Vec<u8>,
}

impl InterfaceRecord {
    /// A record with `data` cut to [`MAX_DATA`] bytes, silently.
    pub fn new(interface: Interface, code: u16, data: &[u8]) -> InterfaceRecord {
        InterfaceRecord {
            interface,
            code,
            data: data[..data.len().min(MAX_DATA)].to_vec(),
        }
    }

    /// The data (at most 264 bytes).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Total length as the header gives it: data length + 8.
    pub fn total_length(&self) -> u16 {
        // At most 272: fits.
        (self.data.len() + HEADER_SIZE) as u16
    }

    /// The 8-byte header.
    pub fn header(&self) -> [u8; HEADER_SIZE] {
        let mut h = [0u8; HEADER_SIZE];
        h[0] = self.interface.typenum().0;
        h[2..4].copy_from_slice(&self.code.to_le_bytes());
        h[4..6].copy_from_slice(&self.total_length().to_le_bytes());
        h
    }

    /// Header then data.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = self.header().to_vec();
        b.extend_from_slice(&self.data);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn header_is_the_seeds() {
        let r = InterfaceRecord::new(Interface::Cp, 3, b"ABCD");
        assert_eq!(r.header(), [0x3F, 0, 3, 0, 12, 0, 0, 0]);
        let v = InterfaceRecord::new(Interface::VirtualMachine, 0x0102, &[]);
        assert_eq!(v.header(), [0x3E, 0, 2, 1, 8, 0, 0, 0]);
    }

    #[test]
    fn param_list_round_trips() {
        let p = ParamList {
            length: 300,
            code: 7,
            data_address: 0x0002_0010,
        };
        assert_eq!(ParamList::from_bytes(p.to_bytes()), p);
        assert_eq!(p.taken_length(), 264);
    }

    proptest! {
        #[test]
        fn data_is_cut_to_264_silently(len in 0usize..600, code: u16) {
            let data: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let r = InterfaceRecord::new(Interface::VirtualMachine, code, &data);
            let kept = len.min(MAX_DATA);
            prop_assert_eq!(r.data(), &data[..kept]);
            prop_assert_eq!(usize::from(r.total_length()), kept + 8);
            prop_assert_eq!(r.to_bytes().len(), kept + 8);
        }
    }
}
