//! Following the dynamic loader, the way debuggers do. glibc's loader calls an empty function,
//! `_dl_debug_state` (the address in `_r_debug.r_brk`), before and after every change to its
//! list of loaded objects, with `_r_debug.r_state` saying which (RT_ADD or RT_DELETE before,
//! RT_CONSISTENT after). scry keeps a breakpoint of its own there: at each consistent state
//! the module list, symbols and debug info are re-read, pending breakpoints are armed in the
//! libraries that now have their symbols, and breakpoints in unloaded libraries go back to
//! pending, all before the program runs another instruction. Listeners see `library` events;
//! without listeners the stop is scry's business alone and the run just goes on (only the
//! loading thread stops for it).

use super::*;

/// `struct r_debug`: r_version (int, padded to 8), r_map, r_brk, then `r_state` (an enum).
const R_STATE_OFFSET: u64 = 24;
const RT_CONSISTENT: u32 = 0;

/// One library loaded or unloaded, as a `library` event reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryChange {
    pub loaded: bool,
    pub path: String,
    pub base: u64,
}

/// What the session knows of the loader: where its `_r_debug` is (once the rendezvous has
/// scry's breakpoint) and the changes waiting to be reported to `library` listeners, one stop
/// each.
#[derive(Default)]
pub(super) struct LoaderWatch {
    r_debug: Option<u64>,
    waiting: std::collections::VecDeque<LibraryChange>,
    /// Scripts listen for `library` events (else changes are scry's business alone).
    reporting: bool,
    /// When the module list was last read from the process's mappings.
    pub(super) maps_read_at: Option<std::time::Instant>,
    /// The process has run (and may have mapped memory: a heap, a thread's stack) since the
    /// module list was last read.
    pub(super) ran_since_maps: bool,
}

impl LoaderWatch {
    /// Listeners for `library` events come or go; without them nothing waits.
    pub(super) fn set_reporting(&mut self, on: bool) {
        self.reporting = on;
        if !on {
            self.waiting.clear();
        }
    }

    /// Changes the loader made, kept for the listeners if any listen.
    pub(super) fn report(&mut self, changes: Vec<LibraryChange>) {
        if self.reporting {
            self.waiting.extend(changes);
        }
    }

    /// The next change waiting to be reported.
    pub(super) fn next_change(&mut self) -> Option<LibraryChange> {
        self.waiting.pop_front()
    }

    /// A new image (spawn, exec, another process selected): nothing of the last one's
    /// loader holds.
    pub(super) fn forget_changes(&mut self) {
        self.waiting.clear();
    }
}

impl Session {
    /// Finds the loader's rendezvous in the current image and puts scry's breakpoint on it.
    /// A static program has no loader: nothing to follow.
    pub(super) fn follow_loader(&mut self) {
        self.loader.r_debug = None;
        // Read-only: the rendezvous would take one of the four debug registers for good;
        // libraries are seen at the next stop instead.
        if self.config.read_only {
            return;
        }
        let (Some(brk), Some(r_debug)) = (
            self.symbols.lookup_raw("_dl_debug_state"),
            self.symbols.lookup_raw("_r_debug"),
        ) else {
            return;
        };
        if let Ok(inferior) = self.targets.live() {
            if inferior.set_rendezvous(brk.0).is_ok() {
                self.loader.r_debug = Some(r_debug.0);
            }
        }
        self.follow_sigaction();
    }

    /// Puts scry's breakpoint on libc's `__libc_sigaction` once libc is loaded, so that a
    /// SIGTRAP action the program sets in the middle of a run is kept across scry's traps
    /// (see `inferior::sigtrap`). Not in a read-only session, where it would take a debug
    /// register and nothing could be put back anyway.
    pub(super) fn follow_sigaction(&mut self) {
        if self.config.read_only {
            return;
        }
        let Some(addr) = self.symbols.lookup_raw("__libc_sigaction") else {
            return;
        };
        if let Ok(inferior) = self.targets.live() {
            if inferior.sigaction_site().is_none() {
                let _ = inferior.watch_sigaction(addr.0);
            }
        }
    }

    /// Whether `stop` is at a breakpoint of scry's own (the loader's rendezvous, libc's
    /// sigaction) with no user breakpoint there; `Some(true)` for the rendezvous.
    pub(super) fn own_stop(&self, stop: &Stop) -> Option<bool> {
        let Stop::Breakpoint { addr, .. } = *stop else {
            return None;
        };
        let inferior = &self.targets.live.as_ref()?.process;
        if self.points.breakpoints.is_user_site(addr) {
            return None;
        }
        if inferior.rendezvous() == Some(addr) {
            Some(true)
        } else {
            (inferior.sigaction_site() == Some(addr)).then_some(false)
        }
    }

    /// At the rendezvous: when the loader's list is consistent again, what changed. The
    /// module list is re-read, breakpoints in unloaded libraries go back to pending and
    /// pending ones are armed where their symbols now are.
    pub(super) fn loader_changed(&mut self) -> Vec<LibraryChange> {
        let Some(r_debug) = self.loader.r_debug else {
            return Vec::new();
        };
        let state = self
            .read_memory(r_debug + R_STATE_OFFSET, 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or([0xff; 4])))
            .unwrap_or(u32::MAX);
        if state != RT_CONSISTENT {
            return Vec::new();
        }
        let before = self.module_keys();
        self.refresh_symbols();
        self.follow_sigaction();
        let after = self.module_keys();
        let mut changes = Vec::new();
        for (path, base, end) in &before {
            if !after.iter().any(|(p, b, _)| p == path && b == base) {
                self.forget_breakpoints_in(*base, *end);
                self.forget_tracepoints_in(*base, *end);
                changes.push(LibraryChange {
                    loaded: false,
                    path: path.clone(),
                    base: *base,
                });
            }
        }
        for (path, base, _) in &after {
            if !before.iter().any(|(p, b, _)| p == path && b == base) {
                changes.push(LibraryChange {
                    loaded: true,
                    path: path.clone(),
                    base: *base,
                });
            }
        }
        if changes.iter().any(|c| c.loaded) {
            self.arm_pending();
        }
        changes
    }

    /// (path, load bias, end) of every mapped module.
    fn module_keys(&self) -> Vec<(String, u64, u64)> {
        self.symbols
            .modules()
            .iter()
            .map(|m| (m.path.clone(), m.bias.0, m.end.0))
            .collect()
    }

    /// A library went away with its code: its breakpoints wait for it to come back.
    fn forget_breakpoints_in(&mut self, start: u64, end: u64) {
        let mut gone = Vec::new();
        for bp in self.points.breakpoints.list_mut() {
            if bp.armed && (start..end).contains(&bp.addr) {
                bp.armed = false;
                gone.extend(bp.addresses());
                bp.more.clear();
            }
        }
        if let Ok(inferior) = self.targets.live() {
            for addr in gone {
                inferior.forget_site(addr);
            }
        }
    }

    /// Arms every pending breakpoint and tracepoint whose location now resolves (hit counts
    /// kept).
    pub(super) fn arm_pending(&mut self) {
        for i in 0..self.points.breakpoints.list().len() {
            if !self.points.breakpoints.list()[i].armed {
                self.arm_breakpoint(i);
            }
        }
        self.arm_pending_tracepoints();
    }

    /// Arms breakpoint `i` in the current process from what the user wrote (its location
    /// resolved again: a symbol may have moved), every site of it. The one way a breakpoint
    /// is armed after it was set: in a library that loads, in a new process, after exec.
    /// False when it cannot be armed (it waits).
    pub(super) fn arm_breakpoint(&mut self, i: usize) -> bool {
        let Some(bp) = self.points.breakpoints.list().get(i) else {
            return false;
        };
        let (spec, hardware) = (bp.spec.clone(), bp.hardware);
        let Ok(addr) = self.resolve_breakpoint(&spec) else {
            return false;
        };
        if self.check_code_address(addr).is_err() {
            return false;
        }
        let Ok(inferior) = self.targets.live() else {
            return false;
        };
        if inferior.insert_user_site(addr, hardware).is_err() {
            return false;
        }
        let bp = &mut self.points.breakpoints.list_mut()[i];
        bp.addr = addr;
        bp.armed = true;
        self.arm_more_sites(i);
        true
    }
}
