//! One module: a file of code as the debugger knows it (`ModuleFile`: the ELF image and the
//! tables read from it on first need) and one loaded copy of it in the process
//! (`LoadedModule`: where, with which bias).

use std::sync::{Arc, OnceLock};

use super::debug_file;
use crate::symbols::addr::{FileAddr, LoadBias, RuntimeAddr};
use crate::symbols::dwarf::{DwarfInfo, Location, Variable};
use crate::symbols::elf::{ElfImage, SymbolIndex};
use crate::symbols::unwind::CfiTables;

/// An ELF file and what is read from it lazily: nothing of DWARF or the unwind tables is
/// touched before a question needs it, and each is read once per file, however many times
/// the file is loaded or the store refreshed.
#[derive(Debug)]
pub struct ModuleFile {
    pub image: ElfImage,
    /// Unwind tables, located on the first unwind through this file.
    cfi: OnceLock<CfiTables>,
    /// DWARF, opened on the first source-level question (`None`: none found).
    dwarf: OnceLock<Option<DwarfInfo>>,
}

impl ModuleFile {
    pub fn new(image: ElfImage) -> ModuleFile {
        ModuleFile {
            image,
            cfi: OnceLock::new(),
            dwarf: OnceLock::new(),
        }
    }

    /// The symbol tables.
    pub fn symbols(&self) -> &SymbolIndex {
        &self.image.symbols
    }

    pub fn cfi(&self) -> &CfiTables {
        self.cfi.get_or_init(|| CfiTables::discover(&self.image))
    }

    /// The file's DWARF: its own `.debug_*` sections or, failing those, a separate debug
    /// file's. `None` when neither has any.
    pub fn dwarf(&self) -> Option<&DwarfInfo> {
        self.dwarf
            .get_or_init(|| {
                DwarfInfo::from_elf(self.image.shared_bytes()).or_else(|| {
                    let path = debug_file::by_build_id(self.image.build_id.as_deref()?);
                    let bytes = std::fs::read(path).ok()?;
                    DwarfInfo::from_elf(Arc::new(bytes))
                })
            })
            .as_ref()
    }

    /// Whether DWARF was found (opens it on first call).
    pub fn has_dwarf(&self) -> bool {
        self.dwarf().is_some()
    }

    /// Source positions of a link-time address (see `DwarfInfo::locations`).
    pub fn locations(&self, addr: FileAddr) -> Vec<Location> {
        self.dwarf().map(|d| d.locations(addr)).unwrap_or_default()
    }

    /// Link-time addresses where a source line's code begins.
    pub fn line_addresses(&self, file: &str, line: u32) -> Vec<FileAddr> {
        self.dwarf()
            .map(|d| d.line_addresses(file, line))
            .unwrap_or_default()
    }

    /// Parameters and locals in scope at a link-time address (innermost function).
    pub fn variables(&self, addr: FileAddr) -> Vec<Variable> {
        self.dwarf().map(|d| d.variables(addr)).unwrap_or_default()
    }
}

/// One loaded copy of a file in the process.
#[derive(Debug, Clone)]
pub struct LoadedModule {
    pub file: Arc<ModuleFile>,
    pub bias: LoadBias,
    /// File name, e.g. `libc.so.6`.
    pub name: String,
    /// The path as the process's maps show it (without a ` (deleted)` marker).
    pub path: String,
    /// Extent of its mappings, including the .bss that follows the file-backed pages.
    pub start: RuntimeAddr,
    pub end: RuntimeAddr,
    /// The main executable (matched against the `exe_path` given to `refresh`).
    pub is_exe: bool,
}

impl LoadedModule {
    /// The module's ELF image.
    pub fn image(&self) -> &ElfImage {
        &self.file.image
    }

    pub fn contains(&self, addr: RuntimeAddr) -> bool {
        self.start <= addr && addr < self.end
    }

    /// `libc` matches `libc.so.6` and `libc-2.31.so`, not `libcrypto.so.3`.
    pub(super) fn match_rank(&self, prefix: &str) -> Option<u8> {
        if self.name == prefix || self.path == prefix {
            return Some(0);
        }
        let rest = self.name.strip_prefix(prefix)?;
        if rest.starts_with('.') || rest.starts_with('-') {
            Some(1)
        } else {
            Some(2)
        }
    }
}
