//! A recording of execution, instruction by instruction: for every step the thread, where
//! it was, the registers it changed (old and new), the bytes it stored (old and new) and the
//! floating-point state it changed; steps whose effects could not be known are barriers.
//! Pure: the session records into it and moves the process along it; this only keeps and
//! answers.
//!
//! Positions: the recording holds steps `first..end`; position `k` is the program as it was
//! *before* step `k` ran, so `end` is the present. Steps are numbered from the start of the
//! recording and keep their numbers when a ring recording drops its oldest part.
//!
//! What it is not: a replayer of system calls or other threads (the session serializes and
//! records what the kernel wrote where it knows; the rest is a barrier), nor a store on
//! disk.

pub(crate) mod effects;

use std::collections::VecDeque;

/// Steps per chunk: a ring recording drops its oldest chunk at a time.
const CHUNK_STEPS: usize = 4096;

/// One recorded step, as pushed.
pub(crate) struct StepIn<'a> {
    pub tid: i32,
    pub pc: u64,
    /// `(register index, old, new)` of every general register that changed.
    pub regs: &'a [(u8, u64, u64)],
    /// `(address, old, new)`: old and new have the same length.
    pub stores: &'a [(u64, &'a [u8], &'a [u8])],
    /// `(offset in the XSAVE area, old, new)` of every 16-byte piece that changed.
    pub fp: &'a [(u32, [u8; 16], [u8; 16])],
    /// Why going back before this step is impossible (effects not recorded), if so.
    pub barrier: Option<String>,
    /// Memory it unmapped (munmap), to map again going back.
    pub unmapped: Vec<Unmapped>,
}

/// Private anonymous memory a step unmapped: where, how long, its protection, and its bytes
/// from `data_at` on (the pages before and after `data` held zeros).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unmapped {
    pub addr: u64,
    pub len: u64,
    pub prot: u64,
    pub data_at: u64,
    pub data: Vec<u8>,
}

/// The index of `rip` among the general registers (see `os::regs::REGISTER_NAMES`).
pub(crate) const RIP: u8 = 16;

#[derive(Clone, Copy)]
struct Store {
    addr: u64,
    len: u32,
    /// Where its old bytes start in the chunk's bytes (the new ones follow them).
    at: u32,
}

/// Up to [`CHUNK_STEPS`] steps, column by column: what a step costs is its pc and two
/// offsets, plus what it changed. A register is kept as old XOR new (one value takes it
/// either way), and `rip` not at all when the next step of the same thread begins where it
/// went (nearly always).
#[derive(Default)]
struct Chunk {
    first: u64,
    pcs: Vec<u64>,
    /// Where each step's registers and stores begin.
    starts: Vec<(u32, u32)>,
    reg_index: Vec<u8>,
    reg_xor: Vec<u64>,
    stores: Vec<Store>,
    bytes: Vec<u8>,
    /// `(step in the chunk, offset, old, new)`, by step: few steps touch vector state.
    fp: Vec<(u32, u32, [u8; 16], [u8; 16])>,
    /// `(first step in the chunk, thread)` of each run of one thread's steps.
    tids: Vec<(u32, i32)>,
    /// `(step in the chunk, what it unmapped)`, by step.
    unmapped: Vec<(u32, Unmapped)>,
}

impl Chunk {
    fn len(&self) -> usize {
        self.pcs.len()
    }

    fn size(&self) -> usize {
        self.pcs.len() * 16
            + self.reg_index.len() * 9
            + self.stores.len() * std::mem::size_of::<Store>()
            + self.bytes.len()
            + self.fp.len() * 40
            + self.tids.len() * 8
            + self
                .unmapped
                .iter()
                .map(|(_, u)| 40 + u.data.len())
                .sum::<usize>()
    }

    fn tid(&self, i: usize) -> i32 {
        let run = self.tids.partition_point(|(s, _)| *s as usize <= i);
        self.tids.get(run.wrapping_sub(1)).map_or(0, |(_, t)| *t)
    }

    fn ends(&self, i: usize) -> (usize, usize) {
        match self.starts.get(i + 1) {
            Some((r, s)) => (*r as usize, *s as usize),
            None => (self.reg_index.len(), self.stores.len()),
        }
    }
}

/// One step as read back.
pub(crate) struct StepView<'a> {
    pub index: u64,
    pub tid: i32,
    pub pc: u64,
    /// Where `rip` went, when the log keeps it implicitly (the next step's pc).
    pub next_pc: Option<u64>,
    /// Indexes of the registers it changed, and old XOR new of each (`rip` among them only
    /// when `next_pc` is `None`).
    pub reg_index: &'a [u8],
    pub reg_xor: &'a [u64],
    chunk: &'a Chunk,
    stores: &'a [Store],
    fp: &'a [(u32, u32, [u8; 16], [u8; 16])],
    unmapped: &'a [(u32, Unmapped)],
}

/// One store as read back.
pub(crate) struct StoreView<'a> {
    pub addr: u64,
    pub old: &'a [u8],
    pub new: &'a [u8],
}

impl<'a> StepView<'a> {
    pub(crate) fn stores(&self) -> impl Iterator<Item = StoreView<'a>> + 'a {
        let chunk = self.chunk;
        self.stores.iter().map(move |s| {
            let at = s.at as usize;
            let len = s.len as usize;
            StoreView {
                addr: s.addr,
                old: &chunk.bytes[at..at + len],
                new: &chunk.bytes[at + len..at + 2 * len],
            }
        })
    }

    /// `(offset in the XSAVE area, old, new)` of each 16-byte piece it changed.
    pub(crate) fn fp(&self) -> impl Iterator<Item = (u32, [u8; 16], [u8; 16])> + 'a {
        self.fp.iter().map(|(_, at, old, new)| (*at, *old, *new))
    }

    /// The memory it unmapped.
    pub(crate) fn unmapped(&self) -> impl Iterator<Item = &'a Unmapped> + 'a {
        self.unmapped.iter().map(|(_, u)| u)
    }

    /// Whether a store of this step touches `[addr, addr + len)`.
    pub(crate) fn stores_into(&self, addr: u64, len: u64) -> bool {
        self.stores
            .iter()
            .any(|s| s.addr < addr.saturating_add(len) && addr < s.addr + u64::from(s.len))
    }
}

/// What a push did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    Kept,
    /// The step is kept and the recording is at its limit (or a chunk's bytes would pass
    /// the 4 GiB its offsets reach): nothing more fits.
    Full,
    /// The step is kept and the oldest part was dropped to make room (a ring).
    Dropped,
}

/// The recording.
pub(crate) struct Log {
    chunks: VecDeque<Chunk>,
    end: u64,
    limit: u64,
    ring: bool,
    /// Steps that are barriers, with why, oldest first.
    barriers: Vec<(u64, String)>,
    /// Steps dropped from the front of a ring.
    dropped: u64,
}

impl Log {
    /// `limit`: most steps kept (a ring keeps at least two chunks: it drops one at a time).
    pub(crate) fn new(limit: u64, ring: bool) -> Log {
        let least = if ring { 2 * CHUNK_STEPS as u64 } else { 1 };
        Log {
            chunks: VecDeque::new(),
            end: 0,
            limit: limit.max(least),
            ring,
            barriers: Vec::new(),
            dropped: 0,
        }
    }

    pub(crate) fn first(&self) -> u64 {
        self.chunks.front().map_or(self.end, |c| c.first)
    }

    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    pub(crate) fn len(&self) -> u64 {
        self.end - self.first()
    }

    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    pub(crate) fn ring(&self) -> bool {
        self.ring
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Bytes the recording takes in memory (what it holds, not what its vectors reserved).
    pub(crate) fn bytes(&self) -> usize {
        self.chunks.iter().map(Chunk::size).sum()
    }

    pub(crate) fn push(&mut self, step: StepIn<'_>) -> Pushed {
        if self.chunks.back().is_none_or(|c| c.len() >= CHUNK_STEPS) {
            self.chunks.push_back(Chunk {
                first: self.end,
                ..Chunk::default()
            });
        }
        let Some(chunk) = self.chunks.back_mut() else {
            return Pushed::Full;
        };
        let i = chunk.len();
        // The previous step's rip is this step's pc: kept implicitly from now on.
        if let Some(prev) = i.checked_sub(1) {
            let explicit_rip = chunk.reg_index.last() == Some(&RIP)
                && (chunk.starts[prev].0 as usize) < chunk.reg_index.len();
            if explicit_rip
                && chunk.tid(prev) == step.tid
                && chunk.pcs[prev] ^ chunk.reg_xor.last().copied().unwrap_or(0) == step.pc
            {
                chunk.reg_index.pop();
                chunk.reg_xor.pop();
            }
        }
        if chunk.tids.last().is_none_or(|(_, t)| *t != step.tid) {
            chunk.tids.push((i as u32, step.tid));
        }
        chunk.pcs.push(step.pc);
        chunk
            .starts
            .push((chunk.reg_index.len() as u32, chunk.stores.len() as u32));
        // rip last, where the next push can take it back out.
        let mut rip = None;
        for (index, old, new) in step.regs {
            if *index == RIP {
                rip = Some(old ^ new);
            } else {
                chunk.reg_index.push(*index);
                chunk.reg_xor.push(old ^ new);
            }
        }
        if let Some(x) = rip {
            chunk.reg_index.push(RIP);
            chunk.reg_xor.push(x);
        }
        for (addr, old, new) in step.stores {
            let len = old.len().min(new.len());
            chunk.stores.push(Store {
                addr: *addr,
                len: len as u32,
                at: chunk.bytes.len() as u32,
            });
            chunk.bytes.extend_from_slice(&old[..len]);
            chunk.bytes.extend_from_slice(&new[..len]);
        }
        for (at, old, new) in step.fp {
            chunk.fp.push((i as u32, *at, *old, *new));
        }
        for u in step.unmapped {
            chunk.unmapped.push((i as u32, u));
        }
        let bytes_full = chunk.bytes.len() > (u32::MAX as usize) / 2;
        if let Some(why) = step.barrier {
            self.barriers.push((self.end, why));
        }
        self.end += 1;
        if bytes_full {
            return Pushed::Full;
        }
        if self.len() < self.limit {
            return Pushed::Kept;
        }
        if !self.ring || self.chunks.len() < 2 {
            return Pushed::Full;
        }
        if let Some(old) = self.chunks.pop_front() {
            self.dropped += old.len() as u64;
        }
        let first = self.first();
        self.barriers.retain(|(k, _)| *k >= first);
        Pushed::Dropped
    }

    /// Drops the steps from `at` on (the present is made there).
    pub(crate) fn truncate(&mut self, at: u64) {
        while self.chunks.len() > 1 && self.chunks.back().is_some_and(|c| c.first >= at) {
            self.chunks.pop_back();
        }
        if let Some(c) = self.chunks.back_mut() {
            let keep = at.saturating_sub(c.first) as usize;
            if keep < c.len() {
                let (r, s) = c.starts[keep];
                // The new last step's rip was kept as the next step's pc, which goes: kept
                // explicitly from now on.
                let last = keep.checked_sub(1);
                let implicit = last.filter(|&l| {
                    c.tid(l) == c.tid(keep)
                        && !c.reg_index[c.starts[l].0 as usize..r as usize].contains(&RIP)
                });
                let rip_xor = implicit.map(|l| c.pcs[l] ^ c.pcs[keep]);
                c.pcs.truncate(keep);
                c.starts.truncate(keep);
                c.reg_index.truncate(r as usize);
                c.reg_xor.truncate(r as usize);
                if let Some(x) = rip_xor {
                    c.reg_index.push(RIP);
                    c.reg_xor.push(x);
                }
                let bytes = c
                    .stores
                    .get(s as usize)
                    .map_or(c.bytes.len(), |st| st.at as usize);
                c.stores.truncate(s as usize);
                c.bytes.truncate(bytes);
                c.fp.retain(|(i, ..)| (*i as usize) < keep);
                c.unmapped.retain(|(i, _)| (*i as usize) < keep);
                c.tids.retain(|(i, _)| (*i as usize) < keep);
            }
        }
        self.end = self.end.min(at.max(self.first()));
        let end = self.end;
        self.barriers.retain(|(k, _)| *k < end);
    }

    /// Step `k` (`first <= k < end`).
    pub(crate) fn step(&self, k: u64) -> Option<StepView<'_>> {
        if k < self.first() || k >= self.end {
            return None;
        }
        // Chunks are full but for the last, so the chunk is found by division.
        let base = self.first();
        let ci = ((k - base) / CHUNK_STEPS as u64) as usize;
        let chunk = self.chunks.get(ci)?;
        let i = (k - chunk.first) as usize;
        let pc = *chunk.pcs.get(i)?;
        let (r0, s0) = chunk.starts[i];
        let (r1, s1) = chunk.ends(i);
        let reg_index = &chunk.reg_index[r0 as usize..r1];
        let next_pc = if reg_index.contains(&RIP) {
            None
        } else {
            // Left out because the next step of the thread begins where it went, or
            // because it did not change (a `rep` iteration).
            match chunk.pcs.get(i + 1) {
                Some(next) if chunk.tid(i + 1) == chunk.tid(i) => Some(*next),
                _ => Some(pc),
            }
        };
        let f0 = chunk.fp.partition_point(|(s, ..)| (*s as usize) < i);
        let f1 = chunk.fp.partition_point(|(s, ..)| (*s as usize) <= i);
        let u0 = chunk.unmapped.partition_point(|(s, _)| (*s as usize) < i);
        let u1 = chunk.unmapped.partition_point(|(s, _)| (*s as usize) <= i);
        Some(StepView {
            index: k,
            tid: chunk.tid(i),
            pc,
            next_pc,
            reg_index,
            reg_xor: &chunk.reg_xor[r0 as usize..r1],
            chunk,
            stores: &chunk.stores[s0 as usize..s1],
            fp: &chunk.fp[f0..f1],
            unmapped: &chunk.unmapped[u0..u1],
        })
    }

    /// The latest barrier among steps `from..to`: going back to `from` would undo it.
    pub(crate) fn barrier_in(&self, from: u64, to: u64) -> Option<(u64, &str)> {
        self.barriers
            .iter()
            .rev()
            .find(|(k, _)| *k >= from && *k < to)
            .map(|(k, why)| (*k, why.as_str()))
    }

    /// Every step whose stores touch `[addr, addr + len)`, oldest first.
    pub(crate) fn writes(&self, addr: u64, len: u64) -> Vec<StepView<'_>> {
        let end = addr.saturating_add(len);
        let mut out = Vec::new();
        for c in &self.chunks {
            let mut last = None;
            for (j, st) in c.stores.iter().enumerate() {
                if st.addr < end && addr < st.addr + u64::from(st.len) {
                    let i = c.starts.partition_point(|(_, s)| *s as usize <= j) - 1;
                    if last != Some(i) {
                        last = Some(i);
                        out.extend(self.step(c.first + i as u64));
                    }
                }
            }
        }
        out
    }

    /// The threads recorded, in order of their first step.
    pub(crate) fn threads(&self) -> Vec<i32> {
        let mut out: Vec<i32> = Vec::new();
        for (_, t) in self.chunks.iter().flat_map(|c| &c.tids) {
            if !out.contains(t) {
                out.push(*t);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(log: &mut Log, pc: u64, stores: &[(u64, &[u8], &[u8])], barrier: bool) -> Pushed {
        log.push(StepIn {
            tid: 7,
            pc,
            regs: &[(RIP, pc, pc + 1), (0, 1, 2)],
            stores,
            fp: &[],
            barrier: barrier.then(|| "read of an unknown buffer".to_string()),
            unmapped: Vec::new(),
        })
    }

    #[test]
    fn steps_read_back_with_their_stores() {
        let mut log = Log::new(100, false);
        push(&mut log, 0x10, &[], false);
        push(&mut log, 0x11, &[(0x5000, &[1, 2], &[3, 4])], false);
        push(&mut log, 0x12, &[(0x5001, &[4], &[9])], true);
        assert_eq!((log.first(), log.end()), (0, 3));
        let s = log.step(1).unwrap();
        // rip went where the next step begins: kept implicitly.
        assert_eq!(
            (s.pc, s.next_pc, s.reg_index),
            (0x11, Some(0x12), &[0u8][..])
        );
        // The last step keeps it.
        let last = log.step(2).unwrap();
        assert_eq!(
            (last.next_pc, last.reg_xor),
            (None, &[1 ^ 2, 0x12 ^ 0x13][..])
        );
        let st: Vec<_> = s.stores().map(|w| (w.addr, w.old, w.new)).collect();
        assert_eq!(st, vec![(0x5000, &[1u8, 2][..], &[3u8, 4][..])]);
        let who: Vec<u64> = log.writes(0x5001, 1).iter().map(|s| s.index).collect();
        assert_eq!(who, vec![1, 2]);
        assert!(log.writes(0x5002, 8).is_empty());
        assert_eq!(log.barrier_in(0, 3).map(|b| b.0), Some(2));
        assert_eq!(log.barrier_in(0, 2), None);
    }

    #[test]
    fn truncating_keeps_the_last_steps_rip() {
        let mut log = Log::new(100, false);
        for pc in [0x10, 0x11, 0x12] {
            push(&mut log, pc, &[], false);
        }
        // Step 1's rip is implicit (step 2 begins at 0x12) until step 2 is dropped.
        assert_eq!(log.step(1).unwrap().next_pc, Some(0x12));
        log.truncate(2);
        let s = log.step(1).unwrap();
        assert_eq!(log.end(), 2);
        assert_eq!(s.next_pc, None);
        let at = s.reg_index.iter().position(|i| *i == RIP).unwrap();
        assert_eq!(s.pc ^ s.reg_xor[at], 0x12);
    }

    #[test]
    fn a_limit_stops_and_a_ring_drops_the_oldest() {
        let mut log = Log::new(3, false);
        assert_eq!(push(&mut log, 1, &[], false), Pushed::Kept);
        assert_eq!(push(&mut log, 2, &[], false), Pushed::Kept);
        assert_eq!(push(&mut log, 3, &[], false), Pushed::Full);

        // A ring smaller than two chunks keeps two (it drops one at a time).
        assert_eq!(Log::new(1000, true).limit(), 2 * CHUNK_STEPS as u64);
        let mut ring = Log::new(2 * CHUNK_STEPS as u64, true);
        for pc in 0..(2 * CHUNK_STEPS as u64) {
            push(&mut ring, pc, &[], pc == 5);
        }
        assert_eq!(ring.first(), CHUNK_STEPS as u64);
        assert_eq!(ring.dropped(), CHUNK_STEPS as u64);
        assert_eq!(
            ring.step(CHUNK_STEPS as u64 + 3).unwrap().pc,
            CHUNK_STEPS as u64 + 3
        );
        assert!(ring.step(3).is_none());
        assert_eq!(ring.barrier_in(0, ring.end()), None);
    }
}
