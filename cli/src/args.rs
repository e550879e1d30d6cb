//! The OS/2 spellings of the command line, translated to clap's before
//! clap parses (the one argument layer of every subcommand is clap's; see
//! `main.rs`).
//!
//! The OS/2 tools took switches such as `/M=FILE`, `/W2`, `/T=DIR`,
//! `/C=DEST` (case-insensitive, `/` or `-`). Each subcommand that mirrors
//! such a tool has a table here mapping them to its long options:
//! `trcust X.TSF /M=X.MAP /W1` parses as `trcust X.TSF --map=X.MAP --warn=1`.
//!
//! An argument is a path, never a switch, when it comes after `--`, when
//! it starts with `/` and names an existing file or directory, or when it
//! starts with `/` and has another `/` before any `=` (`/home/user/x.TDF`:
//! no OS/2 switch has one). For `run`, the first argument
//! that is not an option or an option's value is PROGRAM: a `--` is put
//! before it so that everything from PROGRAM on goes to the program.

use std::ffi::OsString;
use std::path::Path;

/// The result of translating one subcommand's switch.
enum Switch {
    /// The clap spelling (one argument).
    Long(String),
    /// Not one of this command's switches.
    Unknown,
}

/// Translates the OS/2 spellings in `args` (the whole command line, the
/// program name first).
///
/// # Errors
/// A `/`-switch the subcommand does not know, as a clap usage error
/// (exit 2).
pub fn translate(cli: &clap::Command, args: Vec<OsString>) -> Result<Vec<OsString>, clap::Error> {
    let Some(name) = args.get(1).and_then(|a| a.to_str()).map(str::to_string) else {
        return Ok(args);
    };
    let Some(sub) = cli.find_subcommand(&name) else {
        return Ok(args);
    };
    let mut out: Vec<OsString> = args[..2].to_vec();
    let mut rest = args[2..].iter().cloned().peekable();
    // A nested subcommand (`dtrace BUILDTDF`, `tdf verify`) keeps its table.
    let mut table_owner = name.clone();
    let mut cur = sub;
    if let Some(word) = rest.peek().and_then(|a| a.to_str())
        && let Some(nested) = sub
            .get_subcommands()
            .find(|s| s.get_name().eq_ignore_ascii_case(word))
    {
        table_owner = format!("{name} {}", nested.get_name());
        out.push(nested.get_name().into());
        cur = nested;
        rest.next();
    }
    let rest: Vec<OsString> = rest.collect();
    if name == "run" {
        return Ok(translate_run(sub, out, rest));
    }
    // Positionals from the first /path on: they go after a `--` at the
    // end, in order, so that clap never reads them as options.
    let mut late: Option<Vec<OsString>> = None;
    let mut value_next = false;
    let mut rest = rest.into_iter();
    while let Some(arg) = rest.next() {
        let Some(text) = arg.to_str() else {
            push_positional(&mut out, &mut late, arg);
            continue;
        };
        if value_next {
            value_next = false;
            out.push(arg);
            continue;
        }
        if text == "--" {
            out.push(arg);
            out.extend(late.take().unwrap_or_default());
            out.extend(rest);
            return Ok(out);
        }
        if let Some(long) = text.strip_prefix("--") {
            value_next = !long.contains('=') && takes_value(cur, |a| a.get_long() == Some(long));
            out.push(arg);
            continue;
        }
        if let Some(c) = text
            .strip_prefix('-')
            .filter(|s| s.len() == 1)
            .and_then(|s| s.chars().next())
            && cur.get_arguments().any(|a| a.get_short() == Some(c))
        {
            value_next = takes_value(cur, |a| a.get_short() == Some(c));
            out.push(arg);
            continue;
        }
        let Some(body) = switch_body(text) else {
            push_positional(&mut out, &mut late, arg);
            continue;
        };
        match switch(&table_owner, body) {
            Some(Switch::Long(long)) if !is_path(text) => out.push(long.into()),
            Some(_) | None if is_path(text) || looks_like_path(text) => {
                // A path given where a switch could be.
                late.get_or_insert_with(Vec::new).push(arg);
            }
            Some(Switch::Unknown) => {
                // TRCUST's own rule: an unknown switch is reported and ignored.
                out.push(format!("--invalid={text}").into());
            }
            _ => {
                return Err(clap::Error::raw(
                    clap::error::ErrorKind::UnknownArgument,
                    format!(
                        "unknown switch '{text}' for 'os2trace {table_owner}' (a path? put it after --)\n"
                    ),
                ));
            }
        }
    }
    if let Some(late) = late {
        out.push("--".into());
        out.extend(late);
    }
    Ok(out)
}

fn push_positional(out: &mut Vec<OsString>, late: &mut Option<Vec<OsString>>, arg: OsString) {
    match late {
        Some(l) => l.push(arg),
        None => out.push(arg),
    }
}

/// The switch without its `/` or single `-` (None: not an OS/2 switch).
fn switch_body(text: &str) -> Option<&str> {
    if text.starts_with("--") || text == "-" || text == "/" {
        return None;
    }
    text.strip_prefix('/').or_else(|| text.strip_prefix('-'))
}

/// Whether `text` names an existing file or directory by a `/` path.
fn is_path(text: &str) -> bool {
    text.starts_with('/') && Path::new(text).exists()
}

/// `/dir/name`: a path (maybe one to create), not a switch, since no
/// OS/2 switch has a `/` before its `=`.
fn looks_like_path(text: &str) -> bool {
    text.strip_prefix('/').is_some_and(|body| {
        body.split('=')
            .next()
            .is_some_and(|name| name.contains('/'))
    })
}

/// One subcommand's switch table. `body` is the switch without `/`.
fn switch(command: &str, body: &str) -> Option<Switch> {
    let up = body.to_ascii_uppercase();
    let value = || body.split_once('=').map_or("", |(_, v)| v);
    let long = |name: &str| Some(Switch::Long(format!("--{name}={}", value())));
    let flag = |name: &str| Some(Switch::Long(format!("--{name}")));
    match command {
        "trcust" => Some(match up.as_str() {
            _ if up.starts_with("M=") => return long("map"),
            _ if up.starts_with("C=") => return long("combine"),
            _ if up.starts_with("L=") => return long("load-module"),
            "W0" | "W1" | "W2" => Switch::Long(format!("--warn={}", &up[1..])),
            "D" => return flag("duplicates"),
            "NODE" => return flag("no-debug"),
            "NOLN" => return flag("no-lines"),
            "RP" => return flag("retep-pascal"),
            "I" => return flag("ignore-case"),
            "P" => return flag("keep-path"),
            "RAS" => return flag("ras"),
            "H" | "?" => return flag("help"),
            _ if up.starts_with("RM")
                && up.len() == 3
                && (b'0'..=b'7').contains(&up.as_bytes()[2]) =>
            {
                Switch::Long(format!("--retep-mask={}", &up[2..]))
            }
            _ if up.starts_with("RS")
                && up.len() > 2
                && up[2..].bytes().all(|b| b.is_ascii_digit()) =>
            {
                Switch::Long(format!("--retep-range={}", &up[2..]))
            }
            _ => Switch::Unknown,
        }),
        "dtrace buildtdf" => match up.as_str() {
            _ if up.starts_with("M=") => long("major"),
            _ if up.starts_with("N=") => long("name"),
            _ if up.starts_with("I=") => long("id"),
            "Q" => flag("quiet"),
            "H" | "?" => flag("help"),
            _ => None,
        },
        "tdf verify" => match up.as_str() {
            _ if up.starts_with("M=") => long("map"),
            "H" | "?" => flag("help"),
            _ => None,
        },
        "tdf list" => match up.as_str() {
            _ if up.starts_with("M=") => long("map"),
            _ if up.starts_with("T=") => long("tff"),
            "H" | "?" => flag("help"),
            _ => None,
        },
        "export" | "browse" => match up.as_str() {
            _ if up.starts_with("T=") => long("tff"),
            "H" | "?" => flag("help"),
            _ => None,
        },
        "tracefmt" => match up.as_str() {
            _ if up.starts_with("T=") => long("tff"),
            "H" | "?" => flag("help"),
            _ => None,
        },
        "exehdr" => match up.as_str() {
            "JSON" => flag("json"),
            "H" | "?" => flag("help"),
            _ => None,
        },
        // Commands without OS/2 switches: single-dash options are clap's.
        _ => match body {
            "?" => flag("help"),
            _ if text_is_clap_short(body) => Some(Switch::Long(format!("-{body}"))),
            _ => None,
        },
    }
}

/// `-f`, `-o`, `-h`, `-V`: a clap short option, left alone.
fn text_is_clap_short(body: &str) -> bool {
    body.len() == 1 || (body.len() > 1 && body.as_bytes()[1] == b'=')
}

/// `run`: `--spool DIR /F2 /T5` (TRSPOOL's options follow DIR), `--tracefmt
/// DIR` (an optional value, taken when it is an existing directory), and
/// `--` put before PROGRAM.
fn translate_run(
    sub: &clap::Command,
    mut out: Vec<OsString>,
    rest: Vec<OsString>,
) -> Vec<OsString> {
    let mut it = rest.into_iter().peekable();
    while let Some(arg) = it.next() {
        let text = arg.to_str().unwrap_or("").to_string();
        if text == "--" {
            out.push(arg);
            out.extend(it);
            return out;
        }
        if text == "--tracefmt" {
            let next = it.peek().and_then(|a| a.to_str()).map(str::to_string);
            match next {
                Some(dir) if !dir.starts_with('-') && Path::new(&dir).is_dir() && it.len() > 1 => {
                    out.push(format!("--tracefmt={dir}").into());
                    it.next();
                }
                _ => out.push(arg),
            }
            continue;
        }
        if text == "--spool" {
            out.push(arg);
            if let Some(dir) = it.next() {
                out.push(dir);
            }
            while let Some(opt) = it.peek().and_then(|a| a.to_str()) {
                if !opt.starts_with('/') || is_path(opt) {
                    break;
                }
                out.push(format!("--spool-opt={opt}").into());
                it.next();
            }
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            out.push(arg.clone());
            if !long.contains('=')
                && takes_value(sub, |a| a.get_long() == Some(long))
                && let Some(v) = it.next()
            {
                out.push(v);
            }
            continue;
        }
        if let Some(short) = text.strip_prefix('-').filter(|s| s.len() == 1) {
            let c = short.chars().next().unwrap_or(' ');
            out.push(arg.clone());
            if takes_value(sub, |a| a.get_short() == Some(c))
                && let Some(v) = it.next()
            {
                out.push(v);
            }
            continue;
        }
        // PROGRAM: it and what follows go to the program.
        out.push("--".into());
        out.push(arg);
        out.extend(it);
        return out;
    }
    out
}

fn takes_value(sub: &clap::Command, which: impl Fn(&clap::Arg) -> bool) -> bool {
    sub.get_arguments().find(|a| which(a)).is_some_and(|a| {
        a.get_action().takes_values() && a.get_num_args().is_none_or(|n| n.min_values() > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn tr(args: &[&str]) -> Vec<String> {
        let v: Vec<OsString> = std::iter::once("os2trace")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        translate(&crate::Cli::command(), v)
            .unwrap()
            .into_iter()
            .skip(1)
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn trcust_switches_become_long_options() {
        assert_eq!(
            tr(&[
                "trcust", "X.TSF", "/m=x.map", "/W1", "-RM4", "/RS100", "/I", "/bogus"
            ]),
            [
                "trcust",
                "X.TSF",
                "--map=x.map",
                "--warn=1",
                "--retep-mask=4",
                "--retep-range=100",
                "--ignore-case",
                "--invalid=/bogus"
            ]
        );
        assert_eq!(
            tr(&["trcust", "X.TCF", "/C=Y.TFF"]),
            ["trcust", "X.TCF", "--combine=Y.TFF"]
        );
    }

    #[test]
    fn paths_are_never_switches() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.TDF");
        let out = out.to_str().unwrap();
        assert_eq!(
            tr(&["trcust", "X.TSF", out, "/M=X.MAP"]),
            ["trcust", "X.TSF", "--map=X.MAP", "--", out]
        );
        assert_eq!(
            tr(&["trcust", "X.TSF", "--", "/M=X"]),
            ["trcust", "X.TSF", "--", "/M=X"]
        );
        let tmp = std::env::temp_dir();
        let tmp = tmp.to_str().unwrap();
        assert_eq!(tr(&["tdf", "verify", tmp]), ["tdf", "verify", "--", tmp]);
    }

    #[test]
    fn nested_commands_and_other_tables() {
        assert_eq!(
            tr(&["dtrace", "BUILDTDF", "a.rpn", "/m=5", "/q"]),
            ["dtrace", "buildtdf", "a.rpn", "--major=5", "--quiet"]
        );
        assert_eq!(tr(&["tracefmt", "S", "/t=d"]), ["tracefmt", "S", "--tff=d"]);
        assert_eq!(
            tr(&["tdf", "verify", "A", "B", "/M=m"]),
            ["tdf", "verify", "A", "B", "--map=m"]
        );
        let bad = translate(
            &crate::Cli::command(),
            ["os2trace", "tracefmt", "S", "/X"]
                .map(OsString::from)
                .to_vec(),
        );
        assert!(bad.is_err());
    }

    #[test]
    fn run_puts_dashes_before_program() {
        assert_eq!(
            tr(&["run", "--root", "r", "--api-log", "P.EXE", "--root", "/x"]),
            [
                "run",
                "--root",
                "r",
                "--api-log",
                "--",
                "P.EXE",
                "--root",
                "/x"
            ]
        );
        assert_eq!(
            tr(&["run", "--spool", "d", "/F2", "/T5", "--query", "P.EXE"]),
            [
                "run",
                "--spool",
                "d",
                "--spool-opt=/F2",
                "--spool-opt=/T5",
                "--query",
                "--",
                "P.EXE"
            ]
        );
        let tmp = std::env::temp_dir();
        let tmp = tmp.to_str().unwrap();
        assert_eq!(
            tr(&["run", "--tracefmt", tmp, "P.EXE"]),
            ["run", &format!("--tracefmt={tmp}"), "--", "P.EXE"]
        );
        assert_eq!(
            tr(&["run", "--tracefmt", "P.EXE"]),
            ["run", "--tracefmt", "--", "P.EXE"]
        );
    }
}
