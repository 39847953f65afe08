//! Session-wide settings (`config`), what `spawn()` is asked for, and the bounds of the
//! durations a user may give.

use std::path::PathBuf;
use std::time::Duration;

use super::FollowFork;

/// Session-wide settings; scripts change them through `config`.
#[derive(Debug, Clone)]
pub struct Config {
    /// Default deadline of `continue()` and `step()`.
    pub timeout: Duration,
    /// Budget of JavaScript execution per chunk.
    pub script_timeout: Duration,
    /// Bytes of one response before it is cut.
    pub output_limit: usize,
    /// Bytes of target output kept for `output()`.
    pub capture_limit: usize,
    /// Leave address-space randomisation on for spawned programs.
    pub aslr: bool,
    /// Refuse memory and register writes and signal injection.
    pub read_only: bool,
    /// Directories searched for separate debug files, before `/usr/lib/debug`.
    pub debug_dirs: Vec<PathBuf>,
    /// Spawned programs stop at the dynamic loader's first instruction, not at their entry.
    pub stop_at_loader: bool,
    /// At a fork: stay with the parent, follow the child, or keep both (see `FollowFork`).
    pub follow_fork: FollowFork,
    /// A core's mapped files are looked for under this tree (a copy of the machine it
    /// came from) instead of this machine's root.
    pub sysroot: Option<PathBuf>,
    /// Folders holding copies of a core's mapped files, by name or build id.
    pub solib_dirs: Vec<PathBuf>,
    /// How caught system calls are made to stop (see `SyscallFilter`).
    pub syscall_filter: SyscallFilter,
    /// `config.schedule = 'all'`: with fork children kept, `cont()` runs every
    /// process of the tree (the default); `'selected'`: only the selected one.
    pub schedule_all: bool,
    /// At most this many processes under control at once (`config.max_processes`): a fork
    /// child beyond it is let go untraced, with a note (a fork bomb must not take the
    /// debugger's memory and file descriptors, nor every stop's time, without bound).
    pub max_processes: usize,
}

/// The default of `config.max_processes`: a pre-forking server's workers and then some,
/// each holding a file descriptor of scry's (its memory) well inside the usual 1,024.
pub(crate) const MAX_PROCESSES: usize = 512;

/// How caught system calls stop in a spawned program (`config.syscall_filter`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SyscallFilter {
    /// A seccomp filter when installing one changes nothing else for good (the program is
    /// privileged or already has no_new_privs), else PTRACE_SYSCALL.
    #[default]
    Auto,
    /// A seccomp filter, setting no_new_privs for it if the program is unprivileged.
    Seccomp,
    /// PTRACE_SYSCALL only: nothing is ever installed in the program.
    Ptrace,
}

impl SyscallFilter {
    pub fn name(self) -> &'static str {
        match self {
            SyscallFilter::Auto => "auto",
            SyscallFilter::Seccomp => "seccomp",
            SyscallFilter::Ptrace => "ptrace",
        }
    }

    pub fn parse(text: &str) -> Option<SyscallFilter> {
        [
            SyscallFilter::Auto,
            SyscallFilter::Seccomp,
            SyscallFilter::Ptrace,
        ]
        .into_iter()
        .find(|f| f.name() == text)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            timeout: Duration::from_secs(10),
            script_timeout: Duration::from_secs(5),
            output_limit: 32 * 1024,
            capture_limit: 1024 * 1024,
            aslr: false,
            read_only: false,
            debug_dirs: Vec::new(),
            stop_at_loader: false,
            follow_fork: FollowFork::Parent,
            sysroot: None,
            solib_dirs: Vec::new(),
            syscall_filter: SyscallFilter::Auto,
            schedule_all: true,
            max_processes: MAX_PROCESSES,
        }
    }
}

/// The longest deadline a run or a chunk's script budget may have; longer ones are clamped.
pub(crate) const MAX_DEADLINE: Duration = Duration::from_secs(86_400);
/// The longest a named session may sit idle.
pub(crate) const MAX_IDLE: Duration = Duration::from_secs(365 * 86_400);

/// A number of seconds from the user (an option, `config.timeout`, `{timeout}`) as a
/// Duration: it must be positive and finite (else `None`), and is clamped to `max`, so no
/// value can overflow the clock (`Duration::from_secs_f64(1e19)` panics).
pub(crate) fn seconds(v: f64, max: Duration) -> Option<Duration> {
    (v > 0.0 && v.is_finite()).then(|| Duration::from_secs_f64(v.min(max.as_secs_f64())))
}

/// What `spawn()` was asked for.
#[derive(Debug, Clone, Default)]
pub struct SpawnSpec {
    pub program: String,
    pub args: Vec<String>,
    /// Added to (or, with `None`, removed from) scry's own environment.
    pub env: Vec<(String, Option<String>)>,
    pub cwd: Option<PathBuf>,
    pub stdin: Option<Vec<u8>>,
    /// Stop at the dynamic loader's first instruction instead of the program's entry point
    /// (`None`: as `config.stop_at_loader` says).
    pub at_loader: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_never_overflow() {
        assert_eq!(
            seconds(1.5, MAX_DEADLINE),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(seconds(1e308, MAX_DEADLINE), Some(MAX_DEADLINE));
        assert_eq!(seconds(1e19, MAX_IDLE), Some(MAX_IDLE));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(seconds(bad, MAX_DEADLINE), None);
        }
    }
}
