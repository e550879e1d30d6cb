//! Machine-readable results: JUnit XML (through `quick-junit`, the writer
//! cargo-nextest uses) and JSON lines, one result per line.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde::Serialize;

use crate::run::{CaseResult, Status};

/// The results as a JUnit XML document: one `<testsuite>` per suite, one
/// `<testcase>` per case, failures with their message and differences.
///
/// # Errors
/// The XML writer failed (it writes to memory, so only on a bug).
pub fn junit(results: &[CaseResult]) -> Result<String, String> {
    let mut report = Report::new("os2trace test");
    let mut suites: Vec<TestSuite> = Vec::new();
    for r in results {
        let index = match suites.iter().position(|s| s.name.as_str() == r.suite) {
            Some(i) => i,
            None => {
                suites.push(TestSuite::new(r.suite.clone()));
                suites.len() - 1
            }
        };
        let status = match r.status {
            Status::Passed | Status::Blessed => TestCaseStatus::success(),
            Status::Failed => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(r.message.lines().next().unwrap_or("failed"));
                s.set_description(r.message.clone());
                s
            }
        };
        let short = r.name.rsplit_once('/').map_or(r.name.as_str(), |(_, c)| c);
        let mut case = TestCase::new(short.to_string(), status);
        case.set_classname(r.suite.clone());
        case.set_time(r.duration);
        suites[index].add_test_case(case);
    }
    report.add_test_suites(suites);
    report.to_string().map_err(|e| e.to_string())
}

#[derive(Serialize)]
struct JsonResult<'a> {
    suite: &'a str,
    name: &'a str,
    status: &'a str,
    message: &'a str,
    duration_ms: u128,
}

/// One JSON object for a result (no trailing newline).
pub fn json_line(r: &CaseResult) -> String {
    let status = match r.status {
        Status::Passed => "passed",
        Status::Failed => "failed",
        Status::Blessed => "blessed",
    };
    serde_json::to_string(&JsonResult {
        suite: &r.suite,
        name: &r.name,
        status,
        message: &r.message,
        duration_ms: r.duration.as_millis(),
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn junit_has_one_testcase_per_result_and_the_failure_text() {
        let results = [
            CaseResult {
                suite: "s".into(),
                name: "s/a".into(),
                status: Status::Passed,
                message: String::new(),
                duration: Duration::from_millis(5),
            },
            CaseResult {
                suite: "s".into(),
                name: "s/b".into(),
                status: Status::Failed,
                message: "stda.bin differs\n  ~ x < y\n".into(),
                duration: Duration::from_millis(7),
            },
        ];
        let xml = junit(&results).unwrap();
        assert!(xml.contains("<testsuite name=\"s\" tests=\"2\""), "{xml}");
        assert!(
            xml.contains("<testcase name=\"b\" classname=\"s\""),
            "{xml}"
        );
        assert!(
            xml.contains("<failure message=\"stda.bin differs\""),
            "{xml}"
        );
        assert!(xml.contains("~ x &lt; y"), "{xml}");
        let line = json_line(&results[1]);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["status"], "failed");
        assert_eq!(v["name"], "s/b");
    }
}
