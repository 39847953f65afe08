//! `DwarfInfo`: the debug sections of one ELF file (an executable, a library or its separate
//! debug file), opened for questions. Opening reads section headers and abbreviations; which
//! unit holds an address is indexed on the first question about an address, and everything
//! below a unit's root is parsed on first need.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use gimli::SectionId;

use super::nesting::NestingGuard;
use super::reader::DwarfReader;
use super::stmt::{StmtLine, StmtLines};
use super::tree::InfoTree;
use super::units::UnitSpans;
use crate::symbols::elf::sections::{read_sections, SectionInfo};
use crate::symbols::elf::SharedBytes;

type Reader = DwarfReader;

/// The parsed DWARF of one file. addr2line caches parsed units in cells that are not `Sync`,
/// hence the lock.
pub struct DwarfInfo {
    /// Opened on the first question that needs functions or inlined calls (opening reads
    /// every unit's ranges again, its own way): lines, scopes and values never need it.
    /// `None` inside when addr2line refused the file.
    ctx: OnceLock<Option<Mutex<addr2line::Context<Reader>>>>,
    /// The sections addr2line reads too, for the nesting checks.
    dwarf: Arc<gimli::Dwarf<Reader>>,
    /// Which units hold which addresses, built on the first question about an address.
    units: OnceLock<UnitSpans>,
    guard: NestingGuard,
    /// Types, variables and locations, read from the same sections on demand.
    pub(crate) tree: InfoTree,
    /// Line rows with their statement flags, per unit on demand.
    pub(super) stmt: StmtLines,
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
        // A compressed section is inflated here, once.
        let load = |id: SectionId| -> Result<Reader, gimli::Error> {
            let reader = match secs.iter().find(|s| s.name == id.name()) {
                None => DwarfReader::new(data.clone(), 0, 0),
                Some(sec) if !sec.compressed => {
                    DwarfReader::new(data.clone(), sec.offset, sec.size)
                }
                Some(sec) => {
                    // A section that will not inflate reads as empty.
                    let inflated = sec
                        .contents((*data).as_ref())
                        .map(|c| c.into_owned())
                        .unwrap_or_default();
                    let len = inflated.len();
                    DwarfReader::new(Arc::new(inflated), 0, len)
                }
            };
            Ok(reader)
        };
        let mut dwarf = gimli::Dwarf::load(load).ok()?;
        // Every unit's abbreviations are parsed once, and shared by the nesting guard,
        // addr2line and the variable reader.
        dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::All);
        let dwarf = Arc::new(dwarf);
        Some(DwarfInfo {
            ctx: OnceLock::new(),
            tree: InfoTree::new(dwarf.clone()),
            stmt: StmtLines::new(dwarf.clone()),
            dwarf,
            units: OnceLock::new(),
            guard: NestingGuard::new(),
        })
    }

    /// Builds now what the first question about an address would (which units hold which
    /// addresses), for a caller with a core to spare.
    pub fn index_units(&self) {
        self.unit_spans();
    }

    /// `index_units`, and the table of every unit's address ranges that source positions
    /// with inlined frames are looked up in (what the first unwind through a file builds):
    /// for a thread that opens a file ahead of need.
    pub fn index_for_lookups(&self) {
        self.unit_spans();
        drop(self.context());
    }

    /// Which units hold which addresses.
    pub(super) fn unit_spans(&self) -> &UnitSpans {
        self.units.get_or_init(|| UnitSpans::build(&self.dwarf))
    }

    /// The line-table row gdb reports at link-time address `pc`.
    pub(super) fn stmt_line(&self, pc: u64) -> Option<StmtLine> {
        self.stmt.line_at(self.unit_spans(), pc)
    }

    /// The addr2line context for questions that parse no function (line tables); `None`
    /// when addr2line cannot read the file.
    pub(super) fn context(&self) -> Option<MutexGuard<'_, addr2line::Context<Reader>>> {
        let ctx = self.ctx.get_or_init(|| {
            let dwarf = self.dwarf.clone();
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                addr2line::Context::from_arc_dwarf(dwarf)
            }))
            .ok()?
            .ok()
            .map(Mutex::new)
        });
        Some(ctx.as_ref()?.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The addr2line context for questions about the code at `addr` that parse its function
    /// (`find_frames`, `find_dwarf_and_unit`): `None` when a unit holding `addr` nests DIEs
    /// too deep for addr2line's recursive parser (see `NestingGuard`).
    pub(super) fn context_at(
        &self,
        addr: u64,
    ) -> Option<MutexGuard<'_, addr2line::Context<Reader>>> {
        if !self.guard.allows(&self.dwarf, self.unit_spans(), addr) {
            return None;
        }
        self.context()
    }
}

fn has_debug_info(secs: &[SectionInfo]) -> bool {
    secs.iter().any(|s| s.name == ".debug_info" && s.size > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::addr::FileAddr;

    /// Hand-made .debug_info: one unit covering 0x1000..0x1100 whose DIEs nest `depth`
    /// inlined subroutines deep.
    fn nested_dwarf(depth: usize) -> (SharedBytes, Vec<SectionInfo>) {
        // 1: DW_TAG_compile_unit with children, DW_AT_low_pc addr, DW_AT_high_pc data8.
        // 2: DW_TAG_inlined_subroutine with children, no attributes.
        let abbrev = vec![
            1u8, 0x11, 1, 0x11, 0x01, 0x12, 0x07, 0, 0, 2, 0x1d, 1, 0, 0, 0,
        ];
        let mut body = Vec::new();
        body.extend_from_slice(&4u16.to_le_bytes());
        body.extend_from_slice(&0u32.to_le_bytes());
        body.push(8);
        body.push(1);
        body.extend_from_slice(&0x1000u64.to_le_bytes());
        body.extend_from_slice(&0x100u64.to_le_bytes());
        body.extend(std::iter::repeat_n(2u8, depth));
        body.extend(std::iter::repeat_n(0u8, depth + 1));
        let mut info = (body.len() as u32).to_le_bytes().to_vec();
        info.extend_from_slice(&body);
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
    fn absurdly_deep_dwarf_is_refused_per_unit() {
        let (data, secs) = nested_dwarf(100);
        let info = DwarfInfo::from_sections(data, &secs).expect("opens");
        assert!(info.context_at(0x1010).is_some(), "sane nesting is parsed");
        let _ = info.locations(FileAddr(0x1010));
        // Deep enough to overflow the stack if addr2line parsed it: only the guard keeps
        // this lookup alive. The file still opens; lookups elsewhere are unaffected.
        let (data, secs) = nested_dwarf(200_000);
        let info = DwarfInfo::from_sections(data, &secs).expect("opens");
        assert!(info.context_at(0x1010).is_none());
        assert!(info.locations(FileAddr(0x1010)).is_empty());
        assert!(info.scopes_at(FileAddr(0x1010)).is_none());
        assert!(info
            .describe(FileAddr(0x1010), "x", &|_, _| false)
            .is_empty());
        assert!(info.context_at(0x5000).is_some(), "no unit there");
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
