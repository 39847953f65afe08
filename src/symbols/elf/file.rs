//! The bytes of an ELF file: mapped from disk, or owned (an image read from process memory).

use std::sync::Arc;

use crate::os::mapped::MappedFile;

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

pub(super) enum Backing {
    Mapped(MappedFile),
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

/// Maps the regular file at `path` (see `MappedFile::open_regular`).
pub(super) fn map_regular_file(path: &std::path::Path) -> anyhow::Result<MappedFile> {
    MappedFile::open_regular(path)
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
