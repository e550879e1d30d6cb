//! Every sample module parses and matches its golden `*.analysis.json`.

use loader::digest::{image_sha256, page_sha256, sha256_hex};
use loader::{Fixup, Module, Target, lx, ne};
use serde_json::{Value, json};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples");

fn sample(path: &str) -> (Vec<u8>, Value) {
    let bytes = std::fs::read(format!("{SAMPLES}/{path}")).unwrap();
    let text = std::fs::read_to_string(format!("{SAMPLES}/{path}.analysis.json")).unwrap();
    (bytes, serde_json::from_str(&text).unwrap())
}

fn names(first: &str, rest: &[loader::Name]) -> Value {
    let mut v = vec![json!([first, 0])];
    v.extend(rest.iter().map(|n| json!([n.name, n.ordinal])));
    Value::Array(v)
}

/// Records as (first site, sites) groups.
fn records(m: &Module) -> Vec<Vec<&Fixup>> {
    let mut out: Vec<Vec<&Fixup>> = Vec::new();
    for f in &m.fixups {
        match out.last_mut() {
            Some(g) if g[0].record == f.record => g.push(f),
            _ => out.push(vec![f]),
        }
    }
    out
}

fn target_fields(m: &Module, t: &Target, v: &mut serde_json::Map<String, Value>) {
    match t {
        Target::ImportOrdinal { module, ordinal } => {
            v.insert("module".into(), json!(m.imports[usize::from(*module) - 1]));
            v.insert("ordinal".into(), json!(ordinal));
        }
        Target::Internal { object, offset } => {
            v.insert("segment".into(), json!(object));
            v.insert("off".into(), json!(offset));
        }
        _ => {}
    }
}

fn check_lx(path: &str) {
    let (bytes, golden) = sample(path);
    let file = lx::read(&bytes).unwrap();
    let m = &file.module;
    let h = &file.header;
    assert_eq!(golden["format"], "LX");
    assert_eq!(golden["header_offset"], json!(file.header_offset));
    let header = json!({
        "sig": "LX", "cpu": h.cpu, "os": h.os, "mflags": h.mflags, "npages": h.npages,
        "eip_obj": h.eip_obj, "eip": h.eip, "esp_obj": h.esp_obj, "esp": h.esp,
        "page_size": h.page_size, "page_shift": h.page_shift, "objtab_off": h.objtab_off,
        "nobj": h.nobj, "objmap_off": h.objmap_off, "itermap_off": h.itermap_off,
        "rsrc_off": h.rsrc_off, "nrsrc": h.nrsrc, "resname_off": h.resname_off,
        "entry_off": h.entry_off, "fixpage_off": h.fixpage_off, "fixrec_off": h.fixrec_off,
        "impmod_off": h.impmod_off, "nimpmod": h.nimpmod, "impproc_off": h.impproc_off,
        "datapages": h.datapages, "nonres_off": h.nonres_off, "autods": h.autods,
        "stacksize": h.stacksize,
    });
    assert_eq!(golden["header"], header, "{path} header");
    assert_eq!(golden["module_type"], m.module_type().name());
    assert_eq!(golden["import_modules"], json!(m.imports));
    assert_eq!(golden["resident_names"], names(&m.name, &m.resident_names));
    assert_eq!(golden["entries"], json!([]));
    assert!(m.entries.is_empty());
    let ps = m.page_size();
    let mut first = 1;
    for (i, (obj, g)) in m
        .objects
        .iter()
        .zip(golden["objects"].as_array().unwrap())
        .enumerate()
    {
        assert_eq!(g["index"], json!(i + 1));
        assert_eq!(g["vsize"], json!(obj.virtual_size));
        assert_eq!(g["base"], json!(obj.base));
        assert_eq!(g["flags"], json!(obj.flags));
        assert_eq!(g["first_page"], json!(first));
        assert_eq!(g["npages"], json!(obj.pages.len()));
        assert_eq!(
            g["image_len"],
            json!(m.object_bytes(i as u16 + 1).unwrap().len())
        );
        assert_eq!(
            g["image_sha256_pre_fixup"],
            json!(image_sha256(obj, ps)),
            "{path} object {}",
            i + 1
        );
        assert_eq!(
            g["image_sha256_pre_fixup"],
            json!(sha256_hex(&obj.image(ps)))
        );
        for (k, (page, gp)) in obj
            .pages
            .iter()
            .zip(g["pages"].as_array().unwrap())
            .enumerate()
        {
            let entry = file.pages[first + k - 1];
            assert_eq!(gp["page"], json!(first + k));
            assert_eq!(gp["kind"], page.kind.name());
            assert_eq!(gp["file_off"], json!(entry.file_offset));
            assert_eq!(gp["file_size"], json!(entry.data_size));
            assert_eq!(gp["decoded_len"], json!(page.data.len()));
            assert_eq!(gp["sha256"], json!(page_sha256(page, ps)));
        }
        first += obj.pages.len();
    }
    assert_eq!(golden["objects"].as_array().unwrap().len(), m.objects.len());
    let total: u32 = file.fixup_records.iter().sum();
    assert_eq!(golden["fixup_record_count"], json!(total));
    assert_eq!(golden["fixup_kinds"], json!(m.fixup_kinds()));
    let recs = records(m);
    let gr = golden["fixup_records_first"].as_array().unwrap();
    assert!(!gr.is_empty());
    for (g, r) in gr.iter().zip(&recs) {
        let f = r[0];
        let page = f.offset / ps;
        let mut v = serde_json::Map::new();
        v.insert(
            "page".into(),
            json!(page + 1 + first_page_of(m, f.object) - 1),
        );
        v.insert("src".into(), json!(f.kind.name()));
        v.insert("tgt".into(), json!(f.target.kind_name()));
        target_fields(m, &f.target, &mut v);
        v.insert("srcoff".into(), json!(f.offset - page * ps));
        assert_eq!(g, &Value::Object(v), "{path}");
    }
    let used: Vec<Value> = m
        .imports_by_ordinal()
        .iter()
        .map(|(n, o)| json!([n, o]))
        .collect();
    assert_eq!(golden["imports_used"], Value::Array(used));
}

fn first_page_of(m: &Module, object: u16) -> u32 {
    1 + m.objects[..usize::from(object) - 1]
        .iter()
        .map(|o| o.pages.len() as u32)
        .sum::<u32>()
}

fn check_ne(path: &str) {
    let (bytes, golden) = sample(path);
    let file = ne::read(&bytes).unwrap();
    let m = &file.module;
    let h = &file.header;
    assert_eq!(golden["format"], "NE");
    assert_eq!(golden["header_offset"], json!(file.header_offset));
    let header = json!({
        "linker": format!("{}.{}", h.linker_version, h.linker_revision),
        "entry_off": h.entry_off, "entry_len": h.entry_len, "flags": h.flags, "autods": h.autods,
        "heap": h.heap, "stack": h.stack, "ip": h.ip, "cs": h.cs, "sp": h.sp, "ss": h.ss,
        "nseg": h.nseg, "nmod": h.nmod, "nonres_len": h.nonres_len, "segtab": h.segtab,
        "rsrctab": h.rsrctab, "resname": h.resname, "modref": h.modref, "impnames": h.impnames,
        "nonres_off": h.nonres_off, "nmovable": h.nmovable, "align": h.align, "nrsrc": h.nrsrc,
        "target_os": h.target_os,
    });
    assert_eq!(golden["header"], header, "{path} header");
    assert_eq!(golden["module_type"], m.module_type().name());
    assert_eq!(golden["import_modules"], json!(m.imports));
    assert_eq!(golden["resident_names"], names(&m.name, &m.resident_names));
    let desc = m.description.clone().unwrap();
    assert_eq!(
        golden["nonresident_names"],
        names(&desc, &m.nonresident_names)
    );
    assert!(m.entries.is_empty());
    let gs = golden["segments"].as_array().unwrap();
    assert_eq!(gs.len(), m.objects.len());
    for (i, ((seg, obj), g)) in file.segments.iter().zip(&m.objects).zip(gs).enumerate() {
        assert_eq!(g["index"], json!(i + 1));
        assert_eq!(g["file_off"], json!(seg.file_offset));
        assert_eq!(g["len"], json!(seg.length));
        assert_eq!(g["flags"], json!(seg.flags));
        assert_eq!(g["kind"], if seg.flags & 1 != 0 { "DATA" } else { "CODE" });
        assert_eq!(g["minalloc"], json!(seg.min_alloc));
        assert_eq!(g["iterated"], json!(seg.flags & 8 != 0));
        assert_eq!(
            g["sha256"],
            json!(image_sha256(obj, 0)),
            "{path} segment {}",
            i + 1
        );
        if let Some(n) = g.get("nrelocs") {
            assert_eq!(n, &json!(seg.relocations));
        }
    }
    let recs = records(m);
    let mut kinds = std::collections::BTreeMap::new();
    for r in &recs {
        *kinds
            .entry(format!("{}/{}", r[0].kind.name(), r[0].target.kind_name()))
            .or_insert(0) += 1;
    }
    assert_eq!(golden["reloc_kinds"], json!(kinds), "{path}");
    let gr = golden["relocs_first"].as_array().unwrap();
    assert!(!gr.is_empty());
    for (g, r) in gr.iter().zip(&recs) {
        let f = r[0];
        let mut v = serde_json::Map::new();
        v.insert("seg".into(), json!(f.object));
        v.insert("src".into(), json!(f.kind.name()));
        v.insert("tgt".into(), json!(f.target.kind_name()));
        v.insert("additive".into(), json!(f.add_to_site));
        v.insert("srcoff".into(), json!(f.offset));
        target_fields(m, &f.target, &mut v);
        v.insert(
            "chain_sites".into(),
            json!(r.iter().map(|s| s.offset).collect::<Vec<_>>()),
        );
        assert_eq!(g, &Value::Object(v), "{path}");
    }
}

#[test]
fn lx_hello() {
    check_lx("lx/hello.exe");
}

#[test]
fn lx_testbeep() {
    check_lx("lx/testbeep.exe");
}

#[test]
fn lx_testpm() {
    check_lx("lx/testpm.exe");
}

#[test]
fn ne_test_asm16() {
    check_ne("ne/test-asm16.exe");
}

#[test]
fn ne_hello16() {
    check_ne("ne/hello16.exe");
}

#[test]
fn ne_testargv16() {
    check_ne("ne/testargv16.exe");
}

/// Each sample written back and read again gives the same module.
#[test]
fn samples_round_trip_through_the_writers() {
    for path in [
        "lx/hello.exe",
        "lx/testbeep.exe",
        "lx/testpm.exe",
        "ne/test-asm16.exe",
        "ne/hello16.exe",
        "ne/testargv16.exe",
    ] {
        let (bytes, _) = sample(path);
        let m = loader::parse(&bytes).unwrap();
        let again = loader::parse(&loader::write(&m).unwrap()).unwrap();
        assert_eq!(again, m, "{path}");
    }
}

/// The opcode bytes TRCUST 3.05A read from HELLO.EXE (lx/hello.exe) at
/// the addresses of HELLO2.MAP (TRCUST-FORMATS.md, TDF record +14).
#[test]
fn hello_bytes_match_what_trcust_read() {
    let (bytes, _) = sample("lx/hello.exe");
    let m = loader::parse(&bytes).unwrap();
    let at = |object, offset| loader::Address { object, offset };
    for (object, offset, byte) in [
        (2, 0, 0x68),
        (2, 1, 0x00),
        (2, 5, 0x6A),
        (2, 9, 0xE8),
        (2, 0x11, 0xC3),
        (1, 0, 0x48),
    ] {
        assert_eq!(
            m.byte_at(at(object, offset)),
            Some(byte),
            "{object}:{offset:x}"
        );
    }
    assert_eq!(m.byte_at(at(2, 18)), None, "past the 18-byte object");
    assert_eq!(
        m.byte_at(at(1, 0x7FFF)),
        Some(0),
        "zero fill up to the virtual size"
    );
    assert_eq!(m.byte_at(at(3, 0)), None);
}
