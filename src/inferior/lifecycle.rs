//! Getting a process under control and letting it go: spawn, attach, detach, kill.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use super::{Inferior, Origin, Stop};
use crate::os::spawn::{spawn_traced, SpawnRequest};
use crate::os::wait::{wait, WaitEvent, WaitOutcome};
use crate::os::{procfs, ptrace, OsError, Tid};

/// What the target writes: the read end of its stdout-and-stderr pipe, and its terminal.
pub(crate) struct SpawnOutput {
    pub output: OwnedFd,
    /// The program's own terminal, when it got one.
    pub tty: Option<crate::os::pty::Pty>,
}

/// How long the dynamic loader may take to reach the program's entry point.
const ENTRY_DEADLINE: Duration = Duration::from_secs(30);

impl Inferior {
    /// Spawns the program and runs it to its entry point: the loader has mapped the start-up
    /// libraries by then, so their symbols can take breakpoints at once.
    /// `at_loader`: stop at the very first instruction instead (the dynamic loader's, before
    /// it maps any library or runs any constructor).
    /// `read_only`: the inferior never writes the program (see `forbid_if_read_only`), from
    /// the run to its entry point on.
    pub(crate) fn spawn(
        req: &SpawnRequest,
        at_loader: bool,
        read_only: bool,
    ) -> Result<(Inferior, SpawnOutput, Stop), OsError> {
        let spawned = spawn_traced(req)?;
        let output = SpawnOutput {
            output: spawned.output,
            tty: spawned.tty,
        };
        let mut inferior = Inferior::new(spawned.pid, Origin::Spawned, &[spawned.pid])?;
        inferior.read_only = read_only;
        let stop = if at_loader {
            Stop::Loader { tid: spawned.pid }
        } else {
            inferior.run_to_entry()?
        };
        Ok((inferior, output, stop))
    }

    fn run_to_entry(&mut self) -> Result<Stop, OsError> {
        let Some(entry) = procfs::entry_point(self.pid) else {
            return Ok(Stop::Entry { tid: self.pid });
        };
        let had_site = self.has_site(entry);
        self.insert_site(entry)?;
        let deadline = Instant::now() + ENTRY_DEADLINE;
        self.arm(deadline);
        let stop = self.cont(deadline, &|_| false, super::NonStop::default());
        self.disarm(&|_| false);
        if !had_site && !self.dead {
            self.remove_site(entry)?;
        }
        match stop? {
            Stop::Breakpoint { tid, addr } if addr == entry => Ok(Stop::Entry { tid }),
            other => Ok(other),
        }
    }

    /// Attaches to every thread of `pid` with PTRACE_SEIZE (the program sees no SIGSTOP) and
    /// stops them all.
    pub(crate) fn attach(pid: Tid) -> Result<(Inferior, Stop), OsError> {
        if pid <= 0 {
            return Err(OsError::Spawn(format!("attach: {pid} is not a process id")));
        }
        if pid == std::process::id() as Tid {
            return Err(OsError::Spawn(
                "attach: refusing to attach to scry itself".into(),
            ));
        }
        let status = procfs::status_text(pid)
            .ok_or_else(|| OsError::Spawn(format!("attach: no process {pid}")))?;
        if procfs::status_field(&status, "State").is_some_and(|s| s.starts_with('Z')) {
            return Err(OsError::Spawn(format!(
                "attach: process {pid} is a zombie: it has exited and only waits for its parent to collect its status; there is nothing left to debug"
            )));
        }
        if let Some(tgid) = procfs::status_field(&status, "Tgid") {
            if tgid != pid.to_string() {
                return Err(OsError::Spawn(format!(
                    "attach: {pid} is a thread of process {tgid}; attach to {tgid}"
                )));
            }
        }
        let options = ptrace::trace_options(false);
        let mut seized: Vec<Tid> = Vec::new();
        // Threads may be created while we seize: repeat until the task list holds no stranger.
        loop {
            let fresh: Vec<Tid> = procfs::task_ids(pid)
                .into_iter()
                .filter(|t| !seized.contains(t))
                .collect();
            if fresh.is_empty() {
                break;
            }
            for tid in fresh {
                match ptrace::seize(tid, options) {
                    Ok(()) => seized.push(tid),
                    Err(e) if tid == pid => return Err(attach_error(pid, &status, e)),
                    Err(_) => {} // a thread that exited meanwhile
                }
            }
        }
        let mut inferior = Inferior::new(pid, Origin::Attached, &[])?;
        for &tid in &seized {
            inferior
                .threads
                .insert(tid, super::thread::Thread::new_stopped(tid));
            if let Some(t) = inferior.threads.get_mut(&tid) {
                t.mark_running();
            }
        }
        inferior.stop_all(&|_| false)?;
        if inferior.dead {
            return Err(OsError::Spawn(format!(
                "attach: process {pid} exited while attaching"
            )));
        }
        Ok((inferior, Stop::Attached { tid: pid }))
    }

    /// Restores every breakpoint byte and lets every thread go, passing on signals it was
    /// about to receive. Returns what the process keeps of scry's for life, if anything (its
    /// seccomp filter), for the user to be told.
    pub(crate) fn detach(&mut self) -> Result<Option<String>, OsError> {
        if self.dead {
            return Ok(None);
        }
        self.stop_all(&|_| false)?;
        // Refused (nothing changed) when the process could not run safely without scry.
        let kept = self.release_catch()?;
        // The session takes its probes out first; a jump left (nothing should be) still
        // goes: the program's code is its own again (a thread in a trampoline jumps back
        // past the restored bytes).
        let sites: Vec<u64> = self.jumps.all().map(|(a, _)| a).collect();
        for site in sites {
            let _ = self.unpatch_jump(site);
        }
        self.remove_all_sites();
        self.clear_all_watches();
        for tid in self.thread_ids() {
            // A hit taken at the stop above leaves its status bits; the program starts clean.
            let _ = ptrace::write_debugreg(tid, crate::os::debugregs::DR6, 0);
            let sig = self.take_signal(tid);
            match ptrace::detach(tid, sig) {
                Ok(()) => {}
                Err(e) if e.is_gone() => {}
                Err(e) => return Err(e),
            }
        }
        self.threads.clear();
        self.dead = true;
        Ok(kept)
    }

    /// SIGKILLs the process and reaps it.
    pub(crate) fn kill(&mut self) -> Result<Stop, OsError> {
        self.forbid_if_read_only("kill the program")?;
        if self.dead {
            return Ok(Stop::Killed {
                signal: libc::SIGKILL,
            });
        }
        ptrace::kill_process(self.pid, libc::SIGKILL)?;
        let mut last = Stop::Killed {
            signal: libc::SIGKILL,
        };
        loop {
            match wait(-1, false) {
                Ok(WaitOutcome::Event(WaitEvent::Exited { tid, code })) if tid == self.pid => {
                    last = Stop::Exited { code };
                    break;
                }
                Ok(WaitOutcome::Event(WaitEvent::Killed { tid, signal })) if tid == self.pid => {
                    last = Stop::Killed { signal };
                    break;
                }
                Ok(WaitOutcome::Event(e)) if !self.owns(&e) => super::tree::keep(e),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        self.threads.clear();
        self.dead = true;
        Ok(last)
    }
}

fn attach_error(pid: Tid, status: &str, err: OsError) -> OsError {
    let tracer = procfs::status_field(status, "TracerPid").unwrap_or_default();
    if !tracer.is_empty() && tracer != "0" {
        return OsError::Spawn(format!(
            "attach: process {pid} is already traced by process {tracer}"
        ));
    }
    match err {
        OsError::Ptrace { errno: nix::Error::EPERM, .. } => OsError::Spawn(format!(
            "attach: not permitted to trace process {pid} (check /proc/sys/kernel/yama/ptrace_scope and privileges)"
        )),
        OsError::Ptrace { errno: nix::Error::ESRCH, .. } => {
            OsError::Spawn(format!("attach: no process {pid}"))
        }
        other => other,
    }
}

impl Drop for Inferior {
    fn drop(&mut self) {
        super::tree::unregister(self.pid);
        if self.dead {
            return;
        }
        // A session's end takes back what it started, read-only or not.
        self.read_only = false;
        let _ = match self.origin {
            Origin::Spawned => self.kill().map(|_| ()),
            Origin::Attached => self.detach().map(drop),
        };
    }
}
