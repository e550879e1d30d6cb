//! Trace program files: parsing, errors with line and column, and the
//! asm → disasm → asm round trip.

mod support;

use proptest::prelude::*;
use rpn_vm::disasm::{disassemble, write_file};
use rpn_vm::examples::EXAMPLES;
use rpn_vm::opcode::{OPCODES, Op, Operand};
use rpn_vm::{Instr, Program, object, parse};

fn bytes_of(src: &str) -> Vec<Vec<u8>> {
    let file = parse("t.rpn", src).unwrap_or_else(|e| panic!("{e}"));
    file.tracepoints
        .iter()
        .map(|t| t.program.bytes().to_vec())
        .collect()
}

fn first_error(src: &str) -> String {
    parse("bad.rpn", src)
        .unwrap_err()
        .to_string()
        .lines()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn header_and_tracepoint_keys() {
    let src = "; a comment line\nvars=4\nmajor=0c8h\nid=3\nlogmax=100\nname=MY DLL.DLL\n\
               typedef=PRE,2\ntypedef=POST,0x4\ngroupdef=FS,7\n\
               minor=1, object=2, offset=0x10\nopcode=0x55\ntype=PRE+POST\ngroup=FS\nmajor=0x1C5\n  push eax ; c\n\
               MINOR=2\nPUSHW,1\n";
    let file = parse("t.rpn", src).unwrap();
    let h = &file.header;
    assert_eq!(
        (h.vars, h.major, h.id, h.logmax),
        (Some(4), Some(0xC8), Some(3), Some(100))
    );
    assert_eq!(h.name.as_deref(), Some("MY DLL.DLL"));
    assert_eq!(
        h.typedefs,
        [("PRE".to_string(), 2), ("POST".to_string(), 4)]
    );
    assert_eq!(h.groupdefs, [("FS".to_string(), 7)]);
    let tp = &file.tracepoints[0];
    assert_eq!(
        (tp.minor, tp.object, tp.offset, tp.opcode, tp.major),
        (1, Some(2), Some(0x10), Some(0x55), Some(0x1C5))
    );
    assert_eq!(tp.types, ["PRE", "POST"]);
    assert_eq!(tp.group.as_deref(), Some("FS"));
    assert_eq!(tp.program.bytes(), [0x00]);
    assert_eq!(file.tracepoints[1].effective_major(h), Some(0xC8));
}

#[test]
fn blanks_case_and_number_forms() {
    assert_eq!(
        bytes_of("minor=1\nLog WN,2\nLogWN,2\nl o g w n , 2\nLOG wn,0x2\nlog wn,2h"),
        [[0x14, 2].repeat(5)]
    );
    assert_eq!(
        bytes_of("minor=1\nPush 8\nPush 0x12345\nPush D,-1"),
        [vec![
            0x10, 8, 0, 0x1A, 0x45, 0x23, 0x01, 0x00, 0x1A, 0xFF, 0xFF, 0xFF, 0xFF
        ]]
    );
    assert_eq!(
        bytes_of("vars=2\nminor=1\nOr V,1\nOr\nPush VIi\nPush V,1\nJmp NN,0\nJmp N,0"),
        [vec![
            0x32, 1, 0, 0x36, 0x29, 0x28, 1, 0, 0x25, 0, 0, 0x24, 0, 0
        ]]
    );
}

#[test]
fn labels_resolve_forward_and_may_sit_on_their_own_line() {
    let src =
        "minor=1\n Jmp ZN, Done\n Push W,1\n Jmp n,exit\ndone:\n Push W,2\nEXIT: jmp n,0 ;nop\n";
    assert_eq!(
        bytes_of(src),
        [vec![
            0x27, 6, 0, 0x10, 1, 0, 0x24, 3, 0, 0x10, 2, 0, 0x24, 0, 0
        ]]
    );
}

#[test]
fn bad_input_names_file_line_and_column() {
    let cases = [
        (
            "minor=1\n  Pish EAX\n",
            "bad.rpn:2:3: unknown instruction 'PishEAX'",
        ),
        (
            "minor=1\nPush Q\n",
            "bad.rpn:2:1: unknown instruction 'PushQ' (forms of Push:",
        ),
        (
            "minor=1\nx: Push W,1\nJmp N,x\n",
            "bad.rpn:3:7: backward jump to label 'x' is not permitted",
        ),
        (
            "minor=1\nJmp N,nowhere\n",
            "bad.rpn:2:7: undefined label 'nowhere'",
        ),
        (
            "minor=1\nJmp N,5\n",
            "bad.rpn:2:1: jump target 8 is past the end of the program",
        ),
        (
            "minor=1\na: Push W,1\na: Push W,2\n",
            "bad.rpn:3:1: duplicate label 'a'",
        ),
        (
            "minor=1\nPush W,70000\n",
            "bad.rpn:2:8: operand 70000 out of range for Push W (max 65535)",
        ),
        (
            "minor=1\nLog WN,256\n",
            "bad.rpn:2:8: operand 256 out of range for Log WN (max 255)",
        ),
        ("minor=1\nPush W\n", "bad.rpn:2:7: Push W needs an operand"),
        ("minor=1\nAdd,3\n", "bad.rpn:2:5: Add takes no operand"),
        (
            "Push EAX\n",
            "bad.rpn:1:1: missing minor=: instructions must follow a tracepoint header",
        ),
        ("object=1\n", "bad.rpn:1:1: missing minor= before object="),
        (
            "minor=1\nInc V,0\n",
            "bad.rpn:2:1: variable index 0 out of range (vars=0)",
        ),
        (
            "minor=1\nPush W,1\nend:\n",
            "bad.rpn:3:1: label 'end' must precede an instruction",
        ),
        (
            "minor=1\nvars=2\n",
            "bad.rpn:2:1: file header key vars= after the first tracepoint",
        ),
        ("minor=zz\n", "bad.rpn:1:7: invalid number 'zz' for minor="),
        (
            "typedef=PRE,3\n",
            "bad.rpn:1:9: typedef id 0x3 must be a power of two",
        ),
        ("colour=red\n", "bad.rpn:1:1: unknown keyword 'colour='"),
    ];
    for (src, want) in cases {
        let got = first_error(src);
        assert!(
            got.starts_with(want),
            "for {src:?}\n got: {got}\nwant: {want}"
        );
    }
    let long = format!("minor=1\n{}", "Push D,1\nPop N,1\n".repeat(37));
    assert!(
        first_error(&long).contains("exceeds 255 bytes"),
        "{}",
        first_error(&long)
    );
    // Every error is reported, not only the first.
    let many = parse("m.rpn", "minor=1\nFoo\nBar\n").unwrap_err();
    assert_eq!(many.errors.len(), 2);
}

#[test]
fn examples_round_trip_through_disasm() {
    for example in EXAMPLES {
        let file = parse("ex.rpn", example.source).unwrap();
        let text = write_file(&file);
        let again = parse("again.rpn", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(
            again.tracepoints[0].program, file.tracepoints[0].program,
            "{text}"
        );
        assert_eq!(again.header, file.header);
        let compiled = object::write(&file);
        let read = object::read(&compiled).unwrap();
        assert_eq!(read.tracepoints[0].program, file.tracepoints[0].program);
        assert_eq!(object::write(&read), compiled);
    }
}

#[test]
fn compiled_files_reject_bad_bytes_with_offsets() {
    let file = parse("t.rpn", EXAMPLES[4].source).unwrap();
    let good = object::write(&file);
    for cut in 0..good.len() {
        let err = object::read(&good[..cut]).unwrap_err().to_string();
        assert!(err.starts_with("byte offset"), "{err}");
    }
    let mut bad = good.clone();
    bad[16 + 15] = 0x2F;
    assert_eq!(
        object::read(&bad).unwrap_err().to_string(),
        "byte offset 31: tracepoint program: offset 0: unknown opcode byte 0x2F"
    );
}

#[test]
fn programs_without_listings_and_compiled_tracepoints_one_at_a_time() {
    let src = format!("{}\nminor=2\nPush W,7\nLog WN,1\n", EXAMPLES[4].source);
    let full = parse("t.rpn", &src).unwrap();
    let lean = rpn_vm::source::parse_programs("t.rpn", &src).unwrap();
    assert!(full.tracepoints.iter().all(|t| !t.listing.is_empty()));
    assert!(lean.tracepoints.iter().all(|t| t.listing.is_empty()));
    let programs = |f: &rpn_vm::TraceProgramFile| {
        f.tracepoints
            .iter()
            .map(|t| (t.minor, t.program.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(programs(&lean), programs(&full));
    assert_eq!(lean.header, full.header);
    // The streamed text is the whole file's text.
    let compiled = object::write(&full);
    let (header, each) = object::read_each(&compiled).unwrap();
    let mut text = rpn_vm::disasm::header_text(&header);
    for tp in each {
        text.push_str(&rpn_vm::disasm::tracepoint_text(&tp.unwrap()));
    }
    assert_eq!(text, write_file(&object::read(&compiled).unwrap()));
    // Bytes after the last tracepoint: the last item, once.
    let mut extra = compiled.clone();
    let end = extra.len();
    extra.push(0);
    let items: Vec<_> = object::read_each(&extra).unwrap().1.collect();
    assert_eq!(items.len(), 3);
    assert_eq!(
        items[2].as_ref().unwrap_err().to_string(),
        format!("byte offset {end}: trailing bytes after the last tracepoint")
    );
}

/// A random valid program: at most 16 pushes in all, so that no path can
/// exceed the stack limit, and jumps forward onto boundaries or the end.
fn arb_program() -> impl Strategy<Value = Vec<u8>> {
    let op = (0..OPCODES.len(), any::<u32>(), any::<u16>());
    prop::collection::vec(op, 0..40).prop_map(|raw| {
        let mut pushes = 0;
        let mut instrs: Vec<Instr> = Vec::new();
        for (index, operand, jump_seed) in raw {
            let mut op = OPCODES[index].op;
            let mut operand = operand & op.operand().max();
            if matches!(op, Op::PushV | Op::MoveV | Op::IncV | Op::OrV) {
                operand %= 8;
            }
            if op.is_jump() {
                operand = u32::from(jump_seed);
            }
            let (_, pushed) = op.stack_effect(operand);
            if pushes + pushed > 16 {
                op = Op::Neg;
                operand = 0;
            }
            pushes += op.stack_effect(operand).1;
            instrs.push(Instr::with(op, operand));
        }
        // Jumps go to a later boundary chosen by their seed.
        support::aim_jumps(&mut instrs);
        let mut code = rpn_vm::instr::encode_all(&instrs);
        code.truncate(255);
        code
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn asm_disasm_asm_is_the_identity(code in arb_program()) {
        prop_assume!(Program::load(&code, 8).is_ok());
        let text = disassemble(&code, "  ").unwrap();
        let src = format!("vars=8\nminor=1\n{text}");
        let file = parse("p.rpn", &src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        prop_assert_eq!(file.tracepoints[0].program.bytes(), &code[..]);
    }

    #[test]
    fn operand_kinds_are_respected(index in 0..OPCODES.len()) {
        let info = &OPCODES[index];
        let width = match info.operand { Operand::None => 0, Operand::Byte => 1, Operand::Word => 2, Operand::Dword => 4 };
        prop_assert_eq!(info.len(), 1 + width);
    }
}
