//! SHF_COMPRESSED sections: an `Elf64_Chdr` (type, reserved, uncompressed size, alignment)
//! followed by a zlib stream. Distributions ship separate debug files this way
//! (`objcopy --compress-debug-sections`), so their DWARF is unreadable without it.

use miniz_oxide::inflate::core::inflate_flags::{
    TINFL_FLAG_IGNORE_ADLER32, TINFL_FLAG_PARSE_ZLIB_HEADER,
    TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
};
use miniz_oxide::inflate::core::{decompress, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

/// `ELFCOMPRESS_ZLIB`; `ELFCOMPRESS_ZSTD` (2) is not supported and reads as absent.
const ELFCOMPRESS_ZLIB: u32 = 1;
const CHDR_SIZE: usize = 24;
/// No debug section of a real program inflates beyond this; a header claiming more is
/// hostile or broken, and is refused before any memory is committed.
const MAX_INFLATED: u64 = 2 << 30;

/// The uncompressed contents of a compressed section's bytes, or `None` when the header is
/// malformed, the algorithm unsupported, or the stream does not inflate to the stated size.
pub(super) fn inflate(section: &[u8]) -> Option<Vec<u8>> {
    let header = section.get(..CHDR_SIZE)?;
    let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().unwrap_or([0; 4]));
    let size = u64::from_le_bytes(header[8..16].try_into().ok()?);
    if word(0) != ELFCOMPRESS_ZLIB || size > MAX_INFLATED {
        return None;
    }
    let size = usize::try_from(size).ok()?;
    // One pass into a buffer of the stated size. The zlib checksum is not verified: the
    // readers of what comes out treat it as hostile anyway, and it costs a tenth of the time.
    let mut out = vec![0u8; size];
    let mut state = Box::<DecompressorOxide>::default();
    let flags = TINFL_FLAG_PARSE_ZLIB_HEADER
        | TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF
        | TINFL_FLAG_IGNORE_ADLER32;
    let (status, _, written) = decompress(&mut state, &section[CHDR_SIZE..], &mut out, 0, flags);
    (status == TINFLStatus::Done && written == size).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressed(payload: &[u8], kind: u32, stated: u64) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&stated.to_le_bytes());
        out.extend_from_slice(&1u64.to_le_bytes());
        out.extend_from_slice(&miniz_oxide::deflate::compress_to_vec_zlib(payload, 6));
        out
    }

    #[test]
    fn inflates_zlib_and_refuses_the_rest() {
        let payload: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let n = payload.len() as u64;
        assert_eq!(inflate(&compressed(&payload, 1, n)), Some(payload.clone()));
        assert_eq!(inflate(&compressed(&payload, 2, n)), None, "zstd");
        assert_eq!(inflate(&compressed(&payload, 1, n + 1)), None, "short");
        assert_eq!(inflate(&compressed(&payload, 1, n - 1)), None, "long");
        assert_eq!(
            inflate(&compressed(&payload, 1, 1 << 40)),
            None,
            "absurd size"
        );
        assert_eq!(inflate(&[1, 0, 0]), None);
        let mut broken = compressed(&payload, 1, n);
        let len = broken.len();
        broken.truncate(len / 2);
        assert_eq!(inflate(&broken), None);
    }
}
