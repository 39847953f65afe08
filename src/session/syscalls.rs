//! Caught system calls as the user sees them: `syscall.catch()` ids, which numbers and
//! phases they cover, and a syscall stop turned into its decoded call.

use super::*;
use crate::inferior::CatchMode;
use crate::os::syscalls;
use crate::os::syscalls::render::{self, Call};
use crate::os::syscalls::{SysSet, GROUPS, MAX_NR};

/// When a caught call stops: before it runs, after (the default: the completed call, as
/// strace shows it), or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Entry,
    Exit,
    Both,
}

impl Phase {
    pub fn parse(text: &str) -> Option<Phase> {
        match text {
            "entry" => Some(Phase::Entry),
            "exit" => Some(Phase::Exit),
            "both" => Some(Phase::Both),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Entry => "entry",
            Phase::Exit => "exit",
            Phase::Both => "both",
        }
    }

    fn covers(self, exit: bool) -> bool {
        self == Phase::Both || (self == Phase::Exit) == exit
    }
}

/// One `syscall.catch()`.
#[derive(Debug, Clone)]
pub struct SyscallCatch {
    pub id: u32,
    /// What the user asked for: `openat`, `%file`, `all`, `openat close`.
    pub spec: String,
    pub set: SysSet,
    pub phase: Phase,
    /// Events it reported.
    pub hits: u64,
}

#[derive(Debug, Default)]
pub(crate) struct SyscallCatches {
    next_id: u32,
    list: Vec<SyscallCatch>,
}

/// A syscall stop, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyscallReport {
    /// At the call's exit (`call.ret` is its result), else at its entry.
    pub exit: bool,
    pub raw: [u64; 6],
    pub call: Call,
    /// The catch that reported it (the lowest id covering the call and the phase).
    pub catch_id: Option<u32>,
}

/// Near names for "did you mean", by edit distance.
fn nearest(name: &str, k: usize) -> Vec<&'static str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut diag = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let keep = row[j + 1];
                row[j + 1] = (row[j + 1] + 1)
                    .min(row[j] + 1)
                    .min(diag + usize::from(ca != *cb));
                diag = keep;
            }
        }
        row[b.len()]
    }
    if name.len() > 64 {
        return Vec::new();
    }
    let mut scored: Vec<(usize, &'static str)> = SysSet::all()
        .iter()
        .filter_map(|nr| crate::os::syscalls::row(nr).map(|r| r.name))
        .map(|n| (distance(name, n), n))
        .filter(|(d, _)| *d <= 2.max(name.len() / 3))
        .collect();
    scored.sort();
    scored.into_iter().take(k).map(|(_, n)| n).collect()
}

/// The numbers one word names: a system call, a number, `all`, or a group `%file`.
pub(crate) fn resolve_syscalls(word: &str) -> Result<SysSet> {
    let word = word.trim();
    let mut set = SysSet::default();
    if word == "all" {
        return Ok(SysSet::all());
    }
    if let Some(group) = word.strip_prefix('%') {
        return SysSet::group(group).ok_or_else(|| {
            SessionError::Invalid(format!(
                "unknown system call group '%{group}'; groups: {}",
                GROUPS.map(|g| format!("%{g}")).join(" ")
            ))
        });
    }
    if let Ok(nr) = word.parse::<u64>() {
        if nr >= MAX_NR {
            return Err(SessionError::Invalid(format!(
                "no system call {nr}: x86-64 numbers are below {MAX_NR}"
            )));
        }
        set.insert(nr);
        return Ok(set);
    }
    match syscalls::number(word) {
        Some(nr) => {
            set.insert(nr);
            Ok(set)
        }
        None => {
            let shown: String = word.chars().take(60).collect();
            let near = nearest(word, 3);
            let hint = if near.is_empty() {
                String::new()
            } else {
                format!(" (did you mean {}?)", near.join(", "))
            };
            Err(SessionError::Invalid(format!(
                "unknown system call '{shown}'{hint}; also: a number, 'all', or a group such as '%file'"
            )))
        }
    }
}

/// In a keeper process (see `os::keeper`): serves, and gives the exit code.
pub fn keeper_main() -> Option<i32> {
    crate::os::keeper::is_keeper_invocation().then(crate::os::keeper::serve)
}

impl Session {
    /// `syscall.catch(words, {phase})`: the calls `words` name stop at `phase`. Returns the id.
    pub fn syscall_catch(&mut self, words: &[String], phase: Phase) -> Result<u32> {
        if words.is_empty() {
            return Err(SessionError::Invalid(
                "syscall.catch(what): name a system call ('openat'), a number, a list, 'all', or a group ('%file')".into(),
            ));
        }
        let mut set = SysSet::default();
        for w in words {
            set = set.union(&resolve_syscalls(w)?);
        }
        let c = &mut self.points.syscalls;
        c.next_id += 1;
        let id = c.next_id;
        c.list.push(SyscallCatch {
            id,
            spec: words.join(" "),
            set,
            phase,
            hits: 0,
        });
        self.push_syscall_catch();
        Ok(id)
    }

    pub fn syscall_uncatch(&mut self, id: u32) -> Result<()> {
        let c = &mut self.points.syscalls;
        let Some(i) = c.list.iter().position(|x| x.id == id) else {
            let ids: Vec<String> = c.list.iter().map(|x| x.id.to_string()).collect();
            return Err(SessionError::Invalid(format!(
                "no syscall catch {id}{}",
                if ids.is_empty() {
                    " (none is set)".to_string()
                } else {
                    format!("; ids: {}", ids.join(" "))
                }
            )));
        };
        c.list.remove(i);
        self.push_syscall_catch();
        Ok(())
    }

    pub fn syscall_catches(&self) -> &[SyscallCatch] {
        &self.points.syscalls.list
    }

    /// How caught calls stop in the live process: `seccomp`, or `ptrace` and why.
    pub fn syscall_mode(&self) -> Option<(CatchMode, Option<String>)> {
        let t = self.targets.live.as_ref()?;
        Some(t.process.syscall_catch_mode())
    }

    /// `config.syscall_filter`: for catches from now on (a filter already installed stays).
    pub fn set_syscall_filter(&mut self, filter: SyscallFilter) {
        self.config.syscall_filter = filter;
        self.push_syscall_catch();
    }

    /// Tells the inferior what every catch together wants (applied at its next continue).
    pub(super) fn push_syscall_catch(&mut self) {
        let mut entry = SysSet::default();
        let mut exit = SysSet::default();
        for c in &self.points.syscalls.list {
            if c.phase.covers(false) {
                entry = entry.union(&c.set);
            }
            if c.phase.covers(true) {
                exit = exit.union(&c.set);
            }
        }
        let read_only = self.config.read_only;
        let filter = self.config.syscall_filter;
        if let Some(t) = &mut self.targets.live {
            if read_only {
                t.process
                    .forbid_seccomp("a read-only session changes nothing in the program");
            }
            if filter == SyscallFilter::Ptrace {
                t.process
                    .forbid_seccomp("config.syscall_filter is 'ptrace'");
            }
            t.process
                .allow_no_new_privs(filter == SyscallFilter::Seccomp);
            t.process.set_syscall_catch(entry, exit);
        }
    }

    /// A syscall stop decoded: what was read at the call's entry, plus (at its exit) the
    /// buffers it filled.
    pub(super) fn syscall_report(
        &mut self,
        tid: Tid,
        nr: u64,
        raw: [u64; 6],
        ret: Option<i64>,
    ) -> Result<SyscallReport> {
        let inferior = self.targets.live()?;
        let mut captured = inferior.syscall_capture(tid).to_vec();
        if let Some(r) = ret {
            captured.extend(render::capture_exit(nr, &raw, r, &mut |addr, buf| {
                inferior.read_memory_partial(addr, buf)
            }));
        }
        let call = render::decode(nr, &raw, &captured, ret);
        let exit = ret.is_some();
        let catch = self
            .points
            .syscalls
            .list
            .iter_mut()
            .find(|c| c.set.contains(nr) && c.phase.covers(exit));
        let catch_id = catch.map(|c| {
            c.hits += 1;
            c.id
        });
        Ok(SyscallReport {
            exit,
            raw,
            call,
            catch_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_name_sets() {
        assert!(resolve_syscalls("openat").unwrap().contains(257));
        assert!(resolve_syscalls("257").unwrap().contains(257));
        assert!(resolve_syscalls("%file").unwrap().contains(2));
        assert_eq!(resolve_syscalls("all").unwrap(), SysSet::all());
        let e = resolve_syscalls("opnat").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown system call 'opnat' (did you mean openat"),
            "{e}"
        );
        let e = resolve_syscalls("%files").unwrap_err().to_string();
        assert!(e.contains("groups: %file %desc"), "{e}");
        assert!(resolve_syscalls("600").is_err());
        assert!(Phase::Both.covers(true) && Phase::Both.covers(false));
        assert!(Phase::Exit.covers(true) && !Phase::Exit.covers(false));
        assert!(Phase::Entry.covers(false) && !Phase::Entry.covers(true));
    }
}
