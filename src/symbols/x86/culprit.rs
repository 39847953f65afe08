//! Which instruction made a data access. A hardware watchpoint traps *after* the access, with
//! pc on the next instruction; x86 cannot be decoded backwards with certainty, so every
//! decoding that ends exactly at pc is tried and the one whose memory operand (computed with
//! the registers as they are now) touches the watched bytes wins.

use iced_x86::{Decoder, DecoderOptions, Instruction, InstructionInfoFactory, OpAccess, Register};

/// The longest x86 instruction.
pub const MAX_INSN: usize = 15;

/// `code` holds the bytes just before `pc` (at most 15, ending at `pc`). Returns the start
/// address of the most plausible accessing instruction.
pub fn accessing_instruction(
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
