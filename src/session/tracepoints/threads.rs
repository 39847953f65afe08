//! Threads and probes: a stop never shows a thread inside a trampoline. One stopped at a
//! moved instruction is the program at that instruction's own address; one elsewhere in a
//! trampoline is stepped to its restore point and given the registers the probe saved.

use super::*;

/// `pushfq`, the first thing a trampoline does after skipping the red zone, and the trap
/// flag it would save while single-stepped.
const PUSHFQ: u8 = 0x9c;
const TRAP_FLAG: u64 = 1 << 8;

impl Session {
    /// The stop a trace listener asked for: every thread stopped where it is now.
    pub(crate) fn trace_stop(&mut self, id: u32) -> Result<StopInfo> {
        self.stop_every_thread()?;
        self.leave_probes()?;
        Ok(StopInfo {
            tid: self.selected_tid().ok(),
            pc: self.pc().ok(),
            ..StopInfo::new(StopKind::Trace { id })
        })
    }

    /// Where a moved instruction the trampoline runs at `pc` was in the program, and whether
    /// it is the jump back (whose "original" is the address after the covered bytes).
    fn moved_at(&self, pc: u64) -> Option<(u64, bool)> {
        self.tracing.list.iter().find_map(|t| {
            let p = t.probe.as_ref()?;
            let i = p.moved.iter().position(|(at, _)| *at == pc)?;
            Some((p.moved[i].1, i + 1 == p.moved.len()))
        })
    }

    /// A thread stopped at one of a trampoline's moved instructions (a fault in it, a watch
    /// hit after one) is shown as the program at that instruction's own address: its rip is
    /// set there, so the stop, `state` and unwinding show the program. Inside the covered
    /// bytes that address holds the jump, so the thread goes back to the trampoline before it
    /// runs again (`resume_in_probes`); the jump back's address is plain program code. True
    /// when it was moved.
    pub(in crate::session) fn put_back_in_program(&mut self, tid: Tid) -> Result<bool> {
        if !self.has_probes() {
            return Ok(false);
        }
        let t = self.targets.live()?;
        let Ok(mut regs) = t.regs(tid) else {
            return Ok(false);
        };
        let Some((orig, last)) = self.moved_at(regs.rip) else {
            return Ok(false);
        };
        let in_trampoline = regs.rip;
        regs.rip = orig;
        self.targets.live()?.set_regs_read_back(tid, &regs)?;
        if !last {
            self.tracing.shown_out.push((tid, in_trampoline, orig));
        }
        Ok(true)
    }

    /// Threads shown at a moved instruction's own address go back to where they really are,
    /// in the trampoline, before anything runs: a signal they are about to take, and the
    /// handler's return, then happen there, where the instruction is whole.
    pub(in crate::session) fn resume_in_probes(&mut self) {
        for (tid, in_trampoline, shown) in std::mem::take(&mut self.tracing.shown_out) {
            let Ok(t) = self.targets.live() else { return };
            if let Ok(mut regs) = t.regs(tid) {
                if regs.rip == shown {
                    regs.rip = in_trampoline;
                    let _ = t.set_regs_read_back(tid, &regs);
                }
            }
        }
    }

    /// A thread at a trampoline's `restore` gets the program's registers from the frame the
    /// probe saved, as the pops and popfq would give them, and goes to the first moved
    /// instruction: never single-stepped, popfq would leave the trap flag the program's own.
    fn restore_from_frame(&mut self, tid: Tid, pc: u64) -> Result<bool> {
        let Some(first) = self.tracing.list.iter().find_map(|t| {
            let p = t.probe.as_ref()?;
            (p.restore == pc).then(|| p.moved.first().map(|m| m.0))?
        }) else {
            return Ok(false);
        };
        let t = self.targets.live()?;
        let mut regs = t.regs(tid)?;
        let mut frame = vec![0u8; probe::FRAME_LEN];
        if t.read_memory_partial(regs.rsp, &mut frame) != frame.len() {
            return Ok(false);
        }
        let Some(probe::SavedFrame {
            regs: saved,
            flags,
            rsp,
        }) = probe::saved_frame(&frame, regs.rsp)
        else {
            return Ok(false);
        };
        for (reg, v) in saved {
            if let Some(slot) = super::record::gpr_mut(&mut regs, reg) {
                *slot = v;
            }
        }
        // The program's own flags: a pushfq that scry stepped had its trap flag taken out.
        regs.eflags = flags;
        regs.rsp = rsp;
        regs.rip = first;
        t.set_regs_read_back(tid, &regs)?;
        Ok(true)
    }

    /// Every thread stopped inside a trampoline (but those shown out of it at a stop, see
    /// `put_back_in_program`) is stepped out of it, back into the program's code, so a stop
    /// shows (and unwinds) the program, never a probe: to the probe's restore point, where it
    /// gets the registers the probe saved, then over the moved instructions to the jump back.
    /// The threads go in turns, one step each, the rings read between turns, so one that
    /// waits for room gets it from the others' progress. A thread with a signal to take is
    /// not stepped (it would take it here): it stays, and its trampoline with it.
    pub(in crate::session) fn leave_probes(&mut self) -> Result<()> {
        let codes: Vec<std::ops::Range<u64>> = self
            .tracing
            .list
            .iter()
            .filter_map(|t| t.probe.as_ref().map(|p| p.code..p.code + p.code_len))
            .collect();
        if codes.is_empty() {
            return Ok(());
        }
        let inside = |pc: u64| codes.iter().any(|c| c.contains(&pc));
        let Ok(t) = self.targets.live() else {
            return Ok(());
        };
        let mut left: Vec<Tid> = t.thread_ids();
        for _ in 0..100_000 {
            let mut still = Vec::new();
            for tid in left {
                let t = self.targets.live()?;
                let Some(pc) = t.regs(tid).ok().map(|r| r.rip).filter(|pc| inside(*pc)) else {
                    continue;
                };
                if self.moved_at(pc).is_some_and(|(_, last)| last) {
                    self.put_back_in_program(tid)?;
                    continue;
                }
                if self.restore_from_frame(tid, pc)? {
                    still.push(tid);
                    continue;
                }
                let t = self.targets.live()?;
                let mut op = [0u8];
                t.read_memory_partial(pc, &mut op);
                let Some(host) = t.probes() else {
                    continue;
                };
                if !host.step_in_probe(tid)? {
                    continue;
                }
                if op[0] == PUSHFQ {
                    // Single-stepped, pushfq saves the trap flag the step set, and the
                    // probe's popfq would put it back: the thread would trap once it runs.
                    let sp = t.regs(tid)?.rsp;
                    let mut flags = [0u8; 8];
                    if t.read_memory_partial(sp, &mut flags) == 8 {
                        let v = u64::from_le_bytes(flags) & !TRAP_FLAG;
                        t.write_memory(sp, &v.to_le_bytes())?;
                    }
                }
                still.push(tid);
            }
            if still.is_empty() {
                return Ok(());
            }
            self.drain_traces(false);
            left = still;
        }
        Ok(())
    }
}
