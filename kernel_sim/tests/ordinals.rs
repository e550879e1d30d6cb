//! Every system DLL entry of the OS/2 toolkit's import libraries has the
//! same ordinal, name and convention in kernel_sim's tables, and the
//! ordinal table (`api/ordinals.txt`) is exactly what the libraries give.
//! Runs with OS2TK_DIR set (the toolkit's root, with `lib/`); says it was
//! skipped otherwise.

use kernel_sim::api::ordinals;
use std::io::Write as _;

#[test]
fn every_system_dll_entry_agrees_with_the_toolkit_libraries() {
    let Some(dir) = std::env::var_os("OS2TK_DIR") else {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: OS2TK_DIR is not set (the OS/2 toolkit's root)"
        );
        return;
    };
    let tk = ordinals::from_toolkit(std::path::Path::new(&dir)).unwrap();
    for (file, n) in &tk.libraries {
        println!("{file}: {n} import records");
    }
    for (file, why) in &tk.skipped {
        let _ = writeln!(std::io::stderr().lock(), "{file}: skipped ({why})");
    }
    assert!(tk.problems.is_empty(), "{:#?}", tk.problems);
    let report = ordinals::check(&tk.facts);
    let mut total = 0;
    for (dll, n) in &report.compared {
        println!("{dll}: {n} entries compared");
        total += n;
    }
    println!("{total} entries compared in all");
    for (dll, n) in &report.other {
        println!("{dll}: {n} entries (not a system DLL here)");
    }
    for d in &report.disagreements {
        println!("disagreement: {d}");
    }
    assert!(
        report.compared.contains_key("DOSCALLS") && report.compared.contains_key("VIOCALLS"),
        "no system DLL entries in {}",
        std::path::Path::new(&dir).display()
    );
    // The queue API (QUECALLS.9-16, 32-bit, implemented in queues.rs)
    // is among what was compared.
    assert!(
        report.compared.get("QUECALLS").is_some_and(|&n| n >= 16),
        "QUECALLS: {:?} entries compared",
        report.compared.get("QUECALLS")
    );
    assert_eq!(
        report.disagreements.len(),
        0,
        "disagreements:\n{}",
        report
            .disagreements
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
