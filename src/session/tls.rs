//! Thread-local variables on x86-64 (TLS variant II). The thread pointer (fs_base) points at
//! the TCB; its second word is the DTV, whose entry `modid` holds the address of that module's
//! TLS block in this thread. Module ids are given in link-map order to modules with a PT_TLS.

use super::backend::ProcessView;
use super::typed_value::TypedValue;
use super::{Result, Session, SessionError};
use crate::symbols::{LoadedModule, SymbolStore};

impl Session {
    /// Address and size of thread-local `name` in the selected thread.
    pub fn thread_local(&mut self, name: &str) -> Result<(u64, u64)> {
        if self.symbols.tls_symbol(name).is_none() {
            self.refresh_symbols_on_miss();
        }
        if self.symbols.tls_symbol(name).is_none() {
            return Err(SessionError::Invalid(format!(
                "no thread-local variable '{name}' in the executable or its libraries"
            )));
        }
        if let Some(unknown) = self.register_unknown("fs_base") {
            return Err(unknown);
        }
        let fs_base = self.regs()?.fs_base;
        let tid = self.selected_tid()?;
        let ins = self.inspect(fs_base)?;
        let (module, sym) = ins
            .store
            .tls_symbol(name)
            .ok_or_else(|| SessionError::Invalid(format!("no thread-local variable '{name}'")))?;
        match ins.tls_block(module) {
            Some(block) => Ok((block + sym.addr.0, sym.size)),
            None => Err(SessionError::Invalid(format!(
                "the TLS block of {} is not allocated in thread {tid} yet (glibc gives a library loaded with dlopen its block in a thread when that thread first uses one of its thread-locals)",
                module.path
            ))),
        }
    }

    /// A thread-local variable with its DWARF type, when DWARF describes it.
    pub fn thread_local_typed(&mut self, name: &str) -> Result<Option<TypedValue>> {
        if self.symbols.tls_symbol(name).is_none() {
            return Ok(None);
        }
        match self.lookup_global(name) {
            Ok(v) => Ok(Some(v)),
            Err(_) => Ok(None),
        }
    }
}

/// Byte offset of the DTV pointer in glibc's `tcbhead_t` (`tcb`, then `dtv`).
pub(crate) const TCB_DTV_OFFSET: u64 = 8;
/// `dtv_t` is a union of a counter and `{ void *val; void *to_free; }`: 16 bytes.
pub(crate) const DTV_ENTRY_SIZE: u64 = 16;
/// glibc marks a DTV entry whose block is not allocated yet with -1.
pub(crate) const DTV_UNALLOCATED: u64 = u64::MAX;

/// Where a module's TLS block starts when the static formula is all there is: the
/// executable's block sits right below the thread pointer, rounded to its alignment.
pub(crate) fn exe_block(fs_base: u64, memsz: u64, align: u64) -> u64 {
    let align = align.max(1);
    let size = memsz.div_ceil(align) * align;
    fs_base.wrapping_sub(size)
}

/// `struct r_debug`: `r_version` (int, padded) then `r_map`.
pub(crate) const R_DEBUG_MAP_OFFSET: u64 = 8;
/// `struct link_map`'s public head: `l_addr`, `l_name`, `l_ld`, `l_next`, `l_prev`.
pub(crate) const LINK_MAP_NEXT_OFFSET: u64 = 24;

/// The address of a module's TLS block in the thread whose thread pointer is `fs_base`.
/// Module ids follow the dynamic loader's link-map order (see `thread_local`).
pub(super) fn tls_block(
    inferior: &dyn ProcessView,
    store: &SymbolStore,
    module: &LoadedModule,
    fs_base: u64,
) -> Option<u64> {
    let tls = module.image().tls.as_ref()?;
    // No thread has a thread pointer of 0: a target that cannot give fs_base (a remote
    // stub's description without it) reads it as 0, and no block is to be made up from it.
    if fs_base == 0 {
        return None;
    }
    let read = |a: u64| -> Option<u64> {
        let mut b = [0u8; 8];
        inferior.read_memory(a, &mut b).ok()?;
        Some(u64::from_le_bytes(b))
    };
    let mut modid = None;
    if let Ok(r_debug) = store.resolve("_r_debug") {
        let mut map = read(r_debug.0 + R_DEBUG_MAP_OFFSET).unwrap_or(0);
        let mut n = 0;
        let mut seen = 0;
        while map != 0 && seen < 4096 {
            seen += 1;
            let Some(l_addr) = read(map) else { break };
            let has_tls = store
                .modules()
                .iter()
                .any(|m| m.bias.0 == l_addr && m.image().tls.is_some());
            if has_tls {
                n += 1;
                if l_addr == module.bias.0 {
                    modid = Some(n);
                    break;
                }
            }
            map = read(map + LINK_MAP_NEXT_OFFSET).unwrap_or(0);
        }
    }
    if modid.is_none() && module.is_exe {
        modid = Some(1);
    }
    if let Some(id) = modid {
        if let Some(dtv) = read(fs_base + TCB_DTV_OFFSET) {
            // dtv[-1] holds how many entries this thread's DTV has: a module loaded later
            // than the DTV was last grown has no entry in it yet.
            let len = read(dtv.wrapping_sub(DTV_ENTRY_SIZE)).unwrap_or(0);
            if id > len {
                return None;
            }
            if let Some(block) = read(dtv + DTV_ENTRY_SIZE * id) {
                if block != DTV_UNALLOCATED && block != 0 {
                    return Some(block);
                }
            }
        }
    }
    module
        .is_exe
        .then(|| exe_block(fs_base, tls.memsz, tls.align))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exe_block_rounds_up() {
        assert_eq!(exe_block(0x1000, 4, 4), 0xffc);
        assert_eq!(exe_block(0x1000, 12, 8), 0xff0);
        assert_eq!(exe_block(0x1000, 0, 0), 0x1000);
    }
}
