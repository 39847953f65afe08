//! `.gnu_debuglink`: the file name of a separate debug file and the CRC-32 of its contents,
//! left in a stripped binary by `objcopy --add-gnu-debuglink`.

/// What a `.gnu_debuglink` section says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugLink {
    /// A bare file name (never a path: anything with a `/` is refused).
    pub name: String,
    /// CRC-32 (the zlib one) of the whole debug file.
    pub crc: u32,
}

impl DebugLink {
    /// Parses the section's bytes: the name up to a NUL, zero padding to a multiple of four,
    /// then the CRC in little-endian.
    pub fn parse(bytes: &[u8]) -> Option<DebugLink> {
        let nul = bytes.iter().position(|&b| b == 0)?;
        let name = std::str::from_utf8(&bytes[..nul]).ok()?;
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return None;
        }
        let at = (nul + 4) & !3;
        let crc = bytes.get(at..at + 4)?;
        Some(DebugLink {
            name: name.to_string(),
            crc: u32::from_le_bytes(crc.try_into().ok()?),
        })
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it), eight bytes per step.
pub fn crc32(data: &[u8]) -> u32 {
    let tables = crc_tables();
    let mut crc = !0u32;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let lo = crc ^ u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let hi = u32::from_le_bytes([c[4], c[5], c[6], c[7]]);
        crc = tables[7][(lo & 0xff) as usize]
            ^ tables[6][((lo >> 8) & 0xff) as usize]
            ^ tables[5][((lo >> 16) & 0xff) as usize]
            ^ tables[4][(lo >> 24) as usize]
            ^ tables[3][(hi & 0xff) as usize]
            ^ tables[2][((hi >> 8) & 0xff) as usize]
            ^ tables[1][((hi >> 16) & 0xff) as usize]
            ^ tables[0][(hi >> 24) as usize];
    }
    for &b in chunks.remainder() {
        crc = tables[0][((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Table k advances the CRC over a byte followed by k zero bytes.
fn crc_tables() -> &'static [[u32; 256]; 8] {
    static TABLES: std::sync::OnceLock<Box<[[u32; 256]; 8]>> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let mut t = Box::new([[0u32; 256]; 8]);
        for i in 0..256u32 {
            let mut c = i;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            t[0][i as usize] = c;
        }
        for i in 0..256 {
            for k in 1..8 {
                let prev = t[k - 1][i];
                t[k][i] = t[0][(prev & 0xff) as usize] ^ (prev >> 8);
            }
        }
        t
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_matches_known_values() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(
            crc32(b"The quick brown fox jumps over the lazy dog"),
            0x414f_a339
        );
        // Every split between the eight-byte loop and the tail gives the bytewise answer.
        let data: Vec<u8> = (0..100u32).map(|i| (i * 37 % 256) as u8).collect();
        let bytewise = |d: &[u8]| {
            let mut crc = !0u32;
            for &b in d {
                crc = crc_tables()[0][((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
            }
            !crc
        };
        for n in 0..data.len() {
            assert_eq!(crc32(&data[..n]), bytewise(&data[..n]), "{n}");
        }
    }

    #[test]
    fn parses_name_padding_and_crc() {
        let mut s = b"prog.debug\0".to_vec();
        s.push(0);
        s.extend_from_slice(&0x1234_5678u32.to_le_bytes());
        assert_eq!(
            DebugLink::parse(&s),
            Some(DebugLink {
                name: "prog.debug".into(),
                crc: 0x1234_5678
            })
        );
        // A name whose NUL ends on a 4-byte boundary still gets its own padding word.
        let mut s = b"abc\0".to_vec();
        s.extend_from_slice(&7u32.to_le_bytes());
        assert_eq!(DebugLink::parse(&s).map(|l| l.crc), Some(7));
        assert_eq!(DebugLink::parse(b"../../etc/passwd\0\0\0\0\0\0\0\0"), None);
        assert_eq!(DebugLink::parse(b"noterm"), None);
        assert_eq!(DebugLink::parse(b"short\0\0\0"), None);
    }
}
