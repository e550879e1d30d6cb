//! Arbitrary bytecode: verify, then interpret against the sample machine.
//! Never panics; a verified program always ends within the log limit, runs
//! the same fused (as loaded) and unfused, and, where the native-code tier
//! compiles it, the same native as interpreted (also with fewer variables
//! than it was verified for, so that variable indices go out of range, and
//! with registers all 0, all 1 and all -1 besides the sample machine's, so
//! that conditional jumps on them go each way).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpn_vm::jit::Compiled;
use rpn_vm::{FakeMachine, Hit, Interpreter, HitOutcome, Program, Reg};

/// Everything a hit leaves behind, owned.
fn after(result: rpn_vm::RunResult<'_>) -> String {
    format!("{result:?}")
}

/// Sets every register of `machine` to `value`.
fn set_all(machine: &mut FakeMachine, value: u32) {
    for reg in Reg::ALL {
        machine.set_reg(reg, value);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((first, code)) = data.split_first() else { return };
    let vars = u32::from(*first % 8);
    let logmax = usize::from(*first >> 3) * 4;
    let loads = [Program::load(code, vars), Program::load_without_stack_limit(code, vars)];
    for program in loads.into_iter().flatten() {
        let mut machine = rpn_vm::examples::sample_machine();
        let mut v = vec![0u32; vars as usize];
        let hit = Hit { major: 1, minor: 1, logmax };
        let mut interp = Interpreter::new();
        let result = interp.run(&program, &mut machine, &mut v, hit);
        if let HitOutcome::Logged(r) = result.outcome {
            assert!(r.data.len() <= logmax);
        }
        let fused = (after(result), v.clone(), *interp.stack().0, interp.stack().1);
        let mut machine = rpn_vm::examples::sample_machine();
        let mut v = vec![0u32; vars as usize];
        let mut plain = Interpreter::new();
        let result = plain.run(&program.unfused(), &mut machine, &mut v, hit);
        let unfused = (after(result), v, *plain.stack().0, plain.stack().1);
        assert_eq!(fused, unfused);

        let Some(native) = Compiled::new(&program) else { continue };
        let runs = [
            (vars as usize, None),
            ((vars as usize).saturating_sub(1), None),
            (0, None),
            (vars as usize, Some(0)),
            (vars as usize, Some(1)),
            (vars as usize, Some(u32::MAX)),
        ];
        for (nvars, regs) in runs {
            let machine = || {
                let mut m = rpn_vm::examples::sample_machine();
                if let Some(value) = regs {
                    set_all(&mut m, value);
                }
                m
            };
            let mut v = vec![1u32; nvars];
            let mut interp = Interpreter::new();
            let result = interp.run(&program, &mut machine(), &mut v, hit);
            let interpreted = (after(result), v, *interp.stack().0, interp.stack().1);
            let mut v = vec![1u32; nvars];
            let mut jit = Interpreter::new();
            let result = native.run(&mut jit, &mut machine(), &mut v, hit);
            let compiled = (after(result), v, *jit.stack().0, jit.stack().1);
            assert_eq!(interpreted, compiled, "{code:02X?} registers {regs:?}");
        }
    }
});
