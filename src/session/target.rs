//! The live-process contract: what the session and the runner ask of a backend that runs the
//! program, beyond what inspection reads ([`ProcessView`]). The ptrace inferior is the one
//! backend today; a GDB-remote stub and a recording's replay are the next, each implementing
//! this trait (delve's `Process`), so the session, `state` and the runner never name a
//! backend. A core file is not one of them: it implements only [`ProcessView`], and the
//! session refuses, naming the core, whatever would run or write it.
//!
//! What it is not: a place for policy. Which signals pass, which stops a listener decides on,
//! how a line is stepped and what a stop shows are the session's and the runner's; a backend
//! resumes, stops, reads, writes and reports raw [`Stop`]s.

use std::time::Instant;

use crate::inferior::{CatchMode, FollowFork, Inferior, NonStop, Origin, PassFn, Stop, WatchSlot};
use crate::os::fpregs::FpRegs;
use crate::os::regs::RawRegs;
use crate::os::syscalls::render::Captured;
use crate::os::syscalls::SysSet;
use crate::os::wait::WaitEvent;
use crate::os::{OsError, Tid};

use super::backend::ProcessView;

/// A live process under the debugger's control.
pub(crate) trait Target: ProcessView {
    // ---- what it is ---------------------------------------------------------------------
    fn origin(&self) -> Origin;
    /// The process runs on this machine: its pid is one of this kernel's, so `/proc/PID`
    /// here describes it (false for a stub's process, whose pid is another machine's).
    fn is_local(&self) -> bool;
    /// The process ended (its end may still be queued: [`Target::has_queued`]).
    fn is_dead(&self) -> bool;
    /// Stops are queued to be reported before the process's end.
    fn has_queued(&self) -> bool;
    /// The watchpoint hits of other threads waiting to be reported (thread, fired registers):
    /// writes made at about the same time as the one being reported.
    fn queued_watch_hits(&self) -> Vec<(Tid, u8)> {
        Vec::new()
    }
    /// Thread `tid`, stopped on a breakpoint's address without having hit it (a watch trap
    /// after the instruction before), is taken as having hit it: resumed, it runs the
    /// instruction instead of trapping there again (a hit reported twice).
    fn take_as_hit(&mut self, _tid: Tid) {}
    /// Why the process can no longer be reached though it was not seen to end (a remote
    /// stub that closed the connection or stopped answering): what "no live process" says.
    fn lost(&self) -> Option<String> {
        None
    }
    /// The process still exists (a held one may be killed from outside).
    fn still_there(&self) -> bool;
    fn thread_count(&self) -> usize;
    /// Writes are refused and breakpoints use debug registers (`--read-only`).
    fn set_read_only(&mut self, on: bool);
    /// Thread starts and exits are reported as stops.
    fn set_report_threads(&mut self, on: bool);
    fn set_follow_fork(&mut self, follow: FollowFork);
    /// At most `limit` processes under control: a fork child beyond is let go.
    fn set_process_limit(&mut self, limit: usize);
    /// Fork children kept are reported as `Stop::Forked` (a run of the whole tree).
    fn set_report_forks(&mut self, on: bool);

    // ---- running ------------------------------------------------------------------------
    /// Starts a run that ends by `deadline` (one continue or a batch of steps).
    fn arm(&mut self, deadline: Instant);
    /// Ends a run: every thread stopped again.
    fn disarm(&mut self, pass: PassFn);
    /// Stops every thread (a listener may have let the others run).
    fn all_stop(&mut self, pass: PassFn) -> Result<(), OsError>;
    /// Resumes until a stop worth reporting or the deadline.
    fn cont(&mut self, deadline: Instant, pass: PassFn, nonstop: NonStop) -> Result<Stop, OsError>;
    /// One instruction of the selected thread.
    fn step(&mut self, deadline: Instant, pass: PassFn) -> Result<Stop, OsError>;
    /// Steps by lines from now on (`on`) or by instructions: a step that delivers a signal
    /// the program handles runs the handler through first where the backend can.
    fn steps_by_lines(&mut self, _on: bool) {}
    /// Runs the selected thread alone to `addr` (a `rep` string instruction in one go):
    /// `Step` when it got there, another stop if one came first, `None` when the backend
    /// cannot (the caller steps instead).
    fn run_thread_to(
        &mut self,
        addr: u64,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Option<Stop>, OsError> {
        let _ = (addr, deadline, pass);
        Ok(None)
    }
    /// Resumes every thread for a run of several processes, which waits for their events
    /// itself; a stop that comes first is returned instead.
    fn launch(&mut self, deadline: Instant, pass: PassFn) -> Result<Option<Stop>, OsError>;
    /// Whether an event a run of several processes waited for is this process's.
    fn owns(&self, event: &WaitEvent) -> bool;
    /// It was launched for a run of several processes and not stopped since by scry (a stop
    /// it reported still leaves it launched until the run stops it or goes on).
    fn is_launched(&self) -> bool {
        false
    }
    /// Its end, taken by another process's wait and kept for it (see `inferior::tree`).
    fn take_kept_end(&mut self, _pass: PassFn) -> Option<Stop> {
        None
    }
    /// Books such an event: the stop it is (every thread then stopped), or `None`.
    fn take_event(&mut self, event: WaitEvent, pass: PassFn) -> Result<Option<Stop>, OsError>;
    /// Forgets the signal `tid` stopped with: it is not delivered on resume.
    fn clear_pending_signal(&mut self, tid: Tid);
    /// The signal `tid`'s next resume delivers (0 for none).
    fn pending_signal(&self, tid: Tid) -> i32;
    /// The stop signal that stopped the whole program (job control), if any.
    fn job_stopped(&self) -> Option<i32>;
    /// A fork child now followed in the parent's place: (parent, child).
    fn take_followed(&mut self) -> Option<(Tid, Tid)>;
    /// Fork children kept under control since the last call, each a target of its own.
    fn take_forked(&mut self) -> Vec<Box<dyn Target>>;
    /// Fork children let go untraced instead of kept since the last call, each with why.
    fn take_let_go(&mut self) -> Vec<(Tid, String)>;
    /// Makes this a held process: every thread stopped, no breakpoint or debug register of
    /// the debugger's left in it.
    fn hold(&mut self, pass: PassFn) -> Result<(), OsError>;
    /// What the backend could not do for this process that answers would otherwise hide
    /// (a module left out), one line each.
    fn problems(&self) -> Vec<String> {
        Vec::new()
    }
    /// Gives back a stop taken from this process, to be reported by its next run (a
    /// breakpoint hit is undone instead: it happens again).
    fn requeue(&mut self, _stop: Stop) {}
    fn kill(&mut self) -> Result<Stop, OsError>;
    /// Lets the process go, its code and debug registers as without the debugger; a note
    /// about what stays behind for its life, if anything.
    fn detach(&mut self) -> Result<Option<String>, OsError>;

    // ---- registers and memory -----------------------------------------------------------
    fn pc(&mut self, tid: Tid) -> Result<u64, OsError>;
    /// Writes `tid`'s registers; what the kernel kept.
    fn set_regs_read_back(&mut self, tid: Tid, regs: &RawRegs) -> Result<RawRegs, OsError>;
    fn write_memory(&mut self, addr: u64, bytes: &[u8]) -> Result<(), OsError>;
    /// Writes `tid`'s floating-point and vector state whole.
    fn set_fp_regs(&mut self, tid: Tid, regs: &FpRegs) -> Result<(), OsError>;
    /// Maps private anonymous memory at `addr` again with `data` at `data_at` in it and
    /// protection `prot` (going back past a munmap); a backend that cannot says why.
    fn restore_mapping(
        &mut self,
        addr: u64,
        len: u64,
        prot: u64,
        data_at: u64,
        data: &[u8],
    ) -> Result<(), OsError> {
        let _ = (addr, len, prot, data_at, data);
        Err(OsError::Injected(
            "this target cannot map memory again".into(),
        ))
    }
    /// Unmaps `[addr, addr + len)` (replaying a munmap).
    fn unmap(&mut self, addr: u64, len: u64) -> Result<(), OsError> {
        let _ = (addr, len);
        Err(OsError::Injected("this target cannot unmap memory".into()))
    }

    // ---- breakpoint sites ---------------------------------------------------------------
    /// An internal site (the debugger's own: the loader's rendezvous, a run's temporary
    /// breakpoints). Idempotent.
    fn insert_site(&mut self, addr: u64) -> Result<(), OsError>;
    /// A user's breakpoint; `hardware` forces or forbids a debug register.
    fn insert_user_site(&mut self, addr: u64, hardware: Option<bool>) -> Result<(), OsError>;
    fn remove_site(&mut self, addr: u64) -> Result<(), OsError>;
    /// Drops a site whose code is gone (an unloaded library) without writing.
    fn forget_site(&mut self, addr: u64);
    /// Whether the site at `addr` is a debug register, if there is one.
    fn site_is_hardware(&self, addr: u64) -> Option<bool>;
    /// The program wrote over the site's int3.
    fn site_overwritten(&self, addr: u64) -> bool;

    // ---- watchpoints --------------------------------------------------------------------
    fn free_watch_slot(&mut self) -> Option<usize>;
    fn set_watch(&mut self, slot: usize, watch: WatchSlot) -> Result<(), OsError>;
    fn clear_watch(&mut self, slot: usize);
    /// Where the C library's `sigaction` is, so the backend keeps a SIGTRAP action set
    /// mid-run (see `inferior::sigtrap`).
    fn watch_sigaction(&mut self, addr: u64) -> Result<(), OsError>;
    fn sigaction_site(&self) -> Option<u64>;

    // ---- the dynamic loader -------------------------------------------------------------
    fn rendezvous(&self) -> Option<u64>;
    fn set_rendezvous(&mut self, addr: u64) -> Result<(), OsError>;

    // ---- system calls -------------------------------------------------------------------
    /// The calls to report at entry and at exit (applied at the next resume).
    fn set_syscall_catch(&mut self, entry: SysSet, exit: SysSet);
    /// How caught calls are made to stop, and why not the fastest way, if not.
    fn syscall_catch_mode(&self) -> (CatchMode, Option<String>);
    /// What the latest syscall stop of `tid` read from memory at the call's entry.
    fn syscall_capture(&self, tid: Tid) -> &[(usize, Captured)];
    fn take_syscall_warnings(&mut self) -> Vec<String>;
    /// Whether the backend may set no_new_privs in the program to install a filter.
    fn allow_no_new_privs(&mut self, allowed: bool);
    /// Catch calls without a filter in the program, saying why.
    fn forbid_seccomp(&mut self, why: &str);

    // ---- probes inside the program (tracepoints) ------------------------------------------
    /// A continue's wait gives way at `at` with [`Stop::Tick`], the program running on.
    fn set_tick(&mut self, at: Option<Instant>) {
        let _ = at;
    }
    /// A site the session handles and lets go at once (a trap tracepoint's): reported with
    /// only its thread stopped, as listeners' stops are.
    fn set_quiet_site(&mut self, addr: u64, on: bool) {
        let _ = (addr, on);
    }
    /// What puts probes into the program, if this backend can.
    fn probes(&mut self) -> Option<&mut dyn ProbeHost> {
        None
    }
}

/// A backend that can put a probe's code and ring into the program (see `x86::probe`).
pub(crate) trait ProbeHost {
    fn pid(&self) -> Tid;
    /// A ring of `len` bytes shared with scry: its address in the program, and scry's view.
    fn map_ring(&mut self, len: u64) -> Result<(u64, crate::os::shared::SharedMem), OsError>;
    /// `len` bytes of fresh memory within a 32-bit jump of `site`.
    fn alloc_near(&mut self, site: u64, len: u64) -> Result<u64, OsError>;
    /// Code written at `at`, then made executable.
    fn write_code(&mut self, at: u64, code: &[u8]) -> Result<(), OsError>;
    /// The jump at `site` over `covered` bytes (threads inside them moved out first).
    fn patch_jump(&mut self, site: u64, jump: &[u8], covered: usize) -> Result<(), OsError>;
    /// The original bytes back at `site`.
    fn unpatch_jump(&mut self, site: u64) -> Result<(), OsError>;
    /// Forgets the jump at `site` without writing: its code is gone (an unloaded library).
    fn forget_jump(&mut self, site: u64);
    /// Whether a thread's pc is in `range`.
    fn pc_inside(&mut self, range: std::ops::Range<u64>) -> bool;
    /// One single step of `tid` inside a probe, every other thread stopped; false (nothing
    /// done) when it has a signal to take, or the step ended in another stop (kept for
    /// the next report).
    fn step_in_probe(&mut self, tid: Tid) -> Result<bool, OsError>;
    /// Whether the program runs under a seccomp filter that is not scry's (which could
    /// refuse, or kill the program for, the system calls a probe makes).
    fn foreign_seccomp(&self) -> bool;
    /// The process's threads by the ids they have in their own pid namespace (what a probe's
    /// `gettid` records), when that is not scry's: (inside, scry's).
    fn namespace_ids(&self) -> Vec<(Tid, Tid)>;
    fn unmap(&mut self, addr: u64, len: u64) -> Result<(), OsError>;
    /// Whether a thread can run the system calls putting a probe in takes now.
    fn can_inject(&self) -> bool;
}

impl ProbeHost for Inferior {
    fn pid(&self) -> Tid {
        Inferior::pid(self)
    }
    fn can_inject(&self) -> bool {
        Inferior::can_inject(self)
    }
    fn map_ring(&mut self, len: u64) -> Result<(u64, crate::os::shared::SharedMem), OsError> {
        Inferior::map_ring(self, len)
    }
    fn alloc_near(&mut self, site: u64, len: u64) -> Result<u64, OsError> {
        Inferior::alloc_near(self, site, len)
    }
    fn write_code(&mut self, at: u64, code: &[u8]) -> Result<(), OsError> {
        Inferior::write_code(self, at, code)
    }
    fn patch_jump(&mut self, site: u64, jump: &[u8], covered: usize) -> Result<(), OsError> {
        Inferior::patch_jump(self, site, jump, covered)
    }
    fn unpatch_jump(&mut self, site: u64) -> Result<(), OsError> {
        Inferior::unpatch_jump(self, site)
    }
    fn forget_jump(&mut self, site: u64) {
        Inferior::forget_jump(self, site)
    }
    fn pc_inside(&mut self, range: std::ops::Range<u64>) -> bool {
        Inferior::pc_inside(self, range)
    }
    fn step_in_probe(&mut self, tid: Tid) -> Result<bool, OsError> {
        Inferior::step_in_probe(self, tid)
    }
    fn foreign_seccomp(&self) -> bool {
        Inferior::foreign_seccomp(self)
    }
    fn namespace_ids(&self) -> Vec<(Tid, Tid)> {
        let pid = Inferior::pid(self);
        self.thread_ids()
            .into_iter()
            .filter_map(|tid| Some((crate::os::procfs::id_in_namespace(pid, tid)?, tid)))
            .collect()
    }
    fn unmap(&mut self, addr: u64, len: u64) -> Result<(), OsError> {
        Inferior::unmap(self, addr, len)
    }
}

/// The native backend: ptrace, this machine's kernel.
impl Target for Inferior {
    fn origin(&self) -> Origin {
        Inferior::origin(self)
    }

    fn is_local(&self) -> bool {
        true
    }
    fn is_dead(&self) -> bool {
        Inferior::is_dead(self)
    }
    fn has_queued(&self) -> bool {
        Inferior::has_queued(self)
    }
    fn queued_watch_hits(&self) -> Vec<(Tid, u8)> {
        Inferior::queued_watch_hits(self)
    }
    fn take_as_hit(&mut self, tid: Tid) {
        Inferior::take_as_hit(self, tid)
    }
    fn still_there(&self) -> bool {
        Inferior::still_there(self)
    }
    fn thread_count(&self) -> usize {
        Inferior::thread_count(self)
    }
    fn set_read_only(&mut self, on: bool) {
        self.read_only = on;
    }
    fn set_report_threads(&mut self, on: bool) {
        self.report_threads = on;
    }
    fn set_report_forks(&mut self, on: bool) {
        self.report_forks = on;
    }
    fn set_follow_fork(&mut self, follow: FollowFork) {
        self.follow_fork = follow;
    }
    fn set_process_limit(&mut self, limit: usize) {
        self.process_limit = limit;
    }

    fn arm(&mut self, deadline: Instant) {
        Inferior::arm(self, deadline)
    }
    fn disarm(&mut self, pass: PassFn) {
        Inferior::disarm(self, pass)
    }
    fn all_stop(&mut self, pass: PassFn) -> Result<(), OsError> {
        Inferior::all_stop(self, pass)
    }
    fn cont(&mut self, deadline: Instant, pass: PassFn, nonstop: NonStop) -> Result<Stop, OsError> {
        Inferior::cont(self, deadline, pass, nonstop)
    }
    fn run_thread_to(
        &mut self,
        addr: u64,
        deadline: Instant,
        pass: PassFn,
    ) -> Result<Option<Stop>, OsError> {
        Inferior::run_thread_to(self, addr, deadline, pass)
    }
    fn step(&mut self, deadline: Instant, pass: PassFn) -> Result<Stop, OsError> {
        Inferior::step(self, deadline, pass)
    }
    fn steps_by_lines(&mut self, on: bool) {
        self.run_handlers = on;
    }
    fn is_launched(&self) -> bool {
        Inferior::is_launched(self)
    }
    fn take_kept_end(&mut self, pass: PassFn) -> Option<Stop> {
        Inferior::take_kept_end(self, pass)
    }
    fn launch(&mut self, deadline: Instant, pass: PassFn) -> Result<Option<Stop>, OsError> {
        Inferior::launch(self, deadline, pass)
    }
    fn owns(&self, event: &WaitEvent) -> bool {
        Inferior::owns(self, event)
    }
    fn take_event(&mut self, event: WaitEvent, pass: PassFn) -> Result<Option<Stop>, OsError> {
        Inferior::take_event(self, event, pass)
    }
    fn clear_pending_signal(&mut self, tid: Tid) {
        Inferior::clear_pending_signal(self, tid)
    }
    fn pending_signal(&self, tid: Tid) -> i32 {
        Inferior::pending_signal(self, tid)
    }
    fn job_stopped(&self) -> Option<i32> {
        Inferior::job_stopped(self)
    }
    fn take_followed(&mut self) -> Option<(Tid, Tid)> {
        Inferior::take_followed(self)
    }
    fn take_forked(&mut self) -> Vec<Box<dyn Target>> {
        Inferior::take_forked(self)
            .into_iter()
            .map(|child| Box::new(child) as Box<dyn Target>)
            .collect()
    }
    fn take_let_go(&mut self) -> Vec<(Tid, String)> {
        Inferior::take_let_go(self)
    }
    fn hold(&mut self, pass: PassFn) -> Result<(), OsError> {
        Inferior::hold(self, pass)
    }
    fn requeue(&mut self, stop: Stop) {
        Inferior::requeue(self, stop)
    }
    fn kill(&mut self) -> Result<Stop, OsError> {
        Inferior::kill(self)
    }
    fn detach(&mut self) -> Result<Option<String>, OsError> {
        Inferior::detach(self)
    }

    fn pc(&mut self, tid: Tid) -> Result<u64, OsError> {
        Inferior::pc(self, tid)
    }
    fn set_regs_read_back(&mut self, tid: Tid, regs: &RawRegs) -> Result<RawRegs, OsError> {
        Inferior::set_regs_read_back(self, tid, regs)
    }
    fn set_fp_regs(&mut self, tid: Tid, regs: &FpRegs) -> Result<(), OsError> {
        crate::os::fpregs::set(tid, regs)
    }

    fn restore_mapping(
        &mut self,
        addr: u64,
        len: u64,
        prot: u64,
        data_at: u64,
        data: &[u8],
    ) -> Result<(), OsError> {
        Inferior::restore_mapping(self, addr, len, prot, data_at, data)
    }
    fn unmap(&mut self, addr: u64, len: u64) -> Result<(), OsError> {
        Inferior::unmap(self, addr, len)
    }
    fn write_memory(&mut self, addr: u64, bytes: &[u8]) -> Result<(), OsError> {
        Inferior::write_memory(self, addr, bytes)
    }

    fn insert_site(&mut self, addr: u64) -> Result<(), OsError> {
        Inferior::insert_site(self, addr)
    }
    fn insert_user_site(&mut self, addr: u64, hardware: Option<bool>) -> Result<(), OsError> {
        Inferior::insert_user_site(self, addr, hardware)
    }
    fn remove_site(&mut self, addr: u64) -> Result<(), OsError> {
        Inferior::remove_site(self, addr)
    }
    fn forget_site(&mut self, addr: u64) {
        Inferior::forget_site(self, addr)
    }
    fn site_is_hardware(&self, addr: u64) -> Option<bool> {
        Inferior::site_is_hardware(self, addr)
    }
    fn site_overwritten(&self, addr: u64) -> bool {
        Inferior::site_overwritten(self, addr)
    }

    fn free_watch_slot(&mut self) -> Option<usize> {
        Inferior::free_watch_slot(self)
    }
    fn set_watch(&mut self, slot: usize, watch: WatchSlot) -> Result<(), OsError> {
        Inferior::set_watch(self, slot, watch)
    }
    fn clear_watch(&mut self, slot: usize) {
        Inferior::clear_watch(self, slot)
    }
    fn watch_sigaction(&mut self, addr: u64) -> Result<(), OsError> {
        Inferior::watch_sigaction(self, addr)
    }
    fn sigaction_site(&self) -> Option<u64> {
        Inferior::sigaction_site(self)
    }

    fn rendezvous(&self) -> Option<u64> {
        Inferior::rendezvous(self)
    }
    fn set_rendezvous(&mut self, addr: u64) -> Result<(), OsError> {
        Inferior::set_rendezvous(self, addr)
    }

    fn set_syscall_catch(&mut self, entry: SysSet, exit: SysSet) {
        Inferior::set_syscall_catch(self, entry, exit)
    }
    fn syscall_catch_mode(&self) -> (CatchMode, Option<String>) {
        Inferior::syscall_catch_mode(self)
    }
    fn syscall_capture(&self, tid: Tid) -> &[(usize, Captured)] {
        Inferior::syscall_capture(self, tid)
    }
    fn take_syscall_warnings(&mut self) -> Vec<String> {
        Inferior::take_syscall_warnings(self)
    }
    fn allow_no_new_privs(&mut self, allowed: bool) {
        Inferior::allow_no_new_privs(self, allowed)
    }
    fn forbid_seccomp(&mut self, why: &str) {
        Inferior::forbid_seccomp(self, why)
    }
    fn set_tick(&mut self, at: Option<Instant>) {
        Inferior::set_tick(self, at)
    }
    fn set_quiet_site(&mut self, addr: u64, on: bool) {
        Inferior::set_quiet_site(self, addr, on)
    }
    fn probes(&mut self) -> Option<&mut dyn ProbeHost> {
        Some(self)
    }
}
