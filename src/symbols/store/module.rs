//! One module: a file of code as the debugger knows it (`ModuleFile`: the ELF image and the
//! tables read from it on first need) and one loaded copy of it in the process
//! (`LoadedModule`: where, with which bias).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use super::debug_file::{self, DebugFile};
use crate::symbols::addr::{FileAddr, LoadBias, RuntimeAddr};
use crate::symbols::dwarf::{DwarfInfo, Location};
use crate::symbols::elf::sections::read_sections;
use crate::symbols::elf::{ElfImage, SharedBytes, SymbolIndex};
use crate::symbols::unwind::CfiTables;

/// Where a module's names come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolSource {
    /// Its own full symbol table (`.symtab`).
    Symtab,
    /// Only its dynamic symbols (`.dynsym`, and PLT entries): a stripped file.
    Dynsym,
    /// The `.symtab` of its separate debug file.
    Separate,
    /// No symbols at all.
    None,
}

/// Where a module's DWARF was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DwarfSource {
    /// The module's own `.debug_*` sections.
    Own,
    /// Its separate debug file's.
    Separate,
}

/// An ELF file and what is read from it lazily: its separate debug file, DWARF, unwind
/// tables and (for a stripped file) the full symbol table. Nothing of DWARF is touched
/// before a question needs it, no debug file is looked for before the file's own contents
/// fall short, and each is read once per file, however many times the file is loaded or the
/// store refreshed.
#[derive(Debug)]
pub struct ModuleFile {
    pub image: ElfImage,
    /// The path the process maps the file from: separate debug files are looked for
    /// beside it and under it in the debug directories.
    pub module_path: PathBuf,
    /// Directories searched for separate debug files before the system's.
    debug_dirs: Arc<[PathBuf]>,
    debug_file: OnceLock<Option<DebugFile>>,
    /// The debug file's `.symtab` merged with the image's tables, for a stripped image.
    full_symbols: OnceLock<Option<SymbolIndex>>,
    cfi: OnceLock<CfiTables>,
    separate_cfi: OnceLock<Option<CfiTables>>,
    dwarf: OnceLock<Option<(DwarfInfo, DwarfSource)>>,
    /// The file's own DWARF being opened on another thread (see `DwarfOpening`).
    opening: Mutex<Option<DwarfOpening>>,
    /// The file on disk when it was read, for telling whether a later process maps the
    /// same bytes (see `SymbolStore::renewed`); `None` when that cannot be told.
    identity: Option<FileIdentity>,
}

/// What tells one version of a file from another: the same inode rewritten in place has a
/// new size or modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
}

impl FileIdentity {
    pub fn of(path: &std::path::Path) -> Option<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(FileIdentity {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        })
    }
}

/// A file's DWARF opened and its units indexed on a thread of their own, ahead of need:
/// the file's own, started before the symbol tables are parsed (the two are independent,
/// each takes a large program a few tens of milliseconds, and while scry loads a program
/// that program is stopped and the second core idle), or its separate debug file's (the C
/// library's: see `SymbolStore::open_file`). The first question that needs it waits for the
/// thread.
#[derive(Debug)]
pub struct DwarfOpening {
    separate: bool,
    thread: Option<JoinHandle<Opened>>,
}

/// What an opening thread found.
#[derive(Debug)]
enum Opened {
    Own(Option<DwarfInfo>),
    Separate(Option<DebugFile>, Option<DwarfInfo>),
}

impl DwarfOpening {
    /// The file's own DWARF. `None` when the file has none, scry may run on one CPU only
    /// (the thread would then take its time from the main one), or no thread could be had:
    /// the DWARF is then opened on first need, as for any other file.
    pub fn start(bytes: SharedBytes) -> Option<DwarfOpening> {
        if !has_debug_info((*bytes).as_ref()) {
            return None;
        }
        Self::spawn(false, move || {
            let dwarf = DwarfInfo::from_elf(bytes);
            if let Some(dwarf) = &dwarf {
                dwarf.index_units();
            }
            Opened::Own(dwarf)
        })
    }

    /// The separate debug file `wanted` names, and its DWARF.
    pub(super) fn start_separate(
        wanted: debug_file::Wanted,
        dirs: Arc<[PathBuf]>,
    ) -> Option<DwarfOpening> {
        Self::spawn(true, move || {
            let file = debug_file::find(&wanted, &dirs);
            let dwarf = file
                .as_ref()
                .and_then(|f| DwarfInfo::from_elf(f.image.shared_bytes()));
            if let Some(dwarf) = &dwarf {
                dwarf.index_for_lookups();
            }
            Opened::Separate(file, dwarf)
        })
    }

    fn spawn(separate: bool, work: impl FnOnce() -> Opened + Send + 'static) -> Option<Self> {
        let spare_cpu = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        if !spare_cpu {
            return None;
        }
        let thread = std::thread::Builder::new()
            .name("scry-dwarf".into())
            .spawn(work)
            .ok()?;
        Some(DwarfOpening {
            separate,
            thread: Some(thread),
        })
    }

    /// What the thread found. A panic on the thread goes on here, on the thread that asked,
    /// as if it had opened the DWARF itself.
    fn finish(mut self) -> Option<Opened> {
        let thread = self.thread.take()?;
        Some(
            thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        )
    }
}

impl Drop for DwarfOpening {
    /// A file given up before its DWARF was asked for still waits for the thread, which must
    /// not outlive the module that owns the file: once the module is gone the file may be
    /// rewritten in place, and a read of its mapping past a new end is a SIGBUS.
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl ModuleFile {
    pub fn new(image: ElfImage, module_path: PathBuf, debug_dirs: Arc<[PathBuf]>) -> ModuleFile {
        ModuleFile::with_opening(image, module_path, debug_dirs, None)
    }

    /// `new`, with the file's own DWARF already being opened by `opening`.
    pub fn with_opening(
        image: ElfImage,
        module_path: PathBuf,
        debug_dirs: Arc<[PathBuf]>,
        opening: Option<DwarfOpening>,
    ) -> ModuleFile {
        ModuleFile {
            image,
            module_path,
            debug_dirs,
            debug_file: OnceLock::new(),
            full_symbols: OnceLock::new(),
            cfi: OnceLock::new(),
            separate_cfi: OnceLock::new(),
            dwarf: OnceLock::new(),
            opening: Mutex::new(opening),
            identity: None,
        }
    }

    /// Records what the file on disk was when it was read.
    pub fn with_identity(mut self, identity: Option<FileIdentity>) -> ModuleFile {
        self.identity = identity;
        self
    }

    /// Whether the file at the module's path is still the one that was read.
    pub fn unchanged_on_disk(&self) -> bool {
        self.identity
            .is_some_and(|id| FileIdentity::of(&self.module_path) == Some(id))
    }

    /// An image on its own, with only the system debug directory (tests, tools).
    pub fn standalone(image: ElfImage) -> ModuleFile {
        let path = image.path.clone();
        ModuleFile::new(image, path, Arc::from(Vec::new()))
    }

    /// The separate debug file, searched for on first call (see `debug_file::find`), or
    /// the one its opening thread found.
    pub fn debug_file(&self) -> Option<&DebugFile> {
        self.debug_file
            .get_or_init(|| {
                if let Some(Opened::Separate(file, dwarf)) = self.finish_opening(true) {
                    // `dwarf` is not being initialized: its initializer takes the opening
                    // first, so an opening still here means nobody has asked for it yet.
                    let _ = self.dwarf.set(dwarf.map(|d| (d, DwarfSource::Separate)));
                    return file;
                }
                let wanted = debug_file::Wanted::of(&self.image, &self.module_path);
                debug_file::find(&wanted, &self.debug_dirs)
            })
            .as_ref()
    }

    /// The opening thread's result, when one of that kind (`separate`) was started and not
    /// yet taken.
    fn finish_opening(&self, separate: bool) -> Option<Opened> {
        let mut slot = self.opening.lock().ok()?;
        if slot.as_ref()?.separate != separate {
            return None;
        }
        slot.take()?.finish()
    }

    /// Whether `debug_file` has looked for the separate debug file yet.
    #[cfg(test)]
    pub(crate) fn debug_file_searched(&self) -> bool {
        self.debug_file.get().is_some()
    }

    /// The symbol tables: the image's own, or, when it has no `.symtab`, merged with its
    /// separate debug file's (which is where a stripped file's local functions are named).
    pub fn symbols(&self) -> &SymbolIndex {
        if self.image.has_symtab {
            return &self.image.symbols;
        }
        self.full_symbols
            .get_or_init(|| {
                let debug = self.debug_file()?;
                let mut all = debug.image.symbols();
                if all.is_empty() {
                    return None;
                }
                all.extend(self.image.symbols.iter().cloned());
                Some(SymbolIndex::new(all, self.image.exec_ranges()))
            })
            .as_ref()
            .unwrap_or(&self.image.symbols)
    }

    /// The image's unwind tables.
    pub fn cfi(&self) -> &CfiTables {
        self.cfi.get_or_init(|| CfiTables::discover(&self.image))
    }

    /// The separate debug file's `.debug_frame`, if it has one.
    pub fn separate_cfi(&self) -> Option<&CfiTables> {
        self.separate_cfi
            .get_or_init(|| {
                let debug = self.debug_file()?;
                CfiTables::from_debug_file(debug.image.shared_bytes())
            })
            .as_ref()
    }

    /// The file's DWARF, for every reader of types, values and lines: its own `.debug_*`
    /// sections or, failing those, its separate debug file's. Addresses in it are the
    /// image's link-time addresses either way (a debug file keeps the stripped file's
    /// layout), so the module's load bias applies unchanged. `None` when neither has any.
    pub fn dwarf(&self) -> Option<&DwarfInfo> {
        self.dwarf_with_source().map(|(d, _)| d)
    }

    /// `dwarf()` and where it came from (opens it on first call).
    pub fn dwarf_with_source(&self) -> Option<(&DwarfInfo, DwarfSource)> {
        self.dwarf
            .get_or_init(|| {
                let opening = self.opening.lock().ok().and_then(|mut o| o.take());
                let own = match opening.and_then(DwarfOpening::finish) {
                    Some(Opened::Own(own)) => own,
                    Some(Opened::Separate(file, dwarf)) => {
                        // `debug_file` is not being initialized: it would have taken the
                        // opening first.
                        let _ = self.debug_file.set(file);
                        return dwarf.map(|d| (d, DwarfSource::Separate));
                    }
                    None => DwarfInfo::from_elf(self.image.shared_bytes()),
                };
                if let Some(own) = own {
                    return Some((own, DwarfSource::Own));
                }
                let debug = self.debug_file()?;
                let separate = DwarfInfo::from_elf(debug.image.shared_bytes())?;
                Some((separate, DwarfSource::Separate))
            })
            .as_ref()
            .map(|(d, source)| (d, *source))
    }

    /// Whether DWARF was found (opens it on first call).
    /// Where the body of the function starting at `func` begins (after its prologue); the
    /// function's start when DWARF does not say.
    pub fn body_start(&self, func: FileAddr) -> FileAddr {
        const PROLOGUE_BYTES: usize = 16;
        let Some(dwarf) = self.dwarf() else {
            return func;
        };
        let code = (1..=PROLOGUE_BYTES)
            .rev()
            .find_map(|n| self.image.file_bytes(func, n))
            .unwrap_or_default();
        dwarf.body_start(func, code).unwrap_or(func)
    }

    pub fn has_dwarf(&self) -> bool {
        self.dwarf().is_some()
    }

    /// Where DWARF is, by the section headers alone (nothing of it is parsed): cheap enough
    /// for a listing of every module.
    pub fn dwarf_source(&self) -> Option<DwarfSource> {
        if let Some((_, source)) = self.dwarf.get().and_then(Option::as_ref) {
            return Some(*source);
        }
        if has_debug_info(self.image.data()) {
            return Some(DwarfSource::Own);
        }
        let debug = self.debug_file()?;
        has_debug_info(debug.image.data()).then_some(DwarfSource::Separate)
    }

    /// Where the module's names come from.
    pub fn symbol_source(&self) -> SymbolSource {
        if self.image.has_symtab {
            SymbolSource::Symtab
        } else if !std::ptr::eq(self.symbols(), &self.image.symbols) {
            SymbolSource::Separate
        } else if self.image.symbols.is_empty() {
            SymbolSource::None
        } else {
            SymbolSource::Dynsym
        }
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

pub(super) fn has_debug_info(data: &[u8]) -> bool {
    read_sections(data)
        .iter()
        .any(|s| s.name == ".debug_info" && s.size > 0)
}
