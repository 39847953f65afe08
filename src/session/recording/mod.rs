//! Recording execution (`record.start()`): every instruction the selected thread executes is
//! single-stepped, and what it changed goes into the [`Log`]: the registers that differ after
//! it, the bytes its stores overwrote (decoded before it runs, old and new), the
//! floating-point state it changed, what a system call's kernel side wrote into the buffers
//! the call names, and the signal frame a delivered signal pushed. What cannot be known makes
//! the step a barrier.
//!
//! Moving along the recording is `replay.rs`'s.

use std::collections::{BTreeMap, HashMap};

use super::*;
use crate::history::effects::{self, Effects, Len};
use crate::history::{Log, Pushed, StepIn, Unmapped};
use crate::os::fpregs::FpRegs;
use crate::x86::stores::StoreDecoder;
use kernel::syscall_before;

mod kernel;

/// Default most instructions a recording keeps.
pub(crate) const DEFAULT_LIMIT: u64 = 10_000_000;
/// Most bytes one system call buffer may have to be recorded (a bigger one is a barrier).
const BUFFER_LIMIT: u64 = 16 << 20;
/// How far below the stack pointer a delivered signal's frame is looked for.
const SIGNAL_FRAME_WINDOW: u64 = 16 << 10;
/// A `rep` string instruction with at least this many elements to go runs whole.
const REP_RUN_MIN: u64 = 64;
/// How long a system call may take before a recorder with other threads to run gives it
/// up as blocked (a blocked one waits for another thread, or for time to pass).
const BLOCKED_AFTER: std::time::Duration = std::time::Duration::from_millis(5);
/// rt_sigreturn: restores registers and the floating-point state from the frame.
const SYS_RT_SIGRETURN: u64 = 15;
const SYS_BRK: u64 = 12;
const SYS_MUNMAP: u64 = 11;
const SYS_CLONE: u64 = 56;
const SYS_RESTART_SYSCALL: u64 = 219;
/// The EINTR result of an interrupted call that is not restarted.
const EINTR: i64 = 4;
const SYS_EXIT: u64 = 60;
const SYS_SET_TID_ADDRESS: u64 = 218;
const SYS_CLONE3: u64 = 435;
const CLONE_VM: u64 = 0x100;
const CLONE_THREAD: u64 = 0x10000;
const CLONE_PARENT_SETTID: u64 = 0x0010_0000;
const CLONE_CHILD_CLEARTID: u64 = 0x0020_0000;
const CLONE_CHILD_SETTID: u64 = 0x0100_0000;

/// The session's place in time: the recording if any, and which way runs go along it.
#[derive(Default)]
pub(in crate::session) struct Timeline {
    /// The recording of the selected thread's execution, and where the process is along it.
    pub(in crate::session) recording: Option<Recording>,
    /// Runs go backwards along the recording (`reverse_step`, `reverse_cont`).
    pub(in crate::session) reverse: bool,
    /// A backwards run ends where the stack pointer is this high (`reverse_finish`: the
    /// call of the current function).
    pub(in crate::session) reverse_until: Option<(Tid, u64)>,
}

/// A recording and where the process is along it.
pub(super) struct Recording {
    pub(super) log: Log,
    /// The position of the process: `log.end()` in the present, less in the past.
    pub(super) at: u64,
    /// New steps are recorded as the thread runs (`record.stop()` and the limit end it).
    pub(super) active: bool,
    /// Why the process can no longer be moved along the log (it ran on unrecorded, ended).
    pub(super) stale: Option<String>,
    /// The limit was reached (said once, with the stop it made).
    pub(super) full: bool,
    decoder: StoreDecoder,
    /// Instructions decoded so far, by address, with their bytes; dropped where a store
    /// lands (code that rewrites itself) and whenever memory is mapped anew.
    insns: BTreeMap<u64, (iced_x86::Instruction, [u8; 16])>,
    /// Other threads wait to run (a continue schedules them): a system call that blocks is
    /// given up after a moment and made again later, so the thread it waits for can run.
    pub(super) shared: bool,
    /// The system call a step gave up on as blocked, if the last step did: `(thread, nr)`.
    pub(super) blocked: Option<(Tid, u64)>,
    /// Every thread is blocked: the next system call waits as long as the run may.
    pub(super) patient: bool,
    /// Where the kernel writes 0 when each thread ends (set_tid_address, CLONE_CHILD_CLEARTID).
    clear_tid: HashMap<Tid, u64>,
    /// The thread each recorded clone step created, by step.
    pub(super) created: HashMap<u64, Tid>,
    /// Threads a run along the recording said something of (ended, not made yet): once a run.
    pub(super) told: Vec<Tid>,
    /// Steps the kernel took part in (a system call, a signal delivered), with what: the
    /// present cannot be made before one of them (the kernel has done it already).
    kernel_steps: Vec<(u64, String)>,
    /// The call each thread's restart_syscall goes on with (the kernel's restart of a timed
    /// call made again after an interruption is `restart_syscall`, its own number lost).
    restarts: HashMap<Tid, u64>,
}

/// What was read before a step, to compare after it.
struct Before {
    tid: Tid,
    regs: RawRegs,
    /// `(address, bytes)` of every region the step may write.
    memory: Vec<(u64, Vec<u8>)>,
    fp: Option<FpRegs>,
    /// Where a delivered signal's frame may go: `(lowest address, bytes up to the old sp)`.
    signal_window: Option<(u64, Vec<u8>)>,
    barrier: Option<String>,
    /// A system call that maps memory anew: decoded instructions may be stale after it.
    remaps: bool,
    /// The instruction is a system call: its number.
    syscall: Option<u64>,
    /// set_tid_address: where the kernel will clear the thread's id when it ends.
    sets_clear_tid: Option<u64>,
    /// A clone that makes a thread: where the kernel clears the new thread's id at its end.
    clone: Option<Option<u64>>,
    /// What a munmap is about to take away.
    unmapping: Vec<Unmapped>,
    /// A `rep` string instruction run whole, to the instruction after it.
    run_to: Option<u64>,
}

impl Recording {
    pub(super) fn new(limit: u64, ring: bool, xsave_size: u32) -> Self {
        Recording {
            log: Log::new(limit, ring),
            at: 0,
            active: true,
            stale: None,
            full: false,
            decoder: StoreDecoder::new(xsave_size),
            insns: BTreeMap::new(),
            shared: false,
            blocked: None,
            patient: false,
            clear_tid: HashMap::new(),
            created: HashMap::new(),
            told: Vec::new(),
            kernel_steps: Vec::new(),
            restarts: HashMap::new(),
        }
    }

    pub(super) fn in_past(&self) -> bool {
        self.at < self.log.end()
    }

    /// Forgets decoded instructions that overlap `[addr, addr + len)`.
    fn forget_code(&mut self, addr: u64, len: u64) {
        let hit: Vec<u64> = self
            .insns
            .range(addr.saturating_sub(15)..addr.saturating_add(len))
            .map(|(a, _)| *a)
            .collect();
        for a in hit {
            self.insns.remove(&a);
        }
    }

    pub(super) fn forget_all_code(&mut self) {
        self.insns.clear();
    }
}

impl Session {
    /// Starts recording the selected thread from here.
    pub fn record_start(&mut self, limit: u64, ring: bool) -> Result<()> {
        // Recording writes nothing (a read-only session records; only moving writes).
        if self
            .timeline
            .recording
            .as_ref()
            .is_some_and(|r| r.in_past())
        {
            return Err(self.past_refusal("start a new recording"));
        }
        let process = self.targets.live()?;
        let tid = process.selected();
        let size = process.fp_regs(tid).map_or(512, |f| f.area().len() as u32);
        self.timeline.recording = Some(Recording::new(limit, ring, size));
        Ok(())
    }

    /// Ends the recording. In the past, the present becomes here: the steps after it are
    /// dropped (they will not happen now). The log stays readable.
    pub fn record_stop(&mut self) -> Result<()> {
        let rec = self.timeline.recording.as_mut().ok_or_else(|| {
            SessionError::Invalid("no recording (record.start() makes one)".into())
        })?;
        if rec.in_past() {
            let at = rec.at;
            if let Some((k, what)) = rec.kernel_steps.iter().find(|(k, _)| *k >= at) {
                return Err(SessionError::Invalid(format!(
                    "cannot make the present at step {at}: step {k} after it was {what}, which the kernel has already done (files read, threads made, time passed) and would not do again the same; goto({}) returns to the present",
                    rec.log.end()
                )));
            }
            rec.log.truncate(at);
        }
        rec.active = false;
        Ok(())
    }

    /// Whether the next steps of the selected thread are recorded.
    pub(super) fn recording_live(&self) -> bool {
        self.timeline
            .recording
            .as_ref()
            .is_some_and(|r| r.active && !r.in_past() && r.stale.is_none())
    }

    /// The program runs on unrecorded: the log no longer leads to the present.
    pub(super) fn recording_left_behind(&mut self) {
        if let Some(rec) = &mut self.timeline.recording {
            if !rec.active && rec.stale.is_none() {
                rec.stale =
                    Some("the program ran on unrecorded (after record.stop() or the limit)".into());
            }
        }
    }

    /// One recorded instruction of the selected thread.
    pub(super) fn recorded_step(&mut self, deadline: Instant) -> Result<Stop> {
        let Some(mut rec) = self.timeline.recording.take() else {
            return self.live_step(deadline);
        };
        let pass = self.pass_fn();
        let out = loop {
            match self.record_one(&mut rec, deadline) {
                // A signal that passes is delivered by the next step, which records the
                // frame it pushes.
                Ok(Stop::Signal { signal, .. })
                    if signal != signals::SIGTRAP && pass(signal) && rec.active =>
                {
                    continue
                }
                out => break out,
            }
        };
        self.timeline.recording = Some(rec);
        out
    }

    fn record_one(&mut self, rec: &mut Recording, deadline: Instant) -> Result<Stop> {
        let before = self.read_before(rec)?;
        rec.blocked = None;
        // With other threads to run, a system call that does not return at once is given
        // up (interrupted) and made again when the thread's turn comes back.
        let step_deadline = match before.syscall {
            Some(_) if rec.shared && !rec.patient => deadline.min(Instant::now() + BLOCKED_AFTER),
            _ => deadline,
        };
        // No signal is delivered inside the step unseen: each comes back as a stop, and the
        // next step delivers it with its frame read before.
        let ran = match before.run_to {
            Some(to) => self.live_run_to(to, deadline)?,
            None => None,
        };
        let mut stop = match ran {
            Some(stop) => stop,
            None => self.live_step_with(step_deadline, &|_| false)?,
        };
        // A system call stopped inside (given up after a moment, the run's deadline, an
        // interrupt): the kernel left it interrupted. One that would return EINTR is set
        // back to be made again (alone, nothing would have interrupted it); one with a
        // restart result is recorded as it is, and the next step, which the kernel begins
        // by restarting it, is recorded as that call (see `read_before`).
        if let (Stop::Timeout { tid } | Stop::Interrupted { tid }, Some(nr)) =
            (stop, before.syscall)
        {
            let process = self.targets.live()?;
            let after = process.regs(before.tid)?;
            let short = step_deadline < deadline && matches!(stop, Stop::Timeout { .. });
            if after.rax as i64 == -EINTR {
                process.set_regs_read_back(before.tid, &before.regs)?;
                if short {
                    rec.blocked = Some((before.tid, nr));
                }
                return Ok(stop);
            }
            if short {
                if is_restart(after.rax) {
                    rec.blocked = Some((before.tid, nr));
                } else {
                    // It returned just as it was given up: an ordinary step.
                    stop = Stop::Step { tid };
                }
            }
        }
        if matches!(stop, Stop::Syscall { .. }) {
            // A caught call stops inside its step, where the recorder cannot follow it.
            rec.active = false;
            rec.stale = Some("a caught system call stopped inside a recorded step (syscall.catch and record.start do not mix yet)".into());
            self.at_stop.carried_notes.push("the recording ended: a caught system call stopped inside a recorded step (syscall.catch and record.start do not mix yet)".into());
            return Ok(stop);
        }
        if stop.is_final() {
            rec.stale = Some(format!("the process ended ({})", final_text(&stop)));
            rec.active = false;
            return Ok(stop);
        }
        let Ok(process) = self.targets.live() else {
            return Ok(stop);
        };
        // A thread that ended in this step has no registers left; what the kernel wrote at
        // its end (its cleared id) is still recorded.
        let after = process.regs(before.tid).ok();
        if after.is_none() && before.syscall != Some(SYS_EXIT) {
            return Ok(stop);
        }
        let mut regs = Vec::new();
        for i in 0..regs::REGISTER_NAMES.len() {
            let Some(after) = &after else { break };
            let (old, new) = (
                regs::get_register(&before.regs, i),
                regs::get_register(after, i),
            );
            if old != new {
                regs.push((i as u8, old, new));
            }
        }
        let after = after.unwrap_or(before.regs);
        let mut news: Vec<Vec<u8>> = Vec::with_capacity(before.memory.len());
        for (addr, old) in &before.memory {
            let mut new = vec![0u8; old.len()];
            let n = process.read_memory_partial(*addr, &mut new);
            new.truncate(n);
            news.push(new);
        }
        let mut stores: Vec<(u64, &[u8], &[u8])> = Vec::new();
        for ((addr, old), new) in before.memory.iter().zip(&news) {
            push_changed(&mut stores, *addr, old, new);
        }
        let mut barrier = before.barrier;
        let mut frame_new = Vec::new();
        if let Some((low, old)) = &before.signal_window {
            let old_sp = low + old.len() as u64;
            if after.rsp < old_sp && after.rsp >= *low {
                frame_new = vec![0u8; (old_sp - after.rsp) as usize];
                let n = process.read_memory_partial(after.rsp, &mut frame_new);
                frame_new.truncate(n);
            } else if after.rsp != before.regs.rsp && after.rip != before.regs.rip {
                barrier.get_or_insert_with(|| {
                    "a signal handler ran on another stack (sigaltstack): its frame is not recorded"
                        .to_string()
                });
            }
        }
        if !frame_new.is_empty() {
            if let Some((low, old)) = &before.signal_window {
                let skip = (after.rsp - low) as usize;
                push_changed(&mut stores, after.rsp, &old[skip..], &frame_new);
            }
        }
        let mut fp = Vec::new();
        if let Some(old) = &before.fp {
            match process.fp_regs(before.tid) {
                Ok(new) => fp_diff(old.area(), new.area(), &mut fp),
                Err(e) => {
                    barrier.get_or_insert_with(|| {
                        format!("the vector registers were unreadable: {e}")
                    });
                }
            }
        }
        // A fault stops before its instruction ran: nothing changed, nothing to record.
        let executed = matches!(
            stop,
            Stop::Step { .. } | Stop::Breakpoint { .. } | Stop::Watchpoint { .. }
        ) || !regs.is_empty()
            || !stores.is_empty();
        if !executed {
            return Ok(stop);
        }
        if before.remaps {
            rec.forget_all_code();
        }
        for (addr, old, _) in &stores {
            rec.forget_code(*addr, old.len() as u64);
        }
        if let Some(at) = before.sets_clear_tid {
            rec.clear_tid.insert(before.tid, at);
        }
        if let Some(clear) = before.clone {
            let child = after.rax as i64;
            if child > 0 {
                let child = child as Tid;
                rec.created.insert(rec.log.end(), child);
                if let Some(at) = clear {
                    rec.clear_tid.insert(child, at);
                }
            }
        }
        if let Some(nr) = before.syscall {
            rec.kernel_steps.push((
                rec.log.end(),
                format!("the system call {}", crate::os::syscalls::name(nr)),
            ));
        } else if before.signal_window.is_some() {
            rec.kernel_steps
                .push((rec.log.end(), "a signal's delivery".into()));
        }
        let pushed = rec.log.push(StepIn {
            tid: before.tid,
            pc: before.regs.rip,
            regs: &regs,
            stores: &stores,
            fp: &fp,
            barrier,
            // Unmapped only if the call succeeded.
            unmapped: if after.rax == 0 {
                before.unmapping
            } else {
                Vec::new()
            },
        });
        rec.at = rec.log.end();
        if pushed == Pushed::Full {
            rec.active = false;
            rec.full = true;
            let limit = rec.log.limit();
            self.at_stop.carried_notes.push(format!(
                "the recording stopped at its limit of {limit} instructions (record.start({{limit}}) sets it; {{ring: true}} keeps the latest instead)"
            ));
        }
        Ok(stop)
    }

    /// Reads what the next instruction may change, before it runs.
    fn read_before(&mut self, rec: &mut Recording) -> Result<Before> {
        let process = self.targets.live()?;
        let tid = process.selected();
        let regs = process.regs(tid)?;
        let pc = regs.rip;
        let (insn, bytes) = match rec.insns.get(&pc) {
            Some(found) => *found,
            None => {
                let mut bytes = [0u8; 16];
                let n = process.read_memory_partial(pc, &mut bytes);
                let insn = StoreDecoder::decode(&bytes[..n], pc).unwrap_or_default();
                if !insn.is_invalid() {
                    rec.insns.insert(pc, (insn, bytes));
                }
                (insn, bytes)
            }
        };
        let mut before = Before {
            tid,
            regs,
            memory: Vec::new(),
            fp: None,
            signal_window: None,
            barrier: None,
            remaps: false,
            syscall: None,
            sets_clear_tid: None,
            clone: None,
            unmapping: Vec::new(),
            run_to: None,
        };
        // Stopped inside an interrupted system call: resumed, the kernel makes it again
        // (restart_syscall for a timed one), so this step is that call.
        let restarting = is_restart(regs.rax) && (regs.orig_rax as i64) >= 0;
        let value = |r| points::register_value(&regs, r);
        // A long `rep` string instruction is run whole (stepped, the CPU traps after every
        // element): its stores are one range, read before. Not from a breakpoint's site
        // (the thread steps off it element by element).
        let rep = crate::x86::stores::rep_run(&insn, &value, regs.eflags)
            .filter(|_| {
                !restarting
                    && regs.rcx >= REP_RUN_MIN
                    && process.pending_signal(tid) == 0
                    && process.site_is_hardware(pc).is_none()
            })
            .filter(|r| r.stores.is_none_or(|(_, len)| len <= BUFFER_LIMIT));
        if restarting {
            let nr = match regs.orig_rax {
                SYS_RESTART_SYSCALL => rec
                    .restarts
                    .get(&tid)
                    .copied()
                    .unwrap_or(SYS_RESTART_SYSCALL),
                nr => {
                    rec.restarts.insert(tid, nr);
                    nr
                }
            };
            before.syscall = Some(nr);
            before.remaps = matches!(nr, 9 | 10 | 11 | 25);
            let own = rec.clear_tid.get(&tid).copied();
            syscall_before(process, nr, &regs, &mut before, own);
            before.fp = Some(process.fp_regs(tid)?);
        } else if let Some(run) = rep {
            if let Some((at, len)) = run.stores {
                before.memory.push((at, read_or_fresh(process, at, len)));
            }
            before.run_to = Some(pc + insn.len() as u64);
            return Ok(before);
        } else {
            match rec.decoder.stores(&insn, &bytes, &value) {
                Ok(stores) => {
                    for (addr, len) in stores.memory {
                        before
                            .memory
                            .push((addr, read_or_fresh(process, addr, u64::from(len))));
                    }
                    let mut fp = stores.vector;
                    if stores.syscall {
                        let nr = regs.rax;
                        rec.restarts.insert(tid, nr);
                        before.syscall = Some(nr);
                        fp |= nr == SYS_RT_SIGRETURN;
                        before.remaps = matches!(nr, 9 | 10 | 11 | 25);
                        let own = rec.clear_tid.get(&tid).copied();
                        syscall_before(process, nr, &regs, &mut before, own);
                    }
                    if fp {
                        before.fp = Some(process.fp_regs(tid)?);
                    }
                }
                Err(why) => {
                    before.barrier = Some(format!(
                        "cannot tell what the instruction at {pc:#x} stores: {why}"
                    ));
                }
            }
        }
        if process.pending_signal(tid) != 0 {
            // The step delivers a signal: a handler's frame goes below the red zone.
            let low = regs.rsp.saturating_sub(SIGNAL_FRAME_WINDOW);
            let mut window = vec![0u8; (regs.rsp - low) as usize];
            if process.read_memory(low, &mut window).is_ok() {
                before.signal_window = Some((low, window));
            } else {
                before.barrier =
                    Some("a signal delivered where its frame's old bytes are unreadable".into());
            }
            if before.fp.is_none() {
                before.fp = Some(process.fp_regs(tid)?);
            }
        }
        Ok(before)
    }
}

impl Session {
    /// Why something that changes the program is refused while in the past.
    pub(super) fn past_refusal(&self, what: &str) -> SessionError {
        let (at, end) = self
            .timeline
            .recording
            .as_ref()
            .map_or((0, 0), |r| (r.at, r.log.end()));
        SessionError::Invalid(format!(
            "cannot {what} in the past (step {at} of {end} of the recording): goto({end}) returns to the present, record.stop() makes the present here"
        ))
    }
}

/// The kernel's "interrupted, make the call again" results (ERESTARTSYS, ERESTARTNOINTR,
/// ERESTARTNOHAND, ERESTART_RESTARTBLOCK), as rax holds them at the interrupt's stop.
fn is_restart(rax: u64) -> bool {
    matches!(rax as i64, -516 | -514 | -513 | -512)
}

/// The bytes at `[addr, addr + len)`: unreadable ones (a stack page not yet grown into, which
/// the store itself maps) read as the zeros a new anonymous page holds.
fn read_or_fresh(process: &dyn Target, addr: u64, len: u64) -> Vec<u8> {
    let mut buf = vec![0u8; len as usize];
    let n = process.read_memory_partial(addr, &mut buf);
    if n < buf.len() {
        buf[n..].fill(0);
    }
    buf
}

/// The part of `[addr, ...)` where `old` and `new` differ, as one store (both cut to the
/// shorter).
fn push_changed<'a>(
    out: &mut Vec<(u64, &'a [u8], &'a [u8])>,
    addr: u64,
    old: &'a [u8],
    new: &'a [u8],
) {
    let n = old.len().min(new.len());
    let (old, new) = (&old[..n], &new[..n]);
    let Some(first) = (0..n).find(|&i| old[i] != new[i]) else {
        return;
    };
    let last = (0..n).rev().find(|&i| old[i] != new[i]).unwrap_or(first);
    out.push((addr + first as u64, &old[first..=last], &new[first..=last]));
}

/// The 16-byte pieces of an XSAVE area that changed.
fn fp_diff(old: &[u8], new: &[u8], out: &mut Vec<(u32, [u8; 16], [u8; 16])>) {
    for (i, (o, n)) in old.chunks(16).zip(new.chunks(16)).enumerate() {
        if o != n {
            let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
            a[..o.len()].copy_from_slice(o);
            b[..n.len()].copy_from_slice(n);
            out.push(((i * 16) as u32, a, b));
        }
    }
}

fn final_text(stop: &Stop) -> String {
    match stop {
        Stop::Exited { code } => format!("exited with code {code}"),
        Stop::Killed { signal } => format!("killed by {}", signals::signal_name(*signal)),
        _ => "ended".into(),
    }
}
