//! Caught system calls over the protocol (`QCatchSyscalls`, gdbserver's): the stub stops
//! every caught call at its entry (`syscall_entry:NR`) and at its return
//! (`syscall_return:NR`); scry asks for the calls caught at either end and lets go, without a
//! report, the end nobody asked for. What the arguments point to is read at the entry, as
//! locally (a path, a buffer written), and the return value is rax at the return.

use std::collections::HashMap;

use super::Remote;
use crate::inferior::Stop;
use crate::os::syscalls::render::{self, Captured};
use crate::os::syscalls::SysSet;
use crate::os::{OsError, Tid};

/// What the remote backend keeps for caught calls.
#[derive(Default)]
pub(super) struct RemoteCatch {
    entry: SysSet,
    exit: SysSet,
    /// The calls the stub was last told to catch (`None`: never told).
    sent: Option<SysSet>,
    /// Per thread: the call it is inside.
    inside: HashMap<Tid, Entered>,
}

/// A call as it was at its entry: its number, its arguments and what they pointed to.
struct Entered {
    nr: u64,
    args: [u64; 6],
    captured: Vec<(usize, Captured)>,
}

impl RemoteCatch {
    pub(super) fn is_active(&self) -> bool {
        !self.entry.is_empty() || !self.exit.is_empty()
    }

    /// The stub's process was made anew (exec): it knows nothing of what it was told.
    pub(super) fn forget_sent(&mut self) {
        self.sent = None;
        self.inside.clear();
    }
}

impl Remote {
    /// The calls to report at entry and at exit; told to the stub at the next resume.
    pub(super) fn catch_syscalls(&mut self, entry: SysSet, exit: SysSet) {
        let wanted = !entry.is_empty() || !exit.is_empty();
        if wanted && !self.features.catch_syscalls {
            self.warnings.push(
                "the stub does not catch system calls (no QCatchSyscalls): no call will stop"
                    .into(),
            );
        }
        self.catch.entry = entry;
        self.catch.exit = exit;
    }

    /// Tells the stub which calls to stop at, when that changed since it was last told.
    pub(super) fn push_syscall_catch(&mut self) -> Result<(), OsError> {
        if !self.features.catch_syscalls {
            return Ok(());
        }
        let both = self.catch.entry.union(&self.catch.exit);
        if self.catch.sent == Some(both) || (self.catch.sent.is_none() && both.is_empty()) {
            return Ok(());
        }
        let ask = if both.is_empty() {
            "QCatchSyscalls:0".to_string()
        } else {
            let numbers: Vec<String> = both.iter().map(|nr| format!("{nr:x}")).collect();
            format!("QCatchSyscalls:1;{}", numbers.join(";"))
        };
        self.request_ok(ask.as_bytes())?;
        self.catch.sent = Some(both);
        Ok(())
    }

    /// A syscall stop of `tid` (call `nr`, at its entry or its return): the stop to report,
    /// or `None` when that end of the call is not caught (the run goes on).
    pub(super) fn syscall_stop(
        &mut self,
        tid: Tid,
        nr: u64,
        at_entry: bool,
    ) -> Result<Option<Stop>, OsError> {
        // The end nobody asked for costs nothing more when nothing of it is needed later:
        // an entry is read only if that call is caught at one end, a return only if there.
        let wanted = if at_entry {
            self.catch.entry.union(&self.catch.exit).contains(nr)
        } else {
            self.catch.exit.contains(nr)
        };
        if !wanted {
            return Ok(None);
        }
        let regs = self.registers_of(tid)?;
        let args = [regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9];
        if at_entry {
            let captured =
                render::capture_entry(nr, &args, &mut |addr, buf| self.read_partial(addr, buf));
            self.catch
                .inside
                .insert(tid, Entered { nr, args, captured });
            return Ok(self.catch.entry.contains(nr).then_some(Stop::Syscall {
                tid,
                nr,
                args,
                ret: None,
            }));
        }
        // The arguments as they were at the entry (the call may have changed registers).
        let args = match self.catch.inside.get(&tid) {
            Some(entered) if entered.nr == nr => entered.args,
            _ => args,
        };
        Ok(Some(Stop::Syscall {
            tid,
            nr,
            args,
            ret: Some(regs.rax as i64),
        }))
    }

    /// What `tid`'s latest caught call read at its entry.
    pub(super) fn syscall_captured(&self, tid: Tid) -> &[(usize, Captured)] {
        self.catch
            .inside
            .get(&tid)
            .map_or(&[], |entered| entered.captured.as_slice())
    }
}
