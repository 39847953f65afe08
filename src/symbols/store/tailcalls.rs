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
    /// whose call returns to `return_pc`, innermost first. Empty unless the callee's module's
    /// DWARF proves the chain, starting from what the caller's call site names (a function
    /// of the same module, or one it only declares, found by name in the callee's).
    pub fn tail_calls(&self, callee: RuntimeAddr, return_pc: RuntimeAddr) -> Vec<TailCall> {
        let (Some(m), Some(caller)) = (self.module_at(callee), self.module_at(return_pc)) else {
            return Vec::new();
        };
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
        let frames = if m.start == caller.start {
            dwarf.tail_call_frames(m.bias.to_file(return_pc), entry, &entry_of)
        } else {
            // A call into another module (through the PLT) names what it called only by a
            // declaration: that function, found by name in the callee's module, is where
            // the tail calls began (main -> pthread_join -> __pthread_clockjoin_ex).
            let Some(name) = caller
                .file
                .dwarf()
                .and_then(|d| d.declared_call_target(caller.bias.to_file(return_pc)))
            else {
                return Vec::new();
            };
            let Some(start) = entry_of(&name) else {
                return Vec::new();
            };
            dwarf.tail_calls_between(start, entry, &entry_of)
        };
        frames
            .into_iter()
            .map(|f| TailCall {
                pc: m.bias.to_runtime(f.pc),
                lookup: m.bias.to_runtime(f.lookup),
            })
            .collect()
    }
}
