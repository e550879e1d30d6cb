//! The MAP files: loader's MAP parser reads them, and every public symbol
//! points at the bytes it names (code symbols at instruction starts).

mod common;

use common::{decode_all, is_code};
use loader::map::{self, MapStyle};
use testprogs::Program;

fn all() -> Vec<Program> {
    testprogs::all().expect("every program builds")
}

#[test]
fn maps_parse_as_link386_with_every_public_and_import() {
    for p in all() {
        let m = map::parse(&p.map).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(m.style, MapStyle::Link386, "{}", p.name);
        let start = p.module.start.unwrap();
        assert_eq!(m.entry, Some((start.object, start.offset)), "{}", p.name);
        let mut publics: Vec<(u16, u32, &str)> = p
            .symbols
            .iter()
            .filter(|s| s.public)
            .map(|s| (s.object, s.offset, s.name.as_str()))
            .collect();
        publics.sort();
        let read: Vec<(u16, u32, &str)> = m
            .symbols
            .iter()
            .map(|s| (s.object, s.offset, s.name.as_str()))
            .collect();
        assert_eq!(read, publics, "{}", p.name);
        // Segment list: one line per object with its size.
        assert_eq!(m.segments.len(), p.module.objects.len());
        for (s, o) in m.segments.iter().zip(&p.module.objects) {
            assert_eq!(s.length, o.virtual_size, "{} {}", p.name, s.name);
        }
        // Imports: every imported module appears, and nothing else.
        let mut modules: Vec<&str> = m
            .imports
            .iter()
            .map(|i| i.module.as_deref().unwrap())
            .collect();
        modules.sort();
        modules.dedup();
        let mut expect: Vec<&str> = p.module.imports.iter().map(String::as_str).collect();
        expect.sort();
        assert_eq!(modules, expect, "{}", p.name);
    }
}

#[test]
fn code_symbols_sit_on_instruction_starts() {
    let mut checked = 0;
    for p in all() {
        let m = map::parse(&p.map).unwrap();
        for s in &m.symbols {
            if !is_code(&p.module, s.object) {
                continue;
            }
            let code = decode_all(&p.module, s.object);
            assert!(
                code.iter().any(|(ip, _)| *ip == s.offset),
                "{}: {} at {}:{:#x} is not an instruction start",
                p.name,
                s.name,
                s.object,
                s.offset
            );
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} code symbols");
}

/// A program's builder.
type Build = fn() -> testprogs::Result<Program>;

/// What some symbols must decode to.
#[test]
fn symbols_decode_to_the_expected_instructions() {
    use iced_x86::Mnemonic::*;
    let cases: [(Build, &str, iced_x86::Mnemonic); 14] = [
        (testprogs::hello16, "main", Push),
        (testprogs::hello16, "call_doswrite", Call),
        (testprogs::hello32, "call_doswrite", Call),
        (testprogs::tpdll16, "ADDNUMS", Push),
        (testprogs::tpdll16, "DLLINIT", Push),
        (testprogs::tpdll32, "AddNums", Mov),
        (testprogs::tpdll32, "GetCount", Mov),
        (testprogs::dllcal16, "call_addnums", Call),
        (testprogs::dllcal32, "call_putmsg", Call),
        (testprogs::farcal16, "call_square", Call),
        (testprogs::farcal16, "FARSQUARE", Push),
        (testprogs::fileio16, "call_dosopen", Call),
        (testprogs::fileio16, "compare", Push),
        (testprogs::fileio16, "exit", Mov),
    ];
    for (build, name, mnemonic) in cases {
        let p = build().unwrap();
        let m = map::parse(&p.map).unwrap();
        let s = m
            .lookup(name)
            .unwrap_or_else(|| panic!("{}: {name}", p.name));
        let i = common::instruction_at(&p.module, s.object, s.offset)
            .unwrap_or_else(|| panic!("{}: {name} is no instruction start", p.name));
        assert_eq!(i.mnemonic(), mnemonic, "{}: {name} is {i}", p.name);
    }
}

#[test]
fn data_symbols_point_at_their_data() {
    let p = testprogs::farcal16().unwrap();
    let m = map::parse(&p.map).unwrap();
    let data = p.module.object_bytes(3).unwrap();
    let msg = m.lookup("msg").unwrap();
    assert_eq!(msg.object, 3);
    let at = msg.offset as usize;
    assert_eq!(
        &data[at..at + testprogs::farcall16::MESSAGE.len()],
        testprogs::farcall16::MESSAGE
    );
    let p = testprogs::dllcal32().unwrap();
    let m = map::parse(&p.map).unwrap();
    let g = m.lookup("greeting").unwrap();
    let data = p.module.object_bytes(g.object).unwrap();
    let at = g.offset as usize;
    let n = testprogs::dll32::GREETING.len();
    assert_eq!(&data[at..at + n], testprogs::dll32::GREETING);
    assert_eq!(data[at + n], 0, "NUL-terminated");
}
