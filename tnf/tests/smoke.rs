use tnf::{ArgType, ArgValue, Endian, ProbeDesc, TnfFile, TnfWriter};

#[test]
fn smoke() {
    let probe = ProbeDesc {
        name: "inloop".into(),
        keys: "cookie main loop".into(),
        detail: "sunw%debug in the loop".into(),
        file: "cookie2.c".into(),
        line: 50,
        args: vec![(ArgType::Long, "loop_count".into()), (ArgType::String, "s".into()), (ArgType::Double, "d".into())],
        debug: false,
    };
    let mut w = TnfWriter::new(128 * 1024, Endian::Little).unwrap();
    for i in 0..3 {
        w.event(1, &probe, (42, 1, 1), 1_000 + i * 339_000, &[ArgValue::Int(i), ArgValue::Str(b"hi".to_vec()), ArgValue::Float(1.5)]).unwrap();
    }
    let bytes = w.into_bytes();
    let file = TnfFile::parse(&bytes).unwrap();
    println!("{}", tnf::dump::cooked(&file, false).unwrap());
    let raw = tnf::dump::raw(&file, false).unwrap();
    let n = raw.len();
    println!("{}", &raw[n.saturating_sub(3000)..]);
}
