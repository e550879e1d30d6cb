//! The sample programs of `testprogs` (NE and LX programs and DLLs, each
//! with a LINK386-style MAP, a TSF and a DTRACE trace program file that
//! describe the same tracepoints): TRCUST compiles every TSF without a
//! message, the tracepoints land where testprogs put them, BUILDTDF builds
//! the same records (RPN bytes included) from the trace program file, and
//! `verify` finds no problem in either TDF.

use std::fs;

use tdf::Tdf;
use tdf::buildtdf::{Overrides, build};
use tdf::trcust::{PathStyle, run};

#[test]
fn every_sample_program_compiles_and_verifies() {
    let programs = testprogs::all().unwrap();
    assert!(!programs.is_empty());
    for p in &programs {
        let dir = tempfile::tempdir().unwrap();
        p.write_to(dir.path()).unwrap();
        let args = vec![p.tsf_file_name(), format!("/M={}", p.map_file_name())];
        let out = run(&args, dir.path(), PathStyle::Dos);
        let text = out.text();
        assert_eq!(out.exit_code, 0, "{}:\n{text}", p.name);
        assert!(!text.contains("TRCUST("), "{}:\n{text}", p.name);

        let tdf_bytes = fs::read(dir.path().join(format!("{}.TDF", p.name))).unwrap();
        let from_tsf = Tdf::parse(&tdf_bytes).unwrap();
        assert_eq!(from_tsf.major, p.major);
        let mut want: Vec<(u32, u32, u8)> = p
            .tracepoints
            .iter()
            .map(|t| (u32::from(t.object), t.offset, t.opcode))
            .collect();
        want.sort();
        let got: Vec<(u32, u32, u8)> = from_tsf
            .records
            .iter()
            .map(|r| (r.object, r.offset, r.opcode))
            .collect();
        assert_eq!(got, want, "{}", p.name);

        let from_rpn = build(&p.rpn_file_name(), &p.rpn, &Overrides::default()).unwrap();
        let key = |t: &Tdf| -> Vec<(u32, u32, u16, u8, Vec<u8>)> {
            t.records
                .iter()
                .map(|r| (r.object, r.offset, r.minor, r.opcode, r.rpn.clone()))
                .collect()
        };
        assert_eq!(key(&from_rpn), key(&from_tsf), "{}", p.name);

        let image = tdf::module::image_from_bytes(&p.bytes).unwrap();
        let map = tdf::module::symbols_from_map(p.map.as_bytes()).unwrap();
        for t in [&from_tsf, &from_rpn] {
            let problems = tdf::verify::verify(t, &image, Some(&map));
            assert!(problems.is_empty(), "{}: {problems:#?}", p.name);
        }
    }
}
