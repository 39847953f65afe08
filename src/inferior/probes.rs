//! The backend's part of tracepoints (see `x86::probe` for the code that runs): memory the
//! program and scry share for the records, room for a trampoline within a 32-bit jump of
//! its site, and the jump itself, written with every thread stopped and hidden from readers
//! as int3 bytes are.
//!
//! Everything is made by system calls injected into a stopped thread (`inject`), so the
//! program's own state (its descriptors, its memory map beyond the new pages) is as before:
//! the ring's memfd is closed in the program as soon as both sides have mapped it.

use std::collections::BTreeMap;

use super::Inferior;
use crate::maps;
use crate::os::shared::SharedMem;
use crate::os::{procfs, OsError, Tid};

use super::inject::{
    MAP_ANONYMOUS, MAP_FIXED_NOREPLACE, MAP_PRIVATE, PROT_READ, PROT_WRITE, SYS_MMAP, SYS_MPROTECT,
};

const SYS_CLOSE: u64 = 3;
const SYS_FTRUNCATE: u64 = 77;
const SYS_MEMFD_CREATE: u64 = 319;
const PROT_EXEC: u64 = 4;
const MAP_SHARED: u64 = 0x01;
const MFD_CLOEXEC: u64 = 1;
const PAGE: u64 = 4096;
/// How far from its site a trampoline may be: a 32-bit jump's reach, less a margin for the
/// trampoline's own length.
const REACH: u64 = (1 << 31) - (1 << 20);

/// The jumps written into the program's code: each site's original bytes.
#[derive(Default)]
pub(crate) struct Jumps {
    original: BTreeMap<u64, Vec<u8>>,
}

impl Jumps {
    /// The jump covering `addr`, as (site, original bytes).
    fn covering(&self, addr: u64) -> Option<(u64, &[u8])> {
        let (&site, bytes) = self.original.range(..=addr).next_back()?;
        (addr < site + bytes.len() as u64).then_some((site, bytes.as_slice()))
    }

    /// Puts the original bytes back into `buf` (read from `addr`).
    pub(crate) fn unpatch(&self, addr: u64, buf: &mut [u8]) {
        let end = addr.saturating_add(buf.len() as u64);
        let first = self.covering(addr).map_or(addr, |(site, _)| site);
        for (&site, bytes) in self.original.range(first..end) {
            for (i, b) in bytes.iter().enumerate() {
                let at = site + i as u64;
                if at >= addr && at < end {
                    buf[(at - addr) as usize] = *b;
                }
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.original.is_empty()
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.original.iter().map(|(a, b)| (*a, b.as_slice()))
    }
}

impl Inferior {
    /// A ring of `len` bytes shared with the program: its address there, and scry's mapping.
    pub(crate) fn map_ring(&mut self, len: u64) -> Result<(u64, SharedMem), OsError> {
        self.forbid_if_read_only("map a trace ring into the program")?;
        let tid = self.probe_thread()?;
        let mut name = *b"scry-trace\0";
        let fd = self.inject_syscall(tid, SYS_MEMFD_CREATE, &mut name, |at| {
            [at, MFD_CLOEXEC, 0, 0, 0, 0]
        })?;
        if fd < 0 {
            return Err(OsError::Injected(format!("memfd_create failed: {fd}")));
        }
        let fd_u = fd as u64;
        let made = (|| {
            let r =
                self.inject_syscall(tid, SYS_FTRUNCATE, &mut [], |_| [fd_u, len, 0, 0, 0, 0])?;
            if r != 0 {
                return Err(OsError::Injected(format!(
                    "ftruncate of the ring failed: {r}"
                )));
            }
            let shared = SharedMem::open(self.pid, fd, len as usize)?;
            let prot = PROT_READ | PROT_WRITE;
            let at = self.inject_syscall(tid, SYS_MMAP, &mut [], |_| {
                [0, len, prot, MAP_SHARED, fd_u, 0]
            })?;
            if at < 0 {
                return Err(OsError::Injected(format!("mmap of the ring failed: {at}")));
            }
            Ok((at as u64, shared))
        })();
        let _ = self.inject_syscall(tid, SYS_CLOSE, &mut [], |_| [fd_u, 0, 0, 0, 0, 0]);
        made
    }

    /// Maps `len` bytes of private memory within a 32-bit jump of `site`, writable for now.
    pub(crate) fn alloc_near(&mut self, site: u64, len: u64) -> Result<u64, OsError> {
        self.forbid_if_read_only("map a trampoline into the program")?;
        let len = len.div_ceil(PAGE) * PAGE;
        let text = procfs::maps_text(self.pid).map_err(|err| OsError::Io {
            what: "reading the memory map",
            err,
        })?;
        let mapped = maps::parse_maps(&text);
        let tid = self.probe_thread()?;
        let lo = site.saturating_sub(REACH).max(0x1_0000);
        let hi = site.saturating_add(REACH).min(0x7fff_ffff_f000);
        // The holes in reach, nearest first.
        let mut holes: Vec<(u64, u64)> = Vec::new();
        let mut prev_end = lo;
        for m in mapped.iter().filter(|m| m.end > lo && m.start < hi) {
            if m.start > prev_end {
                holes.push((prev_end, m.start.min(hi)));
            }
            prev_end = prev_end.max(m.end);
        }
        if prev_end < hi {
            holes.push((prev_end, hi));
        }
        let mut candidates: Vec<u64> = holes
            .iter()
            .filter(|(s, e)| e - s >= len + 2 * PAGE)
            // A page of gap on each side, so nothing grows into it.
            .map(|(s, e)| if *e <= site { e - len - PAGE } else { s + PAGE })
            .collect();
        candidates.sort_by_key(|a| a.abs_diff(site));
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
        for at in candidates.into_iter().take(8) {
            let got = self.inject_syscall(tid, SYS_MMAP, &mut [], |_| {
                [at, len, PROT_READ | PROT_WRITE, flags, u64::MAX, 0]
            })?;
            if got as u64 == at {
                return Ok(at);
            }
        }
        Err(OsError::Injected(format!(
            "no free memory within a 32-bit jump of {site:#x} for a trampoline"
        )))
    }

    /// Writes a trampoline's code at `at` and makes its pages executable (not writable).
    pub(crate) fn write_code(&mut self, at: u64, code: &[u8]) -> Result<(), OsError> {
        self.mem.write(at, code)?;
        let tid = self.probe_thread()?;
        let len = (code.len() as u64).div_ceil(PAGE) * PAGE;
        let r = self.inject_syscall(tid, SYS_MPROTECT, &mut [], |_| {
            [at, len, PROT_READ | PROT_EXEC, 0, 0, 0]
        })?;
        if r != 0 {
            return Err(OsError::Injected(format!(
                "mprotect of the trampoline failed: {r}"
            )));
        }
        Ok(())
    }

    /// Writes `jump` at `site` (every thread stopped), after moving any thread whose pc is
    /// inside the bytes it covers (`covered` long) out of them by single steps.
    pub(crate) fn patch_jump(
        &mut self,
        site: u64,
        jump: &[u8],
        covered: usize,
    ) -> Result<(), OsError> {
        self.forbid_if_read_only("write a tracepoint's jump")?;
        let inside = site + 1..site + covered as u64;
        for tid in self.thread_ids() {
            for _ in 0..16 {
                let Ok(pc) = self.pc(tid) else { break };
                if !inside.contains(&pc) {
                    break;
                }
                if !self.step_in_probe(tid)? {
                    break;
                }
            }
            if self.pc(tid).is_ok_and(|pc| inside.contains(&pc)) {
                return Err(OsError::Injected(format!(
                    "thread {tid} cannot be moved out of the bytes the jump would cover"
                )));
            }
        }
        if (site..site + covered as u64).any(|a| self.has_site(a)) {
            return Err(OsError::Injected(
                "a breakpoint is inside the bytes the jump would cover".into(),
            ));
        }
        let end = site + covered as u64;
        if let Some((other, _)) = self
            .jumps
            .all()
            .find(|(s, b)| *s < end && s + b.len() as u64 > site)
        {
            return Err(OsError::Injected(format!(
                "the bytes the jump would cover overlap the jump of the tracepoint at {other:#x}"
            )));
        }
        let mut original = vec![0u8; covered];
        self.mem.read(site, &mut original)?;
        let mut bytes = original.clone();
        bytes[..jump.len()].copy_from_slice(jump);
        // The bytes past the jump (the rest of a longer covered instruction) are never run:
        // int3s, so a stray jump into them stops instead of running garbage.
        for b in &mut bytes[jump.len()..] {
            *b = super::sites::INT3;
        }
        self.mem
            .write(site, &bytes)
            .map_err(|_| OsError::Unwritable {
                addr: site,
                len: covered,
            })?;
        self.jumps.original.insert(site, original);
        Ok(())
    }

    /// Puts the original bytes back at `site`.
    pub(crate) fn unpatch_jump(&mut self, site: u64) -> Result<(), OsError> {
        let Some(original) = self.jumps.original.remove(&site) else {
            return Ok(());
        };
        if self.dead {
            return Ok(());
        }
        // An int3 of a breakpoint at the site saved the jump's first byte: it saves the
        // original one now.
        let mut bytes = original.clone();
        if self.sites.contains(site) {
            self.sites.insert(site, original[0]);
            bytes[0] = super::sites::INT3;
        }
        self.mem.write(site, &bytes)
    }

    /// A breakpoint inside the bytes a tracepoint's jump covers (past its first) would
    /// never be reached, and its int3 would break the jump.
    pub(super) fn refuse_inside_jump(&self, addr: u64) -> Result<(), OsError> {
        match self.jump_covering(addr) {
            Some(site) if site != addr => Err(OsError::Injected(format!(
                "{addr:#x} is inside the bytes the jump of the tracepoint at {site:#x} covers: a breakpoint or another tracepoint goes at {site:#x} or after them"
            ))),
            _ => Ok(()),
        }
    }

    /// Steps a thread the user left inside a jump's bytes (after single steps from its
    /// site) out of them, the program's own instructions in place: resumed there, it would
    /// run the middle of the jump.
    pub(super) fn leave_jump_bytes(
        &mut self,
        tid: Tid,
        deadline: std::time::Instant,
        pass: super::PassFn,
    ) -> Result<Option<super::Stop>, OsError> {
        // A signal waiting for the thread is delivered once it is out: taken inside the
        // covered bytes, its handler would return into the jump.
        let held = self.take_signal(tid);
        let mut ended = None;
        for _ in 0..16 {
            let pc = self.pc(tid)?;
            let Some(site) = self.jump_covering(pc).filter(|s| *s != pc) else {
                break;
            };
            let stop = self.step_lifting_jump(tid, site, deadline, pass)?;
            if !matches!(stop, super::Stop::Step { .. }) {
                ended = Some(stop);
                break;
            }
        }
        if held != 0 && self.threads.contains_key(&tid) && self.pending_signal(tid) == 0 {
            self.hold_signal(tid, held);
        }
        Ok(ended)
    }

    /// The site of the jump whose bytes cover `addr`.
    pub(super) fn jump_covering(&self, addr: u64) -> Option<u64> {
        self.jumps.covering(addr).map(|(site, _)| site)
    }

    /// Single-steps `tid` (every other thread stopped) over the program's own instruction
    /// under the jump at `site`: the original bytes are in memory for that one step, as an
    /// int3 is lifted, so a user stepping through a probed function sees its code, not the
    /// trampoline's.
    pub(super) fn step_lifting_jump(
        &mut self,
        tid: Tid,
        site: u64,
        deadline: std::time::Instant,
        pass: super::PassFn,
    ) -> Result<super::Stop, OsError> {
        let Some(original) = self.jumps.original.get(&site).cloned() else {
            return self.step_thread(tid, deadline, pass);
        };
        let mut now = vec![0u8; original.len()];
        self.mem.read(site, &mut now)?;
        self.mem.write(site, &original)?;
        let stepped = self.step_raw(tid, deadline, pass, true);
        let _ = self.mem.write(site, &now);
        stepped
    }

    /// Forgets the jump at `site` without writing (its library is unloaded).
    pub(crate) fn forget_jump(&mut self, site: u64) {
        self.jumps.original.remove(&site);
    }

    /// Whether some thread's pc is in `range` (inside a trampoline, which may then not be
    /// unmapped).
    pub(crate) fn pc_inside(&mut self, range: std::ops::Range<u64>) -> bool {
        self.thread_ids()
            .into_iter()
            .any(|tid| self.pc(tid).is_ok_and(|pc| range.contains(&pc)))
    }

    /// Whether a seccomp filter the program installed itself is on it (`Seccomp_filters`
    /// counts scry's own too, for caught system calls). Unknown: yes.
    pub(crate) fn foreign_seccomp(&self) -> bool {
        let Some(status) = procfs::status_text(self.pid) else {
            return true;
        };
        let field =
            |name| procfs::status_field(&status, name).and_then(|v| v.parse::<usize>().ok());
        match (field("Seccomp"), field("Seccomp_filters")) {
            (Some(0), _) => false,
            (Some(2), Some(n)) => n > self.catch.filters,
            _ => true,
        }
    }

    /// One single step of `tid` inside a probe (every other thread stopped): not when it has
    /// a signal to take (the step would deliver it there); another stop the step meets is
    /// kept for the next report.
    pub(crate) fn step_in_probe(&mut self, tid: Tid) -> Result<bool, OsError> {
        if self.pending_signal(tid) != 0 {
            return Ok(false);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        match self.step_thread(tid, deadline, &|_| false)? {
            super::Stop::Step { .. } => Ok(true),
            other => {
                self.queued.push_back(other);
                Ok(false)
            }
        }
    }

    /// Whether a thread can run the system calls putting a probe in takes (not while the
    /// only one is inside execve, at an exec stop).
    pub(crate) fn can_inject(&self) -> bool {
        self.injectable_thread().is_some()
    }

    fn probe_thread(&self) -> Result<Tid, OsError> {
        self.injectable_thread().ok_or_else(|| {
            OsError::Injected("no thread can run the system calls a tracepoint needs".into())
        })
    }

    /// The original bytes of every jump and int3, for a copy of this memory (a fork child)
    /// that must not carry them: int3s first, since one at a jump's site saved the jump's
    /// first byte.
    pub(super) fn code_to_restore(&self) -> Vec<(u64, Vec<u8>)> {
        let mut out: Vec<(u64, Vec<u8>)> = self
            .sites
            .addrs()
            .into_iter()
            .filter_map(|a| Some((a, vec![self.sites.original(a)?])))
            .collect();
        out.extend(self.jumps.all().map(|(a, b)| (a, b.to_vec())));
        out
    }
}
