//! `SymbolStore`: the ELF modules loaded in one process and where, built from maps snapshots.
//! Answers "what is at this address" and "where is this name" in runtime addresses.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::os::maps::MapEntry;

use super::addr::{FileAddr, LoadBias, RuntimeAddr};
use super::elf::ElfImage;
use super::error::SymbolError;
use super::expr::{self, Base};
use super::fuzzy;
use super::symbol::{SymKind, Symbol};

/// How many "did you mean" names an unknown-symbol error carries.
const SUGGESTIONS: usize = 3;

#[derive(Debug, Clone)]
pub struct LoadedModule {
    pub image: Arc<ElfImage>,
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
    pub fn contains(&self, addr: RuntimeAddr) -> bool {
        self.start <= addr && addr < self.end
    }

    /// `libc` matches `libc.so.6` and `libc-2.31.so`, not `libcrypto.so.3`.
    fn match_rank(&self, prefix: &str) -> Option<u8> {
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

type CacheKey = (PathBuf, u64);

#[derive(Default, Debug)]
pub struct SymbolStore {
    modules: Vec<LoadedModule>,
    cache: HashMap<CacheKey, Arc<ElfImage>>,
    /// Mapped files that are not loadable ELF (locale archives, fonts, data files): not
    /// worth re-reading on every refresh.
    not_elf: HashSet<CacheKey>,
    /// Where the kernel's vDSO is mapped; it has no file, so it is not a module, but its
    /// unwind tables can be read from memory.
    vdso: Option<(RuntimeAddr, RuntimeAddr)>,
}

/// The mappings of one loaded copy of one file, in address order.
struct Group<'m> {
    path: &'m str,
    inode: u64,
    /// Indices into the maps slice.
    entries: Vec<usize>,
    last_offset: u64,
}

impl SymbolStore {
    pub fn new() -> Self {
        SymbolStore::default()
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
        self.modules = modules;
        self.vdso = maps
            .iter()
            .find(|m| m.path.as_deref() == Some("[vdso]"))
            .map(|m| (RuntimeAddr(m.start), RuntimeAddr(m.end)));
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
        let image = match self.cache.get(&key) {
            Some(img) => img.clone(),
            None if self.not_elf.contains(&key) => return None,
            None => match ElfImage::load(&open_path(first)) {
                Ok(img) => {
                    let img = Arc::new(img);
                    self.cache.insert(key, img.clone());
                    img
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
        let bias = agreed_bias(&image, group.entries.iter().map(|&i| &maps[i]))?;

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
            image,
            bias,
            name,
            path: group.path.to_string(),
            start: RuntimeAddr(start),
            end: RuntimeAddr(end),
            is_exe: exe == Some(group.path),
        })
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

    /// Modules whose name matches `prefix`, best match class only, in store order.
    fn modules_matching(&self, prefix: &str) -> Result<Vec<&LoadedModule>, SymbolError> {
        let best = self
            .modules
            .iter()
            .filter_map(|m| m.match_rank(prefix))
            .min();
        let Some(best) = best else {
            let names: Vec<&str> = self.modules.iter().map(|m| m.name.as_str()).collect();
            return Err(SymbolError::BadExpr(format!(
                "no loaded module matches '{prefix}' (loaded: {})",
                names.join(", ")
            )));
        };
        Ok(self
            .modules
            .iter()
            .filter(|m| m.match_rank(prefix) == Some(best))
            .collect())
    }

    /// Evaluates an address expression: `main`, `main+0x10`, `main+16`, `libc:puts`,
    /// `libc.so.6:puts`, `0x401136`, `4198710`, `libc.so.6:0x29d90` (file address).
    /// Names are searched in the executable first, then libraries in order.
    pub fn resolve(&self, text: &str) -> Result<RuntimeAddr, SymbolError> {
        let e = expr::parse(text)?;
        let base = match e.base {
            Base::Addr(a) => a,
            Base::ModuleAddr { module, addr } => {
                let m = self.modules_matching(module)?[0];
                m.bias.to_runtime(FileAddr(addr)).0
            }
            Base::Symbol { module, name } => {
                let scope = match module {
                    Some(prefix) => self.modules_matching(prefix)?,
                    None => self.modules.iter().collect(),
                };
                match find_in(&scope, name) {
                    Some((_, _, addr)) => addr.0,
                    None => return Err(self.unknown(&scope, name)),
                }
            }
        };
        let total = i128::from(base) + e.offset;
        u64::try_from(total).map(RuntimeAddr).map_err(|_| {
            SymbolError::BadExpr(format!("'{}' is outside the address space", text.trim()))
        })
    }

    fn unknown(&self, scope: &[&LoadedModule], name: &str) -> SymbolError {
        let scored = scope
            .iter()
            .flat_map(|m| m.image.symbols.nearest_scored(name, SUGGESTIONS))
            .collect();
        let suggestions = fuzzy::best_k(scored, SUGGESTIONS)
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        let thread_local = scope.iter().any(|m| {
            m.image
                .symbols
                .lookup_name(name)
                .is_some_and(|s| s.kind == SymKind::Tls)
        });
        if thread_local {
            return SymbolError::BadExpr(format!(
                "'{name}' is thread-local: it has an address only per thread"
            ));
        }
        SymbolError::Unknown {
            name: name.to_string(),
            suggestions,
        }
    }

    /// The definition of `name` (raw, demangled, or demangled without parameters) and its
    /// runtime address. TLS symbols are excluded: see `tls_symbol`.
    pub fn lookup(&self, name: &str) -> Option<(&LoadedModule, &Symbol, RuntimeAddr)> {
        let scope: Vec<&LoadedModule> = self.modules.iter().collect();
        find_in(&scope, name)
    }

    /// The symbol covering `addr` and the offset into it.
    pub fn symbol_at(&self, addr: RuntimeAddr) -> Option<(&LoadedModule, &Symbol, u64)> {
        let m = self.module_at(addr)?;
        let (s, off) = m.image.symbols.lookup_addr(m.bias.to_file(addr))?;
        Some((m, s, off))
    }

    /// `main+0x4` (`main` at offset 0), demangled; no module prefix. `None` when no symbol
    /// covers `addr`.
    pub fn symbolize(&self, addr: RuntimeAddr) -> Option<String> {
        let (_, s, off) = self.symbol_at(addr)?;
        let name = s.display_name();
        Some(if off == 0 {
            name.into_owned()
        } else {
            format!("{name}+{off:#x}")
        })
    }

    /// Every addressable symbol of every module with its runtime address, optionally only
    /// those whose raw or demangled name contains `filter`.
    pub fn symbols<'a>(
        &'a self,
        filter: Option<&str>,
    ) -> impl Iterator<Item = (&'a LoadedModule, &'a Symbol, RuntimeAddr)> + 'a {
        let filter: Option<Arc<str>> = filter.map(Arc::from);
        self.modules.iter().flat_map(move |m| {
            let filter = filter.clone();
            m.image
                .symbols
                .iter()
                .filter(move |s| {
                    s.kind != SymKind::Tls && filter.as_deref().is_none_or(|f| s.matches(f))
                })
                .map(move |s| (m, s, m.bias.to_runtime(s.addr)))
        })
    }

    /// A thread-local symbol by name; its `addr` is an offset in the module's TLS block.
    pub fn tls_symbol(&self, name: &str) -> Option<(&LoadedModule, &Symbol)> {
        self.modules.iter().find_map(|m| {
            let s = m
                .image
                .symbols
                .lookup_name(name)
                .filter(|s| s.kind == SymKind::Tls)?;
            Some((m, s))
        })
    }
}

/// The dynamic linker binds a name to the first module exporting it, so a global definition
/// anywhere beats a file-local one earlier in the list; failing that, the first local. Names
/// spelled out in full are tried in every module before any path-suffix shorthand, so `write`
/// finds libc's `write` rather than a unique `mycrate::io::write` in the executable.
fn find_in<'a>(
    scope: &[&'a LoadedModule],
    name: &str,
) -> Option<(&'a LoadedModule, &'a Symbol, RuntimeAddr)> {
    find_with(scope, |m| m.image.symbols.lookup_name_exact(name))
        .or_else(|| find_with(scope, |m| m.image.symbols.lookup_name(name)))
}

fn find_with<'a>(
    scope: &[&'a LoadedModule],
    lookup: impl Fn(&'a LoadedModule) -> Option<&'a Symbol>,
) -> Option<(&'a LoadedModule, &'a Symbol, RuntimeAddr)> {
    let mut local = None;
    for &m in scope {
        let Some(s) = lookup(m) else { continue };
        if s.kind == SymKind::Tls {
            continue;
        }
        let hit = (m, s, m.bias.to_runtime(s.addr));
        if s.global {
            return Some(hit);
        }
        local.get_or_insert(hit);
    }
    local
}

/// The bias that explains every mapping of the module. One mapping alone can be ambiguous
/// (segments share file pages), but the set of them is not. Mappings that fit no candidate
/// (a program re-mapping part of its own file) do not veto; failing agreement, the lowest
/// mapping's first reading stands, which is right for the usual layout.
fn agreed_bias<'m>(
    image: &ElfImage,
    mut entries: impl Iterator<Item = &'m MapEntry>,
) -> Option<LoadBias> {
    let first = entries.next()?;
    let rest: Vec<&MapEntry> = entries.collect();
    let candidates: Vec<LoadBias> = image.bias_candidates(first.start, first.offset).collect();
    let fits = |b: LoadBias| {
        rest.iter()
            .filter(|m| image.bias_candidates(m.start, m.offset).any(|c| c == b))
            .count()
    };
    let mut chosen = *candidates.first()?;
    let mut chosen_fits = fits(chosen);
    for &b in &candidates[1..] {
        let f = fits(b);
        if f > chosen_fits {
            (chosen, chosen_fits) = (b, f);
        }
    }
    Some(chosen)
}

fn round_up_page(x: u64) -> u64 {
    x.checked_add(0xfff).map_or(!0xfff, |v| v & !0xfff)
}

/// Groups file mappings by the file they map. A file mapped again from a lower offset than
/// its previous mapping is a second copy (dlmopen, or a program mapping its own binary) and
/// becomes its own group.
fn group_mappings(maps: &[MapEntry]) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut open: HashMap<(&str, u64, &str), usize> = HashMap::new();
    for (i, m) in maps.iter().enumerate() {
        // Loaders map modules privately; a shared mapping is a program (or a debugger
        // sharing the address space) reading the file as data, and would skew the bias.
        if m.is_pseudo() || m.perms.shared {
            continue;
        }
        let Some(path) = m.file_path() else { continue };
        let key = (path, m.inode, m.dev.as_str());
        match open.get(&key) {
            Some(&g) if m.offset >= groups[g].last_offset => {
                groups[g].entries.push(i);
                groups[g].last_offset = m.offset;
            }
            _ => {
                open.insert(key, groups.len());
                groups.push(Group {
                    path,
                    inode: m.inode,
                    entries: vec![i],
                    last_offset: m.offset,
                });
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::os::maps::{parse_maps, Perms};
    use crate::symbols::testutil::{compile, nm_address, C_PROGRAM};

    const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    const PAGE: u64 = 0xfff;

    /// The maps lines the kernel (or ld.so) would produce for `img` loaded at `base`.
    fn kernel_maps(img: &ElfImage, path: &str, inode: u64, base: u64) -> Vec<MapEntry> {
        let base = if img.is_dyn { base } else { 0 };
        let mut out = Vec::new();
        for s in &img.load_segments {
            let start = base + (s.vaddr.0 & !PAGE);
            let file_end = (base + s.vaddr.0 + s.filesz + PAGE) & !PAGE;
            let mem_end = (base + s.vaddr.0 + s.memsz + PAGE) & !PAGE;
            let perms = Perms {
                read: s.flags.read,
                write: s.flags.write,
                exec: s.flags.exec,
                shared: false,
            };
            out.push(MapEntry {
                start,
                end: file_end,
                perms,
                offset: s.offset & !PAGE,
                dev: "08:01".into(),
                inode,
                path: Some(path.into()),
            });
            if mem_end > file_end {
                out.push(MapEntry {
                    start: file_end,
                    end: mem_end,
                    perms,
                    offset: 0,
                    dev: "00:00".into(),
                    inode: 0,
                    path: None,
                });
            }
        }
        out
    }

    fn pseudo(start: u64, name: &str) -> MapEntry {
        MapEntry {
            start,
            end: start + 0x21000,
            perms: Perms {
                read: true,
                write: true,
                exec: false,
                shared: false,
            },
            offset: 0,
            dev: "00:00".into(),
            inode: 0,
            path: Some(name.into()),
        }
    }

    fn identity(m: &MapEntry) -> PathBuf {
        PathBuf::from(m.file_path().unwrap_or_default())
    }

    #[test]
    fn pie_and_libc_from_synthetic_maps() {
        let exe = compile(
            "store-pie",
            C_PROGRAM,
            false,
            &["-g", "-O0", "-pie", "-fpie"],
        );
        let exe_s = exe.to_str().unwrap().to_string();
        let img = ElfImage::load(&exe).unwrap();
        let base = 0x5555_5555_4000u64;
        let lib_base = 0x7fff_f7d8_0000u64;
        let have_libc = Path::new(LIBC).is_file();

        let mut maps = kernel_maps(&img, &exe_s, 11, base);
        maps.push(pseudo(0x5555_5556_0000, "[heap]"));
        if have_libc {
            let libc = ElfImage::load(Path::new(LIBC)).unwrap();
            maps.extend(kernel_maps(&libc, LIBC, 22, lib_base));
        }
        maps.push(pseudo(0x7fff_ffde_0000, "[stack]"));
        maps.push(pseudo(0x7fff_fff0_0000, "[vdso]"));
        maps.sort_by_key(|m| m.start);

        let mut store = SymbolStore::new();
        store.refresh(&maps, Some(&*exe), &identity);
        let mods = store.modules();
        assert_eq!(mods.len(), if have_libc { 2 } else { 1 });
        assert!(mods[0].is_exe);
        assert_eq!(mods[0].bias, LoadBias(base));
        assert_eq!(mods[0].name, "prog");

        let main = img.symbols.lookup_name("main").unwrap().addr.0;
        let main_rt = base + main;
        assert_eq!(store.resolve("main"), Ok(RuntimeAddr(main_rt)));
        assert_eq!(store.resolve("main+0x10"), Ok(RuntimeAddr(main_rt + 0x10)));
        assert_eq!(store.resolve("main+16"), Ok(RuntimeAddr(main_rt + 16)));
        assert_eq!(store.resolve("prog:main"), Ok(RuntimeAddr(main_rt)));
        assert_eq!(store.resolve("0x401136"), Ok(RuntimeAddr(0x401136)));
        assert_eq!(store.resolve("4198710"), Ok(RuntimeAddr(4198710)));
        assert_eq!(
            store.resolve(&format!("prog:{main:#x}")),
            Ok(RuntimeAddr(main_rt))
        );

        assert_eq!(
            store.symbolize(RuntimeAddr(main_rt)).as_deref(),
            Some("main")
        );
        assert_eq!(
            store.symbolize(RuntimeAddr(main_rt + 4)).as_deref(),
            Some("main+0x4")
        );
        let (m, s, off) = store.symbol_at(RuntimeAddr(main_rt + 4)).unwrap();
        assert_eq!((m.name.as_str(), &*s.name, off), ("prog", "main", 4));

        let counter = store.resolve("counter").unwrap();
        assert_eq!(store.symbolize(counter).as_deref(), Some("counter"));
        // .bss lives past the file-backed pages; it still belongs to the module.
        let hidden = store.resolve("hidden_total").unwrap();
        assert_eq!(
            store.symbolize(RuntimeAddr(hidden.0 + 2)).as_deref(),
            Some("hidden_total+0x2")
        );
        assert_eq!(
            store.module_at(hidden).map(|m| m.name.as_str()),
            Some("prog")
        );

        match store.resolve("mian") {
            Err(e @ SymbolError::Unknown { .. }) => {
                assert_eq!(e.to_string(), "unknown symbol 'mian' (did you mean main?)")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            store.resolve("nolib:main"),
            Err(SymbolError::BadExpr(_))
        ));
        assert!(matches!(
            store.resolve("main+"),
            Err(SymbolError::BadExpr(_))
        ));
        assert!(matches!(
            store.resolve("0xffffffffffffffff+1"),
            Err(SymbolError::BadExpr(_))
        ));
        assert!(matches!(
            store.resolve("tls_value"),
            Err(SymbolError::BadExpr(_))
        ));
        let (tm, ts) = store.tls_symbol("tls_value").unwrap();
        assert_eq!((tm.name.as_str(), ts.kind), ("prog", SymKind::Tls));

        let adds: Vec<_> = store
            .symbols(Some("add"))
            .filter(|(m, _, _)| m.is_exe)
            .collect();
        assert!(adds
            .iter()
            .any(|(_, s, a)| &*s.name == "add" && a.0 == base + s.addr.0));
        assert!(store.symbols(None).all(|(_, s, _)| s.kind != SymKind::Tls));

        if have_libc {
            let puts = store.resolve("libc:puts").unwrap();
            let libc_mod = store.module_at(puts).unwrap();
            assert_eq!(libc_mod.name, "libc.so.6");
            assert_eq!(libc_mod.bias, LoadBias(lib_base));
            assert_eq!(store.resolve("libc.so.6:puts"), Ok(puts));
            assert_eq!(
                store.resolve("puts"),
                Ok(puts),
                "bare names fall through to libraries"
            );
            assert_eq!(
                store.symbolize(puts).as_deref(),
                Some("puts"),
                "no module prefix"
            );
            let (lm, ls, la) = store.lookup("puts").unwrap();
            assert_eq!(
                (lm.name.as_str(), &*ls.name, la),
                ("libc.so.6", "puts", puts)
            );
        }

        // A second refresh reuses the parsed images.
        let before = Arc::clone(&store.modules()[0].image);
        store.refresh(&maps, Some(&*exe), &identity);
        assert!(Arc::ptr_eq(&before, &store.modules()[0].image));
    }

    #[test]
    fn non_pie_has_zero_bias() {
        let exe = compile(
            "store-nopie",
            C_PROGRAM,
            false,
            &["-O0", "-no-pie", "-fno-pie"],
        );
        let img = ElfImage::load(&exe).unwrap();
        let maps = kernel_maps(&img, exe.to_str().unwrap(), 5, 0);
        let mut store = SymbolStore::new();
        store.refresh(&maps, Some(&*exe), &identity);
        assert_eq!(store.modules()[0].bias, LoadBias(0));
        let main = store.resolve("main").unwrap();
        if let Some(nm_main) = nm_address(&exe, "main") {
            assert_eq!(main, RuntimeAddr(nm_main));
        }
    }

    #[test]
    fn unreadable_and_non_elf_mappings_are_skipped() {
        let text = "\
7f0000000000-7f0000001000 r--p 00000000 08:01 99 /nonexistent/libgone.so
7f0000001000-7f0000002000 r--p 00000000 08:01 98 /etc/hostname
7f0000002000-7f0000003000 r--p 00000000 00:00 0 [vvar]
";
        let mut store = SymbolStore::new();
        store.refresh(&parse_maps(text), None, &identity);
        assert!(store.modules().is_empty());
        assert_eq!(store.symbolize(RuntimeAddr(0x7f0000000010)), None);
        assert!(matches!(
            store.resolve("anything"),
            Err(SymbolError::Unknown { .. })
        ));
    }

    #[inline(never)]
    fn marker_fn(x: u64) -> u64 {
        std::hint::black_box(x).wrapping_mul(3)
    }

    /// The real kernel's layout for this very test process: checks bias arithmetic against
    /// ground truth rather than our own idea of the kernel.
    #[test]
    fn symbolizes_own_process() {
        let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let mut store = SymbolStore::new();
        store.refresh(&maps, Some(&*exe), &identity);
        assert!(store.exe().is_some(), "{:?}", store.modules());

        let f = marker_fn as fn(u64) -> u64 as usize as u64;
        assert_eq!(marker_fn(2), 6);
        let name = store.symbolize(RuntimeAddr(f)).unwrap();
        assert!(name.ends_with("store::tests::marker_fn"), "{name}");
        assert_eq!(store.resolve(&name), Ok(RuntimeAddr(f)));
        assert_eq!(
            store.symbolize(RuntimeAddr(f + 1)),
            Some(format!("{name}+0x1"))
        );
        assert_eq!(
            store.resolve("marker_fn"),
            Ok(RuntimeAddr(f)),
            "unique path suffix"
        );

        if let Some(libc) = store
            .modules()
            .iter()
            .find(|m| m.name.starts_with("libc.so"))
        {
            let malloc = store.resolve("libc:malloc").unwrap();
            assert!(libc.contains(malloc));
        }
    }
}
