//! Symbols: the module list, names to addresses and back, disassembly.

use super::*;

/// How far from a line without code its neighbours with code are looked for.
const NEAR_LINES: u32 = 20;

impl Session {
    // ---- symbols -----------------------------------------------------------------------

    pub(super) fn refresh_symbols(&mut self) {
        self.symbols.set_debug_dirs(self.config.debug_dirs.clone());
        let (process, symbols) = match (&self.targets.core, &self.targets.live) {
            (Some(c), _) => (&c.process as &dyn ProcessView, &mut self.symbols),
            (None, Some(t)) if !t.process.is_dead() => {
                (t.process.as_ref() as &dyn ProcessView, &mut self.symbols)
            }
            _ => return,
        };
        let Ok(entries) = process.maps() else {
            return;
        };
        let exe = process.exe_path();
        symbols.refresh(&entries, exe.as_deref(), &|m: &maps::MapEntry| {
            process.local_file(m)
        });
        // The vDSO has no file: its symbols come from the process's memory, once.
        if let Some((start, end)) = self.symbols.vdso_wanted() {
            let mut bytes = vec![0u8; (end.0 - start.0) as usize];
            let read = self
                .targets
                .view_ref()
                .is_ok_and(|p| p.read_memory(start.0, &mut bytes).is_ok());
            if read {
                self.symbols.add_vdso(bytes);
            }
        }
        if self.targets.core.is_none() {
            let base = self.symbols.exe().map(|m| m.start.0);
            if let Some(t) = &mut self.targets.live {
                t.exe_base = base;
            }
        }
        self.loader.maps_read_at = Some(Instant::now());
        self.loader.ran_since_maps = false;
    }

    /// Sets the directories searched for separate debug files (`config.debug_dirs`), each
    /// checked to be a directory; the modules are read again with them.
    pub fn set_debug_dirs(&mut self, dirs: Vec<PathBuf>) -> Result<()> {
        check_debug_dirs(&dirs).map_err(SessionError::Invalid)?;
        self.config.debug_dirs = dirs;
        self.symbols.set_debug_dirs(self.config.debug_dirs.clone());
        self.refresh_symbols();
        Ok(())
    }

    /// Re-reads the module list when an address or name is unknown: once after each stop
    /// (the process may have mapped memory while it ran: a heap made by its first malloc
    /// is new at the first breakpoint), else at most twice a second.
    pub(super) fn refresh_symbols_on_miss(&mut self) -> bool {
        let stale = self.loader.ran_since_maps
            || self
                .loader
                .maps_read_at
                .is_none_or(|t| t.elapsed() > Duration::from_millis(500));
        if stale && self.is_live() {
            self.refresh_symbols();
            return true;
        }
        false
    }

    pub fn symbolize(&mut self, addr: u64) -> Option<String> {
        if let Some(s) = self.symbols.symbolize(RuntimeAddr(addr)) {
            return Some(s);
        }
        if self.symbols.module_at(RuntimeAddr(addr)).is_none() && self.refresh_symbols_on_miss() {
            return self.symbols.symbolize(RuntimeAddr(addr));
        }
        None
    }

    /// `symbolize` over the modules known now, reading nothing: what a printer may ask
    /// while a value is printed.
    pub fn symbolize_known(&self, addr: u64) -> Option<String> {
        self.symbols.symbolize(RuntimeAddr(addr))
    }

    /// `main`, `main+0x10`, `libc.so.6:puts`, `0x401136`.
    pub fn resolve(&mut self, expr: &str) -> Result<u64> {
        if let Some((file, line)) = source_line_expr(expr) {
            if line == 0 {
                return Err(SessionError::Invalid(format!(
                    "no line 0 in {file}: line numbers start at 1"
                )));
            }
            if let Some(a) = self.symbols.line_address(file, line) {
                return Ok(a.0);
            }
            if !self.symbols.has_source_file(file) {
                // A library loaded later may have it: a breakpoint there can wait.
                return Err(SessionError::NotLoaded {
                    file: file.to_string(),
                });
            }
            // The lines around it that have code (a blank line, a comment, a declaration the
            // optimizer folded away): what the user most likely meant, in one answer.
            let has_code = |s: &mut Self, l: u32| s.symbols.line_address(file, l).is_some();
            let before = (line.saturating_sub(NEAR_LINES).max(1)..line)
                .rev()
                .find(|&l| has_code(self, l));
            let after = (line + 1..=line + NEAR_LINES).find(|&l| has_code(self, l));
            let near: Vec<String> = [before, after]
                .into_iter()
                .flatten()
                .map(|l| format!("{file}:{l}"))
                .collect();
            let hint = if near.is_empty() {
                " (is the line inside a function?)".to_string()
            } else {
                format!("; the nearest lines with code: {}", near.join(", "))
            };
            return Err(SessionError::Invalid(format!(
                "no code for {file}:{line} in the line tables{hint}"
            )));
        }
        match self.try_resolve_symbol(expr)? {
            Some(addr) => Ok(addr),
            None => Err(self.symbols.unknown_in(expr).into()),
        }
    }

    /// A symbol expression's address, the module list read again once if the name is not in
    /// it; `Ok(None)` for a name no module has, without the suggestions an error carries.
    fn try_resolve_symbol(&mut self, expr: &str) -> Result<Option<u64>> {
        if let Some((file, func)) = super::file_scope::file_scoped(expr) {
            // `'net.c'::publish`: the function of that source file, when two files (or
            // plugins) each have a static one of that name.
            let first = |s: &Self| {
                super::file_scope::functions_in_file(&s.symbols, &file, &func)
                    .first()
                    .map(|a| a.0)
            };
            if let Some(addr) = first(self) {
                return Ok(Some(addr));
            }
            if self.refresh_symbols_on_miss() {
                return Ok(first(self));
            }
            return Ok(None);
        }
        if let Some(addr) = self.symbols.try_resolve(expr)? {
            return Ok(Some(addr.0));
        }
        if self.refresh_symbols_on_miss() {
            return Ok(self.symbols.try_resolve(expr)?.map(|a| a.0));
        }
        Ok(None)
    }

    /// Where a breakpoint on `spec` goes: a function named alone (`walk`, `lib:f`) stops after
    /// its prologue, where its arguments are in their declared places (as gdb and lldb do);
    /// any other form (`f+0`, an address, `file.c:line`) is taken exactly.
    pub fn resolve_breakpoint(&mut self, spec: &str) -> Result<u64> {
        let addr = if source_line_expr(spec).is_some() {
            self.resolve(spec)?
        } else {
            match self.try_resolve_symbol(spec)? {
                // A name only some library's data has (libc's `name`) while the program's
                // functions `Stage::name` have it too: those are what a breakpoint means
                // (it was refused as data, not code).
                Some(a) if names_a_function(spec) && self.is_data_symbol(a) => {
                    match self.same_named_sites(spec).first() {
                        Some(&f) => f,
                        None => a,
                    }
                }
                Some(a) => a,
                // A function with no code of its own (inlined into every caller) stops at
                // each inlined copy; the lowest is the breakpoint's address.
                None => {
                    let sites = if names_a_function(spec) {
                        // Several functions of that name (`price` of two classes): the
                        // first's body, the others are further sites. None with code of
                        // its own: its inlined copies.
                        let mut own = self.same_named_sites(spec);
                        if own.is_empty() {
                            own = self.inlined_copies(spec);
                        }
                        own
                    } else {
                        Vec::new()
                    };
                    return match sites.first() {
                        Some(&a) => Ok(a),
                        None => Err(self.symbols.unknown_in(spec).into()),
                    };
                }
            }
        };
        if !names_a_function(spec) {
            return Ok(addr);
        }
        let Some((module, sym, 0)) = self.symbols.symbol_at(RuntimeAddr(addr)) else {
            return Ok(addr);
        };
        if sym.kind != crate::symbols::SymKind::Func {
            return Ok(addr);
        }
        let func = module.bias.to_file(RuntimeAddr(addr));
        let body = values::body_start(&module.file, func);
        Ok(module.bias.to_runtime(body).0)
    }

    /// The entries of the inlined copies of the function a breakpoint spec names (see
    /// `SymbolStore::inlined_function_sites`): gdb's further locations of `break weigh`
    /// when `weigh` was also inlined into its callers. With an out-of-line copy, the copies
    /// inlined in its unit (one unit walked, never the whole program's index).
    pub(super) fn inlined_function_sites(&mut self, spec: &str) -> Vec<u64> {
        if !names_a_function(spec) {
            return Vec::new();
        }
        let mut sites = match self.symbols.try_resolve(spec.trim()) {
            // With out-of-line code: the copies inlined in its unit, and the specialised
            // copies GCC made of it (after their prologues, as the function's own site).
            Ok(Some(func)) => {
                let name = function_of_spec(spec);
                let mut sites: Vec<u64> = self
                    .symbols
                    .inlined_sites_near(func, name, super::points::MAX_INLINED_SITES)
                    .into_iter()
                    .map(|a| a.0)
                    .collect();
                for clone in self.symbols.clones_of(func, name) {
                    if let Some(m) = self.symbols.module_at(clone) {
                        let body = values::body_start(&m.file, m.bias.to_file(clone));
                        sites.push(m.bias.to_runtime(body).0);
                    }
                }
                sites
            }
            Ok(None) => self.inlined_copies(spec),
            Err(_) => return Vec::new(),
        };
        sites.extend(self.same_named_sites(spec));
        sites
    }

    /// After its prologue, every function `spec` names (see
    /// `SymbolStore::functions_named`): the further locations of a breakpoint on a name
    /// several functions have, which stopped in one of them only (a Rust generic's other
    /// instances) or in none (`price` of `Widget::price` and `Gadget::price` waited as
    /// pending while the program ran to its end).
    fn same_named_sites(&mut self, spec: &str) -> Vec<u64> {
        let most = super::points::MAX_INLINED_SITES;
        let mut found = self.symbols.functions_named(spec.trim(), most + 1);
        if found.len() > most {
            found.truncate(most);
            self.points.sites_cut = Some(format!(
                "more than {most} functions are named '{}': it stops in the first {most} by address only (name one: its class or module with it, or a file:line)",
                spec.trim()
            ));
        }
        found
            .into_iter()
            .filter_map(|f| {
                let m = self.symbols.module_at(f)?;
                let body = values::body_start(&m.file, m.bias.to_file(f));
                Some(m.bias.to_runtime(body).0)
            })
            .collect()
    }

    /// Whether `addr` is where a data symbol (an object, not a function) begins.
    fn is_data_symbol(&self, addr: u64) -> bool {
        self.symbols
            .symbol_at(RuntimeAddr(addr))
            .is_some_and(|(_, sym, off)| off == 0 && sym.kind == crate::symbols::SymKind::Object)
    }

    /// The entries of the inlined copies of the function `spec` names (no symbol checked).
    fn inlined_copies(&mut self, spec: &str) -> Vec<u64> {
        self.symbols
            .inlined_function_sites(function_of_spec(spec), super::points::MAX_INLINED_SITES)
            .into_iter()
            .map(|a| a.0)
            .collect()
    }

    /// What the last breakpoint set left out (see `same_named_sites`), once.
    pub fn take_sites_cut(&mut self) -> Option<String> {
        self.points.sites_cut.take()
    }

    /// The size of a plain symbol name (no offset), for default watch lengths.
    pub fn symbol_size(&self, name: &str) -> Option<u64> {
        self.symbols.lookup(name).map(|(_, sym, _)| sym.size)
    }

    pub fn symbol_store(&self) -> &SymbolStore {
        &self.symbols
    }

    /// The symbol store, its module list first re-read if it may be stale (a library loaded
    /// since, at most twice a second): for listings of every module.
    pub fn fresh_symbols(&mut self) -> &SymbolStore {
        self.refresh_symbols_on_miss();
        &self.symbols
    }

    /// Up to `max` bytes of code at `addr`: the process's memory, else (the process is gone,
    /// or unmapped the address with dlclose) the bytes of the module file that held it.
    fn code_bytes(&mut self, addr: u64, max: usize) -> Result<Vec<u8>> {
        match self.read_memory_partial(addr, max) {
            Ok(bytes) => Ok(bytes),
            Err(e) => self.symbols.file_code(RuntimeAddr(addr), max).ok_or(e),
        }
    }

    pub fn disasm(&mut self, addr: u64, count: usize) -> Result<Vec<Insn>> {
        // x86 instructions are at most 15 bytes.
        let want = count.saturating_mul(15).min(64 * 1024);
        let bytes = self.code_bytes(addr, want)?;
        let store = &self.symbols;
        let resolver = |a: u64| store.symbolize(RuntimeAddr(a));
        Ok(disassemble(&bytes, addr, count, &resolver))
    }

    /// The whole function holding `addr`, from its first instruction to its last (its symbol's
    /// size), and how many of its bytes were left out past `MAX_FUNCTION_INSNS`.
    pub fn disasm_function(&mut self, addr: u64) -> Result<(Vec<Insn>, u64)> {
        const MAX_FUNCTION_INSNS: usize = 10_000;
        let (start, size, name) = self
            .symbols
            .symbol_at(RuntimeAddr(addr))
            .map(|(_, sym, off)| (addr - off, sym.size, sym.display_name().into_owned()))
            .ok_or_else(|| {
                SessionError::Invalid(format!(
                    "no function symbol covers {addr:#x}; disassemble a count instead: state.disasm(n, addr)"
                ))
            })?;
        if size == 0 {
            return Err(SessionError::Invalid(format!(
                "{name} has no size in the symbol table; disassemble a count instead: state.disasm(n, '{name}')"
            )));
        }
        let end = start.saturating_add(size);
        let want = size.min(MAX_FUNCTION_INSNS as u64 * 15) as usize;
        let bytes = self.code_bytes(start, want)?;
        let store = &self.symbols;
        let resolver = |a: u64| store.symbolize(RuntimeAddr(a));
        let mut insns = disassemble(&bytes, start, MAX_FUNCTION_INSNS, &resolver);
        insns.retain(|i| i.addr < end);
        let covered = insns.last().map_or(start, |i| i.addr + i.len as u64);
        Ok((insns, end.saturating_sub(covered)))
    }

    /// The process is gone (or replaced): breakpoints and watchpoints wait for the next one.
    pub(super) fn forget_process(&mut self) {
        self.points.breakpoints.disarm_all();
        self.points.watchpoints.disarm_all();
        // Threads of that process whose watch hits waited: none will be reported.
        self.at_stop.late_watch_hits.clear();
        // The recording was this process's: another one (or a new image) must never have
        // the log written into it.
        if let Some(rec) = &mut self.timeline.recording {
            rec.active = false;
            rec.stale.get_or_insert_with(|| {
                "the process it recorded is no longer the one debugged (it ended, was detached, ran exec or another was selected)".into()
            });
        }
    }

    /// Arms every waiting breakpoint, watchpoint and tracepoint in the new process,
    /// resolving what the user wrote again (a symbol may have moved). One that cannot be
    /// armed stays waiting.
    pub(super) fn rearm(&mut self) {
        self.push_syscall_catch();
        for i in 0..self.points.breakpoints.list().len() {
            if self.arm_breakpoint(i) {
                let b = &mut self.points.breakpoints.list_mut()[i];
                b.hits = 0;
                b.by_process.clear();
            }
        }
        for i in 0..self.points.watchpoints.list().len() {
            let w = self.points.watchpoints.list()[i].clone();
            let Ok(addr) = self.resolve(&w.spec) else {
                continue;
            };
            let Ok(last) = self.read_memory(addr, w.len as usize) else {
                continue;
            };
            if self.targets.live().is_err() {
                return;
            }
            if let Ok(slots) = self.arm_watch(addr, w.len, w.kind) {
                let wp = &mut self.points.watchpoints.list_mut()[i];
                *wp = Watchpoint {
                    addr,
                    slots,
                    last,
                    armed: true,
                    hits: 0,
                    ..w
                };
            }
        }
        // Last: a breakpoint inside the bytes a jump would cover makes the tracepoint a
        // trap, as when both were set in the first process.
        self.arm_pending_tracepoints();
    }
}

/// `Err` naming the first of `dirs` that is not a directory.
pub(crate) fn check_debug_dirs(dirs: &[PathBuf]) -> std::result::Result<(), String> {
    match dirs.iter().find(|d| !d.is_dir()) {
        Some(d) => Err(format!("{}: not a directory", d.display())),
        None => Ok(()),
    }
}

/// Whether a breakpoint spec is a function named alone (`walk`, `lib:f`), not an address,
/// an offset or a source line.
pub(super) fn names_a_function(spec: &str) -> bool {
    // The file of `'my-file.c'::f` may hold any character.
    if let Some((_, f)) = super::file_scope::file_scoped(spec) {
        return names_a_function(&f);
    }
    !spec.contains(['+', '-'])
        && source_line_expr(spec).is_none()
        && !spec.trim().starts_with(|c: char| c.is_ascii_digit())
}

/// The function a function breakpoint's spec names: `puts` for `libc:puts`, `geo::area` as
/// it is.
pub(super) fn function_of_spec(spec: &str) -> &str {
    let spec = spec.trim();
    match spec.rsplit_once(':') {
        Some((module, f)) if !module.ends_with(':') => f,
        _ => spec,
    }
}
