//! seccomp-bpf filters for caught system calls, as bytes: scry runs `seccomp()` inside the
//! program (see `inferior::catch`), so the filter is built here and written into the
//! program's stack. Pure: no process is touched.
//!
//! A filter tests the architecture (a 32-bit `int 0x80` call or an x32 number is never
//! scry's business), then each run of consecutive numbers, and returns `action` for a
//! number in the set, `SECCOMP_RET_ALLOW` otherwise. Every jump is short (to the next
//! test or the return right after it), so any set fits the 8-bit jump offsets.

use super::syscalls::SysSet;

/// Stop the thread for its tracer (PTRACE_EVENT_SECCOMP), with `SCRY_DATA` as the event
/// message.
pub(crate) const RET_TRACE: u32 = 0x7ff0_0000;
/// Ask the listener of the filter (the keeper, once scry let the program go).
pub(crate) const RET_USER_NOTIF: u32 = 0x7fc0_0000;
pub(crate) const RET_ALLOW: u32 = 0x7fff_0000;
/// The data scry's trace filters return: a stop with another value comes from a filter of
/// the program's own.
pub(crate) const SCRY_DATA: u32 = 0x5c27;

pub(crate) const SET_MODE_FILTER: u64 = 1;
pub(crate) const FLAG_TSYNC: u64 = 1;
pub(crate) const FLAG_NEW_LISTENER: u64 = 1 << 3;
/// With TSYNC and NEW_LISTENER together, a thread that cannot be synchronised makes the
/// call fail with ESRCH instead of returning its tid (which would read as an fd).
pub(crate) const FLAG_TSYNC_ESRCH: u64 = 1 << 4;

/// `PR_SET_NO_NEW_PRIVS`: what an unprivileged thread needs before it may install a filter.
pub(crate) const PR_SET_NO_NEW_PRIVS: u64 = 38;

const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// Offsets in `struct seccomp_data`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;

const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGT_K: u16 = 0x25;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;

/// The kernel's limit on one filter's length (the filters built stay far below it).
#[cfg(test)]
const MAX_INSNS: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

const fn stmt(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code, jt, jf, k }
}

/// A filter returning `action` for the numbers in `set`, `SECCOMP_RET_ALLOW` for the rest.
pub(crate) fn program(set: &SysSet, action: u32) -> Vec<Insn> {
    let mut p = vec![
        stmt(LD_W_ABS, DATA_ARCH),
        jump(JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
        stmt(RET_K, RET_ALLOW),
        stmt(LD_W_ABS, DATA_NR),
        jump(JGE_K, X32_SYSCALL_BIT, 0, 1),
        stmt(RET_K, RET_ALLOW),
    ];
    for (lo, hi) in set.ranges() {
        if lo == hi {
            p.push(jump(JEQ_K, lo as u32, 0, 1));
        } else {
            p.push(jump(JGE_K, lo as u32, 0, 2));
            p.push(jump(JGT_K, hi as u32, 1, 0));
        }
        p.push(stmt(RET_K, action));
    }
    p.push(stmt(RET_K, RET_ALLOW));
    p
}

/// The instructions as the kernel reads them (`struct sock_filter`, 8 bytes each).
pub(crate) fn to_bytes(program: &[Insn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for i in program {
        out.extend_from_slice(&i.code.to_le_bytes());
        out.push(i.jt);
        out.push(i.jf);
        out.extend_from_slice(&i.k.to_le_bytes());
    }
    out
}

/// A `struct sock_fprog` at `at` followed by the filter: what `seccomp()` gets a pointer to.
pub(crate) fn fprog_bytes(program: &[Insn], at: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + program.len() * 8);
    out.extend_from_slice(&(program.len() as u16).to_le_bytes());
    out.extend_from_slice(&[0; 6]);
    out.extend_from_slice(&(at + 16).to_le_bytes());
    out.extend_from_slice(&to_bytes(program));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a filter the way the kernel would, for the subset of classic BPF it uses.
    fn run(p: &[Insn], nr: u32, arch: u32) -> u32 {
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let i = p[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => acc = if i.k == DATA_NR { nr } else { arch },
                RET_K => return i.k,
                JEQ_K | JGT_K | JGE_K => {
                    let taken = match i.code {
                        JEQ_K => acc == i.k,
                        JGT_K => acc > i.k,
                        _ => acc >= i.k,
                    };
                    pc += if taken { i.jt } else { i.jf } as usize;
                }
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    #[test]
    fn traces_exactly_the_set() {
        let mut set = SysSet::default();
        for nr in [0, 2, 3, 4, 5, 257, 450] {
            set.insert(nr);
        }
        let p = program(&set, RET_TRACE | SCRY_DATA);
        for nr in 0..512u32 {
            let want = if set.contains(nr as u64) {
                RET_TRACE | SCRY_DATA
            } else {
                RET_ALLOW
            };
            assert_eq!(run(&p, nr, AUDIT_ARCH_X86_64), want, "nr {nr}");
        }
        // Another architecture's numbering, or the x32 ABI, is left alone.
        assert_eq!(run(&p, 257, 0x4000_0003), RET_ALLOW);
        assert_eq!(run(&p, 257 | X32_SYSCALL_BIT, AUDIT_ARCH_X86_64), RET_ALLOW);
        // Everything, in one range.
        let all = program(&SysSet::all(), RET_USER_NOTIF);
        assert!(all.len() < 400, "{}", all.len());
        assert_eq!(run(&all, 39, AUDIT_ARCH_X86_64), RET_USER_NOTIF);
        assert_eq!(run(&all, 335, AUDIT_ARCH_X86_64), RET_ALLOW);
        assert!(all.len() <= MAX_INSNS);
    }

    #[test]
    fn bytes_are_sock_filters() {
        let p = [jump(JEQ_K, 257, 0, 1)];
        assert_eq!(to_bytes(&p), vec![0x15, 0, 0, 1, 0x01, 0x01, 0, 0]);
        let f = fprog_bytes(&p, 0x1000);
        assert_eq!(&f[..2], &[1, 0]);
        assert_eq!(u64::from_le_bytes(f[8..16].try_into().unwrap()), 0x1010);
        assert_eq!(f.len(), 24);
    }
}
