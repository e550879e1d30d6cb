//! `tdf verify`: any bytes as a TDF, verified against TPDLL16 with and
//! without its MAP, never panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

struct Fixture {
    image: tdf::target::MemoryImage,
    map: tdf::target::SymbolTable,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let p = testprogs::tpdll16().unwrap();
        Fixture {
            image: tdf::module::image_from_bytes(&p.bytes).unwrap(),
            map: tdf::module::symbols_from_map(p.map.as_bytes()).unwrap(),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = tdf::Tdf::parse(data) {
        let f = fixture();
        let _ = tdf::verify::verify(&t, &f.image, None);
        let _ = tdf::verify::verify(&t, &f.image, Some(&f.map));
    }
});
