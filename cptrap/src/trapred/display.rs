//! How TRAPRED shows a record: one logical record on one or more lines.
//!
//! The first line says which record, its type, process, thread and time;
//! the next says what the entry holds. Interface records (X'3E', X'3F')
//! show their code and then their data, 16 bytes a line, in hex and in
//! characters (printable ASCII, others as '.').

use crate::entry::{Entry, FLAG_32BIT, IoOp};
use crate::file::Record;
use crate::reader::FileRecord;
use crate::typenum::TypeNum;

/// The lines that show `r`.
pub fn record_lines(r: &FileRecord) -> Vec<String> {
    let frame = r.record.frame();
    let t = r.record.typenum();
    let mut head = format!("RECORD {}  TYPE {} {}", r.number, t, t.name());
    if !matches!(r.record, Record::DataLost { .. }) {
        head.push_str(&format!(
            "  PID {}  TID {}  TIME {}",
            frame.pid, frame.tid, frame.time
        ));
        if frame.flags & FLAG_32BIT != 0 {
            head.push_str("  32-BIT");
        }
    } else {
        head.push_str(&format!("  TIME {}", frame.time));
    }
    let mut lines = vec![head];
    match &r.record {
        Record::Table(e) => lines.push(format!("  {}", entry_detail(e))),
        Record::DataLost { records, bytes, .. } => {
            lines.push(format!(
                "  *** DATA LOST: {records} RECORDS, {bytes} BYTES ***"
            ));
        }
        Record::Interface { record, .. } => {
            lines.push(format!(
                "  CODE {} (X'{:04X}')  LENGTH {}  DATA {} BYTES",
                record.code,
                record.code,
                record.total_length(),
                record.data().len()
            ));
            lines.extend(hex_lines(record.data()));
        }
    }
    lines
}

/// The data in hex and characters, 16 bytes a line:
/// `  +0000  41424344 45464748 494A4B4C 4D4E4F50  *ABCDEFGHIJKLMNOP*`.
pub fn hex_lines(data: &[u8]) -> Vec<String> {
    data.chunks(16)
        .enumerate()
        .map(|(i, chunk)| {
            let mut hex = String::new();
            for (j, b) in chunk.iter().enumerate() {
                if j > 0 && j % 4 == 0 {
                    hex.push(' ');
                }
                hex.push_str(&format!("{b:02X}"));
            }
            let chars: String = chunk
                .iter()
                .map(|&b| {
                    if (0x20..0x7F).contains(&b) {
                        b as char
                    } else {
                        '.'
                    }
                })
                .collect();
            format!("  +{:04X}  {hex:<35}  *{chars:<16}*", i * 16)
        })
        .collect()
}

fn exception_name(vector: u16) -> &'static str {
    match vector {
        0 => "DIVIDE ERROR",
        1 => "DEBUG",
        3 => "BREAKPOINT",
        4 => "OVERFLOW",
        5 => "BOUND",
        6 => "INVALID OPCODE",
        7 => "NO COPROCESSOR",
        8 => "DOUBLE FAULT",
        10 => "INVALID TSS",
        11 => "SEGMENT NOT PRESENT",
        12 => "STACK FAULT",
        13 => "GENERAL PROTECTION",
        14 => "PAGE FAULT",
        16 => "FPU ERROR",
        17 => "ALIGNMENT CHECK",
        _ => "EXCEPTION",
    }
}

fn io_detail(e: &Entry, start: bool) -> String {
    let [op, w1, w2, w3] = e.words;
    let Some(op) = IoOp::from_code(op) else {
        return format!(
            "OPERATION {op}  AUX {:04X}  {w1:08X} {w2:08X} {w3:08X}",
            e.frame.aux
        );
    };
    let aux = e.frame.aux;
    match (op, start) {
        (IoOp::FileRead | IoOp::FileWrite, true) => {
            format!("{}  HANDLE {aux}  LENGTH {w1}  BUFFER {w2:08X}", op.name())
        }
        (IoOp::FileRead | IoOp::FileWrite, false) => {
            format!("{}  HANDLE {aux}  BYTES {w1}  RC {w2}", op.name())
        }
        (IoOp::PortIn | IoOp::PortOut, true) => {
            format!("{}  PORT {aux:04X}  SIZE {w3}  VALUE {w1:X}", op.name())
        }
        (IoOp::PortIn | IoOp::PortOut, false) => {
            format!("{}  PORT {aux:04X}  VALUE {w1:X}", op.name())
        }
    }
}

/// The second line of a table entry: its type-specific fields named.
pub fn entry_detail(e: &Entry) -> String {
    let [w0, w1, w2, w3] = e.words;
    let aux = e.frame.aux;
    match e.typenum() {
        TypeNum::IRQ => format!("IRQ {aux}  VECTOR {w0:02X}"),
        TypeNum::API => format!("{}.{aux}  RC {w2}  CALLER {w3:08X}", e.module_name()),
        TypeNum::EXCEPTION => format!(
            "VECTOR {aux:02X} {}  EIP {w0:08X}  ERROR {w1:08X}  CR2 {w2:08X}  CS {w3:04X}",
            exception_name(aux)
        ),
        TypeNum::IO_START => io_detail(e, true),
        TypeNum::IO_DONE => io_detail(e, false),
        TypeNum::ALLOC => format!("ADDRESS {w0:08X}  SIZE {w1}  FLAGS {w2:08X}  RC {w3}"),
        TypeNum::FREE => format!("ADDRESS {w0:08X}  SIZE {w1}  RC {w3}"),
        TypeNum::SCHEDULE => format!(
            "REASON {}",
            match w0 {
                0 => "QUANTUM END",
                1 => "BLOCKED",
                2 => "THREAD EXIT",
                3 => "YIELD",
                _ => "OTHER",
            }
        ),
        TypeNum::QUEUE_DROP => format!("WAITS ON {w0:08X}"),
        TypeNum::DISPATCH => format!("FROM TID {w0}"),
        TypeNum::SEM_WAIT => format!("SEMAPHORE {w0:08X}  TIMEOUT {w1}  RC {w2}"),
        _ => format!("AUX {aux:04X}  WORDS {w0:08X} {w1:08X} {w2:08X} {w3:08X}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iface::{Interface, InterfaceRecord};

    #[test]
    fn interface_record_shows_code_hex_and_characters() {
        let data: Vec<u8> = b"ABCDEFGHIJKLMNOPqr\x00\xFF".to_vec();
        let r = FileRecord {
            number: 4,
            offset: 16,
            record: Record::interface(
                InterfaceRecord::new(Interface::VirtualMachine, 3, &data),
                1,
                2,
                500,
            ),
        };
        assert_eq!(
            record_lines(&r),
            [
                "RECORD 4  TYPE 3E VM INTERFACE  PID 1  TID 2  TIME 500",
                "  CODE 3 (X'0003')  LENGTH 28  DATA 20 BYTES",
                "  +0000  41424344 45464748 494A4B4C 4D4E4F50  *ABCDEFGHIJKLMNOP*",
                "  +0010  717200FF                             *qr..            *",
            ]
        );
    }

    #[test]
    fn table_entries_name_their_fields() {
        let mut e = Entry::api_call("DOSCALLS", 282, 0, 0x0001_0040);
        e.frame.flags = FLAG_32BIT;
        let r = FileRecord {
            number: 1,
            offset: 16,
            record: Record::Table(e),
        };
        assert_eq!(
            record_lines(&r),
            [
                "RECORD 1  TYPE 02 API CALL  PID 0  TID 0  TIME 0  32-BIT",
                "  DOSCALLS.282  RC 0  CALLER 00010040",
            ]
        );
        let mut io = Entry::new(TypeNum::IO_START);
        io.frame.aux = 0x80;
        io.words = [IoOp::PortOut as u32, 0x41, 0, 1];
        assert_eq!(entry_detail(&io), "PORT OUT  PORT 0080  SIZE 1  VALUE 41");
    }
}
