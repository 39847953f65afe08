//! A core's notes, sorted into threads and process-wide facts. The kernel writes the thread
//! that dumped first: its NT_PRSTATUS, then the process notes (NT_PRPSINFO, NT_SIGINFO,
//! NT_AUXV, NT_FILE), then its register sets (NT_FPREGSET, NT_X86_XSTATE); every other
//! thread follows as NT_PRSTATUS plus register sets. gdb's `gcore` writes NT_PRPSINFO first
//! and an NT_SIGINFO after each thread's registers. Either way, a note that belongs to a
//! thread follows that thread's NT_PRSTATUS, which is the rule used here.

use super::elf::Note;
use super::layout::{self, FileMapping, PrStatus, PsInfo, SigInfo};

/// One thread of the core.
#[derive(Debug, Clone)]
pub struct CoreThread {
    pub status: PrStatus,
    /// NT_SIGINFO: the whole siginfo of the signal it was handling, fault address included.
    pub siginfo: Option<SigInfo>,
    /// NT_FPREGSET: the 512-byte FXSAVE area.
    pub fpregs: Option<Vec<u8>>,
    /// NT_X86_XSTATE: the XSAVE area (x87, SSE, AVX...).
    pub xstate: Option<Vec<u8>>,
}

impl CoreThread {
    /// The signal it was handling: NT_SIGINFO when present (it has the fault address), else
    /// what NT_PRSTATUS says.
    pub fn signal(&self) -> Option<SigInfo> {
        if let Some(s) = self.siginfo.filter(|s| s.signo > 0) {
            return Some(s);
        }
        let sig = i32::from(self.status.cursig);
        (sig > 0).then_some(SigInfo {
            signo: sig,
            code: if self.status.info.signo == sig {
                self.status.info.code
            } else {
                0
            },
            ..Default::default()
        })
    }
}

/// Everything the notes say.
#[derive(Debug, Clone, Default)]
pub struct CoreNotes {
    /// The threads, the one that dumped (or the one gdb's gcore had selected) first.
    pub threads: Vec<CoreThread>,
    pub process: Option<PsInfo>,
    pub files: Vec<FileMapping>,
    /// NT_AUXV: the raw (key, value) pairs.
    pub auxv: Vec<(u64, u64)>,
    /// What was wrong with the notes, one line each.
    pub problems: Vec<String>,
}

/// At most this many threads are read (a bound on what a corrupt core can make scry hold).
const MAX_THREADS: usize = 1 << 16;

fn is_core(n: &Note<'_>) -> bool {
    n.name == b"CORE"
}

pub fn decode<'a>(notes: impl Iterator<Item = Note<'a>>) -> CoreNotes {
    let mut out = CoreNotes::default();
    // NT_SIGINFO written before any thread (none of the known writers do): the first thread's.
    let mut early_siginfo = None;
    for n in notes {
        let current = out.threads.last_mut();
        match n.n_type {
            layout::NT_PRSTATUS if is_core(&n) => match layout::decode_prstatus(n.desc) {
                Some(status) if out.threads.len() < MAX_THREADS => out.threads.push(CoreThread {
                    status,
                    siginfo: None,
                    fpregs: None,
                    xstate: None,
                }),
                Some(_) => {}
                None => out.problems.push(format!(
                    "an NT_PRSTATUS note of {} bytes (expected {}): that thread's registers are lost",
                    n.desc.len(),
                    layout::PRSTATUS_SIZE
                )),
            },
            layout::NT_PRPSINFO if is_core(&n) => {
                out.process = layout::decode_prpsinfo(n.desc);
                if out.process.is_none() {
                    out.problems
                        .push("the NT_PRPSINFO note is too short: no process name".into());
                }
            }
            layout::NT_SIGINFO if is_core(&n) => {
                let info = layout::decode_siginfo(n.desc);
                match current {
                    Some(t) if t.siginfo.is_none() => t.siginfo = info,
                    Some(_) => {}
                    None => early_siginfo = info,
                }
            }
            layout::NT_FILE if is_core(&n) => {
                let (files, cut) = layout::decode_files(n.desc);
                if cut {
                    out.problems.push(format!(
                        "the NT_FILE note is damaged: {} file mappings read",
                        files.len()
                    ));
                }
                out.files = files;
            }
            layout::NT_AUXV if is_core(&n) => {
                out.auxv = n
                    .desc
                    .chunks_exact(16)
                    .map(|p| {
                        let k = u64::from_le_bytes(p[..8].try_into().unwrap_or_default());
                        let v = u64::from_le_bytes(p[8..].try_into().unwrap_or_default());
                        (k, v)
                    })
                    .take_while(|(k, _)| *k != 0)
                    .collect();
            }
            layout::NT_FPREGSET if is_core(&n) => {
                if let Some(t) = current {
                    if n.desc.len() >= layout::FPREGSET_SIZE {
                        t.fpregs = Some(n.desc[..layout::FPREGSET_SIZE].to_vec());
                    }
                }
            }
            layout::NT_X86_XSTATE if n.name == b"LINUX" => {
                if let Some(t) = current {
                    t.xstate = Some(n.desc.to_vec());
                }
            }
            _ => {}
        }
    }
    // In address order (the kernel's already), so lookups can search them.
    out.files.sort_by_key(|f| f.start);
    if let (Some(info), Some(first)) = (early_siginfo, out.threads.first_mut()) {
        first.siginfo.get_or_insert(info);
    }
    if out.threads.is_empty() {
        out.problems.push(
            "no thread registers (NT_PRSTATUS) in the core: registers, unwinding and locals are unavailable"
                .into(),
        );
    }
    out
}

/// How far a lookup walks back past entries that start below an address: overlapping
/// entries exist only in corrupt cores, and a bounded walk keeps every lookup cheap.
pub const OVERLAP_LOOKBACK: usize = 16;

impl CoreNotes {
    pub fn auxv_value(&self, key: u64) -> Option<u64> {
        self.auxv.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The file mapping holding `addr`.
    pub fn file_at(&self, addr: u64) -> Option<&FileMapping> {
        let i = self.files.partition_point(|f| f.start <= addr);
        self.files[..i]
            .iter()
            .rev()
            .take(OVERLAP_LOOKBACK)
            .find(|f| addr < f.end)
    }
}

#[cfg(test)]
mod tests {
    use super::super::elf::{notes, push_note};
    use super::*;
    use crate::os::regs;

    fn status(tid: i32, cursig: u16) -> Vec<u8> {
        let mut r = regs::zeroed();
        r.rip = 0x401000 + tid as u64;
        layout::encode_prstatus(
            &PrStatus {
                tid,
                ppid: 1,
                pgrp: tid,
                sid: tid,
                cursig,
                info: SigInfo {
                    signo: i32::from(cursig),
                    code: 1,
                    ..Default::default()
                },
                sigpend: 0,
                sighold: 0,
                regs: r,
            },
            true,
        )
    }

    #[test]
    fn kernel_order_gives_the_first_thread_the_siginfo() {
        let mut area = Vec::new();
        push_note(&mut area, "CORE", layout::NT_PRSTATUS, &status(100, 11));
        let ps = PsInfo {
            fname: "prog".into(),
            pid: 100,
            ..Default::default()
        };
        push_note(
            &mut area,
            "CORE",
            layout::NT_PRPSINFO,
            &layout::encode_prpsinfo(&ps),
        );
        let si = SigInfo {
            signo: 11,
            code: 1,
            errno: 0,
            addr: 0x1c,
        };
        push_note(
            &mut area,
            "CORE",
            layout::NT_SIGINFO,
            &layout::encode_siginfo(&si),
        );
        let mut auxv = Vec::new();
        for (k, v) in [(9u64, 0x401020u64), (0, 0)] {
            auxv.extend_from_slice(&k.to_le_bytes());
            auxv.extend_from_slice(&v.to_le_bytes());
        }
        push_note(&mut area, "CORE", layout::NT_AUXV, &auxv);
        push_note(&mut area, "CORE", layout::NT_FPREGSET, &[7u8; 512]);
        push_note(&mut area, "LINUX", layout::NT_X86_XSTATE, &[8u8; 1024]);
        push_note(&mut area, "CORE", layout::NT_PRSTATUS, &status(101, 0));
        push_note(&mut area, "CORE", layout::NT_FPREGSET, &[9u8; 512]);

        let n = decode(notes(&area));
        assert!(n.problems.is_empty(), "{:?}", n.problems);
        assert_eq!(n.threads.len(), 2);
        assert_eq!(n.threads[0].status.tid, 100);
        assert_eq!(n.threads[0].signal(), Some(si));
        assert_eq!(n.threads[0].fpregs.as_deref(), Some(&[7u8; 512][..]));
        assert_eq!(n.threads[0].xstate.as_ref().map(|x| x.len()), Some(1024));
        assert_eq!(n.threads[1].status.tid, 101);
        assert_eq!(n.threads[1].signal(), None);
        assert_eq!(n.threads[1].fpregs.as_deref(), Some(&[9u8; 512][..]));
        assert_eq!(n.process.as_ref().map(|p| p.fname.as_str()), Some("prog"));
        assert_eq!(n.auxv_value(9), Some(0x401020));
    }

    #[test]
    fn without_siginfo_the_prstatus_signal_stands() {
        let mut area = Vec::new();
        push_note(&mut area, "CORE", layout::NT_PRSTATUS, &status(5, 6));
        let n = decode(notes(&area));
        let sig = n.threads[0].signal().unwrap();
        assert_eq!((sig.signo, sig.code, sig.addr), (6, 1, 0));
    }

    #[test]
    fn damage_is_reported_not_fatal() {
        let mut area = Vec::new();
        push_note(&mut area, "CORE", layout::NT_PRSTATUS, &status(5, 6)[..100]);
        push_note(&mut area, "CORE", layout::NT_PRPSINFO, &[0u8; 10]);
        let n = decode(notes(&area));
        assert!(n.threads.is_empty());
        assert_eq!(n.problems.len(), 3, "{:?}", n.problems);
        assert!(n.problems[0].contains("NT_PRSTATUS note of 100 bytes"));
        assert!(n.problems[2].contains("no thread registers"));
    }
}
