//! The ELF64 little-endian pieces a core file is made of: the file header, program headers
//! and notes, read and written. Pure: bytes in, values out. Every read is bounds-checked, so
//! a truncated or corrupt file gives `None` or an error, never a panic.

pub const ET_CORE: u16 = 4;
pub const EM_X86_64: u16 = 62;
pub const PT_LOAD: u32 = 1;
pub const PT_NOTE: u32 = 4;
pub const PF_X: u32 = 1;
pub const PF_W: u32 = 2;
pub const PF_R: u32 = 4;
pub const EHDR_SIZE: usize = 64;
pub const PHDR_SIZE: usize = 56;
/// The size of a section header, for the PN_XNUM escape.
pub const SHDR_SIZE: usize = 64;
/// e_phnum's escape: with more than 65534 segments the real count is section header 0's
/// sh_info (the kernel writes cores this way for processes with very many mappings).
pub const PN_XNUM: u16 = 0xffff;

const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;

pub fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

pub fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

pub fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    u32_at(b, at).map(|v| v as i32)
}

/// The fields of the file header scry uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub e_type: u16,
    pub machine: u16,
    pub entry: u64,
    pub phoff: u64,
    pub shoff: u64,
    pub phentsize: u16,
    pub phnum: u16,
}

/// The file header of a 64-bit little-endian ELF file, or why it is not one.
pub fn parse_header(b: &[u8]) -> Result<Header, String> {
    if b.len() < EHDR_SIZE {
        return Err(format!(
            "it is {} bytes long, shorter than an ELF header",
            b.len()
        ));
    }
    if &b[..4] != b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    if b[4] != ELFCLASS64 || b[5] != ELFDATA2LSB {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let field = |at| u16_at(b, at).unwrap_or(0);
    Ok(Header {
        e_type: field(16),
        machine: field(18),
        entry: u64_at(b, 24).unwrap_or(0),
        phoff: u64_at(b, 32).unwrap_or(0),
        shoff: u64_at(b, 40).unwrap_or(0),
        phentsize: field(54),
        phnum: field(56),
    })
}

/// One program header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProgramHeader {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

impl ProgramHeader {
    pub fn end(&self) -> u64 {
        self.vaddr.saturating_add(self.memsz)
    }
}

/// A program header from its 56 bytes (`None` when fewer are given).
pub fn parse_phdr(b: &[u8]) -> Option<ProgramHeader> {
    Some(ProgramHeader {
        p_type: u32_at(b, 0)?,
        flags: u32_at(b, 4)?,
        offset: u64_at(b, 8)?,
        vaddr: u64_at(b, 16)?,
        filesz: u64_at(b, 32)?,
        memsz: u64_at(b, 40)?,
        align: u64_at(b, 48)?,
    })
}

/// One note: its owner's name (without the NUL), type and contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Note<'a> {
    pub name: &'a [u8],
    pub n_type: u32,
    pub desc: &'a [u8],
}

/// The notes of a note area, in order, and whether the area ended in the middle of one (a
/// truncated or corrupt core): iteration stops there.
pub struct Notes<'a> {
    rest: &'a [u8],
    pub broken: bool,
}

pub fn notes(area: &[u8]) -> Notes<'_> {
    Notes {
        rest: area,
        broken: false,
    }
}

fn align4(n: usize) -> Option<usize> {
    n.checked_add(3).map(|v| v & !3)
}

impl<'a> Iterator for Notes<'a> {
    type Item = Note<'a>;

    fn next(&mut self) -> Option<Note<'a>> {
        if self.rest.is_empty() || self.broken {
            return None;
        }
        let parsed = (|| {
            let namesz = u32_at(self.rest, 0)? as usize;
            let descsz = u32_at(self.rest, 4)? as usize;
            let n_type = u32_at(self.rest, 8)?;
            let name_at = 12usize;
            let desc_at = name_at.checked_add(align4(namesz)?)?;
            let end = desc_at.checked_add(align4(descsz)?)?;
            let name = self.rest.get(name_at..name_at + namesz)?;
            let desc = self.rest.get(desc_at..desc_at.checked_add(descsz)?)?;
            let name = name.strip_suffix(b"\0").unwrap_or(name);
            // The last note's padding may be missing from a hand-made file: accept that.
            let next = self.rest.get(end..).unwrap_or(&[]);
            Some((Note { name, n_type, desc }, next))
        })();
        match parsed {
            Some((note, next)) => {
                self.rest = next;
                Some(note)
            }
            None => {
                self.broken = true;
                None
            }
        }
    }
}

// ---- writing ---------------------------------------------------------------------------

/// A core file's header for `phnum` program headers right after it.
pub fn core_header(phnum: usize) -> [u8; EHDR_SIZE] {
    let mut h = [0u8; EHDR_SIZE];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = ELFCLASS64;
    h[5] = ELFDATA2LSB;
    h[6] = 1; // EI_VERSION
    h[16..18].copy_from_slice(&ET_CORE.to_le_bytes());
    h[18..20].copy_from_slice(&EM_X86_64.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[32..40].copy_from_slice(&(EHDR_SIZE as u64).to_le_bytes());
    h[52..54].copy_from_slice(&(EHDR_SIZE as u16).to_le_bytes());
    h[54..56].copy_from_slice(&(PHDR_SIZE as u16).to_le_bytes());
    h[56..58].copy_from_slice(&(phnum.min(PN_XNUM as usize - 1) as u16).to_le_bytes());
    h[58..60].copy_from_slice(&(SHDR_SIZE as u16).to_le_bytes());
    h
}

pub fn encode_phdr(p: &ProgramHeader) -> [u8; PHDR_SIZE] {
    let mut b = [0u8; PHDR_SIZE];
    b[0..4].copy_from_slice(&p.p_type.to_le_bytes());
    b[4..8].copy_from_slice(&p.flags.to_le_bytes());
    b[8..16].copy_from_slice(&p.offset.to_le_bytes());
    b[16..24].copy_from_slice(&p.vaddr.to_le_bytes());
    b[32..40].copy_from_slice(&p.filesz.to_le_bytes());
    b[40..48].copy_from_slice(&p.memsz.to_le_bytes());
    b[48..56].copy_from_slice(&p.align.to_le_bytes());
    b
}

/// Appends one note (name NUL-terminated, name and contents padded to 4 bytes).
pub fn push_note(out: &mut Vec<u8>, name: &str, n_type: u32, desc: &[u8]) {
    let namesz = name.len() + 1;
    out.extend_from_slice(&(namesz as u32).to_le_bytes());
    out.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    out.extend_from_slice(&n_type.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    out.resize(align4(out.len()).unwrap_or(out.len()), 0);
    out.extend_from_slice(desc);
    out.resize(align4(out.len()).unwrap_or(out.len()), 0);
}

// ---- build ids -------------------------------------------------------------------------

const NT_GNU_BUILD_ID: u32 = 3;
/// Note areas larger than this are not searched for a build id.
const MAX_NOTE_AREA: u64 = 64 * 1024;
/// Program header tables with more entries than this are not read for a build id.
const MAX_PHDRS_SCANNED: u64 = 256;

/// The NT_GNU_BUILD_ID of an ELF image whose bytes `read(offset, buf)` gives (a file, or a
/// module's first page in a core): from its PT_NOTE segments. `None` when it has none or
/// the bytes are not there.
pub fn build_id(read: &dyn Fn(u64, &mut [u8]) -> bool) -> Option<Vec<u8>> {
    let mut head = [0u8; EHDR_SIZE];
    if !read(0, &mut head) {
        return None;
    }
    let h = parse_header(&head).ok()?;
    if usize::from(h.phentsize) != PHDR_SIZE {
        return None;
    }
    for i in 0..u64::from(h.phnum).min(MAX_PHDRS_SCANNED) {
        let mut raw = [0u8; PHDR_SIZE];
        if !read(h.phoff.checked_add(i * PHDR_SIZE as u64)?, &mut raw) {
            return None;
        }
        let p = parse_phdr(&raw)?;
        if p.p_type != PT_NOTE || p.filesz == 0 || p.filesz > MAX_NOTE_AREA {
            continue;
        }
        let mut area = vec![0u8; p.filesz as usize];
        if !read(p.offset, &mut area) {
            continue;
        }
        let found = notes(&area)
            .find(|n| n.name == b"GNU" && n.n_type == NT_GNU_BUILD_ID)
            .map(|n| n.desc.to_vec());
        if found.is_some() {
            return found;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_phdrs_round_trip() {
        let h = core_header(3);
        let parsed = parse_header(&h).unwrap();
        assert_eq!(parsed.e_type, ET_CORE);
        assert_eq!(parsed.machine, EM_X86_64);
        assert_eq!(parsed.phoff, EHDR_SIZE as u64);
        assert_eq!(parsed.phnum, 3);
        assert_eq!(usize::from(parsed.phentsize), PHDR_SIZE);
        let p = ProgramHeader {
            p_type: PT_LOAD,
            flags: PF_R | PF_W,
            offset: 0x1000,
            vaddr: 0x7fff_0000,
            filesz: 0x2000,
            memsz: 0x3000,
            align: 0x1000,
        };
        assert_eq!(parse_phdr(&encode_phdr(&p)), Some(p));
        assert_eq!(p.end(), 0x7fff_3000);
    }

    #[test]
    fn bad_headers_say_why() {
        assert!(parse_header(b"\x7fELF").unwrap_err().contains("shorter"));
        assert_eq!(parse_header(&[0u8; 64]).unwrap_err(), "not an ELF file");
        let mut h = core_header(1);
        h[4] = 1;
        assert!(parse_header(&h).unwrap_err().contains("64-bit"));
        assert_eq!(parse_phdr(&[0u8; 20]), None);
    }

    #[test]
    fn notes_round_trip_and_stop_at_damage() {
        let mut area = Vec::new();
        push_note(&mut area, "CORE", 1, &[1, 2, 3, 4, 5]);
        push_note(&mut area, "LINUX", 0x202, &[9; 8]);
        assert_eq!(area.len() % 4, 0);
        let all: Vec<Note> = notes(&area).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].name, b"CORE");
        assert_eq!(all[0].n_type, 1);
        assert_eq!(all[0].desc, &[1, 2, 3, 4, 5]);
        assert_eq!(all[1].name, b"LINUX");
        assert_eq!(all[1].desc, &[9; 8]);

        // Cut inside the second note: the first is served, the damage is reported.
        let mut it = notes(&area[..area.len() - 3]);
        assert_eq!(it.next().map(|n| n.n_type), Some(1));
        assert!(it.next().is_none());
        assert!(it.broken);

        // A size field pointing past the end, or absurdly large, is no panic.
        let mut evil = area.clone();
        evil[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut it = notes(&evil);
        assert!(it.next().is_none());
        assert!(it.broken);
    }

    #[test]
    fn build_id_from_pt_note() {
        // A minimal ELF image: header, one PT_NOTE, the note.
        let mut note = Vec::new();
        push_note(&mut note, "GNU", NT_GNU_BUILD_ID, &[0xab, 0xcd, 0xef]);
        let note_at = (EHDR_SIZE + PHDR_SIZE) as u64;
        let mut img = core_header(1).to_vec();
        img.extend_from_slice(&encode_phdr(&ProgramHeader {
            p_type: PT_NOTE,
            offset: note_at,
            filesz: note.len() as u64,
            ..Default::default()
        }));
        img.extend_from_slice(&note);
        let read = |at: u64, buf: &mut [u8]| {
            let at = at as usize;
            match img.get(at..at + buf.len()) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    true
                }
                None => false,
            }
        };
        assert_eq!(build_id(&read), Some(vec![0xab, 0xcd, 0xef]));
        let short = |at: u64, buf: &mut [u8]| at == 0 && read(at, buf);
        assert_eq!(build_id(&short), None);
    }
}
