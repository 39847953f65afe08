//! The bytes of an ELF file: mapped from disk, or owned (an image read from process memory).

use std::fs::File;
use std::path::Path;

use anyhow::{bail, Context};
use memmap2::{Mmap, UncheckedAdvice};

use super::image::Bytes;

/// x86-64 pages: what `madvise` works in.
const PAGE: usize = 4096;

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

impl Bytes for Backing {
    fn release(&self, range: std::ops::Range<usize>) {
        let Backing::Mapped(m) = self else { return };
        // Whole pages inside the range only: a neighbour's bytes on a shared page stay put.
        let start = range.start.div_ceil(PAGE) * PAGE;
        let end = range.end.min(m.len()) / PAGE * PAGE;
        if start >= end {
            return;
        }
        // SAFETY: the mapping is private, read-only and never written, so MADV_DONTNEED only
        // drops this process's page-table entries: the next read of any byte there faults
        // the same file contents back in (the accepted risk of a file changed underneath is
        // `map_regular_file`'s). No byte anyone holds a slice of changes value.
        let _ = unsafe { m.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start) };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_pages_read_back_the_same_bytes() {
        let path = std::env::temp_dir().join(format!("scry_release_{}", std::process::id()));
        let data: Vec<u8> = (0..5 * PAGE + 123).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mapped = Backing::Mapped(map_regular_file(&path).unwrap());
        assert_eq!(mapped.bytes(), &data[..]);
        mapped.release(100..4 * PAGE + 5);
        mapped.release(0..usize::MAX);
        mapped.release(3..4);
        assert_eq!(
            mapped.bytes(),
            &data[..],
            "released pages fault back in unchanged"
        );
        let owned = Backing::Owned(data.clone());
        owned.release(0..data.len());
        assert_eq!(owned.bytes(), &data[..]);
        std::fs::remove_file(&path).unwrap();
    }
}
