//! Which instruction made a data access. A hardware watchpoint traps *after* the access, with
//! pc on the next instruction; x86 cannot be decoded backwards with certainty, so every
//! decoding that ends exactly at pc is tried and the one whose memory operand (computed with
//! the registers as they are now) touches the watched bytes wins.

use iced_x86::{Decoder, DecoderOptions, Instruction, InstructionInfoFactory, OpAccess, Register};

/// The longest x86 instruction.
pub(crate) const MAX_INSN: usize = 15;

/// `code` holds the bytes just before `pc` (at most 15, ending at `pc`). Returns the start
/// address of the most plausible accessing instruction.
pub(crate) fn accessing_instruction(
    code: &[u8],
    pc: u64,
    watched: (u64, u64),
    reg: &dyn Fn(Register) -> Option<u64>,
) -> Option<u64> {
    let mut info = InstructionInfoFactory::new();
    let mut best: Option<(u32, u64)> = None;
    for len in 1..=code.len().min(MAX_INSN) {
        let start = pc - len as u64;
        let bytes = &code[code.len() - len..];
        let mut decoder = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
        let insn: Instruction = decoder.decode();
        if insn.is_invalid() || insn.len() != len {
            continue;
        }
        let score = score(&mut info, &insn, watched, reg);
        // Ties go to the longer decoding: a short tail of a longer instruction is the usual
        // false match.
        if best.is_none_or(|(s, _)| score >= s) && score > 0 {
            best = Some((score, start));
        }
    }
    best.map(|(_, start)| start)
}

/// `code` holds the bytes from `start`, a known instruction boundary (the start of the
/// function, say), up to `pc`. Returns the start of the instruction that ends exactly at pc,
/// found by decoding forward: unlike guessing backwards, no byte of another instruction can
/// pass for its start (a `jne` whose displacement is 0xf2 reads as a REPNE prefix one byte
/// early). `None` when the decoding does not land on pc (data in the code, or `start` was no
/// boundary).
pub(crate) fn instruction_ending_at(code: &[u8], start: u64, pc: u64) -> Option<u64> {
    let mut decoder = Decoder::with_ip(64, code, start, DecoderOptions::NONE);
    let mut insn = Instruction::default();
    while decoder.can_decode() {
        decoder.decode_out(&mut insn);
        if insn.is_invalid() {
            return None;
        }
        if insn.next_ip() == pc {
            return Some(insn.ip());
        }
        if insn.next_ip() > pc {
            return None;
        }
    }
    None
}

/// How the instruction in `bytes` (at `ip`) accessed `watched`, with registers as they are
/// after it ran: `Some(true)` it wrote there, `Some(false)` it only read, `None` it cannot
/// be told (its operands' addresses moved with it, as a string instruction's, and it both
/// reads and writes memory).
pub(crate) fn wrote(
    bytes: &[u8],
    ip: u64,
    (addr, len): (u64, u64),
    reg: &dyn Fn(Register) -> Option<u64>,
) -> Option<bool> {
    let mut decoder = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let insn = decoder.decode();
    if insn.is_invalid() {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(&insn);
    let writes = |a: OpAccess| {
        matches!(
            a,
            OpAccess::Write | OpAccess::CondWrite | OpAccess::ReadWrite | OpAccess::ReadCondWrite
        )
    };
    let (mut on_watch, mut any_write, mut any_read) = (None::<bool>, false, false);
    for mem in info.used_memory() {
        let w = writes(mem.access());
        any_write |= w;
        any_read |= !w || matches!(mem.access(), OpAccess::ReadWrite | OpAccess::ReadCondWrite);
        let size = mem.memory_size().size().max(1) as u64;
        let hits = mem
            .virtual_address(0, |r, _, _| reg(r))
            .is_some_and(|a| a < addr.saturating_add(len) && addr < a.saturating_add(size));
        if hits {
            on_watch = Some(on_watch.unwrap_or(false) | w);
        }
    }
    on_watch.or(match (any_write, any_read) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    })
}

/// The value the instruction in `bytes` (at `ip`) stored in exactly `watched`, where the
/// instruction itself says it: a `mov` to that memory from a register (the register still
/// holds it after the instruction) or an immediate. `None` for anything else (a
/// read-modify-write such as `add [x], 1` stored what memory held before, plus one).
pub(crate) fn stored_value(
    bytes: &[u8],
    ip: u64,
    (addr, len): (u64, u64),
    reg: &dyn Fn(Register) -> Option<u64>,
) -> Option<u64> {
    use iced_x86::{Mnemonic, OpKind};
    let mut decoder = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let insn = decoder.decode();
    if insn.is_invalid() || insn.mnemonic() != Mnemonic::Mov || insn.op_count() != 2 {
        return None;
    }
    if insn.op0_kind() != OpKind::Memory || insn.memory_size().size() as u64 != len {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(&insn);
    let at = info
        .used_memory()
        .first()?
        .virtual_address(0, |r, _, _| reg(r))?;
    if at != addr {
        return None;
    }
    let mask = if len >= 8 {
        u64::MAX
    } else {
        (1u64 << (len * 8)) - 1
    };
    let v = match insn.op1_kind() {
        OpKind::Register => {
            let r = insn.op1_register();
            let full = reg(r.full_register())?;
            // ah, bh, ch, dh: bits 8-15 of their register.
            let shift = if matches!(r, Register::AH | Register::BH | Register::CH | Register::DH) {
                8
            } else {
                0
            };
            full >> shift
        }
        OpKind::Immediate8
        | OpKind::Immediate16
        | OpKind::Immediate32
        | OpKind::Immediate32to64
        | OpKind::Immediate8to32
        | OpKind::Immediate8to64 => insn.immediate(1),
        _ => return None,
    };
    Some(v & mask)
}

fn score(
    info: &mut InstructionInfoFactory,
    insn: &Instruction,
    (addr, len): (u64, u64),
    reg: &dyn Fn(Register) -> Option<u64>,
) -> u32 {
    let used = info.info(insn);
    let mut best = 0;
    for mem in used.used_memory() {
        let writes = matches!(
            mem.access(),
            OpAccess::Write | OpAccess::CondWrite | OpAccess::ReadWrite | OpAccess::ReadCondWrite
        );
        let at = mem.virtual_address(0, |r, _, _| reg(r));
        let size = mem.memory_size().size().max(1) as u64;
        let hits =
            at.is_some_and(|a| a < addr.saturating_add(len) && addr < a.saturating_add(size));
        let s = match (hits, writes) {
            (true, true) => 4,
            (true, false) => 3,
            (false, _) => 1,
        };
        best = best.max(s);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_store() {
        // 0x1000: mov dword ptr [rip+0x10], eax (89 05 10 00 00 00): writes 0x1016.
        let code = [0x90, 0x90, 0x89, 0x05, 0x10, 0x00, 0x00, 0x00];
        let pc = 0x1006;
        let start = accessing_instruction(&code, pc, (0x1016, 4), &|_| None);
        assert_eq!(start, Some(0x1000));
    }

    #[test]
    fn forward_decoding_is_not_fooled_by_a_displacement_byte() {
        // jne +0xf2 (75 f2), then mov byte ptr [rip+0x2f58], 0 (c6 05 58 2f 00 00 00):
        // decoded backwards from the end, f2 05 ... can pass for a REPNE-prefixed store one
        // byte early; forward from the jne there is only one reading.
        let code = [0x75, 0xf2, 0xc6, 0x05, 0x58, 0x2f, 0x00, 0x00, 0x00];
        let pc = 0x1000 + code.len() as u64;
        assert_eq!(instruction_ending_at(&code, 0x1000, pc), Some(0x1002));
        assert_eq!(instruction_ending_at(&code, 0x1000, pc - 1), None);
    }

    #[test]
    fn tells_writes_from_reads() {
        // Segment bases are 0 in 64-bit code; no other register is needed here.
        let none = |r: Register| r.is_segment_register().then_some(0);
        // mov dword ptr [rip+0x10], eax at 0x1000 (6 bytes): writes 0x1016.
        let store = [0x89, 0x05, 0x10, 0x00, 0x00, 0x00];
        assert_eq!(wrote(&store, 0x1000, (0x1016, 4), &none), Some(true));
        // mov eax, dword ptr [rip+0x10]: reads it.
        let load = [0x8b, 0x05, 0x10, 0x00, 0x00, 0x00];
        assert_eq!(wrote(&load, 0x1000, (0x1016, 4), &none), Some(false));
        // add dword ptr [rip+0x10], 1: reads and writes it: a write.
        let add = [0x83, 0x05, 0x10, 0x00, 0x00, 0x00, 0x01];
        assert_eq!(wrote(&add, 0x1000, (0x1017, 4), &none), Some(true));
        // rep movsb with registers already moved on: it reads and writes, neither here.
        assert_eq!(
            wrote(&[0xf3, 0xa4], 0x1000, (0x9000, 1), &|_| Some(0)),
            None
        );
    }

    #[test]
    fn uses_registers_for_the_address() {
        // mov qword ptr [rdi+8], rsi (48 89 77 08), after a nop.
        let code = [0x90, 0x48, 0x89, 0x77, 0x08];
        let regs = |r: Register| match r {
            Register::RDI => Some(0x5000),
            _ => Some(0),
        };
        assert_eq!(
            accessing_instruction(&code, 0x2004, (0x5008, 8), &regs),
            Some(0x2000)
        );
        assert_eq!(
            accessing_instruction(&[0x90], 0x10, (0x5008, 8), &regs),
            None
        );
    }
}

/// The address the instruction at `ip` (in `bytes`) would have accessed, with the registers
/// it faulted with (a fault leaves them as they were before it): a general-protection fault
/// gives no address of its own. Of several memory operands, a non-canonical one (bits 63..47
/// not all equal, which no page can have) is the cause; `true` says it is one.
pub(crate) fn faulting_operand(
    bytes: &[u8],
    ip: u64,
    reg: &dyn Fn(Register) -> Option<u64>,
) -> Option<(u64, bool)> {
    let mut decoder = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let insn = decoder.decode();
    if insn.is_invalid() {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let addrs: Vec<u64> = factory
        .info(&insn)
        .used_memory()
        .iter()
        .filter_map(|m| m.virtual_address(0, |r, _, _| reg(r)))
        .collect();
    let canonical = |a: u64| {
        let top = a >> 47;
        top == 0 || top == (1 << 17) - 1
    };
    match addrs.iter().find(|&&a| !canonical(a)) {
        Some(&a) => Some((a, true)),
        None => addrs.first().map(|&a| (a, false)),
    }
}

#[cfg(test)]
mod fault_tests {
    use super::*;

    #[test]
    fn a_non_canonical_operand_is_the_faults_address() {
        // mov rax, [rdx+8] with rdx = 0x4141414141414141.
        let code = [0x48, 0x8b, 0x42, 0x08];
        // Segment bases are asked for too (0 in 64-bit mode).
        let reg = |r: Register| {
            Some(if r == Register::RDX {
                0x4141_4141_4141_4141
            } else {
                0
            })
        };
        assert_eq!(
            faulting_operand(&code, 0x1000, &reg),
            Some((0x4141_4141_4141_4149, true))
        );
        let low = |r: Register| Some(if r == Register::RDX { 0x1000 } else { 0 });
        assert_eq!(faulting_operand(&code, 0x1000, &low), Some((0x1008, false)));
        // No memory operand (ud2): nothing to say.
        assert_eq!(faulting_operand(&[0x0f, 0x0b], 0x1000, &reg), None);
    }
}
