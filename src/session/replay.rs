//! Moving the process along its recording. Going back a step writes the old bytes of its
//! stores and the old values of its registers into the process; replaying one forward writes
//! the new ones (nothing is executed again). So in the past every reader (`state`, typed
//! values, unwinding, `gcore()`) sees the program as it was, as gdb's `record full` shows
//! it. Runs (`cont`, `step`) in the past or backwards stop where a live run would: a
//! breakpoint's address reached, a recorded store into a watched range, and also at the
//! ends of what can be replayed.

use super::recording::Recording;
use super::*;
use crate::history::{StepView, RIP};

/// How often a run along the recording looks at its deadline (steps).
const DEADLINE_EVERY: u64 = 4096;
/// Steps a thread makes in a row while a continue records every thread.
const SLICE: u32 = 256;
/// futex(2): a thread waiting in it waits for another thread.
const SYS_FUTEX: u64 = 202;

/// What a run along the recording came to.
pub(super) enum Replayed {
    Stop(Stop),
    /// A recorded store into a watched range: the stop as it is reported.
    Watch(Box<StopInfo>),
    /// Forward at the end of the log: the present, where the run goes on live.
    Present,
}

/// A step's changes in one direction, copied out of the log to be written.
struct Change {
    tid: Tid,
    memory: Vec<(u64, Vec<u8>, Vec<u8>)>,
    /// `(register, old XOR new)`: applied the same either way.
    regs: Vec<(usize, u64)>,
    /// The value rip takes, when the log keeps it implicitly.
    rip: Option<u64>,
    fp: Vec<(u32, [u8; 16])>,
    /// Memory the step unmapped: mapped again going back, unmapped again forward.
    unmapped: Vec<crate::history::Unmapped>,
    forward: bool,
}

impl Session {
    /// Runs go backwards (`true`) or forwards along time.
    pub fn set_reverse(&mut self, on: bool) -> Result<()> {
        if on {
            self.movable()?;
        }
        self.timeline.reverse = on;
        self.timeline.reverse_until = None;
        self.forget_told();
        Ok(())
    }

    /// The backwards run ends once thread `tid`'s stack pointer is at least `sp`.
    pub fn set_reverse_until(&mut self, tid: Tid, sp: u64) {
        self.timeline.reverse_until = Some((tid, sp));
    }

    /// Runs go along the recording instead of live: backwards, or forwards from the past.
    pub(super) fn along_recording(&self) -> bool {
        self.timeline.reverse
            || self
                .timeline
                .recording
                .as_ref()
                .is_some_and(Recording::in_past)
    }

    /// The recording, if the process can be moved along it.
    fn movable(&self) -> Result<&Recording> {
        let rec = self.timeline.recording.as_ref().ok_or_else(|| {
            SessionError::Invalid("no recording: record.start() records from here on".into())
        })?;
        if let Some(why) = &rec.stale {
            return Err(SessionError::Invalid(format!(
                "the recording cannot be moved along: {why} (history.* still reads it)"
            )));
        }
        if self.config.read_only {
            return Err(SessionError::Invalid(
                "read-only session: cannot move the program in time (it writes the past into the process)".into(),
            ));
        }
        Ok(rec)
    }

    /// Back to the present before the program is let go: run on from the past, it would
    /// meet a kernel that already did what the recording holds (files read, time passed).
    pub(super) fn return_to_present(&mut self) -> Result<()> {
        while self
            .timeline
            .recording
            .as_ref()
            .is_some_and(Recording::in_past)
        {
            self.redo()?;
        }
        if let Some(rec) = &mut self.timeline.recording {
            rec.told.clear();
        }
        self.timeline.reverse = false;
        Ok(())
    }

    /// Where along the recording the process is, when in the past: (position, end).
    pub(super) fn replay_position(&self) -> Option<(u64, u64)> {
        let rec = self.timeline.recording.as_ref()?;
        rec.in_past().then(|| (rec.at, rec.log.end()))
    }

    /// One step along the recording in the run's direction.
    pub(super) fn replay_step(&mut self) -> Result<Stop> {
        self.movable()?;
        self.at_stop.snapshot.rotate();
        // Nothing executed: no instruction for `e.executed`.
        self.at_stop.stepped_from = None;
        let moved = if self.timeline.reverse {
            match self.undo()? {
                Ok(tid) => tid,
                Err(why) => return self.history_end(why),
            }
        } else {
            self.redo()?
        };
        let tid = match moved {
            Some(tid) => tid,
            None => self.targets.live()?.selected(),
        };
        Ok(Stop::Step { tid })
    }

    /// A run along the recording, to the next stop in its direction.
    pub(super) fn replay_cont(&mut self, deadline: Instant) -> Result<Replayed> {
        self.movable()?;
        self.at_stop.snapshot.rotate();
        self.forget_told();
        let mut n = 0u64;
        loop {
            n += 1;
            if n.is_multiple_of(DEADLINE_EVERY) && Instant::now() >= deadline {
                let tid = self.targets.live()?.selected();
                return Ok(Replayed::Stop(Stop::Timeout { tid }));
            }
            let Some(rec) = &self.timeline.recording else {
                return Ok(Replayed::Present);
            };
            let reverse = self.timeline.reverse;
            if !reverse && !rec.in_past() {
                return Ok(Replayed::Present);
            }
            let k = if reverse {
                rec.at.wrapping_sub(1)
            } else {
                rec.at
            };
            let watched = self.watch_in_step(k);
            // A step that left rip where it was (a `rep` element) arrives nowhere.
            let stayed = self
                .timeline
                .recording
                .as_ref()
                .and_then(|r| r.log.step(k))
                .is_some_and(|s| stays(&s));
            let moved = if reverse {
                match self.undo()? {
                    Ok(tid) => tid,
                    Err(why) => return self.history_end(why).map(Replayed::Stop),
                }
            } else {
                self.redo()?
            };
            if let Some(id) = watched {
                let tid = match moved {
                    Some(tid) => tid,
                    None => self.targets.live()?.selected(),
                };
                return Ok(Replayed::Watch(Box::new(self.replayed_watch(k, id, tid)?)));
            }
            // An ended thread's step moves no thread: nothing to stop at.
            let Some(tid) = moved else {
                continue;
            };
            let until = self
                .timeline
                .reverse_until
                .filter(|(t, _)| reverse && *t == tid);
            let process = self.targets.live()?;
            if let Some((_, sp)) = until {
                if process.regs(tid)?.rsp >= sp {
                    return Ok(Replayed::Stop(Stop::Step { tid }));
                }
            }
            let pc = process.pc(tid)?;
            let own = [process.rendezvous(), process.sigaction_site()];
            if !stayed && process.site_is_hardware(pc).is_some() && !own.contains(&Some(pc)) {
                return Ok(Replayed::Stop(Stop::Breakpoint { tid, addr: pc }));
            }
        }
    }

    /// A run going back reached what it cannot pass: a stop that says why.
    fn history_end(&mut self, why: String) -> Result<Stop> {
        self.at_stop.carried_notes.push(why);
        let tid = self.targets.live()?.selected();
        Ok(Stop::HistoryEnd { tid })
    }

    /// A continue while recording: recorded steps to the next event (the backend's own
    /// stops, a breakpoint's address reached, the limit, the deadline). Every thread runs,
    /// one instruction at a time: each takes turns of [`SLICE`] steps, and one whose system
    /// call blocks gives its turn up until another thread made progress; when every thread
    /// is blocked, the one most likely waiting for time or input rather than for another
    /// thread (not in a futex wait) waits as long as the run may.
    pub(super) fn recorded_cont(&mut self, deadline: Instant) -> Result<Stop> {
        let mut blocked: Vec<(Tid, u64)> = Vec::new();
        let mut turn = 0u32;
        let mut n = 0u64;
        let out = (|| loop {
            let process = self.targets.live()?;
            let shared = process.thread_count() > 1;
            let mut patient = false;
            if shared && turn >= SLICE {
                let tids = process.thread_ids();
                let current = process.selected();
                let waiting = |t: &Tid| blocked.iter().any(|(b, _)| b == t);
                let after = tids.iter().position(|t| *t == current).map_or(0, |i| i + 1);
                let next = tids[after..]
                    .iter()
                    .chain(&tids[..after])
                    .find(|t| !waiting(t))
                    .copied();
                let next = next.unwrap_or_else(|| {
                    patient = true;
                    blocked
                        .iter()
                        .find(|(t, nr)| *nr != SYS_FUTEX && tids.contains(t))
                        .or(blocked.iter().find(|(t, _)| tids.contains(t)))
                        .map_or(tids[0], |(t, _)| *t)
                });
                process.select(next);
                turn = 0;
            }
            if let Some(rec) = &mut self.timeline.recording {
                rec.shared = shared;
                rec.patient = patient;
            }
            let from = {
                let process = self.targets.live()?;
                let t = process.selected();
                process.pc(t).ok()
            };
            let stop = self.recorded_step(deadline)?;
            if let Some(b) = self.timeline.recording.as_ref().and_then(|r| r.blocked) {
                blocked.retain(|(t, _)| *t != b.0);
                blocked.push(b);
                turn = SLICE;
                continue;
            }
            blocked.clear();
            turn += 1;
            n += 1;
            let tid = match stop {
                Stop::Step { tid } => tid,
                // Threads come and go unreported unless listened for, as in a live run.
                Stop::ThreadStart { .. } | Stop::ThreadExit { .. }
                    if !self.signals.thread_events =>
                {
                    // The next turn is another thread's (this one may be gone).
                    turn = SLICE;
                    continue;
                }
                _ => return Ok(stop),
            };
            if !self.recording_live() {
                // The limit: the run ends with a note saying so.
                return Ok(stop);
            }
            let process = self.targets.live()?;
            let pc = process.pc(tid)?;
            // scry's own sites (the loader's, libc's sigaction) the step itself handled.
            let own = [process.rendezvous(), process.sigaction_site()];
            // Arrived there: a `rep` instruction's elements stay at its address.
            let arrived = from != Some(pc);
            if arrived && process.site_is_hardware(pc).is_some() && !own.contains(&Some(pc)) {
                return Ok(Stop::Breakpoint { tid, addr: pc });
            }
            if n.is_multiple_of(DEADLINE_EVERY) && Instant::now() >= deadline {
                return Ok(Stop::Timeout { tid });
            }
        })();
        if let Some(rec) = &mut self.timeline.recording {
            rec.shared = false;
            rec.patient = false;
        }
        out
    }

    /// Moves the process to position `k` of the recording (before step `k` ran; the end is
    /// the present).
    pub fn goto(&mut self, k: u64) -> Result<StopInfo> {
        let rec = self.movable()?;
        let (first, end, at) = (rec.log.first(), rec.log.end(), rec.at);
        if k < first || k > end {
            return Err(SessionError::Invalid(format!(
                "no step {k} in the recording: it holds steps {first} to {end} (the present)"
            )));
        }
        if k < at {
            if let Some((b, why)) = rec.log.barrier_in(k, at) {
                return Err(SessionError::Invalid(format!(
                    "cannot go back past step {b}: {why}; goto({}) is as far back as it goes",
                    b + 1
                )));
            }
        }
        self.at_stop.snapshot.rotate();
        self.forget_told();
        let mut tid = self.targets.live()?.selected();
        while self.timeline.recording.as_ref().is_some_and(|r| r.at > k) {
            match self.undo()? {
                Ok(t) => tid = t.unwrap_or(tid),
                Err(why) => {
                    self.at_stop.carried_notes.push(why);
                    break;
                }
            }
        }
        while self.timeline.recording.as_ref().is_some_and(|r| r.at < k) {
            tid = self.redo()?.unwrap_or(tid);
        }
        let mut info = self.book_stop(Stop::Step { tid })?;
        self.describe(&mut info);
        Ok(info)
    }

    /// Takes back the step before the position: `Err(why)` when it cannot be.
    fn undo(&mut self) -> Result<std::result::Result<Option<Tid>, String>> {
        let Some(rec) = &self.timeline.recording else {
            return Ok(Err("no recording".into()));
        };
        let first = rec.log.first();
        if rec.at <= first {
            return Ok(Err(if rec.log.dropped() > 0 {
                format!(
                    "the start of what the ring recording keeps (step {first}; older ones were dropped)"
                )
            } else {
                "the start of the recording".to_string()
            }));
        }
        let k = rec.at - 1;
        if let Some((_, why)) = rec.log.barrier_in(k, k + 1) {
            return Ok(Err(format!(
                "step {k} cannot be taken back: {why} (the recording goes back no further)"
            )));
        }
        let Some(change) = rec.log.step(k).map(|s| change_of(&s, false)) else {
            return Ok(Err("the start of the recording".into()));
        };
        let alive = match self.apply(&change) {
            Ok(alive) => alive,
            Err(e) => return Ok(Err(format!("step {k} cannot be taken back: {e}"))),
        };
        let created = self
            .timeline
            .recording
            .as_ref()
            .and_then(|r| r.created.get(&k).copied());
        if let Some(rec) = &mut self.timeline.recording {
            rec.at = k;
        }
        if let Some(child) = created.filter(|c| self.thread_alive(*c)) {
            self.tell_once(
                child,
                format!("thread {child} did not exist before step {k} (it was made there): it is shown stopped where it begins"),
            );
        }
        Ok(Ok(self.moved(change.tid, alive)))
    }

    /// Whether `tid` is a thread of the process now.
    fn thread_alive(&mut self, tid: Tid) -> bool {
        self.targets.live().is_ok_and(|p| p.regs(tid).is_ok())
    }

    /// A new run along the recording says its notes anew.
    fn forget_told(&mut self) {
        if let Some(rec) = &mut self.timeline.recording {
            rec.told.clear();
        }
    }

    /// A note said once a run (per thread) while moving along the recording.
    fn tell_once(&mut self, tid: Tid, note: String) {
        let Some(rec) = &mut self.timeline.recording else {
            return;
        };
        if !rec.told.contains(&tid) {
            rec.told.push(tid);
            self.at_stop.carried_notes.push(note);
        }
    }

    /// The thread a step along the recording moved: `Some` while it lives, `None` for one
    /// that has ended (whose writes were taken back or made, but which cannot be shown).
    fn moved(&mut self, tid: Tid, alive: bool) -> Option<Tid> {
        if alive {
            return Some(tid);
        }
        self.tell_once(
            tid,
            format!("thread {tid} has ended: its writes are taken back and made again, but it is not shown"),
        );
        None
    }

    /// Replays the step at the position.
    fn redo(&mut self) -> Result<Option<Tid>> {
        let rec = self
            .timeline
            .recording
            .as_ref()
            .ok_or_else(|| SessionError::Invalid("no recording".into()))?;
        let k = rec.at;
        let change = rec
            .log
            .step(k)
            .map(|s| change_of(&s, true))
            .ok_or_else(|| SessionError::Invalid(format!("no step {k} in the recording")))?;
        let alive = self.apply(&change)?;
        if let Some(rec) = &mut self.timeline.recording {
            rec.at = k + 1;
        }
        Ok(self.moved(change.tid, alive))
    }

    /// Writes one step's change into the process: memory first (a write that fails takes
    /// back the ones before it, so the process is left as it was), then registers.
    fn apply(&mut self, change: &Change) -> Result<bool> {
        if !change.unmapped.is_empty() {
            self.loader.ran_since_maps = true;
        }
        let process = self.targets.live()?;
        let alive = process.regs(change.tid).is_ok();
        apply_memory(process, change)?;
        if !alive {
            // A thread that has ended: only its writes to memory can be taken back.
            return Ok(false);
        }
        if !change.regs.is_empty() || change.rip.is_some() {
            let mut regs = process.regs(change.tid)?;
            for (i, x) in &change.regs {
                let v = regs::get_register(&regs, *i) ^ x;
                regs::set_register(&mut regs, *i, v);
            }
            if let Some(rip) = change.rip {
                regs.rip = rip;
            }
            process.set_regs_read_back(change.tid, &regs)?;
        }
        if !change.fp.is_empty() {
            let mut fp = process.fp_regs(change.tid)?;
            for (at, bytes) in &change.fp {
                fp.patch(*at as usize, bytes);
            }
            process.set_fp_regs(change.tid, &fp)?;
        }
        if process.selected() != change.tid {
            process.select(change.tid);
        }
        Ok(true)
    }

    /// The watchpoint a recorded step stores into, if any (x86 cannot tell loads, so only
    /// writes stop a run along the recording).
    fn watch_in_step(&self, k: u64) -> Option<u32> {
        let step = self.timeline.recording.as_ref()?.log.step(k)?;
        self.points
            .watchpoints
            .list()
            .iter()
            .filter(|w| w.armed && w.kind != WatchKind::Read)
            .find(|w| step.stores_into(w.addr, w.len))
            .map(|w| w.id)
    }

    /// The stop of a run along the recording at recorded step `k`, which wrote watchpoint
    /// `id`'s bytes: forward the process is just after it, backwards just before it.
    fn replayed_watch(&mut self, k: u64, id: u32, tid: Tid) -> Result<StopInfo> {
        let Some(w) = self
            .points
            .watchpoints
            .list()
            .iter()
            .find(|w| w.id == id)
            .cloned()
        else {
            return self.book_stop(Stop::Step { tid });
        };
        let now = self.read_memory(w.addr, w.len as usize)?;
        let mut other = now.clone();
        let reverse = self.timeline.reverse;
        let pc = match self.timeline.recording.as_ref().and_then(|r| r.log.step(k)) {
            Some(step) => {
                for s in step.stores() {
                    let bytes = if reverse { s.new } else { s.old };
                    overlay(&mut other, w.addr, s.addr, bytes);
                }
                step.pc
            }
            None => return self.book_stop(Stop::Step { tid }),
        };
        let (old, new) = if reverse {
            (now.clone(), other)
        } else {
            (other, now.clone())
        };
        if let Some(live) = self
            .points
            .watchpoints
            .list_mut()
            .iter_mut()
            .find(|x| x.id == id)
        {
            live.last = now;
            live.hits += 1;
        }
        let mut report = WatchReport {
            id,
            name: w.shown_name(),
            is_write: true,
            addr: w.addr,
            len: w.len,
            old,
            new,
            insn_addr: Some(pc),
            culprit_searched: true,
            ..WatchReport::default()
        };
        report.insn_text = self
            .disasm(pc, 1)
            .ok()
            .and_then(|i| i.into_iter().next())
            .map(|i| i.text);
        report.insn_symbol = self.symbolize(pc);
        report.insn_source = self.source_position(pc);
        let mut info = self.book_stop(Stop::Step { tid })?;
        info.kind = StopKind::Watchpoint(report);
        if reverse {
            info.notes.push(format!(
                "going back: stopped before the write (step {k}); step(1) makes it"
            ));
        }
        Ok(info)
    }
}

/// A step's change to memory and mappings, all or nothing: what a failure leaves half done
/// is taken back, so the process stays where it was along the recording. Going back, the
/// memory a munmap took is mapped again before anything is written into it; forward, it is
/// unmapped after.
fn apply_memory(process: &mut dyn Target, change: &Change) -> Result<()> {
    let remap = |process: &mut dyn Target, u: &crate::history::Unmapped| {
        process.restore_mapping(u.addr, u.len, u.prot, u.data_at, &u.data)
    };
    let mut mapped: Vec<&crate::history::Unmapped> = Vec::new();
    let unmap_again = |process: &mut dyn Target, mapped: &[&crate::history::Unmapped]| {
        for m in mapped.iter().rev() {
            let _ = process.unmap(m.addr, m.len);
        }
    };
    if !change.forward {
        for u in change.unmapped.iter().rev() {
            if let Err(e) = remap(process, u) {
                unmap_again(process, &mapped);
                return Err(SessionError::Invalid(format!(
                    "the memory at {:#x} that munmap took cannot be given back ({e})",
                    u.addr
                )));
            }
            mapped.push(u);
        }
    }
    let undo_memory = |process: &mut dyn Target, upto: usize| {
        for (addr, _, undo) in change.memory[..upto].iter().rev() {
            let _ = process.write_memory(*addr, undo);
        }
    };
    for (i, (addr, bytes, _)) in change.memory.iter().enumerate() {
        if let Err(e) = process.write_memory(*addr, bytes) {
            undo_memory(process, i);
            unmap_again(process, &mapped);
            return Err(SessionError::Invalid(format!(
                "memory at {addr:#x} cannot be written back ({e})"
            )));
        }
    }
    if change.forward {
        for (i, u) in change.unmapped.iter().enumerate() {
            if let Err(e) = process.unmap(u.addr, u.len) {
                for done in change.unmapped[..i].iter().rev() {
                    let _ = remap(process, done);
                }
                undo_memory(process, change.memory.len());
                return Err(SessionError::Invalid(format!(
                    "the memory at {:#x} cannot be unmapped again ({e})",
                    u.addr
                )));
            }
        }
    }
    Ok(())
}

/// Whether a recorded step left rip where it was (a `rep` element).
fn stays(step: &StepView<'_>) -> bool {
    match step.next_pc {
        Some(next) => next == step.pc,
        None => step
            .reg_index
            .iter()
            .zip(step.reg_xor)
            .any(|(i, x)| *i == RIP && *x == 0),
    }
}

/// One direction of a recorded step: forward its new bytes and values, back its old ones.
fn change_of(step: &StepView<'_>, forward: bool) -> Change {
    let mut memory: Vec<(u64, Vec<u8>, Vec<u8>)> = step
        .stores()
        .map(|s| {
            let (to, from) = if forward {
                (s.new, s.old)
            } else {
                (s.old, s.new)
            };
            (s.addr, to.to_vec(), from.to_vec())
        })
        .collect();
    if !forward {
        // Stores of one step that overlap are taken back last first.
        memory.reverse();
    }
    Change {
        tid: step.tid,
        memory,
        regs: step
            .reg_index
            .iter()
            .zip(step.reg_xor)
            .filter(|(i, _)| forward || **i != RIP)
            .map(|(i, x)| (usize::from(*i), *x))
            .collect(),
        // Back, rip is the step's own pc; forward, where it went.
        rip: if forward { step.next_pc } else { Some(step.pc) },
        fp: step
            .fp()
            .map(|(at, old, new)| (at, if forward { new } else { old }))
            .collect(),
        unmapped: step.unmapped().cloned().collect(),
        forward,
    }
}

/// Copies the part of a store `bytes` at `at` that falls in `[base, base + out.len())`.
pub(super) fn overlay(out: &mut [u8], base: u64, at: u64, bytes: &[u8]) {
    for (i, b) in bytes.iter().enumerate() {
        let a = at + i as u64;
        if a >= base && a < base + out.len() as u64 {
            out[(a - base) as usize] = *b;
        }
    }
}
