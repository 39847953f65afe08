//! The bytes of an ELF file: mapped from disk, or owned (an image read from process memory).
//!
//! The symbol layer maps no file itself (mapping is `unsafe`, and `os` is the only place
//! with it): the binary installs an opener once ([`install_file_opener`]; the session puts the
//! os layer's read-only mmap there), and without one a file is read whole into memory, which
//! is what the layer's own tests and a library user get.

use std::path::Path;
use std::sync::{Arc, OnceLock};

/// Bytes kept alive by reference counting: an image's mapping or a file read into memory,
/// shared with parsed tables that must outlive a borrow of the image.
pub type SharedBytes = Arc<dyn Bytes>;

/// What `SharedBytes` holds.
pub trait Bytes: AsRef<[u8]> + Send + Sync {
    /// A pass that reads `range` once (a walk over all of `.debug_info`) hands its memory back:
    /// a mapped file's pages there leave the process and the next read faults the same bytes
    /// in again from the page cache. Bytes in memory stay as they are.
    fn release(&self, _range: std::ops::Range<usize>) {}
}

impl Bytes for Vec<u8> {}

/// A file's bytes as an installed opener holds them (a mapping).
pub trait FileBytes: Send + Sync {
    fn bytes(&self) -> &[u8];
    /// Gives back the memory of the whole pages inside `range` (see [`Bytes::release`]).
    fn release(&self, range: std::ops::Range<usize>);
}

/// Opens the regular file at a path (never a device: paths come from a process's maps and
/// from debug directories, where even `open` of a device can block or have effects).
pub type FileOpener = fn(&Path) -> anyhow::Result<Box<dyn FileBytes>>;

static OPENER: OnceLock<FileOpener> = OnceLock::new();

/// Makes `open` the way every ELF and debug file is read from now on (the first call wins).
pub fn install_file_opener(open: FileOpener) {
    let _ = OPENER.set(open);
}

pub(super) enum Backing {
    Mapped(Box<dyn FileBytes>),
    Owned(Vec<u8>),
}

impl Backing {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m.bytes(),
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
        if let Backing::Mapped(m) = self {
            m.release(range);
        }
    }
}

/// The bytes of the regular file at `path`: through the installed opener, else read whole.
pub(super) fn open_regular_file(path: &Path) -> anyhow::Result<Backing> {
    if let Some(open) = OPENER.get() {
        return Ok(Backing::Mapped(open(path)?));
    }
    // stat, not open, decides: opening a device is what must not happen.
    if !std::fs::metadata(path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
        .is_file()
    {
        anyhow::bail!("{}: not a regular file", path.display());
    }
    std::fs::read(path)
        .map(Backing::Owned)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_bytes_are_never_released() {
        let data: Vec<u8> = (0..3 * 4096).map(|i| (i % 251) as u8).collect();
        let owned = Backing::Owned(data.clone());
        owned.release(0..data.len());
        assert_eq!(owned.bytes(), &data[..]);
    }
}
