//! Paging: #PF with CR2 and error codes, U/S and R/W with and without
//! CR0.WP, accessed/dirty bits, and TLB flush points.

mod common;

use common::*;
use emu::{Exit, Fault, Gpr, Limits, vector};
use iced_x86::code_asm::*;

const PD: u32 = 0x10_0000;
const PT: u32 = 0x10_1000;

fn pte(m: &emu::Machine, page: u32) -> u32 {
    let mut b = [0u8; 4];
    m.read_phys(PT + page * 4, &mut b);
    u32::from_le_bytes(b)
}

fn set_pte(m: &mut emu::Machine, page: u32, v: u32) {
    m.write_phys(PT + page * 4, &v.to_le_bytes());
}

/// Identity-map 4 MB user/writable, then enable paging.
fn paged(code: &[u8]) -> emu::Machine {
    let mut m = prot_machine(code);
    m.write_phys(PD, &(PT | 7).to_le_bytes());
    for p in 0..1024 {
        set_pte(&mut m, p, (p << 12) | 7);
    }
    let c = m.cpu_mut_flush_tlb();
    c.cr3 = PD;
    c.cr0 |= 0x8000_0000;
    m
}

fn fault(m: &mut emu::Machine) -> Fault {
    run_to_fault(m, vector::PF, 100)
}

#[test]
fn not_present_page_faults_with_cr2() {
    let code = asm(32, 0x2000, |a| {
        a.mov(eax, dword_ptr(0x5004)).unwrap();
    });
    let mut m = paged(&code);
    set_pte(&mut m, 5, 0x5006);
    assert_eq!(fault(&mut m), Fault::code(vector::PF, 0));
    assert_eq!(m.cpu().cr2, 0x5004);
    assert_eq!(m.cpu().eip, 0x2000);
}

#[test]
fn write_protection_386_and_wp() {
    let code = asm(32, 0x2000, |a| {
        a.mov(dword_ptr(0x6000), eax).unwrap();
        a.hlt().unwrap();
    });
    let mut m = paged(&code);
    set_pte(&mut m, 6, 0x6005);
    // A 386 supervisor write ignores R/W.
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    // With CR0.WP (486) it faults: present | write.
    let mut m = paged(&code);
    set_pte(&mut m, 6, 0x6005);
    m.cpu_mut_flush_tlb().cr0 |= 1 << 16;
    assert_eq!(fault(&mut m), Fault::code(vector::PF, 3));
    assert_eq!(m.cpu().cr2, 0x6000);
}

#[test]
fn user_access_to_supervisor_page() {
    let ring0 = retf_to_ring3();
    let mut m = paged(&ring0);
    // mov eax,[ss:0x8000] (DS was nulled by the RETF to ring 3)
    m.write_phys(0x2100, &[0x36, 0xA1, 0x00, 0x80, 0, 0]);
    set_pte(&mut m, 8, 0x8003);
    assert_eq!(fault(&mut m), Fault::code(vector::PF, 5));
    assert_eq!(m.cpu().cr2, 0x8000);
}

#[test]
fn accessed_and_dirty_bits() {
    let code = asm(32, 0x2000, |a| {
        a.mov(eax, dword_ptr(0x9000)).unwrap();
        a.mov(dword_ptr(0xA000), eax).unwrap();
        a.hlt().unwrap();
    });
    let mut m = paged(&code);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(pte(&m, 9) & 0x60, 0x20, "read sets A only");
    assert_eq!(pte(&m, 0xA) & 0x60, 0x60, "write sets A and D");
    assert_eq!(pte(&m, 0xB) & 0x60, 0, "untouched page");
}

#[test]
fn tlb_keeps_stale_translations_until_cr3_reload() {
    let code = asm(32, 0x2000, |a| {
        a.mov(eax, dword_ptr(0xC000)).unwrap();
        a.hlt().unwrap();
        a.mov(eax, dword_ptr(0xC000)).unwrap();
        a.mov(ecx, cr3).unwrap();
        a.mov(cr3, ecx).unwrap();
        a.mov(eax, dword_ptr(0xC000)).unwrap();
        a.hlt().unwrap();
    });
    let mut m = paged(&code);
    m.write_phys(0xC000, &0x1111_1111u32.to_le_bytes());
    m.write_phys(0xD000, &0x2222_2222u32.to_le_bytes());
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Eax], 0x1111_1111);
    // Remap page C to frame D behind the guest's back (no flush).
    set_pte(&mut m, 0xC, 0xD007);
    m.set_halted(false);
    m.intercept(vector::PF, true);
    assert_eq!(
        m.run(Limits {
            instructions: Some(1),
            cycles: None
        }),
        Exit::InstructionLimit
    );
    assert_eq!(m.cpu().gpr[Gpr::Eax], 0x1111_1111, "stale TLB entry used");
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(
        m.cpu().gpr[Gpr::Eax],
        0x2222_2222,
        "MOV CR3 flushed the TLB"
    );
}

#[test]
fn instruction_at_a_page_end_before_a_missing_page_leaves_cr2() {
    // `inc eax; hlt` in the last two bytes of page 2, page 3 not present:
    // the fetch looks ahead into page 3 but needs nothing there, so no #PF
    // and no CR2 write. A JMP into page 3 then faults with CR2 = 0x3000.
    let mut m = paged(&[]);
    m.write_phys(0x2FFE, &[0x40, 0xF4]);
    set_pte(&mut m, 3, 0);
    m.set_eip(0x2FFE);
    m.intercept(vector::PF, true);
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!((m.cpu().gpr[Gpr::Eax], m.cpu().cr2), (1, 0));
    m.write_phys(0x2FF0, &[0xEB, 0x0E]); // jmp 0x3000
    m.set_eip(0x2FF0);
    m.set_halted(false);
    assert_eq!(fault(&mut m), Fault::code(vector::PF, 0));
    assert_eq!(m.cpu().cr2, 0x3000);
}

/// The host's `read_linear` reads a page at a time: the same bytes, the
/// same fault (at the first byte of the page that is not present) and the
/// same bytes before it, and CR2 untouched, as reading byte by byte.
#[test]
fn host_reads_across_pages_stop_at_the_missing_page() {
    let mut m = paged(&[0xF4]);
    let data: Vec<u8> = (0..0x2000u32).map(|i| (i * 7 + 3) as u8).collect();
    m.write_phys(0x6000, &data);
    // Linear page 6 maps frame 7 and page 7 frame 6: reads follow the map.
    set_pte(&mut m, 6, 0x7007);
    set_pte(&mut m, 7, 0x6007);
    m.flush_tlb();
    let mut got = vec![0u8; 0x20];
    m.read_linear(0x6FF0, &mut got).unwrap();
    let mut want = data[0x1FF0..0x2000].to_vec();
    want.extend_from_slice(&data[0x1000..0x1010]);
    assert_eq!(got, want);
    // Page 8 not present: the first 0x10 bytes are read, then #PF.
    set_pte(&mut m, 8, 0x8006);
    m.flush_tlb();
    m.cpu_mut_flush_tlb().cr2 = 0x1234;
    let mut got = vec![0xEEu8; 0x20];
    let f = m.read_linear(0x7FF0, &mut got).unwrap_err();
    assert_eq!(f.vector, vector::PF);
    assert_eq!(&got[..0x10], &data[0xFF0..0x1000]);
    assert!(
        got[0x10..].iter().all(|&b| b == 0xEE),
        "nothing past the fault"
    );
    assert_eq!(m.cpu().cr2, 0x1234, "CR2 is the guest's");
    // Byte by byte agrees.
    for i in 0..0x20u32 {
        let mut b = [0u8];
        let r = m.read_linear(0x7FF0 + i, &mut b);
        assert_eq!(r.is_ok(), i < 0x10, "byte {i}");
    }
}

/// All of RAM (4 MB), for comparing two machines.
fn ram(m: &emu::Machine) -> Vec<u8> {
    let mut v = vec![0u8; 4 << 20];
    m.read_phys(0, &mut v);
    v
}

/// `write_linear` of `data` at `lin` on a machine made by `make`, and the
/// same bytes written one `write_linear` call per byte on a second one:
/// the result, CR2 and every byte of RAM (data, A and D bits) agree.
/// Returns the bulk write's result and machine.
fn bulk_write_agrees(
    make: impl Fn() -> emu::Machine,
    lin: u32,
    data: &[u8],
) -> (Result<(), Fault>, emu::Machine) {
    let mut bulk = make();
    let mut bytes = make();
    bulk.cpu_mut_flush_tlb().cr2 = 0x1234;
    bytes.cpu_mut_flush_tlb().cr2 = 0x1234;
    let r = bulk.write_linear(lin, data);
    let mut rb = Ok(());
    for (i, b) in data.iter().enumerate() {
        rb = bytes.write_linear(lin.wrapping_add(i as u32), &[*b]);
        if rb.is_err() {
            break;
        }
    }
    assert_eq!(r, rb, "same result");
    assert_eq!(bulk.cpu().cr2, 0x1234, "CR2 is the guest's");
    assert_eq!(bytes.cpu().cr2, 0x1234);
    assert!(ram(&bulk) == ram(&bytes), "same memory");
    (r, bulk)
}

/// The host's `write_linear` writes a page at a time: across remapped
/// pages, setting A and D in each PTE as byte writes would, and stopping
/// at the first byte of a page that is not present or (with CR0.WP)
/// read-only, with the bytes before it written and CR2 untouched.
#[test]
fn host_writes_across_pages_match_byte_writes() {
    let data: Vec<u8> = (0..0x2400u32).map(|i| (i * 13 + 5) as u8).collect();
    // Linear pages 6 and 7 swap frames; 8 is not present.
    let swapped = |wp: bool, p8: u32| {
        move || {
            let mut m = paged(&[0xF4]);
            set_pte(&mut m, 6, 0x7007);
            set_pte(&mut m, 7, 0x6007);
            set_pte(&mut m, 8, p8);
            m.flush_tlb();
            if wp {
                m.cpu_mut_flush_tlb().cr0 |= 1 << 16;
            }
            m
        }
    };
    let (r, m) = bulk_write_agrees(swapped(false, 0x8007), 0x5F00, &data);
    assert_eq!(r, Ok(()));
    let mut got = vec![0u8; 0x1000];
    m.read_phys(0x7000, &mut got);
    assert_eq!(got, data[0x100..0x1100], "linear page 6 is frame 7");
    for page in [5, 6, 7, 8] {
        assert_eq!(pte(&m, page) & 0x60, 0x60, "A and D in PTE {page}");
    }
    assert_eq!(pte(&m, 9) & 0x60, 0, "page 9 untouched");

    let (r, m) = bulk_write_agrees(swapped(false, 0x8006), 0x6FF0, &data[..0x1020]);
    assert_eq!(r, Err(Fault::code(vector::PF, 2)), "not present, write");
    // Linear 0x6FF0.. is frame 7's last 0x10 bytes, then frame 6, then
    // the fault at linear 0x8000.
    let mut got = vec![0u8; 0x1020];
    m.read_phys(0x7FF0, &mut got[..0x10]);
    m.read_phys(0x6000, &mut got[0x10..0x1010]);
    m.read_phys(0x8000, &mut got[0x1010..]);
    assert_eq!(got[..0x1010], data[..0x1010], "the bytes before the fault");
    assert!(
        got[0x1010..].iter().all(|&b| b == 0),
        "nothing at or after it"
    );
    assert_eq!(pte(&m, 8) & 0x60, 0);

    // A read-only page with CR0.WP: #PF(present | write).
    let (r, _) = bulk_write_agrees(swapped(true, 0x8005), 0x7800, &data[..0x1000]);
    assert_eq!(r, Err(Fault::code(vector::PF, 3)));
    // Without WP the supervisor write goes through (the 386 rule).
    let (r, m) = bulk_write_agrees(swapped(false, 0x8005), 0x7800, &data[..0x1000]);
    assert_eq!(r, Ok(()));
    assert_eq!(pte(&m, 8) & 0x60, 0x60);
}

/// Bulk host writes over cached code drop the stale decodes, through
/// paging (`write_linear`) and physical memory (`write_phys`), also when
/// the code page is not the first page of the write.
#[test]
fn host_bulk_writes_over_cached_code_invalidate_it() {
    let mov = |v: u32| {
        asm(32, 0x2000, |a| {
            a.mov(eax, v).unwrap();
            a.hlt().unwrap();
        })
    };
    let mut m = paged(&mov(1));
    assert_eq!(m.run(Limits::default()), Exit::Halted);
    assert_eq!(m.cpu().gpr[Gpr::Eax], 1);
    assert!(m.icache_len() > 0);
    let run_at_2000 = |m: &mut emu::Machine| {
        m.set_eip(0x2000);
        m.set_halted(false);
        assert_eq!(m.run(Limits::default()), Exit::Halted);
        m.cpu().gpr[Gpr::Eax]
    };
    // Linear write from the page before the code.
    let mut block = vec![0x90u8; 0x1100];
    block[0x1000..0x1000 + mov(2).len()].copy_from_slice(&mov(2));
    m.write_linear(0x1000, &block).unwrap();
    assert_eq!(run_at_2000(&mut m), 2);
    // Physical write from the page before the code.
    block[0x1000..0x1000 + mov(3).len()].copy_from_slice(&mov(3));
    m.write_phys(0x1000, &block);
    assert_eq!(run_at_2000(&mut m), 3);
    // Code in a page the linear write reaches through a remapping:
    // linear page 9 is frame 2.
    set_pte(&mut m, 9, 0x2007);
    m.flush_tlb();
    let mut block = vec![0x90u8; 0x20];
    block[0x10..0x10 + mov(4).len()].copy_from_slice(&mov(4));
    m.write_linear(0x8FF0, &block).unwrap();
    assert_eq!(run_at_2000(&mut m), 4);
}
