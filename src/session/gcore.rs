//! `gcore()`: a core file of the stopped process, for gdb or a later `scry --core`. Every
//! thread's registers, the signal of the last stop, the process's identity, its auxiliary
//! vector, its file mappings and the bytes of every readable mapping, all read through the
//! same reads as `state` (so breakpoint bytes are the program's own). The file never
//! replaces anything unless asked (and never a device, a directory or a link), and a
//! read-only session writes none: it changes nothing, on disk either.

use std::path::{Path, PathBuf};

use super::*;
use crate::corefile::elf::{PF_R, PF_W, PF_X};
use crate::corefile::layout::{FileMapping, PsInfo, SigInfo};
use crate::corefile::writer::{self, MappingPlan, Snapshot, ThreadSnapshot};

/// What `gcore()` wrote.
#[derive(Debug, Clone)]
pub struct CoreWritten {
    pub path: PathBuf,
    /// Bytes of the file (it may be sparse: unread zero pages take no disk).
    pub size: u64,
    pub threads: usize,
    /// Threads left out: stuck in the kernel, their registers unreadable.
    pub skipped: Vec<Tid>,
    /// Readable mappings that could only be read in part.
    pub short: usize,
}

/// How `gcore()` may write.
#[derive(Debug, Clone, Copy)]
pub struct GcoreOptions {
    /// Replace an existing regular file at the path.
    pub overwrite: bool,
    /// When the writing gives up (a large process takes seconds).
    pub deadline: Instant,
}

/// `/proc/PID/stat`'s fields after the command name: state, ppid, pgrp, session, and (the
/// 17th) nice. The name in parentheses may itself hold `)`: the fields follow the last one.
pub(super) fn parse_stat(stat: &str) -> Option<(u8, i32, i32, i32, i8)> {
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((
        *f.first()?.as_bytes().first()?,
        f.get(1)?.parse().ok()?,
        f.get(2)?.parse().ok()?,
        f.get(3)?.parse().ok()?,
        f.get(16)?.parse::<i64>().ok()?.clamp(-128, 127) as i8,
    ))
}

/// The command line as `ps` shows it: arguments separated by spaces.
fn psargs(cmdline: &[u8]) -> String {
    let text: Vec<u8> = cmdline
        .strip_suffix(b"\0")
        .unwrap_or(cmdline)
        .iter()
        .map(|&b| if b == 0 { b' ' } else { b })
        .collect();
    String::from_utf8_lossy(&text).into_owned()
}

impl Session {
    /// Notes the stop the process is in, for the NT_SIGINFO of a later `gcore()`: a signal
    /// stop's signal, else none.
    pub(super) fn note_stop_for_gcore(&mut self, stop: &Stop) {
        self.at_stop.last_signal = match *stop {
            Stop::Signal {
                tid,
                signal,
                code,
                fault_addr,
            } => Some((
                tid,
                SigInfo {
                    signo: signal,
                    errno: 0,
                    code,
                    addr: fault_addr,
                },
            )),
            _ => None,
        };
    }

    /// Who the process is, from its `/proc` files as its own kernel shows them (the stub's
    /// machine's for a remote one).
    fn process_identity(&self, pid: Tid) -> PsInfo {
        let view = self.targets.view_ref().ok();
        let read = |name: &str| view.and_then(|v| v.proc_file(name)).unwrap_or_default();
        let stat = String::from_utf8_lossy(&read("stat")).into_owned();
        let (state, ppid, pgrp, sid, nice) = parse_stat(&stat).unwrap_or((b'T', 0, 0, 0, 0));
        let status = String::from_utf8_lossy(&read("status")).into_owned();
        let id = |key: &str| {
            procfs::status_field(&status, key)
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        let comm = String::from_utf8_lossy(&read("comm"))
            .trim_end()
            .to_string();
        PsInfo {
            // A traced process shows `t` (tracing stop); the core says stopped.
            state: if state == b't' { b'T' } else { state },
            nice,
            flags: 0,
            uid: id("Uid"),
            gid: id("Gid"),
            pid,
            ppid,
            pgrp,
            sid,
            fname: comm,
            psargs: psargs(&read("cmdline")),
        }
    }

    /// Writes a core of the stopped process to `path` (default `core.PID` in the current
    /// directory), replacing any file there. The selected thread comes first, with the
    /// signal of the last stop when that was a signal.
    pub fn gcore(&mut self, path: Option<&Path>, opts: GcoreOptions) -> Result<CoreWritten> {
        if let Some(name) = self.core_name() {
            return Err(SessionError::Invalid(format!(
                "this session is a core file ({name}): gcore() writes a core of a live process"
            )));
        }
        if self.config.read_only {
            return Err(SessionError::Invalid(
                "read-only session: cannot write a core file (--read-only writes nothing, on disk either)".into(),
            ));
        }
        let pid = self.targets.live()?.pid();
        // Inside a listener only the event's thread is stopped; a core holds every thread's
        // registers, which a running thread does not give. The run goes on from an all-stop
        // state afterwards, as after `watchpoint.set` in a listener.
        self.stop_every_thread()?;
        let path = path
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(format!("core.{pid}")));
        check_core_path(&path, opts.overwrite)?;
        // The thread a core names first is the one its signal (NT_SIGINFO) is about, as in
        // the kernel's cores: the thread that took the signal, wherever the selection has
        // moved since (before, selecting another thread lost the crash from the core);
        // with no signal, the selected thread.
        let mut tids = self.targets.view()?.thread_ids();
        let first = match self.at_stop.last_signal.map(|(tid, _)| tid) {
            Some(tid) if tids.contains(&tid) => tid,
            _ => self.targets.view()?.selected(),
        };
        tids.sort_by_key(|t| *t != first);
        let mut threads = Vec::new();
        let mut skipped = Vec::new();
        for tid in tids {
            let Ok(regs) = self.targets.view()?.regs(tid) else {
                skipped.push(tid);
                continue;
            };
            // The first 512 bytes of an XSAVE area are the FXSAVE area (NT_FPREGSET).
            let fp = self.targets.view()?.fp_regs(tid).ok();
            let area = fp.as_ref().map(|f| f.area());
            threads.push(ThreadSnapshot {
                tid,
                regs,
                fpregs: area.and_then(|a| a.get(..512)).map(<[u8]>::to_vec),
                xstate: area.filter(|a| a.len() > 512).map(<[u8]>::to_vec),
            });
        }
        let signal = self
            .at_stop
            .last_signal
            .filter(|(tid, _)| threads.first().is_some_and(|t| t.tid == *tid))
            .map(|(_, s)| s);
        let maps = self.targets.view_ref()?.maps()?;
        let files = maps
            .iter()
            .filter(|m| !m.is_pseudo())
            .filter_map(|m| {
                Some(FileMapping {
                    start: m.start,
                    end: m.end,
                    offset: m.offset,
                    path: m.file_path()?.to_string(),
                })
            })
            .collect();
        let mappings = maps
            .iter()
            .map(|m| MappingPlan {
                start: m.start,
                end: m.end,
                flags: [
                    (m.perms.read, PF_R),
                    (m.perms.write, PF_W),
                    (m.perms.exec, PF_X),
                ]
                .iter()
                .filter(|(on, _)| *on)
                .fold(0, |f, (_, bit)| f | bit),
                dump: m.perms.read,
            })
            .collect();
        let snapshot = Snapshot {
            threads,
            process: self.process_identity(pid),
            signal,
            auxv: self
                .targets
                .view_ref()?
                .proc_file("auxv")
                .unwrap_or_default(),
            files,
            mappings,
        };
        let written = self.write_core_file(&path, &snapshot, opts)?;
        Ok(CoreWritten {
            path,
            size: written.size,
            threads: snapshot.threads.len(),
            skipped,
            short: written.short,
        })
    }

    /// Writes under a temporary name beside `path` and renames it into place, so a failed or
    /// interrupted write leaves no half-written core under the name asked for.
    fn write_core_file(
        &self,
        path: &Path,
        snapshot: &Snapshot,
        opts: GcoreOptions,
    ) -> Result<writer::Written> {
        let late = std::cell::Cell::new(false);
        let fail = |e: std::io::Error| {
            if late.get() {
                return SessionError::Invalid(format!(
                    "gcore: the deadline passed before {} was written, so nothing was (gcore(path, {{timeout: secs}}) allows longer)",
                    path.display()
                ));
            }
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                return exists(path);
            }
            SessionError::Invalid(format!("gcore: cannot write {}: {e}", path.display()))
        };
        let name = path.file_name().ok_or_else(|| {
            SessionError::Invalid(format!("gcore: {} names no file", path.display()))
        })?;
        let partial = path.with_file_name(format!(
            ".{}.partial{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = std::fs::File::create(&partial).map_err(fail)?;
        let process = self.targets.view_ref()?;
        let mut read = |addr: u64, buf: &mut [u8]| process.read_memory_partial(addr, buf);
        let cancelled = || {
            if Instant::now() >= opts.deadline {
                late.set(true);
            }
            late.get() || signal_pending()
        };
        let result = writer::write(&file, snapshot, &mut read, &cancelled).and_then(|w| {
            if opts.overwrite {
                std::fs::rename(&partial, path)
            } else {
                crate::os::files::rename_noreplace(&partial, path)
            }
            .map(|()| w)
        });
        if result.is_err() {
            let _ = std::fs::remove_file(&partial);
        }
        result.map_err(fail)
    }
}

fn exists(path: &Path) -> SessionError {
    SessionError::Invalid(format!(
        "gcore: {} exists; gcore('{}', {{overwrite: true}}) replaces it",
        path.display(),
        path.display()
    ))
}

/// Where a core may go: a new name, or an existing regular file when `overwrite` says so.
/// Never a device, a directory or a symbolic link (renaming over one would replace the node
/// itself: `/dev/full` made a regular file).
fn check_core_path(path: &Path, overwrite: bool) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(meta) if !meta.file_type().is_file() => Err(SessionError::Invalid(format!(
            "gcore: {} is not a regular file (a device, directory or link), and a core never replaces one",
            path.display()
        ))),
        Ok(_) if !overwrite => Err(exists(path)),
        Ok(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_name_with_parentheses() {
        let stat = "4242 (a) b) t 4000 4242 3999 34817 4242 4194304 90 0 0 0 0 0 0 0 20 -5 1 0";
        assert_eq!(parse_stat(stat), Some((b't', 4000, 4242, 3999, -5)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(psargs(b"./prog\0a b\0c\0"), "./prog a b c");
    }
}
