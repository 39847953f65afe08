//! Several processes under control at once (fork children kept, a tree run as one): every
//! traced thread of every process reports to the one `waitpid(-1)` of scry's thread, so
//! whichever process waits may be handed another's event. Such an event is kept here for
//! its owner, which takes it at its next wait before asking the kernel, and a run of the
//! whole tree takes any kept event first. Thread-local like ptrace itself: only the thread
//! that attached may wait for and resume the tracees.
//!
//! Alone (one process, the usual case), every event is the waiting process's, as before:
//! nothing is looked up on the way.

use std::cell::RefCell;
use std::collections::VecDeque;

use super::Inferior;
use crate::os::procfs;
use crate::os::wait::WaitEvent;
use crate::os::Tid;

thread_local! {
    /// The pids of the processes an `Inferior` controls.
    static PROCESSES: RefCell<Vec<Tid>> = const { RefCell::new(Vec::new()) };
    /// Events waited for by one process that belong to another, oldest first.
    static KEPT: RefCell<VecDeque<WaitEvent>> = const { RefCell::new(VecDeque::new()) };
}

pub(super) fn register(pid: Tid) {
    PROCESSES.with(|p| {
        let mut p = p.borrow_mut();
        if !p.contains(&pid) {
            p.push(pid);
        }
    });
}

pub(super) fn unregister(pid: Tid) {
    PROCESSES.with(|p| p.borrow_mut().retain(|&q| q != pid));
    // What was kept for it can no longer be taken.
    KEPT.with(|k| {
        k.borrow_mut()
            .retain(|e| owner_of(e.tid()).is_some_and(|o| o != pid))
    });
}

/// How many processes are under control.
pub(super) fn count() -> usize {
    PROCESSES.with(|p| p.borrow().len())
}

fn alone(pid: Tid) -> bool {
    PROCESSES.with(|p| p.borrow().iter().all(|&q| q == pid))
}

fn registered(pid: Tid) -> bool {
    PROCESSES.with(|p| p.borrow().contains(&pid))
}

/// The controlled process a thread belongs to: its thread group when that is one, else the
/// parent of a new process (a fork child reports before its parent's fork event); `None`
/// when the kernel no longer says (the thread is gone).
fn owner_of(tid: Tid) -> Option<Tid> {
    if registered(tid) {
        return Some(tid);
    }
    let status = procfs::status_text(tid)?;
    let field = |key| procfs::status_field(&status, key)?.parse::<Tid>().ok();
    let group = field("Tgid")?;
    if registered(group) {
        return Some(group);
    }
    let parent = if group == tid {
        field("PPid")?
    } else {
        procfs::status_text(group).and_then(|s| procfs::status_field(&s, "PPid")?.parse().ok())?
    };
    registered(parent).then_some(parent)
}

/// Keeps another process's event for it.
pub(super) fn keep(event: WaitEvent) {
    KEPT.with(|k| k.borrow_mut().push_back(event));
}

/// The kept event of thread `tid` (a fork child's first stop another process's wait took).
pub(super) fn take_kept_of(tid: Tid) -> Option<WaitEvent> {
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        let i = k.iter().position(|e| e.tid() == tid)?;
        k.remove(i)
    })
}

/// The oldest kept event of any process (a run of the whole tree takes these first).
pub(crate) fn take_any() -> Option<WaitEvent> {
    KEPT.with(|k| k.borrow_mut().pop_front())
}

impl Inferior {
    /// Its end, when another process's wait took it and kept it here (a worker that ended
    /// while the tree stopped for its parent's end): handled as the process's own event.
    pub(crate) fn take_kept_end(&mut self, pass: super::PassFn) -> Option<super::Stop> {
        let mine: Vec<Tid> = std::iter::once(self.pid)
            .chain(self.threads.keys().copied())
            .collect();
        for tid in mine {
            while let Some(event) = take_kept_of(tid) {
                if let Ok(Some(stop)) = self.take_event(event, pass) {
                    if stop.is_final() {
                        return Some(stop);
                    }
                }
            }
        }
        None
    }

    /// Whether a wait's event is this process's: one of its threads, a fork child it has not
    /// claimed yet, or one nobody else claims (a thread already gone).
    pub(crate) fn owns(&self, event: &WaitEvent) -> bool {
        let tid = event.tid();
        if tid == self.pid
            || self.threads.contains_key(&tid)
            || self.early_children.contains(&tid)
            || alone(self.pid)
        {
            return true;
        }
        owner_of(tid).is_none_or(|o| o == self.pid)
    }

    /// The oldest event another process's wait kept for this one.
    pub(super) fn take_kept(&self) -> Option<WaitEvent> {
        if alone(self.pid) {
            // A process left alone takes what was kept for the others that are gone too.
            return take_any();
        }
        KEPT.with(|k| {
            let mut k = k.borrow_mut();
            let i = k.iter().position(|e| self.owns(e))?;
            k.remove(i)
        })
    }
}
