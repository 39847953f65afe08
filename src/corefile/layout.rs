//! The kernel's x86-64 structures inside core notes, by byte offset (include/uapi/linux/
//! elfcore.h, arch/x86/include/asm/user_64.h, the generic siginfo_t), decoded and encoded.
//! Pure, and shared by the reader and the writer so they cannot disagree.

use super::elf::{i32_at, u16_at, u32_at, u64_at};
use crate::os::regs::{self, RawRegs};

pub const NT_PRSTATUS: u32 = 1;
pub const NT_FPREGSET: u32 = 2;
pub const NT_PRPSINFO: u32 = 3;
pub const NT_AUXV: u32 = 6;
/// "SIGI"
pub const NT_SIGINFO: u32 = 0x5349_4749;
/// "FILE"
pub const NT_FILE: u32 = 0x4649_4c45;
pub const NT_X86_XSTATE: u32 = 0x202;

/// `struct elf_prstatus`: 336 bytes on x86-64.
pub const PRSTATUS_SIZE: usize = 336;
const PR_CURSIG: usize = 12;
const PR_SIGPEND: usize = 16;
const PR_SIGHOLD: usize = 24;
const PR_PID: usize = 32;
const PR_PPID: usize = 36;
const PR_PGRP: usize = 40;
const PR_SID: usize = 44;
/// `pr_reg`: an `elf_gregset_t`, which is `struct user_regs_struct` (27 registers).
const PR_REG: usize = 112;
const PR_FPVALID: usize = 328;
pub const GREGS: usize = 27;

/// `struct elf_prpsinfo`: 136 bytes on x86-64.
pub const PRPSINFO_SIZE: usize = 136;
const PS_FNAME: usize = 40;
const PS_FNAME_LEN: usize = 16;
const PS_PSARGS: usize = 56;
const PS_PSARGS_LEN: usize = 80;

/// `siginfo_t`: 128 bytes; the fault address of SIGSEGV, SIGBUS, SIGILL and SIGFPE is the
/// first member of the union at offset 16.
pub const SIGINFO_SIZE: usize = 128;
const SI_ADDR: usize = 16;

/// The FXSAVE area of NT_FPREGSET.
pub const FPREGSET_SIZE: usize = 512;

/// The registers in `user_regs_struct` order (the order of `pr_reg`).
fn gregs_of(r: &RawRegs) -> [u64; GREGS] {
    [
        r.r15, r.r14, r.r13, r.r12, r.rbp, r.rbx, r.r11, r.r10, r.r9, r.r8, r.rax, r.rcx, r.rdx,
        r.rsi, r.rdi, r.orig_rax, r.rip, r.cs, r.eflags, r.rsp, r.ss, r.fs_base, r.gs_base, r.ds,
        r.es, r.fs, r.gs,
    ]
}

fn regs_from(g: &[u64; GREGS]) -> RawRegs {
    let mut r = regs::zeroed();
    [
        r.r15, r.r14, r.r13, r.r12, r.rbp, r.rbx, r.r11, r.r10, r.r9, r.r8, r.rax, r.rcx, r.rdx,
        r.rsi, r.rdi, r.orig_rax, r.rip, r.cs, r.eflags, r.rsp, r.ss, r.fs_base, r.gs_base, r.ds,
        r.es, r.fs, r.gs,
    ] = *g;
    r
}

/// What a signal carried (the fields scry shows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SigInfo {
    pub signo: i32,
    pub errno: i32,
    pub code: i32,
    /// `si_addr`: meaningful for SIGSEGV, SIGBUS, SIGILL and SIGFPE only.
    pub addr: u64,
}

/// One NT_PRSTATUS: a thread and its general registers.
#[derive(Debug, Clone, Copy)]
pub struct PrStatus {
    pub tid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub sid: i32,
    /// The signal the thread was handling (the one that killed the process, for the thread
    /// that dumped).
    pub cursig: u16,
    /// `pr_info`: signo, code, errno of that signal (no address).
    pub info: SigInfo,
    pub sigpend: u64,
    pub sighold: u64,
    pub regs: RawRegs,
}

pub fn decode_prstatus(b: &[u8]) -> Option<PrStatus> {
    if b.len() < PR_REG + GREGS * 8 {
        return None;
    }
    let mut g = [0u64; GREGS];
    for (i, v) in g.iter_mut().enumerate() {
        *v = u64_at(b, PR_REG + i * 8)?;
    }
    Some(PrStatus {
        tid: i32_at(b, PR_PID)?,
        ppid: i32_at(b, PR_PPID)?,
        pgrp: i32_at(b, PR_PGRP)?,
        sid: i32_at(b, PR_SID)?,
        cursig: u16_at(b, PR_CURSIG)?,
        info: SigInfo {
            signo: i32_at(b, 0)?,
            code: i32_at(b, 4)?,
            errno: i32_at(b, 8)?,
            addr: 0,
        },
        sigpend: u64_at(b, PR_SIGPEND)?,
        sighold: u64_at(b, PR_SIGHOLD)?,
        regs: regs_from(&g),
    })
}

pub fn encode_prstatus(p: &PrStatus, fpvalid: bool) -> Vec<u8> {
    let mut b = vec![0u8; PRSTATUS_SIZE];
    let mut put = |at: usize, bytes: &[u8]| b[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, &p.info.signo.to_le_bytes());
    put(4, &p.info.code.to_le_bytes());
    put(8, &p.info.errno.to_le_bytes());
    put(PR_CURSIG, &p.cursig.to_le_bytes());
    put(PR_SIGPEND, &p.sigpend.to_le_bytes());
    put(PR_SIGHOLD, &p.sighold.to_le_bytes());
    put(PR_PID, &p.tid.to_le_bytes());
    put(PR_PPID, &p.ppid.to_le_bytes());
    put(PR_PGRP, &p.pgrp.to_le_bytes());
    put(PR_SID, &p.sid.to_le_bytes());
    for (i, v) in gregs_of(&p.regs).iter().enumerate() {
        put(PR_REG + i * 8, &v.to_le_bytes());
    }
    put(PR_FPVALID, &i32::from(fpvalid).to_le_bytes());
    b
}

/// NT_PRPSINFO: the process as `ps` would show it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PsInfo {
    /// `R`, `S`, `D`, `T`, `Z`...
    pub state: u8,
    pub nice: i8,
    pub flags: u64,
    pub uid: u32,
    pub gid: u32,
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub sid: i32,
    /// The command name (at most 15 bytes).
    pub fname: String,
    /// The start of the command line, arguments separated by spaces (at most 79 bytes).
    pub psargs: String,
}

fn c_string(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

pub fn decode_prpsinfo(b: &[u8]) -> Option<PsInfo> {
    if b.len() < PRPSINFO_SIZE {
        return None;
    }
    Some(PsInfo {
        state: b[1],
        nice: b[3] as i8,
        flags: u64_at(b, 8)?,
        uid: u32_at(b, 16)?,
        gid: u32_at(b, 20)?,
        pid: i32_at(b, 24)?,
        ppid: i32_at(b, 28)?,
        pgrp: i32_at(b, 32)?,
        sid: i32_at(b, 36)?,
        fname: c_string(&b[PS_FNAME..PS_FNAME + PS_FNAME_LEN]),
        psargs: c_string(&b[PS_PSARGS..PS_PSARGS + PS_PSARGS_LEN]),
    })
}

/// The number `pr_state` holds for a state letter (the index in the kernel's "RSDTZW").
fn state_number(letter: u8) -> u8 {
    b"RSDTZW".iter().position(|&c| c == letter).unwrap_or(0) as u8
}

pub fn encode_prpsinfo(p: &PsInfo) -> Vec<u8> {
    let mut b = vec![0u8; PRPSINFO_SIZE];
    b[0] = state_number(p.state);
    b[1] = p.state;
    b[2] = u8::from(p.state == b'Z');
    b[3] = p.nice as u8;
    b[8..16].copy_from_slice(&p.flags.to_le_bytes());
    b[16..20].copy_from_slice(&p.uid.to_le_bytes());
    b[20..24].copy_from_slice(&p.gid.to_le_bytes());
    b[24..28].copy_from_slice(&p.pid.to_le_bytes());
    b[28..32].copy_from_slice(&p.ppid.to_le_bytes());
    b[32..36].copy_from_slice(&p.pgrp.to_le_bytes());
    b[36..40].copy_from_slice(&p.sid.to_le_bytes());
    // Both are C strings: at most len-1 bytes, NUL-terminated.
    let fname = p.fname.as_bytes();
    let n = fname.len().min(PS_FNAME_LEN - 1);
    b[PS_FNAME..PS_FNAME + n].copy_from_slice(&fname[..n]);
    let args = p.psargs.as_bytes();
    let n = args.len().min(PS_PSARGS_LEN - 1);
    b[PS_PSARGS..PS_PSARGS + n].copy_from_slice(&args[..n]);
    b
}

pub fn decode_siginfo(b: &[u8]) -> Option<SigInfo> {
    Some(SigInfo {
        signo: i32_at(b, 0)?,
        errno: i32_at(b, 4)?,
        code: i32_at(b, 8)?,
        addr: u64_at(b, SI_ADDR).unwrap_or(0),
    })
}

pub fn encode_siginfo(s: &SigInfo) -> Vec<u8> {
    let mut b = vec![0u8; SIGINFO_SIZE];
    b[0..4].copy_from_slice(&s.signo.to_le_bytes());
    b[4..8].copy_from_slice(&s.errno.to_le_bytes());
    b[8..12].copy_from_slice(&s.code.to_le_bytes());
    b[SI_ADDR..SI_ADDR + 8].copy_from_slice(&s.addr.to_le_bytes());
    b
}

/// One entry of NT_FILE: a file mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMapping {
    pub start: u64,
    pub end: u64,
    /// Offset into the file, in bytes.
    pub offset: u64,
    pub path: String,
}

/// At most this many NT_FILE entries are read: far beyond any real process, and a bound on
/// what a corrupt count can make scry allocate.
const MAX_FILE_ENTRIES: u64 = 1 << 20;

/// NT_FILE: `count, page_size, count * {start, end, page_offset}`, then `count` paths, each
/// NUL-terminated. Returns the entries that are whole and whether any were cut off.
pub fn decode_files(b: &[u8]) -> (Vec<FileMapping>, bool) {
    let (Some(count), Some(page)) = (u64_at(b, 0), u64_at(b, 8)) else {
        return (Vec::new(), true);
    };
    let count = count.min(MAX_FILE_ENTRIES) as usize;
    let mut name_at = 16usize.saturating_add(count.saturating_mul(24));
    let mut out = Vec::new();
    for i in 0..count {
        let at = 16 + i * 24;
        // A name is whole only with its NUL.
        let name = b.get(name_at..).and_then(|rest| {
            let len = rest.iter().position(|&c| c == 0)?;
            Some(&rest[..len])
        });
        let (Some(start), Some(end), Some(pgoff), Some(name)) =
            (u64_at(b, at), u64_at(b, at + 8), u64_at(b, at + 16), name)
        else {
            return (out, true);
        };
        name_at += name.len() + 1;
        if end < start {
            continue;
        }
        out.push(FileMapping {
            start,
            end,
            offset: pgoff.saturating_mul(page),
            path: String::from_utf8_lossy(name).into_owned(),
        });
    }
    (out, false)
}

pub fn encode_files(files: &[FileMapping], page: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(16 + files.len() * 64);
    b.extend_from_slice(&(files.len() as u64).to_le_bytes());
    b.extend_from_slice(&page.to_le_bytes());
    for f in files {
        b.extend_from_slice(&f.start.to_le_bytes());
        b.extend_from_slice(&f.end.to_le_bytes());
        b.extend_from_slice(&(f.offset / page).to_le_bytes());
    }
    for f in files {
        b.extend_from_slice(f.path.as_bytes());
        b.push(0);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_regs() -> RawRegs {
        let mut r = regs::zeroed();
        for (i, name) in regs::REGISTER_NAMES.iter().enumerate() {
            regs::set_register(
                &mut r,
                regs::register_index(name).unwrap(),
                0x1000 + i as u64,
            );
        }
        r
    }

    #[test]
    fn prstatus_round_trips_every_register() {
        let p = PrStatus {
            tid: 4321,
            ppid: 1,
            pgrp: 4321,
            sid: 99,
            cursig: 11,
            info: SigInfo {
                signo: 11,
                code: 1,
                errno: 0,
                addr: 0,
            },
            sigpend: 0x400,
            sighold: 0x2,
            regs: sample_regs(),
        };
        let b = encode_prstatus(&p, true);
        assert_eq!(b.len(), PRSTATUS_SIZE);
        let back = decode_prstatus(&b).unwrap();
        assert_eq!(back.tid, 4321);
        assert_eq!(back.cursig, 11);
        assert_eq!(back.info.signo, 11);
        assert_eq!(back.sigpend, 0x400);
        for i in 0..regs::REGISTER_NAMES.len() {
            assert_eq!(
                regs::get_register(&back.regs, i),
                regs::get_register(&p.regs, i)
            );
        }
        // pr_reg starts at 112 with r15; rip is the 17th register.
        assert_eq!(u64_at(&b, 112), Some(p.regs.r15));
        assert_eq!(u64_at(&b, 112 + 16 * 8), Some(p.regs.rip));
        assert_eq!(u64_at(&b, 112 + 21 * 8), Some(p.regs.fs_base));
        assert!(decode_prstatus(&b[..200]).is_none());
    }

    #[test]
    fn prpsinfo_round_trips_and_cuts_long_names() {
        let p = PsInfo {
            state: b'R',
            nice: -5,
            flags: 0x400000,
            uid: 1000,
            gid: 1001,
            pid: 77,
            ppid: 1,
            pgrp: 77,
            sid: 7,
            fname: "a-very-long-program-name".into(),
            psargs: "./prog arg".into(),
        };
        let b = encode_prpsinfo(&p);
        assert_eq!(b.len(), PRPSINFO_SIZE);
        let back = decode_prpsinfo(&b).unwrap();
        assert_eq!(back.fname, "a-very-long-pro");
        assert_eq!(back.psargs, "./prog arg");
        assert_eq!(
            (back.uid, back.gid, back.pid, back.nice),
            (1000, 1001, 77, -5)
        );
        assert_eq!(b[0], 0);
        assert!(decode_prpsinfo(&b[..100]).is_none());
    }

    #[test]
    fn siginfo_round_trips() {
        let s = SigInfo {
            signo: 11,
            errno: 0,
            code: 1,
            addr: 0x1c,
        };
        let b = encode_siginfo(&s);
        assert_eq!(b.len(), SIGINFO_SIZE);
        assert_eq!(decode_siginfo(&b), Some(s));
        assert_eq!(decode_siginfo(&b[..4]), None);
    }

    #[test]
    fn file_notes_round_trip_and_survive_damage() {
        let files = vec![
            FileMapping {
                start: 0x400000,
                end: 0x401000,
                offset: 0,
                path: "/bin/prog".into(),
            },
            FileMapping {
                start: 0x7f00_0000_0000,
                end: 0x7f00_0002_0000,
                offset: 0x3000,
                path: "/lib/libc.so.6".into(),
            },
        ];
        let b = encode_files(&files, 4096);
        assert_eq!(decode_files(&b), (files.clone(), false));
        // The last name cut off: the first entry stands, the loss is reported.
        let (got, cut) = decode_files(&b[..b.len() - 10]);
        assert!(cut);
        assert_eq!(got, files[..1]);
        // A count of 2^64-1 allocates nothing large and panics nowhere.
        let mut evil = b.clone();
        evil[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        let (_, cut) = decode_files(&evil);
        assert!(cut);
        assert_eq!(decode_files(&[1, 2]), (Vec::new(), true));
    }
}
