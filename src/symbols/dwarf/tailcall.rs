//! Frames that tail calls erased, rebuilt from call-site information as gdb does: when a
//! caller's call (a `DW_TAG_call_site` at its return address) went to function T, but the
//! callee running now is B, and T reaches B through tail calls only (call sites marked
//! `DW_AT_call_tail_call`), along exactly one path, each function on that path was a frame
//! that jumped away. Nothing is guessed: an unknown target or two possible paths give no
//! frames.

use gimli::{AttributeValue, UnitOffset};

use super::info::DwarfInfo;
use super::tree::{Die, UnitHandle};
use crate::symbols::addr::FileAddr;

const DW_TAG_GNU_CALL_SITE: gimli::DwTag = gimli::DwTag(0x4109);
const DW_AT_GNU_TAIL_CALL: gimli::DwAt = gimli::DwAt(0x2115);
/// DIEs walked per function at most.
const MAX_DIES: usize = 100_000;
/// Tail calls chained at most, and functions visited by one search at most.
const MAX_CHAIN: usize = 8;
const MAX_VISITED: usize = 256;

/// One frame a tail call left no trace of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TailCallFrame {
    /// Where the function begins.
    pub function: FileAddr,
    /// The frame's pc: the address after its tail-jumping instruction, the equivalent of a
    /// return address (or the jump itself where DWARF gives only that).
    pub pc: FileAddr,
    /// The address inside the jump, to name the frame and find its line by.
    pub lookup: FileAddr,
}

/// A call site: the address after it (or, for a DWARF 5 tail call with no return address,
/// the call instruction itself), and what it calls.
struct Site {
    pc: u64,
    after: bool,
    target: Option<u64>,
    /// The name of a target only declared here (defined in another module).
    declared: Option<String>,
    tail: bool,
}

impl DwarfInfo {
    /// The frames between a caller whose call returns to `return_pc` and the callee now
    /// running in the function that begins at `callee`, innermost first; empty when the
    /// call went straight to the callee or the path is unknown or ambiguous. `entry_of`
    /// finds a function's address by name, for call sites that name a declaration.
    pub fn tail_call_frames(
        &self,
        return_pc: FileAddr,
        callee: FileAddr,
        entry_of: &dyn Fn(&str) -> Option<FileAddr>,
    ) -> Vec<TailCallFrame> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.tail_call_frames_inner(return_pc.0, callee.0, entry_of)
        }))
        .unwrap_or_default()
    }

    fn tail_call_frames_inner(
        &self,
        return_pc: u64,
        callee: u64,
        entry_of: &dyn Fn(&str) -> Option<FileAddr>,
    ) -> Vec<TailCallFrame> {
        let caller_pc = return_pc.saturating_sub(1);
        let Some(sites) = self.call_sites_of_function_at(caller_pc, entry_of) else {
            return Vec::new();
        };
        let Some(start) = sites
            .iter()
            .find(|s| s.after && s.pc == return_pc && !s.tail)
            .and_then(|s| s.target)
        else {
            return Vec::new();
        };
        self.tail_path(start, callee, entry_of)
    }

    /// The function a caller's call returning to `return_pc` called, by name, when this
    /// module only declares it (a call through the PLT into a library): where a chain of
    /// tail calls in that other module begins.
    pub fn declared_call_target(&self, return_pc: FileAddr) -> Option<String> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let none = |_: &str| None;
            let sites = self.call_sites_of_function_at(return_pc.0.saturating_sub(1), &none)?;
            sites
                .into_iter()
                .find(|s| s.after && s.pc == return_pc.0 && !s.tail && s.target.is_none())?
                .declared
        }))
        .ok()
        .flatten()
    }

    /// The frames of the tail calls leading from the function that begins at `start` to
    /// the one that begins at `callee`, innermost first: empty unless exactly one path.
    pub fn tail_calls_between(
        &self,
        start: FileAddr,
        callee: FileAddr,
        entry_of: &dyn Fn(&str) -> Option<FileAddr>,
    ) -> Vec<TailCallFrame> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.tail_path(start.0, callee.0, entry_of)
        }))
        .unwrap_or_default()
    }

    fn tail_path(
        &self,
        start: u64,
        callee: u64,
        entry_of: &dyn Fn(&str) -> Option<FileAddr>,
    ) -> Vec<TailCallFrame> {
        if start == callee {
            return Vec::new();
        }
        // Every path from `start` to `callee` over tail calls, as (function, site) steps.
        type Path = Vec<(u64, (u64, bool))>;
        let mut paths: Vec<Path> = Vec::new();
        let mut visited = 0usize;
        let mut stack: Vec<(u64, Path)> = vec![(start, Vec::new())];
        while let Some((function, path)) = stack.pop() {
            visited += 1;
            if visited > MAX_VISITED || paths.len() > 1 {
                return Vec::new();
            }
            if path.len() >= MAX_CHAIN || path.iter().any(|(f, _)| *f == function) {
                continue;
            }
            let Some(sites) = self.call_sites_of_function_at(function, entry_of) else {
                continue;
            };
            for site in sites.iter().filter(|s| s.tail) {
                let Some(target) = site.target else { continue };
                let mut next = path.clone();
                next.push((function, (site.pc, site.after)));
                if target == callee {
                    paths.push(next);
                } else {
                    stack.push((target, next));
                }
            }
        }
        match paths.as_slice() {
            // The path runs caller-side first; frames are listed innermost first.
            [one] => one
                .iter()
                .rev()
                .map(|&(function, (pc, after))| TailCallFrame {
                    function: FileAddr(function),
                    pc: FileAddr(pc),
                    lookup: FileAddr(if after { pc.saturating_sub(1) } else { pc }),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The call sites of the function whose code holds `pc`.
    fn call_sites_of_function_at(
        &self,
        pc: u64,
        entry_of: &dyn Fn(&str) -> Option<FileAddr>,
    ) -> Option<Vec<Site>> {
        let unit = self.unit_for_pc(pc)?;
        let function = self.tree.function_at(&unit, pc)?;
        let mut cursor = unit
            .unit
            .entries_at_offset(UnitOffset(function.checked_sub(unit.start())?))
            .ok()?;
        let top = cursor.next_dfs().ok()??.depth();
        let mut out = Vec::new();
        let mut seen = 0;
        while let Ok(Some(entry)) = cursor.next_dfs() {
            seen += 1;
            if entry.depth() <= top || seen > MAX_DIES {
                break;
            }
            let tag = entry.tag();
            if tag != gimli::DW_TAG_call_site && tag != DW_TAG_GNU_CALL_SITE {
                continue;
            }
            let after = address(&unit, entry, gimli::DW_AT_call_return_pc)
                .or_else(|| address(&unit, entry, gimli::DW_AT_low_pc));
            let (pc, after) = match after {
                Some(a) => (a, true),
                None => match address(&unit, entry, gimli::DW_AT_call_pc) {
                    Some(a) => (a, false),
                    None => continue,
                },
            };
            let tail = unit.flag(entry, gimli::DW_AT_call_tail_call)
                || unit.flag(entry, DW_AT_GNU_TAIL_CALL);
            let origin = unit
                .reference(entry, gimli::DW_AT_call_origin)
                .or_else(|| unit.reference(entry, gimli::DW_AT_abstract_origin));
            let target = origin.and_then(|die| self.function_entry(die, entry_of));
            let declared = match (target, origin) {
                (None, Some(die)) => self.declared_name(die),
                _ => None,
            };
            out.push(Site {
                pc,
                after,
                target,
                declared,
                tail,
            });
        }
        Some(out)
    }

    /// Where the function a call site names begins: its own low pc, or (for a declaration
    /// of a function defined elsewhere) the address of its linkage name or name.
    pub(crate) fn function_entry(
        &self,
        die: usize,
        entry_of: &dyn Fn(&str) -> Option<FileAddr>,
    ) -> Option<u64> {
        let (unit, entry) = self.tree.entry(die)?;
        if let Some(low) = address(&unit, &entry, gimli::DW_AT_low_pc) {
            return Some(low);
        }
        // A function in two parts (GCC's `.cold` split: DW_AT_ranges, no low_pc) begins
        // where its entry_pc or first listed range says, not at its lowest address.
        if let Some((begin, _)) = self.tree.function_range(&unit, die) {
            return Some(begin);
        }
        let name = self.declared_name(die)?;
        entry_of(&name).map(|a| a.0)
    }

    /// The linkage name or name of a function DIE.
    pub(crate) fn declared_name(&self, die: usize) -> Option<String> {
        let (unit, entry) = self.tree.entry(die)?;
        unit.string(&entry, gimli::DW_AT_linkage_name)
            .or_else(|| unit.string(&entry, gimli::DW_AT_name))
    }
}

fn address(unit: &UnitHandle, die: &Die, at: gimli::DwAt) -> Option<u64> {
    match die.attr_value(at)? {
        AttributeValue::Addr(a) => Some(a),
        v => unit.unit_ref().attr_address(v).ok().flatten(),
    }
}
