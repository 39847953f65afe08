//! Where a function that has no code of its own runs: the copies of a function inlined into
//! its callers (`DW_TAG_inlined_subroutine` DIEs whose `DW_AT_abstract_origin` is the
//! function's abstract instance). A breakpoint on such a function stops at each copy's entry,
//! as gdb's does.

use std::collections::HashSet;

use super::tree::InfoTree;

/// DIEs examined per unit at most (a unit is walked only when it declares the function).
const MAX_DIES: usize = 20_000_000;

impl InfoTree {
    /// Entry addresses (link-time) of the inlined copies of the function called `name`,
    /// ascending, at most `max`. Empty when no unit has an inlined function of that name.
    pub(crate) fn inlined_copies(&self, name: &str, max: usize) -> Vec<u64> {
        let abstracts = self.inline_functions(name);
        let mut units: Vec<usize> = Vec::new();
        for &die in &abstracts {
            if let Some(u) = self.unit_of(die) {
                if !units.contains(&u.start()) {
                    units.push(u.start());
                }
            }
        }
        let origins: HashSet<usize> = abstracts.into_iter().collect();
        let mut out = self.copies_in(&units, &origins, max);
        // rustc's codegen units refer to an abstract function in another unit (a
        // cross-unit reference): when the units that declare it inline it nowhere, every
        // unit is looked at, once, for this name.
        if out.is_empty() && !origins.is_empty() {
            let rest: Vec<usize> = self
                .unit_starts()
                .into_iter()
                .filter(|u| !units.contains(u))
                .collect();
            out = self.copies_in(&rest, &origins, max);
        }
        out
    }

    /// The entries of the inlined copies (of the abstract functions `origins`) in the units
    /// starting at `units`, ascending, at most `max`. Not a copy inside a function the
    /// linker discarded (its addresses start at 0, in the ELF header's page).
    fn copies_in(&self, units: &[usize], origins: &HashSet<usize>, max: usize) -> Vec<u64> {
        const FIRST_PAGE: u64 = 0x1000;
        let mut out = Vec::new();
        for &start in units {
            let Some(unit) = self.unit_starting_at(start) else {
                continue;
            };
            let mut entries = unit.unit.entries();
            let mut seen = 0usize;
            while let Ok(Some(die)) = entries.next_dfs() {
                seen += 1;
                if seen > MAX_DIES || out.len() >= max {
                    break;
                }
                if die.tag() != gimli::DW_TAG_inlined_subroutine {
                    continue;
                }
                let Some(origin) = unit.reference(die, gimli::DW_AT_abstract_origin) else {
                    continue;
                };
                if !origins.contains(&origin) {
                    continue;
                }
                let global = unit.global(die.offset());
                if let Some((entry, _)) = self.function_range(&unit, global) {
                    if entry >= FIRST_PAGE {
                        out.push(entry);
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out.truncate(max);
        out
    }
}

impl InfoTree {
    /// `inlined_copies` of the function called `name`, searched in `unit` only (see
    /// `DwarfInfo::inlined_copies_near`).
    pub(crate) fn inlined_copies_in(
        &self,
        unit: &super::tree::UnitHandle,
        name: &str,
        max: usize,
    ) -> Vec<u64> {
        let bare = name.rsplit("::").next().unwrap_or(name);
        let mut abstracts: HashSet<usize> = HashSet::new();
        let mut calls: Vec<(usize, usize)> = Vec::new();
        let mut entries = unit.unit.entries();
        let mut seen = 0usize;
        while let Ok(Some(die)) = entries.next_dfs() {
            seen += 1;
            if seen > MAX_DIES {
                break;
            }
            match die.tag() {
                gimli::DW_TAG_subprogram
                    if die.attr_value(gimli::DW_AT_inline).is_some()
                        && unit.string(die, gimli::DW_AT_name).as_deref() == Some(bare) =>
                {
                    abstracts.insert(unit.global(die.offset()));
                }
                gimli::DW_TAG_inlined_subroutine => {
                    if let Some(origin) = unit.reference(die, gimli::DW_AT_abstract_origin) {
                        calls.push((origin, unit.global(die.offset())));
                    }
                }
                _ => {}
            }
        }
        let mut out: Vec<u64> = calls
            .into_iter()
            .filter(|(origin, _)| abstracts.contains(origin))
            .filter_map(|(_, call)| self.function_range(unit, call).map(|(entry, _)| entry))
            .collect();
        out.sort_unstable();
        out.dedup();
        out.truncate(max);
        out
    }

    /// `inlined_copies_in` of `unit` and, for a C or C++ function declared in a header (its
    /// abstract instance's `DW_AT_decl_file` is not the unit's source), of every other unit
    /// whose line table lists that header: each unit including it has its own abstract
    /// instance and copies. Only the units that can hold copies are walked; the rest cost
    /// a line-table header each.
    pub(crate) fn inlined_copies_with_headers(
        &self,
        unit: &super::tree::UnitHandle,
        name: &str,
        max: usize,
    ) -> Vec<u64> {
        let mut out = self.inlined_copies_in(unit, name, max);
        let lang = unit.language();
        let c_like = super::tree::is_c(lang) || super::tree::is_cpp(lang);
        let Some(header) = self.header_declaring(unit, name).filter(|_| c_like) else {
            return out;
        };
        for start in self.unit_starts().into_iter().take(MAX_UNITS) {
            if start == unit.start() || out.len() >= max {
                continue;
            }
            let Some(other) = self.unit_for_scan(start) else {
                continue;
            };
            if self.unit_files(&other).contains(&header) {
                out.extend(self.inlined_copies_in(&other, name, max - out.len()));
            }
        }
        out.sort_unstable();
        out.dedup();
        out.truncate(max);
        out
    }

    /// LTO: the out-of-line function starting at `func` in `unit` is a concrete instance of
    /// an abstract one in *another* unit (GCC's early-debug unit), which its copies inlined
    /// anywhere in the program refer to: that abstract DIE. `None` for the usual program,
    /// where each unit has its own abstract instances.
    pub(crate) fn lto_origin(&self, unit: &super::tree::UnitHandle, func: u64) -> Option<usize> {
        let die = self.function_at(unit, func)?;
        let entry = unit.entry_at(die)?;
        let origin = unit.reference(&entry, gimli::DW_AT_abstract_origin)?;
        let same_unit = self
            .unit_of(origin)
            .is_some_and(|u| u.start() == unit.start());
        (!same_unit).then_some(origin)
    }

    /// The entries of every call inlined anywhere in the program whose abstract origin is
    /// `origin` (see `lto_origin`): one pass over every unit, at most `max`.
    pub(crate) fn inlined_copies_of_origin(&self, origin: usize, max: usize) -> Vec<u64> {
        let mut out = Vec::new();
        let mut seen = 0usize;
        'units: for start in self.unit_starts().into_iter().take(MAX_UNITS) {
            let Some(unit) = self.unit_for_scan(start) else {
                continue;
            };
            let mut entries = unit.unit.entries();
            while let Ok(Some(die)) = entries.next_dfs() {
                seen += 1;
                if seen > MAX_DIES || out.len() >= max {
                    break 'units;
                }
                if die.tag() != gimli::DW_TAG_inlined_subroutine
                    || unit.reference(die, gimli::DW_AT_abstract_origin) != Some(origin)
                {
                    continue;
                }
                let call = unit.global(die.offset());
                if let Some((entry, _)) = self.function_range(&unit, call) {
                    out.push(entry);
                }
            }
            self.release_unit(start);
        }
        out.sort_unstable();
        out.dedup();
        out.truncate(max);
        out
    }

    /// The header a function `name` with an abstract (inline) instance in `unit` is declared
    /// in, when that is not the unit's own source file.
    fn header_declaring(&self, unit: &super::tree::UnitHandle, name: &str) -> Option<String> {
        let bare = name.rsplit("::").next().unwrap_or(name);
        let mut entries = unit.unit.entries();
        let mut seen = 0usize;
        while let Ok(Some(die)) = entries.next_dfs() {
            seen += 1;
            if seen > MAX_DIES {
                return None;
            }
            let inline_named = die.tag() == gimli::DW_TAG_subprogram
                && die.attr_value(gimli::DW_AT_inline).is_some()
                && unit.string(die, gimli::DW_AT_name).as_deref() == Some(bare);
            if !inline_named {
                continue;
            }
            // gimli reads DW_AT_decl_file as a file index, whatever its form.
            let index = match die.attr_value(gimli::DW_AT_decl_file)? {
                gimli::AttributeValue::FileIndex(i) => i,
                other => other.udata_value()?,
            };
            let file = self.unit_files(unit).get(index as usize)?.clone();
            let own = super::source_file::unit_path(unit);
            return (!file.is_empty() && Some(&file) != own.as_ref()).then_some(file);
        }
        None
    }

    /// The files a unit's line table names, by index.
    fn unit_files(&self, unit: &super::tree::UnitHandle) -> Vec<String> {
        let Some(program) = unit.unit.line_program.as_ref() else {
            return Vec::new();
        };
        super::stmt::file_names(&unit.dwarf, &unit.unit, program.header())
    }
}

/// Units examined for copies of a header's inline function at most.
const MAX_UNITS: usize = 100_000;
