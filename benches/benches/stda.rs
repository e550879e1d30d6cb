//! System trace buffer costs: records written per second (the kernel's
//! `TraceBuffer::log` on every tracepoint hit, both formats, with wraps),
//! records read back per second, and records formatted per second with a
//! TFF rule that uses most controls. Throughput is in records, so
//! criterion's elements/s are records/s. Inputs are built outside the timed
//! closures; each iteration checks its result.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use stda::fmt::{FormatInput, compile_fmt, format_record};
use stda::tff::TffRecord;
use stda::{RecordFlags, RecordIn, Stda, StdaFormat, Timestamp, TraceBuffer, tracefmt};

const RECORDS: usize = 10_000;

/// Data sizes that vary the way tracepoint records do (0 to 64 bytes).
fn datas() -> Vec<Vec<u8>> {
    (0..RECORDS)
        .map(|i| (0..(i * 7) % 65).map(|j| (i + j) as u8).collect())
        .collect()
}

fn write(c: &mut Criterion) {
    let datas = datas();
    let mut g = c.benchmark_group("stda/write");
    g.throughput(Throughput::Elements(RECORDS as u64));
    for (name, format) in [("old", StdaFormat::Old), ("new", StdaFormat::New)] {
        g.bench_function(format!("{name}/63KB"), |b| {
            let mut buf = TraceBuffer::new(format, 63).expect("63 KB buffer");
            b.iter(|| {
                buf.reset();
                for (i, data) in datas.iter().enumerate() {
                    let rec = RecordIn {
                        major: 0xC5,
                        minor: i as u16,
                        pid: 3,
                        flags: RecordFlags::API | RecordFlags::PROTECT | RecordFlags::DYNAMIC,
                        data,
                    };
                    let t = Timestamp::from_millis(i as u64 * 3);
                    buf.log(black_box(&rec), t).expect("record fits");
                }
                assert_eq!(buf.records_logged(), RECORDS as u64);
            });
        });
    }
    g.finish();
}

fn read(c: &mut Criterion) {
    let datas = datas();
    let mut buf = TraceBuffer::new(StdaFormat::New, 63).expect("63 KB buffer");
    for (i, data) in datas.iter().enumerate() {
        let rec = RecordIn {
            major: 0xC5,
            minor: i as u16,
            pid: 3,
            flags: RecordFlags::API,
            data,
        };
        buf.log(&rec, Timestamp::from_millis(i as u64))
            .expect("record fits");
    }
    let stda = Stda::parse(buf.as_bytes()).expect("valid STDA");
    let n = stda.walk_back().count();
    let mut g = c.benchmark_group("stda/read");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("new/63KB/records", |b| {
        b.iter(|| assert_eq!(black_box(&stda).records().len(), n));
    });
    g.finish();
}

fn format(c: &mut Criterion) {
    let rule = TffRecord {
        minor: 1,
        desc: b"(BENCH) DosOpen Pre-Invocation".to_vec(),
        fmts: [
            "Filename = %P%S",
            "Mode = %W Control = %W Attrib = %B Size = %F",
            "Handle = %A Flags = %D Quad = %Q",
            "Words = %R%W",
        ]
        .iter()
        .map(|f| compile_fmt(f.as_bytes()))
        .collect(),
    };
    let mut data = vec![1, 13, 0];
    data.extend(b"C:\\CONFIG.SYS");
    data.extend([
        0x12, 0, 1, 0, 0x20, 0, 4, 0, 0, 0x37, 0, 0x1F, 0, 0, 0, 1, 0,
    ]);
    data.extend([1, 2, 3, 4, 5, 6, 7, 8]);
    data.extend([0, 8, 0, 1, 0, 2, 0, 3, 0, 4, 0]);
    let input = FormatInput {
        major: 0xC5,
        minor: 1,
        dynamic: true,
        data: &data,
    };
    let mut g = c.benchmark_group("stda/format");
    g.throughput(Throughput::Elements(1));
    g.bench_function("dynamic/4-fmt-lines", |b| {
        b.iter(|| {
            let lines = format_record(black_box(&rule), black_box(&input));
            assert_eq!(lines.len(), 5);
            lines
        });
    });
    g.finish();
}

/// A 63 KB buffer full of the records LOOP32's TSF-compiled `Step`
/// tracepoint logs (a memory log of the argument), and the TFF TRCUST
/// writes for that TSF.
fn loop32_buffer() -> (Vec<u8>, tracefmt::Rules) {
    let dir = tempfile::tempdir().expect("temporary directory");
    testprogs::loop32()
        .expect("LOOP32 builds")
        .write_to(dir.path())
        .expect("LOOP32 written");
    let args = ["LOOP32.TSF".to_string(), "/M=LOOP32.MAP".to_string()];
    let out = tdf::trcust::run(&args, dir.path(), tdf::trcust::PathStyle::Host);
    assert_eq!(out.exit_code, 0, "{}", out.text());
    let (rules, problems) = tracefmt::Rules::load_dir(dir.path(), [0xCE]);
    assert!(problems.is_empty() && rules.rule(0xCE, 1).is_some());
    let mut buf = TraceBuffer::new(StdaFormat::New, 63).expect("63 KB buffer");
    for i in 0..20_000u32 {
        let mut data = vec![0, 4, 0];
        data.extend((1_000_000 - i).to_le_bytes());
        let rec = RecordIn {
            major: 0xCE,
            minor: 1,
            pid: 1,
            flags: RecordFlags::API | RecordFlags::PROTECT | RecordFlags::DYNAMIC,
            data: &data,
        };
        buf.log(&rec, Timestamp::from_millis(u64::from(i) / 3))
            .expect("record fits");
    }
    (buf.as_bytes().to_vec(), rules)
}

/// TRACEFMT over a full buffer: the formatted listing and JSON lines.
fn tracefmt_buffer(c: &mut Criterion) {
    let (bytes, rules) = loop32_buffer();
    let stda = Stda::parse(&bytes).expect("valid STDA");
    let n = stda.walk_back().count();
    let mut g = c.benchmark_group("stda/tracefmt");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("text/63KB", |b| {
        b.iter(|| {
            let out = tracefmt::format_stda(black_box(&stda), &rules);
            assert!(out.len() > n * 40);
            out
        });
    });
    g.bench_function("json/63KB", |b| {
        b.iter(|| {
            let mut out = String::new();
            for (i, rec) in black_box(&stda).forward().enumerate() {
                tracefmt::write_json_line(i + 1, &rec, &mut out);
            }
            assert!(out.len() > n * 40);
            out
        });
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .measurement_time(std::time::Duration::from_secs(2))
        .warm_up_time(std::time::Duration::from_millis(500));
    targets = write, read, format, tracefmt_buffer
}
criterion_main!(benches);
