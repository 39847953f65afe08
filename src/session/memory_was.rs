//! Reading memory as it was: while a watch hit's old side is printed, the watched bytes from
//! before the write stand in for that range, and any read elsewhere fails and is noted. A
//! printer (a `std::string`'s text in its own buffer) then shows the old value whole when all
//! it reads was watched, and the caller knows to fall back when it read further: memory
//! outside the range holds what is there now, not what was there then.

use std::cell::{Cell, RefCell};

use super::*;

/// The bytes of `addr..addr + bytes.len()` as they were, and whether a read left them.
pub(super) struct MemoryWas {
    addr: u64,
    bytes: Vec<u8>,
    strayed: Cell<bool>,
}

impl MemoryWas {
    /// Fills `buf` from the old bytes when `addr..addr + buf.len()` lies within them; any
    /// other read is refused. One that starts outside them is noted: what it wanted is not
    /// kept. One that starts inside and runs past their end is not: a text is read a chunk
    /// at a time and then unit by unit where a chunk fails, and its terminator may well be
    /// inside (a unit read past the end starts outside and is noted).
    pub(super) fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        let Some(off) = addr
            .checked_sub(self.addr)
            .and_then(|off| usize::try_from(off).ok())
            .filter(|&off| off < self.bytes.len())
        else {
            self.strayed.set(true);
            return false;
        };
        match self.bytes.get(off..off.saturating_add(buf.len())) {
            Some(old) => {
                buf.copy_from_slice(old);
                true
            }
            None => false,
        }
    }
}

/// Where the session keeps the overlay while one is in force.
pub(super) type MemoryWasSlot = RefCell<Option<MemoryWas>>;

impl Session {
    /// `f` run with memory read as it was: `bytes` at `addr`, nothing else (see the
    /// module's doc). `None` when `f` read outside them: its answer would mix then and now.
    pub fn as_memory_was<T>(
        &self,
        addr: u64,
        bytes: &[u8],
        f: impl FnOnce(&Self) -> T,
    ) -> Option<T> {
        *self.memory_was.borrow_mut() = Some(MemoryWas {
            addr,
            bytes: bytes.to_vec(),
            strayed: Cell::new(false),
        });
        // Taken back out even when `f` unwinds (a printer's panic is caught further up).
        struct Clear<'a>(&'a MemoryWasSlot);
        impl Drop for Clear<'_> {
            fn drop(&mut self) {
                self.0.borrow_mut().take();
            }
        }
        let clear = Clear(&self.memory_was);
        let out = f(self);
        let strayed = clear
            .0
            .borrow()
            .as_ref()
            .is_some_and(|was| was.strayed.get());
        (!strayed).then_some(out)
    }
}
