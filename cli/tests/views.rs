//! The views over the demo's traces: `tdf list`, `tracefmt` filters and
//! JSON, the TFF hint, `export --perfetto|--chrome|--svg` (the Perfetto
//! file decoded with Perfetto's own schema from the `perfetto` Python
//! package) and `browse` driven through tmux.

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{os2trace, stdout as text};

/// The demo's run: TPDLL16 traced by its TDF (minors 2-4: not DLLINIT,
/// so the numbers below stay those of the calls), DLLCAL16 by its trace
/// program, saved to T.SAV; six records, majors C2 and C4.
fn demo_trace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    text(&os2trace(dir.path(), &["testprogs", "build", "."]));
    text(&os2trace(
        dir.path(),
        &["trcust", "TPDLL16.TSF", "/M=TPDLL16.MAP"],
    ));
    text(&os2trace(
        dir.path(),
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16.TDF(2-4)",
            "--apply",
            "DLLCAL16.RPN",
            "--save",
            "T.SAV",
            "DLLCAL16.EXE",
        ],
    ));
    dir
}

/// Prints a skip notice on stderr itself (past the harness's capture).
fn skipped(why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

#[test]
fn tdf_list_joins_tdf_tff_and_map() {
    let dir = demo_trace();
    let out = text(&os2trace(
        dir.path(),
        &["tdf", "list", "TPDLL16.TDF", "/T=.", "/M=TPDLL16.MAP"],
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    // Minor, address, the MAP symbol (+offset inside PUTMSG) and the DESC.
    for (line, want) in lines.iter().zip([
        [
            "00C2/0001",
            "0001:00000000",
            "DLLINIT ",
            "TPDLL16 init: module handle",
        ],
        [
            "00C2/0002",
            "0001:00000012",
            "ADDNUMS ",
            "TPDLL16 ADDNUMS arguments",
        ],
        [
            "00C2/0003",
            "0001:00000043",
            "PUTMSG+0x24",
            "TPDLL16 PUTMSG string",
        ],
        [
            "00C2/0004",
            "0001:0000004E",
            "GETCOUNT ",
            "TPDLL16 GETCOUNT entered",
        ],
    ]) {
        assert!(line.starts_with("TPDLL16 "), "{line}");
        for w in want {
            assert!(line.contains(w), "{line} lacks {w}");
        }
    }
    // A pattern over the DESC, a TFF named directly, JSON.
    let out = text(&os2trace(
        dir.path(),
        &[
            "tdf",
            "list",
            "TPDLL16.TDF",
            "TRC00C2.TFF",
            "/M=TPDLL16.MAP",
            "*string*",
            "--json",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["minor"], 3);
    assert_eq!(v["symbol"], "PUTMSG");
    assert_eq!(v["symbol_offset"], 0x24);
    assert_eq!(v["desc"], "TPDLL16 PUTMSG string");
    // A pattern over symbol names; none matching exits 1.
    let out = text(&os2trace(
        dir.path(),
        &["tdf", "list", "TPDLL16.TDF", "/M=TPDLL16.MAP", "get*"],
    ));
    assert!(
        out.contains("GETCOUNT") && out.lines().count() == 1,
        "{out}"
    );
    let none = os2trace(dir.path(), &["tdf", "list", "TPDLL16.TDF", "nothing*"]);
    assert_eq!(none.status.code(), Some(1));
    // No TFF for the major in the directory: a hint.
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let out = os2trace(dir.path(), &["tdf", "list", "TPDLL16.TDF", "/T=empty"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no TFF found for major 00C2 in empty"));
}

/// The sequence numbers `tracefmt --raw` prints with these options.
fn seqs(dir: &Path, opts: &[&str]) -> Vec<usize> {
    let mut args = vec!["tracefmt", "T.SAV", "/T=.", "--raw"];
    args.extend_from_slice(opts);
    text(&os2trace(dir, &args))
        .lines()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn filters_select_exactly_the_right_records() {
    let dir = demo_trace();
    let d = dir.path();
    // seq: 1 C2/3, 2 C4/1, 3 C2/2, 4 C4/2, 5 C2/4, 6 C4/3, all PID 1.
    assert_eq!(seqs(d, &[]), [1, 2, 3, 4, 5, 6]);
    assert_eq!(seqs(d, &["--major", "00C2"]), [1, 3, 5]);
    assert_eq!(seqs(d, &["--major", "c4", "--minor", "1,3"]), [2, 6]);
    assert_eq!(seqs(d, &["--minor", "2"]), [3, 4]);
    assert_eq!(seqs(d, &["--pid", "1"]), [1, 2, 3, 4, 5, 6]);
    assert!(seqs(d, &["--pid", "2"]).is_empty());
    assert_eq!(seqs(d, &["--from", "2", "--to", "4"]), [2, 3, 4]);
    assert_eq!(
        seqs(d, &["--from", "12:00:00.00", "--to", "5"]),
        [1, 2, 3, 4, 5]
    );
    assert!(seqs(d, &["--from", "12:00:00.01"]).is_empty());
    // The PUTMSG string of record 1 names ADDNUMS too.
    assert_eq!(seqs(d, &["--grep", "addnums"]), [1, 3]);
    assert_eq!(seqs(d, &["--grep", "ADDNUMS ARG"]), [3]);
    assert_eq!(seqs(d, &["--grep", "ret=000F:0015"]), [3]);
    // Hex of an unformatted record is searched too.
    assert_eq!(seqs(d, &["--grep", "0500", "--major", "C4"]), [4]);
    // Formatted output keeps the whole trace's numbers.
    let out = text(&os2trace(d, &["tracefmt", "T.SAV", "/T=.", "--minor", "2"]));
    assert!(
        out.contains("    3  12:00:00.00  MAJ=00C2 MIN=0002"),
        "{out}"
    );
    assert!(
        out.contains("    4  12:00:00.00  MAJ=00C4 MIN=0002"),
        "{out}"
    );
    assert!(!out.contains("MIN=0001"), "{out}");
    let bad = os2trace(d, &["tracefmt", "T.SAV", "--from", "soon"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn json_carries_decoded_fields_and_the_hint_names_the_major() {
    let dir = demo_trace();
    let out = os2trace(dir.path(), &["tracefmt", "T.SAV", "/T=.", "--json"]);
    let stdout = text(&out);
    let recs: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 6);
    let add = &recs[2];
    assert_eq!(add["major"], 0xC2);
    assert_eq!(add["minor"], 2);
    assert_eq!(add["data"], "00080015000f0003000200");
    assert_eq!(add["desc"], "TPDLL16 ADDNUMS arguments");
    assert_eq!(
        add["lines"],
        serde_json::json!(["ret=000F:0015 b=0003 a=0002"])
    );
    assert_eq!(
        add["fields"],
        serde_json::json!([
            {"name": "ret", "control": "A", "value": "000F:0015"},
            {"name": "b", "control": "W", "value": "0003"},
            {"name": "a", "control": "W", "value": "0002"},
        ])
    );
    let put = &recs[0];
    assert_eq!(put["fields"][1]["name"], "string");
    assert_eq!(put["fields"][1]["control"], "S");
    assert!(
        put["fields"][1]["value"]
            .as_str()
            .unwrap()
            .starts_with("DLLCAL16 calls TPDLL16")
    );
    // No rule for the trace program's major: raw fields only.
    assert!(recs[1].get("fields").is_none());
    // Formatted output says why C4 prints as hex.
    let out = os2trace(dir.path(), &["tracefmt", "T.SAV", "/T=."]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no TFF found for major 00C4 in ."), "{err}");
    assert!(!err.contains("00C2"), "{err}");
}

/// Runs LOOP16 traced into a 1 KB buffer that TRSPOOL empties into the
/// series SP.000 to SP.003 (`/F4`), polling every millisecond (`/T1`).
fn spool_loop16(d: &Path) -> std::process::Output {
    os2trace(
        d,
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "LOOP16.TDF",
            "--tracebuf",
            "1",
            "--spool",
            "SP",
            "/F4",
            "/T1",
            "LOOP16.EXE",
        ],
    )
}

#[test]
fn several_files_and_a_trspool_series() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    text(&os2trace(d, &["testprogs", "build", "."]));
    text(&os2trace(d, &["trcust", "LOOP16.TSF", "/M=LOOP16.MAP"]));
    let out = text(&spool_loop16(d));
    assert!(
        out.contains("4 polls, 190 records captured, 111 lost"),
        "{out}"
    );
    // Each file's sidecar counts the records lost to wraps before it: they
    // add up to TRSPOOL's total.
    let all = text(&os2trace(d, &["tracefmt", "SP", "/T=.", "--raw"]));
    let lost: u64 = all
        .lines()
        .filter(|l| l.starts_with("--- "))
        .map(|h| {
            let part = h
                .split("  ")
                .find(|p| p.ends_with(" lost to wraps before it"));
            let n = part.unwrap_or_else(|| panic!("no lost count: {h}"));
            n.split(' ').next().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(lost, 111, "{all}");
    // Remove one file of the cycle: a gap.
    std::fs::remove_file(d.join("SP/TRACEBUF.002")).unwrap();
    std::fs::remove_file(d.join("SP/TRACEBUF.002.idx")).unwrap();
    let out = text(&os2trace(d, &["tracefmt", "SP", "/T=.", "--raw"]));
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with("--- ")).collect();
    assert_eq!(headers.len(), 3, "{out}");
    assert!(headers[0].contains("TRACEBUF.000") && headers[0].contains("52 records"));
    assert!(
        headers[2].contains("TRACEBUF.003") && headers[2].contains("gap: TRACEBUF.002 missing")
    );
    let records = out.lines().filter(|l| !l.starts_with("--- ")).count();
    let total: usize = headers
        .iter()
        .map(|h| h.split("  ").find(|p| p.ends_with(" records")).unwrap())
        .map(|p| p.trim_end_matches(" records").parse::<usize>().unwrap())
        .sum();
    assert_eq!(records, total);
    // Files named one by one form the same series, whatever the order.
    let again = text(&os2trace(
        d,
        &[
            "tracefmt",
            "SP/TRACEBUF.003",
            "SP/TRACEBUF.000",
            "SP/TRACEBUF.001",
            "--raw",
        ],
    ));
    assert_eq!(again, out);
}

#[test]
fn follow_formats_spool_files_as_they_appear() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    text(&os2trace(d, &["testprogs", "build", "."]));
    text(&os2trace(d, &["trcust", "LOOP16.TSF", "/M=LOOP16.MAP"]));
    // The follower starts first, on a directory that does not exist yet.
    let follower = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(d)
        .args([
            "tracefmt",
            "--follow",
            "SP",
            "/T=.",
            "--raw",
            "--poll-ms",
            "20",
            "--idle-exit",
            "3",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    text(&spool_loop16(d));
    let followed = follower.wait_with_output().unwrap();
    let followed = text(&followed);
    // The same records, numbered the same, as reading the series after.
    let after = text(&os2trace(d, &["tracefmt", "SP", "/T=.", "--raw"]));
    assert_eq!(followed, after);
    let records = followed.lines().filter(|l| !l.starts_with("--- ")).count();
    assert_eq!(records, 190);
    assert!(followed.lines().last().unwrap().starts_with("190 "));
}

/// Decodes a Perfetto file with the schema of the `perfetto` package.
const DECODE: &str = r#"
import sys, json
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
t = pb.Trace()
t.ParseFromString(open(sys.argv[1], 'rb').read())
tracks = {}
kinds = {}
instants = []
for p in t.packet:
    if p.HasField('track_descriptor'):
        d = p.track_descriptor
        tracks[d.uuid] = {'name': d.name, 'pid': d.process.pid if d.HasField('process') else None,
                          'parent': d.parent_uuid, 'counter': d.HasField('counter')}
    elif p.HasField('track_event'):
        e = p.track_event
        k = pb.TrackEvent.Type.Name(e.type)
        kinds[k] = kinds.get(k, 0) + 1
        if e.type == pb.TrackEvent.TYPE_INSTANT:
            instants.append({'ts': p.timestamp, 'name': e.name, 'track': tracks[e.track_uuid]['name'],
                             'args': {a.name: a.string_value for a in e.debug_annotations}})
print(json.dumps({'packets': len(t.packet), 'tracks': sorted(v['name'] for v in tracks.values()),
                  'kinds': kinds, 'instants': instants}))
"#;

#[test]
fn perfetto_export_decodes_with_perfettos_schema() {
    let dir = demo_trace();
    let d = dir.path();
    text(&os2trace(
        d,
        &[
            "export",
            "T.SAV",
            "/T=.",
            "--perfetto",
            "T.pftrace",
            "--chrome",
            "T.json",
        ],
    ));
    // Chrome JSON: metadata, one instant and one counter per record.
    let chrome: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("T.json")).unwrap()).unwrap();
    let events = chrome["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    assert_eq!((count("M"), count("i"), count("C")), (3, 6, 6));
    let have = Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .output();
    if !have.is_ok_and(|o| o.status.success()) {
        skipped(
            "perfetto_export_decodes_with_perfettos_schema: python3 with the perfetto package (pip install perfetto) is not installed",
        );
        return;
    }
    // The save file's sidecar gives fine times: each hit's cost is a slice.
    let fine: Vec<serde_json::Value> = text(&os2trace(d, &["tracefmt", "T.SAV", "--json"]))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let v = decode(&d.join("T.pftrace"));
    // 1 process + 2 DTOs + 6 tracepoint counters, then per record an
    // instant, a counter step and a slice's begin and end.
    assert_eq!(v["packets"], 9 + 6 * 4);
    assert_eq!(
        v["tracks"],
        serde_json::json!([
            "DTO 00C2",
            "DTO 00C4",
            "PID 0001",
            "hits 00C2/0002",
            "hits 00C2/0003",
            "hits 00C2/0004",
            "hits 00C4/0001",
            "hits 00C4/0002",
            "hits 00C4/0003"
        ])
    );
    assert_eq!(
        v["kinds"],
        serde_json::json!({"TYPE_INSTANT": 6, "TYPE_COUNTER": 6, "TYPE_SLICE_BEGIN": 6, "TYPE_SLICE_END": 6})
    );
    let add = &v["instants"][2];
    assert_eq!(add["name"], "TPDLL16 ADDNUMS arguments");
    assert_eq!(add["track"], "DTO 00C2");
    assert_eq!(add["ts"], fine[2]["ns"]);
    assert!(add["ts"].as_u64().unwrap() > 0);
    assert_eq!(add["args"]["fmt1"], "ret=000F:0015 b=0003 a=0002");
    assert_eq!(add["args"]["field.b"], "0003");
    assert_eq!(add["args"]["seq"], "3");
    assert_eq!(add["args"]["address"], fine[2]["address"]);
    assert_eq!(v["instants"][1]["name"], "MAJ=00C4 MIN=0001");
    // `run --export` writes the same file directly.
    text(&os2trace(
        d,
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16.TDF(2-4)",
            "--apply",
            "DLLCAL16.RPN",
            "--export",
            "R.pftrace",
            "DLLCAL16.EXE",
        ],
    ));
    let r = decode(&d.join("R.pftrace"));
    assert_eq!(r["packets"], v["packets"]);
    assert_eq!(r["instants"], v["instants"]);
    // Without the sidecar: OS/2 time (12:00:00.00), no slices.
    std::fs::remove_file(d.join("T.SAV.idx")).unwrap();
    text(&os2trace(
        d,
        &["export", "T.SAV", "/T=.", "--perfetto", "N.pftrace"],
    ));
    let n = decode(&d.join("N.pftrace"));
    assert_eq!(n["packets"], 9 + 6 * 2);
    assert_eq!(
        n["kinds"],
        serde_json::json!({"TYPE_INSTANT": 6, "TYPE_COUNTER": 6})
    );
    assert_eq!(n["instants"][2]["ts"], 12u64 * 3600 * 1_000_000_000);
}

/// The decoder's summary of a Perfetto file.
fn decode(file: &Path) -> serde_json::Value {
    let out = Command::new("python3")
        .args(["-c", DECODE, file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn run_writes_the_sidecar_svg_and_follows() {
    let dir = demo_trace();
    let d = dir.path();
    // The save file is TRACEGET's, byte for byte; the sidecar is beside it.
    let save = std::fs::read(d.join("T.SAV")).unwrap();
    let side = stda::sidecar::Sidecar::parse(&std::fs::read(d.join("T.SAV.idx")).unwrap()).unwrap();
    let sf = stda::savefile::SaveFile::parse(&save).unwrap();
    let records = stda::Stda::parse(&sf.stda).unwrap().records();
    assert!(side.matches(&records));
    assert_eq!((side.logged, side.lost), (6, 0));
    assert!(
        side.entries
            .windows(2)
            .all(|w| w[0].ns < w[1].ns && w[0].cycle < w[1].cycle)
    );
    assert!(
        side.entries
            .iter()
            .all(|e| e.cost_cycles > 0 && e.cost_ns > 0 && e.tid == 1)
    );
    // --follow prints the records as they are logged, with their fine time,
    // before the program's own output that comes after them.
    let out = text(&os2trace(
        d,
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16.TDF(2-4)",
            "--apply",
            "DLLCAL16.RPN",
            "--tracefmt",
            "--follow",
            "--query",
            "--svg",
            "Q.svg",
            "DLLCAL16.EXE",
        ],
    ));
    let first = out.find("MAJ=00C2 MIN=0003").unwrap();
    let program = out.find("DLLCAL16 calls TPDLL16").unwrap();
    assert!(first < program, "{out}");
    assert_eq!(out.matches(" TID=0001").count(), 6, "{out}");
    assert!(
        out.contains(&format!("T=+0.{:06}ms", side.entries[2].ns)),
        "{out}"
    );
    // --svg draws QUERY's tracepoints: six, each hit once.
    let svg = std::fs::read_to_string(d.join("Q.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is XML");
    let hits = doc
        .descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#1F77B4"))
        .count();
    assert_eq!(hits, 6);
    assert!(svg.contains("cost per tracepoint (cycles)"));
}

#[test]
fn svg_parses_and_has_one_bar_per_tracepoint() {
    let dir = demo_trace();
    let d = dir.path();
    text(&os2trace(d, &["export", "T.SAV", "/T=.", "--svg", "T.svg"]));
    let svg = std::fs::read_to_string(d.join("T.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is XML");
    let bars = |color: &str| {
        doc.descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(color))
            .count()
    };
    // Six tracepoints logged (C2/2..4, C4/1..3): six hit bars, six cost bars.
    assert_eq!(bars("#1F77B4"), 6, "{svg}");
    assert_eq!(bars("#FF7F0E"), 6);
    assert!(svg.contains("hits per tracepoint"));
    assert!(svg.contains("00C2/0002"));
}

/// tmux on a private socket, ended when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "b"]).stdout).into_owned()
    }

    /// Waits until the screen shows `what`.
    fn wait_for(&self, what: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(what) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no '{what}' on screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "b"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

#[test]
fn browse_through_tmux() {
    if !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        skipped("browse_through_tmux: tmux is not installed");
        return;
    }
    let dir = demo_trace();
    let tmux = Tmux {
        socket: format!("os2trace-browse-{}", std::process::id()),
    };
    let bin = env!("CARGO_BIN_EXE_os2trace");
    let cmd = format!("{bin} browse T.SAV /T=.");
    let started = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "110",
        "-y",
        "30",
        "-c",
        dir.path().to_str().unwrap(),
        &cmd,
    ]);
    assert!(started.status.success(), "{started:?}");
    let s = tmux.wait_for("record 1/6 of 6");
    assert!(s.contains("os2trace browse: T.SAV"), "{s}");
    assert!(s.contains("filter: no filter"), "{s}");
    assert!(s.contains("TPDLL16 PUTMSG string"), "{s}");
    // Down twice: the detail pane shows ADDNUMS formatted.
    tmux.keys(&["j", "j"]);
    let s = tmux.wait_for("record 3/6");
    assert!(s.contains("ret=000F:0015 b=0003 a=0002"), "{s}");
    // Filter on major C4: three records, the status line says so.
    tmux.keys(&["m", "C4", "Enter"]);
    let s = tmux.wait_for("filter: major 00C4");
    assert!(s.contains("record 2/3 of 6"), "{s}");
    assert!(!s.contains("TPDLL16 PUTMSG string"), "{s}");
    // Clear, search, go to.
    tmux.keys(&["c", "/", "GETCOUNT", "Enter"]);
    let s = tmux.wait_for("record 5/6");
    assert!(s.contains("CS=DFFF"), "{s}");
    tmux.keys(&[":", "2", "Enter"]);
    tmux.wait_for("record 2/6");
    tmux.keys(&["G"]);
    tmux.wait_for("record 6/6");
    tmux.keys(&["b"]);
    tmux.wait_for("record 1/6");
    // The histogram.
    tmux.keys(&["h"]);
    let s = tmux.wait_for("histogram: hits and cost per tracepoint");
    assert!(s.contains("00C2/0003"), "{s}");
    std::fs::write(dir.path().join("screen.txt"), &s).unwrap();
    tmux.keys(&["q"]);
    let start = Instant::now();
    while tmux.cmd(&["has-session", "-t", "b"]).status.success() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "browse did not quit"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
