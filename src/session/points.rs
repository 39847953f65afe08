//! Breakpoints and watchpoints: the user's tables and their sites in the process.

use super::stop::Shown;
use super::*;
use crate::symbols::dwarf::{Limits, Place, Value};
use crate::symbols::elf::short_name::short_frame_name;

/// Sites of one `file.c:line` breakpoint at most (a helper inlined in every caller).
const MAX_LINE_LOCATIONS: usize = 64;
/// Inlined copies of one function a breakpoint stops at, at most.
pub(super) const MAX_INLINED_SITES: usize = 64;

impl Session {
    // ---- watchpoints -------------------------------------------------------------------

    /// Arms a hardware watchpoint on every thread. The value there now is the "before" of
    /// the first hit.
    pub fn watchpoint_set(
        &mut self,
        addr: u64,
        kind: WatchKind,
        len: u64,
        name: Option<String>,
        spec: String,
        ty: Option<TypedValue>,
    ) -> Result<u32> {
        if let Some(refusal) = self
            .targets
            .core_refusal("stop at a watchpoint: nothing runs")
        {
            return Err(refusal);
        }
        self.stop_every_thread()?;
        if let Some(n) = &name {
            if self.points.watchpoints.name_taken(n) {
                return Err(SessionError::Invalid(format!(
                    "a watchpoint named '{n}' exists already"
                )));
            }
        }
        let last = self.read_memory(addr, len as usize)?;
        let slots = match self.arm_watch(addr, len, kind) {
            Ok(slots) => slots,
            Err(SessionError::Invalid(why)) if why.is_empty() => {
                let armed: Vec<&Watchpoint> = self
                    .points
                    .watchpoints
                    .list()
                    .iter()
                    .filter(|w| w.armed)
                    .collect();
                let held: usize = armed.iter().map(|w| w.slots.len()).sum();
                let ids: Vec<String> = armed
                    .iter()
                    .map(|w| match w.slots.len() {
                        1 => w.id.to_string(),
                        n => format!("{} ({n} registers)", w.id),
                    })
                    .collect();
                let needed = debugregs::pieces(addr, len).map_or(1, |p| p.len());
                let free = debugregs::SLOTS.saturating_sub(held);
                return Err(SessionError::Invalid(if free == 0 {
                    format!(
                        "all 4 hardware debug registers are in use (watchpoints {}); remove one first",
                        ids.join(", ")
                    )
                } else {
                    format!(
                        "this watch needs {needed} hardware debug registers and {free} of the 4 are free (watchpoints {} hold the others); remove one first",
                        ids.join(", ")
                    )
                }));
            }
            Err(e) => return Err(e),
        };
        let scope = match ty {
            Some(_) => self.stack_scope(addr),
            None => None,
        };
        Ok(self.points.watchpoints.add(Watchpoint {
            id: 0,
            addr,
            len,
            kind,
            name,
            hits: 0,
            slots,
            last,
            last_in: Vec::new(),
            spec,
            armed: true,
            ty,
            scope,
        }))
    }

    /// The frame of the selected thread whose stack holds `addr`, if it is on that stack:
    /// the innermost one whose frame address is above it.
    fn stack_scope(&mut self, addr: u64) -> Option<WatchScope> {
        let tid = self.selected_tid().ok()?;
        // Below the stack pointer only the red zone belongs to the innermost frame.
        if addr < self.regs().ok()?.rsp.saturating_sub(128) {
            return None;
        }
        let (frames, _) = self.physical_frames(256).ok()?;
        let i = frames.windows(2).position(|f| addr < f[1].sp)?;
        let pc = frames[i].pc;
        let function = self
            .symbols
            .symbol_at(RuntimeAddr(frames[i].lookup_pc()))
            .map(|(_, s, _)| short_frame_name(s.display_name().as_ref()).to_string())
            .unwrap_or_else(|| format!("{pc:#x}"));
        let cfa = frames[i + 1].sp;
        let mut ret = [0u8; 8];
        self.targets
            .view_ref()
            .ok()?
            .read_memory(cfa.wrapping_sub(8), &mut ret)
            .ok()?;
        Some(WatchScope {
            tid,
            cfa,
            ret: u64::from_le_bytes(ret),
            function,
        })
    }

    /// Whether the frame a watchpoint lives in has returned: its thread's stack pointer is
    /// at or above the frame's address, another call's return address is where the frame's
    /// was, or the thread is gone. (A new call of the same function from the same place
    /// cannot be told from the frame itself; its local is then watched as the frame's.)
    fn scope_ended(&mut self, scope: &WatchScope) -> bool {
        let Ok(inferior) = self.targets.live() else {
            return true;
        };
        let Ok(regs) = inferior.regs(scope.tid) else {
            return true;
        };
        let mut ret = [0u8; 8];
        let same_call = inferior
            .read_memory(scope.cfa.wrapping_sub(8), &mut ret)
            .is_ok_and(|_| u64::from_le_bytes(ret) == scope.ret);
        regs.rsp >= scope.cfa || !same_call
    }

    /// Puts a watch of `[addr, addr + len)` into debug registers, one per aligned piece, all
    /// or none: the slots it took. `Invalid("")` when too few registers are free.
    pub(super) fn arm_watch(&mut self, addr: u64, len: u64, kind: WatchKind) -> Result<Vec<usize>> {
        let pieces = debugregs::pieces(addr, len).map_err(SessionError::Invalid)?;
        let inferior = self.targets.live()?;
        let mut taken: Vec<usize> = Vec::new();
        for (at, size) in pieces {
            let failed = match inferior.free_watch_slot() {
                None => Some(SessionError::Invalid(String::new())),
                Some(slot) => {
                    let watch = WatchSlot {
                        addr: at,
                        len: size,
                        access: kind.hardware(),
                    };
                    match inferior.set_watch(slot, watch) {
                        Ok(()) => {
                            taken.push(slot);
                            None
                        }
                        Err(e) => Some(e.into()),
                    }
                }
            };
            if let Some(e) = failed {
                for slot in taken {
                    inferior.clear_watch(slot);
                }
                return Err(e);
            }
        }
        Ok(taken)
    }

    pub fn watchpoint_remove(&mut self, r: BreakpointRef) -> Result<()> {
        // Debug registers are written in every thread: they must all be stopped.
        self.stop_every_thread()?;
        let found = self.points.watchpoints.remove_by(|w| match &r {
            BreakpointRef::Id(id) => w.id == *id,
            BreakpointRef::Name(n) => w.name.as_deref() == Some(*n),
        });
        let w = found.ok_or_else(|| {
            SessionError::Invalid(match &r {
                BreakpointRef::Id(id) => format!("no watchpoint {id}"),
                BreakpointRef::Name(n) => format!("no watchpoint named '{n}'"),
            })
        })?;
        if w.armed {
            if let Ok(inferior) = self.targets.live() {
                for slot in w.slots {
                    inferior.clear_watch(slot);
                }
            }
        }
        Ok(())
    }

    pub fn watchpoints(&self) -> &[Watchpoint] {
        self.points.watchpoints.list()
    }

    /// Books the hits of the fired slots; describes the first one a user sees.
    pub(super) fn watch_hit(&mut self, tid: Tid, slots: u8) -> Result<Option<WatchReport>> {
        let mut report = None;
        // Registers of several watchpoints at once: a debug trap whose status was lost
        // (inferior `take_lost_debug_trap`) names every armed one. Of those, a write watch
        // whose bytes did not change is not the one that fired.
        let several = self.points.watchpoints.ids_of(slots).len() > 1;
        // One access over two pieces of a wide watch fires both registers: one hit.
        let mut seen = Vec::new();
        for slot in 0..debugregs::SLOTS {
            if slots & (1 << slot) == 0 {
                continue;
            }
            let Some(w) = self.points.watchpoints.by_slot(slot).cloned() else {
                continue;
            };
            if seen.contains(&w.id) {
                continue;
            }
            seen.push(w.id);
            if let Some(scope) = w.scope.as_ref().filter(|s| self.scope_ended(s)) {
                // The access is to a dead frame's slot, reused: no hit of the variable. The
                // watchpoint ends, and says so in this stop.
                let held = match w.spec.starts_with("0x") {
                    true => "it".to_string(),
                    false => format!("'{}'", w.spec),
                };
                let gone = format!(
                    "the frame of {} that held {held} returned; this access is to its reused stack",
                    scope.function
                );
                self.watchpoint_remove(BreakpointRef::Id(w.id))?;
                if report.is_none() {
                    report = Some(WatchReport {
                        id: w.id,
                        name: w.shown_name(),
                        addr: w.addr,
                        len: w.len,
                        scope_ended: Some(gone),
                        culprit_searched: false,
                        ..WatchReport::default()
                    });
                }
                continue;
            }
            let mut now = self.read_memory(w.addr, w.len as usize)?;
            if several && w.kind == WatchKind::Write && now == w.last {
                continue;
            }
            let memory = now.clone();
            // A bit-field's bytes hold its neighbours too: a write that left the field's own
            // bits as they were is not its hit (gdb's `watch s.field` likewise).
            if let Some(ty) = w.ty.as_ref().filter(|t| t.value.bits.is_some()) {
                let field = |bytes: &[u8]| {
                    let v = watched_value(ty, w.addr, bytes);
                    self.value_scalar(&v).ok().flatten()
                };
                let unchanged = w.kind == WatchKind::Write && field(&now) == field(&w.last);
                if unchanged {
                    self.points.watchpoints.set_last(w.id, now);
                    continue;
                }
            }
            // Other threads ran between this thread's trap and the stop of them all: what
            // memory holds now may be theirs. The instruction says what this one stored
            // where it can (a mov from a register or an immediate); else the report says
            // the value was read after they ran.
            let threads = self.targets.live()?.thread_count();
            // A write watch traps on writes only. A read/write one traps on both, and
            // whether this access wrote is the instruction's to say (a write of the value
            // already there is a write); the value is the guess only when the instruction
            // cannot tell.
            let culprit = match w.kind {
                WatchKind::Write if threads < 2 => None,
                _ => self.culprit(tid, w.addr, w.len).ok().flatten(),
            };
            let wrote = culprit.as_ref().and_then(|c| c.wrote);
            let stored = culprit.as_ref().and_then(|c| c.stored);
            if let Some(v) = stored.filter(|_| wrote != Some(false)) {
                now = v.to_le_bytes()[..(w.len as usize).min(8)].to_vec();
            }
            let racy = threads > 1 && stored.is_none();
            let concurrent = threads > 1 && self.concurrent_write(tid, &w.slots);
            let Some(hit) = self.points.watchpoints.hit(slot, now, wrote) else {
                continue;
            };
            if concurrent {
                // The next hit's value before is what memory holds once all stopped.
                self.points.watchpoints.set_last(w.id, memory.clone());
            }
            if report.is_none() {
                let mut r = WatchReport {
                    id: hit.id,
                    name: w.shown_name(),
                    is_write: hit.is_write,
                    addr: w.addr,
                    len: w.len,
                    // Concurrent: no value before is known; what memory holds in its place.
                    old: if concurrent { memory } else { hit.old },
                    new: hit.new,
                    racy: racy && hit.is_write,
                    concurrent: concurrent && hit.is_write,
                    ..WatchReport::default()
                };
                if let Some(ty) = &w.ty {
                    // The old bytes are of before the write: what their pointers led to
                    // then is not kept (memory holds today's), so they show as addresses.
                    r.old_shown = Some(self.watched_as(ty, w.addr, &r.old, false));
                    r.new_shown = Some(self.watched_as(ty, w.addr, &r.new, true));
                }
                // Otherwise the culprit instruction is found when someone asks (see
                // `find_culprit`).
                if let Some(c) = culprit {
                    r.culprit_searched = true;
                    r.insn_symbol = self.symbolize(c.addr);
                    r.insn_source = self.source_position(c.addr);
                    (r.insn_addr, r.insn_text) = (Some(c.addr), c.text);
                }
                report = Some(r);
            }
        }
        Ok(report)
    }

    /// Whether thread `tid`'s hit on a watchpoint of registers `slots` came with other
    /// threads' hits on it: one waits to be reported now, or this one waited behind an
    /// earlier report. Threads' traps reach scry in no set order, so which write came first,
    /// and so the value before each, is not known (3 threads incrementing one counter gave
    /// `3 -> 2` and `471 -> 2` where every write was old + 1).
    fn concurrent_write(&mut self, tid: Tid, slots: &[usize]) -> bool {
        let mask = slots.iter().fold(0u8, |m, &s| m | (1 << s));
        let queued: Vec<Tid> = match self.targets.live() {
            Ok(t) => t
                .queued_watch_hits()
                .into_iter()
                .filter(|&(_, fired)| fired & mask != 0)
                .map(|(t, _)| t)
                .collect(),
            Err(_) => Vec::new(),
        };
        let late = match self.at_stop.late_watch_hits.iter().position(|&t| t == tid) {
            Some(i) => {
                self.at_stop.late_watch_hits.swap_remove(i);
                true
            }
            None => false,
        };
        for t in &queued {
            if !self.at_stop.late_watch_hits.contains(t) {
                self.at_stop.late_watch_hits.push(*t);
            }
        }
        late || !queued.is_empty()
    }

    /// A watch hit's bytes as the value watchpoint `id` was set on, for printing it through
    /// the printers (`None`: it was set on an address, or is gone).
    pub fn watch_hit_value(&self, id: u32, addr: u64, bytes: &[u8]) -> Option<TypedValue> {
        let w = self.points.watchpoints.list().iter().find(|w| w.id == id)?;
        Some(watched_value(w.ty.as_ref()?, addr, bytes))
    }

    /// Watched bytes as the type they were set as: the text a hit shows and, for a number,
    /// the number.
    fn watched_as(&self, ty: &TypedValue, addr: u64, bytes: &[u8], pointees: bool) -> Shown {
        let v = watched_value(ty, addr, bytes);
        let limits = Limits {
            pointees,
            ..Limits::default()
        };
        Shown {
            text: self.value_text(&v, &limits, None).ok(),
            scalar: self.value_scalar(&v).ok().flatten(),
        }
    }

    // ---- breakpoints -------------------------------------------------------------------

    /// `force`: write the int3 even where it is not provably the start of an instruction
    /// in code (see `placement`); refused in a read-only session.
    /// `hardware`: see `Breakpoint::hardware`.
    pub fn breakpoint_set(
        &mut self,
        addr: u64,
        name: Option<String>,
        spec: String,
        force: bool,
        hardware: Option<bool>,
    ) -> Result<u32> {
        if let Some(refusal) = self
            .targets
            .core_refusal("stop at a breakpoint: nothing runs")
        {
            return Err(refusal);
        }
        if let Some(n) = &name {
            if self.points.breakpoints.name_taken(n) {
                return Err(SessionError::Invalid(format!(
                    "a breakpoint named '{n}' exists already"
                )));
            }
        }
        if force {
            self.check_writable("force a breakpoint outside proven code")?;
        } else {
            self.check_code_address(addr)?;
        }
        self.targets
            .live()?
            .insert_user_site(addr, hardware)
            .map_err(|e| match e {
                crate::os::OsError::Unmapped { .. } | crate::os::OsError::Unwritable { .. } => {
                    SessionError::Invalid(format!(
                        "cannot set a breakpoint at {addr:#x}: address not mapped"
                    ))
                }
                other => other.into(),
            })?;
        let id = self.points.breakpoints.add(addr, name, spec);
        if let Some(bp) = self.points.breakpoints.list_mut().last_mut() {
            bp.hardware = hardware;
        }
        if !force {
            let i = self.points.breakpoints.list().len() - 1;
            self.arm_more_sites(i);
        }
        Ok(id)
    }

    /// Arms breakpoint `i`'s further sites (see [`more_sites`](Self::more_sites)); `addr`
    /// is armed already.
    pub(super) fn arm_more_sites(&mut self, i: usize) {
        let Some(bp) = self.points.breakpoints.list().get(i) else {
            return;
        };
        let (addr, hardware) = (bp.addr, bp.hardware);
        let spec = bp.spec.clone();
        let mut more = Vec::new();
        for a in self.more_sites(&spec, addr) {
            let Ok(inferior) = self.targets.live() else {
                break;
            };
            if inferior.insert_user_site(a, hardware).is_ok() {
                more.push(a);
            }
        }
        if let Some(bp) = self.points.breakpoints.list_mut().get_mut(i) {
            bp.more = more;
        }
    }

    /// The further sites of a breakpoint `spec` first resolved at `addr`, in the selected
    /// process: for a `file.c:line`, the line's code in every other function or inlined copy
    /// that has it (gdb's locations 1.2, 1.3, ...); for a function, its inlined copies. A
    /// site that cannot take an int3 is left out.
    pub(super) fn more_sites(&mut self, spec: &str, addr: u64) -> Vec<u64> {
        let sites: Vec<u64> = match source_line_expr(spec) {
            Some((file, line)) => self
                .symbols
                .line_breakpoint_sites(file, line, MAX_LINE_LOCATIONS)
                .into_iter()
                .map(|a| a.0)
                .collect(),
            None => self.inlined_function_sites(spec),
        };
        let mut seen = std::collections::HashSet::from([addr]);
        sites
            .into_iter()
            .filter(|&a| seen.insert(a) && self.check_code_address(a).is_ok())
            .collect()
    }

    /// A breakpoint site of scry's own (`finish()` uses one at the return address): not a
    /// user breakpoint and not listed. Removing it keeps a user breakpoint at the same place.
    /// A user's breakpoint is armed at `addr`.
    pub fn is_user_site(&self, addr: u64) -> bool {
        self.points.breakpoints.is_user_site(addr)
    }

    pub fn temp_site(&mut self, addr: u64, on: bool) -> Result<()> {
        let user = self.points.breakpoints.is_user_site(addr);
        let inferior = self.targets.live()?;
        if on {
            inferior.insert_site(addr)?;
        } else if !user {
            inferior.remove_site(addr)?;
        }
        Ok(())
    }

    pub fn breakpoint_remove(&mut self, r: BreakpointRef) -> Result<Breakpoint> {
        let what = match &r {
            BreakpointRef::Id(id) => format!("no breakpoint {id}"),
            BreakpointRef::Name(n) => format!("no breakpoint named '{n}'"),
        };
        let (bp, alone) = self
            .points
            .breakpoints
            .remove(&r)
            .ok_or(SessionError::Invalid(what))?;
        if bp.armed {
            if let Ok(inferior) = self.targets.live() {
                for addr in alone {
                    inferior.remove_site(addr)?;
                }
            }
        }
        Ok(bp)
    }

    /// A breakpoint on a location no loaded module has yet: it waits (`pending`) and is armed
    /// when a library that has it loads. Returns its id and the note to show.
    pub fn breakpoint_pending(
        &mut self,
        name: Option<String>,
        spec: String,
        why: &SessionError,
        hardware: Option<bool>,
    ) -> Result<(u32, String)> {
        if let Some(n) = &name {
            if self.points.breakpoints.name_taken(n) {
                return Err(SessionError::Invalid(format!(
                    "a breakpoint named '{n}' exists already"
                )));
            }
        }
        let id = self.points.breakpoints.add_pending(name, spec.clone());
        if let Some(bp) = self.points.breakpoints.list_mut().last_mut() {
            bp.hardware = hardware;
        }
        let hint = match why {
            SessionError::Symbol(crate::symbols::SymbolError::Unknown { suggestions, .. })
                if !suggestions.is_empty() =>
            {
                format!(" (did you mean {}?)", suggestions.join(", "))
            }
            _ => String::new(),
        };
        // gdb's catchpoints by their word: the C++ runtime's functions stop there.
        let hint = match spec.trim() {
            "throw" | "catch throw" => format!("{hint} (gdb's `catch throw` is breakpoint.set('__cxa_throw'), Rust's panic is 'rust_panic')"),
            "catch" | "catch catch" => format!("{hint} (gdb's `catch catch` is breakpoint.set('__cxa_begin_catch'))"),
            _ => hint,
        };
        // `'net.c'::f` carries its own quotes.
        let quoted = if spec.contains('\'') {
            spec.clone()
        } else {
            format!("'{spec}'")
        };
        let note = if matches!(why, SessionError::NoProcess(_)) {
            format!(
                "breakpoint {id} pending: no live process; it is armed at {quoted} when spawn() (the latest program again) or attach() starts one"
            )
        } else {
            format!(
                "breakpoint {id} pending: no loaded module has {quoted} yet{hint}; it is armed when a library that has it loads ({{pending: false}} makes this an error)"
            )
        };
        Ok((id, note))
    }

    /// The program wrote over this breakpoint's int3: it no longer stops anything.
    /// Whether the breakpoint at `addr` is held in a debug register (`Some(true)`) or is an
    /// int3 (`None` when nothing is armed there).
    pub fn breakpoint_is_hardware(&mut self, addr: u64) -> Option<bool> {
        self.targets.live().ok()?.site_is_hardware(addr)
    }

    pub fn breakpoint_overwritten(&mut self, addr: u64) -> bool {
        self.targets.live().is_ok_and(|i| i.site_overwritten(addr))
    }

    pub fn breakpoints(&self) -> &[Breakpoint] {
        self.points.breakpoints.list()
    }
}

/// A 64-bit register's value for address arithmetic in the disassembler.
pub(super) fn register_value(regs: &RawRegs, r: iced_x86::Register) -> Option<u64> {
    use iced_x86::Register as X;
    Some(match r.full_register() {
        X::RAX => regs.rax,
        X::RBX => regs.rbx,
        X::RCX => regs.rcx,
        X::RDX => regs.rdx,
        X::RSI => regs.rsi,
        X::RDI => regs.rdi,
        X::RBP => regs.rbp,
        X::RSP => regs.rsp,
        X::R8 => regs.r8,
        X::R9 => regs.r9,
        X::R10 => regs.r10,
        X::R11 => regs.r11,
        X::R12 => regs.r12,
        X::R13 => regs.r13,
        X::R14 => regs.r14,
        X::R15 => regs.r15,
        X::RIP => regs.rip,
        X::FS => regs.fs_base,
        X::GS => regs.gs_base,
        X::ES | X::CS | X::SS | X::DS => 0,
        _ => return None,
    })
}

/// Watched bytes at `addr` as a value of the type `ty` was set as (a bit-field's bits
/// within them).
fn watched_value(ty: &TypedValue, addr: u64, bytes: &[u8]) -> TypedValue {
    TypedValue {
        file: ty.file.clone(),
        value: Value {
            ty: ty.value.ty,
            place: Place::copied(addr, bytes.to_vec()),
            bits: ty.value.bits,
        },
    }
}
