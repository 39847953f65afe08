//! How to get one thread past a breakpoint while every other thread keeps running.
//!
//! The classic way (take the int3 out, single-step, put it back) needs every other thread
//! stopped, or one of them could run through the hole; with a thousand threads that costs a
//! thousand stops per hit. Instead, the instruction under the breakpoint is either
//!
//! * emulated, when its whole effect is easy to compute (branches, calls, returns, pushes,
//!   no-ops): no execution at all;
//! * displaced: a copy runs in a scratch area of the target, single-stepped, and the thread's
//!   registers are then fixed up as if it had run in place. A copy at another address reads a
//!   different `rip`, so a rip-relative memory operand is rewritten to use a register the
//!   instruction does not touch, loaded with the rip the original would have seen;
//! * or, for the few kinds whose effect depends on where they run and cannot be fixed up
//!   (system calls, which the kernel may restart at their own address; far transfers;
//!   transactional memory), stepped in place the classic way.
//!
//! Pure: bytes and addresses in, a plan out.

use iced_x86::{
    ConditionCode, Decoder, DecoderOptions, Encoder, FlowControl, Instruction,
    InstructionInfoFactory, Mnemonic, OpKind, Register,
};

/// A general-purpose register by its hardware number: 0 rax, 1 rcx, 2 rdx, 3 rbx, 4 rsp,
/// 5 rbp, 6 rsi, 7 rdi, 8-15 r8-r15.
pub(crate) type Gpr = u8;

const RSP: Gpr = 4;

/// What the thread must do to execute the instruction it is stopped on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StepOver {
    /// Nothing runs: apply the effect to the registers (and the stack).
    Emulate(Effect),
    /// Run `code` at the scratch address with one single step, after loading `load` (a
    /// register the instruction does not touch, set to the rip the original would see; its
    /// value is put back after). Then `after` says how to finish.
    Displace {
        code: Vec<u8>,
        load: Option<(Gpr, u64)>,
        after: After,
    },
    /// Only the instruction at its own address will do: lift the int3 with every other
    /// thread stopped.
    InPlace,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// rip = the address.
    Jump(u64),
    /// rip = `target` if `cond` holds for the flags, else `next`.
    Branch { cond: Cond, target: u64, next: u64 },
    /// push `ret`; rip = `target`.
    Call { target: u64, ret: u64 },
    /// rip = [rsp]; rsp += 8 + `extra` (ret imm16).
    Return { extra: u64 },
    /// push the register; rip = `next`.
    Push { reg: Gpr, next: u64 },
}

/// How a displaced copy's result becomes the original's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// An ordinary instruction: rip = `next` once the copy has finished (a `rep` string
    /// instruction may need several steps: it has finished when rip leaves the copy).
    Continue { next: u64 },
    /// An indirect jump: rip is the absolute target the copy computed.
    Jumped,
    /// An indirect call: rip is the target; the return address it pushed is the copy's, and
    /// becomes `ret`.
    Called { ret: u64 },
}

/// A jcc condition, evaluated on rflags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cond(ConditionCode);

const CF: u64 = 1 << 0;
const PF: u64 = 1 << 2;
const ZF: u64 = 1 << 6;
const SF: u64 = 1 << 7;
const OF: u64 = 1 << 11;

impl Cond {
    pub(crate) fn holds(self, rflags: u64) -> bool {
        let f = |bit: u64| rflags & bit != 0;
        use ConditionCode as C;
        match self.0 {
            C::o => f(OF),
            C::no => !f(OF),
            C::b => f(CF),
            C::ae => !f(CF),
            C::e => f(ZF),
            C::ne => !f(ZF),
            C::be => f(CF) || f(ZF),
            C::a => !f(CF) && !f(ZF),
            C::s => f(SF),
            C::ns => !f(SF),
            C::p => f(PF),
            C::np => !f(PF),
            C::l => f(SF) != f(OF),
            C::ge => f(SF) == f(OF),
            C::le => f(ZF) || f(SF) != f(OF),
            C::g => !f(ZF) && f(SF) == f(OF),
            C::None => true,
        }
    }
}

/// Registers a rip-relative operand may be rewritten onto: encodable as a base with a 32-bit
/// displacement and no SIB byte, and never rsp/rbp (which a stack access might still need).
const SPARE: [Register; 12] = [
    Register::RAX,
    Register::RCX,
    Register::RDX,
    Register::RBX,
    Register::RSI,
    Register::RDI,
    Register::R8,
    Register::R9,
    Register::R10,
    Register::R11,
    Register::R14,
    Register::R15,
];

/// Plans the step over the instruction in `code` (its bytes, at least up to 15, the
/// original ones, not the int3) at `addr`, with `scratch` the address a displaced copy
/// would run at.
pub(crate) fn plan(code: &[u8], addr: u64, scratch: u64) -> StepOver {
    let mut decoder = Decoder::with_ip(64, code, addr, DecoderOptions::NONE);
    let insn = decoder.decode();
    if insn.is_invalid() {
        return StepOver::InPlace;
    }
    let next = insn.next_ip();
    match insn.flow_control() {
        FlowControl::UnconditionalBranch if is_near_branch(&insn) => {
            StepOver::Emulate(Effect::Jump(insn.near_branch_target()))
        }
        FlowControl::ConditionalBranch
            if is_near_branch(&insn) && insn.condition_code() != ConditionCode::None =>
        {
            StepOver::Emulate(Effect::Branch {
                cond: Cond(insn.condition_code()),
                target: insn.near_branch_target(),
                next,
            })
        }
        FlowControl::Call if is_near_branch(&insn) => StepOver::Emulate(Effect::Call {
            target: insn.near_branch_target(),
            ret: next,
        }),
        FlowControl::Return if insn.mnemonic() == Mnemonic::Ret => {
            let extra = if insn.op_count() == 1 && insn.op0_kind() == OpKind::Immediate16 {
                insn.immediate16() as u64
            } else {
                0
            };
            StepOver::Emulate(Effect::Return { extra })
        }
        FlowControl::Next if is_noop(&insn) => StepOver::Emulate(Effect::Jump(next)),
        FlowControl::Next if insn.mnemonic() == Mnemonic::Push && push_gpr(&insn).is_some() => {
            StepOver::Emulate(Effect::Push {
                reg: push_gpr(&insn).unwrap_or(0),
                next,
            })
        }
        FlowControl::Next => displace(insn, scratch, After::Continue { next }),
        FlowControl::IndirectBranch if insn.mnemonic() == Mnemonic::Jmp => {
            displace(insn, scratch, After::Jumped)
        }
        FlowControl::IndirectCall if insn.mnemonic() == Mnemonic::Call => {
            displace(insn, scratch, After::Called { ret: next })
        }
        // System calls and interrupts (restarted at their own address by the kernel), far
        // transfers, loop/jrcxz, transactional memory, ud2/int3: in place.
        _ => StepOver::InPlace,
    }
}

pub(crate) fn is_near_branch(insn: &Instruction) -> bool {
    matches!(
        insn.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    )
}

fn is_noop(insn: &Instruction) -> bool {
    matches!(
        insn.mnemonic(),
        Mnemonic::Nop | Mnemonic::Endbr64 | Mnemonic::Pause
    )
}

/// `push r64` (not a memory operand, not an immediate, not rsp itself).
fn push_gpr(insn: &Instruction) -> Option<Gpr> {
    if insn.op_count() != 1 || insn.op0_kind() != OpKind::Register {
        return None;
    }
    let reg = insn.op0_register();
    if !reg.is_gpr64() {
        return None;
    }
    let n = reg.number() as Gpr;
    (n != RSP).then_some(n)
}

/// A copy of `insn` for `scratch`, its rip-relative operand (if any) moved onto a spare
/// register loaded with the original's next rip.
fn displace(mut insn: Instruction, scratch: u64, after: After) -> StepOver {
    let mut load = None;
    if insn.is_ip_rel_memory_operand() {
        let used = InstructionInfoFactory::new()
            .info(&insn)
            .used_registers()
            .iter()
            .map(|u| u.register().full_register())
            .collect::<Vec<_>>();
        let Some(spare) = SPARE.iter().copied().find(|r| !used.contains(r)) else {
            return StepOver::InPlace;
        };
        let next = insn.next_ip();
        let target = insn.ip_rel_memory_address();
        insn.set_memory_base(spare);
        insn.set_memory_displacement64(target.wrapping_sub(next));
        insn.set_memory_displ_size(8);
        load = Some((spare.number() as Gpr, next));
    }
    let mut encoder = Encoder::new(64);
    match encoder.encode(&insn, scratch) {
        Ok(_) => StepOver::Displace {
            code: encoder.take_buffer(),
            load,
            after,
        },
        Err(_) => StepOver::InPlace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: u64 = 0x5555_5555_1000;
    const SCRATCH: u64 = 0x7fff_f000_0000;

    fn decode_at(code: &[u8], ip: u64) -> Instruction {
        Decoder::with_ip(64, code, ip, DecoderOptions::NONE).decode()
    }

    #[test]
    fn branches_calls_returns_and_pushes_are_emulated() {
        // jmp rel32 to AT+0x105
        assert_eq!(
            plan(&[0xe9, 0x00, 0x01, 0, 0], AT, SCRATCH),
            StepOver::Emulate(Effect::Jump(AT + 0x105))
        );
        // call rel32
        assert_eq!(
            plan(&[0xe8, 0x10, 0, 0, 0], AT, SCRATCH),
            StepOver::Emulate(Effect::Call {
                target: AT + 0x15,
                ret: AT + 5
            })
        );
        // je rel8
        let StepOver::Emulate(Effect::Branch { cond, target, next }) =
            plan(&[0x74, 0x10], AT, SCRATCH)
        else {
            panic!("je is a branch")
        };
        assert_eq!((target, next), (AT + 0x12, AT + 2));
        assert!(cond.holds(ZF) && !cond.holds(0));
        // jl: SF != OF
        let StepOver::Emulate(Effect::Branch { cond, .. }) = plan(&[0x7c, 0x10], AT, SCRATCH)
        else {
            panic!("jl is a branch")
        };
        assert!(cond.holds(SF) && cond.holds(OF) && !cond.holds(SF | OF) && !cond.holds(0));
        assert_eq!(
            plan(&[0xc3], AT, SCRATCH),
            StepOver::Emulate(Effect::Return { extra: 0 })
        );
        assert_eq!(
            plan(&[0xc2, 0x10, 0x00], AT, SCRATCH),
            StepOver::Emulate(Effect::Return { extra: 16 })
        );
        // push rbp; push r15; endbr64
        assert_eq!(
            plan(&[0x55], AT, SCRATCH),
            StepOver::Emulate(Effect::Push {
                reg: 5,
                next: AT + 1
            })
        );
        assert_eq!(
            plan(&[0x41, 0x57], AT, SCRATCH),
            StepOver::Emulate(Effect::Push {
                reg: 15,
                next: AT + 2
            })
        );
        assert_eq!(
            plan(&[0xf3, 0x0f, 0x1e, 0xfa], AT, SCRATCH),
            StepOver::Emulate(Effect::Jump(AT + 4))
        );
    }

    #[test]
    fn ordinary_instructions_are_copied_as_they_are() {
        // sub rsp, 0x18
        let StepOver::Displace { code, load, after } = plan(&[0x48, 0x83, 0xec, 0x18], AT, SCRATCH)
        else {
            panic!("displaced")
        };
        assert_eq!(code, vec![0x48, 0x83, 0xec, 0x18]);
        assert_eq!(load, None);
        assert_eq!(after, After::Continue { next: AT + 4 });
    }

    #[test]
    fn rip_relative_operands_move_onto_a_spare_register() {
        // mov eax, [rip+0x2000]: the copy reads [reg+disp] with reg = AT+6, the same byte.
        let StepOver::Displace { code, load, after } =
            plan(&[0x8b, 0x05, 0x00, 0x20, 0, 0], AT, SCRATCH)
        else {
            panic!("displaced")
        };
        let (reg, value) = load.expect("a register to load");
        assert_eq!(value, AT + 6);
        assert_ne!(reg, 0, "rax is written by the instruction: not the spare");
        let copy = decode_at(&code, SCRATCH);
        assert_eq!(copy.mnemonic(), Mnemonic::Mov);
        assert_eq!(copy.memory_base().number() as u8, reg);
        assert_eq!(
            value.wrapping_add(copy.memory_displacement64()),
            AT + 6 + 0x2000
        );
        assert_eq!(after, After::Continue { next: AT + 6 });
    }

    #[test]
    fn indirect_calls_and_jumps_are_copied_and_fixed_up() {
        // call [rip+0x2fe2] (a PLT-style call through the GOT)
        let StepOver::Displace { load, after, .. } =
            plan(&[0xff, 0x15, 0xe2, 0x2f, 0, 0], AT, SCRATCH)
        else {
            panic!("displaced")
        };
        assert_eq!(after, After::Called { ret: AT + 6 });
        assert_eq!(load.map(|l| l.1), Some(AT + 6));
        // jmp rax
        let StepOver::Displace { code, load, after } = plan(&[0xff, 0xe0], AT, SCRATCH) else {
            panic!("displaced")
        };
        assert_eq!((code, load, after), (vec![0xff, 0xe0], None, After::Jumped));
    }

    #[test]
    fn system_calls_and_the_undecodable_stay_in_place() {
        assert_eq!(plan(&[0x0f, 0x05], AT, SCRATCH), StepOver::InPlace);
        assert_eq!(plan(&[0xcd, 0x80], AT, SCRATCH), StepOver::InPlace);
        assert_eq!(plan(&[0x0f, 0x0b], AT, SCRATCH), StepOver::InPlace);
        assert_eq!(plan(&[0x06], AT, SCRATCH), StepOver::InPlace);
        assert_eq!(plan(&[], AT, SCRATCH), StepOver::InPlace);
    }
}
