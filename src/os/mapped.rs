//! Files mapped read-only into scry's memory: how the symbol layer reads executables,
//! libraries and debug files (tens or hundreds of megabytes, of which a session touches a
//! fraction). The only place scry maps a file or advises the kernel about a mapping.

use std::path::Path;

use anyhow::Context;
use memmap2::{Mmap, UncheckedAdvice};

/// x86-64 pages: what `madvise` works in.
const PAGE: usize = 4096;

pub(crate) struct MappedFile {
    map: Mmap,
}

impl MappedFile {
    /// Maps the file at `path`. Only regular files are opened: paths come from a process's
    /// maps and from debug directories, and may name devices, where even `open` can block
    /// or have effects.
    pub(crate) fn open_regular(path: &Path) -> anyhow::Result<MappedFile> {
        let file = super::files::open_regular(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        // SAFETY: the mapping is private and read-only. If another process truncates the
        // file while we hold it, reads past the new end fault; executables and libraries in
        // use are replaced by rename rather than rewritten in place, so this is the accepted
        // risk of every debugger and linker that maps object files.
        let map =
            unsafe { Mmap::map(&file) }.with_context(|| format!("mmap {}", path.display()))?;
        Ok(MappedFile { map })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Gives back the memory of the whole pages inside `range` (bytes already read and not
    /// needed again soon, e.g. a compressed section once inflated): the next read of any of
    /// them faults the file's contents back in.
    pub(crate) fn release(&self, range: std::ops::Range<usize>) {
        // Whole pages inside the range only: a neighbour's bytes on a shared page stay put.
        let start = range.start.div_ceil(PAGE) * PAGE;
        let end = range.end.min(self.map.len()) / PAGE * PAGE;
        if start >= end {
            return;
        }
        // SAFETY: the mapping is private, read-only and never written, so MADV_DONTNEED only
        // drops this process's page-table entries: the next read of any byte there faults
        // the same file contents back in (the accepted risk of a file changed underneath is
        // `open_regular`'s). No byte anyone holds a slice of changes value.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_pages_read_back_the_same_bytes() {
        let path = std::env::temp_dir().join(format!("scry_release_{}", std::process::id()));
        let data: Vec<u8> = (0..5 * PAGE + 123).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mapped = MappedFile::open_regular(&path).unwrap();
        assert_eq!(mapped.bytes(), &data[..]);
        mapped.release(100..4 * PAGE + 5);
        mapped.release(0..usize::MAX);
        mapped.release(3..4);
        assert_eq!(
            mapped.bytes(),
            &data[..],
            "released pages fault back in unchanged"
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn only_regular_files_are_mapped() {
        let err = MappedFile::open_regular(Path::new("/dev/null"))
            .err()
            .unwrap();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        assert!(MappedFile::open_regular(Path::new("/nonexistent/scry")).is_err());
    }
}
