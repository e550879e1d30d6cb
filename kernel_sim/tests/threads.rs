//! Threads (issue 12, item 3): DosCreateThread, DosWaitThread,
//! DosKillThread, DosSuspendThread/DosResumeThread, thread-local memory,
//! and event and mutex semaphores that block, under the deterministic
//! scheduler (round robin at blocking calls and fixed quanta).

mod common;

use common::DATA;
use common::threaded::Arg::{Imm, Mem};
use common::threaded::Prog;
use kernel_sim::{Outcome, Process, ProcessConfig};

const FOREVER: u32 = u32::MAX;

fn run(bytes: Vec<u8>) -> (Outcome, String, Process) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(5_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    (o, out.text(), p)
}

/// A thread function writing the byte at its parameter 3 times, giving
/// the CPU away (DosSleep(0)) after each.
fn writer(p: &mut Prog) -> u32 {
    let at = p.here();
    // push ebx; push esi; mov esi, [esp+12]; mov ebx, 3
    p.raw(&[0x53, 0x56, 0x8B, 0x74, 0x24, 0x0C, 0xBB, 3, 0, 0, 0]);
    let top = p.c.c.len();
    // DosWrite(1, esi, 1, &n)
    p.c.push(DATA + 0x300).push(1);
    p.raw(&[0x56]);
    p.c.push(1).call("DOSCALLS", 282, 16);
    p.sleep(0);
    p.raw(&[0x4B, 0x75]);
    let back = top as i32 - (p.c.c.len() as i32 + 1);
    p.raw(&[back as u8, 0x5E, 0x5B]);
    p.ret0();
    at
}

/// Threads writing A and B with [`writer`] while main writes M with the
/// same loop, inline, then waits for both: the program and the writer's
/// address.
fn yield_program() -> (Vec<u8>, u32) {
    let mut p = Prog::new();
    let f = writer(&mut p);
    p.start_main();
    p.c.store(DATA + 0x10, u32::from(b'A'))
        .store(DATA + 0x14, u32::from(b'B'))
        .store(DATA + 0x18, u32::from(b'M'));
    p.create(DATA + 0x20, f, DATA + 0x10)
        .create(DATA + 0x24, f, DATA + 0x14);
    // main's own turn: the same loop, inline.
    p.c.push(DATA + 0x18);
    p.raw(&[0xE8]);
    let rel = f as i32 - (p.here() as i32 + 4);
    p.raw(&rel.to_le_bytes()).raw(&[0x83, 0xC4, 0x04]);
    p.wait(DATA + 0x20, 0, 0, 1).wait(DATA + 0x24, 0, 0, 2);
    (p.finish(), f)
}

#[test]
fn threads_take_turns_in_a_fixed_order_at_each_yield() {
    let (exe, _) = yield_program();
    let (o, text, _) = run(exe);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(text, "MABMABMAB");
}

#[test]
fn thread_local_memory_is_each_threads_own() {
    let mut p = Prog::new();
    let f = p.here();
    // [tlm] = 20; DosSleep(0); [DATA+0x44] = [tlm]
    p.c.load_eax(DATA + 0x40);
    p.raw(&[0xC7, 0x00, 20, 0, 0, 0]);
    p.sleep(0);
    p.c.load_eax(DATA + 0x40);
    p.raw(&[0x8B, 0x00]).store_eax(DATA + 0x44).ret0();
    p.start_main();
    p.api(454, &[Imm(1), Imm(DATA + 0x40)], 0, 1);
    p.api(454, &[Imm(9), Imm(DATA + 0x48)], 87, 2);
    p.c.load_eax(DATA + 0x40);
    p.raw(&[0xC7, 0x00, 10, 0, 0, 0]);
    p.create(DATA + 0x20, f, 0).wait(DATA + 0x20, 0, 0, 3);
    p.c.load_eax(DATA + 0x40);
    p.raw(&[0x8B, 0x00]);
    p.c.expect(10, 4).load_eax(DATA + 0x44).expect(20, 5);
    p.api(455, &[Mem(DATA + 0x40)], 0, 6);
    p.api(455, &[Mem(DATA + 0x40)], 87, 7);
    let (o, _, _) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
}

#[test]
fn an_event_wait_blocks_until_the_post_or_times_out_on_the_clock() {
    let mut p = Prog::new();
    let poster = p.here();
    p.sleep(100);
    p.c.store(DATA + 0x48, 7);
    p.api(328, &[Mem(DATA + 0x30)], 0, 0x50);
    p.ret0();
    p.start_main();
    p.api(324, &[Imm(0), Imm(DATA + 0x30), Imm(0), Imm(0)], 0, 1);
    p.api(329, &[Mem(DATA + 0x30), Imm(0)], 640, 2);
    p.api(329, &[Mem(DATA + 0x30), Imm(50)], 640, 3);
    p.create(DATA + 0x20, poster, 0);
    p.api(329, &[Mem(DATA + 0x30), Imm(FOREVER)], 0, 4);
    p.c.load_eax(DATA + 0x48).expect(7, 5);
    p.wait(DATA + 0x20, 0, 0, 6);
    p.api(326, &[Mem(DATA + 0x30)], 0, 7);
    let (o, _, proc) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
    // 50 ms of timeout, then the poster's 100 ms sleep.
    let ms = proc.now_millis();
    assert!((150..160).contains(&ms), "{ms} ms");
}

#[test]
fn a_mutex_blocks_other_threads_and_reports_an_owner_that_died() {
    let mut p = Prog::new();
    let taker = p.here();
    // Take it (blocks while main owns it), store the code, take it again
    // (nested), and end without releasing.
    p.api(334, &[Mem(DATA + 0x34), Imm(FOREVER)], 0, 0x50);
    p.c.store(DATA + 0x48, 1);
    p.api(334, &[Mem(DATA + 0x34), Imm(0)], 0, 0x51);
    p.ret0();
    p.start_main();
    p.api(331, &[Imm(0), Imm(DATA + 0x34), Imm(0), Imm(1)], 0, 1);
    p.create(DATA + 0x20, taker, 0);
    p.sleep(10);
    p.c.load_eax(DATA + 0x48).expect(0, 2);
    p.api(333, &[Mem(DATA + 0x34)], 301, 3);
    p.api(335, &[Mem(DATA + 0x34)], 0, 4);
    p.wait(DATA + 0x20, 0, 0, 5);
    p.c.load_eax(DATA + 0x48).expect(1, 6);
    p.api(334, &[Mem(DATA + 0x34), Imm(0)], 105, 7);
    p.api(335, &[Mem(DATA + 0x34)], 0, 8);
    p.api(335, &[Mem(DATA + 0x34)], 288, 9);
    p.api(333, &[Mem(DATA + 0x34)], 0, 10);
    let (o, _, _) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
}

#[test]
fn waiting_forever_with_nobody_to_post_is_a_deadlock() {
    let mut p = Prog::new();
    p.start_main();
    p.api(324, &[Imm(0), Imm(DATA + 0x30), Imm(0), Imm(0)], 0, 1);
    p.api(329, &[Mem(DATA + 0x30), Imm(FOREVER)], 0, 2);
    let (o, _, _) = run(p.finish());
    assert_eq!(o, Outcome::Deadlock { threads: 1 });
}

#[test]
fn wait_kill_suspend_and_resume_check_their_thread() {
    let mut p = Prog::new();
    let spinner = p.here();
    // inc dword [DATA+0x50]; jmp back
    p.raw(&[0xFF, 0x05]).raw(&(DATA + 0x50).to_le_bytes());
    p.raw(&[0xEB, 0xF8]);
    p.start_main();
    p.create(DATA + 0x20, spinner, 0);
    p.c.store(DATA + 0x28, 1).store(DATA + 0x2C, 77);
    p.wait(DATA + 0x20, 1, 294, 1); // not ended yet
    p.wait(DATA + 0x28, 0, 309, 2); // itself
    p.wait(DATA + 0x2C, 0, 309, 3); // no such thread
    p.api(237, &[Mem(DATA + 0x20)], 90, 4); // not suspended
    p.api(238, &[Mem(DATA + 0x20)], 0, 5);
    p.c.load_eax(DATA + 0x50);
    p.store_eax(DATA + 0x54);
    p.sleep(20);
    // Suspended: it did not run while main slept.
    p.c.load_eax(DATA + 0x50).sub_eax(DATA + 0x54).expect(0, 6);
    p.api(237, &[Mem(DATA + 0x20)], 0, 7);
    p.sleep(0);
    p.c.load_eax(DATA + 0x50).sub_eax(DATA + 0x54);
    // It ran one quantum (two instructions a turn).
    p.c.expect(25_000, 8);
    p.api(111, &[Mem(DATA + 0x28)], 309, 9); // itself
    p.api(111, &[Mem(DATA + 0x20)], 0, 10);
    p.wait(DATA + 0x20, 0, 0, 11);
    p.wait(DATA + 0x20, 0, 309, 12); // collected
    let (o, _, _) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
}

#[test]
fn thread_1_ending_ends_the_process_and_its_threads() {
    let mut p = Prog::new();
    let spinner = p.here();
    p.raw(&[0xEB, 0xFE]);
    p.start_main();
    p.create(DATA + 0x20, spinner, 0);
    // DosExit(EXIT_THREAD, 5) on thread 1.
    p.c.push(5).push(0).call("DOSCALLS", 234, 8);
    let (o, _, _) = run(p.finish());
    assert_eq!(o, Outcome::Exited(5));
}

#[test]
fn the_last_thread_ending_ends_the_process_with_its_code() {
    let mut p = Prog::new();
    let ender = p.here();
    // Kill thread 1 (asleep), then DosExit(EXIT_THREAD, 9) as the last.
    p.api(111, &[Imm(1)], 0, 0x50);
    p.c.push(9).push(0).call("DOSCALLS", 234, 8);
    p.start_main();
    p.create(DATA + 0x20, ender, 0);
    p.sleep(1000);
    let (o, _, proc) = run(p.finish());
    assert_eq!(o, Outcome::Exited(9));
    // Thread 1 never woke: the process ended before its sleep did.
    assert!(proc.now_millis() < 1000, "{}", proc.now_millis());
}

/// The yield program traced at the writer's first instruction (`push
/// ebx`): each hit logs the character its thread writes. Returns (the
/// STDA buffer, the sidecar's TIDs, console).
fn traced_yield_run() -> (Vec<u8>, Vec<u16>, String) {
    let (exe, f) = yield_program();
    let writer_offset = f - 0x10000;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), exe).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(5_000_000);
    let mut proc = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut proc);
    // [esp+4] is the parameter: the address of the character.
    let src = format!(
        "major=0xC1\nminor=1\nobject=1\noffset={writer_offset}\nopcode=0x53\n\
         Push W,1\nPush ESP\nPush W,4\nAdd\nPush FIF\nLog MRF\n"
    );
    let file = rpn_vm::parse("t.rpn", &src).unwrap();
    proc.trace_start(stda::StdaFormat::New, 4).unwrap();
    proc.trace_apply("TESTLX", &file, None, None).unwrap();
    assert_eq!(proc.run(), Outcome::Exited(0));
    let tids = proc
        .system_trace()
        .unwrap()
        .sidecar()
        .entries
        .iter()
        .map(|e| e.tid)
        .collect();
    let snap = proc.system_trace_mut().unwrap().buffer_mut().get_stda();
    (snap.stda, tids, out.text())
}

#[test]
fn a_multithreaded_program_traced_twice_gives_the_same_buffer() {
    let (first, tids, text) = traced_yield_run();
    assert_eq!(text, "MABMABMAB");
    let records = stda::Stda::parse(&first).unwrap().records();
    // One hit per call of the writer, each logging the byte it writes
    // (the last of the memory item): thread 1 calls it before threads 2
    // and 3 first run.
    let chars: Vec<u8> = records
        .iter()
        .filter_map(|r| r.data.last().copied())
        .collect();
    assert_eq!(chars, b"MAB");
    assert_eq!(tids, [1, 2, 3], "the sidecar names each hit's thread");
    assert!(records.iter().all(|r| r.pid == 1));
    for _ in 0..2 {
        let (again, tids_again, _) = traced_yield_run();
        assert_eq!(again, first, "byte-identical trace buffers");
        assert_eq!(tids_again, tids);
    }
}
