//! Where an int3 may go. A breakpoint byte written into data changes the program's values
//! (a counter becomes 0xcc + 3), and one written inside an instruction turns it into
//! another instruction: both make the program do what it never would. scry refuses both
//! unless the user insists (`{force: true}`).

use super::*;
use crate::symbols::SymKind;

impl Session {
    /// Checks that `addr` is the first byte of an instruction in executable memory: the
    /// mapping must be executable, and when a function symbol covers `addr`, decoding the
    /// function from its start must reach `addr` exactly.
    pub(super) fn check_code_address(&mut self, addr: u64) -> Result<()> {
        let maps = self.targets.live()?.maps().unwrap_or_default();
        let Some(map) = maps::find_containing(&maps, addr) else {
            return Err(SessionError::Invalid(format!(
                "cannot set a breakpoint at {addr:#x}: address not mapped"
            )));
        };
        if !map.perms.exec {
            let what = self
                .symbolize(addr)
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            let place = map.file_path().unwrap_or("anonymous memory");
            return Err(SessionError::Invalid(format!(
                "cannot set a breakpoint at {addr:#x}{what}: it is data, not code (a non-executable mapping of {place}); an int3 there would change the program's values. Watch data with watchpoint.set(); {{force: true}} writes the int3 anyway"
            )));
        }
        let Some((start, name, size)) = self
            .symbols
            .symbol_at(RuntimeAddr(addr))
            .filter(|(_, sym, _)| sym.kind == SymKind::Func && sym.size > 0)
            .map(|(_, sym, off)| (addr - off, sym.display_name().into_owned(), sym.size))
        else {
            return Ok(());
        };
        if addr == start || addr - start >= size {
            return Ok(());
        }
        // Decode from the function's start: a boundary is proven when decoding lands on it.
        let count = (addr - start + 1) as usize;
        let insns = self.disasm(start, count)?;
        let Some(inside) = insns.iter().find(|i| i.addr + i.len as u64 > addr) else {
            return Ok(());
        };
        if inside.addr == addr || inside.mnemonic == "(bad)" {
            return Ok(());
        }
        let near: Vec<String> = insns
            .iter()
            .filter(|i| i.addr + 16 >= addr && i.addr <= addr + 16)
            .map(|i| format!("+{:#x}", i.addr - start))
            .collect();
        Err(SessionError::Invalid(format!(
            "cannot set a breakpoint at {addr:#x} ({name}+{:#x}): it is inside the instruction at {name}+{:#x} ({}); instructions nearby start at {}. {{force: true}} writes the int3 anyway",
            addr - start,
            inside.addr - start,
            inside.text,
            near.join(" ")
        )))
    }
}
