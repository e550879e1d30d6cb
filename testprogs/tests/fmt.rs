//! Every TSF's FMT strings against the data their TRACE statement logs
//! (issue 13: LOOP32's FMT lacked `%P` and TRACEFMT printed the prefix as
//! data). Registers come first, unprefixed; each MEM/MEM32 item is a
//! 3-byte prefix (`%P`) and its bytes; each ASCIIZ item a prefix and a
//! string (`%S`).

/// One TRACE statement: its FMT text (all FMT= joined) and data items.
struct Statement {
    minor: String,
    fmt: String,
    data: Vec<(String, String)>,
}

fn statements(tsf: &str) -> Vec<Statement> {
    let mut joined: Vec<String> = Vec::new();
    for line in tsf.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match joined.last_mut() {
            Some(last) if last.ends_with(',') => last.push_str(line),
            _ => joined.push(line.to_string()),
        }
    }
    joined
        .into_iter()
        .filter_map(|s| s.strip_prefix("TRACE ").map(str::to_string))
        .map(|s| {
            let mut st = Statement {
                minor: String::new(),
                fmt: String::new(),
                data: Vec::new(),
            };
            for (key, value) in keywords(&s) {
                match key.as_str() {
                    "MINOR" => st.minor = value,
                    "FMT" => st.fmt.push_str(value.trim_matches('"')),
                    "REGS" | "MEM" | "MEM32" | "ASCIIZ" | "ASCIIZ32" => st.data.push((key, value)),
                    _ => {}
                }
            }
            st
        })
        .collect()
}

/// `KEY=VALUE` pairs split at commas outside quotes and parentheses.
fn keywords(s: &str) -> Vec<(String, String)> {
    let (mut out, mut cur, mut depth, mut quoted) = (Vec::new(), String::new(), 0, false);
    for c in s.chars().chain([',']) {
        match c {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                if let Some((k, v)) = cur.trim().split_once('=') {
                    out.push((k.trim().to_ascii_uppercase(), v.trim().to_string()));
                }
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out
}

/// The data controls of a FMT text, in order.
fn controls(fmt: &str) -> Vec<char> {
    let b = fmt.as_bytes();
    (0..b.len().saturating_sub(1))
        .filter(|&i| b[i] == b'%' && (i == 0 || b[i - 1] != b'%'))
        .map(|i| char::from(b[i + 1]).to_ascii_uppercase())
        .collect()
}

fn size(control: char) -> Option<u32> {
    match control {
        'B' => Some(1),
        'W' => Some(2),
        'D' | 'F' | 'A' => Some(4),
        _ => None,
    }
}

fn reg_size(r: &str) -> u32 {
    match r.trim() {
        "EIP" | "EFLAGS" => 4,
        r if r.starts_with('E') && r.len() == 3 => 4,
        _ => 2,
    }
}

/// The length an item `(ADDR,MODE,LEN)` logs.
fn item_len(value: &str) -> u32 {
    value
        .trim_matches(['(', ')'])
        .rsplit(',')
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn every_fmt_matches_the_data_it_formats() {
    let mut checked = 0;
    for program in testprogs::all().unwrap() {
        for st in statements(&program.tsf) {
            let at = format!(
                "{} minor {}: FMT \"{}\"",
                program.tsf_file_name(),
                st.minor,
                st.fmt
            );
            let ctl = controls(&st.fmt);
            // Split the controls at each %P: the head formats registers.
            let mut groups: Vec<Vec<char>> = vec![Vec::new()];
            for c in ctl {
                if c == 'P' {
                    groups.push(Vec::new());
                } else {
                    groups.last_mut().unwrap().push(c);
                }
            }
            let regs: u32 = st
                .data
                .iter()
                .filter(|(k, _)| k == "REGS")
                .flat_map(|(_, v)| {
                    v.trim_matches(['(', ')'])
                        .split(',')
                        .map(reg_size)
                        .collect::<Vec<_>>()
                })
                .sum();
            let head: u32 = groups[0].iter().filter_map(|&c| size(c)).sum();
            assert_eq!(
                head, regs,
                "{at}: the controls before the first %P format the registers"
            );
            let prefixed: Vec<&(String, String)> =
                st.data.iter().filter(|(k, _)| k != "REGS").collect();
            assert_eq!(
                groups.len() - 1,
                prefixed.len(),
                "{at}: one %P for each memory or string item"
            );
            for (group, (kind, value)) in groups[1..].iter().zip(prefixed) {
                if kind.starts_with("ASCIIZ") {
                    assert_eq!(group, &['S'], "{at}: a string item is %P%S");
                } else {
                    let bytes: u32 = group.iter().map(|&c| size(c).unwrap_or(u32::MAX / 4)).sum();
                    assert_eq!(bytes, item_len(value), "{at}: {kind}={value}");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked} statements");
}
