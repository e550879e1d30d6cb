//! Small helpers shared by the subcommands.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

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

/// Writes a file through a temporary file in the same directory and a
/// rename, so that a failure never leaves a half-written file behind.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
