//! A process tree run as one (`config.follow_fork = 'both'` with `config.schedule = 'all'`,
//! gdb's `detach-on-fork off` + `schedule-multiple on`): `cont()` resumes every process under
//! control, and the first stop any of them reports stops them all and selects the process
//! it came from. Without this a parent waiting in `wait4` or `read` for a held child never
//! gets anywhere: every `cont()` ended at its deadline.
//!
//! The held processes of the selected process's image run with its breakpoints and
//! watchpoints inserted (a fork child's address space is a copy of its parent's, so the
//! same addresses hold; a watchpoint keeps each process's last value, so a hit there says
//! that process's old value); a held process of another image gets its own breakpoint
//! addresses (see `tree_sites`). When the run ends they are held again, cleaned, and the one
//! that stopped is selected through the usual path (symbols read, every breakpoint armed
//! from its spec). Only a user's `cont()` runs the tree: `next()`/`finish()`/`step()` run
//! the selected process alone, the others staying stopped, as gdb with scheduler locking
//! `step`.

use super::target::Target;
use super::*;
use crate::inferior::{tree, WatchSlot};
use crate::os::debugregs;
use crate::os::wait::{wait, WaitOutcome};

/// Which process a tree's stop came from: a held one by index, or the selected one.
pub(super) enum From {
    Selected,
    Held(usize),
}

impl Session {
    /// A `cont()` runs every process: the user's continue, the tree scheduled as one, and a
    /// held process alive to run.
    pub(super) fn runs_tree(&self) -> bool {
        self.tree.whole
            && self.config.schedule_all
            && self.targets.held.iter().any(|t| t.process.still_there())
    }

    /// Marks the runs to come as a user's `cont()` (the only runs of the whole tree).
    pub fn set_whole_tree(&mut self, on: bool) {
        self.tree.whole = on;
        if on {
            // The ends the last stop noted are not listed any more.
            self.targets.ended_in_run.clear();
        }
        self.tree.anchor = on
            .then(|| self.targets.live.as_ref().map(|t| t.process.pid()))
            .flatten();
    }

    /// One leg of a tree run: every process resumed, the first stop of any returned, with
    /// every process stopped and the stopping one selected; or, for a hit its listeners will
    /// decide on, with only its process stopped (see [`runs_on_alone`](Self::runs_on_alone)),
    /// when the next leg resumes that one alone.
    pub(super) fn tree_leg(&mut self, deadline: Instant) -> Result<Stop> {
        let pass = self.pass_fn();
        let mut watched = HeldWatches::default();
        let first = match self.tree.running.take() {
            // The others run on from the last leg: the process that stopped goes on, and any
            // that joined the tree meanwhile (a fork child kept) starts.
            Some(running) if running == self.tree_signature() && self.targets.is_live() => {
                self.tree.running = Some(running);
                self.tree_go_on(deadline, &pass)?
            }
            running => {
                if running.is_some() {
                    // What the running processes have in them changed (a listener set a
                    // breakpoint, say): everything stops, and the leg starts afresh.
                    self.tree.running = running;
                    self.settle_tree()?;
                }
                self.tree_launch(deadline, &pass, &mut watched)?
            }
        };
        let (mut from, mut stop) = match first {
            Some(found) => found,
            None => self.tree_wait(deadline, &pass)?,
        };
        if self.runs_on_alone(&from, &stop) {
            if let From::Held(i) = from {
                self.swap_selection(i);
            }
            self.tree.running = Some(self.tree_signature());
            return Ok(stop);
        }
        // The run ends here, or the stop is one everything stops for: the processes still
        // running from earlier legs stop too.
        self.tree.running = None;
        // Every other process stopped; the held ones cleaned of the run's breakpoints.
        if let Some(t) = &mut self.targets.live {
            if !t.process.is_dead() {
                t.process.all_stop(&pass)?;
            }
        }
        if let From::Held(i) = from {
            // The process the run began in ended while it was being stopped for another's
            // stop: its end is the run's stop (as it would be alone); the other's waits in
            // its process for the next run.
            if let Some(end) = self.anchor_end(&pass) {
                self.targets.held[i].process.requeue(stop);
                (from, stop) = (From::Selected, end);
            }
        }
        self.hold_every_held(&pass);
        if matches!(stop, Stop::Timeout { .. } | Stop::Interrupted { .. }) {
            let when = if matches!(stop, Stop::Timeout { .. }) {
                "at the deadline"
            } else {
                "when interrupted"
            };
            let note = format!("{when}: {}", self.tree_doings());
            self.at_stop.carried_notes.push(note);
        }
        self.at_stop.carried_notes.append(&mut watched.notes);
        if let From::Held(i) = from {
            // The fired registers are the selected program's layout, which the selection
            // re-makes: the hit is carried over by watchpoint.
            let fired = match stop {
                Stop::Watchpoint { slots, .. } => self.points.watchpoints.ids_of(slots),
                _ => Vec::new(),
            };
            self.select_held(i)?;
            self.tree.swapped_in = false;
            if let Some(t) = &mut self.targets.live {
                t.process.arm(deadline);
            }
            if let Stop::Watchpoint { tid, .. } = stop {
                return Ok(Stop::Watchpoint {
                    tid,
                    slots: self.slots_of(&fired),
                });
            }
        }
        if std::mem::take(&mut self.tree.swapped_in) {
            self.select_swapped_in()?;
            if let Some(t) = &mut self.targets.live {
                t.process.arm(deadline);
            }
        }
        Ok(stop)
    }

    /// Resumes every process of the tree, each of the selected image with its breakpoints
    /// and watchpoints, each of another with its own breakpoints: a stop one of them gives
    /// before all run comes back instead.
    fn tree_launch(
        &mut self,
        deadline: Instant,
        pass: &dyn Fn(i32) -> bool,
        watched: &mut HeldWatches,
    ) -> Result<Option<(From, Stop)>> {
        if !self.targets.is_live() {
            // The breakpoints are armed (their addresses known) only in a selected process:
            // one that remains is selected for the run.
            if let Some(i) = self
                .targets
                .held
                .iter()
                .position(|h| h.process.still_there())
            {
                self.select_held(i)?;
            }
        }
        let sites: Vec<u64> = self.points.breakpoints.armed_addresses();
        let watches = self.held_watches();
        self.note_unprobed();
        let mut i = 0;
        while i < self.targets.held.len() {
            match self.launch_held(i, deadline, pass, &sites, &watches, watched)? {
                Launched::Stopped(found) => return Ok(Some(found)),
                // Its end noted, it left the list: the next one is at `i` now.
                Launched::Left => {}
                Launched::Running | Launched::Skipped => i += 1,
            }
        }
        if let Some(t) = self.targets.live.as_mut().filter(|t| !t.process.is_dead()) {
            if let Some(stop) = t.process.launch(deadline, pass)? {
                return Ok(self.unless_noted(From::Selected, stop));
            }
        }
        Ok(None)
    }

    /// Every held process stopped (those a tree run left running too) and cleaned of the
    /// run's breakpoints and debug registers.
    pub(super) fn hold_every_held(&mut self, pass: &dyn Fn(i32) -> bool) {
        for h in &mut self.targets.held {
            if h.process.still_there() {
                h.process.disarm(pass);
                let _ = h.process.hold(pass);
            }
        }
    }

    /// Tracepoints probe the selected process only: the held processes that run in a tree
    /// run are not counted, and the stop says so rather than showing counts that read as
    /// the whole tree's (a prefork server's 600 worker calls were missing from `hits 2`).
    fn note_unprobed(&mut self) {
        if !self.has_tracepoints() {
            return;
        }
        let others = self.targets.held.iter().any(|h| h.process.still_there());
        let Some(pid) = self.targets.live.as_ref().map(|t| t.process.pid()) else {
            return;
        };
        if !others {
            return;
        }
        let note = format!(
            "tracepoints probe the selected process {pid} only: the tree's other processes ran unprobed, their calls not in the counts (process.select(pid) probes another)"
        );
        if !self.at_stop.carried_notes.contains(&note) {
            self.at_stop.carried_notes.push(note);
        }
    }

    /// Resumes held process `i` in a tree run: with the selected process's breakpoints and
    /// watchpoints where it runs the same image, else with its own breakpoints.
    fn launch_held(
        &mut self,
        i: usize,
        deadline: Instant,
        pass: &dyn Fn(i32) -> bool,
        sites: &[u64],
        watches: &[HeldWatch],
        watched: &mut HeldWatches,
    ) -> Result<Launched> {
        let h = &self.targets.held[i];
        if !h.process.still_there() && !h.process.has_queued() {
            return Ok(Launched::Skipped);
        }
        let same_image = self.targets.live.as_ref().is_some_and(|t| t.same_image(h));
        // None: the selected process's addresses are this one's too.
        let own_sites = if !h.process.still_there() {
            Some(Vec::new())
        } else if same_image {
            None
        } else {
            Some(self.held_image_sites(i))
        };
        let h = &mut self.targets.held[i];
        if same_image {
            // Watches first, in the selected process's registers: a read-only session's
            // breakpoints take debug registers too, whichever are left.
            watched.arm(h.process.as_mut(), watches, &mut self.points.watchpoints);
        }
        for &addr in own_sites.as_deref().unwrap_or(sites) {
            let _ = h.process.insert_site(addr);
        }
        h.process.arm(deadline);
        Ok(match h.process.launch(deadline, pass)? {
            Some(stop) => match self.unless_noted(From::Held(i), stop) {
                Some(found) => Launched::Stopped(found),
                None => Launched::Left,
            },
            None => Launched::Running,
        })
    }

    /// The next leg of a tree run that left the other processes running: the selected
    /// process (the one that stopped) goes on, and each held one that is not running yet (a
    /// fork child kept since) starts; a stop met on the way comes back instead.
    fn tree_go_on(
        &mut self,
        deadline: Instant,
        pass: &dyn Fn(i32) -> bool,
    ) -> Result<Option<(From, Stop)>> {
        let t = self.targets.live.as_mut().expect("live");
        t.process.arm(deadline);
        if let Some(stop) = t.process.launch(deadline, pass)? {
            return Ok(self.unless_noted(From::Selected, stop));
        }
        let sites: Vec<u64> = self.points.breakpoints.armed_addresses();
        let mut watched = HeldWatches::default();
        let mut i = 0;
        while i < self.targets.held.len() {
            if self.targets.held[i].process.is_launched() {
                i += 1;
                continue;
            }
            match self.launch_held(i, deadline, pass, &sites, &[], &mut watched)? {
                Launched::Stopped(found) => return Ok(Some(found)),
                Launched::Left => {}
                Launched::Running | Launched::Skipped => i += 1,
            }
        }
        Ok(None)
    }

    /// The end of the selected process when it is the one the user's `cont()` began in and
    /// it ended unreported (queued while it was being stopped); the stops queued before it
    /// are dropped with it, as for any process that ends.
    fn anchor_end(&mut self, pass: &dyn Fn(i32) -> bool) -> Option<Stop> {
        let t = self.targets.live.as_mut()?;
        if !t.process.is_dead() || Some(t.process.pid()) != self.tree.anchor {
            return None;
        }
        queued_end(t.process.as_mut(), pass)
    }

    /// The armed watchpoints, to arm in the held processes of the selected program as the
    /// selected process has them (same registers).
    fn held_watches(&self) -> Vec<HeldWatch> {
        self.points
            .watchpoints
            .list()
            .iter()
            .filter(|w| w.armed && !w.slots.is_empty())
            .filter_map(|w| {
                let pieces = debugregs::pieces(w.addr, w.len).ok()?;
                let slots = w.slots.iter().zip(pieces).map(|(&slot, (at, len))| {
                    let access = w.kind.hardware();
                    (
                        slot,
                        WatchSlot {
                            addr: at,
                            len,
                            access,
                        },
                    )
                });
                Some(HeldWatch {
                    id: w.id,
                    addr: w.addr,
                    len: w.len,
                    slots: slots.collect(),
                })
            })
            .collect()
    }

    /// The registers the watchpoints `fired` hold in the process selected now.
    fn slots_of(&self, fired: &[u32]) -> u8 {
        self.points
            .watchpoints
            .list()
            .iter()
            .filter(|w| w.armed && fired.contains(&w.id))
            .flat_map(|w| w.slots.iter())
            .fold(0u8, |m, &s| m | (1 << s))
    }

    /// Waits for the first event of any process that is a stop.
    fn tree_wait(&mut self, deadline: Instant, pass: &dyn Fn(i32) -> bool) -> Result<(From, Stop)> {
        loop {
            let event = match tree::take_any() {
                Some(e) => Some(e),
                None if crate::os::interrupt::pending() || Instant::now() >= deadline => None,
                None => match wait(-1, false) {
                    Ok(WaitOutcome::Event(e)) => Some(e),
                    Ok(_) => continue,
                    // Nothing left to wait for.
                    Err(_) => None,
                },
            };
            let Some(event) = event else {
                let timeout = !crate::os::interrupt::pending();
                let (from, tid) = self.tree_thread();
                let stop = if timeout {
                    Stop::Timeout { tid }
                } else {
                    Stop::Interrupted { tid }
                };
                return Ok((from, stop));
            };
            let owner = match &self.targets.live {
                Some(t) if !t.process.is_dead() && t.process.owns(&event) => Some(From::Selected),
                _ => self
                    .targets
                    .held
                    .iter()
                    .position(|h| h.process.owns(&event))
                    .map(From::Held),
            };
            let taken = match owner {
                Some(From::Selected) => {
                    let t = self.targets.live.as_mut().expect("owner is live");
                    match t.process.take_event(event, pass)? {
                        Some(stop) => self.unless_noted(From::Selected, stop),
                        None => None,
                    }
                }
                Some(From::Held(i)) => {
                    match self.targets.held[i].process.take_event(event, pass)? {
                        Some(stop) => self.unless_noted(From::Held(i), stop),
                        None => None,
                    }
                }
                None => None,
            };
            if let Some(found) = taken {
                return Ok(found);
            }
        }
    }

    /// A stop of a process, or `None` when it is the end of one while others live and the
    /// user's `cont()` did not begin in it: such an end does not stop the tree (a
    /// pre-forking server's workers end one by one); it is a note on the next stop, and
    /// `process.list()` shows it until the next `cont()`. The end of the process the run
    /// began in, and of the last one alive, is the run's stop.
    fn unless_noted(&mut self, from: From, stop: Stop) -> Option<(From, Stop)> {
        let Some(end) = end_text(&stop) else {
            return Some((from, stop));
        };
        let pid = match from {
            From::Selected => self.targets.live.as_ref().map(|t| t.process.pid()),
            From::Held(i) => Some(self.targets.held[i].process.pid()),
        };
        let others_alive = self
            .targets
            .held
            .iter()
            .enumerate()
            .any(|(j, h)| !matches!(from, From::Held(i) if i == j) && h.process.still_there())
            || (matches!(from, From::Held(_)) && self.targets.is_live());
        if !others_alive || pid.is_none() || pid == self.tree.anchor {
            return Some((from, stop));
        }
        let gone = match from {
            From::Selected => self
                .targets
                .live
                .take()
                .expect("the selected process ended"),
            From::Held(i) => self.targets.held.remove(i),
        };
        self.note_end(gone.process.pid(), gone.program, end);
        None
    }

    /// A process's end that is not the run's stop: a note on the next stop, and a row of
    /// `process.list()` until the next `cont()`.
    fn note_end(&mut self, pid: Tid, program: String, end: String) {
        self.points.watchpoints.forget_values(pid);
        self.tree.notes.ended(pid, &end);
        self.targets.ended_in_run.push((pid, program, end));
    }

    /// The selected process, about to give its place to another, ended while the tree was
    /// being stopped for someone else's stop: its end was queued, never reported. It is
    /// noted as any other process's end (dropping it lost the end of a fork child that had
    /// just hit a logpoint: 2 of 6 in fixtures/fork_bomb.c). A stop queued before its end in
    /// a process that no longer exists is dropped with it.
    pub(super) fn note_queued_end(&mut self, mut gone: Live) {
        let pass = self.pass_fn();
        if let Some(end) = queued_end(gone.process.as_mut(), &pass).and_then(|s| end_text(&s)) {
            self.note_end(gone.process.pid(), gone.program, end);
        }
    }

    /// Notes the end of every held process whose end scry has taken but not reported (kept
    /// for it from another process's wait, or in its own queue), and drops it from the held
    /// ones.
    pub(super) fn note_held_ends(&mut self) {
        let pass = self.pass_fn();
        let mut i = 0;
        while i < self.targets.held.len() {
            let h = &mut self.targets.held[i];
            if h.process.still_there() {
                i += 1;
                continue;
            }
            let end = h
                .process
                .take_kept_end(&pass)
                .or_else(|| queued_end(h.process.as_mut(), &pass));
            let Some(end) = end.and_then(|s| end_text(&s)) else {
                i += 1;
                continue;
            };
            let gone = self.targets.held.remove(i);
            self.note_end(gone.process.pid(), gone.program, end);
        }
    }

    /// What each process was doing when a run of the tree ended at its deadline (a blocked
    /// tree shows who waits for whom: `812 in wait4, 813 in read`), the selected one first.
    fn tree_doings(&mut self) -> String {
        const SHOWN: usize = 8;
        let doing = |p: &mut dyn Target| {
            let (pid, tid) = (p.pid(), p.selected());
            match procfs::thread_syscall(pid, tid) {
                Some(Some(nr)) => format!("{pid} in {}", crate::os::syscalls::name(nr)),
                _ => match p.pc(tid) {
                    Ok(pc) => format!("{pid} at {pc:#x}"),
                    Err(_) => format!("{pid} (state unknown)"),
                },
            }
        };
        let mut parts = Vec::new();
        if let Some(t) = self.targets.live.as_mut().filter(|t| !t.process.is_dead()) {
            parts.push(format!("{} (selected)", doing(t.process.as_mut())));
        }
        let mut alive = 0;
        for h in self.targets.held.iter_mut() {
            if h.process.still_there() {
                alive += 1;
                if alive <= SHOWN {
                    parts.push(doing(h.process.as_mut()));
                }
            }
        }
        if alive > SHOWN {
            parts.push(format!("{} more", alive - SHOWN));
        }
        parts.join(", ")
    }

    /// The thread a timeout of the tree names: the selected process's, else the first held.
    fn tree_thread(&self) -> (From, Tid) {
        match &self.targets.live {
            Some(t) if !t.process.is_dead() => (From::Selected, t.process.selected()),
            _ => {
                let i = self
                    .targets
                    .held
                    .iter()
                    .position(|h| h.process.still_there())
                    .unwrap_or(0);
                (From::Held(i), self.targets.held[i].process.selected())
            }
        }
    }
}

/// What launching a held process in a tree run came to.
enum Launched {
    /// It runs.
    Running,
    /// It was not there to run.
    Skipped,
    /// It ended, noted, and left the list.
    Left,
    /// A stop it gave before it could run.
    Stopped((From, Stop)),
}

/// A watchpoint as the selected process holds it: the registers and what each watches.
struct HeldWatch {
    id: u32,
    addr: u64,
    len: u64,
    slots: Vec<(usize, WatchSlot)>,
}

/// What arming watchpoints in the held processes of one leg of a tree run left to say.
#[derive(Default)]
struct HeldWatches {
    /// Watchpoints a held process could not take (its registers held by its own perf
    /// breakpoints), one note each.
    notes: Vec<String>,
}

impl HeldWatches {
    /// Arms `watches` in the held process `p` (every thread stopped), in the registers the
    /// selected process uses, all of a watchpoint's registers or none. The first time one
    /// is armed in a process, the watched bytes there are its last value in that process.
    fn arm(&mut self, p: &mut dyn Target, watches: &[HeldWatch], table: &mut WatchTable) {
        for w in watches {
            let pid = p.pid();
            let Some(entry) = table.list_mut().iter_mut().find(|e| e.id == w.id) else {
                continue;
            };
            if !entry.last_in.iter().any(|(q, _)| *q == pid) {
                let mut bytes = vec![0u8; w.len as usize];
                if p.read_memory(w.addr, &mut bytes).is_err() {
                    continue;
                }
                entry.last_in.push((pid, bytes));
            }
            let mut armed = Vec::new();
            for (slot, watch) in &w.slots {
                match p.set_watch(*slot, *watch) {
                    Ok(()) => armed.push(*slot),
                    Err(e) => {
                        for &s in &armed {
                            p.clear_watch(s);
                        }
                        self.notes.push(format!(
                            "watchpoint {} is not armed in process {pid}: {e}",
                            w.id
                        ));
                        break;
                    }
                }
            }
        }
    }
}

/// The end a process that ended has queued, the stops queued before it dropped with it.
fn queued_end(p: &mut dyn Target, pass: &dyn Fn(i32) -> bool) -> Option<Stop> {
    let now = Instant::now();
    while let Ok(Some(stop)) = p.launch(now, pass) {
        if end_text(&stop).is_some() {
            return Some(stop);
        }
    }
    None
}

/// How a process ended, as its stop line says it (`exited with code 0`), if `stop` is its end.
fn end_text(stop: &Stop) -> Option<String> {
    let kind = match *stop {
        Stop::Exited { code } => StopKind::Exited { code },
        Stop::Killed { signal } => StopKind::Killed { signal },
        _ => return None,
    };
    StopInfo::new(kind).ending()
}
