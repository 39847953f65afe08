//! A session over a core file: opening it (its first stop is the crash), reading it through
//! the same [`ProcessView`] as a live process, and refusing what needs a process.

use std::path::Path;

use super::*;
use crate::corefile::{CoreProcess, FileSearch};

/// The core a session reads, and the program it was made of.
pub(super) struct CoreTarget {
    pub process: CoreProcess,
    /// The program the user named, or the executable's path as the process mapped it.
    pub program: String,
    /// What the user named, for opening it again with other search settings.
    program_arg: Option<String>,
}

/// How many of a core's problems the first stop line shows (`status().problems` has all).
const PROBLEMS_SHOWN: usize = 3;

impl Session {
    /// The core file's name, when the session reads one.
    pub fn core_name(&self) -> Option<String> {
        self.targets.core.as_ref().map(|c| c.process.name())
    }

    /// What is missing from the core or doubtful (damage, files not found), one line each.
    pub fn core_problems(&self) -> Vec<String> {
        self.targets
            .core
            .as_ref()
            .map(|c| c.process.problems())
            .unwrap_or_default()
    }

    /// What the live process's backend could not read (a remote module of another build).
    pub fn target_problems(&self) -> Vec<String> {
        self.targets
            .live
            .as_ref()
            .map(|t| t.process.problems())
            .unwrap_or_default()
    }

    fn file_search(&self, program: Option<&str>) -> Result<FileSearch> {
        let program = match program {
            // A plain name is a file in the working directory first (nothing runs, so it is
            // no command to look up), as gdb takes it; else one on PATH.
            Some(p) => Some(
                Some(std::path::PathBuf::from(p))
                    .filter(|here| !p.contains('/') && here.is_file())
                    .or_else(|| resolve_program(p))
                    .ok_or_else(|| SessionError::Invalid(format!("core: no such program '{p}'")))?,
            ),
            None => None,
        };
        Ok(FileSearch {
            program,
            sysroot: self.config.sysroot.clone(),
            solib_dirs: self.config.solib_dirs.clone(),
        })
    }

    /// Opens the core at `path` (of `program`, when named: else the executable is looked
    /// for where the process had it). Its first stop is the signal that killed the process,
    /// in the thread that received it.
    pub fn open_core(&mut self, path: &Path, program: Option<&str>) -> Result<StopInfo> {
        self.ensure_no_target()?;
        let search = self.file_search(program)?;
        let process = CoreProcess::open(path, &search)
            .map_err(|why| SessionError::Invalid(format!("core: {why}")))?;
        let program_name = program
            .map(str::to_string)
            .or(process.exe_path().map(str::to_string))
            .unwrap_or_default();
        self.targets.live = None;
        self.forget_process();
        self.targets.last_process = Some((process.pid(), program_name.clone()));
        self.targets.core = Some(CoreTarget {
            process,
            program: program_name,
            program_arg: program.map(str::to_string),
        });
        self.targets.ended = None;
        self.at_stop.snapshot = Default::default();
        self.symbols = SymbolStore::new();
        self.refresh_symbols();
        Ok(self.core_stop())
    }

    /// Sets where a core's mapped files are looked for (`config.sysroot`,
    /// `config.solib_dirs`); each must be a directory. An open core is read again with them.
    pub fn set_core_search(&mut self, sysroot: Option<PathBuf>, dirs: Vec<PathBuf>) -> Result<()> {
        let all: Vec<PathBuf> = sysroot
            .iter()
            .cloned()
            .chain(dirs.iter().cloned())
            .collect();
        check_debug_dirs(&all).map_err(SessionError::Invalid)?;
        self.config.sysroot = sysroot;
        self.config.solib_dirs = dirs;
        self.reopen_core()
    }

    /// Reads the open core again with the current `sysroot`/`solib_dirs`, keeping the
    /// selected thread.
    fn reopen_core(&mut self) -> Result<()> {
        let Some(core) = &self.targets.core else {
            return Ok(());
        };
        let (path, arg, tid) = (
            core.process.path.clone(),
            core.program_arg.clone(),
            core.process.selected(),
        );
        let search = self.file_search(arg.as_deref())?;
        let mut process = CoreProcess::open(&path, &search)
            .map_err(|why| SessionError::Invalid(format!("core: {why}")))?;
        process.select(tid);
        if let Some(core) = &mut self.targets.core {
            core.process = process;
        }
        self.symbols = SymbolStore::new();
        self.refresh_symbols();
        Ok(())
    }

    /// The core's one stop: the crash (`signal SIGSEGV fault_addr=0x1c at ...`), or for a
    /// core written away from a signal, `core at ...` in the thread that was selected.
    fn core_stop(&mut self) -> StopInfo {
        let Some(core) = &self.targets.core else {
            return StopInfo::new(StopKind::Here);
        };
        let mut notes = Vec::new();
        let crash = core.process.crash();
        let known = core.process.crash_siginfo_known();
        let selected = core.process.selected();
        let (kind, tid) = match crash {
            Some((tid, sig)) => {
                let kind = if known {
                    self.signal_kind(&mut notes, tid, sig.signo, sig.code, sig.addr)
                } else {
                    StopKind::Signal {
                        signal: sig.signo,
                        fault_addr: None,
                    }
                };
                (kind, tid)
            }
            None => (StopKind::Core, selected),
        };
        let mut info = StopInfo {
            tid: Some(tid),
            notes,
            ..StopInfo::new(kind)
        };
        let Some(core) = &self.targets.core else {
            return info;
        };
        let threads = core.process.thread_ids().len();
        let problems = core.process.problems();
        info.pc = self.regs().ok().map(|r| r.rip);
        self.describe(&mut info);
        info.show_tid = threads > 1;
        info.notes
            .extend(problems.iter().take(PROBLEMS_SHOWN).cloned());
        if problems.len() > PROBLEMS_SHOWN {
            info.notes.push(format!(
                "{} more: status().problems",
                problems.len() - PROBLEMS_SHOWN
            ));
        }
        info
    }
}
