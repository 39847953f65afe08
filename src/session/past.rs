//! Asking the recording without moving along it: `history.writes()` (every recorded store
//! into a range, with the range's bytes before and after), `history.steps()` and
//! `record.status()`.

use std::collections::HashMap;

use super::replay::overlay;
use super::*;

/// One recorded store into memory, as `history.writes()` reports it.
pub(crate) struct PastWrite {
    pub step: u64,
    pub tid: Tid,
    pub pc: u64,
    /// The instruction and where it is (`function file:line`).
    pub insn: Option<String>,
    pub place: Option<String>,
    /// The range's bytes before and after the step.
    pub old: Vec<u8>,
    pub new: Vec<u8>,
}

/// What `record.status()` reports.
pub(crate) struct RecordStatus {
    pub active: bool,
    pub steps: u64,
    pub first: u64,
    pub end: u64,
    pub at: u64,
    pub bytes: usize,
    pub threads: Vec<Tid>,
    pub limit: u64,
    pub ring: bool,
    pub dropped: u64,
    pub stale: Option<String>,
}

/// Most writes `history.writes()` returns (the latest ones; the count of the others is said).
pub(crate) const WRITES_SHOWN: usize = 10_000;

impl Session {
    /// Every recorded step that changed `[addr, addr + len)`, oldest first (the latest
    /// [`WRITES_SHOWN`] of them), with the range's bytes before and after it, and how many
    /// older ones were left out.
    pub(crate) fn history_writes(
        &mut self,
        addr: u64,
        len: u64,
    ) -> Result<(Vec<PastWrite>, usize)> {
        if len > 4096 {
            return Err(SessionError::Invalid(format!(
                "history.writes: len {len} is over 4096 bytes (ask about a variable, not a region)"
            )));
        }
        // The range as it is in the present: memory now, with what the steps from the
        // position on would write.
        let mut value = self.read_memory(addr, len as usize).map_err(|e| match e {
            SessionError::NoProcess(_) => SessionError::Invalid(
                "history.writes needs the process: the bytes a write left alone are read from it (record.status() still answers)".into(),
            ),
            e => e,
        })?;
        let rec = self.timeline.recording.as_ref().ok_or_else(|| {
            SessionError::Invalid("no recording: record.start() records from here on".into())
        })?;
        for k in rec.at..rec.log.end() {
            if let Some(step) = rec.log.step(k).filter(|s| s.stores_into(addr, len)) {
                for st in step.stores() {
                    overlay(&mut value, addr, st.addr, st.new);
                }
            }
        }
        // Back from the present, each write's old bytes make the value before it (a store
        // keeps only the bytes it changed; the rest of the range is the value's).
        let steps = rec.log.writes(addr, len);
        let left_out = steps.len().saturating_sub(WRITES_SHOWN);
        let mut out = Vec::with_capacity(steps.len() - left_out);
        for s in steps[left_out..].iter().rev() {
            let new = value.clone();
            for st in s.stores().collect::<Vec<_>>().iter().rev() {
                overlay(&mut value, addr, st.addr, st.old);
            }
            out.push(PastWrite {
                step: s.index,
                tid: s.tid,
                pc: s.pc,
                insn: None,
                place: None,
                old: value.clone(),
                new,
            });
        }
        out.reverse();
        // Writes in a loop come from a few instructions: each is described once.
        let mut described: HashMap<u64, (Option<String>, Option<String>)> = HashMap::new();
        for w in &mut out {
            let (insn, place) = match described.get(&w.pc) {
                Some(d) => d.clone(),
                None => {
                    let insn = self.disasm(w.pc, 1).ok().and_then(|i| i.into_iter().next());
                    let place = match (self.symbolize(w.pc), self.source_position(w.pc)) {
                        (Some(sym), Some(src)) => Some(format!("{sym} {src}")),
                        (Some(sym), None) => Some(sym),
                        (None, src) => src,
                    };
                    let d = (insn.map(|i| i.text), place);
                    described.insert(w.pc, d.clone());
                    d
                }
            };
            (w.insn, w.place) = (insn, place);
        }
        Ok((out, left_out))
    }

    /// The recorded steps `from..to` (the whole recording when not given), at most
    /// [`WRITES_SHOWN`] of them: `(step, thread, pc)`.
    pub fn history_steps(
        &self,
        from: Option<u64>,
        to: Option<u64>,
    ) -> Result<Vec<(u64, Tid, u64)>> {
        let rec = self.timeline.recording.as_ref().ok_or_else(|| {
            SessionError::Invalid("no recording: record.start() records from here on".into())
        })?;
        let (first, end) = (rec.log.first(), rec.log.end());
        let from = from.unwrap_or(first).max(first);
        let to = to.unwrap_or(end).min(end);
        if to.saturating_sub(from) > WRITES_SHOWN as u64 {
            return Err(SessionError::Invalid(format!(
                "history.steps({from}, {to}): at most {WRITES_SHOWN} steps at once (the recording holds {first} to {end})"
            )));
        }
        Ok((from..to)
            .filter_map(|k| rec.log.step(k).map(|s| (k, s.tid, s.pc)))
            .collect())
    }

    pub(crate) fn record_status(&self) -> Option<RecordStatus> {
        let rec = self.timeline.recording.as_ref()?;
        Some(RecordStatus {
            active: rec.active,
            steps: rec.log.len(),
            first: rec.log.first(),
            end: rec.log.end(),
            at: rec.at,
            bytes: rec.log.bytes(),
            threads: rec.log.threads(),
            limit: rec.log.limit(),
            ring: rec.log.ring(),
            dropped: rec.log.dropped(),
            stale: rec.stale.clone(),
        })
    }
}
