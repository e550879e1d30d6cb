//! What the property tests share: the test machine, everything a hit
//! leaves behind (outcome, record bytes, cycles, variables, stack) in a
//! comparable form, running a program both interpreted and native, and
//! aiming random jumps at instruction boundaries.
// Each test crate that includes this module uses part of it.
#![allow(dead_code)]

use rpn_vm::examples::sample_machine;
use rpn_vm::jit::Compiled;
use rpn_vm::{
    FakeMachine, FakeSegment, Hit, HitOutcome, Instr, Interpreter, MemFault, Program, Reg,
    TracedMachine,
};

/// Everything a hit leaves behind, owned.
#[derive(Debug, PartialEq)]
pub struct After {
    pub outcome: String,
    pub cycles: u64,
    pub vars: Vec<u32>,
    pub stack: Vec<u32>,
    pub tos: usize,
}

/// The sample machine plus a not-present selector, a selector whose page
/// is not present, a not-present page in flat memory, and `regs`.
pub fn machine(regs: &[u32; 16]) -> FakeMachine {
    let mut m = sample_machine();
    m.add_selector(
        0x27,
        FakeSegment {
            base: 0x5_0000,
            limit: 0xFFFF,
            present: false,
        },
    )
    .add_selector(
        0x2F,
        FakeSegment {
            base: 0x6_0000,
            limit: 0x0FFF,
            present: true,
        },
    )
    .mark_not_present(0x6_0000)
    .mark_not_present(0x3_F000 + 0x1000)
    .write(0x1_0000, b"RPN\0string")
    .write(0x3_FFF8, &[1, 2, 3, 4, 5, 6, 7, 8]);
    for (reg, value) in Reg::ALL.into_iter().zip(regs) {
        m.set_reg(reg, *value);
    }
    m
}

/// The outcome as text, and the cycles.
pub fn summary(result: rpn_vm::RunResult<'_>) -> (String, u64) {
    let outcome = match result.outcome {
        HitOutcome::Logged(r) => format!(
            "logged {:04X}/{:04X} incomplete={} {:02X?}",
            r.major, r.minor, r.incomplete, r.data
        ),
        other => format!("{other:?}"),
    };
    (outcome, result.cycles)
}

pub fn after((outcome, cycles): (String, u64), vars: Vec<u32>, interp: &Interpreter) -> After {
    let (stack, tos) = interp.stack();
    After {
        outcome,
        cycles,
        vars,
        stack: stack.to_vec(),
        tos,
    }
}

/// A machine that gathers its registers: the fake machine without
/// [`TracedMachine::register_file`], so that the native tier copies them;
/// with `gprs`, it lends the eight general ones
/// ([`TracedMachine::gpr_file`]), as the emulator does.
pub struct Gathered(pub FakeMachine, pub bool);

impl TracedMachine for Gathered {
    fn gpr_file(&self) -> Option<&[u32; 8]> {
        if self.1 { self.0.gpr_file() } else { None }
    }
    fn reg(&self, reg: Reg) -> u32 {
        self.0.reg(reg)
    }
    fn registers(&self) -> [u32; 16] {
        self.0.registers()
    }
    fn read_flat(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault> {
        self.0.read_flat(address, buf)
    }
    fn read_segmented(
        &mut self,
        selector: u16,
        offset: u32,
        buf: &mut [u8],
    ) -> Result<(), MemFault> {
        self.0.read_segmented(selector, offset, buf)
    }
    fn object_selector(&self, object: u32) -> u16 {
        self.0.object_selector(object)
    }
    fn object_flat_base(&self, object: u32) -> u32 {
        self.0.object_flat_base(object)
    }
    fn flat_to_segmented(&self, address: u32) -> Option<(u16, u16)> {
        self.0.flat_to_segmented(address)
    }
    fn segmented_to_flat(&self, selector: u16, offset: u16) -> Option<u32> {
        self.0.segmented_to_flat(selector, offset)
    }
}

/// Runs `program` interpreted and, if it compiles, native; returns both
/// (the native one `None` when not compiled). The native tier runs three
/// times, on a machine that lends its registers, one that gathers them
/// and one that lends only the general ones ([`Gathered`]); the runs must
/// agree.
pub fn both(program: &Program, regs: &[u32; 16], vars: &[u32], hit: Hit) -> (After, Option<After>) {
    let mut m = machine(regs);
    let mut v = vars.to_vec();
    let mut interp = Interpreter::new();
    let result = summary(interp.run(program, &mut m, &mut v, hit));
    let interpreted = after(result, v, &interp);
    let native = Compiled::new(program).map(|compiled| {
        let mut m = machine(regs);
        let mut v = vars.to_vec();
        // A used interpreter, every slot and log byte left different from
        // what this hit writes: the native run must not depend on its state.
        let mut interp = dirty_interpreter();
        let result = summary(compiled.run(&mut interp, &mut m, &mut v, hit));
        let lent = after(result, v, &interp);
        for gprs in [false, true] {
            let mut m = Gathered(machine(regs), gprs);
            let mut v = vars.to_vec();
            let mut interp = dirty_interpreter();
            let result = summary(compiled.run(&mut interp, &mut m, &mut v, hit));
            let gathered = after(result, v, &interp);
            assert_eq!(
                lent, gathered,
                "registers lent and gathered (gprs lent: {gprs})"
            );
        }
        lent
    });
    (interpreted, native)
}

/// An interpreter whose last hit left sixteen values no test program
/// pushes in every stack slot, a stack index of 7 and 64 bytes of them in
/// its log: a native run that misses a store, or reads a slot it did not
/// write, shows.
pub fn dirty_interpreter() -> Interpreter {
    let mut code = Vec::new();
    for i in 0..23u32 {
        code.push(Instr::with(
            rpn_vm::opcode::Op::PushD,
            0xD1DE_0000 | (i * 0x0701),
        ));
    }
    code.push(Instr::with(rpn_vm::opcode::Op::LogDn, 16));
    let program = Program::load_without_stack_limit(&rpn_vm::instr::encode_all(&code), 0)
        .expect("the dirtying program loads");
    let mut interp = Interpreter::new();
    let result = interp.run(&program, &mut sample_machine(), &mut [], hit(512));
    assert!(matches!(result.outcome, HitOutcome::Logged(ref r) if r.data.len() == 64));
    let (stack, tos) = interp.stack();
    assert_eq!(tos, 7);
    assert!(stack.iter().all(|&v| v >> 16 == 0xD1DE));
    interp
}

/// The number of cases of a property test: `default`, or
/// `RPN_JIT_CASES` when set (for long runs after a change to the native
/// tier).
pub fn cases(default: u32) -> u32 {
    std::env::var("RPN_JIT_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

pub fn hit(logmax: usize) -> Hit {
    Hit {
        major: 0x10,
        minor: 7,
        logmax,
    }
}

/// The program as text, for failure messages.
pub fn listing(code: &[u8]) -> String {
    rpn_vm::disasm::disassemble(code, "  ").unwrap_or_else(|e| format!("{e:?}"))
}

/// Points every jump of `instrs` at a later instruction boundary (or the
/// end), chosen by the jump's operand taken as a seed.
pub fn aim_jumps(instrs: &mut [Instr]) {
    let ends: Vec<usize> = instrs
        .iter()
        .scan(0, |o, i| {
            *o += i.len();
            Some(*o)
        })
        .collect();
    for i in 0..instrs.len() {
        if instrs[i].op.is_jump() {
            let later = &ends[i..];
            let pick = later[instrs[i].operand as usize % later.len()];
            instrs[i].operand = (pick - ends[i]) as u32;
        }
    }
}
