//! Where a module's separate debug information lives.

use std::path::PathBuf;

/// `/usr/lib/debug/.build-id/ab/cdef….debug`, where distributions install debug files.
pub(super) fn by_build_id(build_id: &[u8]) -> PathBuf {
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    let (dir, rest) = hex.split_at(hex.len().min(2));
    PathBuf::from(format!("/usr/lib/debug/.build-id/{dir}/{rest}.debug"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_file_path_from_build_id() {
        assert_eq!(
            by_build_id(&[0xab, 0xcd, 0xef, 0x01]),
            PathBuf::from("/usr/lib/debug/.build-id/ab/cdef01.debug")
        );
    }
}
