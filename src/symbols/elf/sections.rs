//! Section headers of an ELF image, read on demand by the readers of its tables (CFI, DWARF).
//! `ElfImage` itself keeps only what every caller needs; these lookups happen once per image.

use std::borrow::Cow;

use object::elf::{self, FileHeader64};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::Endianness;

/// The section headers of a 64-bit ELF file, as `object` reads them.
pub(super) type Sections<'data> =
    object::read::elf::SectionTable<'data, FileHeader64<Endianness>, &'data [u8]>;

/// One section whose bytes lie inside the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SectionInfo {
    pub name: String,
    /// Link-time address (`sh_addr`), 0 for sections that are not loaded.
    pub addr: u64,
    /// Byte range in the file.
    pub offset: usize,
    pub size: usize,
    /// SHF_COMPRESSED: the bytes are a compression header plus a zlib/zstd stream; read
    /// them through `contents`.
    pub compressed: bool,
}

impl SectionInfo {
    /// The bytes as stored in the file.
    pub(crate) fn bytes<'d>(&self, data: &'d [u8]) -> Option<&'d [u8]> {
        data.get(self.offset..self.offset.checked_add(self.size)?)
    }

    /// The section's contents, inflated when compressed; `None` when they cannot be had.
    pub(crate) fn contents<'d>(&self, data: &'d [u8]) -> Option<Cow<'d, [u8]>> {
        let raw = self.bytes(data)?;
        if self.compressed {
            super::compressed::inflate(raw).map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(raw))
        }
    }
}

/// Every section with file contents (SHT_NOBITS and out-of-file ranges are skipped).
/// Malformed headers give an empty or partial list, never an error.
pub(crate) fn read_sections(data: &[u8]) -> Vec<SectionInfo> {
    let Ok(header) = FileHeader64::<Endianness>::parse(data) else {
        return Vec::new();
    };
    let Ok(endian) = header.endian() else {
        return Vec::new();
    };
    let Ok(table) = header.sections(endian, data) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for sh in table.iter() {
        if sh.sh_type(endian) == elf::SHT_NOBITS || sh.sh_type(endian) == elf::SHT_NULL {
            continue;
        }
        let Ok(name) = table.section_name(endian, sh) else {
            continue;
        };
        let (Ok(offset), Ok(size)) = (
            usize::try_from(sh.sh_offset(endian)),
            usize::try_from(sh.sh_size(endian)),
        ) else {
            continue;
        };
        let info = SectionInfo {
            name: String::from_utf8_lossy(name).into_owned(),
            addr: sh.sh_addr(endian),
            offset,
            size,
            compressed: sh.sh_flags(endian).0 & elf::SHF_COMPRESSED.0 != 0,
        };
        if info.bytes(data).is_some() {
            out.push(info);
        }
    }
    out
}

/// The PT_GNU_EH_FRAME program header as (vaddr, file offset, file size): how a stripped
/// image without section headers still points at its `.eh_frame_hdr`.
pub(crate) fn eh_frame_phdr(data: &[u8]) -> Option<(u64, usize, usize)> {
    let header = FileHeader64::<Endianness>::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let phdrs = header.program_headers(endian, data).ok()?;
    let ph = phdrs
        .iter()
        .find(|p| p.p_type(endian) == elf::PT_GNU_EH_FRAME)?;
    let offset = usize::try_from(ph.p_offset(endian)).ok()?;
    let size = usize::try_from(ph.p_filesz(endian)).ok()?;
    data.get(offset..offset.checked_add(size)?)?;
    Some((ph.p_vaddr(endian), offset, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_gives_no_sections() {
        assert!(read_sections(&[]).is_empty());
        assert!(read_sections(&[0x7f, b'E', b'L', b'F']).is_empty());
        assert!(read_sections(&[0xffu8; 256]).is_empty());
        assert_eq!(eh_frame_phdr(&[0u8; 64]), None);
    }

    #[test]
    fn own_executable_has_unwind_sections() {
        let exe = std::fs::read("/proc/self/exe").unwrap();
        let secs = read_sections(&exe);
        let names: Vec<&str> = secs.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&".eh_frame"), "{names:?}");
        assert!(names.contains(&".eh_frame_hdr"), "{names:?}");
        let hdr = secs.iter().find(|s| s.name == ".eh_frame_hdr").unwrap();
        let (vaddr, offset, size) = eh_frame_phdr(&exe).expect("PT_GNU_EH_FRAME");
        assert_eq!((vaddr, offset, size), (hdr.addr, hdr.offset, hdr.size));
    }
}
