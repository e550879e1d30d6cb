//! Each module round-trips through the loader, and its header, entries,
//! imports and fixups are the ones built.

mod common;

use common::{decode_all, instruction_at, is_code};
use iced_x86::{Code, Decoder, DecoderOptions, Mnemonic};
use loader::{Address, EntryPoint, Format, Module, ModuleType, SourceKind, Target, parse, write};
use testprogs::Program;

fn all() -> Vec<Program> {
    testprogs::all().expect("every program builds")
}

fn addr(p: &Program, name: &str) -> Address {
    let s = p
        .symbol(name)
        .unwrap_or_else(|| panic!("{}: no {name}", p.name));
    Address {
        object: s.object,
        offset: s.offset,
    }
}

#[test]
fn every_module_round_trips_through_the_loader() {
    for p in all() {
        let back = parse(&p.bytes).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(back, p.module, "{}", p.name);
        assert_eq!(
            write(&back).unwrap(),
            p.bytes,
            "{}: rewrite differs",
            p.name
        );
        assert_eq!(loader::detect(&p.bytes).unwrap().0, p.module.format);
    }
}

#[test]
fn the_builds_are_deterministic() {
    let a = all();
    let b = all();
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.bytes, y.bytes, "{}", x.name);
        assert_eq!((&x.map, &x.tsf, &x.rpn), (&y.map, &y.tsf, &y.rpn));
    }
}

#[test]
fn names_formats_and_types() {
    let expect = [
        ("HELLO16", "HELLO16.EXE", Format::Ne, ModuleType::Program),
        ("HELLO32", "HELLO32.EXE", Format::Lx, ModuleType::Program),
        ("TPDLL16", "TPDLL16.DLL", Format::Ne, ModuleType::Library),
        ("DLLCAL16", "DLLCAL16.EXE", Format::Ne, ModuleType::Program),
        ("TPDLL32", "TPDLL32.DLL", Format::Lx, ModuleType::Library),
        ("DLLCAL32", "DLLCAL32.EXE", Format::Lx, ModuleType::Program),
        ("FARCAL16", "FARCAL16.EXE", Format::Ne, ModuleType::Program),
        ("FILEIO16", "FILEIO16.EXE", Format::Ne, ModuleType::Program),
        ("FILEIO32", "FILEIO32.EXE", Format::Lx, ModuleType::Program),
        ("MSGVIO16", "MSGVIO16.EXE", Format::Ne, ModuleType::Program),
        ("MSG32", "MSG32.EXE", Format::Lx, ModuleType::Program),
        ("ARGS16", "ARGS16.EXE", Format::Ne, ModuleType::Program),
        ("ARGS32", "ARGS32.EXE", Format::Lx, ModuleType::Program),
        ("LOOP16", "LOOP16.EXE", Format::Ne, ModuleType::Program),
        ("LOOP32", "LOOP32.EXE", Format::Lx, ModuleType::Program),
    ];
    let progs = all();
    assert_eq!(progs.len(), expect.len());
    for (p, (name, file, format, kind)) in progs.iter().zip(expect) {
        assert_eq!((p.name, p.file_name), (name, file));
        let m = parse(&p.bytes).unwrap();
        assert_eq!(m.name, name);
        assert_eq!(m.format, format, "{name}");
        assert_eq!(m.module_type(), kind, "{name}");
        assert!(m.description.as_deref().unwrap().starts_with(file));
    }
}

/// The 16-bit start state: CS:IP at main, SS = DS = DGROUP, SP at the top
/// of DGROUP plus the stack size.
fn check_ne_program(p: &Program, dgroup: u16) {
    let m = parse(&p.bytes).unwrap();
    assert_eq!(m.start, Some(addr(p, "main")), "{}", p.name);
    assert_eq!(m.auto_data, Some(dgroup), "{}", p.name);
    assert_eq!(m.stack_size, 0x1000, "{}", p.name);
    let size = m.object(dgroup).unwrap().virtual_size;
    assert_eq!(
        m.stack,
        Some(Address {
            object: dgroup,
            offset: size + 0x1000
        }),
        "{}",
        p.name
    );
    assert!(size + 0x1000 <= 0xFFFF);
    assert_eq!(m.flags, 0x0202);
    assert!(m.entries.is_empty());
    for (i, o) in m.objects.iter().enumerate() {
        let data = i as u16 + 1 == dgroup;
        assert_eq!(o.flags, if data { 0x0C01 } else { 0x0C00 }, "{}", p.name);
    }
}

/// The 32-bit start state: EIP at main, ESP at the top of object 3.
fn check_lx_program(p: &Program) {
    let m = parse(&p.bytes).unwrap();
    assert_eq!(m.start, Some(addr(p, "main")));
    assert_eq!(m.objects.len(), 3);
    assert_eq!(
        m.stack,
        Some(Address {
            object: 3,
            offset: 0x4000
        })
    );
    assert_eq!(m.stack_size, 0x4000);
    let flags: Vec<u32> = m.objects.iter().map(|o| o.flags).collect();
    assert_eq!(flags, [0x2005, 0x2003, 0x2003]);
    let bases: Vec<u32> = m.objects.iter().map(|o| o.base).collect();
    assert_eq!(bases, [0x10000, 0x20000, 0x30000]);
    assert!(m.objects[2].pages.is_empty(), "the stack has no pages");
}

fn kinds(m: &Module) -> Vec<(String, usize)> {
    m.fixup_kinds().into_iter().collect()
}

fn k(s: &str, n: usize) -> (String, usize) {
    (s.to_string(), n)
}

#[test]
fn hello16_layout_imports_and_fixups() {
    let p = testprogs::hello16().unwrap();
    check_ne_program(&p, 2);
    let m = &p.module;
    assert_eq!(m.imports, ["DOSCALLS"]);
    assert_eq!(
        m.imports_by_ordinal(),
        [("DOSCALLS".to_string(), 5), ("DOSCALLS".to_string(), 138)]
    );
    assert_eq!(kinds(m), [k("ptr16:16/import_ordinal", 2)]);
    // The DosWrite call site is the fixup site + 1 byte of 9A.
    let call = addr(&p, "call_doswrite");
    let f = &m.fixups[0];
    assert_eq!((f.object, f.offset), (1, call.offset + 1));
    assert_eq!(
        f.target,
        Target::ImportOrdinal {
            module: 1,
            ordinal: 138
        }
    );
    // The message is in DGROUP where the code pushes it from.
    let data = m.object_bytes(2).unwrap();
    let msg = addr(&p, "msg").offset as usize;
    assert_eq!(
        &data[msg..msg + testprogs::hello16::MESSAGE.len()],
        testprogs::hello16::MESSAGE
    );
    let first = decode_all(m, 1);
    assert_eq!(first[0].1.code(), Code::Pushw_imm8);
    assert_eq!(first[0].1.immediate16(), 1, "handle 1");
}

#[test]
fn hello32_layout_imports_and_fixups() {
    let p = testprogs::hello32().unwrap();
    check_lx_program(&p);
    let m = &p.module;
    assert_eq!(m.imports, ["DOSCALLS"]);
    assert_eq!(
        m.imports_by_ordinal(),
        [("DOSCALLS".to_string(), 234), ("DOSCALLS".to_string(), 282)]
    );
    assert_eq!(
        kinds(m),
        [k("off32/internal", 3), k("rel32/import_ordinal", 2)]
    );
    // Off32 sites hold the target's address at the preferred base.
    for f in &m.fixups {
        if let Target::Internal { object, offset } = f.target {
            let image = m.object_bytes(f.object).unwrap();
            let at = f.offset as usize;
            let stored = u32::from_le_bytes(image[at..at + 4].try_into().unwrap());
            assert_eq!(stored, m.object(object).unwrap().base + offset);
        }
    }
    let msg = addr(&p, "msg");
    assert!(m.fixups.iter().any(|f| f.target
        == Target::Internal {
            object: 2,
            offset: msg.offset
        }));
}

/// Each import of `exe` from `dll` names an export that exists, and the
/// exports lead to the labels of the same name.
fn check_dll_pair(dll: &Program, exe: &Program, dll_module: &str, exports: [&str; 3]) {
    let d = parse(&dll.bytes).unwrap();
    assert_eq!(d.module_type(), ModuleType::Library);
    assert_eq!(d.entries.len(), 3);
    for (i, name) in exports.iter().enumerate() {
        let ordinal = i as u16 + 1;
        let e = d.entry(ordinal).unwrap();
        assert!(e.exported());
        assert_eq!(e.address(), Some(addr(dll, name)), "{name}");
        assert_eq!(d.export_name(ordinal), Some(*name));
        assert_eq!(d.export(name).unwrap().ordinal, ordinal);
    }
    let x = parse(&exe.bytes).unwrap();
    let number = x.imports.iter().position(|n| n == dll_module).unwrap() as u16 + 1;
    let mut by_ordinal = 0;
    let mut by_name = Vec::new();
    for f in &x.fixups {
        match &f.target {
            Target::ImportOrdinal { module, ordinal } if *module == number => {
                assert_eq!(*ordinal, 1);
                assert!(d.entry(*ordinal as u16).is_some());
                by_ordinal += 1;
            }
            Target::ImportName { module, name } if *module == number => {
                assert!(d.export(name).is_some(), "{name} is exported");
                by_name.push(name.clone());
            }
            _ => {}
        }
    }
    assert_eq!(by_ordinal, 1);
    assert_eq!(by_name, [exports[1], exports[2]]);
}

#[test]
fn tpdll16_exports_init_and_dllcal16_imports() {
    let dll = testprogs::tpdll16().unwrap();
    let exe = testprogs::dllcal16().unwrap();
    check_dll_pair(&dll, &exe, "TPDLL16", ["ADDNUMS", "PUTMSG", "GETCOUNT"]);
    check_ne_program(&exe, 2);
    let d = &dll.module;
    assert_eq!(d.flags, 0x8001);
    assert_eq!(d.start, Some(addr(&dll, "DLLINIT")));
    assert_eq!(d.stack, None);
    assert_eq!(d.auto_data, Some(2));
    for e in &d.entries {
        assert!(matches!(e.point, EntryPoint::NeFixed { segment: 1, .. }));
    }
    // Each routine that touches DGROUP loads it from a sel16 fixup.
    assert_eq!(
        kinds(d),
        [k("ptr16:16/import_ordinal", 1), k("sel16/internal", 3)]
    );
    for f in d.fixups.iter().filter(|f| f.kind == SourceKind::Sel16) {
        assert_eq!(
            f.target,
            Target::Internal {
                object: 2,
                offset: 0
            }
        );
    }
    // The routines end in the far returns that pop their arguments.
    let code = decode_all(d, 1);
    let retf: Vec<u16> = code
        .iter()
        .filter(|(_, i)| i.mnemonic() == Mnemonic::Retf)
        .map(|(_, i)| {
            if i.op_count() == 1 {
                i.immediate16()
            } else {
                0
            }
        })
        .collect();
    assert_eq!(retf, [0, 4, 4, 0]);
    assert_eq!(exe.module.imports, ["TPDLL16", "DOSCALLS"]);
}

#[test]
fn tpdll32_exports_init_and_dllcal32_imports() {
    let dll = testprogs::tpdll32().unwrap();
    let exe = testprogs::dllcal32().unwrap();
    check_dll_pair(&dll, &exe, "TPDLL32", ["AddNums", "PutMsg", "GetCount"]);
    check_lx_program(&exe);
    let d = &dll.module;
    assert_eq!(d.flags, 0x8000);
    assert_eq!(d.start, Some(addr(&dll, "_DLL_InitTerm")));
    for e in &d.entries {
        assert!(matches!(e.point, EntryPoint::Entry32 { object: 1, .. }));
    }
    assert_eq!(
        kinds(d),
        [k("off32/internal", 4), k("rel32/import_ordinal", 1)]
    );
    assert_eq!(
        kinds(&exe.module),
        [
            k("off32/internal", 1),
            k("rel32/import_name", 2),
            k("rel32/import_ordinal", 2)
        ]
    );
}

#[test]
fn farcal16_far_pointers_between_segments() {
    let p = testprogs::farcal16().unwrap();
    check_ne_program(&p, 3);
    let m = &p.module;
    let internal: Vec<(u16, Address)> = m
        .fixups
        .iter()
        .filter_map(|f| match f.target {
            Target::Internal { object, offset } => {
                assert_eq!(f.kind, SourceKind::Ptr1616);
                Some((f.object, Address { object, offset }))
            }
            _ => None,
        })
        .collect();
    let expect = [
        (1, addr(&p, "FARADD")),
        (1, addr(&p, "PRINTFAR")),
        (2, addr(&p, "TWICE")),
        (2, addr(&p, "TWICE")),
        (3, addr(&p, "msg")),
        (3, addr(&p, "FARSQUARE")),
        (3, addr(&p, "QUAD")),
    ];
    assert_eq!(internal, expect);
    assert_eq!(addr(&p, "TWICE").object, 1);
    assert_eq!(addr(&p, "QUAD").object, 2);
    // The pointer table is where `call far [fntab]` reads it.
    let call = instruction_at(m, 1, addr(&p, "call_square").offset).unwrap();
    assert_eq!(call.code(), Code::Call_m1616);
    assert_eq!(call.memory_displacement32(), addr(&p, "fntab").offset);
    let quad = instruction_at(m, 1, addr(&p, "call_quad").offset).unwrap();
    assert_eq!(quad.memory_displacement32(), addr(&p, "fntab").offset + 4);
}

#[test]
fn fileio16_calls_and_buffers() {
    let p = testprogs::fileio16().unwrap();
    check_ne_program(&p, 2);
    let m = &p.module;
    let ordinals: Vec<u32> = m.imports_by_ordinal().into_iter().map(|(_, o)| o).collect();
    assert_eq!(ordinals, [5, 58, 59, 70, 137, 138]);
    // Calls in program order.
    let order: Vec<u32> = m
        .fixups
        .iter()
        .map(|f| match f.target {
            Target::ImportOrdinal { ordinal, .. } => ordinal,
            _ => panic!("only imports"),
        })
        .collect();
    assert_eq!(order, [70, 138, 58, 137, 59, 5]);
    // The read buffer lies past the stored data, in the zero-filled tail.
    let dgroup = m.object(2).unwrap();
    let rbuf = addr(&p, "rbuf").offset;
    assert!(u64::from(rbuf) >= dgroup.stored_len(0));
    assert_eq!(
        dgroup.virtual_size,
        rbuf + testprogs::fileio16::CONTENT.len() as u32 + 16
    );
    let data = m.object_bytes(2).unwrap();
    let name = addr(&p, "fname").offset as usize;
    assert_eq!(&data[name..name + 13], b"TESTFILE.DAT\0");
    let result = addr(&p, "result").offset as usize;
    assert_eq!(
        &data[result..result + 2],
        &[1, 0],
        "result starts as failure"
    );
}

/// Every fixup site in a code segment is the immediate or displacement of
/// an instruction, of the right size and instruction kind.
#[test]
fn code_fixup_sites_are_instruction_fields() {
    for p in all() {
        let m = &p.module;
        for n in 1..=m.objects.len() as u16 {
            if !is_code(m, n) {
                continue;
            }
            let code = decode_all(m, n);
            let bytes = m.object_bytes(n).unwrap();
            for f in m.fixups.iter().filter(|f| f.object == n) {
                let (ip, instr) = code
                    .iter()
                    .rev()
                    .find(|(ip, _)| *ip <= f.offset)
                    .unwrap_or_else(|| panic!("{}: site before the first instruction", p.name));
                let tail = &bytes[*ip as usize..];
                let mut d = Decoder::with_ip(common::bits(m, n), tail, 0, DecoderOptions::NONE);
                let i = d.decode();
                let c = d.get_constant_offsets(&i);
                let within = f.offset - ip;
                let ok = match f.kind {
                    SourceKind::Ptr1616 => {
                        instr.code() == Code::Call_ptr1616 && within == c.immediate_offset() as u32
                    }
                    SourceKind::Rel32 => {
                        instr.code() == Code::Call_rel32_32 && within == c.immediate_offset() as u32
                    }
                    SourceKind::Sel16 => {
                        instr.code() == Code::Mov_r16_imm16 && within == c.immediate_offset() as u32
                    }
                    SourceKind::Off32 => {
                        (c.has_immediate()
                            && c.immediate_size() == 4
                            && within == c.immediate_offset() as u32)
                            || (c.has_displacement()
                                && c.displacement_size() == 4
                                && within == c.displacement_offset() as u32)
                    }
                    other => panic!("{}: unexpected {other:?}", p.name),
                };
                assert!(
                    ok,
                    "{}: {:?} at {n}:{:#x} in {instr}",
                    p.name, f.kind, f.offset
                );
            }
        }
    }
}

/// NE sites hold the chain end (0xFFFF) the writer stores; parse gives it
/// back.
#[test]
fn ne_chain_words_are_stored() {
    for p in all().into_iter().filter(|p| p.module.format == Format::Ne) {
        for f in &p.module.fixups {
            let image = p.module.object_bytes(f.object).unwrap();
            let at = f.offset as usize;
            assert_eq!(&image[at..at + 2], &[0xFF, 0xFF], "{}", p.name);
        }
    }
}

#[test]
fn fileio32_msgvio16_msg32_imports() {
    let p = testprogs::fileio32().unwrap();
    check_lx_program(&p);
    let ordinals: Vec<u32> = p
        .module
        .imports_by_ordinal()
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert_eq!(ordinals, [234, 256, 257, 273, 281, 282]);
    let p = testprogs::msgvio16().unwrap();
    check_ne_program(&p, 2);
    assert_eq!(p.module.imports, ["MSG", "VIOCALLS", "DOSCALLS"]);
    assert_eq!(
        p.module.imports_by_ordinal(),
        [
            ("DOSCALLS".to_string(), 5),
            ("MSG".to_string(), 1),
            ("VIOCALLS".to_string(), 19)
        ]
    );
    let p = testprogs::msg32().unwrap();
    check_lx_program(&p);
    assert_eq!(
        p.module.imports_by_ordinal(),
        [("DOSCALLS".to_string(), 234), ("MSG".to_string(), 5)]
    );
    // The same call sequence as the sample hello.exe: push msg, push
    // length, push 1, call rel32, add esp,12.
    let code = decode_all(&p.module, 1);
    let mnemonics: Vec<Mnemonic> = code.iter().take(5).map(|(_, i)| i.mnemonic()).collect();
    assert_eq!(
        mnemonics,
        [
            Mnemonic::Push,
            Mnemonic::Push,
            Mnemonic::Push,
            Mnemonic::Call,
            Mnemonic::Add
        ]
    );
}
