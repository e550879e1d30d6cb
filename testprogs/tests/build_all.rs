//! `build_all` writes every program's four files, and they read back.

use std::collections::BTreeSet;

#[test]
fn build_all_writes_module_map_tsf_and_rpn_for_each_program() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("testprogs");
    let paths = testprogs::build_all(&out).unwrap();
    let programs = testprogs::all().unwrap();
    assert_eq!(paths.len(), programs.len() * 4);
    let names: BTreeSet<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for p in &programs {
        for name in [
            p.file_name.to_string(),
            p.map_file_name(),
            p.tsf_file_name(),
            p.rpn_file_name(),
        ] {
            assert!(names.contains(&name), "{name} missing");
        }
        let bytes = std::fs::read(out.join(p.file_name)).unwrap();
        assert_eq!(bytes, p.bytes);
        assert_eq!(loader::parse(&bytes).unwrap(), p.module);
        let map = std::fs::read(out.join(p.map_file_name())).unwrap();
        assert_eq!(
            loader::map::parse_bytes(&map).unwrap(),
            loader::map::parse(&p.map).unwrap()
        );
    }
    assert_eq!(names.len(), paths.len());
}

#[test]
fn build_all_reports_a_directory_it_cannot_create() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let err = testprogs::build_all(&file.join("sub")).unwrap_err();
    assert!(matches!(err, testprogs::BuildError::Io { .. }), "{err}");
    assert!(err.to_string().contains("plain-file"));
}
