//! `SymbolStore`: the ELF modules loaded in one process and where, built from maps snapshots.
//! Answers "what is at this address" and "where is this name" in runtime addresses, and holds
//! per file the DWARF and unwind tables the layers below read (see `ModuleFile`).

mod code_map;
mod debug_file;
mod expr;
mod layout;
mod lookup;
mod module;
mod regions;
mod source;
mod tailcalls;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use debug_file::{DebugFile, FoundBy, SYSTEM_DEBUG_DIR};
pub use module::{DwarfOpening, DwarfSource, FileIdentity, LoadedModule, ModuleFile, SymbolSource};
pub use tailcalls::TailCall;

use crate::maps::MapEntry;
use crate::symbols::addr::RuntimeAddr;
use crate::symbols::elf::ElfImage;
use layout::{agreed_bias, group_mappings, loader_mapped, round_up_page, Group};
use regions::Region;

type CacheKey = (PathBuf, u64);

#[derive(Default, Debug)]
pub struct SymbolStore {
    modules: Vec<LoadedModule>,
    /// Every file seen, by path and inode, so each is parsed and indexed once.
    cache: HashMap<CacheKey, Arc<ModuleFile>>,
    /// Mapped files that are not loadable ELF (locale archives, fonts, data files): not
    /// worth re-reading on every refresh.
    not_elf: HashSet<CacheKey>,
    /// Where the kernel's vDSO is mapped; it has no file, so it is not a module, but its
    /// unwind tables can be read from memory.
    vdso: Option<(RuntimeAddr, RuntimeAddr)>,
    /// Directories searched for separate debug files before the system's.
    debug_dirs: Arc<[PathBuf]>,
    /// Mappings of no file, in address order: `[heap]`, `[stack]`, anonymous memory.
    regions: Vec<Region>,
    /// The vDSO as a module, once the caller has read its image from memory.
    vdso_module: Option<LoadedModule>,
    /// Modules the process unmapped (dlclose), newest last: their code is still the file's,
    /// for disassembly and lines of an address that was theirs.
    unloaded: Vec<LoadedModule>,
}

/// Unloaded modules remembered at most.
const MAX_UNLOADED: usize = 32;

impl SymbolStore {
    pub fn new() -> Self {
        SymbolStore::default()
    }

    /// A store for a new process (a spawn, an exec, another process selected) that keeps
    /// the files this one read and that are unchanged on disk: a program spawned again, and
    /// the libraries every program shares, are not parsed and indexed again (nor their debug
    /// files read). Only the files of the latest module list are kept, so a session that
    /// runs many programs does not hoard them; a file rebuilt since (a new inode, size or
    /// modification time) is read anew.
    pub fn renewed(&self) -> SymbolStore {
        let mut cache = HashMap::new();
        for (key, file) in &self.cache {
            let in_use = self
                .modules
                .iter()
                .chain(&self.unloaded)
                .any(|m| Arc::ptr_eq(&m.file, file));
            if in_use && file.unchanged_on_disk() {
                cache.insert(key.clone(), file.clone());
            }
        }
        SymbolStore {
            cache,
            debug_dirs: self.debug_dirs.clone(),
            ..SymbolStore::default()
        }
    }

    /// Sets the directories searched for separate debug files (before `/usr/lib/debug`).
    /// Files already read are forgotten, so the next `refresh` searches again.
    pub fn set_debug_dirs(&mut self, dirs: Vec<PathBuf>) {
        if *self.debug_dirs != *dirs {
            self.debug_dirs = Arc::from(dirs);
            self.cache.clear();
            self.not_elf.clear();
        }
    }

    pub fn debug_dirs(&self) -> &[PathBuf] {
        &self.debug_dirs
    }

    /// Rebuilds the module list from a maps snapshot. The module whose path is `exe_path`
    /// goes first, the rest follow in address order. `open_path` turns a mapping into a
    /// readable path (e.g. under /proc/PID/root or /proc/PID/map_files); files that cannot
    /// be read or are not ELF are skipped silently, as are pseudo mappings like [vdso].
    pub fn refresh(
        &mut self,
        maps: &[MapEntry],
        exe_path: Option<&Path>,
        open_path: &dyn Fn(&MapEntry) -> PathBuf,
    ) {
        let exe = exe_path.map(|p| {
            let s = p.to_string_lossy();
            s.strip_suffix(" (deleted)").unwrap_or(&s).to_string()
        });
        let mut modules: Vec<LoadedModule> = Vec::new();
        for group in group_mappings(maps) {
            if let Some(mut m) = self.load_group(maps, &group, exe.as_deref(), open_path) {
                // A program may map its own binary again; only the first copy is "the exe".
                m.is_exe &= !modules.iter().any(|o| o.is_exe);
                modules.push(m);
            }
        }
        // Stable: libraries keep address order behind the executable.
        modules.sort_by_key(|m| !m.is_exe);
        let same = |a: &LoadedModule, b: &LoadedModule| a.path == b.path && a.start == b.start;
        let gone: Vec<LoadedModule> = self
            .modules
            .drain(..)
            .filter(|old| !modules.iter().any(|m| same(m, old)))
            .collect();
        self.unloaded
            .retain(|u| !modules.iter().any(|m| same(m, u)));
        self.unloaded.extend(gone);
        let excess = self.unloaded.len().saturating_sub(MAX_UNLOADED);
        self.unloaded.drain(..excess);
        self.modules = modules;
        self.vdso = maps
            .iter()
            .find(|m| m.path.as_deref() == Some("[vdso]"))
            .map(|m| (RuntimeAddr(m.start), RuntimeAddr(m.end)));
        self.regions = regions::of(maps);
        self.keep_vdso();
    }

    fn load_group(
        &mut self,
        maps: &[MapEntry],
        group: &Group<'_>,
        exe: Option<&str>,
        open_path: &dyn Fn(&MapEntry) -> PathBuf,
    ) -> Option<LoadedModule> {
        let first = &maps[*group.entries.first()?];
        let key = (PathBuf::from(group.path), group.inode);
        let file = match self.cache.get(&key) {
            Some(file) => file.clone(),
            None if self.not_elf.contains(&key) => return None,
            None => match self.open_file(
                &open_path(first),
                Path::new(group.path),
                exe == Some(group.path),
            ) {
                Ok((img, opening)) => {
                    // Known to be the file a later process maps only when the path here is
                    // the very file that was read (not one seen through another root).
                    let read = FileIdentity::of(&open_path(first));
                    let here = FileIdentity::of(Path::new(group.path));
                    let identity = read.filter(|_| read == here);
                    let path = PathBuf::from(group.path);
                    let dirs = self.debug_dirs.clone();
                    let file = ModuleFile::with_opening(img, path, dirs, opening);
                    let file = Arc::new(file.with_identity(identity));
                    self.cache.insert(key, file.clone());
                    file
                }
                Err(_) => {
                    // Remember only files that are there but are not ELF; an unreadable path
                    // (a race with exit, a permission hiccup) is worth another try next time.
                    if std::fs::metadata(open_path(first)).is_ok_and(|m| m.is_file()) {
                        self.not_elf.insert(key);
                    }
                    return None;
                }
            },
        };
        let image = &file.image;
        if !loader_mapped(image, group.entries.iter().map(|&i| &maps[i])) {
            return None;
        }
        let bias = agreed_bias(image, group.entries.iter().map(|&i| &maps[i]))?;

        let last_idx = *group.entries.last()?;
        let start = group.entries.iter().map(|&i| maps[i].start).min()?;
        let mut end = group.entries.iter().map(|&i| maps[i].end).max()?;
        // .bss past the last file page is an anonymous mapping right after the file's; count
        // it as the module's so its variables symbolize. Stop at the next named mapping so a
        // lying p_memsz cannot swallow other modules.
        if let Some((_, hi)) = image.vaddr_extent() {
            let elf_end = round_up_page(bias.to_runtime(hi).0);
            let limit = maps[last_idx + 1..]
                .iter()
                .find(|m| m.path.is_some())
                .map_or(u64::MAX, |m| m.start);
            end = end.max(elf_end.min(limit));
        }

        let name = Path::new(group.path).file_name().map_or_else(
            || group.path.to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Some(LoadedModule {
            file,
            bias,
            name,
            path: group.path.to_string(),
            start: RuntimeAddr(start),
            end: RuntimeAddr(end),
            is_exe: exe == Some(group.path),
        })
    }

    /// Maps and parses one file. The executable's own DWARF is opened meanwhile on another
    /// thread: nearly every session asks about the program's lines and variables. So is the
    /// C library's separate debug file when the system has one (libc6-dbg): nearly every
    /// stack ends in libc, and its first unwind (the arguments of its frames) would
    /// otherwise stall the stopped program for tens of milliseconds. Other libraries' debug
    /// information is opened on first need (a core each for nothing, most sessions).
    fn open_file(
        &self,
        path: &Path,
        module_path: &Path,
        is_exe: bool,
    ) -> anyhow::Result<(ElfImage, Option<DwarfOpening>)> {
        let mapped = ElfImage::map(path)?;
        let mut opening = is_exe
            .then(|| DwarfOpening::start(mapped.shared_bytes()))
            .flatten();
        let image = mapped.parse()?;
        if opening.is_none() && is_c_library(module_path) && !module::has_debug_info(image.data()) {
            let wanted = debug_file::Wanted::of(&image, module_path);
            if wanted.installed_by_build_id() {
                opening = DwarfOpening::start_separate(wanted, self.debug_dirs.clone());
            }
        }
        Ok((image, opening))
    }

    /// The vDSO's mapping (start, end), from the last `refresh`.
    pub fn vdso_range(&self) -> Option<(RuntimeAddr, RuntimeAddr)> {
        self.vdso
    }

    pub fn modules(&self) -> &[LoadedModule] {
        &self.modules
    }

    /// The executable, when `refresh` was told which it is.
    pub fn exe(&self) -> Option<&LoadedModule> {
        self.modules.first().filter(|m| m.is_exe)
    }

    pub fn module_at(&self, addr: RuntimeAddr) -> Option<&LoadedModule> {
        self.modules.iter().find(|m| m.contains(addr))
    }

    /// A module the process unmapped that held `addr` (the newest, should two have), when no
    /// loaded module does.
    pub fn unloaded_at(&self, addr: RuntimeAddr) -> Option<&LoadedModule> {
        if self.module_at(addr).is_some() {
            return None;
        }
        self.unloaded.iter().rev().find(|m| m.contains(addr))
    }

    /// Up to `max` bytes of code at `addr` as the file of the module holding it has them
    /// (an unloaded one included): for a process that is gone or an address it unmapped.
    pub fn file_code(&self, addr: RuntimeAddr, max: usize) -> Option<Vec<u8>> {
        let m = self.module_at(addr).or_else(|| self.unloaded_at(addr))?;
        let at = m.bias.to_file(addr);
        let image = m.image();
        let seg = image.segment_at(at)?;
        let avail = seg
            .vaddr
            .0
            .saturating_add(seg.filesz.min(seg.memsz))
            .checked_sub(at.0)?;
        let len = (max as u64).min(avail) as usize;
        image.file_bytes(at, len).map(<[u8]>::to_vec)
    }
}

/// The C library, by its file name: `libc.so.6` (or an older `libc-2.31.so`), never
/// `libcrypto.so.3`.
fn is_c_library(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("libc.so") || (name.starts_with("libc-") && name.ends_with(".so"))
}

#[cfg(test)]
#[test]
fn the_c_library_by_its_file_name() {
    for (path, c) in [
        ("/lib/x86_64-linux-gnu/libc.so.6", true),
        ("/lib/libc-2.31.so", true),
        ("/usr/lib/libcrypto.so.3", false),
        ("/usr/lib/libcap.so.2", false),
        ("/opt/libc.so.6.d/other.so", false),
    ] {
        assert_eq!(is_c_library(Path::new(path)), c, "{path}");
    }
}
