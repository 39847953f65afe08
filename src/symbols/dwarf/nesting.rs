//! The guard in front of addr2line's function parser, which recurses once per level of
//! nested inlined subroutines: a hostile unit nesting DIEs a hundred thousand deep would
//! overflow the stack. Each unit is checked (iteratively) the first time an address inside
//! it is looked up, so opening a file scans nothing and a lookup pays for its own units only.
//!
//! Which units an address is "inside" must include every unit addr2line could search for it.
//! addr2line takes a unit's ranges from `.debug_aranges`, else from its DW_AT_ranges /
//! DW_AT_low_pc, else from its line program's sequences; this index takes the union of all
//! of those, so it never misses a unit addr2line would parse.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use gimli::DebugInfoOffset;

use super::reader::DwarfReader;

type Reader = DwarfReader;
type Dwarf = gimli::Dwarf<Reader>;

/// Deeper DIE nesting is refused: real compilers stay far below this.
const MAX_DIE_DEPTH: isize = 512;
/// DIEs one unit's check examines at most; a larger unit is taken as is (it cannot nest
/// deeper than it has DIEs, and this many levels fit the stack).
const MAX_CHECKED_DIES: usize = 50_000_000;
/// Address ranges indexed at most, over all units.
const MAX_SPANS: usize = 16_000_000;

/// One address range of one unit.
#[derive(Clone, Copy, Debug)]
struct Span {
    begin: u64,
    end: u64,
    unit: usize,
}

pub(super) struct NestingGuard {
    /// Sorted by `begin`.
    spans: Vec<Span>,
    /// `max_end[i]`: the largest `end` among `spans[..=i]`, so a backward scan for the spans
    /// containing an address can stop early.
    max_end: Vec<u64>,
    /// Units whose ranges could not be read: checked together on the first lookup.
    unknown: Vec<usize>,
    /// Verdicts so far, by unit offset in `.debug_info`.
    checked: Mutex<HashMap<usize, bool>>,
}

impl NestingGuard {
    /// Indexes the units' address ranges (reading each unit's root DIE, as addr2line does
    /// when it opens the file; nothing below the root).
    pub fn new(dwarf: &Dwarf) -> NestingGuard {
        let mut aranges: HashMap<usize, Vec<(u64, u64)>> = HashMap::new();
        let mut headers = dwarf.debug_aranges.headers();
        while let Ok(Some(header)) = headers.next() {
            let unit = header.debug_info_offset().0;
            let mut entries = header.entries();
            while let Ok(Some(e)) = entries.next() {
                let r = e.range();
                aranges.entry(unit).or_default().push((r.begin, r.end));
            }
        }
        let mut spans = Vec::new();
        let mut unknown = Vec::new();
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            // `units()` walks `.debug_info`: the offset is into it.
            let offset = header.offset().0;
            if spans.len() >= MAX_SPANS {
                unknown.push(offset);
                continue;
            }
            let mut push = |begin: u64, end: u64| {
                if begin < end {
                    spans.push(Span {
                        begin,
                        end,
                        unit: offset,
                    });
                }
            };
            for &(b, e) in aranges.get(&offset).into_iter().flatten() {
                push(b, e);
            }
            match unit_ranges(dwarf, header) {
                Some(ranges) => ranges.into_iter().for_each(|(b, e)| push(b, e)),
                None => unknown.push(offset),
            }
        }
        spans.sort_unstable_by_key(|s| (s.begin, s.end));
        let mut max_end = Vec::with_capacity(spans.len());
        let mut high = 0;
        for s in &spans {
            high = high.max(s.end);
            max_end.push(high);
        }
        NestingGuard {
            spans,
            max_end,
            unknown,
            checked: Mutex::new(HashMap::new()),
        }
    }

    /// True when every unit that could hold `addr` nests sanely (checking those not seen).
    pub fn allows(&self, dwarf: &Dwarf, addr: u64) -> bool {
        let mut units: HashSet<usize> = self.unknown.iter().copied().collect();
        let mut i = self.spans.partition_point(|s| s.begin <= addr);
        while i > 0 && self.max_end[i - 1] > addr {
            i -= 1;
            let s = self.spans[i];
            if addr < s.end {
                units.insert(s.unit);
            }
        }
        let mut checked = self.checked.lock().unwrap_or_else(|e| e.into_inner());
        units.into_iter().all(|unit| {
            *checked
                .entry(unit)
                .or_insert_with(|| nesting_is_sane(dwarf, unit))
        })
    }
}

/// A unit's DW_AT_ranges / low_pc ranges, else its line program's sequences; `None` when
/// they cannot be read.
fn unit_ranges(dwarf: &Dwarf, header: gimli::UnitHeader<Reader>) -> Option<Vec<(u64, u64)>> {
    let unit = dwarf.unit(header).ok()?;
    let mut out = Vec::new();
    let mut ranges = dwarf.unit_ranges(&unit).ok()?;
    while let Ok(Some(r)) = ranges.next() {
        out.push((r.begin, r.end));
    }
    if out.is_empty() {
        if let Some(program) = unit.line_program.clone() {
            let (_, sequences) = program.sequences().ok()?;
            out.extend(sequences.iter().map(|s| (s.start, s.end)));
        }
    }
    Some(out)
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
