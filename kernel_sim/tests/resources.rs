//! DosGetResource, DosQueryResourceSize and DosFreeResource on an LX
//! program with a string table resource in an object of its own.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

const DATA_BYTES: &[u8] = b"\x0d\x00Hello, world\0resource";

fn with_resource(bytes: Vec<u8>) -> Vec<u8> {
    let mut m = loader::parse(&bytes).unwrap();
    // Readable, resource, 32-bit.
    m.add_object(0x2009, DATA_BYTES.len() as u32, DATA_BYTES);
    m.resources.push(loader::Resource {
        type_id: 5,
        name_id: 1,
        object: 3,
        offset: 0,
        size: DATA_BYTES.len() as u32,
    });
    loader::write(&m).unwrap()
}

#[test]
fn resources_are_found_by_type_and_name() {
    let mut c = Code::new();
    let get = |c: &mut Code, hmod: u32, ty: u32, name: u32, out: u32, ordinal: u32| {
        c.push(out)
            .push(name)
            .push(ty)
            .push(hmod)
            .call("DOSCALLS", ordinal, 16);
    };
    get(&mut c, 0, 5, 1, DATA, 352);
    c.expect(0, 1);
    get(&mut c, 0, 5, 1, DATA + 4, 572);
    c.expect(0, 2);
    get(&mut c, 0, 5, 2, DATA + 8, 352);
    c.expect(87, 3);
    get(&mut c, 0, 0x1_0005, 1, DATA + 8, 352);
    c.expect(87, 4);
    get(&mut c, 0x4321, 5, 1, DATA + 8, 352);
    c.expect(6, 5);
    c.push_mem(DATA).call("DOSCALLS", 353, 4).expect(0, 6);
    c.push(DATA).call("DOSCALLS", 353, 4);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), with_resource(c.exit_eax())).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(487), "ERROR_INVALID_ADDRESS");
    let mut mem = [0u8; 8];
    p.read_guest(DATA, &mut mem).unwrap();
    let at = u32::from_le_bytes(mem[..4].try_into().unwrap());
    assert_eq!(
        u32::from_le_bytes(mem[4..].try_into().unwrap()),
        DATA_BYTES.len() as u32
    );
    let mut res = vec![0u8; DATA_BYTES.len()];
    p.read_guest(at, &mut res).unwrap();
    assert_eq!(res, DATA_BYTES);
}
