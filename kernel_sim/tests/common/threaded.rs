//! A 32-bit test program with thread functions: its code starts with a
//! jump over them to `main` ([`Prog::start_main`]), and it calls DOSCALLS
//! with dword arguments, checking each return code.

use super::Code;

/// A DOSCALLS argument: a value, or the dword at an address.
#[derive(Clone, Copy)]
pub enum Arg {
    Imm(u32),
    Mem(u32),
}

/// DosCreateThread.
const CREATE_THREAD: u32 = 311;
/// DosWaitThread.
const WAIT_THREAD: u32 = 349;
/// DosSleep.
const SLEEP: u32 = 229;

/// The program being built.
pub struct Prog {
    pub c: Code,
    jmp: usize,
}

impl Prog {
    pub fn new() -> Prog {
        let mut c = Code::new();
        c.c.push(0xE9);
        let jmp = c.c.len();
        c.c.extend([0; 4]);
        Prog { c, jmp }
    }
    /// The flat address of the next instruction (code is at 0x10000).
    pub fn here(&self) -> u32 {
        0x10000 + self.c.c.len() as u32
    }
    /// `main` starts here.
    pub fn start_main(&mut self) {
        self.c.land(self.jmp);
    }
    pub fn raw(&mut self, b: &[u8]) -> &mut Prog {
        self.c.c.extend(b);
        self
    }
    /// `mov dword [addr], eax`.
    pub fn store_eax(&mut self, addr: u32) -> &mut Prog {
        self.raw(&[0xA3]).raw(&addr.to_le_bytes())
    }
    /// `xor eax, eax; ret`: the thread returns 0.
    pub fn ret0(&mut self) {
        self.raw(&[0x31, 0xC0, 0xC3]);
    }
    /// DOSCALLS.`ordinal` with dword arguments (C order), expecting `rc`
    /// (else exit `tag`).
    pub fn api(&mut self, ordinal: u32, args: &[Arg], rc: u32, tag: u32) -> &mut Prog {
        for a in args.iter().rev() {
            match *a {
                Arg::Imm(v) => self.c.push(v),
                Arg::Mem(at) => self.c.push_mem(at),
            };
        }
        self.c
            .call("DOSCALLS", ordinal, 4 * args.len() as u8)
            .expect(rc, tag);
        self
    }
    /// DosCreateThread(&tid at `tid`, `entry`, `param`, 0, 16 KB), else
    /// exit 0xC0.
    pub fn create(&mut self, tid: u32, entry: u32, param: u32) -> &mut Prog {
        let args = [tid, entry, param, 0, 0x4000].map(Arg::Imm);
        self.api(CREATE_THREAD, &args, 0, 0xC0)
    }
    /// DosCreateThread of `entry` with parameter 0.
    pub fn thread(&mut self, tid: u32, entry: u32) -> &mut Prog {
        self.create(tid, entry, 0)
    }
    /// DosWaitThread(`tid`, option), expecting `rc` (else exit `tag`).
    pub fn wait(&mut self, tid: u32, option: u32, rc: u32, tag: u32) -> &mut Prog {
        self.api(WAIT_THREAD, &[Arg::Imm(tid), Arg::Imm(option)], rc, tag)
    }
    /// DosSleep(`ms`), its return code unchecked.
    pub fn sleep(&mut self, ms: u32) -> &mut Prog {
        self.c.push(ms).call("DOSCALLS", SLEEP, 4);
        self
    }
    /// Store bytes at `at`, dword by dword (zero padded).
    pub fn bytes(&mut self, at: u32, b: &[u8]) -> &mut Prog {
        for (i, ch) in b.chunks(4).enumerate() {
            let mut w = [0u8; 4];
            w[..ch.len()].copy_from_slice(ch);
            self.c.store(at + 4 * i as u32, u32::from_le_bytes(w));
        }
        self
    }
    /// Store a NUL-terminated string at `at`.
    pub fn text(&mut self, at: u32, s: &str) -> &mut Prog {
        let mut b = s.as_bytes().to_vec();
        b.push(0);
        self.bytes(at, &b)
    }
    /// Exit `tag` unless the dword at `at` is `v`.
    pub fn check(&mut self, at: u32, v: u32, tag: u32) -> &mut Prog {
        self.c.load_eax(at).expect(v, tag);
        self
    }
    /// Exit 0: the program's bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.c.push(0);
        self.c.c.push(0x58);
        self.c.exit_eax()
    }
}

/// Runs a program (5,000,000 instructions at most): how it ended and the
/// `len` bytes at DATA.
pub fn run_reading(bytes: Vec<u8>, len: usize) -> (kernel_sim::Outcome, Vec<u8>) {
    run_reading_within(bytes, len, 5_000_000)
}

/// [`run_reading`] with at most `max_insns` instructions.
pub fn run_reading_within(
    bytes: Vec<u8>,
    len: usize,
    max_insns: u64,
) -> (kernel_sim::Outcome, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(max_insns);
    let mut p = kernel_sim::Process::new(cfg).unwrap();
    let o = p.run();
    let mut mem = vec![0u8; len];
    p.read_guest(super::DATA, &mut mem).unwrap();
    (o, mem)
}

/// The dword at guest address `a` in `mem`, read from DATA.
pub fn dword_at(mem: &[u8], a: u32) -> u32 {
    let o = (a - super::DATA) as usize;
    u32::from_le_bytes(mem[o..o + 4].try_into().unwrap())
}
