//! The C runtime DLLs (LIBCS here) called by a program as VisualAge C++
//! code calls them (`_Optlink`: EAX, EDX, ECX, 12 reserved bytes, the
//! rest on the stack): formatting, the heap, stdio on the sandbox,
//! qsort with a guest comparison, _splitpath, exit with an atexit
//! function. No toolkit needed.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

/// Where the program keeps its data (in its stack object, far below ESP).
const DATA: u32 = 0x20000;
/// Where each call's EAX is stored (4 bytes per call, in call order).
const RESULTS: u32 = 0x20F00;

/// A program built call by call.
#[derive(Default)]
struct Prog {
    code: Vec<u8>,
    calls: Vec<(u32, &'static str, u32)>,
    results: u32,
}

impl Prog {
    /// `mov dword [at], v` for each dword of `bytes` (zero-padded).
    fn store(&mut self, at: u32, bytes: &[u8]) {
        for (i, ch) in bytes.chunks(4).enumerate() {
            let mut w = [0u8; 4];
            w[..ch.len()].copy_from_slice(ch);
            self.code.extend([0xC7, 0x05]);
            self.code.extend((at + 4 * i as u32).to_le_bytes());
            self.code.extend(w);
        }
    }

    /// An `_Optlink` call of LIBCS.`ordinal`: `regs` into EAX, EDX, ECX
    /// with 4 bytes reserved for each, `stack` pushed above them (so a
    /// variadic function's variable arguments follow its fixed ones);
    /// EAX goes to the next result slot.
    fn call(&mut self, ordinal: u32, regs: &[u32], stack: &[u32]) {
        for v in stack.iter().rev() {
            self.code.push(0x68);
            self.code.extend(v.to_le_bytes());
        }
        let reserved = 4 * regs.len() as u8;
        self.code.extend([0x83, 0xEC, reserved]);
        for (op, v) in [0xB8u8, 0xBA, 0xB9].iter().zip(regs) {
            self.code.push(*op);
            self.code.extend(v.to_le_bytes());
        }
        self.calls.push((self.code.len() as u32, "LIBCS", ordinal));
        self.code.extend([0xE8, 0, 0, 0, 0]);
        self.code
            .extend([0x83, 0xC4, reserved + 4 * stack.len() as u8]);
        self.code.push(0xA3);
        self.code.extend((RESULTS + 4 * self.results).to_le_bytes());
        self.results += 1;
    }

    /// A jump over `body`, whose address is returned (a function the
    /// runtime calls back).
    fn function(&mut self, body: &[u8]) -> u32 {
        self.code.push(0xE9);
        self.code.extend((body.len() as u32).to_le_bytes());
        let at = 0x10000 + self.code.len() as u32;
        self.code.extend(body);
        at
    }

    fn build(mut self) -> Vec<u8> {
        // DosExit(EXIT_PROCESS, 0) if the program gets here.
        self.code.extend([0x6A, 0x00, 0x6A, 0x01]);
        self.calls.push((self.code.len() as u32, "DOSCALLS", 234));
        self.code.extend([0xE8, 0, 0, 0, 0]);
        common::lx_program(&self.code, &self.calls)
    }
}

fn run(prog: Prog) -> (Outcome, Process, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), prog.build()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(5_000_000);
    let mut p = Process::new(cfg).unwrap();
    let o = p.run();
    (o, p, dir)
}

fn mem(p: &mut Process, at: u32, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    p.read_guest(at, &mut b).unwrap();
    b
}

fn result(p: &mut Process, i: u32) -> u32 {
    let b = mem(p, RESULTS + 4 * i, 4);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn sz(p: &mut Process, at: u32) -> String {
    let b = mem(p, at, 256);
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

#[test]
fn sprintf_formats_fixed_and_variable_arguments() {
    let mut g = Prog::default();
    g.store(DATA, b"%s=%d %5.2f|%-4x|%c%%\0");
    g.store(DATA + 0x40, b"ab\0");
    let d = 3.25f64.to_bits();
    // _sprintfieee(buf, fmt, ...): buf and fmt in EAX and EDX, the rest
    // at their places on the stack.
    g.call(
        100,
        &[DATA + 0x100, DATA],
        &[
            DATA + 0x40,
            (-42i32) as u32,
            d as u32,
            (d >> 32) as u32,
            255,
            u32::from(b'Z'),
        ],
    );
    g.call(111, &[DATA + 0x100], &[]); // strlen
    let (o, mut p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(sz(&mut p, DATA + 0x100), "ab=-42  3.25|ff  |Z%");
    assert_eq!(result(&mut p, 0), 20);
    assert_eq!(result(&mut p, 1), 20);
}

#[test]
fn heap_blocks_are_distinct_and_realloc_keeps_the_bytes() {
    let mut g = Prog::default();
    g.call(70, &[100], &[]); // malloc(100) -> r0
    g.call(70, &[100], &[]); // malloc(100) -> r1
    g.call(12, &[10, 10], &[]); // calloc(10, 10) -> r2
    g.call(70, &[0x7FFF_FFFF], &[]); // too big: NULL -> r3
    let (o, mut p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(0));
    let (a, b, c) = (result(&mut p, 0), result(&mut p, 1), result(&mut p, 2));
    assert!(a != 0 && b != 0 && c != 0);
    assert!(b >= a + 100 || a >= b + 100, "{a:#x} {b:#x}");
    assert_eq!(mem(&mut p, c, 100), vec![0; 100]);
    assert_eq!(result(&mut p, 3), 0);

    // realloc to a bigger block keeps what the first held.
    let mut g = Prog::default();
    g.call(70, &[16], &[]); // r0 = malloc(16)
    g.call(70, &[16], &[]); // r1 = malloc(16): in the way of growing r0
    // strcpy(r0, "keep me") needs r0 in a register: load it from r0's slot.
    g.code.extend([0xA1]);
    g.code.extend(RESULTS.to_le_bytes()); // mov eax, [r0]
    g.code.extend([0xA3]);
    g.code.extend((DATA + 0x80).to_le_bytes()); // keep it
    g.store(DATA, b"keep me\0");
    g.code.extend([0x8B, 0x05]);
    g.code.extend(RESULTS.to_le_bytes()); // mov eax, [r0]
    g.code.extend([0xBA]);
    g.code.extend(DATA.to_le_bytes()); // mov edx, DATA
    g.code.extend([0x83, 0xEC, 12]);
    g.calls.push((g.code.len() as u32, "LIBCS", 108));
    g.code.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 12]);
    // realloc(r0, 5000)
    g.code.extend([0x8B, 0x05]);
    g.code.extend(RESULTS.to_le_bytes());
    g.code.extend([0xBA]);
    g.code.extend(5000u32.to_le_bytes());
    g.code.extend([0x83, 0xEC, 12]);
    g.calls.push((g.code.len() as u32, "LIBCS", 92));
    g.code.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 12, 0xA3]);
    g.code.extend((RESULTS + 8).to_le_bytes());
    let (o, mut p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(0));
    let (old, moved) = (result(&mut p, 0), result(&mut p, 2));
    assert_ne!(moved, 0);
    assert_ne!(moved, old, "r1 was in the way");
    assert_eq!(sz(&mut p, moved), "keep me");
}

#[test]
fn stdio_writes_text_mode_files_in_the_sandbox() {
    let mut g = Prog::default();
    g.store(DATA, b"OUT.TXT\0");
    g.store(DATA + 0x10, b"w\0");
    g.store(DATA + 0x20, b"a\nb\n\0");
    g.store(DATA + 0x30, b"rb\0");
    g.call(240, &[DATA, DATA + 0x10], &[]); // r0 = fopen("OUT.TXT", "w")
    // fputs(s, r0)
    g.code.extend([0x8B, 0x15]);
    g.code.extend(RESULTS.to_le_bytes()); // mov edx, [r0]
    g.call(247, &[DATA + 0x20], &[]); // r1 (edx kept: call() sets only EAX)
    g.code.extend([0xA1]);
    g.code.extend(RESULTS.to_le_bytes());
    g.code.extend([0x83, 0xEC, 12]);
    g.calls.push((g.code.len() as u32, "LIBCS", 221)); // fclose(r0)
    g.code.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 12]);
    g.call(240, &[DATA, DATA + 0x30], &[]); // r2 = fopen("OUT.TXT", "rb")
    // fread(buf, 1, 100, r2): stream on the stack
    g.code.extend([0xFF, 0x35]);
    g.code.extend((RESULTS + 8).to_le_bytes()); // push dword [r2]
    g.code.extend([0x83, 0xEC, 12, 0xB8]);
    g.code.extend((DATA + 0x100).to_le_bytes());
    g.code.extend([0xBA, 1, 0, 0, 0, 0xB9, 100, 0, 0, 0]);
    g.calls.push((g.code.len() as u32, "LIBCS", 250));
    g.code.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 16, 0xA3]);
    g.code.extend((RESULTS + 12).to_le_bytes());
    let (o, mut p, dir) = run(g);
    assert_eq!(o, Outcome::Exited(0));
    assert_ne!(result(&mut p, 0), 0);
    assert_eq!(
        std::fs::read(dir.path().join("OUT.TXT")).unwrap(),
        b"a\r\nb\r\n"
    );
    assert_eq!(result(&mut p, 3), 6, "binary mode reads the CRs");
    assert_eq!(mem(&mut p, DATA + 0x100, 6), b"a\r\nb\r\n");
}

#[test]
fn qsort_calls_the_programs_comparison() {
    let mut g = Prog::default();
    // int compare(const int *a, const int *b): *a - *b (_Optlink).
    let cmp = g.function(&[0x8B, 0x00, 0x8B, 0x12, 0x2B, 0xC2, 0xC3]);
    let vals: [i32; 7] = [5, -3, 9, 0, 5, 1, -8];
    let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
    g.store(DATA, &bytes);
    g.call(90, &[DATA, vals.len() as u32, 4], &[cmp]); // qsort
    g.store(DATA + 0x40, &9i32.to_le_bytes());
    g.call(10, &[DATA + 0x40, DATA, vals.len() as u32], &[4, cmp]); // bsearch(9)
    let (o, mut p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(0));
    let got: Vec<i32> = mem(&mut p, DATA, 28)
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, vec![-8, -3, 0, 1, 5, 5, 9]);
    assert_eq!(result(&mut p, 1), DATA + 24, "bsearch finds 9 last");
}

#[test]
fn splitpath_fills_all_four_parts() {
    let mut g = Prog::default();
    g.store(DATA, b"C:\\DIR\\SUB\\NAME.EXT\0");
    let (drv, dir, name, ext) = (DATA + 0x40, DATA + 0x60, DATA + 0x80, DATA + 0xA0);
    g.call(399, &[DATA, drv, dir], &[name, ext]);
    g.store(DATA + 0x200, b"OTHER\0");
    g.call(332, &[DATA + 0x100, drv, dir], &[DATA + 0x200, ext]); // _makepath
    let (o, mut p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(sz(&mut p, drv), "C:");
    assert_eq!(sz(&mut p, dir), "\\DIR\\SUB\\");
    assert_eq!(sz(&mut p, name), "NAME");
    assert_eq!(sz(&mut p, ext), ".EXT");
    assert_eq!(sz(&mut p, DATA + 0x100), "C:\\DIR\\SUB\\OTHER.EXT");
}

#[test]
fn exit_runs_atexit_functions_in_reverse_order() {
    let mut g = Prog::default();
    // Each function appends its byte at the count kept at DATA.
    let f = |b: u8| {
        // mov eax,[DATA]; mov byte [eax+DATA+4], b; inc dword [DATA]; ret
        let mut body = vec![0xA1];
        body.extend(DATA.to_le_bytes());
        body.extend([0xC6, 0x80]);
        body.extend((DATA + 4).to_le_bytes());
        body.push(b);
        body.extend([0xFF, 0x05]);
        body.extend(DATA.to_le_bytes());
        body.push(0xC3);
        body
    };
    let (fa, fb) = (f(b'a'), f(b'b'));
    let a = g.function(&fa);
    let b = g.function(&fb);
    g.call(161, &[a], &[]);
    g.call(161, &[b], &[]);
    g.call(42, &[7], &[]); // exit(7)
    let (o, mut p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(7));
    assert_eq!(mem(&mut p, DATA + 4, 2), b"ba");
}

#[test]
fn errno_takes_visualage_values_per_failure() {
    let mut g = Prog::default();
    g.store(DATA, b"NOPE.TXT\0");
    g.store(DATA + 0x10, b"r\0");
    g.store(DATA + 0x20, b"q\0");
    g.call(240, &[DATA, DATA + 0x10], &[]); // fopen of no file -> NULL
    g.call(201, &[], &[]); // _errno()
    g.code.extend([0x8B, 0x00, 0xA3]); // mov eax,[eax]; store
    g.code.extend((RESULTS + 8).to_le_bytes());
    g.results += 1;
    g.call(240, &[DATA, DATA + 0x20], &[]); // a bad mode -> NULL, EINVAL
    g.call(201, &[], &[]);
    g.code.extend([0x8B, 0x00, 0xA3]);
    g.code.extend((RESULTS + 20).to_le_bytes());
    g.results += 1;
    let (o, mut p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(result(&mut p, 0), 0);
    assert_eq!(result(&mut p, 2), 23, "ENOENT");
    assert_eq!(result(&mut p, 3), 0);
    assert_eq!(result(&mut p, 5), 36, "EINVAL");
}

/// Every LIBCS entry called with hostile arguments (NULL, all ones, an
/// unmapped address, a huge size) returns, exits or faults as guest code
/// would: no host error, no panic, no runaway.
#[test]
fn hostile_arguments_never_panic_the_host() {
    let ordinals: Vec<u32> = kernel_sim::api::table()
        .filter(|d| d.module == "LIBCS" && d.func.is_some())
        .map(|d| d.ordinal)
        .collect();
    assert!(ordinals.len() > 150, "{}", ordinals.len());
    let sets: [[u32; 3]; 3] = [
        [0, 0, 0],
        [u32::MAX, u32::MAX, u32::MAX],
        [0x0FFF_F000, 0x7FFF_FFFF, 0x1000_0000],
    ];
    for o in ordinals {
        for regs in &sets {
            let mut g = Prog::default();
            g.call(o, regs, &[regs[2], regs[1], regs[0]]);
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("T.EXE"), g.build()).unwrap();
            let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
            cfg.max_instructions = Some(200_000);
            let mut p = Process::new(cfg).unwrap();
            let out = p.run();
            assert!(
                matches!(
                    out,
                    Outcome::Exited(_)
                        | Outcome::GuestFault { .. }
                        | Outcome::UnhandledException { .. }
                ),
                "LIBCS.{o} {regs:x?}: {out:?}"
            );
        }
    }
}

/// A bad pointer given to the runtime is an access violation the
/// program's own exception handler gets (XCPT_ACCESS_VIOLATION), as the
/// real DLL's fault would be.
#[test]
fn a_bad_pointer_reaches_the_programs_exception_handler() {
    let mut g = Prog::default();
    // The handler: exit 42 for XCPT_ACCESS_VIOLATION, else 43.
    g.code.push(0xE9);
    let len_at = g.code.len();
    g.code.extend([0, 0, 0, 0]);
    let handler = 0x10000 + g.code.len() as u32;
    g.code.extend([0x8B, 0x44, 0x24, 0x04]); // mov eax,[esp+4]
    g.code.extend([0x81, 0x38, 0x05, 0x00, 0x00, 0xC0]); // cmp dword [eax],0xC0000005
    g.code.extend([0x75, 0x0B]); // jne +11
    g.code.extend([0x6A, 42, 0x6A, 0x01]);
    g.calls.push((g.code.len() as u32, "DOSCALLS", 234));
    g.code.extend([0xE8, 0, 0, 0, 0]);
    g.code.extend([0x6A, 43, 0x6A, 0x01]);
    g.calls.push((g.code.len() as u32, "DOSCALLS", 234));
    g.code.extend([0xE8, 0, 0, 0, 0]);
    let body = (g.code.len() - len_at - 4) as u32;
    g.code[len_at..len_at + 4].copy_from_slice(&body.to_le_bytes());
    // Register it on FS:0, then strlen of an unmapped address.
    g.code.push(0x68);
    g.code.extend(handler.to_le_bytes());
    g.code.extend([0x64, 0xFF, 0x35, 0, 0, 0, 0]); // push dword fs:[0]
    g.code.extend([0x64, 0x89, 0x25, 0, 0, 0, 0]); // mov fs:[0], esp
    g.call(111, &[0x0FFF_F000], &[]);
    let (o, _p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(42));
}

/// `s` and its NUL as UCS-2 bytes.
fn wide(s: &str) -> Vec<u8> {
    s.encode_utf16()
        .chain([0])
        .flat_map(u16::to_le_bytes)
        .collect()
}

/// The str* functions and their wcs* twins give C's answers, the wide
/// ones counting in characters and pointing at 2-byte elements.
#[test]
fn narrow_and_wide_string_functions_answer_alike() {
    let mut g = Prog::default();
    // The narrow strings from DATA, their wide twins from DATA + 0x100.
    let texts = [
        (0x00, "hello, world"),
        (0x40, ", "),
        (0x50, "ehl"),
        (0x60, "wor"),
        (0x70, "hello"),
        (0x80, "  -0x1Fz"),
    ];
    for (off, t) in texts {
        g.store(DATA + off, &[t.as_bytes(), b"\0"].concat());
        g.store(DATA + 0x100 + 2 * off, &wide(t));
    }
    g.store(DATA + 0x78, b"HELLO\0");
    for (base, w) in [(DATA, 1), (DATA + 0x100, 2)] {
        let at = |off: u32| base + w * off;
        let (chr, rchr, spn, cspn, pbrk, find, cmp, ncmp, tol) = if w == 1 {
            (106, 116, 117, 109, 115, 118, 107, 113, 119)
        } else {
            (465, 478, 480, 469, 477, 489, 466, 475, 486)
        };
        g.call(chr, &[at(0), u32::from(b'o')], &[]);
        g.call(rchr, &[at(0), u32::from(b'o')], &[]);
        g.call(chr, &[at(0), 0], &[]);
        g.call(spn, &[at(0), at(0x50)], &[]);
        g.call(cspn, &[at(0), at(0x40)], &[]);
        g.call(pbrk, &[at(0), at(0x40)], &[]);
        g.call(find, &[at(0), at(0x60)], &[]);
        g.call(cmp, &[at(0), at(0x70)], &[]);
        g.call(ncmp, &[at(0), at(0x70), 5], &[]);
        g.call(tol, &[at(0x80), DATA + 0x90 + 4 * (w - 1), 0], &[]);
    }
    g.call(413, &[DATA + 0x78, DATA + 0x70], &[]); // stricmp
    // strcpy + strcat, wcscpy + wcscat.
    g.call(108, &[DATA + 0x400, DATA + 0x70], &[]);
    g.call(105, &[DATA + 0x400, DATA + 0x40], &[]);
    g.call(468, &[DATA + 0x500, DATA + 0x100 + 0xE0], &[]);
    g.call(464, &[DATA + 0x500, DATA + 0x100 + 0x80], &[]);
    // strtok and wcstok (its state at DATA + 0x7F0) over "a,,b".
    g.store(DATA + 0x600, b"a,,b\0");
    g.store(DATA + 0x700, &wide("a,,b"));
    g.store(DATA + 0x6F0, b",\0");
    g.store(DATA + 0x7E0, &wide(","));
    g.call(423, &[DATA + 0x600, DATA + 0x6F0], &[]);
    g.call(423, &[0, DATA + 0x6F0], &[]);
    g.call(423, &[0, DATA + 0x6F0], &[]);
    g.call(483, &[DATA + 0x700, DATA + 0x7E0, DATA + 0x7F0], &[]);
    g.call(483, &[0, DATA + 0x7E0, DATA + 0x7F0], &[]);
    g.call(483, &[0, DATA + 0x7E0, DATA + 0x7F0], &[]);
    // mbstowcs: 3 of 5 (no NUL), a count only; wcstombs with room.
    g.store(DATA + 0x800, &[0xFF; 8]);
    g.call(340, &[DATA + 0x800, DATA + 0x70, 3], &[]);
    g.call(340, &[0, DATA + 0x70, 0], &[]);
    g.call(487, &[DATA + 0x900, DATA + 0x100 + 0xE0, 10], &[]);
    let (o, mut p, _d) = run(g);
    assert_eq!(o, Outcome::Exited(0));
    for (i, (base, w)) in [(DATA, 1), (DATA + 0x100, 2)].into_iter().enumerate() {
        let first = 10 * i as u32;
        let got: Vec<u32> = (first..first + 10).map(|r| result(&mut p, r)).collect();
        let minus_31 = (-31i32) as u32;
        assert_eq!(
            got,
            [
                base + 4 * w,
                base + 8 * w,
                base + 12 * w,
                4,
                5,
                base + 5 * w,
                base + 7 * w,
                44,
                0,
                minus_31
            ],
            "element width {w}"
        );
        let end = mem(&mut p, DATA + 0x90 + 4 * (w - 1), 4);
        let end = u32::from_le_bytes([end[0], end[1], end[2], end[3]]);
        assert_eq!(end, base + w * 0x80 + 7 * w, "strtol's end, width {w}");
    }
    assert_eq!(result(&mut p, 20), 0, "stricmp");
    assert_eq!(sz(&mut p, DATA + 0x400), "hello, ");
    assert_eq!(mem(&mut p, DATA + 0x500, 16), wide("hello, "));
    let tokens: Vec<u32> = (25..31).map(|r| result(&mut p, r)).collect();
    assert_eq!(
        tokens,
        [DATA + 0x600, DATA + 0x603, 0, DATA + 0x700, DATA + 0x706, 0]
    );
    assert_eq!(mem(&mut p, DATA + 0x600, 5), b"a\0,b\0");
    assert_eq!(result(&mut p, 31), 3, "mbstowcs stores 3");
    let mut three = wide("hel");
    three.truncate(6);
    three.extend([0xFF, 0xFF]);
    assert_eq!(mem(&mut p, DATA + 0x800, 8), three, "no NUL after 3");
    assert_eq!(result(&mut p, 32), 5, "mbstowcs counts");
    assert_eq!(result(&mut p, 33), 5, "wcstombs");
    assert_eq!(sz(&mut p, DATA + 0x900), "hello");
}
