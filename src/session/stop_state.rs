//! What the session knows of the stop the process is in, one owner for it: what scripts
//! read here (the next stop's `prev`), where the latest step began, the signal the stop
//! came with, and what waits to be said with the next stop shown to the user.

use super::snapshot::Snapshot;
use crate::corefile::SigInfo;
use crate::os::Tid;

#[derive(Default)]
pub(super) struct StopState {
    /// What scripts read at this stop and the last one (`prev`).
    pub(super) snapshot: Snapshot,
    /// Where the latest step started (see `Session::stepped_from`).
    pub(super) stepped_from: Option<u64>,
    /// The signal of the stop the process is in, for `gcore()`'s NT_SIGINFO.
    pub(super) last_signal: Option<(Tid, SigInfo)>,
    /// Notes about something that happened once (a followed fork child, a child that could
    /// not be handed over), kept until a stop is shown to the user: the event they came
    /// with may be one that listeners let go, whose line nobody sees.
    pub(super) carried_notes: Vec<String>,
    /// A stop at a breakpoint on a function by name: (thread, pc, calls inlined at pc to
    /// hide, counted when first needed). Calls inlined into the function that begin at its
    /// breakpoint are not entered yet: the stop is in the function itself, as in gdb.
    /// The name is the breakpoint's function (a call of it is never hidden) or its
    /// `file:line` (the calls before that line's row are hidden).
    pub(super) entry_inlines: Option<(Tid, u64, String, Option<usize>)>,
    /// Threads whose watchpoint hits wait behind an earlier report (see `concurrent_write`).
    pub(super) late_watch_hits: Vec<Tid>,
    /// A watch trap left the thread at a user breakpoint's address (the trap comes after
    /// the writing instruction, and the next one may be a breakpoint's), not having hit it:
    /// the next continue reports that hit first (see `Session::cont_leg`).
    pub(super) arrived_at: Option<(Tid, u64)>,
}
