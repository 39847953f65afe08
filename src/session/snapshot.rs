//! What scripts read at a stop, kept for one more stop as `prev`. Registers come as a whole
//! (one GETREGS gives them all); memory only as the reads that were made.

use crate::os::regs::RawRegs;

/// Reads larger than this are not remembered: `prev` is for the values a script compares.
const MAX_REMEMBERED_READ: usize = 64;
const MAX_REMEMBERED_READS: usize = 256;

#[derive(Default)]
struct Reads {
    regs: Option<RawRegs>,
    memory: Vec<(u64, Vec<u8>)>,
}

#[derive(Default)]
pub(super) struct Snapshot {
    current: Reads,
    previous: Reads,
}

impl Snapshot {
    /// A new stop: what was read at the last one becomes `prev`.
    pub(super) fn rotate(&mut self) {
        self.previous = std::mem::take(&mut self.current);
    }

    pub(super) fn note_regs(&mut self, regs: &RawRegs) {
        self.current.regs = Some(*regs);
    }

    pub(super) fn note_memory(&mut self, addr: u64, bytes: &[u8]) {
        if bytes.len() <= MAX_REMEMBERED_READ && self.current.memory.len() < MAX_REMEMBERED_READS {
            self.current.memory.push((addr, bytes.to_vec()));
        }
    }

    /// The registers noted at this stop so far (the live view reads them without noting).
    pub(super) fn noted_regs(&self) -> Option<RawRegs> {
        self.current.regs
    }

    pub(super) fn set_noted_regs(&mut self, regs: Option<RawRegs>) {
        self.current.regs = regs;
    }

    pub(super) fn prev_regs(&self) -> Option<&RawRegs> {
        self.previous.regs.as_ref()
    }

    /// Bytes `[addr, addr+len)` if one remembered read covered them.
    pub(super) fn prev_memory(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        self.previous
            .memory
            .iter()
            .rev()
            .find_map(|(start, bytes)| {
                let offset = addr.checked_sub(*start)? as usize;
                bytes
                    .get(offset..offset.checked_add(len)?)
                    .map(|b| b.to_vec())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prev_sees_only_the_last_stop() {
        let mut s = Snapshot::default();
        s.note_memory(0x1000, &[1, 2, 3, 4]);
        s.rotate();
        assert_eq!(s.prev_memory(0x1001, 2), Some(vec![2, 3]));
        assert_eq!(s.prev_memory(0x1003, 2), None);
        s.rotate();
        assert_eq!(s.prev_memory(0x1000, 1), None);
    }
}
