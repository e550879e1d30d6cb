//! The interpreter: dispatch of decoded instructions by mnemonic to the
//! handlers in the submodules.
//!
//! Anything the CPU model does not have (a 386 opcode on the 286, a 486
//! opcode on the 386, any SSE/MMX/x87 beyond the probe set) raises #UD.

mod alu;
mod bits;
mod data;
mod flow;
pub(crate) mod intr;
mod muldiv;
pub(crate) mod operand;
mod shift;
pub(crate) mod string;
mod system;
pub(crate) mod task;
mod x87;

use crate::cpu::flags::*;
use crate::cpu::{CpuModel, Gpr};
use crate::fault::{Fault, R};
use crate::machine::{Flow, Machine};
use iced_x86::{CpuidFeature, Instruction, Mnemonic as M};

/// Does `model` execute this instruction at all?
pub(crate) fn model_allows(model: CpuModel, insn: &Instruction, has_386_prefix: bool) -> bool {
    let feats = insn.cpuid_features();
    match model {
        CpuModel::I286 => {
            let fs_gs = |r: iced_x86::Register| {
                matches!(r, iced_x86::Register::FS | iced_x86::Register::GS)
            };
            !has_386_prefix
                && (0..insn.op_count()).all(|i| {
                    insn.op_kind(i) != iced_x86::OpKind::Register || !fs_gs(insn.op_register(i))
                })
                && feats.iter().all(|f| {
                    matches!(
                        f,
                        CpuidFeature::INTEL8086
                            | CpuidFeature::INTEL8086_ONLY
                            | CpuidFeature::INTEL186
                            | CpuidFeature::INTEL286
                            | CpuidFeature::INTEL286_ONLY
                            | CpuidFeature::FPU
                            | CpuidFeature::FPU287
                            | CpuidFeature::FPU287XL_ONLY
                    )
                })
        }
        CpuModel::I386 => feats
            .iter()
            .all(|f| !matches!(f, CpuidFeature::INTEL486 | CpuidFeature::CPUID)),
        CpuModel::I486 => true,
    }
}

impl Machine {
    /// Execute one decoded instruction (EIP already points past it).
    pub(crate) fn exec(&mut self, insn: &Instruction) -> R<Flow> {
        let m = insn.mnemonic();
        match m {
            M::Mov => self.mov(insn)?,
            M::Add | M::Adc | M::Sub | M::Sbb | M::Cmp | M::And | M::Or | M::Xor | M::Test => {
                self.alu2(insn, m)?
            }
            M::Inc | M::Dec | M::Neg | M::Not => self.alu1(insn, m)?,
            M::Rol | M::Ror | M::Rcl | M::Rcr | M::Shl | M::Sal | M::Shr | M::Sar => {
                self.shift(insn, m)?
            }
            M::Shld => self.shift_double(insn, true)?,
            M::Shrd => self.shift_double(insn, false)?,
            M::Mul => self.mul1(insn, false)?,
            M::Imul => {
                if insn.op_count() == 1 {
                    self.mul1(insn, true)?
                } else {
                    self.imul_n(insn)?
                }
            }
            M::Div => self.div(insn, false)?,
            M::Idiv => self.div(insn, true)?,
            M::Cbw | M::Cwde | M::Cwd | M::Cdq => self.sign_ext(m),
            M::Daa | M::Das | M::Aaa | M::Aas | M::Aam | M::Aad | M::Salc => self.bcd(insn, m)?,
            M::Jmp => match insn.op0_kind() {
                iced_x86::OpKind::NearBranch16 | iced_x86::OpKind::NearBranch32 => {
                    self.branch(insn, true)?
                }
                iced_x86::OpKind::FarBranch16 | iced_x86::OpKind::FarBranch32 => {
                    self.far_jmp_call(insn, false)?
                }
                _ if matches!(
                    insn.code(),
                    iced_x86::Code::Jmp_m1616 | iced_x86::Code::Jmp_m1632
                ) =>
                {
                    self.far_jmp_call(insn, false)?
                }
                _ => self.jmp_indirect(insn)?,
            },
            M::Call => match insn.op0_kind() {
                iced_x86::OpKind::FarBranch16 | iced_x86::OpKind::FarBranch32 => {
                    self.far_jmp_call(insn, true)?
                }
                iced_x86::OpKind::Memory
                    if matches!(
                        insn.code(),
                        iced_x86::Code::Call_m1616 | iced_x86::Code::Call_m1632
                    ) =>
                {
                    self.far_jmp_call(insn, true)?
                }
                _ => self.call_near(insn)?,
            },
            M::Ja
            | M::Jae
            | M::Jb
            | M::Jbe
            | M::Je
            | M::Jne
            | M::Jg
            | M::Jge
            | M::Jl
            | M::Jle
            | M::Jo
            | M::Jno
            | M::Jp
            | M::Jnp
            | M::Js
            | M::Jns => {
                let t = self.cond(insn.condition_code());
                self.branch(insn, t)?
            }
            M::Loop => self.loop_op(insn, None)?,
            M::Loope => self.loop_op(insn, Some(true))?,
            M::Loopne => self.loop_op(insn, Some(false))?,
            M::Jcxz => {
                let t = self.cpu.gpr[Gpr::Ecx] & 0xFFFF == 0;
                self.branch(insn, t)?
            }
            M::Jecxz => {
                let t = self.cpu.gpr[Gpr::Ecx] == 0;
                self.branch(insn, t)?
            }
            M::Ret => self.ret_near(insn)?,
            M::Retf => self.ret_far(insn)?,
            M::Iret | M::Iretd => self.iret(insn)?,
            M::Enter => self.enter(insn)?,
            M::Leave => self.leave(insn)?,
            M::Int => return Ok(Flow::SoftInt(insn.immediate8())),
            M::Int3 => return Ok(Flow::SoftInt(3)),
            M::Into => {
                if self.cpu.eflags & OF != 0 {
                    return Ok(Flow::SoftInt(4));
                }
            }
            M::Int1 => return Err(Fault::new(crate::fault::vector::DB)),
            M::Hlt => {
                if self.cpu.protected() && self.cpu.cpl != 0 {
                    return Err(Fault::gp(0));
                }
                return Ok(Flow::Halt);
            }
            M::Nop | M::Pause => {}
            M::Movsb
            | M::Movsw
            | M::Movsd
            | M::Cmpsb
            | M::Cmpsw
            | M::Cmpsd
            | M::Stosb
            | M::Stosw
            | M::Stosd
            | M::Lodsb
            | M::Lodsw
            | M::Lodsd
            | M::Scasb
            | M::Scasw
            | M::Scasd
            | M::Insb
            | M::Insw
            | M::Insd
            | M::Outsb
            | M::Outsw
            | M::Outsd
                if string::is_string(m)
                    && insn.op_count() <= 2
                    && !insn.op_register(0).is_xmm()
                    && !insn.op_register(1).is_xmm() =>
            {
                self.string_op(insn, m)?
            }
            M::Bt | M::Bts | M::Btr | M::Btc => self.bit_test(insn, m)?,
            M::Bsf | M::Bsr => self.bit_scan(insn, m == M::Bsf)?,
            M::Seta
            | M::Setae
            | M::Setb
            | M::Setbe
            | M::Sete
            | M::Setne
            | M::Setg
            | M::Setge
            | M::Setl
            | M::Setle
            | M::Seto
            | M::Setno
            | M::Setp
            | M::Setnp
            | M::Sets
            | M::Setns => {
                let v = u32::from(self.cond(insn.condition_code()));
                let l = self.loc(insn, 0);
                self.write_loc(l, 1, v)?
            }
            M::Bswap => {
                let r = insn.op_register(0);
                let v = self.reg(r);
                self.set_reg(
                    r,
                    if operand::reg_size(r) == 4 {
                        v.swap_bytes()
                    } else {
                        0
                    },
                )
            }
            M::Xadd => self.xadd(insn)?,
            M::Cmpxchg => self.cmpxchg(insn)?,
            M::Movzx | M::Movsx => self.movx(insn, m == M::Movsx)?,
            M::Push => self.push_op(insn)?,
            M::Pop => self.pop_op(insn)?,
            M::Pusha | M::Pushad => self.pusha(m == M::Pushad)?,
            M::Popa | M::Popad => self.popa(m == M::Popad)?,
            M::Pushf | M::Pushfd => self.pushf(m == M::Pushfd)?,
            M::Popf | M::Popfd => self.popf(m == M::Popfd)?,
            M::Xchg => self.xchg(insn)?,
            M::Lea => {
                let v = self.ea(insn);
                let r = insn.op_register(0);
                self.set_reg(r, v)
            }
            M::Lds | M::Les | M::Lss | M::Lfs | M::Lgs => self.load_far_ptr(insn, m)?,
            M::Xlatb => {
                let bx = if self.addr32 {
                    self.cpu.gpr[Gpr::Ebx]
                } else {
                    self.cpu.gpr[Gpr::Ebx] & 0xFFFF
                };
                let off = bx.wrapping_add(self.cpu.gpr[Gpr::Eax] & 0xFF);
                let off = if self.addr32 { off } else { off & 0xFFFF };
                let v = self.read_mem(Self::mseg(insn), off, 1)?;
                self.set_reg(iced_x86::Register::AL, v)
            }
            M::Lahf => {
                let v = self.cpu.eflags & 0xD5 | RESERVED1;
                self.set_reg(iced_x86::Register::AH, v)
            }
            M::Sahf => {
                let ah = (self.cpu.gpr[Gpr::Eax] >> 8) & 0xFF;
                self.set_status(ah, CF | PF | AF | ZF | SF)
            }
            M::Clc => self.cpu.eflags &= !CF,
            M::Stc => self.cpu.eflags |= CF,
            M::Cmc => self.cpu.eflags ^= CF,
            M::Cld => self.cpu.eflags &= !DF,
            M::Std => self.cpu.eflags |= DF,
            M::Cli => self.cli_sti(false)?,
            M::Sti => self.cli_sti(true)?,
            M::Bound => self.bound(insn)?,
            M::In | M::Out => self.in_out(insn, m == M::In)?,
            M::Cpuid => self.cpuid(),
            M::Wait => self.fwait()?,
            M::Fninit
            | M::Fnstsw
            | M::Fnstcw
            | M::Fldcw
            | M::Fnclex
            | M::Fnop
            | M::Fsetpm
            | M::Fneni
            | M::Fndisi => self.x87(insn, m)?,
            M::Lgdt
            | M::Lidt
            | M::Sgdt
            | M::Sidt
            | M::Lldt
            | M::Sldt
            | M::Ltr
            | M::Str
            | M::Lmsw
            | M::Smsw
            | M::Clts
            | M::Lar
            | M::Lsl
            | M::Verr
            | M::Verw
            | M::Arpl
            | M::Invlpg
            | M::Invd
            | M::Wbinvd
            | M::Loadall => self.system(insn, m)?,
            _ => {
                if is_x87(insn) {
                    if self.model == CpuModel::I286 && self.cpu.cr0 & 4 == 0 {
                        // No 80287 attached: ESC opcodes pass by, but the
                        // memory operand's segment limit is still checked.
                        if insn.op_count() > 0 && insn.op0_kind() == iced_x86::OpKind::Memory {
                            let n = (insn.memory_size().size() as u32).max(1);
                            self.seg_linear(Self::mseg(insn), self.ea(insn), n, false)?;
                        }
                        return Ok(Flow::Next);
                    }
                    self.x87(insn, m)?;
                } else {
                    return Err(Fault::ud());
                }
            }
        }
        Ok(Flow::Next)
    }
}

fn is_x87(insn: &Instruction) -> bool {
    insn.cpuid_features().iter().any(|f| {
        matches!(
            f,
            CpuidFeature::FPU | CpuidFeature::FPU287 | CpuidFeature::FPU387
        )
    })
}
