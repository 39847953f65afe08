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
        let mut out = Vec::new();
        for start in units {
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
                    out.push(entry);
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
}
