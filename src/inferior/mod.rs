//! The traced process: its threads, its breakpoint sites, and the state machine that stops and
//! resumes them (all-stop: when one thread stops, every thread is stopped).

mod catch;
mod displaced;
mod events;
mod follow;
mod handlers;
mod hold;
mod inject;
mod lifecycle;
mod pinning;
mod points;
mod probes;
mod run;
mod run_alone;
mod sigtrap;
pub(crate) mod sites;
mod stop_all;
mod syscall_stops;
pub(crate) mod thread;
pub(crate) mod tree;
mod vanished;
mod waiting;

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use crate::os::debugregs::{self, Access};
use crate::os::memory::ProcMem;
use crate::os::regs::RawRegs;
use crate::os::timer::WaitAlarm;
use crate::os::{ptrace, OsError, Tid};

pub(crate) use catch::CatchMode;

/// Signals for which `pass(sig)` is true are delivered without a stop.
pub(crate) type PassFn<'a> = &'a dyn Fn(i32) -> bool;
use sites::Sites;
use thread::{RunState, Thread};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Spawned,
    Attached,
}

/// A signal stop's code where the backend cannot read the siginfo (a stub without
/// `qXfer:siginfo`): nothing is said of where the signal came from. Read as 0 (SI_USER) it
/// made every fault "sent by process 0".
pub(crate) const NO_SIGINFO: i32 = i32::MIN;

/// Why the process (or one of its threads) stopped, as the debugger reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Spawned and stopped at the program's entry point.
    Entry {
        tid: Tid,
    },
    /// Spawned and stopped at its first instruction: the dynamic loader's, before any
    /// library is mapped or any constructor has run.
    Loader {
        tid: Tid,
    },
    /// Attached and stopped wherever it was.
    Attached {
        tid: Tid,
    },
    /// A single step completed.
    Step {
        tid: Tid,
    },
    /// Stopped at a breakpoint site (pc equals `addr`, the int3 already undone).
    Breakpoint {
        tid: Tid,
        addr: u64,
    },
    /// A signal is about to be delivered to `tid` (it will be on the next resume).
    Signal {
        tid: Tid,
        signal: i32,
        /// Its siginfo's si_code; [`NO_SIGINFO`] where the backend has none.
        code: i32,
        fault_addr: u64,
    },
    /// The deadline passed and every thread was interrupted.
    Timeout {
        tid: Tid,
    },
    /// SIGINT/SIGTERM/SIGHUP reached scry: every thread was interrupted.
    Interrupted {
        tid: Tid,
    },
    /// The program called exec: a new image, every breakpoint is gone.
    Exec {
        tid: Tid,
    },
    /// The stepped thread exited (the process lives on).
    ThreadExit {
        tid: Tid,
    },
    /// A fork child was kept while the whole tree runs (`report_forks`): the session takes
    /// it into the run, which goes on.
    Forked {
        tid: Tid,
    },
    /// A new thread appeared (reported only when asked for: `report_threads`).
    ThreadStart {
        tid: Tid,
    },
    /// Hardware watchpoints fired (bit n = slot n); the access is done, pc is past it.
    Watchpoint {
        tid: Tid,
        slots: u8,
    },
    /// A caught system call: at its entry (`ret` is `None`) or its exit.
    Syscall {
        tid: Tid,
        nr: u64,
        args: [u64; 6],
        ret: Option<i64>,
    },
    Exited {
        code: i32,
    },
    Killed {
        signal: i32,
    },
    /// A run along a recording reached the end of what can be replayed that way (its start,
    /// or a step that cannot be taken back). Never from a live backend.
    HistoryEnd {
        tid: Tid,
    },
    /// The run's tick (see `Inferior::set_tick`): nothing stopped, every thread still runs;
    /// the caller reads what the program's probes wrote and continues.
    Tick,
}

impl Stop {
    pub fn tid(&self) -> Option<Tid> {
        match *self {
            Stop::Entry { tid }
            | Stop::Loader { tid }
            | Stop::Attached { tid }
            | Stop::Step { tid }
            | Stop::Breakpoint { tid, .. }
            | Stop::Signal { tid, .. }
            | Stop::Timeout { tid }
            | Stop::Interrupted { tid }
            | Stop::Exec { tid }
            | Stop::ThreadExit { tid }
            | Stop::Forked { tid }
            | Stop::Watchpoint { tid, .. }
            | Stop::Syscall { tid, .. }
            | Stop::ThreadStart { tid }
            | Stop::HistoryEnd { tid } => Some(tid),
            Stop::Exited { .. } | Stop::Killed { .. } | Stop::Tick => None,
        }
    }

    pub fn is_final(&self) -> bool {
        matches!(self, Stop::Exited { .. } | Stop::Killed { .. })
    }
}

/// Which stops a continue may report with only their own thread stopped, because listeners
/// will decide whether the run goes on: while they run, the other threads keep running, and
/// letting the run go on costs nothing for them (a logpoint in a process of a thousand
/// threads stops one thread per hit, not a thousand). A stop that ends the run stops every
/// thread before anyone sees it (`all_stop`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NonStop {
    pub breakpoint: bool,
    pub watchpoint: bool,
    pub signal: bool,
    pub syscall: bool,
}

impl NonStop {
    /// `own`: scry's own breakpoints (the dynamic loader's rendezvous, libc's sigaction,
    /// trap tracepoints),
    /// which scry handles itself and lets go at once (unless a user breakpoint is there
    /// too, which the caller then reports).
    fn covers(&self, stop: &Stop, own: impl Fn(u64) -> bool) -> bool {
        match stop {
            Stop::Breakpoint { addr, .. } if own(*addr) => true,
            Stop::Breakpoint { .. } => self.breakpoint,
            Stop::Watchpoint { .. } => self.watchpoint,
            Stop::Signal { .. } => self.signal,
            Stop::Syscall { .. } => self.syscall,
            _ => false,
        }
    }
}

/// What happens at a `fork` (gdb's follow-fork-mode and detach-on-fork).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FollowFork {
    /// Keep debugging the parent; the child is cleaned and let go.
    #[default]
    Parent,
    /// Follow the child; the parent is cleaned and let go.
    Child,
    /// Keep both: the parent goes on, the child is held (stopped) until it is selected.
    Both,
}

impl FollowFork {
    pub fn name(self) -> &'static str {
        match self {
            FollowFork::Parent => "parent",
            FollowFork::Child => "child",
            FollowFork::Both => "both",
        }
    }

    pub fn parse(text: &str) -> Option<FollowFork> {
        match text {
            "parent" => Some(FollowFork::Parent),
            "child" => Some(FollowFork::Child),
            "both" => Some(FollowFork::Both),
            _ => None,
        }
    }
}

pub(crate) struct Inferior {
    pid: Tid,
    origin: Origin,
    threads: BTreeMap<Tid, Thread>,
    selected: Tid,
    mem: ProcMem,
    sites: Sites,
    /// Tracepoints' jumps in the program's code (see `probes`).
    jumps: probes::Jumps,
    alarm: WaitAlarm,
    /// Stops other threads reported while everything was being stopped; handed out, in
    /// order, before anything runs again.
    queued: VecDeque<Stop>,
    dead: bool,
    /// Armed hardware watchpoints, by debug register slot, and the DR7 that arms them.
    watch: [Option<WatchSlot>; debugregs::SLOTS],
    dr7: u64,
    /// Report thread creation and exit as stops during a continue.
    pub report_threads: bool,
    /// Report each fork child kept as a [`Stop::Forked`] (a run of the whole tree).
    pub report_forks: bool,
    /// What a fork does (see `FollowFork`).
    pub follow_fork: FollowFork,
    /// Fork children kept under control (`FollowFork::Both`), not yet handed to the session.
    forked: Vec<Inferior>,
    /// Fork children let go untraced instead (the process limit, or keeping one failed),
    /// each with why, not yet handed to the session.
    let_go: Vec<(Tid, String)>,
    /// At most this many processes under control (`config.max_processes`).
    pub(crate) process_limit: usize,
    /// Fork children whose first stop came before their parent's fork event: they wait,
    /// stopped, for that event (see `collect_child`).
    early_children: Vec<Tid>,
    /// A fork followed since the last report: (parent, child).
    followed: Option<(Tid, Tid)>,
    /// Sites whose int3 is out of memory while a vfork child shares it.
    lifted_for_vfork: Vec<u64>,
    /// The deadline of the run in progress (the alarm is shared with stop-all's waits).
    run_deadline: Option<Instant>,
    /// When a continue's wait gives way for a while, the program running on (see
    /// `set_tick`), and whether the last one did (the next continue only waits again).
    tick: Option<Instant>,
    ticked: bool,
    /// Sites the session handles itself and lets go at once (trap tracepoints): reported
    /// with only their thread stopped.
    quiet_sites: std::collections::BTreeSet<u64>,
    /// Same-core placement during a run of steps (see `pinning`).
    pinning: Option<pinning::Pinning>,
    /// Where a `syscall` instruction is, for injected calls (see `inject`).
    syscall_gadget: Option<u64>,
    /// The program's SIGTRAP disposition to keep during this run (see `sigtrap`).
    trap_guard: Option<sigtrap::TrapGuard>,
    /// A step that delivers a signal the program handles runs the handler through first
    /// (see `handlers`): stepping by lines.
    pub(crate) run_handlers: bool,
    /// The program's own SIGTRAP actions, followed as it sets them (see `sigtrap`).
    sigaction: sigtrap::SigactionWatch,
    /// A stop was reported with only its own thread stopped (the others run on while
    /// listeners decide): that thread. See `NonStop`.
    partial: Option<Tid>,
    /// Resumed by `launch` (a run of the whole tree): its threads run until `all_stop`.
    launched: bool,
    /// Where displaced copies run (the program's entry point), once looked up.
    scratch: Option<u64>,
    /// The dynamic loader's rendezvous (`_dl_debug_state`), where scry keeps a breakpoint of
    /// its own to learn of every library load and unload.
    rendezvous: Option<u64>,
    /// Which system calls are caught, and how (see `catch`).
    catch: catch::Catch,
    /// Breakpoint sites held in a debug register (an execute watch) instead of an int3, by
    /// address: the slot. Their code stays the program's own, byte for byte.
    hw_sites: BTreeMap<u64, usize>,
    /// Never write the program's memory (`--read-only`): a site is a debug register or
    /// nothing, and no debug register is taken from a breakpoint for a watchpoint.
    pub read_only: bool,
    /// Breakpoint sites removed while some thread ran (gdb's moribund locations): a thread
    /// may have executed the int3 already and report it late. Such a trap is scry's, undone
    /// and never delivered. Forgotten once every thread has been stopped and its queued
    /// traps taken.
    moribund: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WatchSlot {
    pub addr: u64,
    pub len: u64,
    pub access: Access,
}

impl Inferior {
    fn new(pid: Tid, origin: Origin, tids: &[Tid]) -> Result<Self, OsError> {
        let threads = tids.iter().map(|&t| (t, Thread::new_stopped(t))).collect();
        // What can fail (file descriptors and timers run out under a fork bomb) comes before
        // the registration: a process that is not made is not counted as controlled.
        let mem = ProcMem::open(pid)?;
        let alarm = WaitAlarm::for_current_thread()?;
        tree::register(pid);
        Ok(Inferior {
            pid,
            origin,
            threads,
            selected: pid,
            mem,
            sites: Sites::default(),
            jumps: Default::default(),
            alarm,
            queued: VecDeque::new(),
            dead: false,
            watch: [None; debugregs::SLOTS],
            dr7: 0,
            report_threads: false,
            report_forks: false,
            follow_fork: FollowFork::Parent,
            forked: Vec::new(),
            let_go: Vec::new(),
            process_limit: usize::MAX,
            early_children: Vec::new(),
            followed: None,
            lifted_for_vfork: Vec::new(),
            pinning: None,
            syscall_gadget: None,
            trap_guard: None,
            run_handlers: false,
            sigaction: Default::default(),
            partial: None,
            launched: false,
            scratch: None,
            rendezvous: None,
            catch: catch::Catch::default(),
            run_deadline: None,
            tick: None,
            ticked: false,
            quiet_sites: Default::default(),
            moribund: Vec::new(),
            hw_sites: BTreeMap::new(),
            read_only: false,
        })
    }

    pub(crate) fn pid(&self) -> Tid {
        self.pid
    }

    pub(crate) fn origin(&self) -> Origin {
        self.origin
    }

    pub(crate) fn is_dead(&self) -> bool {
        self.dead
    }

    /// Stops are waiting to be reported (possibly the process's own end).
    pub(crate) fn has_queued(&self) -> bool {
        !self.queued.is_empty()
    }

    /// The watchpoint hits waiting to be reported: each thread and its fired registers.
    pub(crate) fn queued_watch_hits(&self) -> Vec<(Tid, u8)> {
        self.queued
            .iter()
            .filter_map(|s| match *s {
                Stop::Watchpoint { tid, slots } => Some((tid, slots)),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn selected(&self) -> Tid {
        self.selected
    }

    pub(crate) fn select(&mut self, tid: Tid) -> bool {
        if self.threads.contains_key(&tid) {
            self.selected = tid;
            true
        } else {
            false
        }
    }

    /// The signal the next resume of `tid` delivers (0 for none).
    pub(crate) fn pending_signal(&self, tid: Tid) -> i32 {
        match self.threads.get(&tid) {
            Some(t) if t.stop_kind == thread::StopKind::Signal => t.pending_signal,
            _ => 0,
        }
    }

    pub(crate) fn clear_pending_signal(&mut self, tid: Tid) {
        if let Some(t) = self.threads.get_mut(&tid) {
            t.pending_signal = 0;
        }
    }

    pub(crate) fn thread_ids(&self) -> Vec<Tid> {
        self.threads.keys().copied().collect()
    }

    /// Registers of `tid`, read once per stop.
    pub(crate) fn regs(&mut self, tid: Tid) -> Result<&RawRegs, OsError> {
        let thread = self.threads.get_mut(&tid).ok_or(OsError::Ptrace {
            what: "getregs",
            tid,
            errno: nix::Error::ESRCH,
        })?;
        if let Some(why) = &thread.stuck {
            return Err(OsError::ThreadUnavailable(format!(
                "thread {tid} did not stop: {why}; it can be inspected once the kernel lets it go (select another thread meanwhile)"
            )));
        }
        if thread.state == RunState::Running && thread.regs.is_none() {
            return Err(OsError::ThreadUnavailable(format!(
                "thread {tid} is running: inside a listener of a run that may go on, only the event's thread is stopped (return 'stop' to stop every thread)"
            )));
        }
        if thread.regs.is_none() {
            thread.regs = Some(ptrace::get_regs(tid)?);
        }
        Ok(thread.regs.as_ref().expect("just filled"))
    }

    pub(crate) fn set_regs(&mut self, tid: Tid, regs: &RawRegs) -> Result<(), OsError> {
        ptrace::set_regs(tid, regs)?;
        if let Some(thread) = self.threads.get_mut(&tid) {
            thread.regs = Some(*regs);
        }
        Ok(())
    }

    /// Writes `regs` into `tid` and returns what the kernel kept: it silently masks what a
    /// program may not set (eflags' reserved and privileged bits, for one), and what is read
    /// later must be that, not what was asked.
    pub(crate) fn set_regs_read_back(
        &mut self,
        tid: Tid,
        regs: &RawRegs,
    ) -> Result<RawRegs, OsError> {
        self.forbid_if_read_only("write a register")?;
        ptrace::set_regs(tid, regs)?;
        let kept = ptrace::get_regs(tid)?;
        if let Some(thread) = self.threads.get_mut(&tid) {
            thread.regs = Some(kept);
        }
        Ok(kept)
    }

    /// `tid`'s registers if they were read since it stopped.
    pub(crate) fn regs_read(&self, tid: Tid) -> Option<RawRegs> {
        self.threads.get(&tid)?.regs
    }

    pub(crate) fn pc(&mut self, tid: Tid) -> Result<u64, OsError> {
        Ok(self.regs(tid)?.rip)
    }

    fn set_pc(&mut self, tid: Tid, pc: u64) -> Result<(), OsError> {
        let mut regs = *self.regs(tid)?;
        regs.rip = pc;
        self.set_regs(tid, &regs)
    }

    /// Reads target memory as the program sees it on disk: breakpoint bytes are hidden.
    pub(crate) fn read_memory(&self, addr: u64, buf: &mut [u8]) -> Result<(), OsError> {
        self.mem.read(addr, buf)?;
        self.sites.unpatch(addr, buf);
        self.jumps.unpatch(addr, buf);
        Ok(())
    }

    /// Like [`read_memory`](Self::read_memory) but stops at the first unreadable byte.
    pub(crate) fn read_memory_partial(&self, addr: u64, buf: &mut [u8]) -> usize {
        let n = self.mem.read_partial(addr, buf);
        self.sites.unpatch(addr, &mut buf[..n]);
        self.jumps.unpatch(addr, &mut buf[..n]);
        n
    }

    /// The code at `addr` as the processor will run it: int3 bytes hidden, tracepoints'
    /// jumps not (a step over a breakpoint at a jump runs the jump).
    pub(crate) fn read_code_partial(&self, addr: u64, buf: &mut [u8]) -> usize {
        let n = self.mem.read_partial(addr, buf);
        self.sites.unpatch(addr, &mut buf[..n]);
        n
    }

    /// The one check of `--read-only` at the boundary with the program: every write to its
    /// memory (int3 bytes included), its registers (but for what it cannot see, RF), its
    /// life (kill) and every call injected into it comes through here.
    pub(crate) fn forbid_if_read_only(&self, what: &str) -> Result<(), OsError> {
        if self.read_only {
            return Err(OsError::ReadOnly(format!(
                "read-only session: cannot {what} (--read-only leaves the program's memory, registers and life as they are)"
            )));
        }
        Ok(())
    }

    /// Writes target memory; bytes under a breakpoint become its saved original instead.
    pub(crate) fn write_memory(&mut self, addr: u64, bytes: &[u8]) -> Result<(), OsError> {
        self.forbid_if_read_only("write memory")?;
        let end = addr.saturating_add(bytes.len() as u64);
        if let Some((site, b)) = self
            .jumps
            .all()
            .find(|(s, b)| *s < end && s + b.len() as u64 > addr)
        {
            return Err(OsError::Injected(format!(
                "{:#x}..{:#x} holds a tracepoint's jump: remove the tracepoint before writing there",
                site,
                site + b.len() as u64
            )));
        }
        let mut buf = bytes.to_vec();
        self.sites.patch_write(addr, &mut buf);
        self.mem.write(addr, &buf)
    }

    fn running_tids(&self) -> Vec<Tid> {
        self.threads
            .values()
            .filter(|t| t.state == RunState::Running)
            .map(|t| t.tid)
            .collect()
    }

    /// Running threads a stop-all still waits for (not known to be stuck in the kernel).
    fn awaited_tids(&self) -> Vec<Tid> {
        self.threads
            .values()
            .filter(|t| t.state == RunState::Running && t.stuck.is_none())
            .map(|t| t.tid)
            .collect()
    }

    /// The job-control signal that stopped every thread (the process waits for SIGCONT), if
    /// it is stopped that way.
    pub(crate) fn job_stopped(&self) -> Option<i32> {
        let first = self.threads.values().next()?.group_stop?;
        self.threads
            .values()
            .all(|t| t.group_stop.is_some())
            .then_some(first)
    }

    /// Whether `tid` is running (inside a listener of a run that may go on).
    pub(crate) fn is_running(&self, tid: Tid) -> bool {
        self.threads
            .get(&tid)
            .is_some_and(|t| t.state == RunState::Running)
    }

    /// Why `tid` could not be stopped, if it could not.
    pub(crate) fn stuck_reason(&self, tid: Tid) -> Option<&str> {
        self.threads.get(&tid)?.stuck.as_deref()
    }
}
