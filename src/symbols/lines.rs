//! Source lines and inlined-function chains from DWARF, through addr2line. Built lazily per
//! image on the first question and cached in it: from the image's own `.debug_*` sections or,
//! failing those, from a separate debug file found by build id under /usr/lib/debug.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use gimli::SectionId;

use super::addr::{FileAddr, RuntimeAddr};
use super::dwarf_reader::{DwarfReader, SharedBytes};
use super::elf::ElfImage;
use super::sections::{read_sections, SectionInfo};
use super::store::SymbolStore;

type Reader = DwarfReader;

/// Inlined calls reported per address at most.
const MAX_INLINE_DEPTH: usize = 64;
/// Deeper DIE nesting is refused before addr2line sees it: its parser recurses per level of
/// nested inlined subroutines, and real compilers stay far below this.
const MAX_DIE_DEPTH: isize = 512;
/// DIEs examined by that check at most; a larger file is taken as is.
const MAX_CHECKED_DIES: usize = 50_000_000;

/// One source position of an address. A single machine address can be several positions at
/// once when calls were inlined into it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Demangled.
    pub function: Option<String>,
    /// True for a function inlined into the next location's function.
    pub inlined: bool,
}

/// The parsed DWARF of one image. addr2line caches parsed units in cells that are not
/// `Sync`, hence the lock.
pub(crate) struct LineInfo {
    ctx: Mutex<addr2line::Context<Reader>>,
}

impl std::fmt::Debug for LineInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineInfo")
    }
}

impl LineInfo {
    pub(super) fn load(image: &ElfImage) -> Option<LineInfo> {
        let own = read_sections(image.data());
        if has_debug_info(&own) {
            return LineInfo::from_sections(image.shared_bytes(), &own);
        }
        let debug_file = std::fs::read(separate_debug_path(image.build_id.as_deref()?)).ok()?;
        let secs = read_sections(&debug_file);
        if !has_debug_info(&secs) {
            return None;
        }
        LineInfo::from_sections(Arc::new(debug_file), &secs)
    }

    fn from_sections(data: SharedBytes, secs: &[SectionInfo]) -> Option<LineInfo> {
        let load = |id: SectionId| -> Result<Reader, gimli::Error> {
            let (offset, size) = secs
                .iter()
                .find(|s| s.name == id.name() && !s.compressed)
                .map_or((0, 0), |s| (s.offset, s.size));
            Ok(DwarfReader::new(data.clone(), offset, size))
        };
        let dwarf = gimli::Dwarf::load(load).ok()?;
        if !nesting_is_sane(&dwarf) {
            return None;
        }
        let ctx =
            std::panic::catch_unwind(AssertUnwindSafe(|| addr2line::Context::from_dwarf(dwarf)))
                .ok()?
                .ok()?;
        Some(LineInfo {
            ctx: Mutex::new(ctx),
        })
    }

    /// The addr2line context (shared with variable lookups).
    pub(super) fn context(&self) -> std::sync::MutexGuard<'_, addr2line::Context<Reader>> {
        self.ctx.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn locations(&self, addr: u64) -> Vec<Location> {
        // A parser bug on hostile DWARF costs this answer, not the debugger.
        std::panic::catch_unwind(AssertUnwindSafe(|| self.locations_inner(addr)))
            .unwrap_or_default()
    }

    fn locations_inner(&self, addr: u64) -> Vec<Location> {
        let ctx = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(mut frames) = ctx.find_frames(addr).skip_all_loads() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while out.len() < MAX_INLINE_DEPTH {
            let Ok(Some(frame)) = frames.next() else {
                break;
            };
            let function = frame
                .function
                .as_ref()
                .and_then(|f| f.demangle().ok())
                .map(|name| name.into_owned());
            let (file, line) = frame
                .location
                .as_ref()
                .map_or((None, None), |l| (l.file.map(str::to_string), l.line));
            out.push(Location {
                file,
                line,
                function,
                inlined: true,
            });
        }
        if let Some(last) = out.last_mut() {
            last.inlined = false;
        }
        out
    }
}

impl LineInfo {
    /// Addresses where `line` of a file whose path ends with `file` begins: the first address
    /// of each run of rows on that line, at most `MAX_LINE_SITES`.
    fn addresses_of(&self, file: &str, line: u32) -> Vec<u64> {
        std::panic::catch_unwind(AssertUnwindSafe(|| {
            let ctx = self.ctx.lock().unwrap_or_else(|e| e.into_inner());
            let Ok(rows) = ctx.find_location_range(0, u64::MAX) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            let mut run_end = None;
            for (addr, size, loc) in rows {
                let here =
                    loc.line == Some(line) && loc.file.is_some_and(|f| path_ends_with(f, file));
                if here {
                    if run_end != Some(addr) {
                        out.push(addr);
                        if out.len() >= MAX_LINE_SITES {
                            break;
                        }
                    }
                    run_end = Some(addr.saturating_add(size));
                }
            }
            out.sort_unstable();
            out
        }))
        .unwrap_or_default()
    }
}

/// At most this many code locations for one source line.
const MAX_LINE_SITES: usize = 64;

/// `/src/app/main.c` ends with `main.c` and `app/main.c`, not with `ain.c`.
fn path_ends_with(path: &str, suffix: &str) -> bool {
    path == suffix
        || path
            .strip_suffix(suffix)
            .is_some_and(|head| head.ends_with('/'))
}

fn has_debug_info(secs: &[SectionInfo]) -> bool {
    secs.iter()
        .any(|s| s.name == ".debug_info" && s.size > 0 && !s.compressed)
}

/// `/usr/lib/debug/.build-id/ab/cdef….debug`, where distributions install debug files.
fn separate_debug_path(build_id: &[u8]) -> PathBuf {
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    let (dir, rest) = hex.split_at(hex.len().min(2));
    PathBuf::from(format!("/usr/lib/debug/.build-id/{dir}/{rest}.debug"))
}

/// False when some unit nests DIEs deeper than `MAX_DIE_DEPTH`. Iterative, so it cannot
/// itself run out of stack on the input it guards against.
fn nesting_is_sane(dwarf: &gimli::Dwarf<Reader>) -> bool {
    let mut budget = MAX_CHECKED_DIES;
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(abbrevs) = dwarf.abbreviations(&header) else {
            continue;
        };
        let Ok(mut entries) = header.entries_raw(&abbrevs, None) else {
            continue;
        };
        while !entries.is_empty() {
            if budget == 0 {
                return true;
            }
            budget -= 1;
            if entries.next_depth() > MAX_DIE_DEPTH {
                return false;
            }
            match entries.read_abbreviation() {
                Ok(Some(abbrev)) => {
                    if entries.skip_attributes(abbrev.attributes()).is_err() {
                        break;
                    }
                }
                Ok(None) => {}
                Err(_) => break,
            }
        }
    }
    true
}

impl ElfImage {
    /// Link-time addresses where a source line's code begins (see `LineInfo::addresses_of`).
    pub fn line_addresses(&self, file: &str, line: u32) -> Vec<FileAddr> {
        self.line_info(LineInfo::load)
            .map(|l| {
                l.addresses_of(file, line)
                    .into_iter()
                    .map(FileAddr)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Source positions of a link-time address, innermost inlined call first and the
    /// function that physically contains the address last. Empty without DWARF.
    pub fn locations(&self, addr: FileAddr) -> Vec<Location> {
        self.line_info(LineInfo::load)
            .map(|l| l.locations(addr.0))
            .unwrap_or_default()
    }

    /// Whether DWARF line information was found (loads it on first call).
    pub fn has_line_info(&self) -> bool {
        self.line_info(LineInfo::load).is_some()
    }
}

impl SymbolStore {
    /// Where `file:line` begins, in the executable first, then the libraries: the lowest
    /// address of the first module that has the line. `None` if no line table has it.
    pub fn line_address(&self, file: &str, line: u32) -> Option<RuntimeAddr> {
        self.modules().iter().find_map(|m| {
            let first = m.image.line_addresses(file, line).into_iter().min()?;
            Some(m.bias.to_runtime(first))
        })
    }

    /// Source positions of a runtime address: innermost inlined frame first, then its callers
    /// within the same physical frame, last the real function. Without DWARF, the ELF symbol
    /// covering the address gives one location with only `function` set; with neither, the
    /// list is empty. A function DWARF leaves unnamed is filled in from the ELF symbol too.
    pub fn locations(&self, addr: RuntimeAddr) -> Vec<Location> {
        let Some(module) = self.module_at(addr) else {
            return Vec::new();
        };
        let mut out = module.image.locations(module.bias.to_file(addr));
        let symbol = || {
            self.symbol_at(addr)
                .map(|(_, s, _)| s.display_name().into_owned())
        };
        match out.last_mut() {
            Some(last) if last.function.is_none() => last.function = symbol(),
            Some(_) => {}
            None => {
                if let Some(name) = symbol() {
                    out.push(Location {
                        function: Some(name),
                        ..Location::default()
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::testutil::compile;

    const PROGRAM: &str = r#"#include <stdio.h>

volatile int sink;

static inline __attribute__((always_inline)) void twice(int x) {
    sink = x * 2;
}

int main(int argc, char **argv) {
    (void)argv;
    twice(argc);
    printf("%d\n", sink);
    return 0;
}
"#;

    fn line_of(text: &str) -> u32 {
        PROGRAM.lines().position(|l| l.contains(text)).unwrap() as u32 + 1
    }

    #[test]
    fn main_line_and_inlined_call() {
        // Unoptimized, the first instruction of main belongs to the line main is written on.
        let exe = compile("lines-O0", PROGRAM, false, &["-g", "-O0"]);
        let img = ElfImage::load(&exe).unwrap();
        assert!(img.has_line_info());
        let main = img.symbols.lookup_name("main").unwrap();
        let locs = img.locations(main.addr);
        assert_eq!(locs.len(), 1, "{locs:?}");
        let last = &locs[0];
        assert_eq!(last.function.as_deref(), Some("main"));
        assert!(
            last.file.as_deref().unwrap().ends_with("prog.c"),
            "{locs:?}"
        );
        assert_eq!(last.line, Some(line_of("int main(")));
        assert!(!last.inlined);

        let exe = compile("lines-O2", PROGRAM, false, &["-g", "-O2"]);
        let img = ElfImage::load(&exe).unwrap();
        let main = img.symbols.lookup_name("main").unwrap();
        let last = img.locations(main.addr).pop().expect("a location for main");
        assert_eq!(last.function.as_deref(), Some("main"));

        // Somewhere in main, the store of the inlined `twice` is attributed to it.
        let twice_line = line_of("sink = x * 2;");
        let call_line = line_of("twice(argc);");
        let found = (0..main.size).find_map(|off| {
            let locs = img.locations(FileAddr(main.addr.0 + off));
            (locs.len() == 2 && locs[0].function.as_deref() == Some("twice")).then_some(locs)
        });
        let locs = found.expect("an address inside the inlined twice()");
        assert!(locs[0].inlined && !locs[1].inlined, "{locs:?}");
        assert_eq!(locs[0].line, Some(twice_line));
        assert_eq!(locs[1].function.as_deref(), Some("main"));
        assert_eq!(locs[1].line, Some(call_line), "the call site, in main");
        assert!(locs[1].file.as_deref().unwrap().ends_with("prog.c"));
    }

    #[test]
    fn no_debug_info_means_no_lines_but_symbols_still_name_functions() {
        let exe = compile("nolines", PROGRAM, false, &["-O2", "-no-pie", "-fno-pie"]);
        let img = ElfImage::load(&exe).unwrap();
        assert!(!img.has_line_info());
        let main = img.symbols.lookup_name("main").unwrap().addr;
        assert!(img.locations(main).is_empty());

        let maps = crate::os::maps::parse_maps(&format!(
            "00400000-00500000 r-xp 00000000 08:01 5 {}\n",
            exe.display()
        ));
        let mut store = SymbolStore::new();
        store.refresh(&maps, Some(&*exe), &|m| {
            std::path::PathBuf::from(m.file_path().unwrap_or_default())
        });
        let locs = store.locations(RuntimeAddr(main.0 + 1));
        assert_eq!(
            locs,
            vec![Location {
                function: Some("main".into()),
                ..Location::default()
            }]
        );
        assert!(store.locations(RuntimeAddr(0x10)).is_empty());
    }

    /// Hand-made .debug_info: one unit whose DIEs nest `depth` deep.
    fn nested_dwarf(depth: usize) -> (SharedBytes, Vec<SectionInfo>) {
        // Abbreviation 1: DW_TAG_inlined_subroutine with children, no attributes.
        let abbrev = vec![1u8, 0x1d, 1, 0, 0, 0];
        let mut info = Vec::new();
        let body_len = 2 + 4 + 1 + depth + depth;
        info.extend_from_slice(&(body_len as u32).to_le_bytes());
        info.extend_from_slice(&4u16.to_le_bytes());
        info.extend_from_slice(&0u32.to_le_bytes());
        info.push(8);
        info.extend(std::iter::repeat_n(1u8, depth));
        info.extend(std::iter::repeat_n(0u8, depth));
        let mut data = abbrev.clone();
        data.extend_from_slice(&info);
        let secs = vec![
            SectionInfo {
                name: ".debug_abbrev".into(),
                addr: 0,
                offset: 0,
                size: abbrev.len(),
                compressed: false,
            },
            SectionInfo {
                name: ".debug_info".into(),
                addr: 0,
                offset: abbrev.len(),
                size: info.len(),
                compressed: false,
            },
        ];
        (Arc::new(data), secs)
    }

    #[test]
    fn absurdly_deep_dwarf_is_refused() {
        let (data, secs) = nested_dwarf(100);
        let info = LineInfo::from_sections(data, &secs).expect("sane nesting is accepted");
        assert!(info.locations(0x1000).is_empty());
        let (data, secs) = nested_dwarf(200_000);
        assert!(LineInfo::from_sections(data, &secs).is_none());
        // Garbage sections: no panic, no lines.
        let junk: SharedBytes = Arc::new(vec![0xffu8; 64]);
        let secs = vec![SectionInfo {
            name: ".debug_info".into(),
            addr: 0,
            offset: 0,
            size: 64,
            compressed: false,
        }];
        if let Some(info) = LineInfo::from_sections(junk, &secs) {
            assert!(info.locations(0).is_empty());
        }
    }

    #[test]
    fn debug_file_path_from_build_id() {
        assert_eq!(
            separate_debug_path(&[0xab, 0xcd, 0xef, 0x01]),
            PathBuf::from("/usr/lib/debug/.build-id/ab/cdef01.debug")
        );
    }
}
