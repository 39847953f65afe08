//! Frames that tail calls erased, between two physical frames of one module (see
//! `DwarfInfo::tail_call_frames`), in runtime addresses.

use super::SymbolStore;
use crate::symbols::addr::{FileAddr, RuntimeAddr};

/// One rebuilt frame: its pc (where it would have resumed) and the address to name it by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailCall {
    pub pc: RuntimeAddr,
    pub lookup: RuntimeAddr,
}

impl SymbolStore {
    /// The frames between a callee running at `callee` (its lookup address) and its caller
    /// whose call returns to `return_pc`, innermost first. Empty unless both lie in one
    /// module whose DWARF proves the chain.
    pub fn tail_calls(&self, callee: RuntimeAddr, return_pc: RuntimeAddr) -> Vec<TailCall> {
        let (Some(m), Some(caller)) = (self.module_at(callee), self.module_at(return_pc)) else {
            return Vec::new();
        };
        if m.start != caller.start {
            return Vec::new();
        }
        let Some((_, sym, off)) = self.symbol_at(callee) else {
            return Vec::new();
        };
        let entry = FileAddr(m.bias.to_file(callee).0 - off);
        debug_assert_eq!(entry, sym.addr);
        let Some(dwarf) = m.file.dwarf() else {
            return Vec::new();
        };
        let symbols = m.file.symbols();
        let entry_of = |name: &str| symbols.lookup_name_exact(name).map(|s| s.addr);
        dwarf
            .tail_call_frames(m.bias.to_file(return_pc), entry, &entry_of)
            .into_iter()
            .map(|f| TailCall {
                pc: m.bias.to_runtime(f.pc),
                lookup: m.bias.to_runtime(f.lookup),
            })
            .collect()
    }
}
