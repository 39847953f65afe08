//! Memory shared with the target: a tracepoint's ring, a memfd the program made (at scry's
//! request) and mapped, which scry maps too through `/proc/PID/fd/N`. The program's probes
//! write records and counters into it while it runs; scry reads them without a system call.
//!
//! Every byte in it is the program's to write, so nothing read here is trusted: offsets are
//! checked against the mapping, and values are plain numbers the caller validates.

use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::MmapRaw;

use super::OsError;

pub(crate) struct SharedMem {
    map: MmapRaw,
}

impl SharedMem {
    /// Maps `len` bytes of the file descriptor `fd` of process `pid`, shared.
    pub(crate) fn open(pid: super::Tid, fd: i64, len: usize) -> Result<SharedMem, OsError> {
        let path = format!("/proc/{pid}/fd/{fd}");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|err| OsError::Io {
                what: "opening the program's trace ring",
                err,
            })?;
        let map = memmap2::MmapOptions::new()
            .len(len)
            .map_raw(&file)
            .map_err(|err| OsError::Io {
                what: "mapping the program's trace ring",
                err,
            })?;
        Ok(SharedMem { map })
    }

    fn word(&self, off: u64) -> Option<&AtomicU64> {
        let off = usize::try_from(off).ok()?;
        if off % 8 != 0 || off.checked_add(8)? > self.map.len() {
            return None;
        }
        // SAFETY: in bounds and 8-aligned (the mapping is page-aligned); the memory lives as
        // long as `self`, and every access to shared words goes through atomics, so the other
        // process's concurrent writes are no data race on scry's side.
        Some(unsafe { &*(self.map.as_ptr().add(off) as *const AtomicU64) })
    }

    /// The word at `off` (0 when out of bounds), read with acquire order: what the writer
    /// stored before it is visible after.
    pub(crate) fn load(&self, off: u64) -> u64 {
        self.word(off).map_or(0, |w| w.load(Ordering::Acquire))
    }

    /// Stores `value` at `off` with release order (out of bounds: nothing).
    pub(crate) fn store(&self, off: u64, value: u64) {
        if let Some(w) = self.word(off) {
            w.store(value, Ordering::Release);
        }
    }

    /// Copies bytes from `off` into `buf` (what fits in the mapping; the rest zero). The
    /// writer does not touch a committed record until scry gives its slot back.
    pub(crate) fn copy(&self, off: u64, buf: &mut [u8]) {
        buf.fill(0);
        let Ok(off) = usize::try_from(off) else {
            return;
        };
        let n = buf.len().min(self.map.len().saturating_sub(off));
        for (i, chunk) in buf[..n].chunks_mut(8).enumerate() {
            // Word by word through atomics (relaxed: ordered by the acquire of the record's
            // sequence word): never a plain read of memory another process writes.
            let at = off + i * 8;
            if at % 8 == 0 && at + 8 <= self.map.len() {
                if let Some(w) = self.word(at as u64) {
                    let v = w.load(Ordering::Relaxed).to_le_bytes();
                    chunk.copy_from_slice(&v[..chunk.len()]);
                }
            }
        }
    }
}

/// The time stamp counter and CLOCK_MONOTONIC (ns) read together, to turn a probe's counter
/// readings into times.
pub(crate) fn tsc_and_monotonic() -> (u64, u64) {
    // SAFETY: rdtsc has no preconditions on x86-64 (user mode may read it unless the kernel
    // disables it, which Linux does only for seccomp-strict processes).
    let tsc = unsafe { core::arch::x86_64::_rdtsc() };
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (tsc, ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}
