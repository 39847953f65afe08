//! What the session debugs: the selected live process, or a core file instead, the fork
//! children held beside it, and how the last process ended. One owner for "is there a
//! process, and which one": a look-up that needs the process borrows only this part, so the
//! symbols and the snapshot stay free beside it (before, helpers were free functions taking
//! two fields to get around borrowing the whole session).

use super::backend::ProcessView;
use super::postmortem::CoreTarget;
use super::target::Target;
use super::{Result, SessionError};
use crate::os::Tid;

/// A live process and the program it runs.
pub(super) struct Live {
    pub(super) process: Box<dyn Target>,
    pub(super) program: String,
    /// Where its executable is loaded, when known: with `program`, which image it runs (two
    /// runs of one program differ where the address space is randomized), so which
    /// breakpoint addresses are its (see `tree_sites`).
    pub(super) exe_base: Option<u64>,
}

impl Live {
    pub(super) fn new(process: Box<dyn Target>, program: String) -> Live {
        Live {
            process,
            program,
            exe_base: None,
        }
    }

    /// Whether `other` runs the same image: the same program loaded at the same address.
    pub(super) fn same_image(&self, other: &Live) -> bool {
        self.program == other.program && self.exe_base.is_some() && self.exe_base == other.exe_base
    }
}

#[derive(Default)]
pub(super) struct Targets {
    /// The selected live process. At most one of `live` and `core` is set; inspection reads
    /// whichever it is through [`Targets::view`].
    pub(super) live: Option<Live>,
    /// The core file the session reads instead of a process.
    pub(super) core: Option<CoreTarget>,
    /// Processes under control but not selected (`config.follow_fork = 'both'`): every
    /// thread stopped, none of scry's int3 bytes in them (see `processes`).
    pub(super) held: Vec<Live>,
    /// Processes of the tree that ended during the last run while not selected: pid,
    /// program, how (`process.list()` shows them until the next `cont()`).
    pub(super) ended_in_run: Vec<(Tid, String, String)>,
    /// How the last process ended, for "no live process (...)".
    pub(super) ended: Option<String>,
    /// The pid and program of the latest process, kept after it ends (for `status()`).
    pub(super) last_process: Option<(Tid, String)>,
    /// A fork child was kept in this session: "no live process" names which one ended.
    pub(super) kept_children: bool,
    /// What the latest `spawn` ran, for `spawn()` again (gdb's `run`).
    pub(super) last_spawn: Option<super::SpawnSpec>,
}

impl Targets {
    /// A live process is selected and has not ended.
    pub(super) fn is_live(&self) -> bool {
        self.live.as_ref().is_some_and(|t| !t.process.is_dead())
    }

    /// The live process, for what only a process can do (run, write, break). A core file
    /// refuses, naming itself.
    pub(super) fn live(&mut self) -> Result<&mut dyn Target> {
        self.live_if(|p| !p.is_dead())
    }

    /// The live process for resuming: one that died while being stopped may still have
    /// stops to report (the thread events before its end, then the end itself).
    pub(super) fn live_for_run(&mut self) -> Result<&mut dyn Target> {
        self.live_if(|p| !p.is_dead() || p.has_queued())
    }

    fn live_if(&mut self, usable: impl Fn(&dyn Target) -> bool) -> Result<&mut dyn Target> {
        if let Some(refusal) = self.core_refusal("run") {
            return Err(refusal);
        }
        if !self
            .live
            .as_ref()
            .is_some_and(|t| usable(t.process.as_ref()))
        {
            return Err(SessionError::NoProcess(self.ended_with_held()));
        }
        match &mut self.live {
            Some(t) => Ok(t.process.as_mut()),
            // Checked above: a borrow of `self` for the error would outlive the match.
            None => Err(SessionError::NoProcess(None)),
        }
    }

    /// What inspection reads: the core, or the live process.
    pub(super) fn view(&mut self) -> Result<&mut dyn ProcessView> {
        let usable =
            self.core.is_some() || self.live.as_ref().is_some_and(|t| !t.process.is_dead());
        if !usable {
            return Err(SessionError::NoProcess(self.ended_with_held()));
        }
        match (&mut self.core, &mut self.live) {
            (Some(core), _) => Ok(&mut core.process),
            (None, Some(t)) => Ok(t.process.as_mut() as &mut dyn ProcessView),
            (None, None) => Err(SessionError::NoProcess(None)),
        }
    }

    /// How the last process ended; for one not seen to end that can no longer be reached
    /// (a remote stub that closed the connection), why (it was "no live process (start one
    /// with spawn(path) ...)", as if none had ever been).
    pub(super) fn ended_now(&self) -> Option<String> {
        self.ended
            .clone()
            .or_else(|| self.live.as_ref().and_then(|t| t.process.lost()))
    }

    /// [`view`](Self::view) for reads that need no `&mut`.
    pub(super) fn view_ref(&self) -> Result<&dyn ProcessView> {
        if let Some(core) = &self.core {
            return Ok(&core.process);
        }
        match &self.live {
            Some(t) if !t.process.is_dead() => Ok(t.process.as_ref() as &dyn ProcessView),
            _ => Err(self.no_process()),
        }
    }

    /// The error for anything that needs a process when the session reads a core.
    pub(super) fn core_refusal(&self, what: &str) -> Option<SessionError> {
        let core = self.core.as_ref()?;
        Some(SessionError::Invalid(format!(
            "this session is a core file ({}): it cannot {what}; spawn() the program to run it",
            core.process.name()
        )))
    }

    /// Why there is no process: a core that cannot run, or how the last one ended.
    pub(super) fn no_process(&self) -> SessionError {
        self.core_refusal("run")
            .unwrap_or_else(|| SessionError::NoProcess(self.ended_with_held()))
    }

    /// How the last process ended, naming the held processes that remain.
    pub(super) fn ended_with_held(&self) -> Option<String> {
        ended_with_held(
            &self.ended_now(),
            &self.held,
            named_pid(self.kept_children, &self.last_process),
        )
    }

    pub(super) fn held_pids(&self) -> Vec<Tid> {
        self.held.iter().map(|t| t.process.pid()).collect()
    }
}

/// The latest process, when the end it is named with might be another's (a tree was kept).
fn named_pid(kept_children: bool, last: &Option<(Tid, String)>) -> Option<Tid> {
    kept_children
        .then(|| last.as_ref().map(|(pid, _)| *pid))
        .flatten()
}

/// How the last process ended (`ended`; `process 1234 exited with code 0` with `pid`),
/// naming the held processes that remain.
fn ended_with_held(ended: &Option<String>, held: &[Live], pid: Option<Tid>) -> Option<String> {
    let ended = match (pid, ended) {
        (Some(pid), Some(how)) => Some(format!("process {pid} {how}")),
        _ => ended.clone(),
    };
    let pids: Vec<Tid> = held.iter().map(|t| t.process.pid()).collect();
    if pids.is_empty() {
        return ended;
    }
    Some(format!(
        "{}; held: {} (process.select({}) debugs it)",
        ended.as_deref().unwrap_or("ended"),
        join_pids(&pids),
        pids[0]
    ))
}

pub(super) fn join_pids(pids: &[Tid]) -> String {
    pids.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
