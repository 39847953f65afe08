//! Fork and vfork children of the remote process (`fork-events`, `vfork-events`). A stub
//! that reports them holds the new child stopped with scry's breakpoints in it (its copy of
//! the parent's memory, and the stub's copy of its breakpoint list); a stub that does not
//! lets the child go with them in, and the child's first hit kills it with SIGTRAP. So
//! every child is cleaned (`z` through one of its threads) before it is let go (`D;PID`),
//! as gdb does, or followed in the parent's place (`follow_fork = 'child'`, whose parent is
//! cleaned and let go instead).
//!
//! A vfork child runs in its parent's memory until it execs or exits: the software
//! breakpoints are taken out of that memory (through the parent, whose records they are)
//! until the stub says `vforkdone`, then put back. The parent waits inside vfork meanwhile;
//! its other threads, if any, pass those sites unseen, as under gdb.

use super::reply::ThreadId;
use super::run::Event;
use super::Remote;
use crate::inferior::{FollowFork, Stop};
use crate::os::{OsError, Tid};

/// How forks go and what the last one did.
#[derive(Debug, Default)]
pub(super) struct Forks {
    pub(super) follow: FollowFork,
    /// (parent, child) once a fork child was followed, for the session's note.
    pub(super) followed: Option<(Tid, Tid)>,
    /// Software sites out of the memory a vfork child shares: back in at `vforkdone`.
    lifted: Vec<u64>,
    /// The note on a mode the remote backend cannot follow was said: for a fork, a vfork.
    warned: [bool; 2],
    /// The note on a stub that lets children go with int3s in them was said.
    unclean_warned: bool,
}

impl Remote {
    /// The fork (or vfork) stop of `tid` whose child is `child`: the child is cleaned and
    /// let go, or followed. `step`: the thread a single step was asked of (the run goes on,
    /// as for a local fork event, unless the step's thread is gone with the parent).
    pub(super) fn on_fork(
        &mut self,
        tid: Tid,
        child: ThreadId,
        vfork: bool,
        step: Option<Tid>,
    ) -> Result<Event, OsError> {
        let cpid = child.pid.filter(|&p| p > 0).unwrap_or(child.tid) as Tid;
        let ctid = if child.tid > 0 {
            child.tid as Tid
        } else {
            cpid
        };
        match self.forks.follow {
            FollowFork::Child if !vfork => return self.follow_child(tid, cpid, ctid, step),
            FollowFork::Parent => {}
            mode => self.warn_unfollowed(mode, cpid, vfork),
        }
        if vfork {
            self.lift_for_vfork(tid)?;
        }
        self.let_go(cpid, ctid, !vfork)?;
        Ok(Event::Ignore)
    }

    /// `vforkdone`: the parent's memory is its own again, and the sites go back in.
    pub(super) fn on_vfork_done(&mut self, tid: Tid) -> Result<Event, OsError> {
        let lifted = std::mem::take(&mut self.forks.lifted);
        if !lifted.is_empty() {
            self.select_for_reading(tid)?;
        }
        for addr in lifted {
            if self.sites.contains_key(&addr) {
                self.request_ok(self.site_packet('Z', addr, false).as_bytes())?;
            }
        }
        Ok(Event::Ignore)
    }

    /// A stub that reports no forks lets a fork child go with the int3s the stub wrote for
    /// scry in its copy of the memory (lldb-server 14 does): the child's first pass over one
    /// kills it with SIGTRAP. Said once, at the first such breakpoint. QEMU's stub writes
    /// none (it checks breakpoints as it translates code).
    pub(super) fn warn_unclean_forks(&mut self) {
        if self.features.fork_events || self.fileless.get() || self.forks.unclean_warned {
            return;
        }
        self.forks.unclean_warned = true;
        self.warnings.push("this stub reports no forks (no fork-events), so it lets a fork child go with the int3 breakpoints in its copy of the memory: a child that reaches one is killed by SIGTRAP (debug-register breakpoints are not copied; gdbserver reports forks)".into());
    }

    fn warn_unfollowed(&mut self, mode: FollowFork, cpid: Tid, vfork: bool) {
        if std::mem::replace(&mut self.forks.warned[usize::from(vfork)], true) {
            return;
        }
        let why = if vfork {
            "a vfork child is not followed over the remote protocol (it shares its parent's memory until it execs)"
        } else {
            "keeping both processes of a fork is not supported over the remote protocol yet"
        };
        self.warnings.push(format!(
            "follow_fork is '{}', but {why}: child {cpid} was let go and the parent stays under control, as with 'parent'",
            mode.name()
        ));
    }

    /// Takes the software sites out of the memory the vfork child shares (through the
    /// parent `tid`, whose records they are).
    fn lift_for_vfork(&mut self, tid: Tid) -> Result<(), OsError> {
        let software = self.software_sites();
        if software.is_empty() {
            return Ok(());
        }
        self.select_for_reading(tid)?;
        for &addr in &software {
            self.request_ok(self.site_packet('z', addr, false).as_bytes())?;
        }
        self.forks.lifted = software;
        Ok(())
    }

    /// Cleans process `pid` (through its thread `tid`) of scry's sites and watchpoints and
    /// lets it go (`D;PID`). `software`: its int3s are its own to take out (a fork child's
    /// copy, a followed child's parent); a vfork child's were taken out of the memory it
    /// shares already. Scry's own records stay: they are the process it keeps.
    fn let_go(&mut self, pid: Tid, tid: Tid, software: bool) -> Result<(), OsError> {
        // The general thread is another process's from here: `g` and `m` ask for it again.
        *self.reading.borrow_mut() = None;
        self.request_ok(format!("Hgp{pid:x}.{tid:x}").as_bytes())?;
        let sites: Vec<(u64, bool)> = self.sites.iter().map(|(&a, s)| (a, s.hardware)).collect();
        for (addr, hardware) in sites {
            if hardware || software {
                // Best effort: a stub that copied no record of it refuses, and the
                // child has nothing there to take out.
                let _ = self.request_ok(self.site_packet('z', addr, hardware).as_bytes());
            }
        }
        for watch in self.watches.iter().flatten() {
            let kind = super::target::watch_type(watch.access);
            let _ = self.request_ok(format!("z{kind},{:x},{:x}", watch.addr, watch.len).as_bytes());
        }
        self.request_ok(format!("D;{pid:x}").as_bytes())
    }

    /// `follow_fork = 'child'`: the parent is cleaned and let go, and the child (a copy of
    /// the parent, scry's sites in it) is the process from now on.
    fn follow_child(
        &mut self,
        tid: Tid,
        cpid: Tid,
        ctid: Tid,
        step: Option<Tid>,
    ) -> Result<Event, OsError> {
        let parent = self.pid;
        self.let_go(parent, tid, true)?;
        self.pid = cpid;
        self.selected = ctid;
        self.forget_state();
        self.parked = None;
        self.rf_fresh = None;
        self.pending.clear();
        self.catch.forget_sent();
        self.forks.followed = Some((parent, cpid));
        Ok(match step {
            // The stepped thread went with the parent: the step ends in the child.
            Some(_) => Event::Report(Stop::Step { tid: ctid }),
            None => Event::Ignore,
        })
    }
}
