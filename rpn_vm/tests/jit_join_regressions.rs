//! Join shapes pinned: programs where jumps meet that planted mistakes in
//! the native-code compiler's merge logic got wrong (found and shrunk by
//! the property in `jit_joins.rs`), checked on every run whatever the
//! random seed.
#![cfg(target_arch = "x86_64")]

use rpn_vm::Program;
use rpn_vm::jit::Compiled;

mod support;

use support::{both, hit, listing};

/// Joins each of which a planted mistake in the merge logic got wrong
/// (and a few straight lines around jumps), with EAX 0, 1, -1 and
/// `i32::MAX` so that the jumps go each way, and log limits around the
/// lengths logged.
#[test]
fn pinned_join_shapes_match() {
    let cases: &[(&str, &[u8])] = &[
        // Jmp ZN,L8 / Push W,0 / Pop N,1 / L8: Jmp ZN,L15 / Add /
        // Push W,0x7E / L15: Or. A constant in a slot on one path only.
        (
            "constant slot on one path",
            &[39, 5, 0, 16, 0, 0, 46, 1, 39, 4, 0, 22, 16, 126, 0, 54],
        ),
        // Push W,1 / Jmp PN,L12 / Log DN,2 / Push W,0 / Push EBX /
        // L12: Add. EAX holds the top on one path, not on the other.
        (
            "EAX on one path",
            &[16, 1, 0, 38, 6, 0, 33, 2, 16, 0, 0, 3, 22],
        ),
        // Push EAX / Jmp ZN,end / Push EAX / Jmp PN,L13 / Log DN,1 /
        // Push W,0 / L13: Log DN,1. The log length differs between the
        // jump and the fall-through.
        (
            "log length by path",
            &[0, 39, 11, 0, 0, 38, 5, 0, 33, 1, 16, 0, 0, 33, 1],
        ),
        // Several jumps to L54 and L56 with different log lengths.
        (
            "log lengths of several jumps",
            &[
                37, 55, 0, 39, 14, 0, 36, 49, 0, 16, 0, 0, 16, 0, 0, 16, 0, 0, 46, 3, 37, 35, 0, 0,
                39, 29, 0, 16, 0, 0, 16, 1, 0, 39, 18, 0, 39, 5, 0, 16, 0, 0, 33, 1, 22, 16, 0, 0,
                37, 0, 0, 36, 0, 0, 46, 2, 33, 1,
            ],
        ),
        // Push W,0 / Push W,0 / Push EAX / Jmp ZN,end / Push EAX /
        // Jmp NN,L20 / Log DN,1 / Jmp N,+3 / Push EBX / L20: Pop N,1.
        // A label only jumps reach, one of them after a log.
        (
            "label only jumps reach",
            &[
                16, 0, 0, 16, 0, 0, 0, 39, 12, 0, 0, 37, 6, 0, 33, 1, 36, 3, 0, 3, 46, 1,
            ],
        ),
        // Log DN,1 / Jmp ZN,+0 / Jmp ZN,end: conditional jumps after a
        // log whose length only the compiler knows.
        ("jump after a log", &[33, 1, 39, 0, 0, 39, 0, 0]),
        // Jmp N after a log, to a label a conditional jump also reaches.
        (
            "Jmp N after a log",
            &[
                16, 1, 0, 39, 33, 0, 33, 1, 0, 36, 5, 0, 16, 0, 0, 46, 1, 38, 19, 0, 16, 0, 0, 39,
                11, 0, 16, 0, 0, 16, 0, 0, 16, 0, 0, 46, 3, 33, 1,
            ],
        ),
        // Jmp ZN,L8 / Push W,0 / Pop N,1 / L8: Push W,0. Cycles pending
        // where the fall-through meets the jump.
        ("pending cycles", &[39, 5, 0, 16, 0, 0, 46, 1, 16, 0, 0]),
        // Push EAX / Jmp ZN,L16 / Log DN,1 (twice) / Push EAX /
        // Jmp ZN,L16 / L16: Log DN,1 / Push W,0 / Push W,0. Three jumps
        // to one label: the first two bring different log lengths, the
        // last the fall-through's.
        (
            "three jumps, two log lengths",
            &[
                0, 39, 12, 0, 33, 1, 0, 39, 6, 0, 33, 1, 0, 39, 0, 0, 33, 1, 16, 0, 0, 16, 0, 0,
            ],
        ),
        // Push EAX / Jmp NN,L12 / Log DN,1 / Push EAX / Jmp ZN,L12 /
        // L12: Push EAX / Push W,0 / Push W,0. Jumps with two lengths meet
        // a fall-through with one of them.
        (
            "two jump lengths and a fall-through",
            &[0, 37, 6, 0, 33, 1, 0, 39, 0, 0, 0, 16, 0, 0, 16, 0, 0],
        ),
        // Straight lines around jumps: constants through Xchg and Neg, a
        // constant pushed over the slot EAX holds, a log past the limit
        // after one whose length only the compiler knows.
        (
            "Xchg of constants",
            &[16, 0, 0, 16, 0, 0, 37, 6, 0, 16, 1, 0, 62, 33, 1],
        ),
        ("Neg of a constant", &[16, 0, 0, 56, 33, 1, 16, 0, 0]),
        (
            "constant over EAX",
            &[16, 0, 0, 0, 46, 1, 16, 0, 0, 42, 0, 0],
        ),
        ("log past the limit", &[33, 1, 33, 3, 16, 0, 0, 16, 0, 0]),
        // Push W,0 / Jmp ZN,L9 / Move V,0 / L9: Push W,0 (x3) /
        // Push W,0xF / Push W,0 / Log MRS / Push W,0: a string log after
        // a join leaves a length only the run knows.
        (
            "Log MRS after a join",
            &[
                16, 0, 0, 39, 3, 0, 42, 0, 0, 16, 0, 0, 16, 0, 0, 16, 0, 0, 16, 15, 0, 16, 0, 0,
                21, 16, 0, 0,
            ],
        ),
    ];
    for (name, code) in cases {
        let program = Program::load_without_stack_limit(code, 4).unwrap();
        assert!(Compiled::new(&program).is_some(), "{name}");
        for eax in [0, 1, 0xFFFF_FFFF, 0x7FFF_FFFF] {
            let mut regs = [0; 16];
            regs[0] = eax;
            for logmax in [0, 4, 8, 12, 512] {
                let (interpreted, native) = both(&program, &regs, &[0; 4], hit(logmax));
                assert_eq!(
                    native,
                    Some(interpreted),
                    "{name}: eax {eax:#x} logmax {logmax}\n{}",
                    listing(code)
                );
            }
        }
    }
}

/// Joins with two stack indices, which a planted mistake (no check at the
/// jump, or none at the label) compiled: refused, so the interpreter runs
/// them.
#[test]
fn pinned_joins_with_two_stack_indices_are_refused() {
    let cases: &[&[u8]] = &[
        // Jmp NN,end / Push W,0 / Jmp ZN,L29 / ... / L29: the jump brings
        // index 1, the fall-through 2.
        &[
            37, 31, 0, 16, 0, 0, 39, 20, 0, 16, 0, 0, 26, 0, 0, 1, 0, 34, 16, 0, 0, 16, 0, 0, 42,
            0, 0, 22, 56, 16, 0, 0, 46, 3,
        ],
        // Two jumps bring different indices to L31.
        &[
            16, 0, 0, 0, 39, 50, 0, 37, 21, 0, 22, 58, 0, 0, 16, 0, 0, 39, 37, 0, 16, 0, 0, 39, 5,
            0, 22, 0, 39, 3, 0, 39, 0, 0, 16, 0, 0, 16, 0, 0, 16, 0, 0, 16, 0, 0, 16, 0, 0, 16, 0,
            0, 16, 0, 0, 33, 8,
        ],
    ];
    for code in cases {
        let program = Program::load_without_stack_limit(code, 4).unwrap();
        assert!(Compiled::new(&program).is_none(), "{}", listing(code));
    }
}
