//! Threads, stacks, unwinding and source lines.

use super::*;
use crate::symbols::dwarf::Location;

/// DWARF register numbers 0..=16 by name (x86-64 psABI order).
const DWARF_NAMES: [&str; 17] = [
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip",
];

/// One row of `state.unwind()`: a physical frame, or a call inlined into one.
#[derive(Debug, Clone)]
pub struct FrameRow {
    pub frame: usize,
    pub pc: u64,
    pub sp: u64,
    pub symbol: Option<String>,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub inlined: bool,
    /// Registers known in this frame (callee-saved ones in callers), by name.
    pub regs: Vec<(&'static str, u64)>,
    /// How the frame was found: `regs` (frame 0), `cfi`, `fp` (frame pointers), `signal`.
    pub source: &'static str,
    /// Index of the physical frame this row belongs to.
    pub physical: usize,
    /// Which scope of that frame: 0 is the function itself, 1 the call inlined into it,
    /// and so on (the innermost inlined call has the highest level).
    pub level: usize,
    /// A frame a tail call erased, rebuilt from DWARF call-site information between
    /// physical frame `physical` and its caller: its variables are read at its jump (see
    /// `Session::erased_row_vars`); it has no registers of its own to show.
    pub tail_call: bool,
}

/// `state.source()`: the file, pc's line, and the numbered lines around it.
pub struct SourceView {
    pub path: String,
    pub line: u32,
    pub rows: Vec<(u32, String)>,
    /// Why there are no rows: the file could not be read (the location still stands).
    pub unavailable: Option<String>,
}

/// One row of `thread.list()`.
#[derive(Debug, Clone)]
pub struct ThreadRow {
    pub tid: Tid,
    pub name: String,
    pub state: String,
    pub pc: u64,
    pub symbol: Option<String>,
    pub selected: bool,
}

/// How far `stack_top` unwinds looking for a stack's first frame.
const STACK_TOP_FRAMES: usize = 4096;
/// The largest source file read (the biggest generated sources, sqlite3.c and the like, are
/// a few tens of MB).
const SOURCE_LIMIT: u64 = 64 << 20;

impl Session {
    // ---- threads, stacks, thread-locals ------------------------------------------------------

    pub fn thread_list(&mut self) -> Result<Vec<ThreadRow>> {
        let tids = self.targets.view()?.thread_ids();
        let selected = self.targets.view()?.selected();
        let mut rows = Vec::with_capacity(tids.len());
        for tid in tids {
            let name = self.targets.view()?.thread_name(tid).unwrap_or_default();
            let running = self.targets.view()?.is_running(tid);
            if running && self.targets.view()?.stuck_reason(tid).is_none() {
                // Inside a listener of a run that may go on: it has no registers to show.
                rows.push(ThreadRow {
                    tid,
                    name,
                    state: "running".into(),
                    pc: 0,
                    symbol: None,
                    selected: tid == selected,
                });
                continue;
            }
            if let Some(why) = self.targets.view()?.stuck_reason(tid) {
                rows.push(ThreadRow {
                    tid,
                    name,
                    state: format!("running: {why}"),
                    pc: 0,
                    symbol: None,
                    selected: tid == selected,
                });
                continue;
            }
            let regs = self.targets.view()?.regs(tid)?;
            let state = self
                .syscall_state(&regs)
                .unwrap_or_else(|| "stopped".into());
            rows.push(ThreadRow {
                tid,
                name,
                state,
                pc: regs.rip,
                symbol: self.symbolize(regs.rip),
                selected: tid == selected,
            });
        }
        Ok(rows)
    }

    /// `in futex` when the thread was stopped inside a system call (pc right after a
    /// `syscall` instruction and orig_rax holding its number).
    pub(super) fn syscall_state(&mut self, regs: &RawRegs) -> Option<String> {
        if (regs.orig_rax as i64) < 0 || regs.rip < 2 || self.register_unknown("orig_rax").is_some()
        {
            return None;
        }
        let mut insn = [0u8; 2];
        self.targets
            .view_ref()
            .ok()?
            .read_memory(regs.rip - 2, &mut insn)
            .ok()?;
        (insn == [0x0f, 0x05]).then(|| format!("in {}", crate::os::syscalls::name(regs.orig_rax)))
    }

    pub fn select_thread(&mut self, tid: Tid) -> Result<()> {
        let process = self.targets.view()?;
        if process.is_running(tid) && process.stuck_reason(tid).is_none() {
            return Err(SessionError::Invalid(format!(
                "thread {tid} is running: inside a listener of a run that may go on, only the event's thread is stopped (return 'stop' to stop every thread, then select it)"
            )));
        }
        if process.select(tid) {
            Ok(())
        } else {
            Err(SessionError::Invalid(format!(
                "no thread {tid}; threads: {}",
                process
                    .thread_ids()
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )))
        }
    }

    /// Bounds of the stack that holds the selected thread's sp.
    pub fn stack(&mut self) -> Result<stack::StackBounds> {
        let sp = self.regs()?.rsp;
        let process = self.targets.view_ref()?;
        let (maps, limit) = (process.maps()?, process.stack_limit());
        stack::stack_bounds(&maps, sp, limit)
            .ok_or_else(|| SessionError::Invalid(format!("sp {sp:#x} is not inside any mapping")))
    }

    /// The top of the selected thread's stack and whether it is exact (see
    /// `stack::refine_top`): unwinds the frames on that stack, so it is asked for only when
    /// someone reads it.
    pub fn stack_top(&mut self) -> Result<(u64, bool)> {
        let bounds = self.stack()?;
        if bounds.kind == "main" {
            return Ok((bounds.top, true));
        }
        let fs_base = self.regs()?.fs_base;
        let (frames, stopped) = self.physical_frames(STACK_TOP_FRAMES)?;
        let low = bounds.usable_base.saturating_sub(bounds.guard_size);
        // The frames on this stack: a signal handler's frames may lead to another one.
        let on_stack: Vec<u64> = frames
            .iter()
            .map(|f| f.sp)
            .take_while(|sp| (low..bounds.top).contains(sp))
            .collect();
        // The first frame of this stack is known when the walk reached the end, or went on
        // to another stack (makecontext's uc_link, a signal handler's alternate stack).
        let outermost = stopped.is_none() || on_stack.len() < frames.len();
        Ok(stack::refine_top(&bounds, &on_stack, outermost, fs_base))
    }

    /// The selected thread's call stack from CFI (frame-pointer fallback), innermost first,
    /// with inlined calls as frames of their own; and why it ended early, if it did.
    /// Like a debugger's backtrace, the listing ends at `main` unless `past_main`: the C
    /// runtime's start-up frames below it are rarely what anyone looks for.
    pub fn unwind(
        &mut self,
        max_frames: usize,
        past_main: bool,
    ) -> Result<(Vec<FrameRow>, Option<String>)> {
        let (frames, stopped) = self.physical_frames(max_frames)?;
        let hidden = match frames.first() {
            Some(f) => self.hidden_inlines(f.pc)?,
            None => 0,
        };
        let mut rows: Vec<FrameRow> = Vec::with_capacity(frames.len());
        for (physical, frame) in frames.iter().enumerate() {
            let symbol = self.symbolize_frame(frame.pc, frame.lookup_pc());
            let mut locations = self.symbols.locations(RuntimeAddr(frame.lookup_pc()));
            if physical == 0 && hidden > 0 && hidden < locations.len() {
                locations.drain(..hidden);
            }
            let regs: Vec<(&'static str, u64)> = DWARF_NAMES
                .iter()
                .enumerate()
                .filter_map(|(n, name)| frame.regs.get(n as u16).map(|v| (*name, v)))
                .collect();
            let base = FrameRow {
                frame: 0,
                pc: frame.pc,
                sp: frame.sp,
                symbol: symbol.clone(),
                file: None,
                line: None,
                inlined: false,
                regs,
                source: match frame.source {
                    FrameSource::Regs => "regs",
                    FrameSource::Cfi => "cfi",
                    FrameSource::FramePointer => "fp",
                    FrameSource::SignalFrame => "signal",
                },
                physical,
                level: 0,
                tail_call: false,
            };
            if locations.is_empty() {
                rows.push(FrameRow {
                    frame: rows.len(),
                    ..base
                });
                continue;
            }
            for (i, loc) in locations.iter().enumerate() {
                // An inlined call has no symbol of its own: its function is its name.
                let symbol = if loc.inlined {
                    loc.function.clone()
                } else {
                    symbol.clone()
                };
                rows.push(FrameRow {
                    frame: rows.len(),
                    symbol,
                    file: loc.file.clone(),
                    line: loc.line,
                    inlined: loc.inlined,
                    level: locations.len() - 1 - i,
                    ..base.clone()
                });
            }
        }
        let mut rows = self.with_tail_calls(rows, &frames);
        if !past_main {
            let is_main = |r: &FrameRow| {
                !r.inlined
                    && r.symbol
                        .as_deref()
                        .is_some_and(|s| s.split('+').next() == Some("main"))
            };
            if let Some(at) = rows.iter().position(is_main) {
                rows.truncate(at + 1);
                return Ok((rows, None));
            }
        }
        Ok((rows, stopped))
    }

    /// How many calls inlined at the selected thread's `pc` its stop has not entered: at a
    /// breakpoint on a function by name, the calls inlined into it that begin right there
    /// (gdb shows the function, not a callee it has not started); 0 at any other stop.
    pub(super) fn hidden_inlines(&mut self, pc: u64) -> Result<usize> {
        let Some((tid, at, named, known)) = self.at_stop.entry_inlines.clone() else {
            return Ok(0);
        };
        if at != pc || self.selected_tid()? != tid {
            return Ok(0);
        }
        if let Some(n) = known {
            return Ok(n);
        }
        // At `file:line`, the line asked for (gdb shows the line, not the first line of a
        // map lookup inlined into it); at a function, the function.
        let n = match source_line_expr(&named) {
            Some((file, line)) => self.hidden_at_line(pc, file, line),
            None => self.symbols.inlined_entries_at(RuntimeAddr(pc), &named),
        };
        self.at_stop.entry_inlines = Some((tid, at, named, Some(n)));
        Ok(n)
    }

    /// The stop line of the selected thread at `pc`: its source position, or where the
    /// outermost call it has not entered was made (see `hidden_inlines`).
    pub(super) fn stop_position(&mut self, pc: u64) -> Option<String> {
        let hidden = self.hidden_inlines(pc).unwrap_or(0);
        if hidden == 0 {
            return self.source_position(pc);
        }
        let locations = self.symbols.locations(RuntimeAddr(pc));
        let loc = locations.get(hidden)?;
        let file = loc.file.as_deref()?;
        let short = super::stop::short_file(file);
        Some(match loc.line {
            Some(n) => format!("{short}:{n}"),
            None => short.to_string(),
        })
    }

    /// `loop.c:15` for an address (the innermost inlined position), if line tables say.
    pub fn source_position(&self, pc: u64) -> Option<String> {
        let loc = self.symbols.line_at(RuntimeAddr(pc))?;
        let file = loc.file?;
        let short = super::stop::short_file(&file).to_string();
        Some(match loc.line {
            Some(n) => format!("{short}:{n}"),
            None => short,
        })
    }

    /// Where the body of the function starting at `pc` begins (past its prologue), when
    /// that function has source lines; `None` for code without (a PLT stub, a library
    /// without debug info) or an address that is no function's start.
    pub fn body_of_function_at(&self, pc: u64) -> Option<u64> {
        let (module, _, off) = self.symbols.symbol_at(RuntimeAddr(pc))?;
        if off != 0 {
            return None;
        }
        let located = self
            .symbols
            .locations(RuntimeAddr(pc))
            .iter()
            .any(|l| l.line.is_some());
        if !located {
            return None;
        }
        let body = module.file.body_start(module.bias.to_file(RuntimeAddr(pc)));
        Some(module.bias.to_runtime(body).0)
    }

    /// `pc` is at a signal handler's return trampoline, glibc's `__restore_rt`
    /// (`mov $15, %rax; syscall`: rt_sigreturn), where a handler returns to: the next two
    /// instructions put back the interrupted code's registers.
    pub fn at_sigreturn(&self, pc: u64) -> bool {
        const RESTORE_RT: [u8; 9] = [0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];
        self.peek_memory(pc, RESTORE_RT.len())
            .is_ok_and(|b| b == RESTORE_RT)
    }

    /// At a PLT stub (`libfn@plt`, the first instruction of a call into another module):
    /// the entry of the function it leads to, where that has source lines and is the
    /// program's own (a library outside the system's directories: libc's printf with
    /// libc6-dbg's lines is run over, see SPEC); `None` elsewhere. The stub jumps there,
    /// through the loader's resolver the first time.
    pub fn plt_target(&mut self, pc: u64) -> Option<u64> {
        let name = self.symbolize_known(pc)?;
        let function = name.strip_suffix("@plt")?;
        let entry = self.resolve(function).ok().filter(|&a| a != pc)?;
        let module = self.symbols.module_at(RuntimeAddr(entry))?;
        let system = [
            "/lib/",
            "/lib64/",
            "/usr/lib/",
            "/usr/lib64/",
            "/usr/local/lib/",
        ]
        .iter()
        .any(|dir| module.path.starts_with(dir));
        if system {
            return None;
        }
        self.body_of_function_at(entry).map(|_| entry)
    }

    /// The selected thread's frames at its pc as a line stepper sees them (see `LineFrames`).
    pub fn line_frames(&mut self) -> Result<Arc<LineFrames>> {
        let pc = self.pc()?;
        let hidden = self.hidden_inlines(pc)?;
        let mut locations = self.symbols.locations(RuntimeAddr(pc));
        locations.reverse();
        let short = |l: &Location| {
            let file = l.file.as_deref()?;
            let file = file.rsplit('/').next().unwrap_or(file);
            Some(format!("{file}:{}", l.line?))
        };
        // Only an inlined call can begin at pc: with none there (most steps), the DIE walk
        // that counts them is not done at all.
        let entries = if locations.len() > 1 {
            self.symbols.inlined_entries_at(RuntimeAddr(pc), "")
        } else {
            0
        };
        let frames = Arc::new(LineFrames {
            lines: locations.iter().map(short).collect(),
            functions: locations.iter().map(|l| l.function.clone()).collect(),
            entries,
            hidden,
            zero: self.symbols.in_line_zero(RuntimeAddr(pc)),
        });
        Ok(frames)
    }

    /// Presents the selected thread's stop as in the frame `n` inlined calls out from the
    /// innermost: a line stepper that stops where an inlined call begins shows the line
    /// making the call, as gdb's `next` does, not the first line of the inlined body.
    pub fn hide_inlines(&mut self, n: usize) -> Result<()> {
        let tid = self.selected_tid()?;
        let pc = self.pc()?;
        self.at_stop.entry_inlines = Some((tid, pc, String::new(), Some(n)));
        Ok(())
    }

    /// The addresses a line stepper at `pc` runs through before it looks where it is (gdb's
    /// step range): the line-table row holding `pc`, cut where the outermost of `hidden`
    /// inlined calls that a stop there hides ends.
    pub fn step_range(&self, pc: u64, hidden: usize) -> Option<(u64, u64)> {
        let (start, end) = self.symbols.row_span(RuntimeAddr(pc))?;
        if hidden == 0 {
            return Some((start, end));
        }
        let call_end = self.symbols.inlined_call_end(RuntimeAddr(pc), hidden)?;
        Some((start, end.min(call_end.0)))
    }

    /// Whether a line-table row (statement or not) begins exactly at `pc`.
    pub fn at_row_start(&self, pc: u64) -> bool {
        self.symbols.starts_row(RuntimeAddr(pc))
    }

    /// Whether a line begins at `pc`, a run of rows of one line taken as one (gdb's view).
    pub fn begins_line(&self, pc: u64) -> bool {
        self.symbols.starts_line(RuntimeAddr(pc))
    }

    /// Whether a stepper may stop at `pc`: its line-table row is a statement boundary.
    pub fn at_statement(&self, pc: u64) -> bool {
        self.symbols.is_statement(RuntimeAddr(pc))
    }

    /// Source lines around the selected thread's pc.
    pub fn source_lines(&mut self, context: u32) -> Result<SourceView> {
        let pc = self.pc()?;
        let hidden = self.hidden_inlines(pc)?;
        let loc = self
            .symbols
            .locations(RuntimeAddr(pc))
            .into_iter()
            .nth(hidden)
            .filter(|l| l.file.is_some() && l.line.is_some())
            .ok_or_else(|| SessionError::Invalid(format!("no line information for {pc:#x}")))?;
        let (path, line) = (loc.file.unwrap_or_default(), loc.line.unwrap_or(0));
        // The path is the program's word: it may name a FIFO, a device or scry's own stdin.
        // A file that cannot be read leaves the location, with why: no exception that would
        // lose the rest of a chunk's work.
        let text = match crate::os::files::read_regular(std::path::Path::new(&path), SOURCE_LIMIT) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                return Ok(SourceView {
                    path,
                    line,
                    rows: Vec::new(),
                    unavailable: Some(e.to_string()),
                })
            }
        };
        let first = line.saturating_sub(context).max(1);
        let rows = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i as u32 + 1, l))
            .filter(|(n, _)| *n >= first && *n <= line + context)
            .map(|(n, l)| (n, l.chars().take(200).collect()))
            .collect();
        Ok(SourceView {
            path,
            line,
            rows,
            unavailable: None,
        })
    }

    /// `main+0x1f` for a return address: named by the call (`lookup`, one byte back) so a
    /// call at the very end of a function is not attributed to the next one.
    pub(super) fn symbolize_frame(&mut self, pc: u64, lookup: u64) -> Option<String> {
        // A "return address" that is a function's first byte with no code before it:
        // makecontext's trampoline (`__start_context`), pushed as the return address of a
        // task's function. It is named by itself.
        let entry = |s: &Self, a: u64| {
            s.symbols
                .symbol_at(RuntimeAddr(a))
                .is_some_and(|(_, _, off)| off == 0)
        };
        if pc == lookup
            || (self.symbols.symbol_at(RuntimeAddr(lookup)).is_none() && entry(self, pc))
        {
            return self.symbolize(pc);
        }
        self.symbols
            .symbolize_return(RuntimeAddr(pc), RuntimeAddr(lookup))
    }

    /// Writes register `name` of frame `row` (a row of `unwind()`): where that frame's value
    /// lives, as the unwind found it: the live register when no callee saved it (frame 0's
    /// included), else the stack slot a callee saved it in (its CFI, the frame-pointer
    /// chain, or a signal frame's context). A value computed rather than kept (a caller's
    /// rsp is its callee's CFA) or lost (caller-saved registers across a call) has nowhere
    /// to go: an error says so.
    pub fn set_frame_register(&mut self, row: usize, name: &str, value: u64) -> Result<()> {
        self.check_writable("write a register")?;
        let Some(dwarf) = DWARF_NAMES.iter().position(|n| *n == name) else {
            return Err(SessionError::Invalid(format!(
                "frame {row}: no register '{name}' in a frame (a frame knows {})",
                DWARF_NAMES.join(" ")
            )));
        };
        let (rows, _) = self.unwind(row + 1, true)?;
        let Some(r) = rows.get(row) else {
            return Err(SessionError::Invalid(format!(
                "no frame {row}: the stack has {} frames",
                rows.len()
            )));
        };
        if r.tail_call {
            return Err(SessionError::Invalid(format!(
                "frame {row} was erased by a tail call (rebuilt from call-site information): it has no registers of its own"
            )));
        }
        let physical = r.physical;
        let (frames, _) = self.physical_frames(physical + 1)?;
        let frame = frames.get(physical).ok_or_else(|| {
            SessionError::Invalid(format!("frame {row}: the stack changed while unwinding"))
        })?;
        if frame.regs.get(dwarf as u16).is_none() {
            return Err(SessionError::Invalid(format!(
                "frame {row}'s {name} is not known (a caller-saved register does not survive a call), so there is nothing to write"
            )));
        }
        match frame.regs.loc(dwarf as u16) {
            unwind::Loc::Live => self.set_register(name, value),
            unwind::Loc::At(addr) => self.write_memory(addr, &value.to_le_bytes()),
            unwind::Loc::Unknown => Err(SessionError::Invalid(format!(
                "frame {row}'s {name} is computed, not kept anywhere (the unwind derives it: a caller's rsp is its callee's frame address), so it cannot be written"
            ))),
        }
    }

    /// The selected thread's physical frames (no inlined rows) and why the walk stopped.
    pub(super) fn physical_frames(
        &mut self,
        max_frames: usize,
    ) -> Result<(Vec<unwind::Frame>, Option<String>)> {
        let regs = self.regs()?;
        Ok(self
            .inspect(regs.fs_base)?
            .physical_frames(&regs, max_frames))
    }
}

/// The frames at a pc, outermost (the physical function) first: each one's source line
/// (`file.c:5`; for a frame with an inlined call below it, the line making that call) and
/// function, how many of the innermost inlined calls begin exactly at the pc, and how many
/// the current stop hides (a function breakpoint stops in the function, before a call
/// inlined at its first byte).
pub struct LineFrames {
    pub lines: Vec<Option<String>>,
    pub functions: Vec<Option<String>>,
    pub entries: usize,
    pub hidden: usize,
    /// pc is in "line 0" code (see `SymbolStore::in_line_zero`): no line of its own.
    pub zero: bool,
}

impl LineFrames {
    /// The frame a step by lines steps (the innermost one the stop does not hide; 0 the
    /// outermost) and its line; `None` where it has no line information.
    pub fn stepped(&self) -> Option<(usize, &str)> {
        let level = self.lines.len().checked_sub(1 + self.hidden)?;
        Some((level, self.lines[level].as_deref()?))
    }
}
