//! Memory that no file's module covers: the vDSO (a module once the caller hands over its
//! image, read from the process: it has no file) and pseudo or anonymous mappings, which get
//! a name for messages (`[heap]+0x40`) but no symbols.

use std::path::Path;
use std::sync::Arc;

use super::{LoadedModule, ModuleFile, SymbolStore};
use crate::maps::MapEntry;
use crate::symbols::addr::RuntimeAddr;
use crate::symbols::elf::ElfImage;

/// A vDSO is a page or two; anything claiming more is not read.
pub(super) const MAX_VDSO: u64 = 1 << 20;

#[derive(Clone, Debug)]
pub(super) struct Region {
    start: u64,
    end: u64,
    /// `[heap]`, `[stack]`, ...; `None` for anonymous memory.
    name: Option<String>,
}

/// The mappings of no file, in address order.
pub(super) fn of(maps: &[MapEntry]) -> Vec<Region> {
    let mut out: Vec<Region> = maps
        .iter()
        .filter(|m| m.path.is_none() || m.is_pseudo())
        .map(|m| Region {
            start: m.start,
            end: m.end,
            name: m.path.clone(),
        })
        .collect();
    out.sort_by_key(|r| r.start);
    out
}

impl SymbolStore {
    /// The vDSO's range when it is mapped but not yet a module: the caller reads those bytes
    /// and passes them to `add_vdso`.
    pub fn vdso_wanted(&self) -> Option<(RuntimeAddr, RuntimeAddr)> {
        let (start, end) = self.vdso?;
        let small = end.0.checked_sub(start.0).is_some_and(|n| n <= MAX_VDSO);
        (small && self.vdso_module.is_none()).then_some((start, end))
    }

    /// Makes the vDSO a module from its bytes, so its functions (`clock_gettime`) have
    /// names. Bytes that are not an ELF image are ignored.
    pub fn add_vdso(&mut self, bytes: Vec<u8>) {
        let Some((start, end)) = self.vdso_wanted() else {
            return;
        };
        let Ok(image) = ElfImage::parse(bytes, Path::new("[vdso]")) else {
            return;
        };
        let Some(bias) = image.bias_for_mapping(start.0, 0) else {
            return;
        };
        let module = LoadedModule {
            file: Arc::new(ModuleFile::standalone(image)),
            bias,
            name: "[vdso]".into(),
            path: "[vdso]".into(),
            start,
            end,
            is_exe: false,
        };
        self.modules.push(module.clone());
        self.vdso_module = Some(module);
    }

    /// After a refresh: the vDSO module stays while the vDSO is where it was.
    pub(super) fn keep_vdso(&mut self) {
        let same = match (&self.vdso_module, self.vdso) {
            (Some(m), Some((start, end))) => m.start == start && m.end == end,
            _ => false,
        };
        match (&self.vdso_module, same) {
            (Some(m), true) => self.modules.push(m.clone()),
            _ => self.vdso_module = None,
        }
    }

    /// `[heap]+0x40` or `[anon]+0x1000` for an address in a mapping of no file (the offset
    /// from the mapping's start).
    pub(super) fn region_offset(&self, addr: RuntimeAddr) -> Option<String> {
        let i = self.regions.partition_point(|r| r.start <= addr.0);
        let r = self.regions.get(i.checked_sub(1)?)?;
        if addr.0 >= r.end {
            return None;
        }
        let name = r.name.as_deref().unwrap_or("[anon]");
        Some(format!("{name}+{:#x}", addr.0 - r.start))
    }
}
