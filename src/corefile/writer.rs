//! Writing a core file of a stopped process, laid out as the kernel lays out its own (so gdb
//! and scry read it alike): the ELF header, one PT_NOTE and one PT_LOAD per mapping, the
//! notes (the selected thread first with the process-wide notes after its NT_PRSTATUS, then
//! every other thread), then each readable mapping's bytes at a page-aligned offset.
//!
//! The memory is streamed: each mapping is read in chunks from the caller's reader and
//! written at once, and the program headers are written last, when it is known how much of
//! each mapping could be read.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::elf::{self, ProgramHeader};
use super::layout::{self, FileMapping, PrStatus, PsInfo, SigInfo};
use crate::os::regs::RawRegs;
use crate::os::Tid;

const PAGE: u64 = 4096;
/// Bytes read from the process at a time.
const CHUNK: usize = 1 << 20;

/// One thread to write.
#[derive(Debug, Clone)]
pub struct ThreadSnapshot {
    pub tid: Tid,
    pub regs: RawRegs,
    /// The 512-byte FXSAVE area, when known.
    pub fpregs: Option<Vec<u8>>,
    /// The XSAVE area as ptrace gives it (the kernel's NT_X86_XSTATE layout), when known.
    pub xstate: Option<Vec<u8>>,
}

/// One mapping of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappingPlan {
    pub start: u64,
    pub end: u64,
    /// PF_R / PF_W / PF_X.
    pub flags: u32,
    /// Whether to read its bytes (readable mappings); others are listed without contents.
    pub dump: bool,
}

/// Everything a core holds besides memory.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The selected thread first: the one the signal, if any, belongs to.
    pub threads: Vec<ThreadSnapshot>,
    pub process: PsInfo,
    /// The signal the first thread stopped with (NT_SIGINFO and its `pr_cursig`).
    pub signal: Option<SigInfo>,
    /// The raw auxiliary vector.
    pub auxv: Vec<u8>,
    pub files: Vec<FileMapping>,
    pub mappings: Vec<MappingPlan>,
}

/// The notes, in the kernel's order.
pub fn note_bytes(s: &Snapshot) -> Vec<u8> {
    let mut out = Vec::new();
    // Like the kernel, every thread's pr_cursig and pr_info.si_signo name the process's
    // signal (gdb reports the last thread's as the one the program terminated with).
    let signo = s.signal.map_or(0, |g| g.signo);
    for (i, t) in s.threads.iter().enumerate() {
        let status = PrStatus {
            tid: t.tid,
            ppid: s.process.ppid,
            pgrp: s.process.pgrp,
            sid: s.process.sid,
            cursig: signo as u16,
            info: SigInfo {
                signo,
                ..Default::default()
            },
            sigpend: 0,
            sighold: 0,
            regs: t.regs,
        };
        let prstatus = layout::encode_prstatus(&status, t.fpregs.is_some());
        elf::push_note(&mut out, "CORE", layout::NT_PRSTATUS, &prstatus);
        if i == 0 {
            let psinfo = layout::encode_prpsinfo(&s.process);
            elf::push_note(&mut out, "CORE", layout::NT_PRPSINFO, &psinfo);
            if let Some(sig) = &s.signal {
                let info = layout::encode_siginfo(sig);
                elf::push_note(&mut out, "CORE", layout::NT_SIGINFO, &info);
            }
            if !s.auxv.is_empty() {
                elf::push_note(&mut out, "CORE", layout::NT_AUXV, &s.auxv);
            }
            if !s.files.is_empty() {
                let files = layout::encode_files(&s.files, PAGE);
                elf::push_note(&mut out, "CORE", layout::NT_FILE, &files);
            }
        }
        if let Some(fp) = &t.fpregs {
            elf::push_note(&mut out, "CORE", layout::NT_FPREGSET, fp);
        }
        if let Some(x) = &t.xstate {
            elf::push_note(&mut out, "LINUX", layout::NT_X86_XSTATE, x);
        }
    }
    out
}

fn round_up(n: u64) -> u64 {
    n.div_ceil(PAGE) * PAGE
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub size: u64,
    /// Bytes of memory in the file.
    pub memory: u64,
    /// Readable mappings that could not be read in full (their rest is left out).
    pub short: usize,
}

/// Writes the core to `out`. `read(addr, buf)` reads process memory and returns how many
/// bytes it could (a short count ends that mapping's dump); `cancelled()` is asked between
/// chunks and ends the write with `ErrorKind::Interrupted`.
pub fn write(
    out: &File,
    s: &Snapshot,
    read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    cancelled: &dyn Fn() -> bool,
) -> io::Result<Written> {
    let notes = note_bytes(s);
    let phnum = 1 + s.mappings.len();
    if phnum >= usize::from(elf::PN_XNUM) {
        return Err(io::Error::other(format!(
            "{} mappings: more than an ELF core without extended numbering holds",
            s.mappings.len()
        )));
    }
    let notes_at = (elf::EHDR_SIZE + phnum * elf::PHDR_SIZE) as u64;
    out.write_all_at(&elf::core_header(phnum), 0)?;
    out.write_all_at(&notes, notes_at)?;
    let mut phdrs = vec![ProgramHeader {
        p_type: elf::PT_NOTE,
        offset: notes_at,
        filesz: notes.len() as u64,
        ..Default::default()
    }];
    let mut at = round_up(notes_at + notes.len() as u64);
    let mut buf = vec![0u8; CHUNK];
    let mut written = Written {
        size: at,
        memory: 0,
        short: 0,
    };
    for m in &s.mappings {
        let len = m.end.saturating_sub(m.start);
        let mut done = 0u64;
        while m.dump && done < len {
            if cancelled() {
                return Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "interrupted by a signal to scry",
                ));
            }
            let want = (len - done).min(CHUNK as u64) as usize;
            let got = read(m.start + done, &mut buf[..want]);
            // Zero pages (untouched heap and stack) stay holes, as in the kernel's cores.
            if buf[..got].iter().any(|&b| b != 0) {
                out.write_all_at(&buf[..got], at + done)?;
            }
            done += got as u64;
            if got < want {
                written.short += 1;
                break;
            }
        }
        phdrs.push(ProgramHeader {
            p_type: elf::PT_LOAD,
            flags: m.flags,
            offset: at,
            vaddr: m.start,
            filesz: done,
            memsz: len,
            align: PAGE,
        });
        written.memory += done;
        written.size = at + done;
        at = round_up(at + done);
    }
    let table: Vec<u8> = phdrs.iter().flat_map(elf::encode_phdr).collect();
    out.write_all_at(&table, elf::EHDR_SIZE as u64)?;
    out.set_len(written.size)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corefile::files::FileSearch;
    use crate::corefile::image::{CoreImage, FileSource};
    use crate::corefile::process::CoreProcess;

    #[test]
    fn what_is_written_reads_back() {
        let mut regs = crate::os::regs::zeroed();
        regs.rip = 0x1008;
        regs.rsp = 0x2ff0;
        regs.fs_base = 0x7000;
        let mut other = regs;
        other.rip = 0x1010;
        let s = Snapshot {
            threads: vec![
                ThreadSnapshot {
                    tid: 50,
                    regs,
                    fpregs: Some(vec![3u8; 512]),
                    xstate: None,
                },
                ThreadSnapshot {
                    tid: 51,
                    regs: other,
                    fpregs: None,
                    xstate: Some(vec![4u8; 1024]),
                },
            ],
            process: PsInfo {
                state: b't',
                pid: 50,
                fname: "prog".into(),
                psargs: "./prog x".into(),
                ..Default::default()
            },
            signal: Some(SigInfo {
                signo: 11,
                errno: 0,
                code: 1,
                addr: 0x1c,
            }),
            auxv: [25u64, 0x2f00, 0, 0]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
            files: vec![FileMapping {
                start: 0x1000,
                end: 0x2000,
                offset: 0,
                path: "/nonexistent/prog".into(),
            }],
            mappings: vec![
                MappingPlan {
                    start: 0x1000,
                    end: 0x2000,
                    flags: elf::PF_R | elf::PF_X,
                    dump: true,
                },
                MappingPlan {
                    start: 0x2000,
                    end: 0x3000,
                    flags: elf::PF_R | elf::PF_W,
                    dump: true,
                },
                MappingPlan {
                    start: 0x3000,
                    end: 0x4000,
                    flags: 0,
                    dump: false,
                },
            ],
        };
        let path = std::env::temp_dir().join(format!("scry-writer-{}", std::process::id()));
        let file = File::create(&path).unwrap();
        // Memory: each byte is its address's low byte; 0x2800 on is unreadable.
        let mut read = |addr: u64, buf: &mut [u8]| {
            let n = (0x2800u64.saturating_sub(addr) as usize).min(buf.len());
            for (i, b) in buf[..n].iter_mut().enumerate() {
                *b = (addr as usize + i) as u8;
            }
            n
        };
        let w = write(&file, &s, &mut read, &|| false).unwrap();
        assert_eq!(w.memory, 0x1800);
        assert_eq!(w.short, 1);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), w.size);

        let image = CoreImage::parse(Box::new(
            FileSource::new(File::open(&path).unwrap()).unwrap(),
        ))
        .unwrap();
        assert!(image.problems.is_empty(), "{:?}", image.problems);
        let core = CoreProcess::from_image(&path, image, &FileSearch::default());
        assert_eq!(core.thread_ids(), vec![50, 51]);
        assert_eq!(core.selected(), 50);
        assert_eq!(core.pid(), 50);
        assert_eq!(core.regs(51).unwrap().rip, 0x1010);
        assert_eq!(core.regs(50).unwrap().fs_base, 0x7000);
        let (tid, sig) = core.crash().unwrap();
        assert_eq!((tid, sig.signo, sig.addr), (50, 11, 0x1c));
        assert_eq!(
            core.fp_area(50).map(|(a, x)| (a.len(), x)),
            Some((512, false))
        );
        assert_eq!(
            core.fp_area(51).map(|(a, x)| (a.len(), x)),
            Some((1024, true))
        );
        let mut b = [0u8; 4];
        core.memory().read(0x27fc, &mut b).unwrap();
        assert_eq!(b, [0xfc, 0xfd, 0xfe, 0xff]);
        assert!(core.memory().read(0x2800, &mut b).is_err());
        assert!(core.memory().read(0x3000, &mut b).is_err());
        let maps = core.maps();
        assert_eq!(maps.len(), 3);
        assert_eq!(maps[0].path.as_deref(), Some("/nonexistent/prog"));
        assert!(maps[0].perms.exec && !maps[0].perms.write);
        assert_eq!(maps[1].path.as_deref(), Some("[stack]"));
        assert!(!maps[2].perms.read);
        let _ = std::fs::remove_file(&path);
    }
}
