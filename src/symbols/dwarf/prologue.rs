//! Where a function's body begins: the first address after its prologue, which is where a
//! breakpoint on the function stops (as in gdb and lldb) so the arguments are in their
//! declared places. Decided from the line table and the code:
//!
//! 1. a row marked `prologue_end` (LLVM: clang, rustc) gives the address;
//! 2. else a frame-pointer prologue (`[endbr64] push rbp; mov rbp, rsp`) is stepped over and
//!    the line-table row it is in is finished (GCC -O0 stores the arguments in that row);
//! 3. else (optimized code, no frame pointer) the function's first byte: there the location
//!    lists describe the arguments already.

use gimli::UnitOffset;

use super::tree::{InfoTree, UnitHandle};

/// Line rows examined per function at most.
const MAX_ROWS: usize = 100_000;

const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
const PUSH_RBP: u8 = 0x55;
const MOV_RBP_RSP: [[u8; 3]; 2] = [[0x48, 0x89, 0xe5], [0x48, 0x8b, 0xec]];

impl InfoTree {
    /// The (low, high) code range of the function whose DIE is at `function`.
    pub(crate) fn function_range(&self, unit: &UnitHandle, function: usize) -> Option<(u64, u64)> {
        let die = unit
            .unit
            .entry(UnitOffset(function.checked_sub(unit.start())?))
            .ok()?;
        let mut ranges = unit.unit_ref().die_ranges(&die).ok()?;
        let mut best: Option<(u64, u64)> = None;
        let mut all = Vec::new();
        while let Ok(Some(r)) = ranges.next() {
            // GCC lists empty ranges (begin == end) where an inlined call starts at a view of
            // an address whose instruction is not its own: no code there.
            if r.begin < r.end {
                // The entry is the first range (a cold part split off lies elsewhere but the
                // entry is where DW_AT_low_pc or the first range says).
                best.get_or_insert((r.begin, r.end));
                all.push((r.begin, r.end));
            }
            if all.len() > 64 {
                break;
            }
        }
        // DW_AT_entry_pc where it is code of the block; an entry_pc outside every range
        // (GCC's `push rbx` at 0x1170 before an inlined call whose ranges begin at 0x1171)
        // would stop before the call began, in its caller: the first range then, as gdb.
        let entry = match die.attr_value(gimli::DW_AT_entry_pc) {
            Some(gimli::AttributeValue::Addr(a)) if all.iter().any(|&(b, e)| b <= a && a < e) => {
                Some(a)
            }
            _ => None,
        };
        best.map(|(lo, hi)| (entry.unwrap_or(lo), hi))
    }

    /// Where the DIE's first non-empty address range begins, in the DIE's own order: gdb
    /// 13's entry of an inlined block (`block::entry_pc`), which reads no DW_AT_entry_pc.
    pub(crate) fn first_range_start(&self, unit: &UnitHandle, die: usize) -> Option<u64> {
        let entry = die
            .checked_sub(unit.start())
            .and_then(|off| unit.unit.entry(UnitOffset(off)).ok())?;
        let mut ranges = unit.unit_ref().die_ranges(&entry).ok()?;
        for _ in 0..64 {
            match ranges.next() {
                Ok(Some(r)) if r.begin < r.end => return Some(r.begin),
                Ok(Some(_)) => continue,
                _ => return None,
            }
        }
        None
    }

    /// The end of the DIE's highest address range (gdb's BLOCK_END).
    pub(crate) fn block_end(&self, unit: &UnitHandle, die: usize) -> Option<u64> {
        let entry = die
            .checked_sub(unit.start())
            .and_then(|off| unit.unit.entry(UnitOffset(off)).ok())?;
        let mut ranges = unit.unit_ref().die_ranges(&entry).ok()?;
        let mut end = None;
        let mut seen = 0;
        while let Ok(Some(r)) = ranges.next() {
            if r.begin < r.end {
                end = end.max(Some(r.end));
            }
            seen += 1;
            if seen > 64 {
                break;
            }
        }
        end
    }

    /// Whether one of the DIE's address ranges (a non-contiguous block's second part, say)
    /// begins at `pc`.
    pub(crate) fn range_begins_at(&self, unit: &UnitHandle, die: usize, pc: u64) -> bool {
        let Some(entry) = die
            .checked_sub(unit.start())
            .and_then(|off| unit.unit.entry(UnitOffset(off)).ok())
        else {
            return false;
        };
        let Ok(mut ranges) = unit.unit_ref().die_ranges(&entry) else {
            return false;
        };
        let mut seen = 0;
        while let Ok(Some(r)) = ranges.next() {
            if r.begin == pc && r.begin < r.end {
                return true;
            }
            seen += 1;
            if seen > 64 {
                break;
            }
        }
        false
    }

    /// The first address of the function body (after the prologue). `code` holds the
    /// function's first bytes (at least 8 when the function is that long).
    pub(crate) fn body_start(
        &self,
        unit: &UnitHandle,
        function: usize,
        code: &[u8],
    ) -> Option<u64> {
        let (low, high) = self.function_range(unit, function)?;
        let rows = self.rows_in(unit, low, high);
        if let Some(&(addr, _, _)) = rows.iter().find(|(_, _, end)| *end) {
            return Some(addr);
        }
        let mut at = 0usize;
        if code.starts_with(&ENDBR64) {
            at += 4;
        }
        let framed = code.get(at) == Some(&PUSH_RBP)
            && MOV_RBP_RSP
                .iter()
                .any(|m| code.get(at + 1..at + 4) == Some(&m[..]));
        if !framed {
            return Some(low);
        }
        let after = low + at as u64 + 4;
        // Finish the row the frame setup is in: its end is where the next row starts.
        let next = rows
            .iter()
            .map(|(a, _, _)| *a)
            .filter(|&a| a >= after && a < high)
            .min();
        let starts_row = rows.iter().any(|(a, _, _)| *a == after);
        Some(if starts_row {
            after
        } else {
            next.unwrap_or(after)
        })
    }

    /// Line-table rows inside `low..high`: (address, line, prologue_end), by address.
    fn rows_in(&self, unit: &UnitHandle, low: u64, high: u64) -> Vec<(u64, u64, bool)> {
        let Some(program) = unit.unit.line_program.clone() else {
            return Vec::new();
        };
        let mut rows = program.rows();
        let mut out = Vec::new();
        let mut seen = 0;
        while let Ok(Some((_, row))) = rows.next_row() {
            seen += 1;
            if seen > MAX_ROWS * 20 {
                break;
            }
            let a = row.address();
            if row.end_sequence() || a < low || a >= high {
                continue;
            }
            out.push((a, row.line().map_or(0, |l| l.get()), row.prologue_end()));
            if out.len() >= MAX_ROWS {
                break;
            }
        }
        out.sort_by_key(|r| r.0);
        out
    }
}
