//! The instruction that made a watchpoint's access: the trap arrives after it, with pc on
//! the next one, so it is found by decoding (see SPEC, watchpoints).

use super::points::register_value;
use super::*;

impl Session {
    /// Finds the instruction that made a watchpoint's access, once, while the target is still
    /// at that stop (decoding it costs more than the stop itself, so only on demand).
    pub fn find_culprit(&mut self, info: &mut StopInfo) {
        let Some(tid) = info.tid else { return };
        let StopKind::Watchpoint(w) = &mut info.kind else {
            return;
        };
        if w.culprit_searched || !self.is_live() {
            return;
        }
        w.culprit_searched = true;
        let (addr, len) = (w.addr, w.len);
        if let Ok(Some(c)) = self.culprit(tid, addr, len) {
            let insn_symbol = self.symbolize(c.addr);
            let insn_source = self.source_position(c.addr);
            if let StopKind::Watchpoint(w) = &mut info.kind {
                (w.insn_addr, w.insn_text, w.insn_symbol) = (Some(c.addr), c.text, insn_symbol);
                w.insn_source = insn_source;
            }
        }
    }

    /// The instruction of thread `tid` that made the access to `[addr, addr + len)`: the trap
    /// leaves pc just past it. Decoded forward from the start of the function holding it
    /// (an instruction boundary), so the instruction found is the one that ends at pc;
    /// only where no function is known is it guessed backwards.
    pub(super) fn culprit(&mut self, tid: Tid, addr: u64, len: u64) -> Result<Option<Culprit>> {
        let regs = self.targets.live()?.regs(tid)?;
        let pc = regs.rip;
        // At a function's first instruction the thread came by a call or a jump (the
        // write was most likely the call's push of its return address): the bytes before
        // are another function's, and decoding them named an instruction that never ran
        // (`add [rsi-0x70], ah` from the middle of one).
        if self
            .symbols
            .symbol_at(RuntimeAddr(pc))
            .is_some_and(|(_, s, off)| off == 0 && s.size > 0)
        {
            return Ok(None);
        }
        let reg = |r: iced_x86::Register| register_value(&regs, r);
        let boundary = self
            .symbols
            .symbol_at(RuntimeAddr(pc.saturating_sub(1)))
            // An unsized symbol (`_init`) only names what follows it: the lazy-binding stub
            // after it in .plt starts elsewhere, and decoding from `_init` went through
            // its padding into the middle of an instruction.
            .filter(|(_, s, off)| *off < s.size)
            .map(|(_, _, off)| pc - 1 - off)
            .filter(|&start| pc - start <= FORWARD_DECODE_LIMIT);
        let inferior = self.targets.live()?;
        let forward = boundary.and_then(|start| {
            let mut code = vec![0u8; (pc - start) as usize];
            inferior.read_memory(start, &mut code).ok()?;
            culprit::instruction_ending_at(&code, start, pc)
        });
        let start = match forward {
            Some(start) => start,
            None => {
                let from = pc.saturating_sub(culprit::MAX_INSN as u64);
                let mut code = vec![0u8; (pc - from) as usize];
                // The bytes right before pc may start on an unmapped page: keep what is
                // readable.
                let mut skip = 0;
                while skip < code.len()
                    && inferior
                        .read_memory(from + skip as u64, &mut code[skip..])
                        .is_err()
                {
                    skip += 1;
                }
                let Some(start) =
                    culprit::accessing_instruction(&code[skip..], pc, (addr, len), &reg)
                else {
                    return Ok(None);
                };
                start
            }
        };
        let mut bytes = vec![0u8; (pc - start) as usize];
        inferior.read_memory(start, &mut bytes)?;
        let wrote = culprit::wrote(&bytes, start, (addr, len), &reg);
        let stored = culprit::stored_value(&bytes, start, (addr, len), &reg);
        let text = self.disasm(start, 1)?.into_iter().next().map(|i| i.text);
        Ok(Some(Culprit {
            addr: start,
            text,
            wrote,
            stored,
        }))
    }
}

/// The instruction that made a watched access.
pub(super) struct Culprit {
    pub addr: u64,
    pub text: Option<String>,
    /// Whether it wrote the watched bytes (`None`: it cannot be told).
    pub wrote: Option<bool>,
    /// What it stored there, where the instruction says (`mov [x], reg | imm`).
    pub stored: Option<u64>,
}

/// How far back from pc a function's start may be for the culprit to be decoded forward
/// from it (a function of 64 KiB decodes in well under a millisecond).
const FORWARD_DECODE_LIMIT: u64 = 64 << 10;
