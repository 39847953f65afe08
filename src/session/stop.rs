//! A stop as the user sees it: the reason plus where, rendered as one short line.

use crate::symbols::dwarf::render::float_text;
use crate::symbols::dwarf::Scalar;
use std::fmt::Write;

use super::syscalls::SyscallReport;
use crate::os::signals::{is_realtime, signal_name};
use crate::os::Tid;
use crate::symbols::elf::short_name::short_frame_name;

/// Declares [`Reason`] once: each variant with its name in scripts (`e.reason`, the stop
/// line), in the order the documentation lists them; `ALL` and `as_str` follow from the list,
/// so a new reason cannot be left out of either.
macro_rules! reasons {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Reason {
            $($(#[$doc])* $variant,)*
        }

        impl Reason {
            /// Every reason, in the order the documentation lists them.
            pub const ALL: &'static [Reason] = &[$(Reason::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Reason::$variant => $name,)*
                }
            }
        }
    };
}

reasons! {
    Entry => "entry",
    /// Spawned with `stop: 'loader'`: at the dynamic loader's first instruction.
    Loader => "loader",
    Attached => "attached",
    Step => "step",
    Breakpoint => "breakpoint",
    Watchpoint => "watchpoint",
    Signal => "signal",
    /// A caught system call (`syscall.catch()`).
    Syscall => "syscall",
    Timeout => "timeout",
    Interrupted => "interrupted",
    /// `finish()` returned to the caller.
    Finish => "finish",
    Exec => "exec",
    /// The dynamic loader loaded or unloaded a library (reported to `library` listeners).
    Library => "library",
    ThreadStart => "thread_start",
    ThreadExit => "thread_exit",
    /// Going back along a recording (`reverse_cont`, `reverse_step`) reached its start or a
    /// step that cannot be taken back.
    HistoryEnd => "history_end",
    /// A `trace` listener asked for a stop (`'stop'`): the program was stopped as soon as
    /// scry read the record, not at the hit.
    Trace => "trace",
    Exited => "exited",
    Killed => "killed",
    Detached => "detached",
    /// A core file written away from a signal: the state it holds.
    Core => "core",
}

/// What stopped the target, with what only that kind of stop carries. [`Reason`] is its
/// name ([`StopKind::reason`]), matched exhaustively, so a new kind cannot go without one.
#[derive(Debug, Clone, PartialEq)]
pub enum StopKind {
    Entry,
    Loader,
    Attached,
    /// Nothing ran (`step(0)`, a progress line): where the thread is. Shown as a step, and
    /// never kept as the latest stop (the stop before it stays what `status()` reports).
    Here,
    Step,
    Breakpoint(BreakpointHit),
    Watchpoint(WatchReport),
    Signal {
        signal: i32,
        /// The faulting address of a fault the CPU raised (see `signal_origin`).
        fault_addr: Option<u64>,
    },
    Syscall(SyscallReport),
    Timeout,
    Interrupted,
    Finish(ReturnValue),
    /// The program the process runs now.
    Exec {
        program: Option<String>,
    },
    Library(super::dynamic::LibraryChange),
    ThreadStart,
    ThreadExit,
    HistoryEnd,
    /// A trace listener of tracepoint `id` asked for a stop.
    Trace {
        id: u32,
    },
    Exited {
        code: i32,
    },
    Killed {
        signal: i32,
    },
    Detached,
    Core,
}

/// Which breakpoint a hit belongs to. `id: None`: one of scry's own (a run's temporary
/// breakpoint at a return address), no user's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BreakpointHit {
    pub id: Option<u32>,
    pub name: Option<String>,
    /// Every armed breakpoint at the hit's address, in id order, when there are several:
    /// each decides on its own terms whether the hit stops.
    pub ids: Vec<u32>,
}

/// What a function returned to a `finish()`, as far as it is known (an inlined call's
/// finish knows nothing: there was no return).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReturnValue {
    /// rax as the function returned.
    pub rax: Option<u64>,
    /// A function whose DWARF return type is floating point: the value it returned in xmm0
    /// (st0 for `long double`), shown instead of rax.
    pub float: Option<f64>,
    /// That float is a `float`: shown with the digits a `float` has (`0.6666667`, not
    /// its double expansion `0.6666666865348816`).
    pub single: bool,
    /// A function returning an aggregate: the value as it prints (a string, a struct),
    /// shown instead of rax.
    pub text: Option<String>,
    /// The function returns a type whose return scry cannot read with certainty (a Rust
    /// aggregate of 16 bytes or less, an x87 member): the type, said instead of a value.
    /// rax is shown as rax, never as the value.
    pub unread: Option<String>,
    /// The function does not follow the calling convention (`DW_CC_nocall`): no value
    /// can be read, whatever its type.
    pub nocall: bool,
}

impl StopKind {
    pub fn reason(&self) -> Reason {
        match self {
            StopKind::Entry => Reason::Entry,
            StopKind::Loader => Reason::Loader,
            StopKind::Attached => Reason::Attached,
            StopKind::Here | StopKind::Step => Reason::Step,
            StopKind::Breakpoint(_) => Reason::Breakpoint,
            StopKind::Watchpoint(_) => Reason::Watchpoint,
            StopKind::Signal { .. } => Reason::Signal,
            StopKind::Syscall(_) => Reason::Syscall,
            StopKind::Timeout => Reason::Timeout,
            StopKind::Interrupted => Reason::Interrupted,
            StopKind::Finish(_) => Reason::Finish,
            StopKind::Exec { .. } => Reason::Exec,
            StopKind::Library(_) => Reason::Library,
            StopKind::ThreadStart => Reason::ThreadStart,
            StopKind::ThreadExit => Reason::ThreadExit,
            StopKind::HistoryEnd => Reason::HistoryEnd,
            StopKind::Trace { .. } => Reason::Trace,
            StopKind::Exited { .. } => Reason::Exited,
            StopKind::Killed { .. } => Reason::Killed,
            StopKind::Detached => Reason::Detached,
            StopKind::Core => Reason::Core,
        }
    }
}

/// A stop as scry reports it: what stopped ([`StopKind`]) and the fields every stop has.
#[derive(Debug, Clone, PartialEq)]
pub struct StopInfo {
    pub kind: StopKind,
    /// The process it happened in (a live process's stop; `None` for a core's).
    pub pid: Option<Tid>,
    pub tid: Option<Tid>,
    pub pc: Option<u64>,
    pub symbol: Option<String>,
    /// `loop.c:15`: the source position of pc, when the module has line information.
    pub source: Option<String>,
    /// Instructions executed by a `step(n)` and how many were asked for (whatever ended it).
    pub steps: Option<(u64, u64)>,
    /// Bytes of target output waiting in `output()`.
    pub unread_output: usize,
    /// Show the thread: the process has more than one.
    pub show_tid: bool,
    /// Show the process: more than one is under control.
    pub show_pid: bool,
    /// What the user should know about this stop that its fields do not say (a process
    /// stopped by job control, a setuid bit the kernel ignored), each shown as `[note]`.
    pub notes: Vec<String>,
    /// Where along its recording the process is, when not in the present.
    pub replay: Option<Replay>,
}

/// A stop in the past of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replay {
    /// The position: the program as it was before recorded step `at` ran.
    pub at: u64,
    /// The present's position (the number of steps recorded).
    pub end: u64,
    /// The run that stopped here went backwards.
    pub reverse: bool,
}

/// What a watchpoint hit saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WatchReport {
    pub id: u32,
    pub name: Option<String>,
    /// x86 reports accesses, not their kind: a changed value is a write, else a read.
    pub is_write: bool,
    pub addr: u64,
    pub len: u64,
    pub old: Vec<u8>,
    pub new: Vec<u8>,
    /// The instruction that made the access (the trap leaves pc after it).
    pub insn_addr: Option<u64>,
    pub insn_text: Option<String>,
    pub insn_symbol: Option<String>,
    /// `counter.c:11`: the source position of the instruction, which the trap's pc (just
    /// past it) may not share (a store that ends a line leaves pc on the next).
    pub insn_source: Option<String>,
    /// `insn_*` were looked for (they stay `None` if nothing plausible was found).
    pub culprit_searched: bool,
    /// A write whose value the instruction does not say, read after other threads ran
    /// (they may have written since).
    pub racy: bool,
    /// Other threads wrote it at about the same time: the value before this write is not
    /// known, and `old` holds instead what memory holds once all stopped.
    pub concurrent: bool,
    /// The watchpoint ended at this stop: the frame holding what it watched returned (why,
    /// in words). Nothing was read or written of the variable.
    pub scope_ended: Option<String>,
    /// `old` and `new` as the type of the variable watched, when it has one.
    pub old_shown: Option<Shown>,
    pub new_shown: Option<Shown>,
}

/// Watched bytes as their type: the text (`2.5`, `{x = 1}`) and, for a number, a pointer, a
/// flag or an enum, its scalar.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Shown {
    pub text: Option<String>,
    pub scalar: Option<Scalar>,
}

/// Little-endian bytes as an integer (watched values are 1 to 8 bytes).
/// A source file as a stop line names it: its last component (`loop.c`), and its
/// directory's too where the name alone says nothing (Rust's `mod.rs` and `lib.rs`:
/// `vec/mod.rs`, not one of a hundred `mod.rs` in std).
pub(crate) fn short_file(path: &str) -> &str {
    let mut parts = path.rsplitn(3, '/');
    let name = parts.next().unwrap_or(path);
    if !matches!(name, "mod.rs" | "lib.rs") {
        return name;
    }
    match parts.next() {
        Some(dir) if !dir.is_empty() => &path[path.len() - name.len() - dir.len() - 1..],
        _ => name,
    }
}

pub(crate) fn le_value(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    let n = bytes.len().min(8);
    raw[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(raw)
}

/// The watched bytes as a stop line shows them: a number up to 8 bytes; a wider watch its
/// bytes in memory order, in hex (no number of 16 or 32 bytes would be a true one).
fn watched_text(bytes: &[u8]) -> String {
    if bytes.len() <= 8 {
        value_text(le_value(bytes))
    } else {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn value_text(v: u64) -> String {
    if v < 65536 {
        v.to_string()
    } else {
        format!("{v:#x}")
    }
}

impl StopInfo {
    /// A stop of this kind with no other field known yet.
    pub fn new(kind: StopKind) -> StopInfo {
        StopInfo {
            kind,
            pid: None,
            tid: None,
            pc: None,
            symbol: None,
            source: None,
            steps: None,
            unread_output: 0,
            show_tid: false,
            show_pid: false,
            notes: Vec::new(),
            replay: None,
        }
    }

    pub fn reason(&self) -> Reason {
        self.kind.reason()
    }

    /// The user's breakpoint a hit belongs to (`None` for scry's own and for other stops).
    pub fn breakpoint_id(&self) -> Option<u32> {
        match &self.kind {
            StopKind::Breakpoint(hit) => hit.id,
            _ => None,
        }
    }

    /// The signal that stopped or ended the process.
    pub fn signal(&self) -> Option<i32> {
        match self.kind {
            StopKind::Signal { signal, .. } | StopKind::Killed { signal } => Some(signal),
            _ => None,
        }
    }

    pub fn watch(&self) -> Option<&WatchReport> {
        match &self.kind {
            StopKind::Watchpoint(w) => Some(w),
            _ => None,
        }
    }

    /// `breakpoint 1 (loop) at 0x401136 main+0x4 process 1233 thread 1234 [3 of 5 steps] [12 bytes of output]`
    pub fn line(&self) -> String {
        let mut s = String::from(self.reason().as_str());
        match &self.kind {
            StopKind::Breakpoint(hit) => {
                if let Some(id) = hit.id {
                    let _ = write!(s, " {id}");
                }
                if let Some(name) = &hit.name {
                    let _ = write!(s, " ({name})");
                }
            }
            StopKind::Signal { signal, fault_addr } => {
                let _ = write!(s, " {}", signal_name(*signal));
                if is_realtime(*signal) {
                    let _ = write!(s, " ({signal})");
                }
                if let Some(addr) = fault_addr {
                    let _ = write!(s, " fault_addr={addr:#x}");
                }
            }
            StopKind::Exited { code } => {
                let _ = write!(s, " with code {code}");
            }
            StopKind::Exec { program: Some(p) } => {
                let _ = write!(s, " {p}");
            }
            StopKind::Library(l) => {
                let kind = if l.loaded { "load" } else { "unload" };
                let _ = write!(s, " {kind} {} base={:#x}", l.path, l.base);
            }
            StopKind::Syscall(sys) => {
                let _ = write!(s, " {}", sys.call.text());
            }
            StopKind::Watchpoint(w) => {
                let _ = write!(s, " {}", w.id);
                if let Some(name) = &w.name {
                    let _ = write!(s, " ({name})");
                }
                let kind = if w.is_write { "write" } else { "read" };
                let shown = |bytes: &[u8], typed: &Option<Shown>| match typed {
                    Some(Shown { text: Some(t), .. }) => t.clone(),
                    _ => watched_text(bytes),
                };
                if let Some(why) = &w.scope_ended {
                    let _ = write!(s, " deleted: {why}");
                } else if w.is_write {
                    let _ = write!(s, " {kind} {:#x}", w.addr);
                    let (old, new) = (shown(&w.old, &w.old_shown), shown(&w.new, &w.new_shown));
                    if w.concurrent {
                        let _ = write!(
                            s,
                            " ? -> {new} (other threads wrote it at about the same time: which came first, so the value before, is not known; it holds {old} now)"
                        );
                    } else {
                        let _ = write!(s, " {old} -> {new}");
                    }
                    if w.racy {
                        let _ = write!(s, " (read after other threads ran)");
                    }
                } else {
                    let _ = write!(s, " {kind} {:#x} = {}", w.addr, shown(&w.new, &w.new_shown));
                }
            }
            StopKind::Killed { signal } => {
                let _ = write!(s, " by {}", signal_name(*signal));
            }
            StopKind::Trace { id } => {
                let _ = write!(
                    s,
                    " (tracepoint {id}'s listener asked; stopped after the hit)"
                );
            }
            _ => {}
        }
        if let Some(pc) = self.pc {
            let _ = write!(s, " at {pc:#x}");
            if let Some(sym) = &self.symbol {
                let _ = write!(s, " {}", short_frame_name(sym));
            }
            if let Some(src) = &self.source {
                let _ = write!(s, " {src}");
            }
        }
        if self.show_pid {
            if let Some(pid) = self.pid {
                let _ = write!(s, " process {pid}");
            }
        }
        if self.show_tid {
            if let Some(tid) = self.tid {
                let _ = write!(s, " thread {tid}");
            }
        }
        if let StopKind::Finish(r) = &self.kind {
            if let Some(t) = &r.text {
                let _ = write!(s, " returned {t}");
            } else if let Some(f) = r.float {
                let _ = write!(s, " returned {}", float_text(f, r.single));
            } else if let (true, Some(v)) = (r.nocall, r.rax) {
                let _ = write!(
                    s,
                    " returned <unavailable: the function does not follow the calling convention (DW_CC_nocall: the optimizer changed how it returns)> (rax {v:#x})"
                );
            } else if let (Some(ty), Some(v)) = (&r.unread, r.rax) {
                let _ = write!(
                    s,
                    " returned <unavailable: how {ty} is returned is not known for certain> (rax {v:#x})"
                );
            } else if let Some(v) = r.rax {
                let _ = write!(s, " returned {}", value_text(v));
            }
        }
        if let Some(w) = self.watch() {
            if let (Some(at), Some(text)) = (w.insn_addr, &w.insn_text) {
                // The disassembler's `# 0x... <sym>` note repeats the watched address.
                let text = text.split("  #").next().unwrap_or(text);
                match &w.insn_symbol {
                    Some(sym) => {
                        let _ = write!(s, " by {sym}");
                    }
                    None => {
                        let _ = write!(s, " by {at:#x}");
                    }
                }
                // Its own line when the stop's position is another one.
                match &w.insn_source {
                    Some(line) if self.source.as_ref() != Some(line) => {
                        let _ = write!(s, " {line}: {text}");
                    }
                    _ => {
                        let _ = write!(s, ": {text}");
                    }
                }
            }
        }
        if let Some(r) = self.replay {
            let _ = write!(s, " [past: step {} of {}]", r.at, r.end);
        }
        if let Some((done, asked)) = self.steps {
            if asked != 1 || done != 1 {
                let _ = write!(s, " [{done} of {asked} steps]");
            }
        }
        for note in &self.notes {
            let _ = write!(s, " [{note}]");
        }
        if self.unread_output > 0 {
            let _ = write!(s, " [{} bytes of output]", self.unread_output);
        }
        s
    }

    /// How the end of a process is described in "no live process (...)".
    pub fn ending(&self) -> Option<String> {
        match self.kind {
            StopKind::Exited { code } => Some(format!("exited with code {code}")),
            StopKind::Killed { signal } => Some(format!("killed by {}", signal_name(signal))),
            StopKind::Detached => Some("detached".into()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_files_keep_the_directory_of_a_rust_module_file() {
        assert_eq!(short_file("/tmp/x/loop.c"), "loop.c");
        assert_eq!(
            short_file("/rustc/1234/library/alloc/src/vec/mod.rs"),
            "vec/mod.rs"
        );
        assert_eq!(
            short_file("/rustc/1234/library/core/src/lib.rs"),
            "src/lib.rs"
        );
        assert_eq!(short_file("mod.rs"), "mod.rs");
        assert_eq!(short_file("/mod.rs"), "mod.rs");
        assert_eq!(short_file("/work/app/src/main.rs"), "main.rs");
    }

    #[test]
    fn renders_one_line() {
        let bp = StopInfo {
            tid: Some(7),
            pc: Some(0x401136),
            symbol: Some("main".into()),
            ..StopInfo::new(StopKind::Breakpoint(BreakpointHit {
                id: Some(1),
                ..Default::default()
            }))
        };
        assert_eq!(bp.line(), "breakpoint 1 at 0x401136 main");
        let segv = StopInfo {
            pc: Some(0x401150),
            symbol: Some("crash+0x8".into()),
            unread_output: 12,
            ..StopInfo::new(StopKind::Signal {
                signal: 11,
                fault_addr: Some(0),
            })
        };
        assert_eq!(
            segv.line(),
            "signal SIGSEGV fault_addr=0x0 at 0x401150 crash+0x8 [12 bytes of output]"
        );
        let exit = StopInfo::new(StopKind::Exited { code: 3 });
        assert_eq!(exit.line(), "exited with code 3");
        assert_eq!(exit.ending().unwrap(), "exited with code 3");
        let step = StopInfo {
            pc: Some(0x10),
            steps: Some((3, 5)),
            ..StopInfo::new(StopKind::Step)
        };
        assert_eq!(step.line(), "step at 0x10 [3 of 5 steps]");
        let finish = StopInfo {
            pc: Some(0x20),
            ..StopInfo::new(StopKind::Finish(ReturnValue {
                rax: Some(70000),
                ..Default::default()
            }))
        };
        assert_eq!(finish.line(), "finish at 0x20 returned 0x11170");
    }
}
