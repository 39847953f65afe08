//! A core file opened: its PT_LOAD segments (the memory it holds) and its notes. The bytes
//! come from a [`ByteSource`] (the file, or a buffer in tests), read where needed: a core of
//! several gigabytes costs its headers and notes to open.

use std::fs::File;
use std::os::unix::fs::FileExt;

use super::elf::{self, ProgramHeader};
use super::notes::{self, CoreNotes};

/// Positioned reads from the core's bytes.
pub trait ByteSource {
    /// The number of bytes there are.
    fn size(&self) -> u64;
    /// Fills as much of `buf` as there is from `offset`; returns the count (short at the end).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> usize;
}

/// A file read with `pread`.
pub struct FileSource {
    file: File,
    len: u64,
}

impl FileSource {
    pub fn new(file: File) -> std::io::Result<FileSource> {
        let len = file.metadata()?.len();
        Ok(FileSource { file, len })
    }
}

impl ByteSource for FileSource {
    fn size(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        read_fully(&self.file, offset, buf)
    }
}

/// `pread` until `buf` is full, the file ends or an error (which counts as the end).
pub fn read_fully(file: &File, offset: u64, buf: &mut [u8]) -> usize {
    let mut done = 0;
    while done < buf.len() {
        let Some(at) = offset.checked_add(done as u64) else {
            break;
        };
        match file.read_at(&mut buf[done..], at) {
            Ok(0) | Err(_) => break,
            Ok(n) => done += n,
        }
    }
    done
}

impl ByteSource for Vec<u8> {
    fn size(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let Ok(start) = usize::try_from(offset) else {
            return 0;
        };
        let Some(src) = self.get(start..) else {
            return 0;
        };
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        n
    }
}

/// One PT_LOAD: a mapping of the process and what the core holds of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    pub offset: u64,
    /// Bytes the core says it holds from `vaddr` on (less than `memsz` where the kernel left
    /// file-backed pages out).
    pub filesz: u64,
    /// Of those, the bytes really in the file (fewer when the core is truncated).
    pub present: u64,
    pub flags: u32,
}

impl Segment {
    pub fn end(&self) -> u64 {
        self.vaddr.saturating_add(self.memsz)
    }

    pub fn contains(&self, addr: u64) -> bool {
        self.vaddr <= addr && addr < self.end()
    }
}

/// At most this many program headers are read.
const MAX_PHDRS: u64 = 1 << 22;
/// Note areas larger than this are not read (a real one with thousands of threads is a few
/// tens of megabytes).
const MAX_NOTES: u64 = 512 << 20;

pub struct CoreImage {
    source: Box<dyn ByteSource>,
    /// PT_LOAD segments in address order.
    pub segments: Vec<Segment>,
    pub notes: CoreNotes,
    /// What is missing or damaged, one line each (the notes' problems included).
    pub problems: Vec<String>,
}

impl CoreImage {
    /// Reads the headers and notes. An error only when this is no x86-64 core file at all;
    /// anything less (a truncated file, damaged notes) is served as far as it goes, with
    /// `problems` saying what is lost.
    pub fn parse(source: Box<dyn ByteSource>) -> Result<CoreImage, String> {
        let mut head = [0u8; elf::EHDR_SIZE];
        let got = source.read_at(0, &mut head);
        let header = elf::parse_header(&head[..got])?;
        if header.e_type != elf::ET_CORE {
            return Err(format!(
                "not a core file (ELF type {}{})",
                header.e_type,
                if header.e_type == 2 || header.e_type == 3 {
                    ": a program or library; give the core first, the program second"
                } else {
                    ""
                }
            ));
        }
        if header.machine != elf::EM_X86_64 {
            return Err(format!(
                "a core of machine {}, not x86-64: scry debugs x86-64 only",
                header.machine
            ));
        }
        let mut problems = Vec::new();
        let phnum = phdr_count(source.as_ref(), &header, &mut problems);
        if usize::from(header.phentsize) != elf::PHDR_SIZE && phnum > 0 {
            return Err(format!(
                "corrupt core: program headers of {} bytes (expected {})",
                header.phentsize,
                elf::PHDR_SIZE
            ));
        }
        let table_len = phnum * elf::PHDR_SIZE as u64;
        // Never more than the file holds: a corrupt count allocates nothing large.
        let available = source.size().saturating_sub(header.phoff);
        let mut table = vec![0u8; table_len.min(available) as usize];
        let got = source.read_at(header.phoff, &mut table) as u64;
        if got < table_len {
            problems.push(format!(
                "the core is truncated: {} of {phnum} program headers are in it (memory beyond them is lost)",
                got / elf::PHDR_SIZE as u64
            ));
        }
        let phdrs: Vec<ProgramHeader> = table[..got as usize]
            .chunks_exact(elf::PHDR_SIZE)
            .filter_map(elf::parse_phdr)
            .collect();
        let len = source.size();
        let mut segments: Vec<Segment> = phdrs
            .iter()
            .filter(|p| p.p_type == elf::PT_LOAD && p.memsz > 0)
            .map(|p| {
                let filesz = p.filesz.min(p.memsz);
                let present = len.saturating_sub(p.offset).min(filesz);
                Segment {
                    vaddr: p.vaddr,
                    memsz: p.memsz,
                    offset: p.offset,
                    filesz,
                    present,
                    flags: p.flags,
                }
            })
            .collect();
        segments.sort_by_key(|s| s.vaddr);
        let cut: Vec<&Segment> = segments.iter().filter(|s| s.present < s.filesz).collect();
        if let Some(first) = cut.first() {
            problems.push(format!(
                "the core is truncated at {len} bytes: {} of its {} memory segments are missing in part or whole, from {:#x} on",
                cut.len(),
                segments.len(),
                first.vaddr
            ));
        }
        let mut area = Vec::new();
        for p in phdrs.iter().filter(|p| p.p_type == elf::PT_NOTE) {
            // Never more than the file holds past the offset: a corrupt size allocates nothing.
            let want = p
                .filesz
                .min(MAX_NOTES.saturating_sub(area.len() as u64))
                .min(len.saturating_sub(p.offset));
            let start = area.len();
            area.resize(start + want as usize, 0);
            let got = source.read_at(p.offset, &mut area[start..]);
            area.truncate(start + got);
            if (got as u64) < p.filesz {
                problems.push(format!(
                    "the core's notes are cut short ({got} of {} bytes)",
                    p.filesz
                ));
            }
        }
        let mut it = elf::notes(&area);
        let notes = notes::decode(&mut it);
        if it.broken {
            problems.push("the core's notes end in a damaged note".into());
        }
        problems.extend(notes.problems.iter().cloned());
        Ok(CoreImage {
            source,
            segments,
            notes,
            problems,
        })
    }

    pub fn len(&self) -> u64 {
        self.source.size()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The segment holding `addr`.
    pub fn segment_at(&self, addr: u64) -> Option<&Segment> {
        let i = self.segments.partition_point(|s| s.vaddr <= addr);
        // (A corrupt core's segments may overlap: a few below are looked at too.)
        self.segments[..i]
            .iter()
            .rev()
            .take(super::notes::OVERLAP_LOOKBACK)
            .find(|s| s.contains(addr))
    }

    /// Reads bytes the core holds from its file at `offset`; returns the count.
    pub fn read_file(&self, offset: u64, buf: &mut [u8]) -> usize {
        self.source.read_at(offset, buf)
    }
}

/// The number of program headers, following the PN_XNUM escape.
fn phdr_count(source: &dyn ByteSource, h: &elf::Header, problems: &mut Vec<String>) -> u64 {
    let n = if h.phnum == elf::PN_XNUM {
        let mut sh0 = [0u8; elf::SHDR_SIZE];
        let got = source.read_at(h.shoff, &mut sh0);
        match elf::u32_at(&sh0[..got], 44) {
            Some(n) => u64::from(n),
            None => {
                problems.push("the core's extended segment count is missing".into());
                0
            }
        }
    } else {
        u64::from(h.phnum)
    };
    if n > MAX_PHDRS {
        problems.push(format!(
            "the core claims {n} program headers; only the first {MAX_PHDRS} are read"
        ));
    }
    n.min(MAX_PHDRS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corefile::elf::{core_header, encode_phdr, push_note};
    use crate::corefile::layout;

    /// A core of one segment at 0x1000 holding 8 bytes, 8 more bytes of memory not dumped,
    /// and one thread.
    fn tiny_core() -> Vec<u8> {
        let mut notes = Vec::new();
        let mut r = crate::os::regs::zeroed();
        r.rip = 0x1004;
        let st = layout::PrStatus {
            tid: 9,
            ppid: 1,
            pgrp: 9,
            sid: 9,
            cursig: 11,
            info: Default::default(),
            sigpend: 0,
            sighold: 0,
            regs: r,
        };
        push_note(
            &mut notes,
            "CORE",
            layout::NT_PRSTATUS,
            &layout::encode_prstatus(&st, false),
        );
        let notes_at = (elf::EHDR_SIZE + 2 * elf::PHDR_SIZE) as u64;
        let data_at = notes_at + notes.len() as u64;
        let mut b = core_header(2).to_vec();
        b.extend_from_slice(&encode_phdr(&ProgramHeader {
            p_type: elf::PT_NOTE,
            offset: notes_at,
            filesz: notes.len() as u64,
            ..Default::default()
        }));
        b.extend_from_slice(&encode_phdr(&ProgramHeader {
            p_type: elf::PT_LOAD,
            flags: elf::PF_R,
            offset: data_at,
            vaddr: 0x1000,
            filesz: 8,
            memsz: 16,
            align: 1,
        }));
        b.extend_from_slice(&notes);
        b.extend_from_slice(b"ABCDEFGH");
        b
    }

    #[test]
    fn segments_and_threads_of_a_whole_core() {
        let core = CoreImage::parse(Box::new(tiny_core())).unwrap();
        assert!(core.problems.is_empty(), "{:?}", core.problems);
        assert_eq!(core.segments.len(), 1);
        let s = core.segment_at(0x100f).unwrap();
        assert_eq!((s.filesz, s.present, s.memsz), (8, 8, 16));
        assert!(core.segment_at(0x1010).is_none());
        let mut buf = [0u8; 4];
        assert_eq!(core.read_file(s.offset + 2, &mut buf), 4);
        assert_eq!(&buf, b"CDEF");
        assert_eq!(core.notes.threads[0].status.regs.rip, 0x1004);
    }

    #[test]
    fn a_truncated_core_serves_what_it_has() {
        let whole = tiny_core();
        let cut = whole[..whole.len() - 3].to_vec();
        let core = CoreImage::parse(Box::new(cut)).unwrap();
        assert_eq!(core.segments[0].present, 5);
        assert!(
            core.problems[0].contains("truncated"),
            "{:?}",
            core.problems
        );
        // Cut inside the notes: the segment table is there, the thread is not.
        let core = CoreImage::parse(Box::new(whole[..200].to_vec())).unwrap();
        assert!(core.notes.threads.is_empty());
        assert!(core
            .problems
            .iter()
            .any(|p| p.contains("notes are cut short")));
        assert!(core
            .problems
            .iter()
            .any(|p| p.contains("no thread registers")));
    }

    #[test]
    fn what_is_no_core_says_so() {
        let err = |b: Vec<u8>| CoreImage::parse(Box::new(b)).err().unwrap();
        assert!(err(b"hello".to_vec()).contains("shorter than an ELF header"));
        let mut exe = tiny_core();
        exe[16] = 3;
        assert!(err(exe).contains("give the core first"));
        let mut arm = tiny_core();
        arm[18] = 183;
        assert!(err(arm).contains("not x86-64"));
        // An absurd program header count is bounded, not allocated.
        let mut huge = tiny_core();
        huge[56..58].copy_from_slice(&elf::PN_XNUM.to_le_bytes());
        huge[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        let core = CoreImage::parse(Box::new(huge)).unwrap();
        assert!(core.segments.is_empty());
    }
}
