//! Readable differences between a case's artifacts and its golden files:
//! trace buffers record by record, formatted as TRACEFMT shows them; text
//! line by line.

use similar::{Algorithm, DiffOp, TextDiff, capture_diff_slices};
use stda::tracefmt::{self, Rules};
use stda::{Record, Stda};

/// How many changed lines or records a diff shows before it summarizes.
const SHOWN: usize = 40;

/// The record-level difference of two STDA buffers: which records were
/// removed (`-`), added (`+`) or changed (`~`, the golden then the new),
/// each formatted with `rules`. Records are compared by their whole bytes
/// (data, time and trailer); unchanged runs are counted, not shown.
pub fn stda(golden: &[u8], actual: &[u8], rules: &Rules) -> String {
    let (old, new) = match (Stda::parse(golden), Stda::parse(actual)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) => return format!("  the golden buffer does not parse: {e}\n"),
        (_, Err(e)) => return format!("  the new buffer does not parse: {e}\n"),
    };
    let old_records = old.records();
    let new_records = new.records();
    let key = |r: &Record| {
        (
            r.major,
            r.minor,
            r.pid,
            r.flags.bits(),
            format!("{:?}", r.time),
            r.data.clone(),
        )
    };
    let old_keys: Vec<_> = old_records.iter().map(key).collect();
    let new_keys: Vec<_> = new_records.iter().map(key).collect();
    let mut text = String::new();
    if old_records.len() != new_records.len() {
        text.push_str(&format!(
            "  {} records in the golden buffer, {} now\n",
            old_records.len(),
            new_records.len()
        ));
    }
    let mut shown = 0;
    let mut hidden = 0;
    let mut show = |text: &mut String, mark: char, records: &[Record], from: usize, len: usize| {
        for (i, r) in records.iter().enumerate().skip(from).take(len) {
            if shown >= SHOWN {
                hidden += 1;
                continue;
            }
            shown += 1;
            for (k, line) in tracefmt::format_one(rules, i + 1, r).iter().enumerate() {
                let m = if k == 0 { mark } else { ' ' };
                text.push_str(&format!("  {m} {line}\n"));
            }
        }
    };
    for op in capture_diff_slices(Algorithm::Myers, &old_keys, &new_keys) {
        match op {
            DiffOp::Equal { .. } => {}
            DiffOp::Delete {
                old_index, old_len, ..
            } => show(&mut text, '-', &old_records, old_index, old_len),
            DiffOp::Insert {
                new_index, new_len, ..
            } => show(&mut text, '+', &new_records, new_index, new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                // Changed records side by side (golden, then new), then
                // what is left over on either side.
                let pairs = old_len.min(new_len);
                for k in 0..pairs {
                    show(&mut text, '~', &old_records, old_index + k, 1);
                    show(&mut text, '>', &new_records, new_index + k, 1);
                }
                show(
                    &mut text,
                    '-',
                    &old_records,
                    old_index + pairs,
                    old_len - pairs,
                );
                show(
                    &mut text,
                    '+',
                    &new_records,
                    new_index + pairs,
                    new_len - pairs,
                );
            }
        }
    }
    if hidden > 0 {
        text.push_str(&format!("  ... and {hidden} more changed records\n"));
    }
    if text.is_empty() {
        // Same records, different bytes: the header (TRACE ON/OFF times,
        // pointers) or unused space.
        let at = golden
            .iter()
            .zip(actual)
            .position(|(a, b)| a != b)
            .unwrap_or(golden.len().min(actual.len()));
        text.push_str(&format!(
            "  the records are the same; the buffers differ first at byte {at:#06x} (header or free space)\n"
        ));
    }
    text
}

/// A unified line diff of two texts (lossy for non-UTF-8 bytes), or a
/// note on where two binary files first differ.
pub fn text(golden: &[u8], actual: &[u8]) -> String {
    let (Ok(old), Ok(new)) = (std::str::from_utf8(golden), std::str::from_utf8(actual)) else {
        let at = golden
            .iter()
            .zip(actual)
            .position(|(a, b)| a != b)
            .unwrap_or(golden.len().min(actual.len()));
        return format!(
            "  binary: {} bytes golden, {} now, first difference at byte {at}\n",
            golden.len(),
            actual.len()
        );
    };
    let diff = TextDiff::from_lines(old, new);
    let mut out = String::new();
    let mut lines = 0;
    for change in diff.iter_all_changes() {
        let mark = match change.tag() {
            similar::ChangeTag::Equal => continue,
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
        };
        lines += 1;
        if lines <= SHOWN {
            out.push_str(&format!("  {mark} {}", change.value()));
            if change.missing_newline() {
                out.push('\n');
            }
        }
    }
    if lines > SHOWN {
        out.push_str(&format!("  ... and {} more changed lines\n", lines - SHOWN));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_diff_marks_removed_and_added_lines() {
        let d = text(b"a\nb\nc\n", b"a\nB\nc\nd");
        assert_eq!(d, "  - b\n  + B\n  + d\n");
        assert!(text(&[0xFF, 1], &[0xFF, 2]).contains("first difference at byte 1"));
    }
}
