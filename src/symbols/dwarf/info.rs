//! `DwarfInfo`: the debug sections of one ELF file (an executable, a library or its separate
//! debug file), opened for questions. Units are parsed by addr2line on first need, not here.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};

use gimli::SectionId;

use super::reader::DwarfReader;
use crate::symbols::elf::sections::{read_sections, SectionInfo};
use crate::symbols::elf::SharedBytes;

type Reader = DwarfReader;

/// Deeper DIE nesting is refused before addr2line sees it: its parser recurses per level of
/// nested inlined subroutines, and real compilers stay far below this.
const MAX_DIE_DEPTH: isize = 512;
/// DIEs examined by that check at most; a larger file is taken as is.
const MAX_CHECKED_DIES: usize = 50_000_000;

/// The parsed DWARF of one file. addr2line caches parsed units in cells that are not `Sync`,
/// hence the lock.
pub struct DwarfInfo {
    ctx: Mutex<addr2line::Context<Reader>>,
}

impl std::fmt::Debug for DwarfInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DwarfInfo")
    }
}

impl DwarfInfo {
    /// The DWARF of the ELF file in `data`; `None` when it has no usable `.debug_info`.
    pub fn from_elf(data: SharedBytes) -> Option<DwarfInfo> {
        let secs = read_sections((*data).as_ref());
        if !has_debug_info(&secs) {
            return None;
        }
        DwarfInfo::from_sections(data, &secs)
    }

    pub(super) fn from_sections(data: SharedBytes, secs: &[SectionInfo]) -> Option<DwarfInfo> {
        let load = |id: SectionId| -> Result<Reader, gimli::Error> {
            let Some(sec) = secs.iter().find(|s| s.name == id.name()) else {
                return Ok(DwarfReader::new(data.clone(), 0, 0));
            };
            if !sec.compressed {
                return Ok(DwarfReader::new(data.clone(), sec.offset, sec.size));
            }
            // Inflated once, here; a section that will not inflate reads as empty.
            let inflated = sec
                .contents((*data).as_ref())
                .map(|c| c.into_owned())
                .unwrap_or_default();
            let len = inflated.len();
            Ok(DwarfReader::new(Arc::new(inflated), 0, len))
        };
        let dwarf = gimli::Dwarf::load(load).ok()?;
        if !nesting_is_sane(&dwarf) {
            return None;
        }
        let ctx =
            std::panic::catch_unwind(AssertUnwindSafe(|| addr2line::Context::from_dwarf(dwarf)))
                .ok()?
                .ok()?;
        Some(DwarfInfo {
            ctx: Mutex::new(ctx),
        })
    }

    /// The addr2line context, for the readers of this module (lines, variables).
    pub(super) fn context(&self) -> MutexGuard<'_, addr2line::Context<Reader>> {
        self.ctx.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn has_debug_info(secs: &[SectionInfo]) -> bool {
    secs.iter().any(|s| s.name == ".debug_info" && s.size > 0)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::addr::FileAddr;

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
        let info = DwarfInfo::from_sections(data, &secs).expect("sane nesting is accepted");
        assert!(info.locations(FileAddr(0x1000)).is_empty());
        let (data, secs) = nested_dwarf(200_000);
        assert!(DwarfInfo::from_sections(data, &secs).is_none());
        // Garbage sections: no panic, no lines.
        let junk: SharedBytes = Arc::new(vec![0xffu8; 64]);
        let secs = vec![SectionInfo {
            name: ".debug_info".into(),
            addr: 0,
            offset: 0,
            size: 64,
            compressed: false,
        }];
        if let Some(info) = DwarfInfo::from_sections(junk, &secs) {
            assert!(info.locations(FileAddr(0)).is_empty());
        }
    }
}
