//! Unwind rows for frames that tail calls erased (see `SymbolStore::tail_calls`), inserted
//! between a physical frame's rows and its caller's, and their variables.

use super::error::guarded;
use super::frame_view::{tail_frames, EntryMemo, FrameVarRow, FrameView};
use super::inspection::Inspection;
use super::*;
use crate::symbols::dwarf::{Gone, Place};

/// The x86-64 psABI's red zone: a leaf function's data may sit this far below its sp.
const RED_ZONE: u64 = 128;

impl Session {
    /// `rows` with the rebuilt tail-call frames inserted and every row renumbered.
    pub(super) fn with_tail_calls(
        &mut self,
        rows: Vec<FrameRow>,
        frames: &[unwind::Frame],
    ) -> Vec<FrameRow> {
        let mut out: Vec<FrameRow> = Vec::with_capacity(rows.len());
        for row in rows {
            let physical = row.physical;
            // A physical frame's rows run innermost inlined call first; level 0 (the
            // function itself) is its last.
            let ends_frame = row.level == 0;
            out.push(row);
            if !ends_frame {
                continue;
            }
            let Some(caller) = frames.get(physical + 1) else {
                continue;
            };
            for t in tail_frames(&self.symbols, frames, physical) {
                let symbol = self.symbols.symbolize_return(t.pc, t.lookup);
                let mut locations = self.symbols.locations(t.lookup);
                if locations.is_empty() {
                    locations.push(Default::default());
                }
                // The jump may sit in a call inlined into the erased function: those calls
                // are rows of their own, innermost first, as in a physical frame.
                let levels = locations.len();
                for (i, loc) in locations.into_iter().enumerate() {
                    let level = levels - 1 - i;
                    out.push(FrameRow {
                        frame: 0,
                        pc: t.pc.0,
                        sp: caller.sp,
                        symbol: if level > 0 {
                            loc.function.clone()
                        } else {
                            symbol.clone()
                        },
                        file: loc.file,
                        line: loc.line,
                        inlined: level > 0,
                        regs: Vec::new(),
                        source: "tailcall",
                        physical,
                        level,
                        tail_call: true,
                    });
                }
            }
        }
        for (n, row) in out.iter_mut().enumerate() {
            row.frame = n;
        }
        out
    }
}

/// The variables of an erased frame at its tail-jumping instruction, as its location
/// lists place them there: in the callee-saved registers it handed on, in memory
/// outside the stack the callees reused, or as entry values through the call sites
/// (see `FrameView`). Everything else is `<optimized out>`.
pub(super) fn erased_row_vars(
    ins: Inspection<'_>,
    frames: &[unwind::Frame],
    row: &FrameRow,
    memo: &EntryMemo,
) -> Result<Vec<FrameVarRow>> {
    let store = ins.store;
    let erased = tail_frames(store, frames, row.physical);
    let Some(t) = erased.iter().position(|t| t.pc.0 == row.pc) else {
        return Ok(Vec::new());
    };
    let lookup = erased[t].lookup;
    let Some(module) = store.module_at(lookup) else {
        return Ok(Vec::new());
    };
    let file = module.file.clone();
    let Some(dwarf) = file.dwarf() else {
        return Ok(Vec::new());
    };
    let pc_file = module.bias.to_file(lookup);
    let Some(chain) = dwarf.scopes_at(pc_file) else {
        return Ok(Vec::new());
    };
    let view = FrameView {
        frames,
        index: row.physical,
        tail: t + 1,
        memo: Some(memo),
        ..ins.frameless(module)
    };
    // The stack from the innermost frame up to the physical frame's CFA is the callees'
    // now: what the erased frame kept there is overwritten.
    let reused = frames
        .first()
        .map(|f| f.sp.saturating_sub(RED_ZONE))
        .zip(frames.get(row.physical + 1).map(|f| f.sp));
    let level = row.level;
    let vars = guarded(|| {
        dwarf
            .tree
            .frame_vars(&chain, level, pc_file.0, &view, false)
    })?;
    Ok(vars
        .into_iter()
        .map(|mut v| {
            if let (Place::Memory(a), Some((low, high))) = (&v.value.place, reused) {
                if (low..high).contains(a) {
                    v.value.place = Place::Gone(Gone::Unavailable(
                        "its stack was reused after the tail call".into(),
                    ));
                }
            }
            FrameVarRow::of(v, &file)
        })
        .collect())
}
