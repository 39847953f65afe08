//! Non-stop across processes: a breakpoint hit in one process of a tree run whose listeners
//! decide on it stops that process alone; the others run on while the listeners read it,
//! and the next leg resumes only it. Before, every hit stopped every process and selected the
//! hitting one through the full path (symbols read again, every breakpoint resolved and
//! armed again), then resumed them all: a logpoint in a pre-forking server ran at a fifth of
//! its rate in one process, and every worker's timing was the debugger's.
//!
//! Only what is the same everywhere may go on like this: a hit at a user breakpoint in a
//! process of the selected image (a fork child is a copy of its parent, so the symbols and
//! the breakpoints' addresses are its own too), with no watchpoint (each process keeps its
//! own old values), tracepoint or recording in the session. Anything else, the end of the
//! run, or a listener changing what the running processes have in them (a breakpoint set)
//! stops every process as before (`settle_tree`), and the process a hit made current is then
//! selected through the full path.

use super::*;

/// What the running processes of a tree have in them: the breakpoints' addresses, by id.
/// (Which processes run, each knows: `Target::is_launched`; one that joined since, a fork
/// child kept, does not.)
#[derive(Clone, PartialEq, Eq)]
pub(super) struct TreeSignature(Vec<(u32, u64)>);

impl Session {
    pub(super) fn tree_signature(&self) -> TreeSignature {
        let list = self.points.breakpoints.list();
        TreeSignature(
            list.iter()
                .filter(|b| b.armed)
                .flat_map(|b| b.addresses().map(move |a| (b.id, a)))
                .collect(),
        )
    }

    /// Whether a stop of a tree run from `from` leaves the other processes running: a hit at
    /// a user breakpoint that listeners decide on, or a fork child kept (scry's own
    /// business: the run goes on), in a process of the selected image.
    pub(super) fn runs_on_alone(&self, from: &super::tree::From, stop: &Stop) -> bool {
        let decided = match *stop {
            Stop::Breakpoint { addr, .. } => {
                self.nonstop.breakpoint && self.points.breakpoints.is_user_site(addr)
            }
            Stop::Forked { .. } => true,
            _ => false,
        };
        if !decided {
            return false;
        }
        let Some(live) = self.targets.live.as_ref().filter(|t| !t.process.is_dead()) else {
            return false;
        };
        let same_image = match *from {
            super::tree::From::Selected => true,
            super::tree::From::Held(i) => self
                .targets
                .held
                .get(i)
                .is_some_and(|h| !h.process.is_dead() && live.same_image(h)),
        };
        same_image
            && !self.points.watchpoints.list().iter().any(|w| w.armed)
            && !self.has_probes()
            && self.timeline.recording.is_none()
    }

    /// Makes held process `i` (stopped at a hit; the others running) the current one without
    /// stopping the others: the same image keeps the symbols and the breakpoints' addresses.
    /// It is selected through the full path when everything stops (`select_swapped_in`).
    pub(super) fn swap_selection(&mut self, i: usize) {
        let incoming = self.targets.held.remove(i);
        self.targets.last_process = Some((incoming.process.pid(), incoming.program.clone()));
        if let Some(outgoing) = self.targets.live.replace(incoming) {
            self.targets.held.push(outgoing);
        }
        self.tree.swapped_in = true;
    }

    /// Selects the process a non-stop hit made current through the full path, everything
    /// stopped: held (its breakpoints out), then selected (symbols read, breakpoints armed).
    pub(super) fn select_swapped_in(&mut self) -> Result<()> {
        let pass = self.pass_fn();
        let Some(mut t) = self.targets.live.take() else {
            return Ok(());
        };
        if t.process.is_dead() {
            self.targets.live = Some(t);
            return Ok(());
        }
        if let Err(e) = t.process.hold(&pass) {
            self.targets.live = Some(t);
            return Err(e.into());
        }
        self.targets.held.push(t);
        self.select_held(self.targets.held.len() - 1)
    }

    /// Stops every process a non-stop tree run left running, cleans the held ones, and
    /// selects the current one through the full path: the state every run ends in.
    pub(super) fn settle_tree(&mut self) -> Result<()> {
        if self.tree.running.take().is_none() {
            return Ok(());
        }
        let pass = self.pass_fn();
        if let Some(t) = self.targets.live.as_mut().filter(|t| !t.process.is_dead()) {
            t.process.all_stop(&pass)?;
        }
        self.hold_every_held(&pass);
        if std::mem::take(&mut self.tree.swapped_in) {
            self.select_swapped_in()?;
        }
        Ok(())
    }
}
