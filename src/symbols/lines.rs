//! Source lines and inlined-function chains from DWARF, through addr2line. Built lazily per
//! image on the first question and cached in it: from the image's own `.debug_*` sections or,
//! failing those, from a separate debug file found by build id under /usr/lib/debug.

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
const MAX_DIE_DEPTH: isize = 1024;
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
    fn load(image: &ElfImage) -> Option<LineInfo> {
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
        let ctx = addr2line::Context::from_dwarf(dwarf).ok()?;
        Some(LineInfo {
            ctx: Mutex::new(ctx),
        })
    }

    fn locations(&self, addr: u64) -> Vec<Location> {
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
