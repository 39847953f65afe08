//! The DWARF of one image as the type and variable readers see it: units found by the offset
//! of any DIE in them, parsed once when first touched and kept. Nothing is read when this is
//! built; the unit table (headers only) is read on the first lookup.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use gimli::{AttributeValue, DebugInfoOffset, UnitOffset, UnitRef};

use super::indexes::{FunctionIndexes, NameIndex};
use super::reader::DwarfReader;
use super::types::Type;

pub(crate) type Reader = DwarfReader;
pub(crate) type Die = gimli::DebuggingInformationEntry<Reader>;

/// Units whose parse is kept at most; past this the cache starts over (a walk over a huge
/// binary must not keep all of it).
const MAX_CACHED_UNITS: usize = 4096;
/// Resolved types kept at most, for the same reason.
const MAX_CACHED_TYPES: usize = 200_000;

/// A unit's extent in `.debug_info`: `start..end` holds its header and DIEs.
#[derive(Clone, Copy, Debug)]
struct UnitSpan {
    start: usize,
    end: usize,
}

pub(crate) struct InfoTree {
    pub(super) dwarf: Arc<gimli::Dwarf<Reader>>,
    spans: OnceLock<Vec<UnitSpan>>,
    units: Mutex<HashMap<usize, Arc<gimli::Unit<Reader>>>>,
    pub(super) types: Mutex<HashMap<usize, Arc<Type>>>,
    pub(super) names: NameIndex,
    /// Types scry makes up (a pointer for `&x`, the rest of a multi-dimensional array),
    /// numbered from `SYNTHETIC_BASE`.
    pub(super) synthetic: Mutex<Vec<Arc<Type>>>,
    pub(super) functions: FunctionIndexes,
    /// Per unit: the namespace and class path of each type declared inside one (C++ type
    /// DIEs name only themselves: `vector<int>` is `std::vector<int>`).
    pub(super) prefixes: Mutex<HashMap<usize, Arc<HashMap<usize, String>>>>,
    /// Rust trait-object vtables (`<T as Trait>::{vtable}` variables) by link-time address,
    /// built when a `dyn Trait` value is first printed.
    pub(super) vtables: OnceLock<Vec<(u64, usize)>>,
}

/// A parsed unit and the DWARF it belongs to, for attribute lookups.
#[derive(Clone)]
pub(crate) struct UnitHandle {
    pub dwarf: Arc<gimli::Dwarf<Reader>>,
    pub unit: Arc<gimli::Unit<Reader>>,
}

impl UnitHandle {
    pub(crate) fn unit_ref(&self) -> UnitRef<'_, Reader> {
        UnitRef::new(&self.dwarf, &self.unit)
    }

    /// `.debug_info` offset of the unit's first byte.
    pub(crate) fn start(&self) -> usize {
        self.unit.header.debug_info_offset().map_or(0, |o| o.0)
    }

    /// The global offset of a DIE of this unit.
    pub(crate) fn global(&self, off: UnitOffset<usize>) -> usize {
        self.start() + off.0
    }

    /// The DIE at a global offset, if it lies in this unit.
    pub(crate) fn entry_at(&self, global: usize) -> Option<Die> {
        let off = global.checked_sub(self.start())?;
        self.unit.entry(UnitOffset(off)).ok()
    }

    pub(crate) fn encoding(&self) -> gimli::Encoding {
        self.unit.encoding()
    }

    /// A string attribute (name, linkage name), lossily decoded.
    pub(crate) fn string(&self, die: &Die, at: gimli::DwAt) -> Option<String> {
        let value = die.attr_value(at)?;
        let s = self.unit_ref().attr_string(value).ok()?;
        Some(gimli::Reader::to_string_lossy(&s).ok()?.into_owned())
    }

    /// A reference attribute (type, abstract origin, specification) as a global offset.
    pub(crate) fn reference(&self, die: &Die, at: gimli::DwAt) -> Option<usize> {
        match die.attr_value(at)? {
            AttributeValue::UnitRef(o) => Some(self.global(o)),
            AttributeValue::DebugInfoRef(DebugInfoOffset(o)) => Some(o),
            _ => None,
        }
    }

    pub(crate) fn udata(&self, die: &Die, at: gimli::DwAt) -> Option<u64> {
        die.attr_value(at)?.udata_value()
    }

    /// `DW_AT_calling_convention` (gimli reads it as its own kind, not as a number).
    pub(crate) fn calling_convention(&self, die: &Die) -> Option<u64> {
        match die.attr_value(gimli::DW_AT_calling_convention)? {
            AttributeValue::CallingConvention(cc) => Some(u64::from(cc.0)),
            other => other.udata_value(),
        }
    }

    pub(crate) fn flag(&self, die: &Die, at: gimli::DwAt) -> bool {
        matches!(die.attr_value(at), Some(AttributeValue::Flag(true)))
    }

    /// The unit's source language.
    pub(crate) fn language(&self) -> Option<gimli::DwLang> {
        let root = self.unit.entry(self.unit.header.root_offset()).ok()?;
        match root.attr_value(gimli::DW_AT_language)? {
            AttributeValue::Language(l) => Some(l),
            _ => None,
        }
    }
}

/// C, of any standard.
pub(crate) fn is_c(lang: Option<gimli::DwLang>) -> bool {
    matches!(
        lang,
        Some(
            gimli::DW_LANG_C
                | gimli::DW_LANG_C89
                | gimli::DW_LANG_C99
                | gimli::DW_LANG_C11
                | gimli::DW_LANG_C17
        )
    )
}

/// C++, of any standard.
pub(crate) fn is_cpp(lang: Option<gimli::DwLang>) -> bool {
    matches!(
        lang,
        Some(
            gimli::DW_LANG_C_plus_plus
                | gimli::DW_LANG_C_plus_plus_03
                | gimli::DW_LANG_C_plus_plus_11
                | gimli::DW_LANG_C_plus_plus_14
                | gimli::DW_LANG_C_plus_plus_17
                | gimli::DW_LANG_C_plus_plus_20
        )
    )
}

impl InfoTree {
    pub(crate) fn new(dwarf: Arc<gimli::Dwarf<Reader>>) -> InfoTree {
        InfoTree {
            dwarf,
            spans: OnceLock::new(),
            units: Mutex::new(HashMap::new()),
            types: Mutex::new(HashMap::new()),
            names: NameIndex::default(),
            synthetic: Mutex::new(Vec::new()),
            functions: FunctionIndexes::new(),
            prefixes: Mutex::new(HashMap::new()),
            vtables: OnceLock::new(),
        }
    }

    /// Every unit's extent, from the headers alone.
    fn spans(&self) -> &[UnitSpan] {
        self.spans.get_or_init(|| {
            let mut out = Vec::new();
            let mut headers = self.dwarf.units();
            while let Ok(Some(h)) = headers.next() {
                let Some(start) = h.debug_info_offset() else {
                    continue;
                };
                let end = start.0 + h.length_including_self();
                out.push(UnitSpan {
                    start: start.0,
                    end,
                });
            }
            out.sort_by_key(|s| s.start);
            out
        })
    }

    /// The starts of every unit, in order (for whole-file scans).
    pub(crate) fn unit_starts(&self) -> Vec<usize> {
        self.spans().iter().map(|s| s.start).collect()
    }

    /// A whole-file pass is done with the unit at `start`: the memory its bytes occupy in a
    /// mapped file goes back (a pass over 100 MB of `.debug_info` would otherwise keep every
    /// page of it resident; a later question faults in the few it reads).
    pub(crate) fn release_unit(&self, start: usize) {
        let spans = self.spans();
        let i = spans.partition_point(|s| s.start < start);
        if let Some(span) = spans.get(i).filter(|s| s.start == start) {
            gimli::Section::reader(&self.dwarf.debug_info).release(span.start..span.end);
        }
    }

    /// The unit holding the DIE at global offset `die`.
    pub(crate) fn unit_of(&self, die: usize) -> Option<UnitHandle> {
        let spans = self.spans();
        let i = spans.partition_point(|s| s.start <= die).checked_sub(1)?;
        let span = spans[i];
        (die < span.end).then_some(())?;
        self.unit_starting_at(span.start)
    }

    /// The unit whose header is at `start`.
    pub(crate) fn unit_starting_at(&self, start: usize) -> Option<UnitHandle> {
        let mut cache = self.units.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(u) = cache.get(&start) {
            return Some(UnitHandle {
                dwarf: self.dwarf.clone(),
                unit: u.clone(),
            });
        }
        let header = self.dwarf.unit_header(DebugInfoOffset(start)).ok()?;
        let unit = Arc::new(self.dwarf.unit(header).ok()?);
        if cache.len() >= MAX_CACHED_UNITS {
            cache.clear();
        }
        cache.insert(start, unit.clone());
        Some(UnitHandle {
            dwarf: self.dwarf.clone(),
            unit,
        })
    }

    /// The unit whose header is at `start`, for a pass over every unit: from the cache when
    /// it is there, else parsed and not kept (a whole-file pass would otherwise hold every
    /// unit's abbreviations, or churn the cache out from under the questions using it).
    pub(crate) fn unit_for_scan(&self, start: usize) -> Option<UnitHandle> {
        let cached = self
            .units
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&start)
            .cloned();
        let unit = match cached {
            Some(u) => u,
            None => {
                let header = self.dwarf.unit_header(DebugInfoOffset(start)).ok()?;
                Arc::new(self.dwarf.unit(header).ok()?)
            }
        };
        Some(UnitHandle {
            dwarf: self.dwarf.clone(),
            unit,
        })
    }

    /// The DIE at a global offset with its unit.
    pub(crate) fn entry(&self, die: usize) -> Option<(UnitHandle, Die)> {
        let unit = self.unit_of(die)?;
        let entry = unit.entry_at(die)?;
        Some((unit, entry))
    }

    pub(super) fn cache_type(&self, die: usize, ty: Arc<Type>) {
        let mut cache = self.types.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= MAX_CACHED_TYPES {
            cache.clear();
        }
        cache.insert(die, ty);
    }

    pub(super) fn cached_type(&self, die: usize) -> Option<Arc<Type>> {
        self.types
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&die)
            .cloned()
    }
}
