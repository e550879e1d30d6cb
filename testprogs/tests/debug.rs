//! DBG16 and DBG32: they run (exit 0: add2(2, 3) = 5), and carry their
//! CodeView information where LINK/WLINK (NE, appended) and the LX debug
//! section put it, without changing the code the loader sees.

mod minios;

use minios::{Setup, run};

#[test]
fn the_debug_programs_run_and_exit_0() {
    for p in testprogs::debug_programs().unwrap() {
        let out = run(&p, &[], Setup::default());
        assert_eq!(out.exit, Some(0), "{}", p.name);
    }
}

#[test]
fn the_codeview_trailer_points_back_to_the_signature() {
    for p in [testprogs::dbg16().unwrap(), testprogs::dbg32().unwrap()] {
        let n = p.bytes.len();
        assert_eq!(&p.bytes[n - 8..n - 4], b"NB09", "{}", p.name);
        let back = u32::from_le_bytes(p.bytes[n - 4..].try_into().unwrap()) as usize;
        assert_eq!(&p.bytes[n - back..n - back + 4], b"NB09", "{}", p.name);
        assert_eq!(loader::parse(&p.bytes).unwrap(), p.module, "{}", p.name);
        let (file, text) = p.source.unwrap();
        assert!(file.ends_with(".c"));
        assert!(text.contains("(2, 3);"), "{}", p.name);
    }
    let lx = testprogs::dbg32().unwrap();
    let debug = &lx.module.lx.as_ref().unwrap().debug_info;
    assert!(lx.bytes.ends_with(debug));
}

#[test]
fn dbgh32_carries_hll_in_its_debug_section() {
    let p = testprogs::dbgh32().unwrap();
    let lx = loader::parse(&p.bytes).unwrap();
    assert_eq!(lx, p.module);
    let debug = &lx.lx.as_ref().unwrap().debug_info;
    assert!(debug.starts_with(b"NB04"));
    assert!(p.bytes.ends_with(debug));
    // The same code as DBG32.
    let cv = testprogs::dbg32().unwrap();
    assert_eq!(p.module.objects[0].pages, cv.module.objects[0].pages);
}
