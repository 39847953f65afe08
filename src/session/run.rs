//! Running the target: steps, continues, and turning raw stops into what users see.

use super::replay::Replayed;
use super::*;

/// What one leg of a continue gave: a stop, or a tick with the program still running.
pub(crate) enum Leg {
    Stop(Box<StopInfo>),
    Tick,
}

impl Session {
    // ---- running -----------------------------------------------------------------------

    /// Arms the deadline for a run (one continue or a batch of steps).
    pub fn arm(&mut self, deadline: Instant) -> Result<()> {
        let follow = self.config.follow_fork;
        if self.runs_tree() && !self.targets.is_live() {
            // The selected process ended; the held ones run (each armed by the tree's leg).
            return Ok(());
        }
        let limit = self.config.max_processes;
        let inferior = self.targets.live_for_run()?;
        inferior.set_follow_fork(follow);
        inferior.set_process_limit(limit);
        inferior.arm(deadline);
        Ok(())
    }

    /// A note for the next stop shown (a run's own account of how it ended).
    pub(crate) fn carry_note(&mut self, note: String) {
        self.at_stop.carried_notes.push(note);
    }

    /// Ends a run: every thread is stopped again (a listener may have let the others run).
    pub fn disarm(&mut self) {
        // A tree run that left processes running ends with all of them stopped.
        if let Err(e) = self.settle_tree() {
            self.carry_note(format!("stopping the process tree: {e}"));
        }
        let pass = self.pass_fn();
        if let Some(t) = &mut self.targets.live {
            t.process.set_tick(None);
            t.process.disarm(&pass);
        }
        // Every thread stopped: none is left inside a probe, and whatever the probes wrote
        // is read.
        if self.has_probes() {
            let _ = self.leave_probes();
        }
        self.drain_traces(true);
    }

    /// Stops every thread if only the last event's thread is stopped (inside a listener of a
    /// run that may go on), before something that needs them all.
    pub(super) fn stop_every_thread(&mut self) -> Result<()> {
        let pass = self.pass_fn();
        if let Some(t) = &mut self.targets.live {
            t.process.all_stop(&pass)?;
        }
        Ok(())
    }

    /// Which stops may be reported with only their thread stopped: those listeners decide.
    /// `library`: scripts listen for library loads and unloads.
    pub fn set_listening(&mut self, nonstop: NonStop, library: bool) {
        self.nonstop = nonstop;
        self.loader.set_reporting(library);
    }

    /// A library change as a stop of the loading thread (only that thread is stopped).
    fn library_stop(&mut self, change: dynamic::LibraryChange) -> StopInfo {
        let tid = self.targets.live.as_ref().map(|t| t.process.selected());
        StopInfo {
            tid,
            pc: self.pc().ok(),
            ..StopInfo::new(StopKind::Library(change))
        }
    }

    /// One instruction on the selected thread, without describing the stop: for batches.
    /// Along a recording (going back, or replaying in the past) a step is the log's; while
    /// recording, a recorded one.
    pub fn step_raw(&mut self, deadline: Instant) -> Result<Stop> {
        if self.along_recording() {
            return self.replay_step();
        }
        if self.recording_live() {
            return self.recorded_step(deadline);
        }
        self.recording_left_behind();
        self.live_step(deadline)
    }

    /// The selected thread run alone to `addr` (none is delivered a signal on the way):
    /// `None` when the backend cannot, and the caller steps.
    pub(super) fn live_run_to(&mut self, addr: u64, deadline: Instant) -> Result<Option<Stop>> {
        let inferior = self.targets.live_for_run()?;
        let from = inferior.pc(inferior.selected()).ok();
        let Some(stop) = inferior.run_thread_to(addr, deadline, &|_| false)? else {
            return Ok(None);
        };
        self.after_raw(stop);
        self.at_stop.stepped_from = from;
        Ok(Some(stop))
    }

    /// One instruction the backend executes.
    pub(super) fn live_step(&mut self, deadline: Instant) -> Result<Stop> {
        let pass = self.pass_fn();
        self.live_step_with(deadline, &pass)
    }

    /// [`live_step`](Self::live_step) with `pass` saying which signals the step delivers
    /// on its own (a recorder passes none: it records each delivery as a step of its own).
    pub(super) fn live_step_with(
        &mut self,
        deadline: Instant,
        pass: &dyn Fn(i32) -> bool,
    ) -> Result<Stop> {
        self.resume_in_probes();
        // Where the step starts, for the instruction it executes (`e.executed`): the step
        // reads these registers anyway, so this costs no system call.
        let inferior = self.targets.live_for_run()?;
        let from = inferior.pc(inferior.selected()).ok();
        if let Some(pc) = from.filter(|pc| self.probe_at(*pc) || self.trap_tracepoint_at(*pc)) {
            let tid = self.targets.live_for_run()?.selected();
            if self.tracing_counted_at(None) != Some((tid, pc)) {
                self.trap_hit(tid, pc);
            }
        }
        let inferior = self.targets.live_for_run()?;
        let mut stop = inferior.step(deadline, pass)?;
        if let Some(loader) = self.own_stop(&stop) {
            // A step onto a breakpoint of scry's, not the user's.
            if loader {
                self.loader_changed();
            }
            if let Some(tid) = stop.tid() {
                stop = Stop::Step { tid };
            }
        }
        self.after_raw(stop);
        self.at_stop.stepped_from = from;
        Ok(stop)
    }

    /// The address of the instruction the latest step executed (`None` after a continue).
    pub fn stepped_from(&self) -> Option<u64> {
        self.at_stop.stepped_from
    }

    /// One step, booked but not described (see [`describe`](Self::describe)): per-event
    /// work stays minimal when listeners run at every stop.
    pub fn step(&mut self, deadline: Instant) -> Result<StopInfo> {
        let stop = self.step_raw(deadline)?;
        self.book_stop(stop)
    }

    /// One step of a step by lines (`next()`): a signal it delivers to a handler of the
    /// program's runs the handler through first (see `inferior::handlers`), as gdb's
    /// `next` does. A recording records every instruction, handlers too.
    pub fn line_step(&mut self, deadline: Instant) -> Result<StopInfo> {
        let by_lines = !self.along_recording() && !self.recording_live();
        if by_lines {
            if let Ok(t) = self.targets.live_for_run() {
                t.steps_by_lines(true);
            }
        }
        let stop = self.step(deadline);
        if by_lines {
            if let Ok(t) = self.targets.live_for_run() {
                t.steps_by_lines(false);
            }
        }
        stop
    }

    pub fn cont(&mut self, deadline: Instant) -> Result<StopInfo> {
        loop {
            if let Leg::Stop(stop) = self.cont_leg(deadline)? {
                return Ok(*stop);
            }
        }
    }

    /// One leg of a continue: the next stop, or a tick (tracepoints' probes wrote records
    /// meanwhile, read into the queue; the program still runs).
    pub(crate) fn cont_leg(&mut self, deadline: Instant) -> Result<Leg> {
        let pass = self.pass_fn();
        self.resume_in_probes();
        if self.at_stop.stepped_from.take().is_some() {
            // A thread stepped onto a trap tracepoint's site runs it without trapping (the
            // continue steps it over first): its hit is collected here.
            if let (Ok(tid), Ok(pc)) = (self.selected_tid(), self.pc()) {
                if self.trap_tracepoint_at(pc) && self.tracing_counted_at(None) != Some((tid, pc)) {
                    self.trap_hit(tid, pc);
                }
            }
        }
        // A hit counted at the last stop is run over by this continue, not counted again.
        self.tracing_counted_at(None);
        // A watch trap that left its thread on a user breakpoint's address: that breakpoint
        // is reached, not hit yet; this continue reports the hit first, without running
        // (it ran over it, uncounted, as though the thread had hit it). gdb stops there too.
        if let Some((tid, pc)) = self.at_stop.arrived_at.take() {
            let still_there = self
                .targets
                .live()
                .is_ok_and(|t| t.pc(tid).ok() == Some(pc));
            if still_there && self.points.breakpoints.is_user_site(pc) {
                // Its hit is this one: a continue from it runs the instruction, never
                // trapping on it again (a listener's 'continue' resumed it straight into the
                // debug register: every such hit counted twice).
                if let Ok(t) = self.targets.live() {
                    t.take_as_hit(tid);
                }
                let _ = self.select_thread(tid);
                let info = self.book_stop(Stop::Breakpoint { tid, addr: pc })?;
                return Ok(Leg::Stop(Box::new(info)));
            }
        }
        loop {
            if let Some(change) = self.loader.next_change() {
                return Ok(Leg::Stop(Box::new(self.library_stop(change))));
            }
            let nonstop = self.nonstop;
            let tree = self.tree.whole
                && self.config.schedule_all
                && self.config.follow_fork == FollowFork::Both;
            if let Some(t) = &mut self.targets.live {
                t.process.set_report_forks(tree);
            }
            let stop = if self.along_recording() {
                match self.replay_cont(deadline)? {
                    Replayed::Stop(stop) => stop,
                    Replayed::Watch(info) => return Ok(Leg::Stop(info)),
                    // The present reached: the run goes on live.
                    Replayed::Present => continue,
                }
            } else if self.recording_live() {
                self.recorded_cont(deadline)?
            } else if self.runs_tree() {
                self.recording_left_behind();
                self.tree_leg(deadline)?
            } else {
                self.recording_left_behind();
                let tick = self
                    .has_probes()
                    .then(|| Instant::now() + super::tracepoints::TICK);
                let target = self.targets.live_for_run()?;
                target.set_tick(tick);
                target.cont(deadline, &pass, nonstop)?
            };
            if let Stop::Tick = stop {
                self.drain_traces(false);
                return Ok(Leg::Tick);
            }
            if let Stop::Breakpoint { tid, addr } = stop {
                if self.trap_tracepoint_at(addr) {
                    self.trap_hit(tid, addr);
                    if !self.points.breakpoints.is_user_site(addr) {
                        continue;
                    }
                    // Reported for the user's breakpoint there: the step or continue that
                    // runs the instruction next is the same hit.
                    self.tracing_counted_at(Some((tid, addr)));
                }
            }
            self.drain_traces(false);
            if let Some(tid) = stop.tid().filter(|_| self.has_probes()) {
                // Stopped in a probe's moved instruction: shown (and resumed) where it is in
                // the program.
                self.put_back_in_program(tid)?;
            }
            if let Stop::Forked { .. } = stop {
                // A child kept: from now on the run is the whole tree's.
                self.collect_forked();
                continue;
            }
            match self.own_stop(&stop) {
                Some(true) => {
                    // The loader changed its list: scry's business, then the run goes on.
                    let changes = self.loader_changed();
                    self.loader.report(changes);
                    continue;
                }
                // Into libc's sigaction: the inferior follows the call itself.
                Some(false) => continue,
                None => {}
            }
            if self.ignored_remotely(&stop) {
                continue;
            }
            self.after_raw(stop);
            let info = self.book_stop(stop)?;
            // A watch hit nobody reports (a write on a read watch) is not a stop.
            if matches!(stop, Stop::Watchpoint { .. }) && info.reason() != Reason::Watchpoint {
                continue;
            }
            return Ok(Leg::Stop(Box::new(info)));
        }
    }

    /// Bookkeeping every stop needs, even one nobody looks at: the snapshot rotates.
    pub(super) fn after_raw(&mut self, stop: Stop) {
        self.at_stop.snapshot.rotate();
        self.collect_forked();
        if let Stop::Exec { .. } = stop {
            // The old image is gone with every int3 and debug register in it.
            self.forget_process();
            if let Some(note) = self.forget_tracepoints() {
                self.at_stop.carried_notes.push(note);
            }
            self.symbols = self.symbols.renewed();
            self.loader.forget_changes();
            self.refresh_symbols();
            if self.targets.held.is_empty() {
                self.rearm();
            } else {
                // One process of a tree: the counts are every process's.
                self.rearm_keeping_hits();
            }
            self.follow_loader();
            // The new image is the program now.
            if let Some(t) = &mut self.targets.live {
                if let Some(exe) = t.process.exe_path() {
                    t.program = exe.display().to_string();
                }
            }
        }
    }

    /// Turns a raw stop into the user's view of it, counting breakpoint hits.
    pub fn finish_stop(&mut self, stop: Stop) -> Result<StopInfo> {
        let mut info = self.book_stop(stop)?;
        self.describe(&mut info);
        Ok(info)
    }

    /// Where a stop is: its symbol, its source line, and whether its line names the thread.
    pub(super) fn place_stop(&mut self, info: &mut StopInfo) {
        if let Some(pc) = info.pc {
            info.symbol = self.symbolize(pc);
            // Where in the source, like a debugger's stop message. Not at the entry stop:
            // `_start` has no lines, and looking would parse the program's DWARF before
            // anyone asked for it.
            if info.reason() != Reason::Entry {
                info.source = self.stop_position(pc);
            }
        }
        // A system call is named with its thread, as strace names its pid.
        info.show_tid = info.reason() == Reason::Syscall
            || self
                .targets
                .live
                .as_ref()
                .is_some_and(|t| t.process.thread_ids().len() > 1);
        // Which process, when another one is under control too.
        info.show_pid = self.targets.held.iter().any(|h| h.process.still_there())
            || !self.targets.ended_in_run.is_empty();
    }

    /// What a stop needs only when someone reads its line: the symbol, whether to show the
    /// thread, and the output waiting in `output()`.
    pub fn describe(&mut self, info: &mut StopInfo) {
        self.find_culprit(info);
        self.place_stop(info);
        self.output.settle();
        info.unread_output = self.output.unread();
        // Shown once, with the first stop someone reads.
        info.notes.append(&mut self.at_stop.carried_notes);
        // What the tree did since the last stop shown, summed up over the stops listeners let go.
        let tree = self.config.schedule_all;
        info.notes.extend(self.tree.notes.take(tree));
    }

    /// How many of the innermost calls inlined at `pc` to pass over to reach the row of
    /// `file:line`: each must begin exactly at `pc` (a call already under way is entered).
    /// A line whose only row here is followed by another line's at the same address (no
    /// code of its own: `int total = 0;` kept in a register at -O2) is the outermost
    /// call's line when that is in the same file: the code there is that line's, whose
    /// inlined calls have not begun (before, the stop was named `stl_tree.h:995`, six
    /// calls deep in the next line's `m.begin()`). 0 when no such row is reached so.
    pub(super) fn hidden_at_line(&self, pc: u64, file: &str, line: u32) -> usize {
        let entered = self.symbols.inlined_entries_at(RuntimeAddr(pc), "");
        let locations = self.symbols.locations(RuntimeAddr(pc));
        let in_file = |l: &crate::symbols::Location| {
            l.file.as_deref().is_some_and(|f| {
                f == file || f.ends_with(&format!("/{}", file.trim_start_matches("./")))
            })
        };
        match locations
            .iter()
            .position(|l| l.line == Some(line) && in_file(l))
        {
            Some(i) if i <= entered => i,
            None if locations.get(entered).is_some_and(in_file) => entered,
            _ => 0,
        }
    }

    /// Books a stop: its reason and pc, breakpoint hit counts, watchpoint values.
    pub fn book_stop(&mut self, stop: Stop) -> Result<StopInfo> {
        self.note_stop_for_gcore(&stop);
        self.loader.ran_since_maps = true;
        let tid = stop.tid();
        let mut notes = Vec::new();
        self.at_stop.entry_inlines = None;
        self.at_stop.arrived_at = match stop {
            Stop::Watchpoint { tid, .. } => self
                .targets
                .live()
                .ok()
                .and_then(|t| t.pc(tid).ok())
                .filter(|&pc| self.points.breakpoints.is_user_site(pc))
                .map(|pc| (tid, pc)),
            _ => None,
        };
        let kind = match stop {
            // Never booked: the run reads the rings and goes on.
            Stop::Tick => StopKind::Here,
            Stop::Entry { .. } => StopKind::Entry,
            Stop::Loader { .. } => StopKind::Loader,
            Stop::Attached { .. } => StopKind::Attached,
            Stop::Step { .. } => StopKind::Step,
            Stop::Breakpoint { addr, .. } => {
                let mut hit = BreakpointHit::default();
                // Several at this address (rare): every id, for each to decide on its terms.
                // A lone breakpoint's hit (every logpoint hit) allocates nothing here.
                let at_addr = |b: &&super::breakpoints::Breakpoint| b.armed && b.at(addr);
                if self
                    .points
                    .breakpoints
                    .list()
                    .iter()
                    .filter(at_addr)
                    .nth(1)
                    .is_some()
                {
                    hit.ids = self
                        .points
                        .breakpoints
                        .list()
                        .iter()
                        .filter(at_addr)
                        .map(|b| b.id)
                        .collect();
                }
                let pid = self.targets.live.as_ref().map_or(0, |t| t.process.pid());
                if let Some(bp) = self.points.breakpoints.hit(addr, pid) {
                    hit.id = Some(bp.id);
                    hit.name = bp.name.clone();
                    // A function by name, or a `file:line`: the calls inlined there that
                    // begin right here are not entered yet (counted when first asked).
                    let named = if super::lookup::names_a_function(&bp.spec) {
                        Some(super::lookup::function_of_spec(&bp.spec).to_string())
                    } else {
                        source_line_expr(&bp.spec).map(|_| bp.spec.clone())
                    };
                    if let (Some(named), Some(tid)) = (named, tid) {
                        self.at_stop.entry_inlines = Some((tid, addr, named, None));
                    }
                }
                StopKind::Breakpoint(hit)
            }
            Stop::Signal {
                signal,
                code,
                fault_addr,
                tid,
            } => self.signal_kind(&mut notes, tid, signal, code, fault_addr),
            Stop::Timeout { .. } => StopKind::Timeout,
            Stop::Interrupted { .. } => StopKind::Interrupted,
            Stop::Exec { .. } => StopKind::Exec {
                program: self.targets.live.as_ref().map(|t| t.program.clone()),
            },
            Stop::ThreadExit { .. } => StopKind::ThreadExit,
            Stop::ThreadStart { .. } => StopKind::ThreadStart,
            Stop::HistoryEnd { .. } => StopKind::HistoryEnd,
            // Never booked: the run takes the child in and goes on (see `cont`).
            Stop::Forked { .. } => StopKind::Step,
            Stop::Watchpoint { tid, slots } => match self.watch_hit(tid, slots)? {
                Some(report) => StopKind::Watchpoint(report),
                None => StopKind::Step,
            },
            Stop::Syscall { tid, nr, args, ret } => {
                StopKind::Syscall(self.syscall_report(tid, nr, args, ret)?)
            }
            Stop::Exited { code } => StopKind::Exited { code },
            Stop::Killed { signal } => {
                if let Some(pid) = crate::os::guardian::ended_attacker() {
                    notes.push(format!(
                        "process {pid} ptrace-attached scry and held it stopped: scry's guardian ended it, the only way out"
                    ));
                }
                StopKind::Killed { signal }
            }
        };
        let mut info = StopInfo {
            pid: self.targets.live.as_ref().map(|t| t.process.pid()),
            tid,
            notes,
            replay: self.replay_position().map(|(at, end)| super::stop::Replay {
                at,
                end,
                reverse: self.timeline.reverse,
            }),
            ..StopInfo::new(kind)
        };
        if let Some(t) = &mut self.targets.live {
            self.at_stop
                .carried_notes
                .extend(t.process.take_syscall_warnings());
        }

        // A process can die while its other threads are being stopped: the stops before its
        // end are still reported, without a pc.
        let dead = self
            .targets
            .live
            .as_ref()
            .is_none_or(|t| t.process.is_dead());
        if stop.is_final() {
            if let Some(t) = &self.targets.live {
                self.targets.last_process = Some((t.process.pid(), t.program.clone()));
            }
            self.targets.ended = info.ending();
            self.targets.live = None;
            self.forget_process();
            // Held processes whose ends were taken while the tree stopped (a worker the
            // parent reaped just before it exited) are ended, not "remaining".
            self.note_held_ends();
            info.notes.extend(self.held_note());
        } else if !dead {
            // A thread stuck in the kernel has no pc to show; state says why.
            let stuck = stop.tid().is_some_and(|t| {
                self.targets
                    .live()
                    .is_ok_and(|i| i.stuck_reason(t).is_some())
            });
            if !stuck {
                // The pc alone: over a remote protocol the stop reply carried it, and the
                // other registers are a round trip a listener may never need. Read ones
                // are noted for `prev` as any script's read.
                let process = self.targets.live()?;
                let tid = process.selected();
                info.pc = Some(process.pc(tid)?);
                if let Some(regs) = process.regs_read(tid) {
                    self.at_stop.snapshot.note_regs(&regs);
                }
            }
            if let Some((parent, child)) = self.targets.live().ok().and_then(|i| i.take_followed())
            {
                self.at_stop.carried_notes.push(format!(
                    "followed fork child {child}; parent {parent} runs on untraced"
                ));
            }
            if let Some(sig) = self.targets.live().ok().and_then(|i| i.job_stopped()) {
                info.notes.push(format!(
                    "the process is stopped by {} (job control) and runs only after SIGCONT, as without scry",
                    signals::signal_name(sig)
                ));
            }
        }
        Ok(info)
    }

    /// The signal the selected thread stopped with will not be delivered.
    pub fn suppress_signal(&mut self) -> Result<()> {
        self.check_writable("suppress a signal")?;
        let inferior = self.targets.live()?;
        let tid = inferior.selected();
        inferior.clear_pending_signal(tid);
        Ok(())
    }
}

/// `si_code` of a signal the kernel itself raised without a fault address (a general
/// protection fault's SIGSEGV, SIGBUS).
const SI_KERNEL: i32 = 0x80;

impl Session {
    /// A signal stop's kind and notes (see `signal_stop`). A general-protection fault's
    /// address field is 0, which would read as a NULL dereference: the faulting
    /// instruction says what it accessed instead.
    pub(super) fn signal_kind(
        &mut self,
        notes: &mut Vec<String>,
        tid: Tid,
        signal: i32,
        code: i32,
        addr: u64,
    ) -> StopKind {
        if code != SI_KERNEL || !signals::has_fault_addr(signal) {
            let own = self.targets.live().ok().map(|t| t.pid());
            return signal_stop(notes, signal, code, addr, own);
        }
        let operand = self.faulting_operand(tid);
        notes.push(match operand {
            Some((a, true)) => format!(
                "general protection fault: the non-canonical address {a:#x} (no page can be there: a corrupt pointer)"
            ),
            Some((a, false)) => format!(
                "general protection fault at {a:#x} (the kernel gives no address; a misaligned SSE access, say)"
            ),
            None => "general protection fault (the kernel gives no address)".to_string(),
        });
        StopKind::Signal {
            signal,
            fault_addr: operand.map(|(a, _)| a),
        }
    }

    /// What the faulting instruction of thread `tid` accessed (its pc, its registers).
    fn faulting_operand(&mut self, tid: Tid) -> Option<(u64, bool)> {
        let view = self.targets.view().ok()?;
        let regs = view.regs(tid).ok()?;
        let mut code = [0u8; crate::x86::culprit::MAX_INSN];
        let inferior = &*view;
        // The instruction may end near the end of its mapping: fewer bytes are enough.
        let n = (1..=code.len())
            .rev()
            .find(|&n| inferior.read_memory(regs.rip, &mut code[..n]).is_ok())?;
        let reg = |r: iced_x86::Register| super::points::register_value(&regs, r);
        crate::x86::culprit::faulting_operand(&code[..n], regs.rip, &reg)
    }
}

/// What a signal's siginfo says of where it came from: the faulting address of a fault the
/// CPU raised (si_code > 0), or the process that sent it with kill(), tgkill() or
/// sigqueue() (si_code <= 0, where the field a fault address would be in holds the
/// sender's pid), which the stop line then names instead of a made-up address.
/// `own`: the process's pid, whose own raise()/abort() reads as such, not as an outsider's kill.
pub(super) fn signal_stop(
    notes: &mut Vec<String>,
    signal: i32,
    code: i32,
    addr: u64,
    own: Option<Tid>,
) -> StopKind {
    let mut fault_addr = None;
    if code > 0 {
        if signals::has_fault_addr(signal) {
            fault_addr = Some(addr);
        }
        // SIGSEGV, SEGV_MAPERR in the first page, which is never mapped: what C calls a
        // NULL dereference, a member's offset past it (`n->cfg` of a NULL `n` faults at 8).
        if signal == 11 && code == 1 && addr < 0x1000 {
            notes.push(match addr {
                0 => "a NULL pointer dereference".to_string(),
                a => format!("{a:#x} is NULL + {a}: a member or element of a NULL pointer"),
            });
        }
    } else if matches!(code, 0 | -1 | -6) {
        let sender = addr as u32 as i32;
        notes.push(if own == Some(sender) {
            format!("raised by the program itself (process {sender})")
        } else {
            format!("sent by process {sender}")
        });
    }
    StopKind::Signal { signal, fault_addr }
}

impl Session {
    /// Names `id`, one of the breakpoints at `stop`'s address, as the one that stopped it.
    pub fn relabel_breakpoint_stop(&self, stop: &mut StopInfo, id: u32) {
        let StopKind::Breakpoint(hit) = &mut stop.kind else {
            return;
        };
        if !hit.ids.contains(&id) {
            return;
        }
        if let Some(bp) = self.points.breakpoints.list().iter().find(|b| b.id == id) {
            hit.id = Some(id);
            hit.name = bp.name.clone();
        }
    }
}
