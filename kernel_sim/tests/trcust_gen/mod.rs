//! Generated TRCUST cases: the module contexts (HELLO.EXE and testprogs
//! modules with their MAP files), MAP files in the LINK386, MS LINK and
//! WLINK dialects, command lines with every switch, and the TSF
//! ([`tsf`]); or, one case in eight, combine mode (`/C=`: a TCF naming
//! TFFs, [`CombineSpec`]); [`harness`] runs IBM's TRCUST and ours on a
//! case.
#![allow(dead_code)]

pub mod harness;
pub mod tsf;

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::sample::Index;

/// A module to trace, with what the generator may name in it.
pub struct Context {
    /// The module's file name (what the `modules` file of a case says).
    pub file: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The MAP file as its linker wrote it.
    pub map: String,
    /// Segments: (object, length, name, class).
    pub segments: Vec<(u16, u32, String, String)>,
    /// Public symbols: (object, offset, name).
    pub symbols: Vec<(u16, u32, String)>,
    /// Source files with debug information: (name, text).
    pub sources: Vec<(String, String)>,
}

fn shared(rel: &str) -> std::path::PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared")).join(rel)
}

/// The contexts, built once.
pub fn contexts() -> &'static [Context] {
    static C: OnceLock<Vec<Context>> = OnceLock::new();
    C.get_or_init(|| {
        let hello_map =
            std::fs::read_to_string(shared("formats/trcust-corpus/d_eax/in/HELLO2.MAP"))
                .expect("HELLO2.MAP of the shared corpus");
        let mut out = vec![context(
            "HELLO.EXE",
            std::fs::read(shared("samples/lx/hello.exe")).expect("hello.exe sample"),
            hello_map,
            Vec::new(),
        )];
        let programs = [
            testprogs::hello16(),
            testprogs::hello32(),
            testprogs::tpdll16(),
            testprogs::tpdll32(),
            testprogs::farcal16(),
            testprogs::dbg16(),
            testprogs::dbg32(),
            testprogs::dbgh32(),
        ];
        for p in programs {
            let p = p.expect("testprogs builds");
            let sources = p
                .source
                .map(|(n, t)| vec![(n.to_string(), t.to_string())])
                .unwrap_or_default();
            out.push(context(
                p.file_name,
                p.bytes.clone(),
                p.map.clone(),
                sources,
            ));
        }
        out
    })
}

fn context(file: &str, bytes: Vec<u8>, map: String, sources: Vec<(String, String)>) -> Context {
    let parsed = loader::map::parse(&map).expect("the context's MAP parses");
    Context {
        file: file.to_string(),
        bytes,
        segments: parsed
            .segments
            .iter()
            .map(|s| (s.object, s.length, s.name.clone(), s.class.clone()))
            .collect(),
        symbols: parsed
            .symbols
            .iter()
            .map(|s| (s.object, s.offset, s.name.clone()))
            .collect(),
        map,
        sources,
    }
}

/// The module file of a corpus case's `modules` list.
pub fn module_bytes(name: &str) -> Option<Vec<u8>> {
    contexts()
        .iter()
        .find(|c| c.file.eq_ignore_ascii_case(name))
        .map(|c| c.bytes.clone())
}

/// A MAP file variant.
#[derive(Debug, Clone)]
pub struct MapSpec {
    /// 0 as the linker wrote it, 1 LINK386, 2 MS LINK, 3 WLINK, 4 by name
    /// only, 5 by value only, no blank lines.
    dialect: u8,
    /// 0 as is, 1 lower case, 2 upper case.
    case: u8,
    extras: Vec<Extra>,
}

/// A symbol line added to a MAP.
#[derive(Debug, Clone)]
enum Extra {
    /// An absolute symbol.
    Abs(u32),
    /// An imported name.
    Imp,
    /// A second name at a symbol's address.
    Overlap(Index),
    /// A symbol's name again at another address.
    DupName(Index, u32),
    /// A line that is not a symbol.
    Garbage(&'static str),
}

fn map_spec() -> impl Strategy<Value = MapSpec> {
    let extra = prop_oneof![
        (0u32..0x40).prop_map(Extra::Abs),
        Just(Extra::Imp),
        any::<Index>().prop_map(Extra::Overlap),
        (any::<Index>(), 0u32..0x20).prop_map(|(i, o)| Extra::DupName(i, o)),
        proptest::sample::select(&["0002:zz  bad", "garbage line", "0002:00000001", " :  x"][..])
            .prop_map(Extra::Garbage),
    ];
    (
        prop_oneof![4 => Just(0u8), 6 => 1u8..6],
        prop_oneof![4 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
        prop_oneof![3 => Just(Vec::new()), 1 => prop::collection::vec(extra, 1..3)],
    )
        .prop_map(|(dialect, case, extras)| MapSpec {
            dialect,
            case,
            extras,
        })
}

impl MapSpec {
    fn render(&self, c: &Context) -> String {
        if self.dialect == 0 && self.extras.is_empty() {
            return recase(&c.map, self.case);
        }
        let mut syms: Vec<(u16, u32, String, &str)> = c
            .symbols
            .iter()
            .map(|(o, f, n)| (*o, *f, n.clone(), ""))
            .collect();
        for e in &self.extras {
            match e {
                Extra::Abs(v) => syms.push((0, *v, "ABSSYM".into(), "Abs")),
                Extra::Imp => syms.push((0, 0, "DOSWRITE".into(), "Imp")),
                Extra::Overlap(i) if !c.symbols.is_empty() => {
                    let s = &c.symbols[i.index(c.symbols.len())];
                    syms.push((s.0, s.1, format!("{}_alias", s.2), ""));
                }
                Extra::DupName(i, off) if !c.symbols.is_empty() => {
                    let s = &c.symbols[i.index(c.symbols.len())];
                    syms.push((s.0, *off, s.2.clone(), ""));
                }
                _ => {}
            }
        }
        let garbage: Vec<&str> = self
            .extras
            .iter()
            .filter_map(|e| match e {
                Extra::Garbage(g) => Some(*g),
                _ => None,
            })
            .collect();
        let mut by_value = syms.clone();
        by_value.sort_by_key(|s| (s.0, s.1));
        let mut by_name = syms;
        by_name.sort_by(|a, b| a.2.cmp(&b.2));
        let wide = self.dialect != 2;
        let line = |s: &(u16, u32, String, &str)| {
            let addr = if wide {
                format!("{:04X}:{:08X}", s.0, s.1)
            } else {
                format!("{:04X}:{:04X}", s.0, s.1 & 0xFFFF)
            };
            let tail = if s.3 == "Imp" { "  (DOSCALLS.138)" } else { "" };
            if s.3.is_empty() {
                format!(" {addr}       {}{tail}\r\n", s.2)
            } else {
                format!(" {addr}  {}  {}{tail}\r\n", s.3, s.2)
            }
        };
        let mut out = String::from("\r\n");
        match self.dialect {
            3 => {
                out.push_str("Open Watcom Linker Version 1.9\r\n\r\n");
                out.push_str("+------------+\r\n|   Groups   |\r\n+------------+\r\n\r\n");
                out.push_str("+--------------+\r\n|  Memory Map  |\r\n+--------------+\r\n\r\n");
                out.push_str("Module: hello.obj(hello.c)\r\n");
                for s in &by_value {
                    out.push_str(&format!("{:04X}:{:08X}  {}\r\n", s.0, s.1, s.2));
                }
                for g in &garbage {
                    out.push_str(&format!("{g}\r\n"));
                }
                out.push_str("\r\nEntry point address: 0002:00000000\r\n");
                return recase(&out, self.case);
            }
            2 => {
                out.push_str(" Start  Stop   Length Name                   Class\r\n");
                for (o, len, name, class) in &c.segments {
                    out.push_str(&format!(
                        " {o:04X}0H {:05X}H {len:05X}H {name:<22} {class}\r\n",
                        len.saturating_sub(1)
                    ));
                }
            }
            _ => {
                out.push_str(" Start         Length     Name                   Class\r\n");
                for (o, len, name, class) in &c.segments {
                    out.push_str(&format!(
                        " {o:04X}:00000000 {len:09X}H {name:<22} {class}\r\n"
                    ));
                }
            }
        }
        if self.dialect != 5 {
            out.push_str("\r\n  Address         Publics by Name\r\n\r\n");
            for s in &by_name {
                out.push_str(&line(s));
            }
        }
        if self.dialect != 4 {
            out.push_str("\r\n  Address         Publics by Value\r\n");
            if self.dialect != 5 {
                out.push_str("\r\n");
            }
            for s in &by_value {
                out.push_str(&line(s));
            }
            for g in &garbage {
                out.push_str(&format!("{g}\r\n"));
            }
        }
        out.push_str("\r\nProgram entry point at 0002:00000000\r\n");
        recase(&out, self.case)
    }
}

fn recase(s: &str, case: u8) -> String {
    match case {
        1 => s.to_ascii_lowercase(),
        2 => s.to_ascii_uppercase(),
        _ => s.to_string(),
    }
}

/// A command line.
#[derive(Debug, Clone)]
pub struct CmdSpec {
    /// How the TSF is named on the command line.
    tsf: u8,
    /// The TDF name, if given.
    tdf: Option<u8>,
    /// How the MAP is given.
    map: u8,
    switches: Vec<&'static str>,
    /// Where the MAP switch goes among the arguments.
    map_first: bool,
}

const SWITCHES: &[&str] = &[
    "/W0",
    "/W1",
    "/W2",
    "/W3",
    "/w1",
    "-W1",
    "/W",
    "/D",
    "/d",
    "/NODE",
    "/NOLN",
    "/node",
    "/NODEX",
    "/RM",
    "/RM0",
    "/RM1",
    "/RM2",
    "/RM3",
    "/RM4",
    "/RM5",
    "/RM6",
    "/RM7",
    "/RM8",
    "/RM44",
    "/RS",
    "/RS0",
    "/RS2",
    "/RS100",
    "/RSx",
    "/RP",
    "/I",
    "/i",
    "/P",
    "/RAS",
    "/ras",
    "/RAS1",
    "/L=HELLO.EXE",
    "/L=NOSUCH.DLL",
    "/L=",
    "/H",
    "/?",
    "/X",
    "/M",
    "/Q",
    "/",
    "-",
    "//W1",
    "/C",
    "/M=",
    "/I=1",
    "/P1",
    "/DD",
];

const VALID_SWITCHES: &[&str] = &[
    "/W0",
    "/W1",
    "/W2",
    "/w1",
    "-W1",
    "/D",
    "/d",
    "/NODE",
    "/NOLN",
    "/node",
    "/RM0",
    "/RM1",
    "/RM2",
    "/RM3",
    "/RM4",
    "/RM5",
    "/RM6",
    "/RM7",
    "/RS",
    "/RS0",
    "/RS2",
    "/RS100",
    "/RP",
    "/I",
    "/i",
    "/P",
    "/RAS",
    "/ras",
    "/L=HELLO.EXE",
];

fn cmd() -> impl Strategy<Value = CmdSpec> {
    (
        prop_oneof![6 => Just(0u8), 4 => 1u8..8],
        prop_oneof![6 => Just(None), 1 => (0u8..4).prop_map(Some)],
        prop_oneof![6 => Just(0u8), 4 => 1u8..9],
        prop_oneof![
            2 => Just(Vec::new()),
            2 => prop::collection::vec(proptest::sample::select(SWITCHES), 1..4),
        ],
        any::<bool>(),
    )
        .prop_map(|(tsf, tdf, map, switches, map_first)| CmdSpec {
            tsf,
            tdf,
            map,
            switches,
            map_first,
        })
}

/// One TFF of a combine case: its major and records (minor, DESC,
/// FMTs).
#[derive(Debug, Clone)]
pub struct TffSpec {
    major: u16,
    records: Vec<(u16, tsf::Text, Vec<tsf::Text>)>,
}

/// A combine case (`TRCUST list.tcf /C=dest`): the TFFs written, the names
/// the TCF lists (an index into the TFFs, or a name that is no file), how
/// the TCF and the destination are named, and switches.
#[derive(Debug, Clone)]
pub struct CombineSpec {
    tffs: Vec<TffSpec>,
    list: Vec<Listed>,
    /// 0 LIST.TCF, 1 LIST (no extension), 2 list.tcf, 3 NONE.TCF, 4 none.
    tcf: u8,
    /// 0 OUT.TFF, 1 out.tff, 2 OUT (no extension), 3 the first input,
    /// 4 C:\OUT.TFF, 5 empty.
    dest: u8,
    /// Separator in the TCF: 0 blank, 1 CR LF, 2 tab, 3 blanks and a
    /// trailing CR LF.
    sep: u8,
    switches: Vec<&'static str>,
}

/// A name in a TCF.
#[derive(Debug, Clone)]
enum Listed {
    /// The n-th TFF, as written (0), lower case (1), with `C:\\` (2).
    Tff(Index, u8),
    /// A file that does not exist.
    Missing,
    /// Many names (past the limit of 50).
    Many,
}

fn tff_spec() -> impl Strategy<Value = TffSpec> {
    let record = (
        prop_oneof![4 => proptest::sample::select(&[1u16, 2, 3, 5, 0x10, 0x300, 0xFFFF][..]), 1 => any::<u16>()],
        tsf::text(),
        prop::collection::vec(tsf::text(), 0..3),
    );
    (
        prop_oneof![6 => Just(1u16), 2 => Just(0xC6u16), 1 => any::<u16>()],
        // TRCUST never writes a TFF without records; IBM's faults on one
        // when it combines.
        prop::collection::vec(record, 1..5),
    )
        .prop_map(|(major, records)| TffSpec { major, records })
}

fn combine_spec() -> impl Strategy<Value = Option<CombineSpec>> {
    let listed = prop_oneof![
        8 => (any::<Index>(), prop_oneof![4 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)])
            .prop_map(|(i, k)| Listed::Tff(i, k)),
        1 => Just(Listed::Missing),
        1 => Just(Listed::Many),
    ];
    let spec = (
        prop::collection::vec(tff_spec(), 1..4),
        prop::collection::vec(listed, 0..5),
        prop_oneof![6 => Just(0u8), 4 => 1u8..5],
        prop_oneof![6 => Just(0u8), 4 => 1u8..6],
        0u8..4,
        prop_oneof![
            3 => Just(Vec::new()),
            1 => prop::collection::vec(
                proptest::sample::select(&["/D", "/W0", "/W1", "/W2", "/X", "/M=X.MAP", "/NODE"][..]),
                1..3
            ),
        ],
    )
        .prop_map(|(tffs, list, tcf, dest, sep, switches)| CombineSpec {
            tffs,
            list,
            tcf,
            dest,
            sep,
            switches,
        });
    prop_oneof![7 => Just(None), 1 => spec.prop_map(Some)]
}

impl CombineSpec {
    fn tff_name(i: usize) -> String {
        format!("T{i}.TFF")
    }

    /// The case; `tame` leaves out unknown switches.
    fn case(&self, tame: bool) -> Case {
        let mut files = Vec::new();
        for (i, t) in self.tffs.iter().enumerate() {
            // One record per minor in a file (IBM's TRCUST faults combining
            // a TFF with a minor twice, which only its /D writes).
            let mut minors = std::collections::BTreeSet::new();
            let records = t
                .records
                .iter()
                .filter(|(minor, _, _)| minors.insert(*minor))
                .map(|(minor, desc, fmts)| stda::tff::TffRecord {
                    minor: *minor,
                    desc: desc.0.as_bytes().to_vec(),
                    fmts: fmts
                        .iter()
                        .map(|f| stda::fmt::compile_fmt(f.0.as_bytes()))
                        .collect(),
                })
                .collect();
            let tff = stda::tff::Tff {
                major: t.major,
                records,
            };
            files.push((Self::tff_name(i), tff.to_bytes()));
        }
        let mut names: Vec<String> = Vec::new();
        for l in &self.list {
            match l {
                Listed::Tff(i, k) => {
                    let n = Self::tff_name(i.index(self.tffs.len()));
                    names.push(match k {
                        0 => n,
                        1 => n.to_ascii_lowercase(),
                        _ => format!("C:\\{n}"),
                    });
                }
                Listed::Missing => names.push("NONE.TFF".to_string()),
                Listed::Many => names.extend((0..51).map(|_| Self::tff_name(0))),
            }
        }
        let sep = ["  ", "\r\n", "\t", "   "][usize::from(self.sep)];
        let mut tcf = names.join(sep);
        if self.sep == 3 {
            tcf.push_str("\r\n");
        }
        let (tcf_file, tcf_arg) = match self.tcf {
            0 => ("LIST.TCF", Some("LIST.TCF")),
            1 => ("LIST.TCF", Some("LIST")),
            2 => ("list.tcf", Some("LIST.TCF")),
            3 => ("LIST.TCF", Some("NONE.TCF")),
            _ => ("LIST.TCF", None),
        };
        files.push((tcf_file.to_string(), tcf.into_bytes()));
        let dest = match self.dest {
            0 => "OUT.TFF".to_string(),
            1 => "out.tff".to_string(),
            2 => "OUT".to_string(),
            // (Not an input: IBM's TRCUST truncates the destination first
            // and then faults reading it.)
            3 => "OUT.XYZ".to_string(),
            4 => "C:\\OUT.TFF".to_string(),
            _ => String::new(),
        };
        let mut args: Vec<String> = tcf_arg.map(String::from).into_iter().collect();
        args.push(format!("/C={dest}"));
        args.extend(
            self.switches
                .iter()
                .filter(|s| !tame || **s != "/X")
                .map(|s| s.to_string()),
        );
        Case {
            args,
            files,
            modules: Vec::new(),
        }
    }
}

/// A whole generated case.
#[derive(Debug, Clone)]
pub struct Spec {
    ctx: Index,
    map: MapSpec,
    tsf: tsf::TsfSpec,
    cmd: CmdSpec,
    /// A combine case instead (generated last, so the other parts of
    /// case `i` are those the generator made before it had combine
    /// cases).
    combine: Option<CombineSpec>,
}

/// The case strategy.
pub fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<Index>(),
        map_spec(),
        tsf::tsf(),
        cmd(),
        combine_spec(),
    )
        .prop_map(|(ctx, map, tsf, cmd, combine)| Spec {
            ctx,
            map,
            tsf,
            cmd,
            combine,
        })
}

/// A case: the command line, the input files, the modules to copy in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// Arguments.
    pub args: Vec<String>,
    /// Input files (name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// Module files (names from [`contexts`]).
    pub modules: Vec<String>,
}

impl Spec {
    /// The case this spec describes.
    pub fn case(&self) -> Case {
        self.case_in(false)
    }

    /// The case this spec describes; `tame` leaves out token mutations,
    /// junk keywords, odd number bases and unknown switches.
    pub fn case_in(&self, tame: bool) -> Case {
        if let Some(c) = &self.combine {
            return c.case(tame);
        }
        let all = contexts();
        let c = &all[self.ctx.index(all.len())];
        let symbols: Vec<String> = c.symbols.iter().map(|s| s.2.clone()).collect();
        let sources: Vec<(String, u32)> = c
            .sources
            .iter()
            .map(|(n, t)| (n.clone(), u32::try_from(t.lines().count()).unwrap_or(0)))
            .collect();
        let variables = ["i", "count", "p", "argc", "n"].map(String::from);
        let names = tsf::Names {
            symbols: &symbols,
            sources: &sources,
            variables: &variables,
        };
        let tsf_bytes = self.tsf.render(&c.file, &names, tame);
        let (tsf_file, tsf_arg) = match self.cmd.tsf {
            0 => ("T.TSF", "T.TSF"),
            1 => ("T.TSF", "T"),
            2 => ("t.tsf", "T.TSF"),
            3 => ("T.TSF", "t.tsf"),
            4 => ("T.TXT", "T.TXT"),
            5 => ("T.TSF", "C:\\T.TSF"),
            6 => ("T.TSF", "NONE.TSF"),
            _ => ("T.TSF", ".\\T.TSF"),
        };
        let mut files = vec![(tsf_file.to_string(), tsf_bytes)];
        let mut args = vec![tsf_arg.to_string()];
        if let Some(t) = self.cmd.tdf {
            args.push(["OUT.TDF", "OUT", "out.xyz", "T.TSF"][usize::from(t)].to_string());
        }
        let map_file = match self.cmd.map {
            0 | 1 => Some(("X.MAP", "/M=X.MAP")),
            2 => Some(("x.map", "/m=X.MAP")),
            3 => Some(("X.MAP", "-M=x.map")),
            4 => Some(("X.MAP", "/M=NONE.MAP")),
            5 => Some(("X.TXT", "/M=X.TXT")),
            6 => Some(("X.MAP", "/M=")),
            7 => None,
            _ => Some(("X.MAP", "/M=C:\\X.MAP")),
        };
        let valid = |s: &&&str| !tame || VALID_SWITCHES.contains(*s);
        let mut switches: Vec<String> = self
            .cmd
            .switches
            .iter()
            .filter(valid)
            .map(|s| s.to_string())
            .collect();
        if let Some((file, arg)) = map_file {
            files.push((file.to_string(), self.map.render(c).into_bytes()));
            if self.cmd.map_first {
                switches.insert(0, arg.to_string());
            } else {
                switches.push(arg.to_string());
            }
        }
        args.extend(switches);
        let mut modules = vec![c.file.clone()];
        if c.file != "HELLO.EXE" && args.iter().any(|a| a.eq_ignore_ascii_case("/L=HELLO.EXE")) {
            modules.push("HELLO.EXE".to_string());
        }
        for (n, t) in &c.sources {
            files.push((n.clone(), t.clone().into_bytes()));
        }
        Case {
            args,
            files,
            modules,
        }
    }
}
