//! `.eh_frame_hdr`: the pointer to `.eh_frame` and the sorted table of FDE start addresses
//! that lets a lookup binary-search instead of scanning every FDE. Parsed by hand so that a
//! hostile FDE count or pointer cannot overflow anything: every offset is checked.

/// The sorted (initial location, FDE address) table of `.eh_frame_hdr`, in the one layout
/// linkers emit: both fields 4-byte signed, relative to the start of the header.
#[derive(Clone, Debug)]
pub(super) struct HdrTable {
    /// The header's link-time address, which the entries are relative to.
    base: u64,
    /// File offset of the first entry.
    offset: usize,
    pub count: usize,
}

const DW_EH_PE_OMIT: u8 = 0xff;
const DW_EH_PE_DATAREL_SDATA4: u8 = 0x3b;

/// Reads the header: the address of `.eh_frame` it names and its search table, if usable.
/// Every read is bounds-checked; the FDE count is checked against the bytes present.
pub(super) fn parse_hdr(
    bytes: &[u8],
    hdr_addr: u64,
    hdr_offset: usize,
) -> Option<(u64, Option<HdrTable>)> {
    let (&version, rest) = bytes.split_first()?;
    if version != 1 || rest.len() < 3 {
        return None;
    }
    let (ptr_enc, count_enc, table_enc) = (rest[0], rest[1], rest[2]);
    let mut pos = 4usize;
    let eh_frame = read_encoded(bytes, &mut pos, ptr_enc, hdr_addr)?;
    let table = (|| {
        if count_enc == DW_EH_PE_OMIT || table_enc != DW_EH_PE_DATAREL_SDATA4 {
            return None;
        }
        let count = usize::try_from(read_encoded(bytes, &mut pos, count_enc, hdr_addr)?).ok()?;
        let needed = count.checked_mul(8)?.checked_add(pos)?;
        (needed <= bytes.len()).then_some(HdrTable {
            base: hdr_addr,
            offset: hdr_offset.checked_add(pos)?,
            count,
        })
    })();
    Some((eh_frame, table))
}

/// One DW_EH_PE-encoded value at `bytes[*pos]`, absolute or relative to itself (pcrel) or to
/// the section start (datarel); variable-length and indirect encodings are not supported.
fn read_encoded(bytes: &[u8], pos: &mut usize, enc: u8, section_addr: u64) -> Option<u64> {
    let field_addr = section_addr.wrapping_add(*pos as u64);
    let (width, signed) = match enc & 0x0f {
        0x00 | 0x04 => (8, false),
        0x02 => (2, false),
        0x03 => (4, false),
        0x0a => (2, true),
        0x0b => (4, true),
        0x0c => (8, true),
        _ => return None,
    };
    let src = bytes.get(*pos..pos.checked_add(width)?)?;
    *pos += width;
    let mut buf = [0u8; 8];
    buf[..width].copy_from_slice(src);
    let mut raw = u64::from_le_bytes(buf);
    if signed && width < 8 {
        // Sign-extend from the field's top bit.
        let shift = 64 - 8 * width as u32;
        raw = (((raw << shift) as i64) >> shift) as u64;
    }
    match enc & 0x70 {
        0x00 => Some(raw),
        0x10 => Some(field_addr.wrapping_add(raw)),
        0x30 => Some(section_addr.wrapping_add(raw)),
        _ => None,
    }
}

impl HdrTable {
    /// Entry `i` as (initial location, FDE address).
    pub(super) fn entry(&self, data: &[u8], i: usize) -> Option<(u64, u64)> {
        let at = self.offset.checked_add(i.checked_mul(8)?)?;
        let word = |o: usize| -> Option<u64> {
            let b = data.get(o..o.checked_add(4)?)?;
            let v = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            Some(self.base.wrapping_add(i64::from(v) as u64))
        };
        Some((word(at)?, word(at.checked_add(4)?)?))
    }

    /// The FDE address of the last entry starting at or below `pc`.
    pub(super) fn search(&self, data: &[u8], pc: u64) -> Option<u64> {
        // Invariant: entries before `lo` start at or below pc, entries from `hi` above it.
        let (mut lo, mut hi) = (0usize, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(data, mid)?.0 <= pc {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Some(self.entry(data, lo.checked_sub(1)?)?.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header at 0x1000 naming .eh_frame at 0x1100 (pcrel sdata4) with three entries.
    fn sample() -> Vec<u8> {
        let mut b = vec![1u8, 0x1b, 0x03, 0x3b];
        b.extend_from_slice(&(0x1100i32 - 0x1004).to_le_bytes());
        b.extend_from_slice(&3u32.to_le_bytes());
        for (start, fde) in [(0x2000i32, 0x1110i32), (0x2100, 0x1130), (0x2200, 0x1150)] {
            b.extend_from_slice(&(start - 0x1000).to_le_bytes());
            b.extend_from_slice(&(fde - 0x1000).to_le_bytes());
        }
        b
    }

    #[test]
    fn parses_and_searches() {
        let b = sample();
        let (eh_frame, table) = parse_hdr(&b, 0x1000, 0).unwrap();
        assert_eq!(eh_frame, 0x1100);
        let t = table.unwrap();
        assert_eq!(t.count, 3);
        assert_eq!(t.search(&b, 0x1fff), None);
        assert_eq!(t.search(&b, 0x2000), Some(0x1110));
        assert_eq!(t.search(&b, 0x20ff), Some(0x1110));
        assert_eq!(t.search(&b, 0x2100), Some(0x1130));
        assert_eq!(t.search(&b, u64::MAX), Some(0x1150));
    }

    #[test]
    fn hostile_headers_are_refused() {
        let mut b = sample();
        // An FDE count far beyond the bytes present: no table.
        b[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(parse_hdr(&b, 0x1000, 0).unwrap().1.is_none());
        // Unknown version, truncated header, unsupported encodings.
        assert!(parse_hdr(&[2, 0x1b, 3, 0x3b, 0, 0, 0, 0], 0, 0).is_none());
        assert!(parse_hdr(&[1, 0x1b], 0, 0).is_none());
        assert!(parse_hdr(&[1, 0x1b, 3, 0x3b, 0, 0], 0, 0).is_none());
        assert!(parse_hdr(&[1, 0x81, 3, 0x3b, 0, 0, 0, 0], 0, 0).is_none());
        let (_, t) = parse_hdr(&[1, 0x1b, 3, 0x1b, 0, 0, 0, 0, 1, 0, 0, 0], 0, 0).unwrap();
        assert!(t.is_none(), "only datarel sdata4 tables are searched");
        // Addresses near the top of the space wrap instead of overflowing.
        let (p, _) = parse_hdr(
            &[1, 0x1b, 0xff, 0x3b, 0xff, 0xff, 0xff, 0x7f],
            u64::MAX - 2,
            0,
        )
        .unwrap();
        assert_eq!(p, (u64::MAX - 2).wrapping_add(4).wrapping_add(0x7fff_ffff));
        for len in 0..b.len() {
            let _ = parse_hdr(&b[..len], 0x1000, 0);
        }
    }
}
