//! CPU affinity. Every ptrace stop is a round trip between two processes; when the tracer and
//! the traced thread run on different cores each stop also pays a cross-CPU wake-up, which on
//! small VMs costs more than the stop itself. Pinning both to one core for a run of stops
//! (and restoring the old masks after) removes that.

use super::Tid;

pub(crate) struct Affinity(libc::cpu_set_t);

/// The CPU the calling thread is running on.
pub(crate) fn current_cpu() -> Option<usize> {
    // SAFETY: no arguments; returns -1 on failure.
    let cpu = unsafe { libc::sched_getcpu() };
    (cpu >= 0).then_some(cpu as usize)
}

/// `tid`'s current mask (0 = the calling thread).
pub(crate) fn get(tid: Tid) -> Option<Affinity> {
    // SAFETY: sched_getaffinity fills the set we own, of the size we pass.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let rc = libc::sched_getaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        (rc == 0).then_some(Affinity(set))
    }
}

pub(crate) fn set(tid: Tid, mask: &Affinity) -> bool {
    // SAFETY: passes a fully initialised set of the size we pass.
    unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &mask.0) == 0 }
}

/// A mask holding only `cpu`.
pub(crate) fn only(cpu: usize) -> Affinity {
    // SAFETY: CPU_ZERO/CPU_SET write inside the set we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        Affinity(set)
    }
}

impl Affinity {
    pub(crate) fn allows(&self, cpu: usize) -> bool {
        // SAFETY: reads a bit of the set we own.
        unsafe { libc::CPU_ISSET(cpu, &self.0) }
    }

    /// How many CPUs the mask allows.
    pub(crate) fn count(&self) -> usize {
        // SAFETY: reads the set we own.
        (unsafe { libc::CPU_COUNT(&self.0) }) as usize
    }
}

/// Whether the calling thread may run on more than one CPU (a tracer alone on its CPU with
/// the tracee gains nothing from polling: see `wait::wait_briefly`).
pub(crate) fn several_cpus() -> bool {
    get(0).is_some_and(|m| m.count() > 1)
}
