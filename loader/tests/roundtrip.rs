//! parse(write(m)) == m for generated LX and NE modules, covering every page
//! kind (EXEPACK1 and EXEPACK2 included), source lists, LX internal chains,
//! cross-page fixups, forwarders, and chained NE relocations.

use loader::*;
use proptest::collection::vec;
use proptest::prelude::*;

fn name() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_\u{e9}]{0,12}"
}

/// Page-like data: runs, repeated patterns and noise, so both encoders have
/// something to find.
fn data(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(
        prop_oneof![
            (any::<u8>(), 1..300usize).prop_map(|(b, n)| vec![b; n]),
            (vec(any::<u8>(), 1..8), 1..40usize).prop_map(|(p, n)| p.repeat(n)),
            vec(any::<u8>(), 1..64),
        ],
        0..12,
    )
    .prop_map(move |chunks| {
        let mut d: Vec<u8> = chunks.concat();
        d.truncate(max);
        d
    })
}

fn lx_page() -> impl Strategy<Value = Page> {
    prop_oneof![
        data(4096).prop_map(|d| Page {
            kind: PageKind::Legal,
            data: d
        }),
        data(4096).prop_map(|d| Page {
            kind: PageKind::Iterated,
            data: d
        }),
        data(4096).prop_map(|d| Page {
            kind: PageKind::Compressed,
            data: d
        }),
        data(4096).prop_map(|d| Page {
            kind: PageKind::Range,
            data: d
        }),
        Just(Page {
            kind: PageKind::Zeroed,
            data: Vec::new()
        }),
        Just(Page {
            kind: PageKind::Invalid,
            data: Vec::new()
        }),
    ]
}

fn source_kind(lx: bool) -> impl Strategy<Value = SourceKind> {
    let mut kinds = vec![
        SourceKind::Byte,
        SourceKind::Sel16,
        SourceKind::Ptr1616,
        SourceKind::Off16,
        SourceKind::Ptr1632,
        SourceKind::Off32,
    ];
    if lx {
        kinds.push(SourceKind::Rel32);
    }
    proptest::sample::select(kinds)
}

fn target(nobj: u16, nmod: u16, lx: bool) -> impl Strategy<Value = Target> {
    let off = if lx {
        any::<u32>().boxed()
    } else {
        (0..=0xFFFFu32).boxed()
    };
    let ord = if lx {
        any::<u32>().boxed()
    } else {
        (0..=0xFFFFu32).boxed()
    };
    let mut choices = vec![
        (1..=nobj, off)
            .prop_map(|(object, offset)| Target::Internal { object, offset })
            .boxed(),
        any::<u16>()
            .prop_map(|ordinal| Target::InternalEntry { ordinal })
            .boxed(),
        (1..=nmod, ord)
            .prop_map(|(module, ordinal)| Target::ImportOrdinal { module, ordinal })
            .boxed(),
        (1..=nmod, name())
            .prop_map(|(module, name)| Target::ImportName { module, name })
            .boxed(),
    ];
    if !lx {
        choices.push((1..=6u16).prop_map(|kind| Target::OsFixup { kind }).boxed());
    }
    proptest::strategy::Union::new(choices)
}

/// A record description before it is placed: kind, target, LX additive /
/// NE add-to-site, and how many sites.
#[derive(Debug, Clone)]
struct Rec {
    kind: SourceKind,
    target: Target,
    additive: Option<u32>,
    alias: bool,
    add_to_site: bool,
    chain: bool,
    sites: usize,
}

fn rec(nobj: u16, nmod: u16, lx: bool) -> impl Strategy<Value = Rec> {
    (
        source_kind(lx),
        target(nobj, nmod, lx),
        proptest::option::of(any::<u32>()),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        1..4usize,
        1..=nobj,
        0..0x10000u32,
    )
        .prop_map(
            move |(kind, mut target, additive, alias, add, chain, sites, tobj, toff)| {
                if lx && chain {
                    // An internal chain: 32-bit offsets to one object.
                    return Rec {
                        kind: SourceKind::Off32,
                        target: Target::Internal {
                            object: tobj,
                            offset: toff,
                        },
                        additive: None,
                        alias: false,
                        add_to_site: false,
                        chain: true,
                        sites,
                    };
                }
                if kind == SourceKind::Sel16
                    && let Target::Internal { offset, .. } = &mut target
                {
                    *offset = 0;
                }
                if lx {
                    Rec {
                        kind,
                        target,
                        additive,
                        alias,
                        add_to_site: false,
                        chain: false,
                        sites,
                    }
                } else {
                    let chains = !add
                        && kind != SourceKind::Byte
                        && !matches!(target, Target::OsFixup { .. });
                    let sites = if chains { sites } else { 1 };
                    Rec {
                        kind,
                        target,
                        additive: None,
                        alias: false,
                        add_to_site: add,
                        chain: false,
                        sites,
                    }
                }
            },
        )
}

fn entries(lx: bool) -> impl Strategy<Value = Vec<Entry>> {
    let point = if lx {
        prop_oneof![
            (any::<u16>(), any::<u16>())
                .prop_map(|(object, offset)| EntryPoint::Entry16 { object, offset }),
            (any::<u16>(), any::<u16>(), any::<u16>()).prop_map(|(object, offset, callgate)| {
                EntryPoint::CallGate {
                    object,
                    offset,
                    callgate,
                }
            }),
            (any::<u16>(), any::<u32>())
                .prop_map(|(object, offset)| EntryPoint::Entry32 { object, offset }),
            (any::<u16>(), any::<u32>()).prop_map(|(module, o)| EntryPoint::Forwarder {
                module,
                target: ForwardTarget::Ordinal(o)
            }),
            (any::<u16>(), name()).prop_map(|(module, n)| EntryPoint::Forwarder {
                module,
                target: ForwardTarget::Name(n)
            }),
        ]
        .boxed()
    } else {
        prop_oneof![
            (1..=0xFEu8, any::<u16>())
                .prop_map(|(segment, offset)| EntryPoint::NeFixed { segment, offset }),
            (any::<u8>(), any::<u16>())
                .prop_map(|(segment, offset)| EntryPoint::NeMovable { segment, offset }),
        ]
        .boxed()
    };
    vec((1..300u16, any::<u8>(), point), 0..8)
        .prop_map(|items| {
            let mut ordinal = 0u16;
            items
                .into_iter()
                .map(|(gap, flags, point)| {
                    ordinal = ordinal.saturating_add(if gap > 200 { gap } else { 1 });
                    let flags = match &point {
                        EntryPoint::Forwarder {
                            target: ForwardTarget::Ordinal(_),
                            ..
                        } => flags | 1,
                        EntryPoint::Forwarder { .. } => flags & !1,
                        _ => flags,
                    };
                    Entry {
                        ordinal,
                        flags,
                        point,
                    }
                })
                .collect::<Vec<_>>()
        })
        .prop_filter("ordinals fit", |e| {
            e.windows(2).all(|w| w[0].ordinal < w[1].ordinal)
        })
}

fn names() -> impl Strategy<Value = Vec<Name>> {
    vec(
        (
            name().prop_filter("non-empty", |n| !n.is_empty()),
            any::<u16>(),
        ),
        0..4,
    )
    .prop_map(|v| {
        v.into_iter()
            .map(|(name, ordinal)| Name { name, ordinal })
            .collect()
    })
}

/// Places records on sites: LX sites within one page (chains at distinct
/// 4-aligned offsets), NE sites at distinct multiples of 8.
fn place(m: &mut Module, recs: Vec<(u16, u32, Rec)>) {
    let page_size = m.page_size();
    let mut used = std::collections::HashSet::new();
    let mut record = 0;
    for (object, seed, r) in recs {
        let obj = &m.objects[usize::from(object) - 1];
        let (base, room) = if page_size == 0 {
            let len = obj.pages.first().map_or(0, |p| p.data.len() as u32);
            (0, len.saturating_sub(6))
        } else {
            let usable: Vec<u32> = obj
                .pages
                .iter()
                .enumerate()
                .filter(|(_, p)| {
                    matches!(
                        p.kind,
                        PageKind::Legal
                            | PageKind::Iterated
                            | PageKind::Compressed
                            | PageKind::Range
                    )
                })
                .map(|(i, _)| i as u32)
                .collect();
            if usable.is_empty() {
                continue;
            }
            (
                usable[(seed as usize) % usable.len()] * page_size,
                page_size - 4,
            )
        };
        if room < 8 {
            continue;
        }
        let mut sites = Vec::new();
        for k in 0..r.sites as u32 {
            let slot = ((seed.wrapping_mul(2654435761).wrapping_add(k * 97)) % (room / 8)) * 8;
            let site = base + slot;
            if (r.chain || page_size == 0) && !used.insert((object, site)) {
                continue;
            }
            if !sites.contains(&site) {
                sites.push(site);
            }
        }
        if sites.is_empty() {
            continue;
        }
        for (k, site) in sites.iter().enumerate() {
            let mut target = r.target.clone();
            if r.chain
                && let Target::Internal { offset, .. } = &mut target
            {
                *offset += k as u32 * 12;
            }
            m.fixups.push(Fixup {
                record,
                object,
                offset: *site,
                kind: r.kind,
                alias: r.alias,
                target,
                additive: r.additive,
                add_to_site: r.add_to_site,
                chained: r.chain,
            });
        }
        record += 1;
    }
    m.normalize_fixups();
}

fn lx_module() -> impl Strategy<Value = Module> {
    (1..4u16, 1..4u16).prop_flat_map(|(nobj, nmod)| {
        (
            vec(
                (
                    any::<u32>(),
                    any::<u32>(),
                    vec(lx_page(), 0..3),
                    0..0x4000u32,
                ),
                nobj as usize,
            ),
            vec(name(), nmod as usize),
            vec((1..=nobj, any::<u32>(), rec(nobj, nmod, true)), 0..10),
            entries(true),
            (
                names(),
                names(),
                proptest::option::of(name().prop_filter("non-empty", |n| !n.is_empty())),
            ),
            (
                any::<u32>(),
                0..=9u32,
                any::<bool>(),
                vec(any::<u8>(), 0..16),
            ),
            (
                proptest::option::of((1..=nobj, any::<u32>())),
                proptest::option::of(1..=nobj),
            ),
        )
            .prop_map(
                move |(
                    objs,
                    imports,
                    recs,
                    entries,
                    (res, nonres, desc),
                    (flags, shift, stub, debug),
                    (start, autods),
                )| {
                    let mut m = Module::new_lx("MODULE");
                    if !stub {
                        m.stub.clear();
                    }
                    m.flags = flags;
                    let opts = m.lx.as_mut().unwrap();
                    opts.page_shift = shift;
                    opts.debug_info = debug;
                    for (flags, base, pages, extra) in objs {
                        let virtual_size = pages.len() as u32 * 4096 + extra;
                        m.objects.push(Object {
                            flags,
                            base,
                            virtual_size,
                            pages,
                        });
                    }
                    m.imports = imports;
                    m.entries = entries;
                    m.resident_names = res;
                    m.nonresident_names = if desc.is_some() { nonres } else { Vec::new() };
                    m.description = desc;
                    m.start = start.map(|(object, offset)| Address { object, offset });
                    m.stack = m.start;
                    m.auto_data = autods;
                    m.stack_size = 0x8000;
                    m.resources = vec![Resource {
                        type_id: 10,
                        name_id: 1,
                        object: 1,
                        offset: 4,
                        size: 20,
                    }];
                    place(&mut m, recs);
                    m.store_chain_words().unwrap();
                    m
                },
            )
    })
}

fn ne_module() -> impl Strategy<Value = Module> {
    (1..5u16, 1..4u16, 0..2u16).prop_flat_map(|(nseg, nmod, nres)| {
        let seg = (
            any::<u16>(),
            1..=0x10000u32,
            prop_oneof![
                Just(None),
                data(3000)
                    .prop_filter("non-empty", |d| d.len() >= 16)
                    .prop_map(|d| Some(Page::legal(d))),
                data(3000)
                    .prop_filter("non-empty", |d| d.len() >= 16)
                    .prop_map(|d| Some(Page {
                        kind: PageKind::Iterated,
                        data: d
                    })),
            ],
        );
        (
            vec(seg, nseg as usize),
            vec(name(), nmod as usize),
            vec((1..=nseg, any::<u32>(), rec(nseg, nmod, false)), 0..12),
            entries(false),
            (
                names(),
                names(),
                proptest::option::of(name().prop_filter("non-empty", |n| !n.is_empty())),
            ),
            (any::<u16>(), 1..=9u16, any::<bool>(), any::<[u8; 9]>()),
            (
                proptest::option::of((1..=nseg, any::<u16>())),
                proptest::option::of(1..=nseg),
            ),
        )
            .prop_map(
                move |(
                    segs,
                    imports,
                    recs,
                    entries,
                    (res, nonres, desc),
                    (flags, shift, stub, tail),
                    (start, autods),
                )| {
                    let mut m = Module::new_ne("MODULE");
                    if !stub {
                        m.stub.clear();
                    }
                    m.flags = flags.into();
                    let opts = m.ne.as_mut().unwrap();
                    opts.align_shift = shift;
                    opts.tail = tail;
                    for (flags, virtual_size, page) in segs {
                        let flags = u32::from(flags) & !(NE_SEG_ITERATED | NE_SEG_RELOCINFO);
                        m.objects.push(Object {
                            flags,
                            base: 0,
                            virtual_size,
                            pages: page.into_iter().collect(),
                        });
                    }
                    m.imports = imports;
                    m.entries = entries;
                    m.resident_names = res;
                    m.nonresident_names = if desc.is_some() { nonres } else { Vec::new() };
                    m.description = desc;
                    m.start = start.map(|(object, offset)| Address {
                        object,
                        offset: offset.into(),
                    });
                    m.auto_data = autods;
                    m.heap_size = 0x400;
                    m.stack_size = 0x1000;
                    for i in 0..nres {
                        let object = nseg - nres + i + 1;
                        let size = m.objects[usize::from(object) - 1]
                            .pages
                            .first()
                            .map_or(0, |p| p.data.len() as u32);
                        m.resources.push(Resource {
                            type_id: 0x8000 | i,
                            name_id: i + 1,
                            object,
                            offset: 0,
                            size,
                        });
                    }
                    place(&mut m, recs);
                    m.store_chain_words().unwrap();
                    m
                },
            )
    })
}

/// 96 cases unless PROPTEST_CASES says otherwise.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn lx_round_trips(m in lx_module()) {
        let bytes = write(&m).unwrap();
        let back = parse(&bytes).unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn ne_round_trips(m in ne_module()) {
        let bytes = write(&m).unwrap();
        let back = parse(&bytes).unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn exepack1_round_trips(d in data(4096)) {
        let packed = exepack1::encode(&d, 2048);
        prop_assert_eq!(exepack1::decode(&packed, 0, 4096).unwrap(), d);
    }

    #[test]
    fn exepack2_round_trips(d in data(4096)) {
        let packed = exepack2::encode(&d);
        prop_assert_eq!(exepack2::decode(&packed, 0, 4096).unwrap(), d);
    }
}

#[test]
fn generated_modules_use_every_construct() {
    // The generators above must actually produce the constructs the round
    // trip claims to cover; check one deterministic sample run.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut kinds, mut chains, mut lists, mut ne_chains) =
        (std::collections::HashSet::new(), 0, 0, 0);
    for _ in 0..200 {
        let m = lx_module().new_tree(&mut runner).unwrap().current();
        for o in &m.objects {
            kinds.extend(o.pages.iter().map(|p| p.kind));
        }
        chains += m.fixups.iter().filter(|f| f.chained).count();
        lists += m
            .fixups
            .windows(2)
            .filter(|w| w[0].record == w[1].record && !w[0].chained)
            .count();
        let n = ne_module().new_tree(&mut runner).unwrap().current();
        ne_chains += n
            .fixups
            .windows(2)
            .filter(|w| w[0].record == w[1].record)
            .count();
    }
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    assert!(
        chains > 0 && lists > 0 && ne_chains > 0,
        "{chains} {lists} {ne_chains}"
    );
}

#[test]
fn a_non_resident_table_without_a_description_round_trips() {
    // LINK386 writes an LX DLL with no DESCRIPTION statement with a
    // non-resident table that is its exports' names alone: the first
    // entry is a name (ordinal 1), not the description.
    let mut m = Module::new_lx("TERMDLL");
    m.flags = 0x8200;
    m.add_object(0x2005, 4, &[0xC3, 0, 0, 0]);
    m.add_export(
        "X",
        EntryPoint::Entry32 {
            object: 1,
            offset: 0,
        },
    );
    m.resident_names.clear();
    m.description = Some(String::new());
    m.nonresident_names = vec![Name {
        name: "HELLO".into(),
        ordinal: 1,
    }];
    let bytes = write(&m).unwrap();
    let table = b"\x05HELLO\x01\x00\x00";
    assert!(
        bytes.windows(table.len()).any(|w| w == table),
        "the names alone"
    );
    let back = parse(&bytes).unwrap();
    assert_eq!(back.description.as_deref(), Some(""));
    assert_eq!(back.nonresident_names, m.nonresident_names);
    assert_eq!(back.export("HELLO").map(|e| e.ordinal), Some(1));
    assert_eq!(write(&back).unwrap(), bytes);
}
