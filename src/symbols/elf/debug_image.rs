//! `DebugImage`: a separate debug file (`objcopy --only-keep-debug` output, or what a
//! distribution installs under /usr/lib/debug). It keeps the section headers and program
//! headers of the stripped file, but only the non-allocated sections (`.debug_*`, `.symtab`)
//! have contents: the rest are NOBITS, so nothing here trusts its segments or reads code.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use object::elf::{self, FileHeader64};
use object::read::elf::FileHeader;
use object::Endianness;

use super::file::SharedBytes;
use super::file::{open_regular_file, Backing};
use super::image::build_id;
use super::symbol::Symbol;
use super::symtab;

pub struct DebugImage {
    pub path: PathBuf,
    /// Its NT_GNU_BUILD_ID, which must equal the stripped file's when both have one.
    pub build_id: Option<Vec<u8>>,
    backing: Arc<Backing>,
}

impl std::fmt::Debug for DebugImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebugImage")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl DebugImage {
    /// Maps the file at `path` and checks it is a 64-bit little-endian ELF file.
    pub fn load(path: &Path) -> anyhow::Result<DebugImage> {
        let backing = open_regular_file(path)?;
        let build_id =
            read_build_id(backing.bytes()).with_context(|| format!("{}", path.display()))?;
        Ok(DebugImage {
            path: path.to_path_buf(),
            build_id,
            backing: Arc::new(backing),
        })
    }

    /// The whole file.
    pub fn data(&self) -> &[u8] {
        self.backing.bytes()
    }

    pub fn shared_bytes(&self) -> SharedBytes {
        self.backing.clone()
    }

    /// The symbols of its `.symtab` (a stripped file's full table lives here). Best effort:
    /// a broken table gives what could be read, possibly nothing.
    pub fn symbols(&self) -> Vec<Symbol> {
        let data = self.data();
        let Ok(header) = FileHeader64::<Endianness>::parse(data) else {
            return Vec::new();
        };
        let Ok(endian) = header.endian() else {
            return Vec::new();
        };
        let Ok(sections) = header.sections(endian, data) else {
            return Vec::new();
        };
        symtab::read_symbols(endian, data, &sections).unwrap_or_default()
    }
}

fn read_build_id(data: &[u8]) -> anyhow::Result<Option<Vec<u8>>> {
    let err = |e: object::read::Error| anyhow!("malformed ELF: {e}");
    let header = FileHeader64::<Endianness>::parse(data).map_err(err)?;
    let endian = header.endian().map_err(err)?;
    if header.e_machine(endian) != elf::EM_X86_64 {
        bail!("not an x86-64 ELF file");
    }
    let sections = header.sections(endian, data).map_err(err)?;
    let phdrs = header.program_headers(endian, data).unwrap_or(&[]);
    Ok(build_id(endian, data, &sections, phdrs))
}
