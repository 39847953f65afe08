//! The crashed process's memory: the bytes the core holds (PT_LOAD segments) and, where the
//! kernel left file-backed pages out (code and read-only data, by default), the mapped files
//! themselves at the offsets NT_FILE gives. A byte that is neither is a clear error saying
//! why (not mapped, not dumped, the core truncated, the file missing).

use std::fmt;

use super::files::MappedFile;
use super::image::CoreImage;

/// Why bytes of the process's memory are not available.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// The process had nothing mapped there.
    Unmapped,
    /// Mapped, but the core holds no bytes for it and no file provides them.
    NotDumped,
    /// The core is truncated before the bytes it says it holds.
    Truncated { core_len: u64 },
    /// File-backed and left out of the core; the file was not found here.
    FileMissing { path: String },
    /// The file here is shorter than the mapping says.
    FileShort { path: String },
}

/// A read of process memory that failed, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryError {
    pub addr: u64,
    pub len: usize,
    pub gap: Gap,
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.len == 1 { "" } else { "s" };
        write!(f, "cannot read {} byte{s} at {:#x}: ", self.len, self.addr)?;
        match &self.gap {
            Gap::Unmapped => write!(f, "address not mapped"),
            Gap::NotDumped => write!(f, "mapped, but the core file does not hold it"),
            Gap::Truncated { core_len } => write!(
                f,
                "the core file is truncated (it ends at {core_len} bytes, before this memory)"
            ),
            Gap::FileMissing { path } => write!(
                f,
                "not in the core (the kernel leaves file pages out) and {path} was not found here (--sysroot / --solib-dir)"
            ),
            Gap::FileShort { path } => {
                write!(f, "the copy of {path} here is shorter than its mapping")
            }
        }
    }
}

/// The memory of the process a core was made of.
pub struct CoreMemory<'a> {
    pub core: &'a CoreImage,
    pub files: &'a [MappedFile],
}

impl CoreMemory<'_> {
    fn file(&self, path: &str) -> Option<&MappedFile> {
        self.files.iter().find(|f| f.core_path == path)
    }

    /// Reads from `addr` into as much of `buf` as one source (a segment's bytes, or one
    /// file) gives; the count, or why none.
    fn read_piece(&self, addr: u64, buf: &mut [u8]) -> Result<usize, Gap> {
        let seg = self.core.segment_at(addr);
        if let Some(s) = seg {
            let within = addr - s.vaddr;
            if within < s.present {
                let n = (s.present - within).min(buf.len() as u64) as usize;
                let got = self.core.read_file(s.offset + within, &mut buf[..n]);
                return match got {
                    0 => Err(Gap::Truncated {
                        core_len: self.core.len(),
                    }),
                    n => Ok(n),
                };
            }
        }
        let mapping = self.core.notes.file_at(addr);
        if let Some(m) = mapping {
            let Some(file) = self.file(&m.path).filter(|f| f.local.is_some()) else {
                return Err(Gap::FileMissing {
                    path: m.path.clone(),
                });
            };
            // Up to the end of the mapping, and of the segment (its dumped bytes may
            // resume after the gap).
            let mut end = m.end;
            if let Some(s) = seg {
                end = end.min(s.end());
            }
            let n = (end - addr).min(buf.len() as u64) as usize;
            let got = file.read_at(m.offset.saturating_add(addr - m.start), &mut buf[..n]);
            return match got {
                0 => Err(Gap::FileShort {
                    path: m.path.clone(),
                }),
                n => Ok(n),
            };
        }
        match seg {
            Some(s) if s.present < s.filesz && addr - s.vaddr < s.filesz => Err(Gap::Truncated {
                core_len: self.core.len(),
            }),
            Some(_) => Err(Gap::NotDumped),
            None => Err(Gap::Unmapped),
        }
    }

    /// Fills `buf` from `addr`, or fails as a whole.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemoryError> {
        let mut done = 0;
        let len = buf.len();
        while done < len {
            let fail = |gap| MemoryError { addr, len, gap };
            let at = addr.checked_add(done as u64).ok_or(fail(Gap::Unmapped))?;
            done += self.read_piece(at, &mut buf[done..]).map_err(fail)?;
        }
        Ok(())
    }

    /// Reads as much as is readable from `addr`, up to `buf.len()`; the count.
    pub fn read_partial(&self, addr: u64, buf: &mut [u8]) -> usize {
        let mut done = 0;
        while done < buf.len() {
            let Some(at) = addr.checked_add(done as u64) else {
                break;
            };
            match self.read_piece(at, &mut buf[done..]) {
                Ok(n) => done += n,
                Err(_) => break,
            }
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corefile::elf::{self, core_header, encode_phdr, push_note, ProgramHeader};
    use crate::corefile::files::{self, FileSearch};
    use crate::corefile::layout;

    /// A core with two segments: 0x1000..0x1010 holding its first 8 bytes, backed by a
    /// file (bytes 8.. come from it); 0x2000..0x2008 anonymous, not dumped.
    fn core_with_file(file: &std::path::Path) -> CoreImage {
        let mut notes = Vec::new();
        push_note(
            &mut notes,
            "CORE",
            layout::NT_FILE,
            &layout::encode_files(
                &[layout::FileMapping {
                    start: 0x1000,
                    end: 0x1010,
                    offset: 0,
                    path: file.display().to_string(),
                }],
                4096,
            ),
        );
        let notes_at = (elf::EHDR_SIZE + 3 * elf::PHDR_SIZE) as u64;
        let data_at = notes_at + notes.len() as u64;
        let mut b = core_header(3).to_vec();
        let load = |vaddr, filesz, memsz| {
            encode_phdr(&ProgramHeader {
                p_type: elf::PT_LOAD,
                flags: elf::PF_R,
                offset: data_at,
                vaddr,
                filesz,
                memsz,
                align: 1,
            })
        };
        b.extend_from_slice(&encode_phdr(&ProgramHeader {
            p_type: elf::PT_NOTE,
            offset: notes_at,
            filesz: notes.len() as u64,
            ..Default::default()
        }));
        b.extend_from_slice(&load(0x1000, 8, 16));
        b.extend_from_slice(&load(0x2000, 0, 8));
        b.extend_from_slice(&notes);
        b.extend_from_slice(b"DUMPED!!");
        CoreImage::parse(Box::new(b)).unwrap()
    }

    #[test]
    fn dumped_bytes_then_the_file_then_clear_gaps() {
        let path = std::env::temp_dir().join(format!("scry-coremem-{}", std::process::id()));
        std::fs::write(&path, b"file0123FILE4567").unwrap();
        let core = core_with_file(&path);
        let (found, _) = files::resolve(&core, None, &FileSearch::default());
        let mem = CoreMemory {
            core: &core,
            files: &found,
        };
        let mut buf = [0u8; 16];
        mem.read(0x1000, &mut buf).unwrap();
        assert_eq!(&buf, b"DUMPED!!FILE4567");
        let mut small = [0u8; 4];
        let err = mem.read(0x2000, &mut small).unwrap_err();
        assert_eq!(err.gap, Gap::NotDumped);
        let err = mem.read(0x3000, &mut small).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot read 4 bytes at 0x3000: address not mapped"
        );
        // A read running off the end of what there is fails whole; partial stops there.
        let mut over = [0u8; 20];
        assert!(mem.read(0x1000, &mut over).is_err());
        assert_eq!(mem.read_partial(0x1000, &mut over), 16);

        // Without the file, its part of memory says which file to bring.
        std::fs::remove_file(&path).unwrap();
        let (found, _) = files::resolve(&core, None, &FileSearch::default());
        let mem = CoreMemory {
            core: &core,
            files: &found,
        };
        let err = mem.read(0x1008, &mut small).unwrap_err();
        assert!(matches!(err.gap, Gap::FileMissing { .. }));
        assert!(err.to_string().contains("--sysroot"));
        mem.read(0x1000, &mut small).unwrap();
        assert_eq!(&small, b"DUMP");
    }
}
