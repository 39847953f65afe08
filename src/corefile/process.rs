//! A core file as a stopped process that never runs again: its threads and their registers,
//! its memory, its mappings (rebuilt as a maps listing, so the symbol store loads its
//! modules exactly as for a live process), and the signal that killed it.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::files::{self, FileSearch, MappedFile};
use super::image::{CoreImage, FileSource};
use super::layout::{PsInfo, SigInfo};
use super::memory::CoreMemory;
use super::{elf, notes::CoreThread};
use crate::maps::{MapEntry, Perms};
use crate::os::regs::RawRegs;
use crate::os::Tid;

const AT_SYSINFO_EHDR: u64 = 33;
const AT_RANDOM: u64 = 25;
const AT_EXECFN: u64 = 31;
/// A segment is one mapping, so one file; more are only in corrupt cores.
const MAX_FILES_PER_SEGMENT: usize = 64;

pub struct CoreProcess {
    /// The core file as the user named it.
    pub path: PathBuf,
    image: CoreImage,
    files: Vec<MappedFile>,
    /// Why not every mapped file was looked for, if not.
    files_problem: Option<String>,
    /// The executable's path as the process mapped it.
    exe: Option<String>,
    selected: Tid,
}

impl CoreProcess {
    /// Opens the core at `path`; `search` says where the mapped files are.
    pub fn open(path: &Path, search: &FileSearch) -> Result<CoreProcess, String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !meta.is_file() {
            return Err(format!("{}: not a regular file", path.display()));
        }
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let source = FileSource::new(file).map_err(|e| format!("{}: {e}", path.display()))?;
        let image = CoreImage::parse(Box::new(source))
            .map_err(|why| format!("{}: {why}", path.display()))?;
        Ok(CoreProcess::from_image(path, image, search))
    }

    pub fn from_image(path: &Path, image: CoreImage, search: &FileSearch) -> CoreProcess {
        let exe = files::executable_path(&image);
        let (files, files_problem) = files::resolve(&image, exe.as_deref(), search);
        let selected = image
            .notes
            .threads
            .first()
            .map(|t| t.status.tid)
            .or(image.notes.process.as_ref().map(|p| p.pid))
            .unwrap_or(0);
        CoreProcess {
            path: path.to_path_buf(),
            image,
            files,
            files_problem,
            exe,
            selected,
        }
    }

    /// The core file's name, as messages show it (`core.1234`).
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// The process id: NT_PRPSINFO's, else the first thread's.
    pub fn pid(&self) -> Tid {
        self.image
            .notes
            .process
            .as_ref()
            .map(|p| p.pid)
            .filter(|p| *p > 0)
            .or(self.image.notes.threads.first().map(|t| t.status.tid))
            .unwrap_or(0)
    }

    pub fn process_info(&self) -> Option<&PsInfo> {
        self.image.notes.process.as_ref()
    }

    fn thread(&self, tid: Tid) -> Option<&CoreThread> {
        self.image
            .notes
            .threads
            .iter()
            .find(|t| t.status.tid == tid)
    }

    /// Thread ids in ascending order (as a live process lists them), each once.
    pub fn thread_ids(&self) -> Vec<Tid> {
        let mut out: Vec<Tid> = self
            .image
            .notes
            .threads
            .iter()
            .map(|t| t.status.tid)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    pub fn selected(&self) -> Tid {
        self.selected
    }

    pub fn select(&mut self, tid: Tid) -> bool {
        let known = self.thread(tid).is_some();
        if known {
            self.selected = tid;
        }
        known
    }

    pub fn regs(&self, tid: Tid) -> Result<&RawRegs, String> {
        self.thread(tid).map(|t| &t.status.regs).ok_or_else(|| {
            format!(
                "the core {} holds no registers for thread {tid}",
                self.name()
            )
        })
    }

    /// The floating-point and vector state of `tid`: the XSAVE area when the core has one
    /// (true), else the FXSAVE area (false).
    pub fn fp_area(&self, tid: Tid) -> Option<(&[u8], bool)> {
        let t = self.thread(tid)?;
        match (&t.xstate, &t.fpregs) {
            (Some(x), _) => Some((x, true)),
            (None, Some(f)) => Some((f, false)),
            _ => None,
        }
    }

    /// The thread that dumped the core and the signal that made it, if any (a snapshot
    /// written by `gcore()` away from a signal has none).
    pub fn crash(&self) -> Option<(Tid, SigInfo)> {
        let t = self.image.notes.threads.first()?;
        Some((t.status.tid, t.signal()?))
    }

    /// Whether the core holds the crash's whole siginfo (NT_SIGINFO): without it, the
    /// signal's code and fault address are not known.
    pub fn crash_siginfo_known(&self) -> bool {
        self.image
            .notes
            .threads
            .first()
            .is_some_and(|t| t.siginfo.is_some_and(|s| s.signo > 0))
    }

    /// The command name: NT_PRPSINFO's for the main thread (threads are not named in a core).
    pub fn thread_name(&self, tid: Tid) -> Option<String> {
        let p = self.process_info()?;
        (tid == self.pid()).then(|| p.fname.clone())
    }

    pub fn memory(&self) -> CoreMemory<'_> {
        CoreMemory {
            core: &self.image,
            files: &self.files,
        }
    }

    pub fn files(&self) -> &[MappedFile] {
        &self.files
    }

    /// The executable's path as the process mapped it.
    pub fn exe_path(&self) -> Option<&str> {
        self.exe.as_deref()
    }

    /// The copy here of a file the process mapped (its own path when none was found: the
    /// symbol store then finds nothing there, or what is there).
    pub fn local_path(&self, core_path: &str) -> PathBuf {
        self.files
            .iter()
            .find(|f| f.core_path == core_path)
            .and_then(|f| f.local.clone())
            .unwrap_or_else(|| PathBuf::from(core_path))
    }

    /// What is missing or doubtful, one line each: damage to the core, files not found.
    pub fn problems(&self) -> Vec<String> {
        let mut out = self.image.problems.clone();
        out.extend(self.files_problem.clone());
        out.extend(self.files.iter().filter_map(|f| f.note.clone()));
        out
    }

    /// The process's mappings as `/proc/PID/maps` would have listed them: one entry per
    /// segment, split where NT_FILE names the file behind it. The main stack (it holds
    /// AT_RANDOM's bytes) and the vDSO (AT_SYSINFO_EHDR) get their pseudo names back.
    pub fn maps(&self) -> Vec<MapEntry> {
        let notes = &self.image.notes;
        let vdso = notes.auxv_value(AT_SYSINFO_EHDR);
        let stack = notes.auxv_value(AT_RANDOM).or(notes.auxv_value(AT_EXECFN));
        let entry = |start, end, flags: u32, offset, path: Option<String>| MapEntry {
            start,
            end,
            perms: Perms {
                read: flags & elf::PF_R != 0,
                write: flags & elf::PF_W != 0,
                exec: flags & elf::PF_X != 0,
                shared: false,
            },
            offset,
            dev: "00:00".into(),
            inode: 0,
            path,
        };
        let mut out = Vec::new();
        for s in &self.image.segments {
            // The files mapped inside the segment: they start below its end (a prefix of the
            // sorted list) and end above its start.
            let below_end = notes.files.partition_point(|f| f.start < s.end());
            let mut backing: Vec<_> = notes.files[..below_end]
                .iter()
                .rev()
                .take_while(|f| f.end > s.vaddr)
                .take(MAX_FILES_PER_SEGMENT)
                .collect();
            backing.reverse();
            if backing.is_empty() {
                let inside = |a: Option<u64>| a.is_some_and(|a| s.contains(a));
                let name = if inside(vdso) {
                    Some("[vdso]".to_string())
                } else if inside(stack) {
                    Some("[stack]".to_string())
                } else {
                    None
                };
                out.push(entry(s.vaddr, s.end(), s.flags, 0, name));
                continue;
            }
            for f in backing {
                let start = f.start.max(s.vaddr);
                out.push(entry(
                    start,
                    f.end.min(s.end()),
                    s.flags,
                    f.offset.saturating_add(start - f.start),
                    Some(f.path.clone()),
                ));
            }
        }
        // File mappings the segment table does not cover (a truncated table).
        for f in &notes.files {
            if self.image.segment_at(f.start).is_none() {
                out.push(entry(
                    f.start,
                    f.end,
                    elf::PF_R,
                    f.offset,
                    Some(f.path.clone()),
                ));
            }
        }
        out.sort_by_key(|m| m.start);
        out
    }
}
