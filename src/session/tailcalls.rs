//! Unwind rows for frames that tail calls erased (see `SymbolStore::tail_calls`), inserted
//! between a physical frame's rows and its caller's.

use super::*;

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
            let (Some(callee), Some(caller)) = (frames.get(physical), frames.get(physical + 1))
            else {
                continue;
            };
            // Only a return address leads to the caller's call site.
            if !matches!(caller.source, FrameSource::Cfi | FrameSource::FramePointer) {
                continue;
            }
            let tails = self
                .symbols
                .tail_calls(RuntimeAddr(callee.lookup_pc()), RuntimeAddr(caller.pc));
            for t in tails {
                let loc = self.symbols.locations(t.lookup).pop();
                out.push(FrameRow {
                    frame: 0,
                    pc: t.pc.0,
                    sp: caller.sp,
                    symbol: self.symbols.symbolize_return(t.pc, t.lookup),
                    file: loc.as_ref().and_then(|l| l.file.clone()),
                    line: loc.as_ref().and_then(|l| l.line),
                    inlined: false,
                    regs: Vec::new(),
                    source: "tailcall",
                    physical,
                    level: 0,
                    tail_call: true,
                });
            }
        }
        for (n, row) in out.iter_mut().enumerate() {
            row.frame = n;
        }
        out
    }
}
