//! The bytes of an ELF file: mapped from disk, or owned (an image read from process memory).

use std::fs::File;
use std::path::Path;

use anyhow::{bail, Context};
use memmap2::Mmap;

pub(super) enum Backing {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Backing {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

impl AsRef<[u8]> for Backing {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

/// Maps the file at `path`. Only regular files are opened: paths come from a process's maps
/// and from debug directories, and may name devices, where even `open` can block or have
/// effects.
pub(super) fn map_regular_file(path: &Path) -> anyhow::Result<Mmap> {
    let meta = std::fs::metadata(path).with_context(|| format!("{}", path.display()))?;
    if !meta.is_file() {
        bail!("{}: not a regular file", path.display());
    }
    let file = File::open(path).with_context(|| format!("{}", path.display()))?;
    if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
        bail!("{}: not a regular file", path.display());
    }
    // SAFETY: the mapping is private and read-only. If another process truncates the file
    // while we hold it, reads past the new end fault; executables and libraries in use are
    // replaced by rename rather than rewritten in place, so this is the accepted risk of
    // every debugger and linker that maps object files.
    unsafe { Mmap::map(&file) }.with_context(|| format!("mmap {}", path.display()))
}
