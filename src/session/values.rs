//! Typed values of the stopped target: the variables of any unwind row (one numbering with
//! `state.unwind()`: inlined calls are rows of their own), globals and statics by name,
//! thread-locals with their types, C-like paths (the operations scripts apply to a value are
//! `value_ops`). The DWARF work is in `symbols::dwarf`; this file gives it the frame's
//! registers, the process's memory and the thread's TLS block.

use super::error::guarded;
use super::frame_view::{EntryMemo, FrameParam, FrameVarRow, FrameView, MAX_ENTRY_DEPTH};
use super::inspection::Inspection;
use super::tailcalls::erased_row_vars;
use super::typed_value::TypedValue;
use super::*;
use crate::os::fpregs::FpRegs;
use crate::symbols::dwarf::path::{self, Path};
use crate::symbols::dwarf::{FrameVar, Limits};
use crate::symbols::{FileAddr, LoadedModule, ModuleFile};

/// Inlined calls nested in one physical frame searched at most for a name.
const MAX_INLINE_ROWS: usize = 16;

impl Session {
    /// The variables of unwind row `n` (parameters first, in declaration order), each with
    /// its value or the reason there is none.
    pub fn frame_vars(&mut self, n: usize) -> Result<Vec<FrameVarRow>> {
        let (frames, row) = self.frame_row(n)?;
        let fs_base = self.regs()?.fs_base;
        let fpu = self.selected_fp_regs();
        let ins = self.inspect(fs_base)?;
        row_vars(ins, &frames, &row, fpu.as_ref(), &EntryMemo::default())
    }

    /// The selected thread's vector registers, when they can be read (a core may lack them).
    pub(super) fn selected_fp_regs(&mut self) -> Option<FpRegs> {
        let process = self.targets.view().ok()?;
        let tid = process.selected();
        process.fp_regs(tid).ok()
    }

    /// The parameters of each row, to be shown by `frame_args_text`. `None` for a row
    /// DWARF does not describe.
    pub fn frame_params(&mut self, rows: &[FrameRow]) -> Vec<Option<Vec<FrameParam>>> {
        let deepest = rows.iter().map(|r| r.physical).max().unwrap_or(0);
        let Ok((frames, _)) = self.physical_frames(deepest + 2 + MAX_ENTRY_DEPTH) else {
            return vec![None; rows.len()];
        };
        let fs_base = self.thread_pointer();
        let fpu = self.selected_fp_regs();
        let memo = EntryMemo::default();
        let Ok(ins) = self.inspect(fs_base) else {
            return vec![None; rows.len()];
        };
        rows.iter()
            .map(|row| {
                let vars = row_vars(ins, &frames, row, fpu.as_ref(), &memo).ok()?;
                if vars.is_empty() {
                    return None;
                }
                Some(
                    vars.into_iter()
                        .filter(|v| v.param)
                        .map(|v| FrameParam {
                            name: v.name,
                            value: v.value,
                            entry: v.entry,
                        })
                        .collect(),
                )
            })
            .collect()
    }

    /// `n=0x5555555580e0, c=BLUE`: a row's parameters, each cut short, the whole cut at
    /// `ARGS_CHARS`, each printed by `text` (`value_text` with the front end's printers).
    /// A parameter whose value at entry is known and differs, or is all that is known,
    /// shows it too, as gdb spells it: `m=769, m@entry=9`.
    pub fn frame_args_text(
        params: &[FrameParam],
        text_of: &dyn Fn(&TypedValue, &Limits) -> Result<String>,
    ) -> String {
        const ARG_CHARS: usize = 60;
        const ARGS_CHARS: usize = 160;
        let limits = Limits {
            depth: 1,
            elements: 4,
            chars: 24,
            total: ARG_CHARS,
            pointees: true,
        };
        let mut text = String::new();
        for (i, p) in params.iter().enumerate() {
            let name = &p.name;
            let value = text_of(&p.value, &limits).unwrap_or_else(|e| format!("<{e}>"));
            let mut part = format!("{}{name}={value}", if i > 0 { ", " } else { "" });
            if let Some(entry) = &p.entry {
                let at_entry = text_of(entry, &limits).unwrap_or_else(|e| format!("<{e}>"));
                if at_entry != value {
                    part.push_str(&format!(", {name}@entry={at_entry}"));
                }
            }
            if text.len() + part.len() > ARGS_CHARS {
                text.push_str(", …");
                break;
            }
            text.push_str(&part);
        }
        text
    }

    /// The physical frames down to row `n` and that row.
    fn frame_row(&mut self, n: usize) -> Result<(Vec<unwind::Frame>, FrameRow)> {
        let (rows, _) = self.unwind(n + 1, true)?;
        let row = rows.get(n).cloned().ok_or_else(|| {
            SessionError::Invalid(format!(
                "no frame {n}: the stack has {} frame{} (state.unwind({{all: true}}) lists them all: without it the listing ends at main)",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" }
            ))
        })?;
        // More physical frames than the row needs: its CFA is the caller's sp, and an entry
        // value may be recovered through several callers' call sites.
        let (frames, _) = self.physical_frames(row.physical + 2 + MAX_ENTRY_DEPTH)?;
        if frames.len() <= row.physical {
            return Err(SessionError::Invalid(format!("no frame {n}")));
        }
        Ok((frames, row))
    }

    /// A variable by name: a parameter or local of frame `n` (the innermost block's first),
    /// else a global or static (the frame's own module first, then the executable, then the
    /// libraries).
    pub fn lookup_var(&mut self, name: &str, n: usize) -> Result<TypedValue> {
        if name.trim_start().starts_with('\'') {
            return match path::parse(name).map_err(|e| SessionError::Invalid(e.to_string()))? {
                Path::InFile { file, name } => self.lookup_in_file(&file, &name),
                _ => Err(SessionError::Invalid(format!(
                    "{name} is a path, not a variable name (state.value() reads paths)"
                ))),
            };
        }
        // A frame past the stack's end says so, not "no variable" (nor a global's value).
        if n > 0 {
            self.frame_row(n)?;
        }
        // `this` of the row, read with its variables (no second walk of them for a member).
        let mut this = None;
        if !name.contains("::") {
            let (found, row_this) = self.row_var_and_this(name, n);
            if let Some(v) = found {
                return Ok(v);
            }
            this = row_this;
            // An inlined call's row (an iterator helper the optimizer put where a function
            // breakpoint stops): the function it is inlined in, the same physical frame's
            // next rows, holds the names the source shows around it (the function's own
            // parameters).
            if let Ok((rows, _)) = self.unwind(n + MAX_INLINE_ROWS + 1, true) {
                let physical = rows.get(n).map(|r| r.physical);
                let mut k = n;
                while rows.get(k).is_some_and(|r| r.inlined) && k < n + MAX_INLINE_ROWS {
                    k += 1;
                    if rows.get(k).map(|r| r.physical) != physical {
                        break;
                    }
                    if let Some(v) = self.row_var(name, k) {
                        return Ok(v);
                    }
                }
            }
        }
        if let Some(this) = this.filter(|_| !name.ends_with("@entry")) {
            // In a member function a name is first a member of the object (C++'s lookup:
            // the class scope comes between the function's and the namespace's).
            if let Some(member) = self.this_member(&this, name) {
                return Ok(member);
            }
        }
        if let Some(param) = name.strip_suffix("@entry") {
            return Err(SessionError::Invalid(format!(
                "{name}: the value {param} had at entry is not known here (gdb's rule: a \
                 parameter of this frame's function kept in a register at its entry, whose \
                 caller's call site says what it passed)"
            )));
        }
        match self.lookup_global(name) {
            Err(SessionError::Invalid(msg)) if msg.starts_with("no variable '") => Err(
                SessionError::Invalid(match self.outer_frame_with(name, n) {
                    Some((k, function)) => {
                        format!("{msg}; frame {k} ({function}) has one: state.var('{name}', {k})")
                    }
                    None => msg,
                }),
            ),
            other => other,
        }
    }

    /// The nearest frame outside row `n` (up to a few) with a parameter or local `name`, and
    /// its function: where a name the selected frame lacks lives (a caller's local).
    fn outer_frame_with(&mut self, name: &str, n: usize) -> Option<(usize, String)> {
        const OUTER_FRAMES: usize = 8;
        if name.contains(['.', '[', '(', '*', '&', ':', '$', '-']) {
            return None;
        }
        let (rows, _) = self.unwind(n + OUTER_FRAMES + 1, true).ok()?;
        for (k, row) in rows.iter().enumerate().skip(n + 1) {
            if self.row_var(name, k).is_some() {
                let function = row.symbol.clone().unwrap_or_else(|| "?".into());
                let function = function.split('+').next().unwrap_or("?").to_string();
                return Some((k, function));
            }
        }
        None
    }

    /// Member `name` of the object `this` points to.
    fn this_member(&mut self, this: &TypedValue, name: &str) -> Option<TypedValue> {
        let object = self.value_deref(this).ok()?;
        if !self.value_members(&object).iter().any(|m| m == name) {
            return None;
        }
        self.value_member(&object, name).ok()
    }

    /// The parameter or local `name` of unwind row `n` (a parameter before a local of the
    /// same name; of locals, the innermost block's, the last listed); `p@entry` is parameter
    /// `p`'s value at the function's entry.
    fn row_var(&mut self, name: &str, n: usize) -> Option<TypedValue> {
        self.row_var_and_this(name, n).0
    }

    /// `row_var`, and the row's `this` (a member function's) when `name` is not found:
    /// one walk of the row's variables for both.
    fn row_var_and_this(
        &mut self,
        name: &str,
        n: usize,
    ) -> (Option<TypedValue>, Option<TypedValue>) {
        let Ok(vars) = self.frame_vars(n) else {
            return (None, None);
        };
        if let Some(param) = name.strip_suffix("@entry") {
            let entry = vars
                .into_iter()
                .find(|v| v.param && v.name == param)
                .and_then(|v| v.entry);
            return (entry, None);
        }
        let mut this = None;
        let mut found: Option<(bool, TypedValue)> = None;
        for v in vars {
            if v.name == name {
                if found.as_ref().is_none_or(|(param, _)| v.param >= *param) {
                    found = Some((v.param, v.value));
                }
            } else if v.name == "this" && v.param {
                this = Some(v.value);
            }
        }
        match found {
            Some((_, v)) => (Some(v), None),
            None => (None, this),
        }
    }

    /// A global or static variable by name.
    pub fn lookup_global(&mut self, name: &str) -> Result<TypedValue> {
        let fs_base = self.thread_pointer();
        let pc = self.pc().unwrap_or(0);
        let ins = self.inspect(fs_base)?;
        let store = ins.store;
        let here = store.module_at(RuntimeAddr(pc));
        // The unit whose code is running: its own statics come first.
        let here_unit = here.and_then(|m| {
            let dwarf = m.file.dwarf()?;
            dwarf
                .unit_for_pc(m.bias.to_file(RuntimeAddr(pc)).0)
                .map(|u| u.start())
        });
        let read = |module, die| ins.global_value(module, die);
        // The first definition found without a value: the answer when no other has one.
        let mut gone: Option<TypedValue> = None;
        let mut note_gone = |module: &LoadedModule, die: usize| {
            if gone.is_none() {
                gone = ins.global_value_or_gone(module, die);
            }
        };
        // gdb's order: the running unit's statics and its module's globals (external
        // names), then the executable's, then each library's globals, then the statics of
        // the other units in module order. A static of some other unit of the module that
        // is running (libc's own `pool` while stopped in libc) never hides the program's.
        let is_here = |m: &LoadedModule| here.is_some_and(|h| h.path == m.path);
        let mut order: Vec<&LoadedModule> = store.modules().iter().collect();
        order.sort_by_key(|m| (!is_here(m), !m.is_exe));
        let mut statics: Vec<(&LoadedModule, usize)> = Vec::new();
        for module in order {
            let Some(debug) = module.file.dwarf().map(|d| &d.tree) else {
                continue;
            };
            // Within a module: the running unit's, then external names, then statics.
            let mut dies: Vec<(u8, usize)> = Vec::new();
            for die in debug.global_vars(name) {
                let Some((unit, entry)) = debug.entry(die) else {
                    continue;
                };
                let rank = if is_here(module) && here_unit == Some(unit.start()) {
                    0
                } else if debug.is_external(&unit, &entry) {
                    1
                } else {
                    2
                };
                dies.push((rank, die));
            }
            dies.sort_by_key(|d| d.0);
            for (rank, die) in dies {
                if rank < 2 || module.is_exe {
                    if let Some(v) = read(module, die) {
                        return Ok(v);
                    }
                    note_gone(module, die);
                } else {
                    statics.push((module, die));
                }
            }
        }
        // The running module's other statics last. A library's file-local static is never
        // the answer for a bare name while the program runs elsewhere (libm's `a` is not a
        // lambda's parameter): gdb does not find it either; the error says where it is.
        statics.sort_by_key(|(m, _)| is_here(m));
        let mut elsewhere: Option<&str> = None;
        for (module, die) in statics {
            if !module.is_exe && !is_here(module) {
                elsewhere.get_or_insert(module.name.as_str());
                continue;
            }
            if let Some(v) = read(module, die) {
                return Ok(v);
            }
            note_gone(module, die);
        }
        if let Some(v) = gone {
            return Ok(v);
        }
        // `chain::visits`: a static local of a function, as gdb reads `function::variable`.
        if let Some((func, var)) = name.rsplit_once("::") {
            if let Some(v) = ins.function_static(func, var) {
                return Ok(v);
            }
        }
        // `Worker::created` under `using namespace sched;`: the one global of the program
        // (or of the running module) whose qualified name ends so, as gdb finds it through
        // the using-directive; a template's spelled with other spaces (`char>>` for GCC's
        // `char> >`). Two or more are named in the error, never one picked.
        let mut outer: Vec<String> = Vec::new();
        if (name.contains("::") && !name.starts_with("::")) || name.contains('<') {
            for module in store.modules().iter().filter(|m| m.is_exe || is_here(m)) {
                if let Some(d) = module.file.dwarf() {
                    for k in d.tree.globals_like(name, 4) {
                        // The name itself was looked up above (and had no value).
                        if k != name && !outer.contains(&k) {
                            outer.push(k);
                        }
                    }
                }
            }
        }
        // `Kind::Key`: an enumerator, as gdb reads one.
        if name.contains("::") {
            if let Some(v) = self.enumerator(name) {
                return Ok(v);
            }
        }
        if let [one] = outer.as_slice() {
            let one = one.clone();
            return self.lookup_global(&one);
        }
        if outer.len() > 1 {
            return Err(SessionError::Invalid(format!(
                "no variable '{name}' in this frame or among the globals; it could be any of {} (name one in full)",
                outer.join(", ")
            )));
        }
        // `Account::rate`: a class's static with no variable of its own (a constant the
        // class declares), named in full.
        if let Some(v) = self.class_static(name) {
            return Ok(v);
        }
        let mut near: Vec<String> = Vec::new();
        for module in store.modules() {
            if let Some(d) = module.file.dwarf() {
                near.extend(d.tree.similar_globals(name, 3));
            }
            if near.len() >= 3 {
                break;
            }
        }
        near.truncate(3);
        if let Some(module) = elsewhere {
            return Err(SessionError::Invalid(format!(
                "no variable '{name}' in this frame or among the globals; {module} has a \
                 file-local static '{name}' (read one file's static as \"'file.c'::{name}\")"
            )));
        }
        // `state.var('shop.items[1].name')`: a path, which state.var does not take.
        let path = name.contains(['.', '[', '(', '*', '&']) || name.contains("->");
        Err(SessionError::Invalid(format!(
            "no variable '{name}' in this frame or among the globals (DWARF, -g){}",
            if let Some(reg) = name.strip_prefix('$') {
                format!("; '{name}' is gdb's register syntax: read it with state.registers.{reg}")
            } else if path {
                format!("; state.var takes a name: a path is state.value('{name}')")
            } else if near.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", near.join(", "))
            }
        )))
    }

    /// Where a value path (walked step by step by the script layer, through printers)
    /// starts: the variable it names, a local, global or one file's static; a number or a
    /// quoted key is no start.
    pub fn path_root(&mut self, p: &Path, n: usize) -> Result<TypedValue> {
        match p {
            Path::Name(name) => self.lookup_var(name, n),
            Path::InFile { file, name } => self.lookup_in_file(file, name),
            Path::Number(_) => Err(SessionError::Invalid(
                "a number is not a value path (use it as an index: a[3])".into(),
            )),
            Path::Text(_) => Err(SessionError::Invalid(
                "a quoted string is a map's key, only as an index: stock[\"nuts\"]".into(),
            )),
            _ => Err(SessionError::Invalid(
                "a path's steps are taken one by one; this one starts with no variable".into(),
            )),
        }
    }
}

/// Where the body of the function starting at `func` begins (after its prologue); the
/// function's start when DWARF does not say.
pub(super) fn body_start(file: &ModuleFile, func: FileAddr) -> FileAddr {
    file.body_start(func)
}

/// The variables of one unwind row, given the physical frames (at least one past it).
fn row_vars(
    ins: Inspection<'_>,
    frames: &[unwind::Frame],
    row: &FrameRow,
    fpu: Option<&FpRegs>,
    memo: &EntryMemo,
) -> Result<Vec<FrameVarRow>> {
    if row.tail_call {
        return erased_row_vars(ins, frames, row, memo);
    }
    let store = ins.store;
    let Some(frame) = frames.get(row.physical) else {
        return Ok(Vec::new());
    };
    let pc = frame.lookup_pc();
    let Some(module) = store.module_at(RuntimeAddr(pc)) else {
        return Ok(Vec::new());
    };
    let file = module.file.clone();
    let pc_file = module.bias.to_file(RuntimeAddr(pc));
    let Some(dwarf) = file.dwarf() else {
        return Ok(Vec::new());
    };
    let Some(chain) = dwarf.scopes_at(pc_file) else {
        return Ok(Vec::new());
    };
    let exact = matches!(frame.source, FrameSource::Regs | FrameSource::SignalFrame);
    let low = dwarf.function_start(&chain);
    let view = FrameView {
        ins,
        frames,
        index: row.physical,
        bias: module.bias.0,
        tail: 0,
        tls_module: Some(module),
        at_entry: exact && low == Some(pc_file),
        depth: 0,
        fpu,
        memo: Some(memo),
    };
    let in_prologue =
        exact && low.is_some_and(|lo| pc_file >= lo && pc_file < body_start(&file, lo));
    // The inline chain may be shorter than the rows where line tables and scopes
    // disagree; the deepest scope known stands in.
    let level = row.level.min(chain.chain.len().saturating_sub(1));
    let vars: Vec<FrameVar> = guarded(|| {
        dwarf
            .tree
            .frame_vars(&chain, level, pc_file.0, &view, in_prologue)
    })?;
    Ok(vars
        .into_iter()
        .map(|v| FrameVarRow::of(v, &file))
        .collect())
}
