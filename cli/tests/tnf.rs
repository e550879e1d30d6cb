//! `os2trace prex` and `os2trace tnfdump` as a user runs them: the man
//! pages' cookie2 session (`enable $all`, `continue`) on TNF32, and its
//! tnfdump output in the man page's layout, held as golden files
//! (`OS2TRACE_BLESS=1` rewrites them); `.prexrc`, syntax errors prex
//! survives, `quit`, bad files and options.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn os2trace(dir: &Path, args: &[&str], stdin: &str) -> Output {
    common::os2trace_with_input(dir, args, stdin)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/tnf")
        .join(name);
    if std::env::var_os("OS2TRACE_BLESS").is_some() {
        fs::write(&path, actual).unwrap();
    }
    let want = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(actual, want, "{name} differs from the golden file");
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tnf32().unwrap().write_to(dir.path()).unwrap();
    testprogs::tnf16().unwrap().write_to(dir.path()).unwrap();
    dir
}

#[test]
fn cookie2_under_prex_then_tnfdump() {
    let dir = setup();
    let script = "list probes $all\nenable $all\ncontinue\n";
    fs::write(dir.path().join("cmds"), script).unwrap();
    let out = os2trace(
        dir.path(),
        &[
            "prex",
            "-o",
            "cookie2.tnf",
            "-s",
            "128",
            "-f",
            "cmds",
            "TNF32.EXE",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    golden("cookie2.prex", &text(&out.stdout));
    // stdin gives the same dialogue.
    let piped = os2trace(
        dir.path(),
        &["prex", "-o", "cookie2.tnf", "-s", "128", "TNF32.EXE"],
        script,
    );
    assert_eq!(text(&piped.stdout), text(&out.stdout));

    let dump = os2trace(dir.path(), &["tnfdump", "cookie2.tnf"], "");
    assert_eq!(dump.status.code(), Some(0), "{}", text(&dump.stderr));
    golden("cookie2.tnfdump", &text(&dump.stdout));
    beside_the_man_page(&text(&dump.stdout));
    let hex = os2trace(dir.path(), &["tnfdump", "-x", "cookie2.tnf"], "");
    golden("cookie2.tnfdump-x", &text(&hex.stdout));
    let raw = os2trace(dir.path(), &["tnfdump", "-r", "cookie2.tnf"], "");
    let raw = text(&raw.stdout);
    assert!(
        raw.starts_with("0x4       : {\n                 tnf_tag 0x"),
        "{}",
        &raw[..200]
    );
    assert!(
        raw.contains("             tnf_tag_arg 0x"),
        "raw events show their schedule record"
    );
    assert!(raw.contains("              loop_count 6\n        total_iterations 11\n\t}\n"));
    // end's record: a reference to a node_tnf instance, and the instance.
    assert!(raw.contains("             node_struct 0x"), "{raw}");
    assert!(raw.contains("<node_tnf>"), "{raw}");
    assert!(
        raw.contains("                 cur_sum 9\n                 max_cnt 12\n"),
        "{raw}"
    );
    // The default trace file is trace-<pid> in the current directory, 4 MB.
    let out = os2trace(
        dir.path(),
        &["prex", "TNF32.EXE"],
        "enable name=end\ncontinue\n",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        fs::metadata(dir.path().join("trace-1")).unwrap().len(),
        4 * 1024 * 1024
    );
    let dump = text(&os2trace(dir.path(), &["tnfdump", "trace-1"], "").stdout);
    assert!(
        dump.ends_with(
            " end                       node_struct: { type: node_tnf cur_sum: 9 max_cnt: 12 }\n"
        ),
        "{dump}"
    );
    assert_eq!(dump.matches("\n        ").count(), 1, "one event: {dump}");
}

/// tnfdump(1)'s Example 1, the cookie2 trace: its probe lines and each
/// event's probe and data, as the man page prints them (joined where it
/// wraps; our times are the emulated clock's, so they differ).
const MAN_PAGE_PROBES: [&str; 2] = [
    "probe\t tnf_name: \"inloop\" tnf_string: \"keys cookie main loop;file cookie2.c;line 50;sunw%debug in the loop\"",
    "probe\t tnf_name: \"end\" tnf_string: \"keys cookie main end;file cookie2.c;line 41;sunw%debug exiting program\"",
];

fn man_page_events() -> Vec<(String, String)> {
    let mut events = Vec::new();
    let mut total = 0;
    for round in [5, 7] {
        for i in 0..round {
            events.push((
                "inloop".to_string(),
                format!("loop_count: {i} total_iterations: {total}"),
            ));
            total += 1;
        }
    }
    events.push((
        "end".to_string(),
        "node_struct: { type: node_tnf cur_sum: 9 max_cnt: 12 }".to_string(),
    ));
    events
}

/// Our cooked dump against the man page's: the same probe lines, the
/// header's columns, and per event the same probe and data; the columns
/// are where the format string puts them.
fn beside_the_man_page(dump: &str) {
    let lines: Vec<&str> = dump.lines().collect();
    assert_eq!(lines[..2], MAN_PAGE_PROBES, "{dump}");
    assert!(lines[3].contains("Elapsed (ms)       Delta (ms)   PID LWPID    TID     CPU Probe Name                Data / Description . . ."));
    let ours: Vec<(String, String)> = lines[5..]
        .iter()
        .map(|l| {
            // "%16.6f %16.6f %5u %5u %10llu %3s" then " %-25s" and the data.
            assert_eq!(&l[57..61], "  - ", "{l}");
            (l[61..86].trim_end().to_string(), l[87..].to_string())
        })
        .collect();
    assert_eq!(ours, man_page_events());
}

#[test]
fn prexrc_errors_quit_and_debug() {
    let dir = setup();
    fs::write(dir.path().join(".prexrc"), "create $loop name=/step/\n").unwrap();
    let out = os2trace(
        dir.path(),
        &["prex", "-o", "t16.tnf", "TNF16.EXE"],
        "list sets\nbogus command\nconnect &debug name=start\nenable $loop\nenable name=start\nlist history\nlist tracefile\ncontinue\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("Target process stopped\nType \"continue\" to resume the target, \"help\" for help ...\nprex> list sets\n$all 'keys'=/.*/\n$loop 'name'=/step/\n"), "{stdout}");
    assert!(stdout.contains("prex> list history\n[0] connect &debug 'name'='start'\n[1] enable $loop\n[2] enable 'name'='start'\n"), "{stdout}");
    assert!(stdout.contains("Current trace file is: t16.tnf\n"));
    assert!(
        stdout.ends_with("prex> continue\nprex: target process finished\n"),
        "{stdout}"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("prex: syntax error, line 2\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("probe start; sunw%debug \"starting up\"; program=\"TNF16\"; count=5;"),
        "{stderr}"
    );
    let dump = text(&os2trace(dir.path(), &["tnfdump", "t16.tnf"], "").stdout);
    assert_eq!(dump.matches(" step  ").count(), 5, "{dump}");
    assert_eq!(dump.matches(" start  ").count(), 1, "{dump}");
    assert!(!dump.contains(" done  "), "{dump}");

    // quit kills the target: no trace file.
    let out = os2trace(
        dir.path(),
        &["prex", "-o", "q.tnf", "TNF16.EXE"],
        "enable $all\nquit\n",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(!dir.path().join("q.tnf").exists());
    // quit resume runs it with the probes as set.
    let out = os2trace(
        dir.path(),
        &["prex", "-o", "r.tnf", "TNF16.EXE"],
        "enable name=done\nquit resume\n",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&os2trace(dir.path(), &["tnfdump", "r.tnf"], "").stdout)
            .contains(" done                      sum: 10\n")
    );
}

#[test]
fn bad_files_and_options_are_refused() {
    let dir = setup();
    fs::write(dir.path().join("bad.tnf"), b"TNF\0not a trace file").unwrap();
    let out = os2trace(dir.path(), &["tnfdump", "bad.tnf"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("bad.tnf: TNF file at byte offset"),
        "{}",
        text(&out.stderr)
    );
    let out = os2trace(dir.path(), &["tnfdump", "missing.tnf"], "");
    assert_eq!(out.status.code(), Some(1));
    let out = os2trace(dir.path(), &["prex", "-s", "64", "TNF32.EXE"], "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("128"));
    let out = os2trace(
        dir.path(),
        &["prex", "-k"],
        "buffer alloc 1m\nktrace on\nktrace\nlist name probes syscall\nquit\n",
    );
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("Type \"help\" for help ...\n"),
        "{stdout}"
    );
    assert!(stdout.contains("Buffer of size 1048576 bytes allocated\n"));
    assert!(stdout.contains("Tracing is on\n"));
    assert!(
        stdout.contains("name=syscall_start \nname=syscall_end \n"),
        "{stdout}"
    );
}

/// TNF probes and an OS/2 dynamic tracepoint record the same run.
#[test]
fn tnf_and_the_system_trace_in_one_run() {
    let dir = setup();
    let out = os2trace(
        dir.path(),
        &[
            "prex",
            "-o",
            "both.tnf",
            "--apply",
            "TNF32",
            "--tracefmt",
            "TNF32.EXE",
        ],
        "enable name=end\ncontinue\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("prex: target process finished\n"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("MAJ=00D0 MIN=0001").count(), 12, "{stdout}");
    let dump = text(&os2trace(dir.path(), &["tnfdump", "both.tnf"], "").stdout);
    assert!(
        dump.ends_with(
            " end                       node_struct: { type: node_tnf cur_sum: 9 max_cnt: 12 }\n"
        ),
        "{dump}"
    );
}

/// `prex -k PROGRAM`: os2trace's system probes record the program's API
/// calls and its thread's dispatch and end into the kernel buffer, which
/// `quit` writes out; `ktrace off`, `pfilter` and `buffer dealloc` act on
/// what is recorded.
#[test]
fn kernel_probes_record_api_calls_and_thread_switches() {
    let dir = setup();
    let kernel = |file: &str, commands: &str| {
        let out = os2trace(
            dir.path(),
            &["prex", "-k", "-o", file, "TNF32.EXE"],
            commands,
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let dump = |file: &str| text(&os2trace(dir.path(), &["tnfdump", file], "").stdout);
    let events = |dump: &str| {
        dump.lines()
            .filter(|l| l.starts_with(' ') && !l.contains("Elapsed"))
            .map(|l| l[61..].trim_end().to_string())
            .collect::<Vec<_>>()
    };
    let on = "buffer alloc\nenable $all\ntrace $all\nktrace on\n";
    let stdout = kernel("k.tnf", &format!("{on}continue\nktrace\nquit\n"));
    assert!(
        stdout.contains("prex: target process finished\nprex> ktrace\nTracing is on\n"),
        "{stdout}"
    );
    let got = events(&dump("k.tnf"));
    // 3 x 4 inloop probes and end: 13 calls of TNF_PROBE, then DosExit.
    let mut want = vec!["thread_switch             from: 0 to: 1".to_string()];
    for _ in 0..13 {
        want.push(
            "syscall_start             module: \"TNFPROBE\" ordinal: 1 name: \"TNF_PROBE\"".into(),
        );
        want.push("syscall_end               rc: 0".into());
    }
    want.push(
        "syscall_start             module: \"DOSCALLS\" ordinal: 234 name: \"DosExit\"".into(),
    );
    want.push("thread_switch             from: 1 to: 0".into());
    assert_eq!(got, want);

    // Only the probes enabled and traced record.
    kernel(
        "sel.tnf",
        "buffer alloc\nenable $all\ntrace name=thread_switch\nktrace on\ncontinue\nquit\n",
    );
    assert_eq!(
        events(&dump("sel.tnf")),
        [want[0].clone(), want[28].clone()]
    );
    // ktrace off: the buffer stays empty.
    kernel("off.tnf", &format!("{on}ktrace off\ncontinue\nquit\n"));
    assert_eq!(events(&dump("off.tnf")), Vec::<String>::new());
    // The process filter: pid 1 is the target.
    kernel(
        "pf2.tnf",
        &format!("{on}pfilter add 2\npfilter on\ncontinue\nquit\n"),
    );
    assert_eq!(events(&dump("pf2.tnf")), Vec::<String>::new());
    kernel(
        "pf1.tnf",
        &format!("{on}pfilter add 1\npfilter on\ncontinue\nquit\n"),
    );
    assert_eq!(events(&dump("pf1.tnf")), want);
    // A buffer deallocated before quit is not written.
    let stdout = kernel(
        "gone.tnf",
        &format!("{on}continue\nktrace off\nbuffer dealloc\nquit\n"),
    );
    assert!(stdout.contains("buffer deallocated\n"), "{stdout}");
    assert!(!dir.path().join("gone.tnf").exists());
}

/// What a child has written so far on one stream, read by a thread, and
/// whether the stream has ended (the child exited or closed it).
#[derive(Clone, Default)]
struct Captured(
    std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
);

impl Captured {
    fn read_from(mut r: impl std::io::Read + Send + 'static) -> Captured {
        let c = Captured::default();
        let sink = c.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.0.lock().unwrap().extend_from_slice(&buf[..n]);
            }
            sink.1.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        c
    }

    fn text(&self) -> String {
        text(&self.0.lock().unwrap())
    }

    /// Waits until `pred` holds for the text; fails at once if the stream
    /// ended without it (a hang guard bounds the wait at minutes; it is
    /// not a timing assertion).
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
        loop {
            let ended = self.1.load(std::sync::atomic::Ordering::SeqCst);
            let t = self.text();
            if pred(&t) {
                return t;
            }
            assert!(!ended, "the stream ended without {what}:\n{t}");
            assert!(std::time::Instant::now() < deadline, "no {what} in:\n{t}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// The `n` of every `tick` event in a trace file, in time order.
fn ticks(dir: &Path, file: &str) -> Vec<u64> {
    let dump = text(&os2trace(dir, &["tnfdump", file], "").stdout);
    dump.lines()
        .filter(|l| l.get(61..66) == Some("tick "))
        .map(|l| {
            let n = l.split("n: ").nth(1).unwrap();
            n.split(' ').next().unwrap().parse().unwrap()
        })
        .collect()
}

/// Ctrl-C (SIGINT) while the target runs stops it and prex reads commands
/// again; `continue` resumes the target where it stopped. TNFLD32 with an
/// argument calls TNFDLL32's probed Tick forever; `&debug` shows on stderr
/// that the target runs before each signal is sent. The trace file that
/// `quit` writes holds ticks 0, 1, 2, ... with none lost across the stop.
#[test]
fn ctrl_c_stops_the_target_and_prex_reads_commands_again() {
    use std::io::Write;
    let dir = setup();
    testprogs::tnfld32().unwrap().write_to(dir.path()).unwrap();
    testprogs::tnfdll32().unwrap().write_to(dir.path()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .args(["prex", "-o", "spin.tnf", "TNFLD32.EXE", "forever"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = Captured::read_from(child.stdout.take().unwrap());
    let stderr = Captured::read_from(child.stderr.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    let interrupt = || {
        let st = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    };
    stdin
        .write_all(b"enable name=tick\nconnect &debug name=tick\ncontinue\n")
        .unwrap();
    stdin.flush().unwrap();
    stderr.wait_for("tick on stderr", |t| t.contains("probe tick;"));
    interrupt();
    stdout.wait_for("the stop", |t| t.contains("\nTarget process stopped\n"));
    // A Ctrl-C at the prompt is ignored: prex stays, and so does the
    // target's state.
    interrupt();
    let seen = stderr.text().len();
    stdin.write_all(b"list history\ncontinue\n").unwrap();
    stdin.flush().unwrap();
    stderr.wait_for("ticks after the resume", |t| {
        t[seen..].contains("probe tick;")
    });
    interrupt();
    stdout.wait_for("the second stop", |t| {
        t.matches("\nTarget process stopped\n").count() == 2
    });
    stdin.write_all(b"quit\n").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", stderr.text());
    let out = stdout.wait_for("quit", |t| t.ends_with("prex> quit\n"));
    assert!(
        out.contains(
            "Target process stopped\nprex> list history\n[0] enable 'name'='tick'\n[1] connect &debug 'name'='tick'\nprex> continue\n"
        ),
        "{out}"
    );
    assert!(
        out.ends_with("Target process stopped\nprex> quit\n"),
        "{out}"
    );
    let ticks = ticks(dir.path(), "spin.tnf");
    assert!(ticks.len() >= 2, "{ticks:?}");
    assert_eq!(ticks, (0..ticks.len() as u64).collect::<Vec<_>>());
    // Every tick recorded was also printed by &debug, in order.
    let debug: Vec<u64> = stderr
        .text()
        .lines()
        .filter_map(|l| l.strip_prefix("probe tick; n="))
        .map(|l| l.split(';').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(debug[..ticks.len()], ticks[..]);
}

/// The same on a terminal: prex under script(1), Ctrl-C typed as the
/// ^C character, which the terminal turns into SIGINT; prex shows its
/// `prex> ` prompt and does not echo commands. Skipped without script.
#[test]
fn ctrl_c_on_a_terminal() {
    use std::io::Write;
    if Command::new("script").arg("--version").output().is_err() {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: no script(1) for a pseudo-terminal"
        );
        return;
    }
    let dir = setup();
    testprogs::tnfld32().unwrap().write_to(dir.path()).unwrap();
    testprogs::tnfdll32().unwrap().write_to(dir.path()).unwrap();
    // `exec`: the terminal's SIGINT goes to its whole foreground group,
    // and a shell left between script and prex (dash does not exec the
    // last command) would die of it and make script exit 130.
    let cmd = format!(
        "exec {} prex -o tty.tnf TNFLD32.EXE forever",
        env!("CARGO_BIN_EXE_os2trace")
    );
    let mut child = Command::new("script")
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("SHELL", "/bin/sh")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tty = Captured::read_from(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    tty.wait_for("the first prompt", |t| t.contains("prex> "));
    stdin
        .write_all(b"enable name=tick\nconnect &debug name=tick\ncontinue\n")
        .unwrap();
    stdin.flush().unwrap();
    tty.wait_for("ticks", |t| t.contains("probe tick;"));
    stdin.write_all(b"\x03").unwrap();
    stdin.flush().unwrap();
    tty.wait_for("the stop and a prompt", |t| {
        t.split("Target process stopped")
            .nth(2)
            .is_some_and(|rest| rest.contains("prex> "))
    });
    stdin.write_all(b"quit kill\n").unwrap();
    stdin.flush().unwrap();
    let status = child.wait().unwrap();
    let t = tty.text();
    assert_eq!(status.code(), Some(0), "{t}");
    assert!(
        t.contains("Target process stopped\r\nType \"continue\" to resume the target, \"help\" for help ...\r\nprex> "),
        "{t}"
    );
    assert!(!t.contains("prex> continue\r\nprex: "), "no echo: {t}");
    let ticks = ticks(dir.path(), "tty.tnf");
    assert!(!ticks.is_empty());
    assert_eq!(ticks, (0..ticks.len() as u64).collect::<Vec<_>>());
}

/// prex's history is replayed on the probes of a DLL the target loads
/// while it runs (TNFLD32 loads TNFDLL32 with DosLoadModule): `list
/// probes` before `continue` shows only the program's probe, yet `tick`
/// records. And `prex -k` records that load as `module_load`.
#[test]
fn history_reaches_probes_of_a_dll_loaded_later() {
    let dir = setup();
    testprogs::tnfld32().unwrap().write_to(dir.path()).unwrap();
    testprogs::tnfdll32().unwrap().write_to(dir.path()).unwrap();
    let out = os2trace(
        dir.path(),
        &["prex", "-o", "late.tnf", "TNFLD32.EXE"],
        "enable /tick/\nlist name probes $all\ncontinue\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "prex> list name probes $all\nname=loaded \nname=types_a \nname=types_b \nprex> continue\n"
        ),
        "{stdout}"
    );
    assert_eq!(ticks(dir.path(), "late.tnf"), [0, 1, 2]);
    let dump = text(&os2trace(dir.path(), &["tnfdump", "late.tnf"], "").stdout);
    assert!(
        !dump.contains(" loaded      "),
        "loaded stays disabled: {dump}"
    );
    // quit suspend before continue: nothing ran, nothing is written.
    let out = os2trace(
        dir.path(),
        &["prex", "-o", "none.tnf", "TNFLD32.EXE"],
        "enable $all\nquit suspend\n",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(!dir.path().join("none.tnf").exists());
    // disable after enable: the history replays both, in order.
    let out = os2trace(
        dir.path(),
        &["prex", "-o", "late2.tnf", "TNFLD32.EXE"],
        "enable $all\ndisable keys=dll\ncontinue\n",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(ticks(dir.path(), "late2.tnf"), Vec::<u64>::new());
    let dump = text(&os2trace(dir.path(), &["tnfdump", "late2.tnf"], "").stdout);
    assert_eq!(
        dump.matches(" loaded                    hmod: ").count(),
        1,
        "{dump}"
    );

    // Kernel mode: the load is a module_load event, between the calls.
    let out = os2trace(
        dir.path(),
        &["prex", "-k", "-o", "k.tnf", "TNFLD32.EXE"],
        "buffer alloc\nenable $all\ntrace $all\nktrace on\ncontinue\nquit\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dump = text(&os2trace(dir.path(), &["tnfdump", "k.tnf"], "").stdout);
    let events: Vec<&str> = dump
        .lines()
        .filter(|l| l.get(57..61) == Some("  - "))
        .map(|l| l[61..].trim_end())
        .collect();
    let load = events
        .iter()
        .position(|e| e.starts_with("module_load "))
        .unwrap_or_else(|| panic!("{dump}"));
    assert!(
        events[load].starts_with("module_load               name: \"TNFDLL32\" path: \""),
        "{}",
        events[load]
    );
    assert!(
        events[load].contains("TNFDLL32.DLL\" hmod: "),
        "{}",
        events[load]
    );
    assert_eq!(
        events[load - 1],
        "syscall_start             module: \"DOSCALLS\" ordinal: 318 name: \"DosLoadModule\""
    );
    assert_eq!(events[load + 1], "syscall_end               rc: 0");
    assert_eq!(
        events
            .iter()
            .filter(|e| e.starts_with("module_load"))
            .count(),
        1
    );
}

/// A TNF file goes where OS/2's trace files go: `export` (Chrome JSON and
/// Perfetto) reads it, its events named by their probes with their
/// typed arguments.
#[test]
fn tnf_files_export_for_perfetto_and_chrome() {
    let dir = setup();
    let out = os2trace(
        dir.path(),
        &["prex", "-o", "c.tnf", "-s", "128", "TNF32.EXE"],
        "enable $all\ncontinue\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = os2trace(
        dir.path(),
        &[
            "export",
            "--chrome",
            "c.json",
            "--perfetto",
            "c.pftrace",
            "c.tnf",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json = fs::read_to_string(dir.path().join("c.json")).unwrap();
    assert!(json.matches("inloop").count() >= 12, "{json}");
    assert!(json.contains("node_tnf"), "{json}");
    let pb = fs::read(dir.path().join("c.pftrace")).unwrap();
    let has = |needle: &[u8]| pb.windows(needle.len()).any(|w| w == needle);
    assert!(
        has(b"inloop") && has(b"end"),
        "probe names in the Perfetto trace"
    );
}

/// prex reads `$HOME/.prexrc`, then `./.prexrc` (both, in that order); a
/// bad line in one is reported with its line and prex goes on; a `-f`
/// file that cannot be read is a clear error.
#[test]
fn both_prexrc_files_and_a_missing_command_file() {
    let dir = setup();
    let home = tempfile::tempdir().unwrap();
    fs::write(
        home.path().join(".prexrc"),
        "create $s name=start\nenable $s\n",
    )
    .unwrap();
    fs::write(
        dir.path().join(".prexrc"),
        "# ./.prexrc\ndisable $s\nbogus\nenable name=done\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir.path())
        .env("HOME", home.path())
        .args(["prex", "-o", "rc.tnf", "TNF16.EXE"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"list history\ncontinue\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "prex: syntax error, line 3\n");
    assert!(
        text(&out.stdout).contains(
            "prex> list history\n[0] enable $s\n[1] disable $s\n[2] enable 'name'='done'\n"
        ),
        "{}",
        text(&out.stdout)
    );
    let dump = text(&os2trace(dir.path(), &["tnfdump", "rc.tnf"], "").stdout);
    assert!(
        !dump.contains(" start      "),
        "./.prexrc ran after $HOME's: {dump}"
    );
    assert!(
        dump.contains(" done                      sum: 10\n"),
        "{dump}"
    );

    let out = os2trace(dir.path(), &["prex", "-f", "nosuch.cmds", "TNF16.EXE"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot read nosuch.cmds"),
        "{}",
        text(&out.stderr)
    );
}

/// A module whose probe descriptor is malformed: prex says which module,
/// where and what, and exits 1 (no panic, no trace file).
#[test]
fn a_malformed_probe_descriptor_is_a_clear_error() {
    let dir = setup();
    let path = dir.path().join("TNF32.EXE");
    let mut exe = fs::read(&path).unwrap();
    let at = exe
        .windows(4)
        .position(|w| w == b"TNFD")
        .expect("a descriptor in TNF32's data");
    exe[at + 28] = 9; // nine arguments
    fs::write(&path, &exe).unwrap();
    let out = os2trace(
        dir.path(),
        &["prex", "-o", "bad.tnf", "TNF32.EXE"],
        "enable $all\ncontinue\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("reading the probes of the program and its DLLs")
            && err.contains("TNF32: TNF probe table at 0x")
            && err.contains(": 9 arguments (at most 5)"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!dir.path().join("bad.tnf").exists());
}

/// tnfdump reads a file written in the other byte order the same, and
/// dumps several files one after the other.
#[test]
fn tnfdump_reads_either_byte_order_and_several_files() {
    use tnf::{ArgType, ArgValue, Endian, ProbeDesc, TnfWriter};
    let dir = tempfile::tempdir().unwrap();
    let probe = ProbeDesc {
        name: "probe1".into(),
        keys: "targdebug main".into(),
        detail: String::new(),
        file: "targdebug.c".into(),
        line: 61,
        args: vec![
            (ArgType::ULong, "test_ulong".into()),
            (ArgType::Long, "test_long".into()),
            (ArgType::String, "test_str".into()),
        ],
        debug: false,
        records: Vec::new(),
    };
    for (name, endian) in [("le.tnf", Endian::Little), ("be.tnf", Endian::Big)] {
        let mut w = TnfWriter::new(128 * 1024, endian).unwrap();
        for i in 0..3u32 {
            let args = [
                ArgValue::UInt(u64::from(u32::MAX - i)),
                ArgValue::Int(-1 - i64::from(i)),
                ArgValue::Str(b"string1".to_vec()),
            ];
            w.event(
                1,
                &probe,
                (13568, 1, 0),
                277_077_875_828_500 + i64::from(i) * 128,
                &args,
            )
            .unwrap();
        }
        fs::write(dir.path().join(name), w.into_bytes()).unwrap();
    }
    let dump = |args: &[&str]| {
        let out = os2trace(dir.path(), args, "");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let le = dump(&["tnfdump", "le.tnf"]);
    assert_eq!(dump(&["tnfdump", "be.tnf"]), le);
    assert!(
        le.contains(" probe1                    test_ulong: 4294967295 test_long: -1 test_str: \"string1\"\n"),
        "{le}"
    );
    assert_eq!(
        dump(&["tnfdump", "-x", "be.tnf"]),
        dump(&["tnfdump", "-x", "le.tnf"])
    );
    assert_eq!(
        dump(&["tnfdump", "-r", "be.tnf"]),
        dump(&["tnfdump", "-r", "le.tnf"])
    );
    assert_eq!(dump(&["tnfdump", "le.tnf", "be.tnf"]), format!("{le}{le}"));
}
