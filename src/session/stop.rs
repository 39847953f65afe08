//! A stop as the user sees it: the reason plus where, rendered as one short line.

use crate::symbols::dwarf::render::float_text;
use std::fmt::Write;

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
    Exited => "exited",
    Killed => "killed",
    Detached => "detached",
    /// A core file written away from a signal: the state it holds.
    Core => "core",
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct StopInfo {
    pub reason: Option<Reason>,
    pub tid: Option<Tid>,
    pub pc: Option<u64>,
    pub symbol: Option<String>,
    pub breakpoint_id: Option<u32>,
    pub breakpoint_name: Option<String>,
    /// Every armed breakpoint at the hit's address, in id order, when there are several:
    /// each decides on its own terms whether the hit stops.
    pub breakpoint_ids: Vec<u32>,
    pub signal: Option<i32>,
    pub fault_addr: Option<u64>,
    pub exit_code: Option<i32>,
    /// Instructions executed by a `step(n)` and how many were asked for.
    pub steps: Option<(u64, u64)>,
    /// Bytes of target output waiting in `output()`.
    pub unread_output: usize,
    /// Show the thread: the process has more than one.
    pub show_tid: bool,
    pub watch: Option<WatchReport>,
    /// `loop.c:15`: the source position of pc, when the module has line information.
    pub source: Option<String>,
    /// `finish()`: rax as the function returned.
    pub returned: Option<u64>,
    /// `finish()` of a function whose DWARF return type is floating point: the value it
    /// returned in xmm0 (st0 for `long double`), shown instead of rax.
    pub returned_float: Option<f64>,
    /// `finish()` of a function returning an aggregate: the value as it prints (a string,
    /// a struct), shown instead of rax.
    pub returned_text: Option<String>,
    /// An `exec` stop: the program the process runs now.
    pub program: Option<String>,
    /// A `library` stop: what the loader changed.
    pub library: Option<super::dynamic::LibraryChange>,
    /// A `syscall` stop: the decoded call.
    pub syscall: Option<super::syscalls::SyscallReport>,
    /// What the user should know about this stop that its fields do not say (a process
    /// stopped by job control, a setuid bit the kernel ignored), each shown as `[note]`.
    pub notes: Vec<String>,
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
}

/// Little-endian bytes as an integer (watched values are 1 to 8 bytes).
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
    pub fn reason(&self) -> Reason {
        self.reason.unwrap_or(Reason::Step)
    }

    /// `breakpoint 1 (loop) at 0x401136 main+0x4 thread 1234 [3 of 5 steps] [12 bytes of output]`
    pub fn line(&self) -> String {
        let mut s = String::from(self.reason().as_str());
        match self.reason() {
            Reason::Breakpoint => {
                if let Some(id) = self.breakpoint_id {
                    let _ = write!(s, " {id}");
                }
                if let Some(name) = &self.breakpoint_name {
                    let _ = write!(s, " ({name})");
                }
            }
            Reason::Signal => {
                if let Some(sig) = self.signal {
                    let _ = write!(s, " {}", signal_name(sig));
                    if is_realtime(sig) {
                        let _ = write!(s, " ({sig})");
                    }
                }
                if let Some(addr) = self.fault_addr {
                    let _ = write!(s, " fault_addr={addr:#x}");
                }
            }
            Reason::Exited => {
                let _ = write!(s, " with code {}", self.exit_code.unwrap_or(0));
            }
            Reason::Exec => {
                if let Some(p) = &self.program {
                    let _ = write!(s, " {p}");
                }
            }
            Reason::Library => {
                if let Some(l) = &self.library {
                    let kind = if l.loaded { "load" } else { "unload" };
                    let _ = write!(s, " {kind} {} base={:#x}", l.path, l.base);
                }
            }
            Reason::Syscall => {
                if let Some(sys) = &self.syscall {
                    let _ = write!(s, " {}", sys.call.text());
                }
            }
            Reason::Watchpoint => {
                if let Some(w) = &self.watch {
                    let _ = write!(s, " {}", w.id);
                    if let Some(name) = &w.name {
                        let _ = write!(s, " ({name})");
                    }
                    let kind = if w.is_write { "write" } else { "read" };
                    let _ = write!(s, " {kind} {:#x}", w.addr);
                    if w.is_write {
                        let _ = write!(s, " {} -> {}", watched_text(&w.old), watched_text(&w.new));
                        if w.racy {
                            let _ = write!(s, " (read after other threads ran)");
                        }
                    } else {
                        let _ = write!(s, " = {}", watched_text(&w.new));
                    }
                }
            }
            Reason::Killed => {
                if let Some(sig) = self.signal {
                    let _ = write!(s, " by {}", signal_name(sig));
                }
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
        if self.show_tid {
            if let Some(tid) = self.tid {
                let _ = write!(s, " thread {tid}");
            }
        }
        if let Some(t) = &self.returned_text {
            let _ = write!(s, " returned {t}");
        } else if let Some(f) = self.returned_float {
            let _ = write!(s, " returned {}", float_text(f, false));
        } else if let Some(v) = self.returned {
            let _ = write!(s, " returned {}", value_text(v));
        }
        if let Some(w) = &self.watch {
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
        match self.reason() {
            Reason::Exited => Some(format!("exited with code {}", self.exit_code.unwrap_or(0))),
            Reason::Killed => Some(format!(
                "killed by {}",
                signal_name(self.signal.unwrap_or(9))
            )),
            Reason::Detached => Some("detached".into()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_one_line() {
        let bp = StopInfo {
            reason: Some(Reason::Breakpoint),
            tid: Some(7),
            pc: Some(0x401136),
            symbol: Some("main".into()),
            breakpoint_id: Some(1),
            ..Default::default()
        };
        assert_eq!(bp.line(), "breakpoint 1 at 0x401136 main");
        let segv = StopInfo {
            reason: Some(Reason::Signal),
            pc: Some(0x401150),
            symbol: Some("crash+0x8".into()),
            signal: Some(11),
            fault_addr: Some(0),
            unread_output: 12,
            ..Default::default()
        };
        assert_eq!(
            segv.line(),
            "signal SIGSEGV fault_addr=0x0 at 0x401150 crash+0x8 [12 bytes of output]"
        );
        let exit = StopInfo {
            reason: Some(Reason::Exited),
            exit_code: Some(3),
            ..Default::default()
        };
        assert_eq!(exit.line(), "exited with code 3");
        assert_eq!(exit.ending().unwrap(), "exited with code 3");
        let step = StopInfo {
            reason: Some(Reason::Step),
            pc: Some(0x10),
            steps: Some((3, 5)),
            ..Default::default()
        };
        assert_eq!(step.line(), "step at 0x10 [3 of 5 steps]");
    }
}
