//! The two DLLs' entry tables: every ordinal with its name, convention,
//! arguments and implementation, and the glue that turns a fault in the
//! runtime's code into the guest's exception ([`deliver`]).

use super::*;
use crate::api::{ApiDef, Arg, Call, Conv, Func, Stop};

/// One entry of both DLLs (the module is filled in by [`for_module`]).
macro_rules! e {
    // An entry called with `$conv` (the two conventions' shared body).
    (@call $conv:expr, $o:literal $n:literal [$($a:ident),*] $f:expr) => {
        ApiDef {
            module: "",
            ordinal: $o,
            name: $n,
            conv: $conv,
            args: &[$(Arg::$a),*],
            func: Some(Func::Raw(|p, c| {
                let f: crate::api::ApiFn = $f;
                let r = f(p, c);
                deliver(p, r)
            })),
        }
    };
    ($o:literal $n:literal data $off:expr) => {
        ApiDef { module: "", ordinal: $o, name: $n, conv: Conv::Data($off), args: &[], func: None }
    };
    ($o:literal $n:literal sys [$($a:ident),*] $f:expr) => {
        e!(@call Conv::Sys32, $o $n [$($a),*] $f)
    };
    ($o:literal $n:literal [$($a:ident),*] $f:expr) => {
        e!(@call Conv::Optlink, $o $n [$($a),*] $f)
    };
}

/// A fault the runtime's code would take goes to the thread's exception
/// handlers as the CPU's would, raised at the caller's return address
/// with ESP just above it (as though the call had returned): a handler
/// that continues resumes there; when none takes it the run ends with
/// the fault.
fn deliver(p: &mut Process, r: Result<u32, Stop>) -> Result<u32, Stop> {
    let Err(Stop::Outcome(crate::error::Outcome::GuestFault {
        vector,
        error,
        eip,
        cr2,
        ..
    })) = r
    else {
        return r;
    };
    let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
    let before = p.machine.cpu().clone();
    {
        let cpu = p.machine.cpu_mut_flush_tlb();
        cpu.gpr[emu::Gpr::Esp] = esp.wrapping_add(4);
        cpu.cr2 = cr2.unwrap_or(cpu.cr2);
    }
    p.machine.set_eip(eip);
    match p.dispatch_exception32(emu::Fault { vector, error }) {
        Some(None) => Err(Stop::Resumed),
        Some(Some(o)) => Err(Stop::Outcome(o)),
        None => {
            *p.machine.cpu_mut_flush_tlb() = before;
            r
        }
    }
}

const fn for_module<const N: usize>(module: &'static str, src: [ApiDef; N]) -> [ApiDef; N] {
    let mut out = src;
    let mut i = 0;
    while i < N {
        out[i].module = module;
        i += 1;
    }
    out
}

/// Entries both DLLs have at the same ordinal.
const COMMON: [ApiDef; 168] = [
    e!(1 "abort" [] |p, _| {
        stdio::flush_all(p);
        Err(Stop::Exit(3))
    }),
    e!(3 "abs" [L] |_, c| Ok((c.l(0) as i32).wrapping_abs() as u32)),
    e!(4 "_access" [S, L] stdio::access),
    e!(7 "atoi" [S] strings::atoi),
    e!(8 "atol" [S] strings::atoi),
    e!(10 "bsearch" [P, P, L, L] callback::bsearch),
    e!(11 "_callback_opt_sys" [L, L, L, P] callback::callback_opt_sys),
    e!(12 "calloc" [L, L] alloc::calloc),
    e!(16 "_close" [L] stdio::close_fd),
    e!(28 "__divi64" [L, L, L, L] arith::divi64),
    e!(29 "__divu64" [L, L, L] arith::divu64),
    e!(41 "__eof" [L] stdio::eof_fd),
    e!(42 "exit" [L] callback::exit),
    e!(46 "_fpninit" [] arith::fpreset),
    e!(49 "_fpreset" [] arith::fpreset),
    e!(50 "free" [P] |p, c| {
        free(p, c.l(0));
        Ok(0)
    }),
    e!(61 "_itoa" [L, P, L] strings::itoa),
    e!(67 "longjmp" [P, L] callback::longjmp),
    e!(68 "_lseek" [L, L, L] stdio::lseek),
    e!(70 "malloc" [L] |p, c| malloc(p, c.l(0))),
    e!(71 "memchr" [P, L, L] strings::memchr),
    e!(72 "memcmp" [P, P, L] strings::memcmp),
    e!(73 "memcpy" [P, P, L] strings::memcpy),
    e!(74 "memmove" [P, P, L] strings::memcpy),
    e!(75 "memset" [P, L, L] strings::memset),
    e!(80 "__multi64" [L, L, L] arith::multi64),
    e!(81 "_open" [S, L] stdio::open_fd),
    e!(84 "_printfieee" [S] |p, c| {
        let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
        let text = format_at(p, c.l(0), esp + 8)?;
        stdio::write_stream_at(p, 1, &text)
    }),
    e!(88 "_ProfileThrow32" [P] |_, _| Ok(0)),
    e!(89 "_ProfileUnwind32" [P] |_, _| Ok(0)),
    e!(90 "qsort" [P, L, L, P] callback::qsort),
    e!(91 "_read" [L, P, L] stdio::read_fd),
    e!(92 "realloc" [P, L] alloc::realloc),
    e!(95 "setjmp" [P] callback::setjmp),
    e!(97 "_sopen" [S, L, L] stdio::sopen_fd),
    e!(100 "_sprintfieee" [P, S] |p, c| {
        let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
        let text = format_at(p, c.l(1), esp + 12)?;
        put_sz(p, c.l(0), &text)?;
        Ok(text.len() as u32)
    }),
    e!(103 "_sscanfieee" [S, S] |p, c| {
        let input = cstr(p, c.l(0))?;
        let fmt = cstr(p, c.l(1))?;
        let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
        format::scanf(&input, &fmt, &mut GuestSink { p, at: esp + 12 })
    }),
    e!(105 "strcat" [P, S] strings::concat::<u8>),
    e!(106 "strchr" [S, L] |p, c| strings::find_char::<u8>(p, c, false)),
    e!(107 "strcmp" [S, S] |p, c| strings::compare_strings::<u8>(p, c, false)),
    e!(108 "strcpy" [P, S] strings::copy::<u8>),
    e!(109 "strcspn" [S, S] |p, c| strings::span::<u8>(p, c, false)),
    e!(110 "strdup" [S] strings::strdup),
    e!(111 "strlen" [S] |p, c| Ok(cstr(p, c.l(0))?.len() as u32)),
    e!(112 "strncat" [P, S, L] strings::strncat),
    e!(113 "strncmp" [S, S, L] |p, c| strings::compare_prefixes::<u8>(p, c, false)),
    e!(114 "strncpy" [P, S, L] strings::strncpy),
    e!(115 "strpbrk" [S, S] strings::find_any::<u8>),
    e!(116 "strrchr" [S, L] |p, c| strings::find_char::<u8>(p, c, true)),
    e!(117 "strspn" [S, S] |p, c| strings::span::<u8>(p, c, true)),
    e!(118 "strstr" [S, S] strings::find_string::<u8>),
    e!(119 "strtol" [S, P, L] strings::strtol),
    e!(120 "strtoul" [S, P, L] strings::strtol),
    e!(125 "_terminate" [] |p, _| {
        // Both arguments are on the stack (rc.exe pushes them): the kind
        // and the exit code.
        let code = stack_arg(p, 8)?;
        stdio::flush_all(p);
        Err(Stop::Exit(code))
    }),
    e!(144 "_ultoa" [L, P, L] strings::itoa_unsigned),
    e!(151 "_vprintfieee" [S, P] |p, c| {
        let text = format_at(p, c.l(0), c.l(1))?;
        stdio::write_stream_at(p, 1, &text)
    }),
    e!(153 "_vsprintfieee" [P, S, P] |p, c| {
        let text = format_at(p, c.l(1), c.l(2))?;
        put_sz(p, c.l(0), &text)?;
        Ok(text.len() as u32)
    }),
    e!(154 "_write" [L, P, L] stdio::write_fd),
    e!(156 "asctime" [P] time::asctime),
    e!(161 "atexit" [P] callback::atexit),
    e!(163 "catclose" [L] catalog::catclose),
    e!(164 "catgets" [L, L, L, P] catalog::catgets),
    e!(165 "catopen" [S, L] catalog::catopen),
    e!(168 "_chdir" [S] stdio::chdir),
    e!(169 "_chdrive" [L] |p, c| {
        if c.l(0) == 3 {
            return Ok(0);
        }
        set_errno(p, EACCES)?;
        Ok(u32::MAX)
    }),
    e!(180 "_CRT_init" [] startup::crt_init),
    e!(181 "_CRT_term" [] |p, _| {
        stdio::flush_all(p);
        Ok(0)
    }),
    e!(198 "_environ" data D_ENVIRON),
    e!(201 "_errno" [] |p, _| errno_addr(p)),
    e!(204 "_exception_procinit" [P] |p, c| {
        rt(p).matherr = c.l(0);
        Ok(0)
    }),
    e!(217 "_EXE_Exception" sys [P, P, P, P] |_, _| Ok(0)),
    e!(221 "fclose" [P] stdio::fclose),
    e!(225 "feof" [P] stdio::feof),
    e!(226 "ferror" [P] stdio::ferror),
    e!(227 "fflush" [P] stdio::fflush),
    e!(228 "fgetc" [P] stdio::fgetc),
    e!(231 "fgets" [P, L, P] stdio::fgets),
    e!(233 "fgetws" [P, L, P] stdio::fgetws),
    e!(234 "_fileno" [P] stdio::fileno),
    e!(240 "fopen" [S, S] stdio::fopen),
    e!(244 "_fprintfieee" [P, S] |p, c| {
        let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
        let text = format_at(p, c.l(1), esp + 12)?;
        stdio::fwrite_text(p, c.l(0), &text)
    }),
    e!(245 "fputc" [L, P] |p, c| stdio::fputc(p, c.l(1), c.l(0))),
    e!(247 "fputs" [S, P] |p, c| {
        let s = cstr(p, c.l(0))?;
        stdio::fwrite_text(p, c.l(1), &s).map(|r| if r == u32::MAX { r } else { 0 })
    }),
    e!(250 "fread" [P, L, L, P] stdio::fread),
    e!(258 "fseek" [P, L, L] stdio::fseek),
    e!(260 "_fstat" [L, P] stdio::fstat),
    e!(261 "ftell" [P] stdio::ftell),
    e!(265 "fwrite" [P, L, L, P] stdio::fwrite),
    e!(274 "_getcwd" [P, L] stdio::getcwd),
    e!(275 "_getdcwd" [L, P, L] |p, c| {
        if c.l(0) != 0 && c.l(0) != 3 {
            set_errno(p, EACCES)?;
            return Ok(0);
        }
        stdio::getcwd(p, &Call { vals: vec![c.l(1), c.l(2)], far16: false })
    }),
    e!(276 "_getdrive" [] |_, _| Ok(3)),
    e!(277 "getenv" [S] strings::getenv),
    e!(287 "iconv" [L, P, P, P, P] strings::iconv),
    e!(288 "iconv_close" [L] strings::iconv_close),
    e!(289 "iconv_open" [S, S] strings::iconv_open),
    e!(293 "isalnum" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_alphanumeric)))),
    e!(294 "isalpha" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_alphabetic)))),
    e!(296 "iscntrl" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_control)))),
    e!(297 "isdigit" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_digit)))),
    e!(298 "isgraph" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_graphic)))),
    e!(299 "islower" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_lowercase)))),
    e!(300 "isprint" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), |b| *b == b' ' || b.is_ascii_graphic())))),
    e!(301 "ispunct" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_punctuation)))),
    e!(302 "isspace" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), |b| b.is_ascii_whitespace() || *b == 0x0B)))),
    e!(303 "isupper" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_uppercase)))),
    e!(304 "iswalnum" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_alphanumeric)))),
    e!(305 "iswalpha" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_alphabetic)))),
    e!(309 "iswdigit" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), |ch| ch.is_ascii_digit())))),
    e!(311 "iswlower" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_lowercase)))),
    e!(314 "iswspace" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_whitespace)))),
    e!(315 "iswupper" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_uppercase)))),
    e!(317 "isxdigit" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_hexdigit)))),
    e!(328 "localtime" [P] time::localtime),
    e!(332 "_makepath" [P, S, S, S, P] strings::makepath),
    e!(333 "_matherr" [P] |_, _| Ok(0)),
    e!(340 "mbstowcs" [P, S, L] strings::mbstowcs),
    e!(341 "mbtowc" [P, P, L] strings::mbtowc),
    e!(354 "perror" [S] stdio::perror),
    e!(355 "_PGLOBAL_PTR" data D_PGLOBAL),
    e!(357 "_PrintErrMsg" [L, L, L] startup::print_err_msg),
    e!(361 "_putenv" [S] strings::putenv),
    e!(362 "puts" [S] |p, c| {
        let mut s = cstr(p, c.l(0))?;
        s.push(b'\n');
        let d = data_or_stop(p)?;
        stdio::fwrite_text(p, d + D_FILES + FILE_SIZE, &s).map(|r| if r == u32::MAX { r } else { 0 })
    }),
    e!(371 "remove" [S] stdio::remove),
    e!(382 "setlocale" [L, P] |p, c| {
        let d = data_or_stop(p)?;
        if c.l(1) == 0 {
            return Ok(d + D_LOCALE);
        }
        let name = cstr(p, c.l(1))?;
        Ok(if name.is_empty() || name == b"C" || name == b"POSIX" { d + D_LOCALE } else { 0 })
    }),
    e!(399 "_splitpath" [S, P, P, P, P] strings::splitpath),
    e!(402 "_stat" [S, P] stdio::stat),
    e!(403 "stderr" data D_STDIN + 8),
    e!(404 "stdin" data D_STDIN),
    e!(405 "stdout" data D_STDIN + 4),
    e!(406 "strcmpi" [S, S] |p, c| strings::compare_strings::<u8>(p, c, true)),
    e!(410 "strerror" [L] |p, c| {
        let d = data_or_stop(p)?;
        put_sz(p, d + D_STRERROR, strings::strerror_text(c.l(0)).as_bytes())?;
        Ok(d + D_STRERROR)
    }),
    e!(412 "strftime" [P, L, S, P] time::strftime),
    e!(413 "stricmp" [S, S] |p, c| strings::compare_strings::<u8>(p, c, true)),
    e!(414 "strlwr" [P] |p, c| strings::map_case(p, c.l(0), false)),
    e!(415 "strnicmp" [S, S, L] |p, c| strings::compare_prefixes::<u8>(p, c, true)),
    e!(423 "strtok" [P, S] strings::strtok),
    e!(425 "strupr" [P] |p, c| strings::map_case(p, c.l(0), true)),
    e!(428 "system" [S] callback::system),
    e!(436 "_tempnam" [S, S] stdio::tempnam),
    e!(441 "time" [P] time::time),
    e!(445 "tmpnam" [P] stdio::tmpnam),
    e!(446 "tolower" [L] |_, c| Ok(strings::to_case(c.l(0), false))),
    e!(447 "toupper" [L] |_, c| Ok(strings::to_case(c.l(0), true))),
    e!(448 "towlower" [L] |_, c| Ok(strings::to_wcase(c.l(0), false))),
    e!(449 "towupper" [L] |_, c| Ok(strings::to_wcase(c.l(0), true))),
    e!(452 "_tzset" [] time::tzset),
    e!(458 "_unlink" [S] stdio::remove),
    e!(459 "_utime" [S, P] stdio::utime),
    e!(461 "_vfprintfieee" [P, S, P] |p, c| {
        let text = format_at(p, c.l(1), c.l(2))?;
        stdio::fwrite_text(p, c.l(0), &text)
    }),
    e!(464 "wcscat" [P, P] strings::concat::<u16>),
    e!(465 "wcschr" [P, L] |p, c| strings::find_char::<u16>(p, c, false)),
    e!(466 "wcscmp" [P, P] |p, c| strings::compare_strings::<u16>(p, c, false)),
    e!(468 "wcscpy" [P, P] strings::copy::<u16>),
    e!(469 "wcscspn" [P, P] |p, c| strings::span::<u16>(p, c, false)),
    e!(473 "wcslen" [P] |p, c| Ok(wstr_max(p, c.l(0), MAX_STR)?.len() as u32)),
    e!(475 "wcsncmp" [P, P, L] |p, c| strings::compare_prefixes::<u16>(p, c, false)),
    e!(476 "wcsncpy" [P, P, L] strings::wcsncpy),
    e!(477 "wcspbrk" [P, P] strings::find_any::<u16>),
    e!(478 "wcsrchr" [P, L] |p, c| strings::find_char::<u16>(p, c, true)),
    e!(480 "wcsspn" [P, P] |p, c| strings::span::<u16>(p, c, true)),
    e!(483 "wcstok" [P, P, P] strings::wcstok),
    e!(486 "wcstol" [P, P, L] strings::wcstol),
    e!(487 "wcstombs" [P, P, L] strings::wcstombs),
    e!(489 "wcswcs" [P, P] strings::find_string::<u16>),
    e!(499 "_SysQueryFHState" [L, P] stdio::sys_query_fhstate),
    e!(500 "_SysQueryHType" [L, P, P] stdio::sys_query_htype),
    e!(501 "_get_handle_flags" [L] stdio::handle_flags),
    e!(504 "_swprintfieee" [P, L, P] strings::swprintf),
];

/// LIBCM's entries.
pub static LIBCM: [ApiDef; 168] = for_module("LIBCM", COMMON);
/// LIBCS's entries.
pub static LIBCS: [ApiDef; 168] = for_module("LIBCS", COMMON);
/// LIBCM's own entries.
pub static LIBCM_ONLY: &[ApiDef] = &[ApiDef {
    module: "LIBCM",
    ordinal: 511,
    name: "__cppstore",
    conv: Conv::Optlink,
    args: &[],
    func: Some(Func::Raw(startup::cppstore)),
}];

/// Every entry of both DLLs.
pub fn defs() -> impl Iterator<Item = &'static ApiDef> {
    LIBCM.iter().chain(LIBCS.iter()).chain(LIBCM_ONLY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_unique() {
        let ords: Vec<u32> = COMMON
            .iter()
            .map(|d| d.ordinal)
            .filter(|&o| o != 0)
            .collect();
        assert!(ords.windows(2).all(|w| w[0] < w[1]), "{ords:?}");
        assert_eq!(defs().filter(|d| d.module == "LIBCS").count(), COMMON.len());
    }
}
