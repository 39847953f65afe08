//! `ElfImage`: one ELF file on disk, parsed once into the facts a debugger needs (segments,
//! entry point, symbols) while keeping its bytes for later reads of code and data.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use object::elf::{self, FileHeader64};
use object::read::elf::{FileHeader, NoteIterator, ProgramHeader, SectionHeader};
use object::Endianness;

use super::debuglink::DebugLink;
use super::file::{open_regular_file, Backing, SharedBytes};
use super::index::SymbolIndex;
use super::sections::Sections;
use super::{plt, symtab};
use crate::symbols::addr::{FileAddr, LoadBias};

/// The kernel (and ld.so) map segments at page granularity: a segment whose p_offset is not
/// page aligned is mapped from the page containing it. x86-64 uses 4 KiB pages.
const PAGE_MASK: u64 = !0xfff;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SegFlags {
    pub read: bool,
    pub write: bool,
    pub exec: bool,
}

/// A PT_LOAD program header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadSegment {
    pub vaddr: FileAddr,
    pub memsz: u64,
    pub offset: u64,
    pub filesz: u64,
    pub flags: SegFlags,
}

impl LoadSegment {
    /// Exclusive end of the segment in memory, saturating on hostile sizes.
    pub fn vaddr_end(&self) -> u64 {
        self.vaddr.0.saturating_add(self.memsz)
    }

    pub fn contains(&self, addr: FileAddr) -> bool {
        self.vaddr.0 <= addr.0 && addr.0 < self.vaddr_end()
    }
}

/// The PT_TLS program header: the initialization image of the module's thread-local block.
/// `vaddr..vaddr+filesz` is .tdata in the file; the rest up to `memsz` is zeroed .tbss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlsSegment {
    pub vaddr: FileAddr,
    pub memsz: u64,
    pub filesz: u64,
    pub align: u64,
}

pub struct ElfImage {
    pub path: PathBuf,
    pub entry: FileAddr,
    /// ET_DYN: a PIE executable or a shared object, loaded at a bias chosen at run time.
    pub is_dyn: bool,
    /// PT_LOAD segments sorted by vaddr.
    pub load_segments: Vec<LoadSegment>,
    pub tls: Option<TlsSegment>,
    /// DT_SONAME, for shared objects that have one.
    pub soname: Option<String>,
    /// The NT_GNU_BUILD_ID note, identifying the exact build (and its separate debug file).
    pub build_id: Option<Vec<u8>>,
    /// `.gnu_debuglink`: the name and CRC of a separate debug file.
    pub debuglink: Option<DebugLink>,
    /// Whether the file has a full symbol table (`.symtab`), not only the dynamic one.
    pub has_symtab: bool,
    /// `.symtab`, `.dynsym` and `name@plt` entries synthesized for the PLT.
    pub symbols: SymbolIndex,
    backing: Arc<Backing>,
}

impl std::fmt::Debug for ElfImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElfImage")
            .field("path", &self.path)
            .field("entry", &self.entry)
            .field("is_dyn", &self.is_dyn)
            .field("load_segments", &self.load_segments)
            .field("symbols", &self.symbols)
            .finish_non_exhaustive()
    }
}

/// A file mapped by `ElfImage::map`, not parsed yet.
pub struct MappedImage {
    path: PathBuf,
    backing: Arc<Backing>,
}

impl MappedImage {
    pub fn shared_bytes(&self) -> SharedBytes {
        self.backing.clone()
    }

    pub fn parse(self) -> anyhow::Result<ElfImage> {
        let parsed =
            parse(self.backing.bytes()).with_context(|| format!("{}", self.path.display()))?;
        Ok(ElfImage::assemble_shared(self.path, parsed, self.backing))
    }
}

/// Everything parsed out of the bytes; kept apart from the bytes so parsing can borrow them.
struct Parsed {
    entry: FileAddr,
    is_dyn: bool,
    load_segments: Vec<LoadSegment>,
    tls: Option<TlsSegment>,
    soname: Option<String>,
    build_id: Option<Vec<u8>>,
    debuglink: Option<DebugLink>,
    has_symtab: bool,
    symbols: SymbolIndex,
}

impl ElfImage {
    /// Maps and parses the file at `path`. Only regular files are opened: paths come from
    /// a process's maps and may name devices, where even `open` can block or have effects.
    pub fn load(path: &Path) -> anyhow::Result<ElfImage> {
        ElfImage::map(path)?.parse()
    }

    /// Maps the file at `path` without parsing it (see `load`), so that its bytes can be
    /// handed to another reader before the symbol tables are built.
    pub fn map(path: &Path) -> anyhow::Result<MappedImage> {
        Ok(MappedImage {
            path: path.to_path_buf(),
            backing: Arc::new(open_regular_file(path)?),
        })
    }

    /// Parses an in-memory image; `path` is only recorded for messages.
    pub fn parse(bytes: Vec<u8>, path: &Path) -> anyhow::Result<ElfImage> {
        let parsed = parse(&bytes).with_context(|| format!("{}", path.display()))?;
        Ok(ElfImage::assemble(
            path.to_path_buf(),
            parsed,
            Backing::Owned(bytes),
        ))
    }

    fn assemble(path: PathBuf, p: Parsed, backing: Backing) -> ElfImage {
        ElfImage::assemble_shared(path, p, Arc::new(backing))
    }

    fn assemble_shared(path: PathBuf, p: Parsed, backing: Arc<Backing>) -> ElfImage {
        ElfImage {
            path,
            entry: p.entry,
            is_dyn: p.is_dyn,
            load_segments: p.load_segments,
            tls: p.tls,
            soname: p.soname,
            build_id: p.build_id,
            debuglink: p.debuglink,
            has_symtab: p.has_symtab,
            symbols: p.symbols,
            backing,
        }
    }

    /// The file's bytes, shareable with tables that must outlive a borrow of the image.
    pub fn shared_bytes(&self) -> SharedBytes {
        self.backing.clone()
    }

    /// The whole file.
    pub fn data(&self) -> &[u8] {
        self.backing.bytes()
    }

    /// The load bias implied by a mapping of this file at `map_start` with file offset
    /// `map_offset` (both from /proc/PID/maps), or `None` if no PT_LOAD covers that offset.
    ///
    /// A mapping starts at the page holding a segment's p_offset, so its start corresponds
    /// to `(p_vaddr & PAGE) + (map_offset - (p_offset & PAGE))`. Segments often share a file
    /// page (with RELRO, the data segment starts on the page where the read-only one ends),
    /// so an offset alone can fit several segments; this picks the lowest-addressed one,
    /// which is right for the module's lowest mapping. See `bias_candidates` for the rest.
    pub fn bias_for_mapping(&self, map_start: u64, map_offset: u64) -> Option<LoadBias> {
        self.bias_candidates(map_start, map_offset).next()
    }

    /// Every bias consistent with one mapping, lowest-addressed segment first. A caller with
    /// all of a module's mappings picks the bias they agree on.
    pub fn bias_candidates(
        &self,
        map_start: u64,
        map_offset: u64,
    ) -> impl Iterator<Item = LoadBias> + '_ {
        self.load_segments
            .iter()
            .filter(move |s| {
                let page_off = s.offset & PAGE_MASK;
                // A segment with nothing in the file (pure .bss) is mapped anonymously.
                let file_end = s.offset.saturating_add(s.filesz);
                s.filesz != 0 && page_off <= map_offset && map_offset < file_end
            })
            .map(move |s| {
                if !self.is_dyn {
                    // ET_EXEC segments are mapped exactly at their link addresses.
                    return LoadBias(0);
                }
                let file_va =
                    (s.vaddr.0 & PAGE_MASK).wrapping_add(map_offset - (s.offset & PAGE_MASK));
                LoadBias(map_start.wrapping_sub(file_va))
            })
    }

    /// The segment holding `addr` in memory, if any.
    pub fn segment_at(&self, addr: FileAddr) -> Option<&LoadSegment> {
        self.load_segments.iter().find(|s| s.contains(addr))
    }

    /// `len` bytes of the file image at `addr`, when they all come from the file (not .bss,
    /// not past the segment's file part). The process's memory may differ (relocations,
    /// breakpoints), which is exactly what callers compare against.
    pub fn file_bytes(&self, addr: FileAddr, len: usize) -> Option<&[u8]> {
        let len64 = u64::try_from(len).ok()?;
        let end = addr.0.checked_add(len64)?;
        let seg = self.load_segments.iter().find(|s| {
            s.vaddr.0 <= addr.0 && end <= s.vaddr.0.saturating_add(s.filesz.min(s.memsz))
        })?;
        let start = seg.offset.checked_add(addr.0 - seg.vaddr.0)?;
        let start = usize::try_from(start).ok()?;
        self.data().get(start..start.checked_add(len)?)
    }

    /// Link-time address ranges of the executable segments (start, end exclusive).
    pub fn exec_ranges(&self) -> Vec<(FileAddr, FileAddr)> {
        exec_ranges(&self.load_segments)
    }

    /// Lowest and highest (exclusive) link-time addresses of all PT_LOAD segments.
    pub fn vaddr_extent(&self) -> Option<(FileAddr, FileAddr)> {
        let lo = self.load_segments.iter().map(|s| s.vaddr.0).min()?;
        let hi = self.load_segments.iter().map(|s| s.vaddr_end()).max()?;
        Some((FileAddr(lo), FileAddr(hi)))
    }
}

fn parse(data: &[u8]) -> anyhow::Result<Parsed> {
    let err = |e: object::read::Error| anyhow!("malformed ELF: {e}");
    let header = FileHeader64::<Endianness>::parse(data).map_err(err)?;
    let endian = header.endian().map_err(err)?;
    let e_type = header.e_type(endian);
    let is_dyn = e_type == elf::ET_DYN;
    if !is_dyn && e_type != elf::ET_EXEC {
        bail!("not an executable or shared object (ELF type {})", e_type.0);
    }

    let phdrs = header.program_headers(endian, data).map_err(err)?;
    let mut load_segments = Vec::new();
    let mut tls = None;
    for ph in phdrs {
        let p_type = ph.p_type(endian);
        if p_type == elf::PT_LOAD {
            let flags = ph.p_flags(endian).0;
            let seg = LoadSegment {
                vaddr: FileAddr(ph.p_vaddr(endian)),
                memsz: ph.p_memsz(endian),
                offset: ph.p_offset(endian),
                filesz: ph.p_filesz(endian),
                flags: SegFlags {
                    read: flags & elf::PF_R.0 != 0,
                    write: flags & elf::PF_W.0 != 0,
                    exec: flags & elf::PF_X.0 != 0,
                },
            };
            // The file part must exist: a truncated image would otherwise hand out short
            // or missing code bytes later.
            let file_end = seg
                .offset
                .checked_add(seg.filesz)
                .ok_or_else(|| anyhow!("PT_LOAD overflows"))?;
            if file_end > data.len() as u64 {
                bail!("PT_LOAD extends past the end of the file (truncated?)");
            }
            load_segments.push(seg);
        } else if p_type == elf::PT_TLS {
            tls = Some(TlsSegment {
                vaddr: FileAddr(ph.p_vaddr(endian)),
                memsz: ph.p_memsz(endian),
                filesz: ph.p_filesz(endian),
                align: ph.p_align(endian),
            });
        }
    }
    load_segments.sort_by_key(|s| s.vaddr);

    let sections = header.sections(endian, data).map_err(err)?;
    let mut symbols = symtab::read_symbols(endian, data, &sections)?;
    let plt = plt::entries(endian, data, &sections, &symbols);
    symbols.extend(plt);
    let exec = exec_ranges(&load_segments);
    let has_symtab = sections
        .iter()
        .any(|s| s.sh_type(endian) == elf::SHT_SYMTAB);
    let debuglink = sections
        .section_by_name(endian, b".gnu_debuglink")
        .and_then(|(_, s)| s.data(endian, data).ok())
        .and_then(DebugLink::parse);

    Ok(Parsed {
        entry: FileAddr(header.e_entry(endian)),
        is_dyn,
        load_segments,
        tls,
        soname: soname(endian, data, &sections),
        build_id: build_id(endian, data, &sections, phdrs),
        debuglink,
        has_symtab,
        symbols: SymbolIndex::new(symbols, exec),
    })
}

fn exec_ranges(segments: &[LoadSegment]) -> Vec<(FileAddr, FileAddr)> {
    segments
        .iter()
        .filter(|s| s.flags.exec)
        .map(|s| (s.vaddr, FileAddr(s.vaddr_end())))
        .collect()
}

/// Best effort: a broken dynamic section costs the soname, not the whole file.
fn soname(endian: Endianness, data: &[u8], sections: &Sections<'_>) -> Option<String> {
    let table = sections.dynamic_table(endian, data).ok()?;
    let entry = table.iter().find(|d| d.tag == elf::DT_SONAME)?;
    let name = table.string(entry).ok()?;
    Some(String::from_utf8_lossy(name).into_owned())
}

/// Best effort, from note sections, or from PT_NOTE when section headers were stripped.
pub(super) fn build_id(
    endian: Endianness,
    data: &[u8],
    sections: &Sections<'_>,
    phdrs: &[object::elf::ProgramHeader64<Endianness>],
) -> Option<Vec<u8>> {
    let from_sections = sections
        .iter()
        .filter_map(|s| s.notes(endian, data).ok().flatten())
        .find_map(|n| find_build_id(endian, n));
    from_sections.or_else(|| {
        phdrs
            .iter()
            .filter_map(|p| p.notes(endian, data).ok().flatten())
            .find_map(|n| find_build_id(endian, n))
    })
}

fn find_build_id(
    endian: Endianness,
    mut notes: NoteIterator<'_, FileHeader64<Endianness>>,
) -> Option<Vec<u8>> {
    // Each step consumes at least a note header, so this terminates on any input; an error
    // ends the scan of this note area.
    while let Ok(Some(note)) = notes.next() {
        if note.name() == elf::ELF_NOTE_GNU && note.n_type(endian) == elf::NT_GNU_BUILD_ID {
            return Some(note.desc().to_vec());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::elf::symbol::SymKind;
    use crate::symbols::testutil::{compile, nm_address, CXX_PROGRAM, C_PROGRAM};
    use crate::x86::disassemble;

    fn exec_segment(img: &ElfImage) -> LoadSegment {
        *img.load_segments
            .iter()
            .find(|s| s.flags.exec)
            .expect("an executable PT_LOAD")
    }

    #[test]
    fn non_pie_symbols_and_zero_bias() {
        let exe = compile(
            "nopie",
            C_PROGRAM,
            false,
            &["-g", "-O0", "-no-pie", "-fno-pie"],
        );
        let img = ElfImage::load(&exe).unwrap();
        assert!(!img.is_dyn);

        let main = img.symbols.lookup_name("main").unwrap();
        assert_eq!(main.kind, SymKind::Func);
        assert!(main.global && main.size > 3);
        if let Some(nm_main) = nm_address(&exe, "main") {
            assert_eq!(main.addr, FileAddr(nm_main));
        }
        let (s, off) = img.symbols.lookup_addr(FileAddr(main.addr.0 + 3)).unwrap();
        assert_eq!((&*s.name, off), ("main", 3));

        let helper = img.symbols.lookup_name("helper").unwrap();
        assert!(!helper.global, "static function is local");
        assert_eq!(helper.kind, SymKind::Func);
        let counter = img.symbols.lookup_name("counter").unwrap();
        assert_eq!(
            (counter.kind, counter.size, counter.global),
            (SymKind::Object, 4, true)
        );
        assert_eq!(
            img.file_bytes(counter.addr, 4),
            Some(&42i32.to_le_bytes()[..])
        );
        let hidden = img.symbols.lookup_name("hidden_total").unwrap();
        assert_eq!(
            img.file_bytes(hidden.addr, 4),
            None,
            ".bss has no file bytes"
        );

        let tls = img.symbols.lookup_name("tls_value").unwrap();
        assert_eq!(tls.kind, SymKind::Tls);
        let seg = img.tls.expect("PT_TLS");
        assert!(
            tls.addr.0 + 4 <= seg.memsz,
            "TLS symbol value is an offset in the block"
        );

        let text = exec_segment(&img);
        let bias = img.bias_for_mapping(text.vaddr.0 & PAGE_MASK, text.offset & PAGE_MASK);
        assert_eq!(bias, Some(LoadBias(0)));
        if let Some(start) = nm_address(&exe, "_start") {
            assert_eq!(img.entry, FileAddr(start));
        }

        // Disassembly straight from the file: -O0 code starts with a frame setup.
        let code = img.file_bytes(main.addr, main.size as usize).unwrap();
        let insns = disassemble(code, main.addr.0, 4, &|_| None);
        assert!(
            insns.iter().take(2).any(|i| i.text == "push rbp"),
            "{insns:?}"
        );
    }

    #[test]
    fn pie_bias_from_synthetic_mappings() {
        let exe = compile("pie", C_PROGRAM, false, &["-g", "-O0", "-pie", "-fpie"]);
        let img = ElfImage::load(&exe).unwrap();
        assert!(img.is_dyn);
        let base = 0x5555_5555_4000u64;
        for (i, seg) in img.load_segments.iter().enumerate() {
            // What the kernel does: map from the page holding p_offset, at the page holding
            // p_vaddr, shifted by the load base.
            let map_start = base + (seg.vaddr.0 & PAGE_MASK);
            let map_offset = seg.offset & PAGE_MASK;
            let mut all = img.bias_candidates(map_start, map_offset);
            assert!(all.any(|b| b == LoadBias(base)), "{seg:?}");
            if i == 0 {
                assert_eq!(
                    img.bias_for_mapping(map_start, map_offset),
                    Some(LoadBias(base))
                );
            }
        }
        // A mapping later split by mprotect still starts inside the segment's file range.
        let text = exec_segment(&img);
        if text.filesz > 0x1000 {
            let off = (text.offset & PAGE_MASK) + 0x1000;
            let start = base + (text.vaddr.0 & PAGE_MASK) + 0x1000;
            assert_eq!(img.bias_for_mapping(start, off), Some(LoadBias(base)));
        }
        let past_end = img
            .load_segments
            .iter()
            .map(|s| s.offset + s.filesz)
            .max()
            .unwrap();
        assert_eq!(
            img.bias_for_mapping(base, (past_end + 0xfff) & PAGE_MASK),
            None
        );

        let main = img.symbols.lookup_name("main").unwrap();
        if let Some(nm_main) = nm_address(&exe, "main") {
            assert_eq!(main.addr, FileAddr(nm_main));
        }
        assert_eq!(LoadBias(base).to_runtime(main.addr).0, base + main.addr.0);
    }

    #[test]
    fn non_page_aligned_offsets_round_consistently() {
        // Old linkers pack segments: the data segment's p_offset shares a page with code.
        let mut img = fake_image();
        img.load_segments = vec![
            seg(0x0, 0x0, 0x7c4, true),
            seg(0x200df0, 0xdf0, 0x230, false),
        ];
        let base = 0x7f00_0000_0000u64;
        // The first mapping (offset 0) is attributed to the first segment.
        assert_eq!(img.bias_for_mapping(base, 0), Some(LoadBias(base)));
        // The data mapping also has offset 0 but is mapped at the data page; only a caller
        // that passes the lowest mapping gets a sound answer, which the store does.
        let data_page = base + 0x200000;
        let b = img.bias_for_mapping(data_page, 0).unwrap();
        assert_eq!(b.to_runtime(FileAddr(0)).0, data_page);
    }

    fn seg(vaddr: u64, offset: u64, filesz: u64, exec: bool) -> LoadSegment {
        LoadSegment {
            vaddr: FileAddr(vaddr),
            memsz: filesz,
            offset,
            filesz,
            flags: SegFlags {
                read: true,
                write: !exec,
                exec,
            },
        }
    }

    fn fake_image() -> ElfImage {
        ElfImage {
            path: PathBuf::from("fake"),
            entry: FileAddr(0),
            is_dyn: true,
            load_segments: Vec::new(),
            tls: None,
            soname: None,
            build_id: None,
            debuglink: None,
            has_symtab: false,
            symbols: SymbolIndex::default(),
            backing: Arc::new(Backing::Owned(Vec::new())),
        }
    }

    #[test]
    fn cxx_names() {
        let exe = compile("cxx", CXX_PROGRAM, true, &["-g", "-O0"]);
        let img = ElfImage::load(&exe).unwrap();
        let bar = img.symbols.lookup_name("ns::Foo::bar").unwrap();
        assert!(
            bar.display_name().starts_with("ns::Foo::bar("),
            "{}",
            bar.display_name()
        );
        let int = img.symbols.lookup_name("ns::Foo::bar(int)").unwrap();
        assert_eq!(&*int.name, "_ZN2ns3Foo3barEi");
        let dbl = img.symbols.lookup_name("ns::Foo::bar(double)").unwrap();
        assert_ne!(int.addr, dbl.addr);
        let (s, off) = img.symbols.lookup_addr(FileAddr(int.addr.0 + 1)).unwrap();
        assert_eq!((s.display_name().as_ref(), off), ("ns::Foo::bar(int)", 1));
    }

    #[test]
    fn truncated_and_corrupted_files_error_without_panicking() {
        let exe = compile("trunc", C_PROGRAM, false, &["-O0"]);
        let bytes = std::fs::read(&exe).unwrap();
        assert!(ElfImage::parse(bytes.clone(), &exe).is_ok());

        let n = bytes.len();
        let cuts = [
            0,
            1,
            4,
            16,
            52,
            63,
            64,
            65,
            100,
            0x200,
            0x1000,
            n / 4,
            n / 2,
            n * 3 / 4,
            n - 64,
            n - 1,
        ];
        for &cut in &cuts {
            let r = ElfImage::parse(bytes[..cut.min(n)].to_vec(), Path::new("cut"));
            assert!(r.is_err(), "truncated at {cut} of {n} parsed");
        }

        // Flip bytes in the ELF header, the program headers and, with a fixed-seed LCG,
        // anywhere in the file. Any result is fine as long as there is no panic or hang.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut positions: Vec<usize> = (0..0x40 + 56 * 4).collect();
        for _ in 0..300 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            positions.push((seed >> 33) as usize % n);
        }
        for (k, &pos) in positions.iter().enumerate() {
            for pattern in [0xff, 0x80, 0x01] {
                let mut b = bytes.clone();
                b[pos] ^= pattern;
                if let Ok(img) = ElfImage::parse(b, Path::new("flip")) {
                    // Exercise the lookups on whatever was accepted.
                    let _ = img.symbols.lookup_name("main");
                    let _ = img.symbols.lookup_addr(img.entry);
                    let _ = img.file_bytes(img.entry, 16);
                    let _ = img.bias_for_mapping(0x5555_0000_0000, (k as u64) << 12);
                }
            }
        }

        for junk in [
            vec![0u8; 4096],
            vec![0xffu8; 4096],
            b"\x7fELF".to_vec(),
            b"#!/bin/sh\n".to_vec(),
        ] {
            assert!(ElfImage::parse(junk, Path::new("junk")).is_err());
        }
    }

    #[test]
    fn image_can_be_shared_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<ElfImage>();
    }

    #[test]
    fn load_refuses_non_files() {
        assert!(ElfImage::load(Path::new("/dev/null")).is_err());
        assert!(ElfImage::load(Path::new("/nonexistent/scry/file")).is_err());
        assert!(ElfImage::load(Path::new("/")).is_err());
    }
}
