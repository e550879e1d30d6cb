//! The compiler beyond the corpus: the places where we differ from TRCUST
//! 3.05A on purpose (its defects), and the checks and messages the corpus
//! does not exercise. The module is HELLO.EXE's objects held in memory.

mod hello;

use hello::{HELLO_CODE, Hello, symbols};
use rpn_vm::Op;
use tdf::compile::{ModuleOpenError, ModuleSource, OpenedModule, Options, compile};
use tdf::target::{MemoryImage, Symbol, SymbolTable};
use tdf::{Compilation, Severity};

fn run_with(src: &str, opts: &Options) -> Compilation {
    let map = symbols();
    compile(src.as_bytes(), opts, Some(&map), &mut Hello)
}

fn run(src: &str) -> Compilation {
    run_with(src, &Options::default())
}

fn messages(c: &Compilation) -> Vec<String> {
    c.diagnostics().map(ToString::to_string).collect()
}

const HEAD: &str = "MODNAME=HELLO.EXE\nMAJOR=0xC6\n";

#[test]
fn duplicate_minor_keeps_the_first_and_writes_the_tdf() {
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=.startup, DESC=\"a\"\nTRACE MINOR=1, TP=.push28, DESC=\"b\"\n"
    ));
    assert_eq!(
        messages(&c),
        ["TRCUST(4) ERROR: duplicate minor code = 0001, ignored"]
    );
    let tdf = c.tdf.unwrap();
    assert_eq!(tdf.records.len(), 1);
    assert_eq!(tdf.records[0].offset, 0);
    assert_eq!(c.tff.unwrap().records[0].desc, b"a");
}

#[test]
fn slash_d_keeps_both_and_the_tff_is_well_formed() {
    let opts = Options {
        allow_duplicate_minors: true,
        ..Options::default()
    };
    let c = run_with(
        &format!(
            "{HEAD}TRACE MINOR=1, TP=.startup, DESC=\"a\"\nTRACE MINOR=1, TP=.push28, DESC=\"b\"\n"
        ),
        &opts,
    );
    assert!(messages(&c).is_empty());
    assert_eq!(c.tdf.unwrap().records.len(), 2);
    let bytes = c.tff.unwrap().to_bytes();
    let back = stda::tff::Tff::parse(&bytes).unwrap();
    assert_eq!(back.records.len(), 2);
    assert_eq!(back.to_bytes(), bytes);
}

#[test]
fn type_or_group_may_end_the_file() {
    let src = format!(
        "{HEAD}TYPELIST NAME=API,ID=8\nGROUPLIST NAME=FS,ID=3\nTRACE MINOR=1, TP=.startup, GROUP=FS\nTRACE MINOR=2, TP=.push28, TYPE=(API)\n/* end */\n"
    );
    let c = run(&src);
    assert!(!c.aborted);
    assert!(messages(&c).is_empty());
    let tdf = c.tdf.unwrap();
    assert_eq!((tdf.records[0].group, tdf.records[1].type_mask), (3, 8));
}

#[test]
fn minus_register_subtracts() {
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=.startup, MEM32=(FEAX-EDI,DIRECT,4)\n"
    ));
    let rpn = &c.tdf.unwrap().records[0].rpn;
    let ops: Vec<Op> = rpn_vm::instr::decode_all(rpn)
        .unwrap()
        .into_iter()
        .map(|(_, i)| i.op)
        .collect();
    assert_eq!(
        ops,
        [Op::PushW, Op::PushEax, Op::PushEdi, Op::Sub, Op::LogMrf]
    );
}

#[test]
fn truncations_warn() {
    let c = run(&format!("{HEAD}TDFID=70000\nTRACE MINOR=1, TP=.startup\n"));
    assert_eq!(
        messages(&c),
        ["TRCUST(3) WARNING: TDFID out of range, 0 used"]
    );
    assert_eq!(c.tdf.unwrap().tdf_id, 0);
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=.startup, MEM=(RDS+DI+0x10002,DIRECT,2)\n"
    ));
    assert_eq!(
        messages(&c),
        ["TRCUST(4) WARNING: index too large, high word ignored"]
    );
}

#[test]
fn opcode_checks() {
    let c = run(&format!("{HEAD}TRACE MINOR=1, TP=.int3\n"));
    assert_eq!(
        messages(&c),
        ["TRCUST(4) ERROR: opcode at TP address cannot be traced"]
    );
    assert!(c.tdf.is_none());
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=.push28, OPCODE=0x6A\nTRACE MINOR=2, TP=.push1, OPCODE=0x6B\n"
    ));
    assert_eq!(
        messages(&c),
        ["TRCUST(5) ERROR: opcode mismatch at address to apply TP"]
    );
    assert_eq!(c.tdf.unwrap().records.len(), 1);
}

#[test]
fn duplicate_address_keeps_the_format() {
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=.startup, DESC=\"a\"\nTRACE MINOR=2, TP=.startup, DESC=\"b\"\n"
    ));
    assert_eq!(
        messages(&c),
        ["TRCUST(4) ERROR: duplicate TP address 00000002:00000000, ignored"]
    );
    assert_eq!(c.tdf.unwrap().records.len(), 1);
    assert_eq!(c.tff.unwrap().records.len(), 2);
}

#[test]
fn verifier_limits() {
    let regs17 = vec!["AX"; 17].join(",");
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=.startup, REGS=({regs17})\n"
    ));
    assert_eq!(
        messages(&c),
        ["TRCUST(4) ERROR: RPN stack limit of 16 exceeded"]
    );
    let many = vec!["MEM32=(FEAX+EBX+ECX,DIRECT,4)"; 30].join(", ");
    let c = run(&format!("{HEAD}TRACE MINOR=1, TP=.startup, {many}\n"));
    assert_eq!(
        messages(&c),
        ["TRCUST(3) ERROR: RPN command record exceeds 255 bytes"]
    );
}

#[test]
fn static_tracepoints_take_no_data() {
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=@STATIC, DESC=\"s\", REGS=(AX)\n"
    ));
    assert_eq!(
        messages(&c),
        ["TRCUST(3) ERROR: unexpected: REGS with STATIC tracepoint, ignored"]
    );
    assert!(c.tff.is_none());
}

#[test]
fn auto_orbits_number_bits_and_count_variables() {
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=.startup, ORBIT=(0,1)\nTRACE MINOR=2, TP=.push28, ORBIT=(0,1)\nTRACE MINOR=3, TP=.push1, ORBIT=(4,3)\n"
    ));
    let tdf = c.tdf.unwrap();
    assert_eq!(tdf.vars.len(), 4);
    assert_eq!(&tdf.records[1].rpn[..5], &[0x1A, 2, 0, 0, 0]);
    let tmi = c.tmi.unwrap();
    let ids: Vec<u32> = tmi.records.iter().map(|r| r.orbit_id).collect();
    assert_eq!(ids, [0, 1, 0x62]);
    assert_eq!(tmi.records[1].name, b"push28");
}

#[test]
fn header_checks() {
    let types: String = (0..17)
        .map(|i| format!("NAME=T{i},ID={}", 1u32 << (i % 16)))
        .collect::<Vec<_>>()
        .join(", ");
    let c = run(&format!(
        "{HEAD}TYPELIST {types}\nTRACE MINOR=1, TP=.startup\n"
    ));
    // The number of names is checked before the ID (as IBM's TRCUST does).
    assert_eq!(
        messages(&c),
        ["TRCUST(3) WARNING: too many typenames, first 16 types, 48 groups used"]
    );
    let c = run(&format!(
        "{HEAD}TYPELIST NAME=BAD,ID=3, NAME=LONGNAME9,ID=4\nTRACE MINOR=1, TP=.startup\n"
    ));
    assert_eq!(
        messages(&c),
        [
            "TRCUST(3) ERROR: invalid ID: 3, ignored",
            "TRCUST(3) WARNING: name too long: LONGNAME9, first 8 characters used"
        ]
    );
    assert_eq!(c.tdf.unwrap().entries[0].name, b"LONGNAME");
    let c = run("MODNAME=HELLO.EXE\nMAJOR=0\nMAXDATALEN=19\nTRACE MINOR=1, TP=.startup\n");
    assert_eq!(
        messages(&c),
        [
            "TRCUST(2) WARNING: MAJOR out of range, 1 used",
            "TRCUST(3) WARNING: MAXDATALENGTH out of range, 512 used"
        ]
    );
}

#[test]
fn comments_and_strings() {
    let c = run(&format!(
        "{HEAD}; a comment\n/* nested /* comment */ still */\nTRACE MINOR=1, TP=@STATIC, DESC=\"say \\\"hi\\\"\", FMT=\"%P %W\" ; done\n"
    ));
    assert!(messages(&c).is_empty(), "{:?}", messages(&c));
    let t = c.tff.unwrap();
    assert_eq!(t.records[0].desc, b"say \"hi\"");
    assert_eq!(t.records[0].fmts[0], b"\x01P\x01W");
}

#[test]
fn debug_information_forms_need_debug_information() {
    let c = run(&format!("{HEAD}TRACE MINOR=1, TP=@hello.c,12\n"));
    assert_eq!(
        messages(&c),
        ["TRCUST(3) ERROR: CodeView info does not exist for: hello.c"]
    );
    let c = run(&format!("{HEAD}TRACE MINOR=1, TP=.startup, REGS=(.msg)\n"));
    assert_eq!(messages(&c), ["TRCUST(3) ERROR: symbol not found: msg"]);
}

struct WithDebug;

impl ModuleSource for WithDebug {
    fn open(&mut self, name: &str) -> Result<OpenedModule, ModuleOpenError> {
        let mut m = Hello.open(name)?;
        m.image = Box::new(MemoryImage {
            objects: vec![(HELLO_CODE.to_vec(), true)],
            sizes: vec![],
            debug: Some(*b"NB04"),
        });
        Ok(m)
    }
}

#[test]
fn unsupported_debug_information_is_named() {
    let map = symbols();
    let src = format!("{HEAD}TRACE MINOR=1, TP=@hello.c,12\n");
    let c = compile(
        src.as_bytes(),
        &Options::default(),
        Some(&map),
        &mut WithDebug,
    );
    assert_eq!(
        messages(&c),
        ["TRCUST(3) ERROR: NB04 debug information is not supported, cannot place: @hello.c"]
    );
}

#[test]
fn missing_module_name_is_severe() {
    let c = run("MAJOR=1\nTRACE MINOR=1, TP=.startup\n");
    assert!(c.aborted);
    assert_eq!(
        messages(&c),
        ["TRCUST(2) SEVERE: module name not specified"]
    );
}

/// Regression (found by cargo fuzz, target tsf): a long non-ASCII type
/// name was cut inside a character.
#[test]
fn long_non_ascii_names_are_cut_on_a_character() {
    let c = run(&format!(
        "{HEAD}TYPELIST NAME=A\u{e9}\u{e9}\u{e9}\u{e9}\u{e9},ID=1\nTRACE MINOR=1, TP=.startup\n"
    ));
    assert!(!c.aborted);
    assert!(c.tdf.unwrap().entries[0].name.len() <= 8);
}

/// Regression (found by cargo fuzz, target tsf): a MODNAME longer than
/// the TDF's 256-byte field did not write back as read.
#[test]
fn overlong_module_name_is_fatal() {
    let long = "X".repeat(256);
    let c = run(&format!("MODNAME={long}\nTRACE MINOR=1, TP=.startup\n"));
    assert!(c.aborted);
    assert_eq!(
        messages(&c),
        [format!("TRCUST(1) FATAL: filename to long: {long}")]
    );
    let ok = "X".repeat(255);
    let c = run(&format!(
        "MODNAME={ok}\nMAJOR=1\nTRACE MINOR=1, TP=@STATIC\n"
    ));
    assert!(!c.aborted);
}

/// A header value that is not a number is out of range, and a token that
/// does not start with a digit is left for the header to read (as IBM's
/// TRCUST does: tdf/tests/trcust-diff/major_trace*). Found by the token
/// fuzz test (the run once ended without a message).
#[test]
fn bad_header_number_is_out_of_range() {
    let c = run("MODNAME=HELLO.EXE\nMAJOR=TRACE\n");
    assert!(c.aborted);
    assert_eq!(
        messages(&c),
        [
            "TRCUST(2) WARNING: MAJOR out of range, 1 used",
            "TRCUST(3) SEVERE: premature end of file encountered"
        ]
    );
}

/// Outside the header a bad number is an ERROR that discards the
/// tracepoint; the run goes on.
#[test]
fn bad_tracepoint_number_is_an_error() {
    let c = run(&format!("{HEAD}TRACE MINOR=1h, TP=@STATIC\n"));
    assert!(!c.aborted);
    assert_eq!(messages(&c), ["TRCUST(3) ERROR: minor code out of range"]);
}

#[test]
fn unterminated_string_is_severe() {
    let c = run(&format!(
        "{HEAD}TRACE MINOR=1, TP=@STATIC, DESC=\"abc\nTRACE"
    ));
    assert!(c.aborted);
    assert_eq!(c.diagnostics().next().unwrap().severity, Severity::Severe);
}

#[test]
fn minors_are_numbered_when_not_given() {
    let c = run(&format!(
        "{HEAD}TRACE TP=.startup, DESC=\"a\"\nTRACE TP=.push28, DESC=\"b\"\n"
    ));
    let minors: Vec<u16> = c.tdf.unwrap().records.iter().map(|r| r.minor).collect();
    assert_eq!(minors, [1, 2]);
}

#[test]
fn retep_with_map_symbols() {
    let s = |n: &str, offset| Symbol {
        name: n.into(),
        object: 2,
        offset,
    };
    let map = SymbolTable::new(vec![s("func", 0), s("endf", 0x12), s("last", 0x20)]);
    let rm4 = Options {
        retep_mask: 4,
        ..Options::default()
    };
    let src = format!("{HEAD}TRACE MINOR=1, TP=.func,RETEP\n");
    let c = compile(src.as_bytes(), &rm4, Some(&map), &mut Hello);
    assert!(messages(&c).is_empty(), "{:?}", messages(&c));
    let r = &c.tdf.unwrap().records[0];
    assert_eq!((r.offset, r.opcode), (0x11, 0xC3));
    // Without /RM4 nothing matches; the last symbol has no end.
    let c = compile(src.as_bytes(), &Options::default(), Some(&map), &mut Hello);
    assert_eq!(
        messages(&c),
        ["TRCUST(4) WARNING: unable to determine return point for func"]
    );
    let src = format!("{HEAD}TRACE MINOR=1, TP=.last,RETEP=RET\n");
    let c = compile(src.as_bytes(), &rm4, Some(&map), &mut Hello);
    assert_eq!(messages(&c), ["TRCUST(4) ERROR: symbol not found: last"]);
}
