//! TFF combine mode (`TRCUST list.tcf /C=dest.tff`): merges the TFFs named
//! in a TCF (names separated by blanks, at most 50) into one, sorted by
//! minor. All inputs must have the same major (FATAL 13, before the
//! file's `Reading input TFF` line); every file is read before the records
//! are merged, and for a duplicate minor the first record wins (ERROR 95,
//! reported in the order TRCUST's merge meets them, see [`merge_heads`]).
//! `/D` is refused (ERROR 106). As in TRCUST: names show as given, the
//! 51st file is FATAL, a `/M=` after `/C=` names the destination, and a
//! merge without records is FATAL `error writing to file`.

use std::fs;

pub use stda::tff::{Tff, TffRecord};

use crate::trcust::{CombineRun, CommandLine, find_file};

/// Most TFFs one combine may read.
pub const MAX_COMBINE_FILES: usize = 50;

/// Merges parsed TFFs: the major of the first, records by ascending minor,
/// the first record of each minor kept. Returns the merged TFF and, per
/// input, the minors dropped as duplicates.
pub fn merge(inputs: &[Tff]) -> (Tff, Vec<Vec<u16>>) {
    let mut records: Vec<TffRecord> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut dropped = Vec::with_capacity(inputs.len());
    for t in inputs {
        let mut d = Vec::new();
        let mut sorted: Vec<&TffRecord> = t.records.iter().collect();
        sorted.sort_by_key(|r| r.minor);
        for r in sorted {
            if seen.insert(r.minor) {
                records.push(r.clone());
            } else {
                d.push(r.minor);
            }
        }
        dropped.push(d);
    }
    records.sort_by_key(|r| r.minor);
    let major = inputs.first().map_or(1, |t| t.major);
    (Tff { major, records }, dropped)
}

/// One input of [`merge_heads`]: its records and the next one to take.
struct Head<'a> {
    name: &'a str,
    records: &'a [TffRecord],
    at: usize,
}

impl Head<'_> {
    fn minor(&self) -> Option<u16> {
        self.records.get(self.at).map(|r| r.minor)
    }

    /// Takes the record at the head; a next record of the same minor is
    /// dropped as a duplicate (once, not in a loop).
    fn advance(&mut self, dropped: &mut Vec<(String, u16)>) {
        let taken = self.minor();
        self.at += 1;
        self.skip_if(taken, dropped);
    }

    fn skip_if(&mut self, minor: Option<u16>, dropped: &mut Vec<(String, u16)>) {
        if minor.is_some() && self.minor() == minor {
            dropped.push((self.name.to_string(), self.records[self.at].minor));
            self.at += 1;
        }
    }
}

/// TRCUST's combine merge, found by running IBM's TRCUST.EXE on hand-made
/// TFFs (issue 17). All inputs are merged at once, each read at its head
/// (a file named twice in the TCF is two inputs):
/// - first, each input in TCF order drops a first record of minor 0 as a
///   duplicate (the "previous minor" starts at 0);
/// - then, until every input is used up, a pass over the inputs in TCF
///   order keeps the lowest head seen so far (unsigned, the earlier input
///   on a tie); a head equal to it is a duplicate: reported with its file,
///   dropped, and that input's new head is looked at again in the same
///   pass. The lowest head is then written and its input moves on.
/// - whenever an input moves on, a next record with the minor just taken
///   is dropped as a duplicate (once).
///
/// So duplicates are reported neither by minor nor in file order (for
/// `T0 t0 T1 T1`, with T0 = 3 5 10 9BA1 and T1 = 2 300: 3, 2, 5, 10, 9BA1,
/// 300). Sorted inputs (all TFFs TRCUST writes) give records by ascending
/// minor. IBM writes the records of unsorted inputs in the order taken, we
/// write them sorted (`Tff::to_bytes`); on some unsorted inputs or inputs
/// with minor 0 IBM's TRCUST reads past a file's records and faults, which
/// is not reproduced.
///
/// Returns the records in the order taken; `dropped` gets each duplicate
/// (file name as given, minor) in the order reported.
pub fn merge_heads<N: AsRef<str>>(
    inputs: &[(N, Tff)],
    dropped: &mut Vec<(String, u16)>,
) -> Vec<TffRecord> {
    let mut heads: Vec<Head<'_>> = inputs
        .iter()
        .map(|(name, t)| Head {
            name: name.as_ref(),
            records: &t.records,
            at: 0,
        })
        .collect();
    for h in &mut heads {
        h.skip_if(Some(0), dropped);
    }
    let mut records = Vec::new();
    loop {
        let mut low: Option<usize> = None;
        let mut j = 0;
        while j < heads.len() {
            let Some(m) = heads[j].minor() else {
                j += 1;
                continue;
            };
            match low.and_then(|l| heads[l].minor().map(|lm| (l, lm))) {
                Some((l, lm)) if m == lm && l != j => {
                    // Dropped; this input's new head is looked at again.
                    dropped.push((heads[j].name.to_string(), m));
                    heads[j].advance(dropped);
                }
                Some((_, lm)) if m >= lm => j += 1,
                _ => {
                    low = Some(j);
                    j += 1;
                }
            }
        }
        let Some(l) = low else { break };
        records.push(heads[l].records[heads[l].at].clone());
        heads[l].advance(dropped);
    }
    records
}

pub(crate) fn run(r: &mut CombineRun<'_, '_>, cmd: &CommandLine) {
    let dest = cmd.combine.clone().unwrap_or_default();
    let Some(tcf) = cmd.files.first() else {
        r.fatal("TCF file not specified");
        return;
    };
    // A `/D` before `/C=` is refused here, once, after the TCF check and
    // at the last `/W` level (those after `/C=` were refused as read).
    if cmd.duplicates {
        r.error(crate::trcust::DUPLICATES_REFUSED);
    }
    let Some(tcf_path) = find_file(r.dir(), tcf) else {
        r.fatal(format!("file not found or access denied : {tcf}"));
        return;
    };
    let shown = r.show_given(&tcf_path, tcf);
    r.text(format!(
        "Using as file containing combine TFF names: {shown}"
    ));
    let list = match fs::read(&tcf_path) {
        Ok(b) => b,
        Err(_) => {
            r.fatal(format!("error accessing file : {tcf}"));
            return;
        }
    };
    let names: Vec<String> = String::from_utf8_lossy(&list)
        .split_ascii_whitespace()
        .map(str::to_string)
        .collect();
    // Every file is read first, then the records are merged.
    let mut inputs: Vec<(&String, Tff)> = Vec::new();
    let mut major = None;
    for (i, name) in names.iter().enumerate() {
        if i == MAX_COMBINE_FILES {
            r.fatal("max TFF files to combine is 50");
            return;
        }
        let Some(path) = find_file(r.dir(), name) else {
            r.fatal(format!("file not found or access denied : {name}"));
            return;
        };
        let shown = r.show_given(&path, name);
        let tff = match fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| Tff::parse(&b).map_err(|e| e.to_string()))
        {
            Ok(t) => t,
            Err(e) => {
                r.fatal(format!("error reading file: {name}, Rc = {e}"));
                return;
            }
        };
        // The major is checked before the file is announced.
        match major {
            None => major = Some(tff.major),
            Some(m) if m != tff.major => {
                r.fatal(format!("all TFFs not have same major code, file: {shown}"));
                return;
            }
            Some(_) => {}
        }
        r.text(format!("Reading input TFF: {shown}"));
        inputs.push((name, tff));
    }
    let mut dropped = Vec::new();
    let records = merge_heads(&inputs, &mut dropped);
    for (name, minor) in dropped {
        r.error(format!(
            "duplicate minor code = {minor:04X} in file {name}, ignored"
        ));
    }
    let out = Tff {
        major: major.unwrap_or(1),
        records,
    };
    let shown = r.show_given(&r.dir().join(&dest), &dest);
    if out.records.is_empty() {
        // TRCUST fails to write a TFF without records.
        r.fatal(format!("error writing to file : {shown}"));
        return;
    }
    if !r.write(&dest, &out.to_bytes()) {
        return;
    }
    r.text(format!(
        "Creating TFF file: {shown} \t # records = {}",
        out.records.len()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(minor: u16, d: &str) -> TffRecord {
        TffRecord {
            minor,
            desc: d.as_bytes().to_vec(),
            fmts: vec![],
        }
    }

    #[test]
    fn first_minor_wins() {
        let a = Tff {
            major: 0xC5,
            records: vec![rec(0x20, "a20"), rec(2, "a2")],
        };
        let b = Tff {
            major: 0xC5,
            records: vec![rec(2, "b2"), rec(3, "b3")],
        };
        let (t, dropped) = merge(&[a, b]);
        let minors: Vec<u16> = t.records.iter().map(|r| r.minor).collect();
        assert_eq!(minors, vec![2, 3, 0x20]);
        assert_eq!(t.records[0].desc, b"a2");
        assert_eq!(dropped, vec![vec![], vec![2]]);
    }
}
