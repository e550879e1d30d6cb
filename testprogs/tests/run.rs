//! The programs run: each is loaded into the `emu` machine by a miniature
//! OS/2 loader written here (real mode for the 16-bit programs, flat
//! protected mode for the 32-bit ones), its fixups applied, its DLLs
//! loaded and initialized, and its DOSCALLS, MSG and VIOCALLS imports
//! answered as host calls. Each must end in DosExit with exit code 0,
//! having written what it should; injected failures must give the
//! documented exit codes.
//!
//! This is a check of the programs, not an OS/2: `kernel_sim` is the real
//! loader and personality.

mod minios;

use minios::{Setup, run};

#[test]
fn hello16_writes_its_line_and_exits_0() {
    let p = testprogs::hello16().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.stdout, testprogs::hello16::MESSAGE);
    assert_eq!(out.calls, doscalls(&[138, 5]));
}

#[test]
fn hello16_exits_1_when_doswrite_fails() {
    let p = testprogs::hello16().unwrap();
    let out = run(&p, &[], Setup::WRITE_FAILS);
    assert_eq!(out.exit, Some(1));
}

#[test]
fn hello32_writes_its_line_and_exits_0() {
    let p = testprogs::hello32().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.stdout, testprogs::hello32::MESSAGE);
    assert_eq!(out.calls, doscalls(&[282, 234]));
    let failed = run(&p, &[], Setup::WRITE_FAILS);
    assert_eq!(failed.exit, Some(1));
}

#[test]
fn dllcal16_calls_tpdll16_and_exits_0() {
    let dll = testprogs::tpdll16().unwrap();
    let exe = testprogs::dllcal16().unwrap();
    let out = run(&exe, &[&dll], Setup::default());
    assert_eq!(out.inits, [1], "DLLINIT returns 1");
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.stdout, testprogs::dll16::GREETING);
    assert_eq!(out.calls, doscalls(&[138, 5]));
    let failed = run(&exe, &[&dll], Setup::WRITE_FAILS);
    assert_eq!(failed.exit, Some(1), "PUTMSG's rc is checked first");
}

#[test]
fn dllcal32_calls_tpdll32_and_exits_0() {
    let dll = testprogs::tpdll32().unwrap();
    let exe = testprogs::dllcal32().unwrap();
    let out = run(&exe, &[&dll], Setup::default());
    assert_eq!(out.inits, [1]);
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.stdout, testprogs::dll32::GREETING);
    assert_eq!(out.calls, doscalls(&[282, 234]));
    let failed = run(&exe, &[&dll], Setup::WRITE_FAILS);
    assert_eq!(failed.exit, Some(1));
}

#[test]
fn farcal16_far_calls_work_and_exit_0() {
    let p = testprogs::farcal16().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.stdout, testprogs::farcall16::MESSAGE);
    let failed = run(&p, &[], Setup::WRITE_FAILS);
    assert_eq!(failed.exit, Some(3), "PRINTFAR is the third check");
}

#[test]
fn fileio16_round_trips_its_file_and_exits_0() {
    let p = testprogs::fileio16().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.calls, doscalls(&[70, 138, 58, 137, 59, 5]));
    assert_eq!(
        out.files
            .get(testprogs::fileio16::FILE_NAME)
            .map(Vec::as_slice),
        Some(testprogs::fileio16::CONTENT)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn fileio16_exits_1_on_a_mismatch_and_still_closes() {
    let p = testprogs::fileio16().unwrap();
    let out = run(&p, &[], Setup::CORRUPT_READS);
    assert_eq!(out.exit, Some(1));
    assert_eq!(out.calls, doscalls(&[70, 138, 58, 137, 59, 5]));
    let out = run(&p, &[], Setup::WRITE_FAILS);
    assert_eq!(out.exit, Some(1));
    assert_eq!(
        out.calls,
        doscalls(&[70, 138, 59, 5]),
        "no seek or read after a failed write"
    );
}

/// `DOSCALLS.n` names.
fn doscalls(ordinals: &[u32]) -> Vec<String> {
    ordinals.iter().map(|o| format!("DOSCALLS.{o}")).collect()
}

#[test]
fn fileio32_round_trips_its_file_and_exits_0() {
    let p = testprogs::fileio32().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.calls, doscalls(&[273, 282, 256, 281, 257, 234]));
    assert_eq!(
        out.files
            .get(testprogs::fileio32::FILE_NAME)
            .map(Vec::as_slice),
        Some(testprogs::fileio32::CONTENT)
    );
    let bad = run(&p, &[], Setup::CORRUPT_READS);
    assert_eq!(bad.exit, Some(1));
    assert_eq!(bad.calls, doscalls(&[273, 282, 256, 281, 257, 234]));
}

#[test]
fn msgvio16_and_msg32_write_through_msg_and_viocalls() {
    let p = testprogs::msgvio16().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.calls, ["MSG.1", "VIOCALLS.19", "DOSCALLS.5"]);
    let mut text = testprogs::msg::MESSAGE16.to_vec();
    text.extend_from_slice(testprogs::msg::VIO_TEXT);
    assert_eq!(out.stdout, text);
    let failed = run(&p, &[], Setup::WRITE_FAILS);
    assert_eq!(failed.exit, Some(1));

    let p = testprogs::msg32().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.calls, ["MSG.5", "DOSCALLS.234"]);
    assert_eq!(out.stdout, testprogs::msg::MESSAGE32);
}

#[test]
fn args16_and_args32_write_their_arguments() {
    for p in [testprogs::args16().unwrap(), testprogs::args32().unwrap()] {
        let out = run(
            &p,
            &[],
            Setup {
                args: "one two  three",
                ..Setup::default()
            },
        );
        assert_eq!(out.exit, Some(0), "{}", p.name);
        assert_eq!(out.stdout, b"one two  three\r\n", "{}", p.name);
        let empty = run(&p, &[], Setup::default());
        assert_eq!(empty.exit, Some(0));
        assert_eq!(empty.stdout, b"\r\n", "{}: no arguments", p.name);
        let failed = run(&p, &[], Setup::WRITE_FAILS);
        assert_eq!(failed.exit, Some(1));
    }
}

#[test]
fn loop16_and_loop32_sum_their_steps() {
    let p = testprogs::loop16().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.calls, doscalls(&[5]));
    let p = testprogs::loop32().unwrap();
    let out = run(&p, &[], Setup::default());
    assert_eq!(out.exit, Some(0));
    assert_eq!(out.calls, doscalls(&[234]));
}
