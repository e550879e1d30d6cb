//! Arbitrary and mutated inputs never panic: the real samples with bytes
//! flipped, fields overwritten with extreme values and tails cut off, plus
//! plain random bytes, go through every reader (and through the writers
//! when they read).

use loader::digest::image_sha256;
use proptest::prelude::*;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples");
const MODULES: [&str; 6] = [
    "lx/hello.exe",
    "lx/testbeep.exe",
    "lx/testpm.exe",
    "ne/test-asm16.exe",
    "ne/hello16.exe",
    "ne/testargv16.exe",
];

/// Feeds one input to every entry point.
fn exercise(data: &[u8]) {
    let _ = loader::detect(data);
    let _ = loader::lx::read(data);
    let _ = loader::ne::read(data);
    if let Ok(m) = loader::parse(data) {
        for (i, o) in m.objects.iter().enumerate() {
            if o.virtual_size <= 1 << 20 {
                let _ = image_sha256(o, m.page_size());
                let _ = m.object_bytes(i as u16 + 1);
            }
            let _ = m.byte_at(loader::Address {
                object: i as u16 + 1,
                offset: 7,
            });
        }
        let _ = m.fixup_kinds();
        let _ = m.imports_by_ordinal();
        if let Ok(bytes) = loader::write(&m) {
            // What the writer produced must read back.
            loader::parse(&bytes).expect("written module reads back");
        }
    }
    let _ = loader::map::parse_bytes(data);
    let _ = loader::exepack1::decode(data, 0, 4096);
    let _ = loader::exepack2::decode(data, 0, 4096);
}

/// xorshift64*, so the mutations are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn mutated_samples_never_panic() {
    let mut rng = Rng(0x0517_2026);
    let mut read_ok = 0;
    for module in MODULES {
        let original = std::fs::read(format!("{SAMPLES}/{module}")).unwrap();
        // The header region and the tables after it are where the counts and
        // offsets live; hit them hardest.
        for round in 0..600 {
            let mut data = original.clone();
            let edits = 1 + rng.below(4);
            for _ in 0..edits {
                let hot = data.len().min(0x300);
                let at = if rng.below(4) == 0 {
                    rng.below(data.len())
                } else {
                    rng.below(hot)
                };
                match rng.below(5) {
                    0 => data[at] ^= 1 << rng.below(8),
                    1 => data[at] = rng.next() as u8,
                    2 => {
                        let v = [0u8, 0xFF, 0x7F, 0x80][rng.below(4)];
                        for b in data.iter_mut().skip(at).take(4) {
                            *b = v;
                        }
                    }
                    3 => data.truncate(at.max(1)),
                    _ => {
                        let v = (rng.next() as u32).to_le_bytes();
                        for (b, v) in data.iter_mut().skip(at & !3).zip(v) {
                            *b = v;
                        }
                    }
                }
                if data.is_empty() {
                    break;
                }
            }
            exercise(&data);
            if round % 2 == 0 && loader::parse(&data).is_ok() {
                read_ok += 1;
            }
        }
    }
    // Many single-byte edits land in data and still read: the loop did test
    // the success paths too.
    assert!(read_ok > 100, "{read_ok}");
}

#[test]
fn every_truncation_of_every_sample_is_an_error_not_a_panic() {
    for module in MODULES {
        let original = std::fs::read(format!("{SAMPLES}/{module}")).unwrap();
        // Every prefix through the headers and tables, then every 7th.
        for len in (0..original.len()).filter(|&n| n < 0x400 || n % 7 == 0) {
            let cut = &original[..len];
            // Cut inside the headers and tables, nothing reads. (test-asm16
            // has unused bytes at its end, so longer cuts may read.)
            assert!(
                loader::parse(cut).is_err() || len > 0x100,
                "{module} cut at {len} read"
            );
            let _ = loader::lx::read(cut);
            let _ = loader::ne::read(cut);
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        exercise(&data);
    }

    #[test]
    fn arbitrary_bytes_behind_a_valid_stub(kind in 0..2usize, tail in proptest::collection::vec(any::<u8>(), 0..1024)) {
        let mut data = loader::stub::default_stub();
        data.extend_from_slice(if kind == 0 { b"LX" } else { b"NE" });
        data.extend_from_slice(&tail);
        exercise(&data);
    }

    #[test]
    fn arbitrary_map_text_never_panics(text in "(( ?[0-9A-Fa-f]{1,6}:[0-9A-Fa-f]{1,10}( +(Imp|Abs))? +[A-Za-z_]{0,8}|Publics by (Name|Value)|Program entry point at [0-9:A-F]{0,12}|[ -~]{0,30})(\\n|\\r\\n)){0,30}") {
        let _ = loader::map::parse(&text);
    }
}
