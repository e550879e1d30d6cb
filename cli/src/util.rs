//! Small helpers shared by the subcommands.

/// Parses a number the OS/2 tools' way: decimal, `0x` hex or `h`-suffixed hex.
pub fn parse_u32(text: &str) -> Result<u32, String> {
    rpn_vm::source::parse_number(text.trim())
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| format!("invalid number '{text}'"))
}

/// Bytes as upper-case hex pairs separated by spaces.
pub fn hex_spaced(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A usage error found after clap parsed (a value clap cannot check, an
/// output that is also an input): exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// An error and its causes joined by `: `, each text once: a cause whose
/// text its parent already printed (an error type that both shows and
/// chains its source) is left out.
pub fn chain(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    escape_controls(&out)
}

/// Text from a guest or a file, made safe for a terminal: control
/// characters other than newline and tab are shown as `\xNN` (or `\u{..}`
/// beyond ASCII), so a module name or a program's output cannot send
/// escape sequences.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 || c as u32 == 0x7F => {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:X}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Refuses to write `output` when it is one of `inputs` (the same file,
/// by device and inode, or the same path when neither exists yet).
///
/// # Errors
/// A [`UsageError`] naming the file.
pub fn refuse_overwrite(
    output: &std::path::Path,
    inputs: &[&std::path::Path],
) -> anyhow::Result<()> {
    for input in inputs {
        if same_file(output, input) {
            return Err(UsageError(format!(
                "{} is an input of this command; refusing to write over it",
                output.display()
            ))
            .into());
        }
    }
    Ok(())
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// `os2trace manpages DIR`: one roff page for the binary and one per
/// subcommand (`os2trace-run.1`, `os2trace-tdf-verify.1`, ...).
pub fn manpages(cmd: &clap::Command, dir: &std::path::Path) -> anyhow::Result<i32> {
    use anyhow::Context;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    write_page(cmd.clone(), "os2trace", dir, &mut written)?;
    for path in written {
        println!("{}", path.display());
    }
    Ok(0)
}

fn write_page(
    cmd: clap::Command,
    name: &str,
    dir: &std::path::Path,
    written: &mut Vec<std::path::PathBuf>,
) -> anyhow::Result<()> {
    let cmd = cmd.name(name.to_string());
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    let path = dir.join(format!("{name}.1"));
    outfile::write_atomic(&path, &page)?;
    written.push(path);
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let sub_name = format!("{name}-{}", sub.get_name());
        write_page(sub.clone(), &sub_name, dir, written)?;
    }
    Ok(())
}

/// Reads a text source file (a trace program file). Text that is not
/// UTF-8 is an error at the first bad byte, as `FILE:LINE:COL` like every
/// other error in such a file.
///
/// # Errors
/// The file cannot be read or is not UTF-8.
pub fn read_source(path: &std::path::Path) -> anyhow::Result<String> {
    use anyhow::Context;
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    rpn_vm::source::decode_text(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: not UTF-8 text (byte 0x{:02X}); save the file as UTF-8",
            path.display(),
            e.line,
            e.col,
            e.byte
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that shows its source in its own text and chains it too,
    /// as `#[error("...: {source}")]` does.
    #[derive(Debug)]
    struct Both(std::io::Error);

    impl std::fmt::Display for Both {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot write X.TDF: {}", self.0)
        }
    }

    impl std::error::Error for Both {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn each_cause_is_printed_once() {
        let err = anyhow::Error::new(Both(std::io::Error::other("disk full")))
            .context("TRCUST TPDLL16.TSF");
        assert_eq!(
            chain(&err),
            "TRCUST TPDLL16.TSF: cannot write X.TDF: disk full"
        );
        let err = anyhow::anyhow!("TRACEBUF=0 is outside 1..63 (KB)")
            .context("TRACEBUF=0 is outside 1..63 (KB)");
        assert_eq!(chain(&err), "TRACEBUF=0 is outside 1..63 (KB)");
        assert_eq!(
            escape_controls("a\x1b[2Jb\n\tc\u{9b}"),
            "a\\x1B[2Jb\n\tc\\u{9B}"
        );
    }
}
