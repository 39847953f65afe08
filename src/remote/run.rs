//! Running the remote process: resumes (`vCont`), stepping off a breakpoint the stub holds
//! (it re-traps otherwise: the stub steps over only breakpoints of its own), the session's
//! deadline kept with the interrupt byte, and stop replies turned into raw [`Stop`]s.

use std::time::{Duration, Instant};

use super::reply::{Reply, Why};
use super::{conn, Remote};
use crate::inferior::{PassFn, Stop};
use crate::os::{OsError, Tid};

/// How often a wait looks at whether the user interrupted scry.
const POLL: Duration = Duration::from_millis(100);
const SIGTRAP: i32 = 5;
/// Sites taken out that a late hit is still recognised at, the newest kept.
const MAX_LIFTED: usize = 256;
const AT_ENTRY: u64 = 9;

/// How a run's wait ended before its stop reply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Interrupt {
    None,
    /// The deadline passed: scry sent the interrupt byte.
    Deadline,
    /// The user's Ctrl-C reached scry: it sent the interrupt byte.
    User,
}

/// What the first hit's test of breakpoint passing found (see `pass`).
pub(super) enum Probe {
    /// The thread ran past the site: the run goes on.
    Passed,
    /// It trapped on the site again: it is stepped off as usual.
    Trapped,
    /// A stop to report came first (the question stays open).
    Report(Stop),
    /// No test this time (the instruction branches, no debug register is free, ...).
    Skipped,
}

/// What a stop reply means for a run.
pub(super) enum Event {
    Report(Stop),
    /// A signal the program gets without a stop: resume with it.
    Pass(Tid, i32),
    /// A stop of scry's own nobody asked to see (a caught call's other end): resume.
    Ignore,
}

impl Remote {
    /// Tells a stub with `QPassSignals` which signals to hand to the program itself, as the
    /// session passes them (SIGCHLD, SIGALRM, ...): such a signal then costs no stop reply
    /// and no resume, where each was a round trip. Sent only when the set changed. A trap,
    /// SIGSTOP and SIGKILL are never in it (the stub reports its own stops with them).
    fn push_pass_signals(&mut self, pass: PassFn) -> Result<(), OsError> {
        if !self.features.pass_signals {
            return Ok(());
        }
        let numbering = self.numbering();
        let mut wire: Vec<u8> = (1..=64)
            .filter(|&sig| !matches!(sig, 5 | 9 | 19) && pass(sig))
            .filter_map(|sig| numbering.to_wire(sig))
            .collect();
        wire.sort_unstable();
        wire.dedup();
        if self.passing.as_ref() == Some(&wire) {
            return Ok(());
        }
        let list: Vec<String> = wire.iter().map(|n| format!("{n:x}")).collect();
        if self
            .request_ok(format!("QPassSignals:{}", list.join(";")).as_bytes())
            .is_err()
        {
            // A stub that offers the packet and then refuses it: signals are passed by
            // resuming with them, as without it; the resume itself goes on.
            self.features.pass_signals = false;
            return Ok(());
        }
        self.passing = Some(wire);
        Ok(())
    }

    /// Continues every thread (`step`: `None`) or steps one, until a stop to report.
    pub(super) fn resume(
        &mut self,
        step: Option<Tid>,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Stop, OsError> {
        if let Some(end) = self.ended {
            return Ok(end);
        }
        self.push_syscall_catch()?;
        self.push_pass_signals(pass)?;
        if !self.features.vcont {
            return Err(OsError::Remote(
                "the stub does not support vCont (needed to resume threads)".into(),
            ));
        }
        // A thread resting on one of scry's breakpoints executes the instruction under it
        // first, with the breakpoint out: the one that reported its hit (whichever thread is
        // selected now) and the selected one (the user may have moved it onto a site).
        let mover = step.unwrap_or(self.selected);
        let parked = self.parked.take().map(|(tid, _)| tid);
        let mut movers = vec![mover];
        if step.is_none() {
            movers.extend(parked.filter(|&t| t != mover));
        }
        // The site the last thread stepped off goes back in with the continue, in one write
        // (a round trip less a hit); one stepped off before is back before the next step.
        // The site (its address) to put back with the next resume's packet.
        let mut put_back: Option<u64> = None;
        // The thread that hit a hardware site keeps the RF of its hit until resumed.
        let fresh = self.rf_fresh.take();
        for tid in movers {
            if let Some(addr) = put_back.take() {
                self.request_ok(&self.put_back_packet(addr))?;
            }
            let Some(addr) = self.resting_site(tid)? else {
                continue;
            };
            if step.is_none() && fresh == Some((tid, addr)) {
                match self.rf_passes {
                    Some(true) => continue,
                    Some(false) => {}
                    None => match self.probe_rf(tid, addr, deadline, pass)? {
                        Probe::Passed => continue,
                        Probe::Report(stop) => return Ok(stop),
                        Probe::Trapped | Probe::Skipped => {}
                    },
                }
            }
            // Where the thread rests now (the test may have moved it).
            if let Some(addr) = self.resting_site(tid)? {
                let (stop, later) = self.step_off(tid, addr, deadline, pass, step.is_none())?;
                put_back = later;
                match stop {
                    Stop::Step { .. } if step.is_none() => {}
                    stop => return Ok(stop),
                }
            }
        }
        loop {
            let action = match step {
                Some(tid) => self.step_action(tid),
                None => self.cont_action(),
            };
            self.forget_state();
            let back = put_back.take();
            let ahead: Vec<Vec<u8>> = back.map(|a| self.put_back_packet(a)).into_iter().collect();
            let (reply, interrupt, refused) = self.run_packet(&ahead, &action, deadline)?;
            if let (Some(addr), Some(e)) = (back, refused) {
                self.site_left_out(addr, e);
            }
            match self.classify(reply, interrupt, step, pass)? {
                Event::Report(stop) => {
                    self.warn_if_threads_unreliable();
                    return Ok(stop);
                }
                // A step by lines runs a handler through, back to where the signal came.
                Event::Pass(tid, sig) if self.run_handlers && step == Some(tid) => {
                    if let Some(stop) = self.run_handler_through(tid, sig, deadline, pass)? {
                        return Ok(stop);
                    }
                }
                Event::Pass(tid, sig) => {
                    self.pending.insert(tid, sig);
                    // A signal that stops the program again at once (a storm, or a stub's
                    // own stop taken for the program's) must not outlive the deadline: the
                    // signal stays pending for the next resume.
                    if Instant::now() >= deadline {
                        return Ok(Stop::Timeout { tid });
                    }
                }
                Event::Ignore => {}
            }
        }
    }

    /// A stub without files (QEMU's user mode) and several threads: its threads are not
    /// stopped together, and hits in them can go unreported (measured: 100 of 400 logpoint
    /// hits counted, the run ending normally). Said once, on the next stop.
    fn warn_if_threads_unreliable(&mut self) {
        if !self.fileless.get() || self.fileless_warned || self.ended.is_some() {
            return;
        }
        if self.list_threads().is_ok_and(|t| t.len() > 1) {
            self.fileless_warned = true;
            self.warnings.push("this stub reads no files (QEMU's user mode, by the look of it), which does not stop several threads together: stops and hits of other threads can be missed, and counts are not to be trusted".into());
        }
    }

    /// `vCont` stepping `tid` alone (the others stay stopped), with its pending signal.
    fn step_action(&mut self, tid: Tid) -> String {
        let thread = self.thread_id(tid);
        let numbering = self.numbering();
        match self.pending.remove(&tid).and_then(|s| numbering.to_wire(s)) {
            Some(sig) => format!("vCont;S{sig:02x}:{thread}"),
            None => format!("vCont;s:{thread}"),
        }
    }

    /// `vCont` continuing every thread, each with the signal it stopped with (as the local
    /// backend delivers every thread's pending signal at a resume).
    pub(super) fn cont_action(&mut self) -> String {
        let mut action = String::from("vCont");
        let pending: Vec<(Tid, i32)> = self.pending.drain().collect();
        for (tid, sig) in pending {
            if let Some(sig) = self.numbering().to_wire(sig) {
                action.push_str(&format!(";C{sig:02x}:{}", self.thread_id(tid)));
            }
        }
        action.push_str(";c");
        action
    }

    /// The site `tid` sits on, if its pc is one.
    fn resting_site(&self, tid: Tid) -> Result<Option<u64>, OsError> {
        if self.sites.is_empty() {
            return Ok(None);
        }
        let pc = self.pc_of(tid)?;
        Ok(self.sites.contains_key(&pc).then_some(pc))
    }

    /// Steps `tid` over the site at `addr`: out, one step, back in. With `defer` (a
    /// continue follows) and a stub that takes packets ahead of answers, the site is left
    /// out and its address returned, for the continue to put it back in the same write; the
    /// removal goes ahead of the step the same way.
    fn step_off(
        &mut self,
        tid: Tid,
        addr: u64,
        deadline: Instant,
        pass: PassFn,
        defer: bool,
    ) -> Result<(Stop, Option<u64>), OsError> {
        let site = self.sites[&addr];
        let out = self.site_packet('z', addr, site.hardware).into_bytes();
        let pipelines = self.conn.borrow().pipelines();
        let mut ahead = Vec::new();
        if pipelines {
            ahead.push(out);
        } else {
            self.request_ok(&out)?;
        }
        // A signal the program takes without a stop arrives before the instruction runs:
        // the step is made again with it delivered, so the thread never resumes on the site.
        let result = loop {
            let action = self.step_action(tid);
            self.forget_state();
            let sent = std::mem::take(&mut ahead);
            let event = self.run_packet(&sent, &action, deadline).and_then(
                |(reply, interrupt, refused)| match refused {
                    // The site stayed in: the step trapped on it, nothing ran.
                    Some(e) => Err(e),
                    None => self.classify(reply, interrupt, Some(tid), pass),
                },
            );
            match event {
                Ok(Event::Pass(t, sig)) => {
                    self.pending.insert(t, sig);
                }
                Ok(Event::Ignore) => {}
                Ok(Event::Report(stop)) => break Ok(stop),
                Err(e) => break Err(e),
            }
        };
        // The site goes back even when the step failed (the process may have ended: then
        // there is nothing to put it into).
        if self.ended.is_some() {
            return result.map(|stop| (stop, None));
        }
        if defer && pipelines && matches!(result, Ok(Stop::Step { .. })) {
            return result.map(|stop| (stop, Some(addr)));
        }
        self.request_ok(&self.put_back_packet(addr))?;
        result.map(|stop| (stop, None))
    }

    /// The `Z` packet putting scry's site at `addr` back in.
    fn put_back_packet(&self, addr: u64) -> Vec<u8> {
        let hardware = self.sites.get(&addr).is_some_and(|s| s.hardware);
        self.site_packet('Z', addr, hardware).into_bytes()
    }

    /// Keeps the pc the stub sent with a stop: it saves a `g` when nothing else is read.
    pub(super) fn note_expedited_pc(&self, tid: Tid, expedited: &[(usize, Vec<u8>)]) {
        let Some(rip) = self.layout.find("rip") else {
            return;
        };
        if let Some((_, bytes)) = expedited
            .iter()
            .find(|(n, b)| *n == rip.num && b.len() == 8)
        {
            let pc = u64::from_le_bytes(bytes[..8].try_into().unwrap_or([0; 8]));
            self.expedited_pc.borrow_mut().insert(tid, pc);
        }
    }

    /// A site whose putting back (sent ahead of a continue) the stub refused: the run went
    /// on without it. Said at the next stop; scry no longer counts it in.
    fn site_left_out(&mut self, addr: u64, e: OsError) {
        self.sites.remove(&addr);
        self.warnings.push(format!(
            "the breakpoint at {addr:#x} is out of the program: putting it back after stepping off it failed ({e}), so hits there since were missed"
        ));
    }

    /// Sends a resume and waits for its stop reply until `deadline`; then the interrupt
    /// byte stops the program, whose stop answers. `ahead`: requests sent first, in the
    /// same write, each to be answered `OK`; the first refusal among them is returned
    /// beside the stop (the resume went anyway).
    pub(super) fn run_packet(
        &self,
        ahead: &[Vec<u8>],
        action: &str,
        deadline: Instant,
    ) -> Result<(Reply, Interrupt, Option<OsError>), OsError> {
        let mut conn = self.conn.borrow_mut();
        for packet in ahead {
            conn.send(packet)?;
        }
        conn.send(action.as_bytes())?;
        let mut refused = None;
        for packet in ahead {
            let reply = conn.answer(packet)?;
            if reply != b"OK" && refused.is_none() {
                refused = Some(conn::refusal(packet, &reply));
            }
        }
        let mut interrupt = Interrupt::None;
        loop {
            let now = Instant::now();
            let until = if interrupt != Interrupt::None {
                now + conn::REPLY_WAIT
            } else {
                (now + POLL).min(deadline)
            };
            match conn.wait_packet(until)? {
                Some(reply) => {
                    if let Some(stop) = Reply::parse(&reply) {
                        return Ok((stop, interrupt, refused));
                    }
                    // Console output (`O`) while running; anything else is garbage.
                    if reply.first() == Some(&b'O') {
                        continue;
                    }
                    return Err(OsError::Remote(format!(
                        "the stub answered {} with {}",
                        conn::preview(action.as_bytes()),
                        conn::preview(&reply)
                    )));
                }
                None if interrupt != Interrupt::None => {
                    return Err(OsError::Remote(format!(
                        "the stub at {} did not stop the program within {} s of an interrupt",
                        conn.addr(),
                        conn::REPLY_WAIT.as_secs()
                    )))
                }
                None => {
                    if crate::os::interrupt::pending() {
                        interrupt = Interrupt::User;
                    } else if Instant::now() >= deadline {
                        interrupt = Interrupt::Deadline;
                    }
                    if interrupt != Interrupt::None {
                        conn.interrupt()?;
                    }
                }
            }
        }
    }

    /// What a stop reply means; `step`: the thread a single step was asked of.
    pub(super) fn classify(
        &mut self,
        reply: Reply,
        interrupt: Interrupt,
        step: Option<Tid>,
        pass: PassFn,
    ) -> Result<Event, OsError> {
        let (wire, thread, why, expedited) = match reply {
            Reply::Exited { code, .. } => {
                let stop = Stop::Exited {
                    code: i32::from(code),
                };
                self.ended = Some(stop);
                return Ok(Event::Report(stop));
            }
            Reply::Killed { signal, .. } => {
                let signal = self
                    .numbering()
                    .to_linux(signal)
                    .unwrap_or(i32::from(signal));
                let stop = Stop::Killed { signal };
                self.ended = Some(stop);
                return Ok(Event::Report(stop));
            }
            Reply::NoResumed => {
                return Err(OsError::Remote("the stub has no thread left to run".into()))
            }
            Reply::Stopped {
                signal,
                thread,
                why,
                expedited,
            } => (signal, thread, why, expedited),
        };
        let tid = thread
            .filter(|t| t.tid > 0)
            .map_or(self.selected, |t| t.tid as Tid);
        self.note_expedited_pc(tid, &expedited);
        self.selected = tid;
        match why {
            Why::Exec(path) => {
                self.after_exec(tid, path);
                return Ok(Event::Report(Stop::Exec { tid: self.pid }));
            }
            Why::Fork(child) => return self.on_fork(tid, child, false, step),
            Why::Vfork(child) => return self.on_fork(tid, child, true, step),
            Why::VforkDone => return self.on_vfork_done(tid),
            _ => {}
        }
        let signal = self.numbering().to_linux(wire).unwrap_or(0);
        if self.numbering().answers_interrupt(wire) {
            match interrupt {
                Interrupt::User => return Ok(Event::Report(Stop::Interrupted { tid })),
                Interrupt::Deadline => return Ok(Event::Report(Stop::Timeout { tid })),
                Interrupt::None => {}
            }
        }
        if let (SIGTRAP, Why::SyscallEntry(nr) | Why::SyscallReturn(nr)) = (signal, &why) {
            let at_entry = matches!(why, Why::SyscallEntry(_));
            return Ok(match self.syscall_stop(tid, *nr, at_entry)? {
                Some(stop) => Event::Report(stop),
                None => Event::Ignore,
            });
        }
        if signal == SIGTRAP {
            if let Why::Watch(data) = why {
                let slots = self.watch_slots_at(data);
                if slots != 0 {
                    return Ok(Event::Report(Stop::Watchpoint { tid, slots }));
                }
            }
            // A step ends with a plain trap, also when it lands on a site (whose breakpoint
            // has not fired yet: the thread is stepped off it at the next resume).
            if step == Some(tid) && matches!(why, Why::Signal) {
                return Ok(Event::Report(Stop::Step { tid }));
            }
            let pc = self.pc_of(tid)?;
            if let Some(site) = self.sites.get(&pc) {
                self.parked = Some((tid, pc));
                self.rf_fresh = site.hardware.then_some((tid, pc));
                return Ok(Event::Report(Stop::Breakpoint { tid, addr: pc }));
            }
            // A hit of a site taken out since (another thread's, made while the stop that
            // removed it was being reported; `finish()`'s return stop that every worker
            // reaches): the stub says it was a breakpoint and left the thread before the
            // instruction, which runs when the thread is resumed without the trap. Reported
            // as a signal it was passed on at the next resume: `killed by SIGTRAP` (gdb's
            // "moribund locations" are the same idea).
            let breakpoint = matches!(why, Why::SoftwareBreakpoint | Why::HardwareBreakpoint);
            if breakpoint && self.lifted.contains(&pc) {
                return Ok(Event::Ignore);
            }
        }
        if signal != SIGTRAP && signal != 0 && pass(signal) {
            return Ok(Event::Pass(tid, signal));
        }
        let (code, fault_addr) = self
            .siginfo(tid)
            .unwrap_or((crate::inferior::NO_SIGINFO, 0));
        if signal != 0 {
            self.pending.insert(tid, signal);
        }
        Ok(Event::Report(Stop::Signal {
            tid,
            signal,
            code,
            fault_addr,
        }))
    }

    /// The process ran exec: the stub forgot the old image's breakpoints and watchpoints
    /// with it (and the kernel emptied the debug registers), its threads but `tid` are gone,
    /// and the program may be another file. The session arms what it has again.
    fn after_exec(&mut self, tid: Tid, path: Option<Vec<u8>>) {
        if path.is_none() {
            self.drop_stale_sites();
        }
        self.sites.clear();
        self.lifted.clear();
        self.watches = Default::default();
        self.rendezvous = None;
        self.parked = None;
        self.rf_fresh = None;
        self.pending.clear();
        self.forget_state();
        *self.reading.borrow_mut() = None;
        self.selected = tid;
        self.local_files.borrow_mut().clear();
        // The stub's process is a new one to it: what it was told to catch is told again.
        self.catch.forget_sent();
        let said = path.map(|p| std::path::PathBuf::from(String::from_utf8_lossy(&p).into_owned()));
        self.exe = self.read_exe_path().or(said).or_else(|| self.exe.take());
    }

    /// lldb-server (14), whose exec stop names no file, keeps its software breakpoints over
    /// an exec: one would never trap in the new image (a `Z0` there only counts it again) and
    /// reads there would show the old image's byte. Each is taken out at the exec stop, which
    /// writes that old byte back: the same byte when the new image is the same file, a
    /// changed one where another program has other code there (said).
    fn drop_stale_sites(&mut self) {
        let stale = self.software_sites();
        for &addr in &stale {
            let _ = self.request_ok(self.site_packet('z', addr, false).as_bytes());
        }
        if !stale.is_empty() {
            let list: Vec<String> = stale.iter().map(|a| format!("{a:#x}")).collect();
            self.warnings.push(format!(
                "this stub keeps its breakpoints over an exec (lldb-server does): scry took out the ones from before it, at {}, which writes back the bytes the old image had there (the same when the program ran itself again; where a new program has other code there, it is changed)",
                list.join(", ")
            ));
        }
    }

    /// The addresses of scry's int3 sites (the stub wrote them into memory), ascending.
    pub(super) fn software_sites(&self) -> Vec<u64> {
        self.sites
            .iter()
            .filter(|(_, s)| !s.hardware)
            .map(|(&a, _)| a)
            .collect()
    }

    /// The slots (bit n = slot n) of the watchpoints covering data address `data`.
    fn watch_slots_at(&self, data: u64) -> u8 {
        self.watches
            .iter()
            .enumerate()
            .filter_map(|(i, w)| {
                w.filter(|w| data >= w.addr && data < w.addr + w.len.max(1))
                    .map(|_| i)
            })
            .fold(0u8, |mask, i| mask | (1 << i))
    }

    /// `si_code` and `si_addr` of the signal `tid` stopped with (`qXfer:siginfo:read`).
    fn siginfo(&self, tid: Tid) -> Option<(i32, u64)> {
        if !self.features.siginfo {
            return None;
        }
        self.select_for_reading(tid).ok()?;
        let info = self.xfer("siginfo", "").ok()?;
        let code = i32::from_le_bytes(info.get(8..12)?.try_into().ok()?);
        let addr = u64::from_le_bytes(info.get(16..24)?.try_into().ok()?);
        Some((code, addr))
    }

    /// A process the stub started sits at the loader's first instruction: run it to the
    /// program's entry point, as a local spawn stops.
    pub(super) fn run_to_entry(&mut self) -> Result<Stop, OsError> {
        let tid = self.selected;
        let Some(entry) = self.auxv(AT_ENTRY) else {
            return Ok(Stop::Loader { tid });
        };
        if self.sites.contains_key(&entry) {
            return Ok(Stop::Loader { tid });
        }
        // A static program has no loader: it is at its entry point already (running to it
        // would run the whole program).
        if self.pc_of(tid)? == entry {
            return Ok(Stop::Entry { tid });
        }
        // A debug register in a read-only session, as every internal site.
        self.insert_site_packet(entry, self.read_only)?;
        let stop = self.resume(None, Instant::now() + Duration::from_secs(10), &|_| false);
        self.remove_site_packet(entry)?;
        match stop? {
            Stop::Breakpoint { tid, addr } if addr == entry => Ok(Stop::Entry { tid }),
            other => Ok(other),
        }
    }

    /// `Z`/`z` for a breakpoint: type 0 (software) or 1 (hardware), kind 1 (x86).
    pub(super) fn site_packet(&self, op: char, addr: u64, hardware: bool) -> String {
        format!("{op}{},{addr:x},1", u8::from(hardware))
    }

    pub(super) fn insert_site_packet(&mut self, addr: u64, hardware: bool) -> Result<(), OsError> {
        self.request_ok(self.site_packet('Z', addr, hardware).as_bytes())?;
        self.sites.insert(addr, super::Site { hardware });
        Ok(())
    }

    /// A site of scry's at `addr` is out: a late hit of it is recognised (see `classify`).
    pub(super) fn note_lifted(&mut self, addr: u64) {
        if !self.lifted.contains(&addr) {
            if self.lifted.len() >= MAX_LIFTED {
                self.lifted.remove(0);
            }
            self.lifted.push(addr);
        }
    }

    pub(super) fn remove_site_packet(&mut self, addr: u64) -> Result<(), OsError> {
        let Some(site) = self.sites.remove(&addr) else {
            return Ok(());
        };
        self.note_lifted(addr);
        if self.ended.is_some() {
            return Ok(());
        }
        self.request_ok(self.site_packet('z', addr, site.hardware).as_bytes())
    }
}
