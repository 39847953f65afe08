//! Registers and memory of the stopped target.

use super::*;

impl Session {
    // ---- registers and memory ----------------------------------------------------------

    pub fn selected_tid(&mut self) -> Result<Tid> {
        Ok(self.targets.view()?.selected())
    }

    /// The selected thread's registers (one GETREGS per stop), noted for `prev`.
    pub fn regs(&mut self) -> Result<RawRegs> {
        let process = self.targets.view()?;
        let tid = process.selected();
        let regs = process.regs(tid)?;
        self.at_stop.snapshot.note_regs(&regs);
        Ok(regs)
    }

    /// The registers of the stop a run ends with, read for `prev` at the next stop: a stop
    /// only notes the pc (a remote stub's reply carries it; the rest is a round trip that
    /// a listener letting the stop go never needs), and `prev.pc` after a plain `step()`
    /// should not depend on what the script read. Nothing where no thread can be read.
    pub(crate) fn note_shown_regs(&mut self) {
        if self.targets.live().is_ok_and(|p| !p.is_dead()) {
            let _ = self.regs();
        }
    }

    /// Why general register `name` has no value here (the target cannot give it), if so.
    pub(crate) fn register_unknown(&self, name: &str) -> Option<SessionError> {
        let process = self.targets.view_ref().ok()?;
        process.unknown_registers().contains(&name).then(|| {
            SessionError::NoValue(format!(
                "<unavailable: the remote stub sends no {name} register>"
            ))
        })
    }

    pub fn pc(&mut self) -> Result<u64> {
        Ok(self.regs()?.rip)
    }

    pub fn set_register(&mut self, name: &str, value: u64) -> Result<()> {
        self.check_writable("write a register")?;
        if let Some(unknown) = self.register_unknown(name) {
            return Err(unknown);
        }
        let index = regs::register_index(name)
            .ok_or_else(|| SessionError::Invalid(format!("no register '{name}'")))?;
        let mut raw = self.regs()?;
        regs::set_register(&mut raw, index, value);
        let inferior = self.targets.live()?;
        let tid = inferior.selected();
        let kept = inferior.set_regs_read_back(tid, &raw)?;
        self.at_stop.snapshot.note_regs(&kept);
        self.wrote_into_program("a register");
        Ok(())
    }

    pub fn read_memory(&mut self, addr: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.targets.view()?.read_memory(addr, &mut buf)?;
        self.at_stop.snapshot.note_memory(addr, &buf);
        Ok(buf)
    }

    /// Reads up to `max` bytes, stopping early at unmapped memory (for strings).
    pub fn read_memory_partial(&mut self, addr: u64, max: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; max];
        let process = self.targets.view()?;
        let n = process.read_memory_partial(addr, &mut buf);
        if n == 0 && max > 0 {
            // Why the first byte is unreadable (a core can say more than "not mapped").
            process.read_memory(addr, &mut [0u8])?;
            return Err(crate::os::OsError::Unmapped { addr, len: max }.into());
        }
        buf.truncate(n);
        Ok(buf)
    }

    pub fn write_memory(&mut self, addr: u64, bytes: &[u8]) -> Result<()> {
        self.check_writable("write memory")?;
        self.targets.live()?.write_memory(addr, bytes)?;
        self.wrote_into_program("memory");
        Ok(())
    }

    pub(super) fn check_writable(&self, what: &str) -> Result<()> {
        if let Some(refusal) = self.targets.core_refusal(what) {
            return Err(refusal);
        }
        if self.config.read_only {
            return Err(SessionError::Invalid(format!(
                "read-only session: cannot {what}"
            )));
        }
        if self.replay_position().is_some() {
            return Err(self.past_refusal(what));
        }
        Ok(())
    }

    /// scry changed the program (a register, memory): steps recorded before no longer lead
    /// back from here, so the recording becomes history to read, not to move along.
    pub(super) fn wrote_into_program(&mut self, what: &str) {
        if let Some(rec) = &mut self.timeline.recording {
            if rec.stale.is_none() {
                rec.stale = Some(format!(
                    "scry wrote into the program ({what}) after it was recorded"
                ));
                rec.active = false;
                self.at_stop.carried_notes.push(format!(
                    "the recording ended and can no longer be moved along: scry wrote into the program ({what})"
                ));
            }
        }
    }

    pub fn prev_regs(&self) -> Option<&RawRegs> {
        self.at_stop.snapshot.prev_regs()
    }

    pub fn prev_memory(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        self.at_stop.snapshot.prev_memory(addr, len)
    }

    pub fn output(&mut self) -> String {
        self.output.settle();
        self.output.take()
    }

    pub fn thread_ids(&mut self) -> Result<Vec<Tid>> {
        Ok(self.targets.view()?.thread_ids())
    }
}
