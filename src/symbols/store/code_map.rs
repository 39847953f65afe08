//! The store as the unwinder's map of the process's code.

use super::SymbolStore;
use crate::symbols::addr::RuntimeAddr;
use crate::symbols::elf::Symbol;
use crate::symbols::unwind::{CfiTables, Code, CodeMap};

impl CodeMap for SymbolStore {
    fn code_at(&self, addr: RuntimeAddr) -> Option<Code<'_>> {
        let m = self.module_at(addr)?;
        Some(Code {
            image: &m.file.image,
            tables: m.file.cfi(),
            bias: m.bias,
            name: &m.name,
            is_exe: m.is_exe,
        })
    }

    fn separate_cfi(&self, addr: RuntimeAddr) -> Option<&CfiTables> {
        self.module_at(addr)?.file.separate_cfi()
    }

    fn function_at(&self, addr: RuntimeAddr) -> Option<(&Symbol, u64)> {
        self.symbol_at(addr).map(|(_, s, off)| (s, off))
    }

    fn vdso_range(&self) -> Option<(RuntimeAddr, RuntimeAddr)> {
        SymbolStore::vdso_range(self)
    }
}
