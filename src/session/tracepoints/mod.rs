//! Tracepoints: what the program does at a site, collected without stopping it.
//!
//! The fast way is a probe inside the program (`x86::probe`): a jump at the site into a
//! trampoline that copies what the tracepoint collects into a ring shared with scry, which
//! reads the ring while the program runs (at each of a continue's ticks) and at every stop.
//! Where a jump is not safe (the bytes it would cover are a branch target, cannot be moved,
//! the backend has no probes), the tracepoint is a breakpoint of scry's that collects the
//! same things at each hit and lets the thread go at once (`mode: 'trap'`), said at `set`.
//!
//! What this is not: a filter or a listener. Records go to whoever asks
//! ([`Session::take_trace_records`]); conditions are the script's, run on each record.

mod install;
mod record;
mod threads;

use std::collections::VecDeque;

use super::*;
use crate::os::shared::SharedMem;
use crate::x86::probe;
pub(crate) use record::{probe_cond, RegValue, TraceRecord, Want};
use record::{Clock, Layout};

/// Records in a ring (a power of two): at the default tick of 5 ms, room for 3M records/s
/// before a waiting probe waits.
const SLOTS: u64 = 16_384;
/// At most this much ring memory per tracepoint (it is the program's, charged to its
/// limits): records of more than 1 KiB get fewer slots.
const RING_BYTES: u64 = 16 << 20;
/// How long a continue runs between reads of the rings.
pub(crate) const TICK: Duration = Duration::from_millis(5);
/// At most this many records wait in scry between reads by the script; more are dropped and
/// counted lost (a listener far slower than the program, in `full: 'drop'` mode).
const QUEUE_MAX: usize = 1 << 20;
/// Why a tracepoint set at an exec stop is a trap for a while.
const PROBE_LATER: &str = "no thread can run the system calls putting a probe in takes now (one inside execve at an exec stop, or each in a system call or holding a signal): a probe takes the trap's place at the next library load";
/// A record's size is at most this (collected registers and memory).
const RECORD_MAX: u32 = 64 * 1024;

/// How a tracepoint runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TraceMode {
    /// A probe in the program: it never stops.
    Jump,
    /// A breakpoint of scry's that collects and lets go.
    Trap,
    /// Not in the program: its place is in a library not loaded yet (or the program's
    /// code went, by exec or dlclose), and it is set when a module that has it loads.
    Pending,
}

impl TraceMode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            TraceMode::Jump => "jump",
            TraceMode::Trap => "trap",
            TraceMode::Pending => "pending",
        }
    }
}

/// A probe put into the program.
struct Installed {
    shared: SharedMem,
    ring_addr: u64,
    ring_len: u64,
    code: u64,
    code_len: u64,
    /// Records the ring holds (a power of two).
    slots: u64,
    /// Where the moved instructions run: (in the trampoline, original address).
    moved: Vec<(u64, u64)>,
    /// Where the trampoline starts to restore the program's registers.
    restore: u64,
    /// The next record scry reads.
    tail: u64,
    /// Records reserved and never committed (the thread died inside the probe).
    abandoned: u64,
}

pub(crate) struct Tracepoint {
    pub id: u32,
    pub spec: String,
    /// Where it is in the program; meaningless while `pending`.
    pub addr: u64,
    /// Not in the program (see [`TraceMode::Pending`]).
    pub pending: bool,
    /// The process it is in (while not pending).
    owner: Tid,
    /// A trap only because no thread could run a probe's system calls when it was set (at
    /// an exec stop): a probe takes its place at the next chance (a library load).
    probe_later: bool,
    /// Why the tracepoint is a trap, not a probe.
    pub why_trap: Option<String>,
    layout: Layout,
    wait: bool,
    probe: Option<Installed>,
    /// Hits counted by scry: a trap's, and those of the probes it had in code that went
    /// (exec, dlclose).
    counted: u64,
    /// Records handed to the script, and records lost in scry's queue.
    pub delivered: u64,
    queue_lost: u64,
    /// The `{if}` a probe tests itself, and the hits it turned away in probes gone.
    cond: Option<probe::Cond>,
    filtered_before: u64,
}

impl Tracepoint {
    /// A probe in the program, or scry's breakpoint.
    pub(crate) fn mode(&self) -> TraceMode {
        if self.pending {
            TraceMode::Pending
        } else if self.probe.is_some() {
            TraceMode::Jump
        } else {
            TraceMode::Trap
        }
    }

    pub(crate) fn hits(&self) -> u64 {
        // A probe counts its own hits; scry counts a trap's, and a probe's hits stepped
        // through by the user (which run the program's instruction, not the probe).
        self.counted
            + self
                .probe
                .as_ref()
                .map_or(0, |p| p.shared.load(probe::HITS))
    }

    /// The program's code under it went (exec, dlclose): its probe's counts are kept and it
    /// waits to be set again.
    fn unplace(&mut self) {
        if let Some(p) = self.probe.take() {
            self.counted += p.shared.load(probe::HITS);
            self.filtered_before += p.shared.load(probe::FILTERED);
            // Records never read (the ring went while threads ran) are lost too.
            let unread = p
                .shared
                .load(probe::HEAD)
                .min(p.tail + p.slots)
                .saturating_sub(p.tail);
            self.queue_lost += p.shared.load(probe::LOST) + p.abandoned + unread;
        }
        self.pending = true;
        self.probe_later = false;
        self.why_trap = None;
    }

    /// Its `{if}` is tested in the probe (while it is one; a trap's runs in JS).
    pub(crate) fn compiled(&self) -> bool {
        self.cond.is_some() && self.mode() == TraceMode::Jump
    }

    /// Hits whose record the probe's own condition turned away (no record, no listener).
    pub(crate) fn filtered(&self) -> u64 {
        self.filtered_before
            + self
                .probe
                .as_ref()
                .map_or(0, |p| p.shared.load(probe::FILTERED))
    }

    pub(crate) fn lost(&self) -> u64 {
        self.queue_lost
            + self
                .probe
                .as_ref()
                .map_or(0, |p| p.shared.load(probe::LOST) + p.abandoned)
    }
}

/// Every tracepoint, and the records read from them not yet taken by the script.
#[derive(Default)]
pub(crate) struct Tracing {
    /// The program runs in a pid namespace of its own: its records' thread ids are the
    /// namespace's, mapped to scry's through `tid_map` (inside -> scry's).
    namespaced: bool,
    tid_map: std::collections::HashMap<Tid, Tid>,
    /// A trap hit already counted at a stop shown for a user's breakpoint there.
    counted_at: Option<(Tid, u64)>,
    /// Threads a stop shows at a moved instruction's own address: (thread, where it is in
    /// the trampoline, the address shown), put back before anything runs.
    shown_out: Vec<(Tid, u64, u64)>,
    list: Vec<Tracepoint>,
    next_id: u32,
    queue: VecDeque<TraceRecord>,
    /// Someone takes the records (a `trace` listener): probes write them. Else they count.
    listening: bool,
    clock: Option<Clock>,
}

impl Session {
    /// `tracepoint.set(where, {collect, full})`: a probe at `spec`'s address (a function's
    /// first instruction, a `file:line`, an address), else a trap that collects the same.
    /// The id, the mode, and a note when it is a trap (why).
    pub(crate) fn tracepoint_set(
        &mut self,
        spec: &str,
        collect: &[Want],
        wait: bool,
        cond: Option<probe::Cond>,
    ) -> Result<(u32, TraceMode, Option<String>)> {
        self.check_writable("set a tracepoint")?;
        let layout = Layout::of(collect).map_err(SessionError::Invalid)?;
        let mut tp = Tracepoint {
            id: self.tracing.next_id + 1,
            spec: spec.to_string(),
            addr: 0,
            pending: true,
            owner: 0,
            probe_later: false,
            why_trap: None,
            layout,
            wait,
            probe: None,
            counted: 0,
            delivered: 0,
            queue_lost: 0,
            cond,
            filtered_before: 0,
        };
        let note = match self.resolve(spec) {
            Ok(addr) => {
                self.check_code_address(addr)?;
                self.refuse_second_at(addr, spec)?;
                self.place(&mut tp, addr)?;
                tp.why_trap.as_ref().map(|why| {
                    format!("tracepoint {} at {addr:#x} is a trap (each hit stops the thread for a moment): {why}", tp.id)
                })
            }
            // A library that comes later has it, most likely: it waits, as a breakpoint does.
            Err(e) if e.is_not_loaded() && self.targets.is_live() => {
                let same = |t: &&Tracepoint| t.pending && t.spec == spec;
                if let Some(t) = self.tracing.list.iter().find(same) {
                    return Err(SessionError::Invalid(format!(
                        "tracepoint {} already waits for '{spec}': collect more in one tracepoint",
                        t.id
                    )));
                }
                Some(format!(
                    "tracepoint {} pending: {e}; it is set when a library that has it loads",
                    tp.id
                ))
            }
            Err(e) => return Err(e),
        };
        self.tracing.next_id += 1;
        let (id, mode) = (tp.id, tp.mode());
        self.tracing.list.push(tp);
        self.sync_trace_flags();
        Ok((id, mode, note))
    }

    /// The tracepoints in a process that is no longer the selected one without having been
    /// taken out of it (it ended, or its place was taken after its end): what they wrote
    /// is read, and they wait to be set in the selected one (counts kept). Its memory is
    /// not touched: it is gone.
    fn unplace_elsewhere(&mut self) {
        let here = self.targets.live.as_ref().map(|t| t.process.pid());
        let elsewhere = |t: &Tracepoint| !t.pending && Some(t.owner) != here;
        if !self.tracing.list.iter().any(elsewhere) {
            return;
        }
        self.drain_traces(true);
        for tp in self.tracing.list.iter_mut().filter(|t| elsewhere(t)) {
            tp.unplace();
        }
    }

    /// Whether `t` is in the selected process (not pending, nor left in another).
    pub(super) fn placed_here(&self, t: &Tracepoint) -> bool {
        !t.pending && self.targets.live.as_ref().map(|l| l.process.pid()) == Some(t.owner)
    }

    /// One tracepoint a site: a second's records would interleave with the first's jump.
    fn refuse_second_at(&self, addr: u64, spec: &str) -> Result<()> {
        if self
            .tracing
            .list
            .iter()
            .any(|t| !t.pending && t.addr == addr)
        {
            return Err(SessionError::Invalid(format!(
                "a tracepoint is already at {addr:#x} ({spec}): collect more in one tracepoint"
            )));
        }
        Ok(())
    }

    /// Puts `tp` into the program at `addr`: a probe, else a trap (its reason kept).
    fn place(&mut self, tp: &mut Tracepoint, addr: u64) -> Result<()> {
        self.stop_every_thread()?;
        tp.addr = addr;
        tp.owner = self.targets.live()?.pid();
        let ready = self.probes_can_go_in()?;
        let installed = if ready {
            self.install_probe(tp)
        } else {
            Err(PROBE_LATER.to_string())
        };
        match installed {
            Ok(installed) => tp.probe = Some(installed),
            Err(why) => {
                self.trap_instead(tp, why)?;
                tp.probe_later = !ready;
            }
        }
        tp.pending = false;
        Ok(())
    }

    /// `tp` as a trap at its address: scry's quiet breakpoint, `why` kept.
    fn trap_instead(&mut self, tp: &mut Tracepoint, why: String) -> Result<()> {
        let t = self.targets.live()?;
        t.insert_site(tp.addr)?;
        t.set_quiet_site(tp.addr, true);
        tp.why_trap = Some(why);
        Ok(())
    }

    /// Whether a probe can be put in now (a target without probes: yes, to be refused with
    /// its own reason).
    fn probes_can_go_in(&mut self) -> Result<bool> {
        Ok(self.targets.live()?.probes().is_none_or(|h| h.can_inject()))
    }

    /// A trap set while no probe could go in becomes the probe (its hits go on).
    fn probe_instead_of_trap(&mut self, tp: &mut Tracepoint) -> Result<bool> {
        self.stop_every_thread()?;
        if !self.probes_can_go_in()? {
            return Ok(false);
        }
        let addr = tp.addr;
        let user_site = self.points.breakpoints.is_user_site(addr);
        let t = self.targets.live()?;
        t.set_quiet_site(addr, false);
        if !user_site {
            t.remove_site(addr)?;
        }
        tp.probe_later = false;
        match self.install_probe(tp) {
            Ok(installed) => {
                tp.probe = Some(installed);
                tp.why_trap = None;
                Ok(true)
            }
            Err(why) => {
                self.trap_instead(tp, why)?;
                Ok(false)
            }
        }
    }

    /// Sets every pending tracepoint whose place now resolves (a library loaded, a new
    /// program after exec or spawn), each said in the next stop's notes. Counts go on.
    pub(super) fn arm_pending_tracepoints(&mut self) {
        self.unplace_elsewhere();
        let waits = |t: &Tracepoint| t.pending || t.probe_later;
        if !self.tracing.list.iter().any(waits) || !self.targets.is_live() {
            return;
        }
        for i in 0..self.tracing.list.len() {
            if self.tracing.list[i].probe_later {
                let mut tp = self.tracing.list.remove(i);
                let now = self.probe_instead_of_trap(&mut tp);
                let note = format!("tracepoint {} ({}) is a probe now (jump)", tp.id, tp.spec);
                self.tracing.list.insert(i, tp);
                if matches!(now, Ok(true)) {
                    self.at_stop.carried_notes.push(note);
                }
                continue;
            }
            if !self.tracing.list[i].pending {
                continue;
            }
            let spec = self.tracing.list[i].spec.clone();
            let Ok(addr) = self.resolve(&spec) else {
                continue;
            };
            if self.check_code_address(addr).is_err() || self.refuse_second_at(addr, &spec).is_err()
            {
                continue;
            }
            // Out of the list while it goes in (placing it borrows the session).
            let mut tp = self.tracing.list.remove(i);
            tp.why_trap = None;
            let placed = self.place(&mut tp, addr);
            let note = format!(
                "tracepoint {} ({spec}) set at {addr:#x} ({})",
                tp.id,
                tp.mode().name()
            );
            self.tracing.list.insert(i, tp);
            if placed.is_ok() {
                self.at_stop.carried_notes.push(note);
            }
        }
        self.sync_trace_flags();
    }

    /// `tracepoint.remove(id)`: the site's bytes back as they were. A note when the
    /// trampoline stays mapped (a thread is inside it).
    pub(crate) fn tracepoint_remove(&mut self, id: u32) -> Result<Option<String>> {
        let Some(i) = self.tracing.list.iter().position(|t| t.id == id) else {
            return Err(SessionError::Invalid(format!(
                "no tracepoint {id} (tracepoint.list() shows them)"
            )));
        };
        self.stop_every_thread()?;
        // Nobody inside a trampoline: it can go with the jump.
        self.resume_in_probes();
        self.leave_probes()?;
        self.drain_traces(true);
        let tp = self.tracing.list.remove(i);
        self.take_out(&tp)
    }

    /// Takes a tracepoint out of the program: the jump, then the trampoline and the ring
    /// when no thread is inside the trampoline.
    fn take_out(&mut self, tp: &Tracepoint) -> Result<Option<String>> {
        let Ok(t) = self.targets.live() else {
            return Ok(None);
        };
        if tp.pending {
            return Ok(None);
        }
        let Some(p) = &tp.probe else {
            t.set_quiet_site(tp.addr, false);
            if !self.points.breakpoints.is_user_site(tp.addr) {
                t.remove_site(tp.addr)?;
            }
            return Ok(None);
        };
        // A thread waiting for room must not wait for a reader that is going.
        p.shared.store(probe::FLAGS, probe::FLAG_COUNT_ONLY);
        let Some(host) = t.probes() else {
            return Ok(None);
        };
        host.unpatch_jump(tp.addr)?;
        if host.pc_inside(p.code..p.code + p.code_len) {
            return Ok(Some(format!(
                "tracepoint {}'s trampoline at {:#x} stays mapped: a thread is inside it",
                tp.id, p.code
            )));
        }
        let _ = host.unmap(p.code, p.code_len);
        let _ = host.unmap(p.ring_addr, p.ring_len);
        Ok(None)
    }

    /// Takes every tracepoint out (detach, kill, the end of the session): notes for what
    /// stays.
    pub(super) fn remove_all_tracepoints(&mut self) -> Vec<String> {
        let _ = self.stop_every_thread();
        self.resume_in_probes();
        let _ = self.leave_probes();
        self.drain_traces(true);
        let mut notes = Vec::new();
        for tp in std::mem::take(&mut self.tracing.list) {
            notes.extend(self.take_out_noting(&tp));
        }
        notes
    }

    /// [`Self::take_out`] with what it could not do as a note: the caller goes on with the
    /// others (the user is told a jump may stay in the program).
    fn take_out_noting(&mut self, tp: &Tracepoint) -> Option<String> {
        self.take_out(tp).unwrap_or_else(|e| {
            Some(format!(
                "tracepoint {} ({}) could not be taken out at {:#x}: {e}",
                tp.id, tp.spec, tp.addr
            ))
        })
    }

    /// Takes every tracepoint out of the selected process, which is about to give its place
    /// to another (`process.select`, a stop of a tree run): probes go with the selection,
    /// as breakpoints do, so a held process runs its own code. Each waits, counts kept, and
    /// is set again in the process selected next (where it resolves). Notes for what stays.
    pub(super) fn lift_tracepoints(&mut self) -> Vec<String> {
        if self.tracing.list.iter().all(|t| t.pending) {
            return Vec::new();
        }
        let _ = self.stop_every_thread();
        self.resume_in_probes();
        let _ = self.leave_probes();
        self.drain_traces(true);
        let mut notes = Vec::new();
        for i in 0..self.tracing.list.len() {
            if self.tracing.list[i].pending {
                continue;
            }
            let mut tp = self.tracing.list.remove(i);
            notes.extend(self.take_out_noting(&tp));
            tp.unplace();
            self.tracing.list.insert(i, tp);
        }
        notes
    }

    /// The process is gone or replaced (exec, a new spawn): its probes went with its code.
    /// What they wrote is read first; each tracepoint then waits to be set again where its
    /// place is in the new program (its counts go on).
    pub(super) fn forget_tracepoints(&mut self) -> Option<String> {
        if self.tracing.list.iter().all(|t| t.pending) {
            return None;
        }
        self.drain_traces(true);
        let mut ids = Vec::new();
        for tp in self.tracing.list.iter_mut().filter(|t| !t.pending) {
            ids.push(tp.id.to_string());
            tp.unplace();
        }
        let which = match ids.len() {
            1 => format!("tracepoint {} is", ids[0]),
            _ => format!("tracepoints {} are", ids.join(", ")),
        };
        Some(format!(
            "exec replaced the program: {which} set again where it resolves in the new one (tracepoint.list() says what waits)"
        ))
    }

    /// A library went away with its code: its tracepoints wait for it to load again, said
    /// in the next stop's notes. Their trampolines and rings stay mapped (a page or two
    /// each): other threads may be running, so nothing shows that none is inside.
    pub(super) fn forget_tracepoints_in(&mut self, start: u64, end: u64) {
        let gone = |t: &Tracepoint| !t.pending && (start..end).contains(&t.addr);
        if !self.tracing.list.iter().any(gone) {
            return;
        }
        self.drain_traces(false);
        for i in 0..self.tracing.list.len() {
            if !gone(&self.tracing.list[i]) {
                continue;
            }
            let Ok(t) = self.targets.live() else { break };
            let tp = &mut self.tracing.list[i];
            match &tp.probe {
                Some(p) => {
                    p.shared.store(probe::FLAGS, probe::FLAG_COUNT_ONLY);
                    if let Some(host) = t.probes() {
                        host.forget_jump(tp.addr);
                    }
                }
                None => {
                    t.set_quiet_site(tp.addr, false);
                    t.forget_site(tp.addr);
                }
            }
            tp.unplace();
            let note = format!(
                "tracepoint {} ({}) went with its library's code after {} hits; it is set again when a library that has it loads",
                tp.id,
                tp.spec,
                tp.hits()
            );
            self.at_stop.carried_notes.push(note);
        }
    }

    /// Sets the trap hit counted at the latest stop, giving back the one before (a step from
    /// there is that hit, not a second).
    pub(in crate::session) fn tracing_counted_at(
        &mut self,
        at: Option<(Tid, u64)>,
    ) -> Option<(Tid, u64)> {
        std::mem::replace(&mut self.tracing.counted_at, at)
    }

    /// Whether any probe is in the program (a continue then ticks to read the rings).
    /// Any tracepoint is set, placed or waiting.
    pub(super) fn has_tracepoints(&self) -> bool {
        !self.tracing.list.is_empty()
    }

    pub(crate) fn has_probes(&self) -> bool {
        self.tracing.list.iter().any(|t| t.probe.is_some())
    }

    /// Whether `addr` is a probe's site (a single step there runs the program's own
    /// instruction: the session counts and collects the hit itself).
    pub(super) fn probe_at(&self, addr: u64) -> bool {
        self.tracing
            .list
            .iter()
            .any(|t| self.placed_here(t) && t.probe.is_some() && t.addr == addr)
    }

    /// Whether `addr` is a trap tracepoint's site.
    pub(super) fn trap_tracepoint_at(&self, addr: u64) -> bool {
        self.tracing
            .list
            .iter()
            .any(|t| self.placed_here(t) && t.probe.is_none() && t.addr == addr)
    }

    /// `tracepoint.list()` rows.
    pub(crate) fn tracepoints(&self) -> &[Tracepoint] {
        &self.tracing.list
    }
}
