//! A `gimli::Reader` over shared, owned bytes (an image's mapping or a debug file read into
//! memory), so parsed DWARF can be kept beside the image it came from without copying sections
//! or borrowing from it.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use gimli::{Error, LittleEndian, Reader, ReaderOffsetId, Result};

use crate::symbols::elf::SharedBytes;

/// A window `start..end` of shared bytes; reading advances `start`.
#[derive(Clone)]
pub(crate) struct DwarfReader {
    bytes: SharedBytes,
    start: usize,
    end: usize,
}

impl fmt::Debug for DwarfReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DwarfReader({:#x}..{:#x})", self.start, self.end)
    }
}

impl DwarfReader {
    /// The window `offset..offset+len` of `bytes`, clamped to what exists.
    pub(crate) fn new(bytes: SharedBytes, offset: usize, len: usize) -> DwarfReader {
        let total = (*bytes).as_ref().len();
        let start = offset.min(total);
        let end = offset.saturating_add(len).min(total);
        DwarfReader { bytes, start, end }
    }

    /// Hands back the memory behind `range` of this window (see `Bytes::release`).
    pub(crate) fn release(&self, range: std::ops::Range<usize>) {
        let start = self.start.saturating_add(range.start).min(self.end);
        let end = self.start.saturating_add(range.end).min(self.end);
        self.bytes.release(start..end);
    }

    /// The window's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.slice()
    }

    fn slice(&self) -> &[u8] {
        (*self.bytes)
            .as_ref()
            .get(self.start..self.end)
            .unwrap_or(&[])
    }

    fn eof(&self) -> Error {
        Error::UnexpectedEof(self.offset_id())
    }

    fn check(&self, len: usize) -> Result<()> {
        if len > self.end - self.start {
            Err(self.eof())
        } else {
            Ok(())
        }
    }
}

impl Reader for DwarfReader {
    type Endian = LittleEndian;
    type Offset = usize;

    fn endian(&self) -> LittleEndian {
        LittleEndian
    }

    fn len(&self) -> usize {
        self.end - self.start
    }

    fn empty(&mut self) {
        self.start = self.end;
    }

    fn truncate(&mut self, len: usize) -> Result<()> {
        self.check(len)?;
        self.end = self.start + len;
        Ok(())
    }

    fn offset_from(&self, base: &DwarfReader) -> usize {
        self.start.saturating_sub(base.start)
    }

    /// Positions in the underlying bytes identify places for error messages.
    fn offset_id(&self) -> ReaderOffsetId {
        ReaderOffsetId(self.start as u64)
    }

    fn lookup_offset_id(&self, id: ReaderOffsetId) -> Option<usize> {
        let at = usize::try_from(id.0).ok()?;
        (self.start..=self.end)
            .contains(&at)
            .then(|| at - self.start)
    }

    fn find(&self, byte: u8) -> Result<usize> {
        self.slice()
            .iter()
            .position(|&b| b == byte)
            .ok_or_else(|| self.eof())
    }

    fn skip(&mut self, len: usize) -> Result<()> {
        self.check(len)?;
        self.start += len;
        Ok(())
    }

    fn split(&mut self, len: usize) -> Result<DwarfReader> {
        self.check(len)?;
        let head = DwarfReader {
            bytes: Arc::clone(&self.bytes),
            start: self.start,
            end: self.start + len,
        };
        self.start += len;
        Ok(head)
    }

    fn to_slice(&self) -> Result<Cow<'_, [u8]>> {
        Ok(Cow::Borrowed(self.slice()))
    }

    fn to_string(&self) -> Result<Cow<'_, str>> {
        std::str::from_utf8(self.slice())
            .map(Cow::Borrowed)
            .map_err(|_| Error::BadUtf8)
    }

    fn to_string_lossy(&self) -> Result<Cow<'_, str>> {
        Ok(String::from_utf8_lossy(self.slice()))
    }

    fn read_slice(&mut self, buf: &mut [u8]) -> Result<()> {
        self.check(buf.len())?;
        buf.copy_from_slice(&self.slice()[..buf.len()]);
        self.start += buf.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(bytes: &[u8]) -> DwarfReader {
        let shared: SharedBytes = Arc::new(bytes.to_vec());
        DwarfReader::new(shared, 0, bytes.len())
    }

    #[test]
    fn reads_splits_and_reports_eof() {
        let mut r = reader(&[1, 2, 0x34, 0x12, b'h', b'i', 0, 9]);
        assert_eq!(r.read_u8().unwrap(), 1);
        assert_eq!(r.read_u8().unwrap(), 2);
        assert_eq!(r.read_u16().unwrap(), 0x1234);
        let mut s = r.read_null_terminated_slice().unwrap();
        assert_eq!(&*s.to_string().unwrap(), "hi");
        assert_eq!(r.len(), 1);
        assert!(matches!(r.read_u16(), Err(Error::UnexpectedEof(_))));
        assert!(r.skip(2).is_err());
        assert_eq!(s.read_u8().unwrap(), b'h');
        let base = reader(&[0; 8]);
        let mut w = base.clone();
        w.skip(3).unwrap();
        assert_eq!(w.offset_from(&base), 3);
        let head = w.split(2).unwrap();
        assert_eq!((head.len(), w.len()), (2, 3));
        assert!(w.truncate(4).is_err());
        w.truncate(1).unwrap();
        assert_eq!(w.len(), 1);
        assert_eq!(base.lookup_offset_id(w.offset_id()), Some(5));
        w.empty();
        assert!(w.is_empty());
    }

    #[test]
    fn window_is_clamped() {
        let shared: SharedBytes = Arc::new(vec![7u8; 4]);
        let r = DwarfReader::new(shared.clone(), 2, 100);
        assert_eq!(r.len(), 2);
        let r = DwarfReader::new(shared, usize::MAX, usize::MAX);
        assert_eq!(r.len(), 0);
    }
}
