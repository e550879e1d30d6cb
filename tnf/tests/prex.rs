//! prex's whole user-mode and kernel-mode command language on a probe
//! table: every statement form, selection by name regex and by keys, sets
//! re-evaluated at each use, history replayed on later probes, functions,
//! source, quit forms, and syntax errors that prex survives.

use std::collections::BTreeMap;

use tnf::prex::{Action, Mode, QuitMode, Session};
use tnf::{ArgType, ProbeDesc};

fn desc(name: &str, keys: &str, detail: &str, line: u32, args: &[(ArgType, &str)]) -> ProbeDesc {
    ProbeDesc {
        name: name.into(),
        keys: keys.into(),
        detail: detail.into(),
        file: "cookie2.c".into(),
        line,
        args: args.iter().map(|(t, n)| (*t, (*n).to_string())).collect(),
        debug: false,
        records: Vec::new(),
    }
}

fn session() -> Session {
    let mut s = Session::new(Mode::User, "trace-42");
    s.add_probes(
        "COOKIE2.EXE",
        [
            desc(
                "inloop",
                "cookie main loop",
                "sunw%debug in the loop",
                50,
                &[
                    (ArgType::Long, "loop_count"),
                    (ArgType::Long, "total_iterations"),
                ],
            ),
            desc(
                "end",
                "cookie main",
                "sunw%debug 'at the end'; XYZ%color red blue",
                60,
                &[],
            ),
            desc("outer", "work queue", "", 70, &[(ArgType::String, "what")]),
        ],
    );
    s
}

fn no_files(name: &str) -> Result<String, String> {
    Err(format!("{name}: no such file"))
}

/// Runs one line; returns (action, stdout, stderr).
fn run(s: &mut Session, line: &str) -> (Action, String, String) {
    let a = s.run(line, 1, &mut no_files);
    (a, std::mem::take(&mut s.out), std::mem::take(&mut s.err))
}

fn out(s: &mut Session, line: &str) -> String {
    let (a, o, e) = run(s, line);
    assert_eq!(a, Action::Prompt, "{line}");
    assert_eq!(e, "", "{line}");
    o
}

fn states(s: &Session) -> Vec<(bool, bool, Vec<String>)> {
    s.probes()
        .iter()
        .map(|p| (p.enabled, p.traced, p.funcs.clone()))
        .collect()
}

#[test]
fn list_probes_default_and_chosen_attributes() {
    let mut s = session();
    assert_eq!(
        out(&mut s, "list probes $all"),
        "name=inloop enable=off trace=on file=cookie2.c line=50 funcs=<no value> \n\
         name=end enable=off trace=on file=cookie2.c line=60 funcs=<no value> \n\
         name=outer enable=off trace=on file=cookie2.c line=70 funcs=<no value> \n"
    );
    assert_eq!(
        out(&mut s, "list name keys probes main"),
        "name=inloop keys=cookie main loop \nname=end keys=cookie main \n"
    );
    assert_eq!(
        out(&mut s, "list slots /%/ probes name=/loop/"),
        "slots=loop_count total_iterations sunw%debug=in the loop \n"
    );
    assert_eq!(out(&mut s, "list object nothing probes 'end'"), "");
    assert_eq!(
        out(&mut s, "list object nothing probes name='end'"),
        "object=COOKIE2.EXE <no attr> \n"
    );
    // An empty exprlist selects nothing.
    assert_eq!(out(&mut s, "list probes"), "");
}

#[test]
fn enable_disable_trace_untrace_by_name_regex_keys_and_attrs() {
    let mut s = session();
    out(&mut s, "enable name=/^in/");
    assert!(states(&s)[0].0);
    assert!(!states(&s)[1].0);
    // A bare spec is keys=spec: "queue" is one of outer's keys.
    out(&mut s, "enable queue");
    assert!(states(&s)[2].0);
    out(&mut s, "disable $all");
    assert!(states(&s).iter().all(|p| !p.0));
    // The union: keys matching /ain/ or name == outer.
    out(&mut s, "enable /ain/ name=outer");
    assert!(states(&s).iter().all(|p| p.0));
    out(&mut s, "untrace 'sunw%debug'='at the end'");
    assert_eq!(
        states(&s).iter().map(|p| p.1).collect::<Vec<_>>(),
        [true, false, true]
    );
    // Vendor attributes: each blank-separated value matches alone.
    out(&mut s, "disable XYZ%color=blue");
    assert_eq!(
        states(&s).iter().map(|p| p.0).collect::<Vec<_>>(),
        [true, false, true]
    );
    // The state attributes are matchable too.
    out(&mut s, "trace 'trace'='off'");
    assert!(states(&s).iter().all(|p| p.1));
    out(&mut s, "disable 'enable'='on' file=/2\\.c$/ line=/^7/");
    assert!(states(&s).iter().all(|p| !p.0));
    // Regex on slots.
    out(&mut s, "enable slots=/iter/");
    assert_eq!(
        states(&s).iter().map(|p| p.0).collect::<Vec<_>>(),
        [true, false, false]
    );
    out(&mut s, "untrace object=COOKIE2.EXE");
    assert!(states(&s).iter().all(|p| !p.1));
}

#[test]
fn sets_are_reevaluated_at_each_use() {
    let mut s = session();
    out(&mut s, "create $on 'enable'='on'");
    out(&mut s, "create $loopy name=/loop/ name=end");
    assert_eq!(
        out(&mut s, "list sets"),
        "$all 'keys'=/.*/\n$loopy 'name'=/loop/ 'name'='end'\n$on 'enable'='on'\n"
    );
    assert_eq!(out(&mut s, "list name probes $on"), "");
    out(&mut s, "enable $loopy");
    assert_eq!(
        out(&mut s, "list name probes $on"),
        "name=inloop \nname=end \n"
    );
    // Redefining replaces the set.
    out(&mut s, "create $loopy name=outer");
    out(&mut s, "enable $loopy");
    assert_eq!(
        out(&mut s, "list name probes $on"),
        "name=inloop \nname=end \nname=outer \n"
    );
    let (a, o, e) = run(&mut s, "enable $nosuch");
    assert_eq!(
        (a, o.as_str(), e.as_str()),
        (Action::Prompt, "", "prex: set $nosuch not defined\n")
    );
}

#[test]
fn functions_connect_clear_and_create() {
    let mut s = session();
    assert_eq!(out(&mut s, "list fcns"), "&debug     tnf_probe_debug\n");
    out(&mut s, "connect &debug name=inloop");
    assert_eq!(states(&s)[0].2, ["debug"]);
    assert!(!s.probes()[0].debugs(), "a disabled probe calls nothing");
    out(&mut s, "enable name=inloop");
    assert!(s.probes()[0].debugs() && s.probes()[0].records());
    assert_eq!(
        out(&mut s, "list name funcs probes funcs='&debug'"),
        "name=inloop funcs=&debug \n"
    );
    out(&mut s, "create &mine my_entry");
    assert_eq!(
        out(&mut s, "list fcns"),
        "&debug     tnf_probe_debug\n&mine      my_entry\n"
    );
    out(&mut s, "connect &mine $all");
    assert_eq!(states(&s)[0].2, ["debug", "mine"]);
    out(&mut s, "clear $all");
    assert!(states(&s).iter().all(|p| p.2.is_empty()));
    let (_, _, e) = run(&mut s, "connect &nosuch $all");
    assert_eq!(e, "prex: function &nosuch not defined\n");
}

#[test]
fn history_lists_and_replays_on_new_probes() {
    let mut s = session();
    out(&mut s, "enable name=/loop/ keys=queue");
    out(&mut s, "untrace $all");
    out(&mut s, "connect &debug 'outer'");
    out(&mut s, "create $x name=end"); // not a probe command: not in history
    assert_eq!(
        out(&mut s, "list history"),
        "[0] enable 'name'=/loop/ 'keys'='queue'\n[1] untrace $all\n[2] connect &debug 'keys'='outer'\n"
    );
    // A module loaded later gets the same treatment.
    let first = s.add_probes("LATE.DLL", [desc("late_loop", "late", "", 1, &[])]);
    let late = &s.probes()[first];
    assert!(late.enabled && !late.traced);
    assert_eq!(late.object, "LATE.DLL");
}

#[test]
fn list_values_tracefile_help_continue_quit() {
    let mut s = session();
    assert_eq!(
        out(&mut s, "list values keys"),
        "keys =\n\tcookie\n\tloop\n\tmain\n\tqueue\n\twork\n"
    );
    assert_eq!(
        out(&mut s, "list values /color/ line"),
        "XYZ%color =\n\tblue\n\tred\nline =\n\t50\n\t60\n\t70\n"
    );
    assert_eq!(
        out(&mut s, "list tracefile"),
        "Current trace file is: trace-42\n"
    );
    assert!(
        out(&mut s, "help")
            .contains("Topics: intro functions kernel_mode probe_spec processes set_spec")
    );
    for topic in [
        "intro",
        "functions",
        "kernel_mode",
        "probe_spec",
        "processes",
        "set_spec",
        "enable",
        "list",
        "quit",
    ] {
        assert!(!out(&mut s, &format!("help {topic}")).is_empty(), "{topic}");
    }
    assert_eq!(
        run(&mut s, "help nosuch").2,
        "prex: no help for \"nosuch\"\n"
    );
    assert_eq!(run(&mut s, "continue").0, Action::Continue);
    assert_eq!(run(&mut s, "quit").0, Action::Quit(QuitMode::Default));
    assert_eq!(run(&mut s, "quit kill").0, Action::Quit(QuitMode::Kill));
    assert_eq!(run(&mut s, "quit resume").0, Action::Quit(QuitMode::Resume));
    assert_eq!(
        run(&mut s, "quit suspend").0,
        Action::Quit(QuitMode::Suspend)
    );
    // Kernel commands are refused in user mode.
    assert!(run(&mut s, "ktrace on").2.contains("kernel mode"));
}

#[test]
fn syntax_errors_are_reported_and_prex_goes_on() {
    let mut s = session();
    let script = "\
enable name=inloop # a comment
frobnicate $all
enable name=
list probes name=/[unclosed/
enable @
list name \\
  probes name=end
disable 'enable'=on
";
    let a = s.run(script, 1, &mut no_files);
    assert_eq!(a, Action::Prompt);
    assert_eq!(
        std::mem::take(&mut s.err),
        "prex: syntax error, line 2\n\
         prex: syntax error, line 3\n\
         prex: bad regular expression /[unclosed/: [ without ], line 4\n\
         prex: syntax error, line 5\n\
         prex: syntax error, line 8\n"
    );
    // Line 6-7 (a continued line) ran; line 1 enabled inloop.
    assert_eq!(std::mem::take(&mut s.out), "name=end \n");
    assert!(s.probes()[0].enabled);
}

#[test]
fn source_runs_files_and_stops_at_continue() {
    let mut files = BTreeMap::new();
    files.insert(
        "setup.prex",
        "create $l name=/loop/\nenable $l\nsource 'inner'\n",
    );
    files.insert("inner", "connect &debug $l\ncontinue\nenable $all\n");
    files.insert("self", "source self\n");
    let mut loader = |name: &str| {
        files
            .get(name)
            .map(|s| s.to_string())
            .ok_or_else(|| "no such file".to_string())
    };
    let mut s = session();
    assert_eq!(
        s.run("source 'setup.prex'", 1, &mut loader),
        Action::Continue
    );
    assert_eq!(states(&s)[0], (true, true, vec!["debug".to_string()]));
    assert!(!states(&s)[1].0, "lines after continue did not run");
    assert_eq!(s.run("source nothere", 1, &mut loader), Action::Prompt);
    assert_eq!(
        std::mem::take(&mut s.err),
        "prex: cannot open nothere: no such file\n"
    );
    assert_eq!(s.run("source self", 1, &mut loader), Action::Prompt);
    assert!(s.err.contains("nested deeper than 16"));
}

#[test]
fn kernel_mode_buffer_ktrace_pfilter() {
    let mut s = Session::new(Mode::Kernel, "");
    assert_eq!(s.banner(), "Type \"help\" for help ...\n");
    s.add_probes("kernel", [desc("syscall_start", "syscall", "", 0, &[])]);
    assert!(!s.probes()[0].traced, "kernel probes start untraced");
    assert_eq!(
        out(&mut s, "list tracefile"),
        "There is no trace file in kernel mode!\n"
    );
    assert_eq!(out(&mut s, "buffer"), "No trace buffer allocated\n");
    assert!(run(&mut s, "ktrace on").2.contains("no trace buffer"));
    assert_eq!(
        out(&mut s, "buffer alloc 2m"),
        "Buffer of size 2097152 bytes allocated\n"
    );
    assert_eq!(
        run(&mut s, "buffer alloc").2,
        "There is already a buffer allocated\n"
    );
    assert_eq!(
        out(&mut s, "buffer"),
        "Trace buffer size is 2097152 bytes\n"
    );
    out(&mut s, "trace syscall");
    out(&mut s, "enable syscall");
    assert!(s.probes()[0].records());
    out(&mut s, "ktrace on");
    assert_eq!(out(&mut s, "ktrace"), "Tracing is on\n");
    assert!(run(&mut s, "buffer dealloc").2.contains("ktrace off"));
    out(&mut s, "ktrace off");
    assert_eq!(out(&mut s, "buffer dealloc"), "buffer deallocated\n");
    out(&mut s, "pfilter add 408,12");
    assert_eq!(
        out(&mut s, "pfilter"),
        "Process filtering is off\nProcess filter set is {12, 408}\n"
    );
    out(&mut s, "pfilter on");
    out(&mut s, "pfilter delete 12");
    assert_eq!(
        out(&mut s, "pfilter"),
        "Process filtering is on\nProcess filter set is {408}\n"
    );
    assert!(
        run(&mut s, "pfilter delete 5")
            .2
            .contains("not in the process filter set")
    );
    assert_eq!(
        run(&mut s, "continue").0,
        Action::Continue,
        "continue resumes prex -k's workload (the caller's call)"
    );
    assert!(
        run(&mut s, "quit kill")
            .2
            .contains("invalid in kernel mode")
    );
    out(&mut s, "buffer alloc 1m");
    assert_eq!(run(&mut s, "buffer dealloc").1, "buffer deallocated\n");
    assert!(
        run(&mut s, "buffer alloc 100k")
            .2
            .contains("smaller than 128 KB")
    );
    assert!(
        run(&mut s, "buffer alloc 64m")
            .2
            .contains("half of physical memory")
    );
    assert_eq!(run(&mut s, "quit").0, Action::Quit(QuitMode::Default));
}

/// The statement forms and lexical rules the tests above leave out:
/// `trace $set`, `clear <exprlist>`, `pfilter off`, `\/` in a regex, a
/// keyword quoted to be a value, IDENT characters `.` and `%`, scaled
/// integers with `K`/`M`, the man page's `trace foobar='on'` (an attribute
/// no probe has selects nothing), `list history` after every kind of
/// recorded command, and prex going on after each error.
#[test]
fn the_remaining_statement_forms() {
    let mut s = session();
    s.add_probes(
        "COOKIE2.EXE",
        [desc("path", "io", "XYZ%dir /usr/lib; XYZ%mode on", 80, &[])],
    );
    out(&mut s, "untrace $all");
    out(&mut s, "create $io keys=io");
    out(&mut s, "trace $io");
    assert_eq!(
        states(&s).iter().map(|p| p.1).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    // A slash inside a regex, escaped.
    out(&mut s, "enable XYZ%dir=/^\\/usr\\//");
    assert!(s.probes()[3].enabled);
    // `on` is a keyword: as a value it must be quoted.
    assert_eq!(
        run(&mut s, "disable XYZ%mode=on").2,
        "prex: syntax error, line 1\n"
    );
    assert!(s.probes()[3].enabled, "the bad line changed nothing");
    out(&mut s, "disable XYZ%mode='on'");
    assert!(!s.probes()[3].enabled);
    // An attribute no probe has selects nothing.
    out(&mut s, "trace foobar='on'");
    assert!(!s.probes()[0].traced);
    // clear with an exprlist: only the selected probes lose &debug.
    out(&mut s, "connect &debug $all");
    out(&mut s, "clear name=inloop /queue/");
    assert_eq!(
        states(&s).iter().map(|p| p.2.len()).collect::<Vec<_>>(),
        [0, 1, 0, 1]
    );
    assert_eq!(
        out(&mut s, "list history"),
        "[0] untrace $all\n\
         [1] trace $io\n\
         [2] enable 'XYZ%dir'=/^\\/usr\\//\n\
         [3] disable 'XYZ%mode'='on'\n\
         [4] trace 'foobar'='on'\n\
         [5] connect &debug $all\n\
         [6] clear 'name'='inloop' 'keys'=/queue/\n"
    );
    // The history replayed on a later probe ends as the commands left it.
    let i = s.add_probes(
        "LATE.DLL",
        [desc("late", "queue io", "XYZ%dir /usr/lib", 1, &[])],
    );
    let late = &s.probes()[i];
    assert_eq!(
        (late.enabled, late.traced, late.funcs.len()),
        (true, true, 0),
        "untraced, traced by $io, enabled by XYZ%dir, cleared by /queue/"
    );

    // Kernel mode: pfilter off and scaled sizes.
    let mut k = Session::new(Mode::Kernel, "");
    out(&mut k, "pfilter add 7");
    out(&mut k, "pfilter on");
    out(&mut k, "pfilter off");
    assert_eq!(
        out(&mut k, "pfilter"),
        "Process filtering is off\nProcess filter set is {7}\n"
    );
    assert_eq!(
        out(&mut k, "buffer alloc 512K"),
        "Buffer of size 524288 bytes allocated\n"
    );
    out(&mut k, "buffer dealloc");
    assert_eq!(
        out(&mut k, "buffer alloc 1M"),
        "Buffer of size 1048576 bytes allocated\n"
    );
    assert_eq!(out(&mut k, "ktrace"), "Tracing is off\n");
    // A kernel-mode syntax error, then prex goes on.
    assert_eq!(
        run(&mut k, "ktrace maybe").2,
        "prex: syntax error, line 1\n"
    );
    assert_eq!(out(&mut k, "ktrace"), "Tracing is off\n");
}
