//! The guard in front of addr2line's function parser, which recurses once per level of
//! nested inlined subroutines: a hostile unit nesting DIEs a hundred thousand deep would
//! overflow the stack. Each unit is checked (iteratively) the first time an address inside
//! it is looked up, so opening a file scans nothing and a lookup pays for its own units only.
//!
//! Which units an address is "inside" comes from `UnitSpans`, which reads each unit's ranges
//! the way addr2line does, so it names every unit addr2line could parse for that address.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use gimli::DebugInfoOffset;

use super::reader::DwarfReader;
use super::units::UnitSpans;

type Reader = DwarfReader;
type Dwarf = gimli::Dwarf<Reader>;

/// Deeper DIE nesting is refused: real compilers stay far below this.
const MAX_DIE_DEPTH: isize = 512;
/// DIEs one unit's check examines at most; a larger unit is taken as is (it cannot nest
/// deeper than it has DIEs, and this many levels fit the stack).
const MAX_CHECKED_DIES: usize = 50_000_000;

pub(super) struct NestingGuard {
    /// Verdicts so far, by unit offset in `.debug_info`.
    checked: Mutex<HashMap<usize, bool>>,
}

impl NestingGuard {
    pub(super) fn new() -> NestingGuard {
        NestingGuard {
            checked: Mutex::new(HashMap::new()),
        }
    }

    /// True when every unit that could hold `addr` nests sanely (checking those not seen).
    pub(super) fn allows(&self, dwarf: &Dwarf, units: &UnitSpans, addr: u64) -> bool {
        let mut candidates: HashSet<usize> = units.unknown().iter().copied().collect();
        candidates.extend(units.units_at(addr));
        let mut checked = self.checked.lock().unwrap_or_else(|e| e.into_inner());
        candidates.into_iter().all(|unit| {
            *checked
                .entry(unit)
                .or_insert_with(|| nesting_is_sane(dwarf, unit))
        })
    }
}

/// False when the unit at `offset` nests DIEs deeper than `MAX_DIE_DEPTH`. Iterative, so it
/// cannot itself run out of stack on the input it guards against.
fn nesting_is_sane(dwarf: &Dwarf, offset: usize) -> bool {
    let Ok(header) = dwarf.debug_info.header_from_offset(DebugInfoOffset(offset)) else {
        return true;
    };
    let Ok(abbrevs) = dwarf.abbreviations(&header) else {
        return true;
    };
    let Ok(mut entries) = header.entries_raw(&abbrevs, None) else {
        return true;
    };
    let mut budget = MAX_CHECKED_DIES;
    while !entries.is_empty() && budget > 0 {
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
    true
}
