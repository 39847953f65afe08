//! Which units hold the code at an address: one index over every unit's address ranges,
//! built once per file on the first question that needs it and shared by the line reader,
//! the scope finder and the nesting guard (building it three times was most of the time a
//! large C++ program took to reach its first stop).
//!
//! A unit's ranges are taken as addr2line takes them, so the guard in front of addr2line sees
//! exactly the units addr2line will parse: DW_AT_ranges, else `.debug_aranges`, else
//! DW_AT_low_pc/high_pc, else the line program's sequences.

use std::collections::HashMap;

use super::reader::DwarfReader as Reader;

type Dwarf = gimli::Dwarf<Reader>;

/// Address ranges indexed at most, over all units (hostile files end here; the units past
/// it are listed as unknown).
const MAX_SPANS: usize = 16_000_000;

/// One address range of one unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Span {
    begin: u64,
    end: u64,
    unit: usize,
}

pub(crate) struct UnitSpans {
    /// Sorted by `begin`.
    spans: Vec<Span>,
    /// `max_end[i]`: the largest `end` among `spans[..=i]`, so a backward scan for the spans
    /// containing an address stops as soon as nothing before can reach it.
    max_end: Vec<u64>,
    /// Units whose ranges could not be read: they may hold any address.
    unknown: Vec<usize>,
}

impl UnitSpans {
    pub(super) fn build(dwarf: &Dwarf) -> UnitSpans {
        let mut aranges: HashMap<usize, Vec<(u64, u64)>> = HashMap::new();
        let mut headers = dwarf.debug_aranges.headers();
        while let Ok(Some(header)) = headers.next() {
            let mut entries = header.entries();
            let list = aranges.entry(header.debug_info_offset().0).or_default();
            while let Ok(Some(e)) = entries.next() {
                let r = e.range();
                list.push((r.begin, r.end));
            }
        }
        let mut spans = Vec::new();
        let mut unknown = Vec::new();
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Some(offset) = header.debug_info_offset() else {
                continue;
            };
            let offset = offset.0;
            if matches!(
                header.type_(),
                gimli::UnitType::Type { .. } | gimli::UnitType::SplitType { .. }
            ) {
                continue;
            }
            if spans.len() >= MAX_SPANS {
                unknown.push(offset);
                continue;
            }
            let before = spans.len();
            let mut push = |begin: u64, end: u64| {
                if begin < end && spans.len() < MAX_SPANS {
                    spans.push(Span {
                        begin,
                        end,
                        unit: offset,
                    });
                }
            };
            if !read_unit_ranges(dwarf, header, aranges.get(&offset), &mut push) {
                spans.truncate(before);
                unknown.push(offset);
            }
        }
        UnitSpans::from_spans(spans, unknown)
    }

    fn from_spans(mut spans: Vec<Span>, unknown: Vec<usize>) -> UnitSpans {
        // Stable and by start alone: each unit lists its ranges mostly in address order,
        // and the merge sort takes those runs as they are (several times faster than
        // sorting 100,000 ranges from scratch).
        spans.sort_by_key(|s| s.begin);
        let mut max_end = Vec::with_capacity(spans.len());
        let mut high = 0;
        for s in &spans {
            high = high.max(s.end);
            max_end.push(high);
        }
        UnitSpans {
            spans,
            max_end,
            unknown,
        }
    }

    /// Offsets (in `.debug_info`) of the units with a range holding `addr`, each once,
    /// lowest range start first.
    pub(super) fn units_at(&self, addr: u64) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = self.spans.partition_point(|s| s.begin <= addr);
        while i > 0 && self.max_end[i - 1] > addr {
            i -= 1;
            let s = self.spans[i];
            if addr < s.end && !out.contains(&s.unit) {
                out.push(s.unit);
            }
        }
        out.reverse();
        out
    }

    /// Units whose ranges could not be read.
    pub(super) fn unknown(&self) -> &[usize] {
        &self.unknown
    }
}

/// Feeds one unit's ranges to `push` in addr2line's order of preference; false when the
/// unit cannot be read at all.
fn read_unit_ranges(
    dwarf: &Dwarf,
    header: gimli::UnitHeader<Reader>,
    aranges: Option<&Vec<(u64, u64)>>,
    push: &mut dyn FnMut(u64, u64),
) -> bool {
    let Ok(unit) = dwarf.unit(header) else {
        return false;
    };
    let Ok(mut cursor) = unit.entries_raw(None) else {
        return false;
    };
    let Ok(Some(abbrev)) = cursor.read_abbreviation() else {
        return false;
    };
    let mut ranges_attr = None;
    let mut low = None;
    let mut high = None;
    for spec in abbrev.attributes() {
        let Ok(attr) = cursor.read_attribute(*spec) else {
            return false;
        };
        match attr.name() {
            gimli::DW_AT_ranges => ranges_attr = Some(attr.value()),
            gimli::DW_AT_low_pc => low = Some(attr.value()),
            gimli::DW_AT_high_pc => high = Some(attr.value()),
            _ => {}
        }
    }
    let added = std::cell::Cell::new(0usize);
    let mut add = |b: u64, e: u64| {
        if b < e {
            added.set(added.get() + 1);
            push(b, e);
        }
    };
    if let Some(value) = ranges_attr {
        let Ok(Some(offset)) = dwarf.attr_ranges_offset(&unit, value) else {
            return false;
        };
        let Ok(mut list) = dwarf.ranges(&unit, offset) else {
            return false;
        };
        // A bad entry ends the list; what came before stands.
        while let Ok(Some(r)) = list.next() {
            add(r.begin, r.end);
        }
    } else {
        aranges.into_iter().flatten().for_each(|&(b, e)| add(b, e));
        if added.get() == 0 {
            let address = |v: gimli::AttributeValue<Reader>| match v {
                gimli::AttributeValue::Addr(a) => Some(a),
                gimli::AttributeValue::DebugAddrIndex(i) => dwarf.address(&unit, i).ok(),
                _ => None,
            };
            if let Some(lo) = low.and_then(address) {
                let hi = match high {
                    Some(gimli::AttributeValue::Udata(size)) => Some(lo.saturating_add(size)),
                    Some(v) => address(v),
                    None => None,
                };
                if let Some(hi) = hi {
                    add(lo, hi);
                }
            }
        }
    }
    if added.get() == 0 {
        // No declared ranges: the line program's sequences say where the code is.
        if let Some(program) = unit.line_program.clone() {
            let Ok((_, sequences)) = program.sequences() else {
                return false;
            };
            sequences.iter().for_each(|s| add(s.start, s.end));
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(begin: u64, end: u64, unit: usize) -> Span {
        Span { begin, end, unit }
    }

    #[test]
    fn finds_every_unit_holding_an_address() {
        // Unit 1 spans a long range that other units' short ranges sit inside (a C++ unit
        // whose COMDAT functions the linker placed among another unit's).
        let idx = UnitSpans::from_spans(
            vec![
                span(0x1000, 0x9000, 1),
                span(0x2000, 0x2100, 2),
                span(0x3000, 0x3100, 3),
                span(0x3050, 0x3060, 2),
                span(0xa000, 0xa100, 4),
            ],
            vec![9],
        );
        assert_eq!(idx.units_at(0x3055), vec![1, 3, 2]);
        assert_eq!(idx.units_at(0x2050), vec![1, 2]);
        assert_eq!(idx.units_at(0x8fff), vec![1]);
        assert_eq!(idx.units_at(0x9000), Vec::<usize>::new());
        assert_eq!(idx.units_at(0xa000), vec![4]);
        assert_eq!(idx.units_at(0xa100), Vec::<usize>::new());
        assert_eq!(idx.units_at(0), Vec::<usize>::new());
        assert_eq!(idx.unknown(), &[9]);
    }

    #[test]
    fn a_unit_listed_twice_at_one_address_is_named_once() {
        let idx = UnitSpans::from_spans(vec![span(0x10, 0x20, 5), span(0x18, 0x30, 5)], vec![]);
        assert_eq!(idx.units_at(0x19), vec![5]);
        assert_eq!(idx.units_at(0x25), vec![5]);
    }
}
