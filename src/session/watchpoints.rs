//! The user's hardware watchpoints: ids, names, hit counts, and the last value seen at each,
//! which is how a hit knows the value before the access.

use crate::os::debugregs::Access;
use crate::os::Tid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchKind {
    /// Reads only. x86 cannot trap on reads alone: the slot traps on reads and writes, and
    /// accesses that change the value are let through without a stop.
    Read,
    Write,
    ReadWrite,
}

impl WatchKind {
    pub fn parse(text: &str) -> Option<WatchKind> {
        match text {
            "r" => Some(WatchKind::Read),
            "w" => Some(WatchKind::Write),
            "rw" | "wr" => Some(WatchKind::ReadWrite),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            WatchKind::Read => "r",
            WatchKind::Write => "w",
            WatchKind::ReadWrite => "rw",
        }
    }

    pub fn hardware(self) -> Access {
        match self {
            WatchKind::Write => Access::Write,
            WatchKind::Read | WatchKind::ReadWrite => Access::ReadWrite,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Watchpoint {
    pub id: u32,
    pub addr: u64,
    pub len: u64,
    pub kind: WatchKind,
    pub name: Option<String>,
    pub hits: u64,
    /// The debug registers it holds: one per aligned piece of `[addr, addr + len)` (a
    /// 16-byte watch is two 8-byte pieces), up to all four.
    pub slots: Vec<usize>,
    /// The watched bytes as of the last hit (or when set).
    pub last: Vec<u8>,
    /// The same for the other processes of a tree it was armed in (`pid`, bytes): a hit
    /// there says that process's old value, also after the selection moved.
    pub last_in: Vec<(Tid, Vec<u8>)>,
    /// What the user asked for, to re-arm it in the next process.
    pub spec: String,
    /// Armed in the current process (see `Breakpoint::armed`).
    pub armed: bool,
    /// What the watched bytes are, when set on a variable or a typed value: a hit shows
    /// them as that type (`1 -> 2.5`, not `0x3f800000 -> 0x40200000`).
    pub ty: Option<crate::session::TypedValue>,
    /// The frame whose stack holds the watched bytes (a local's): once it has returned, the
    /// next access is to whatever reuses the slot, and the watchpoint ends there.
    pub scope: Option<WatchScope>,
}

impl Watchpoint {
    /// How a hit names it: the user's name, else what was watched when that is a name or a
    /// path (`counter`, `t->count`), as gdb's `Hardware watchpoint 1: counter`; an address
    /// says nothing its stop line does not.
    pub(super) fn shown_name(&self) -> Option<String> {
        self.name.clone().or_else(|| {
            let spec = self.spec.trim();
            let numeric = spec.starts_with(|c: char| c.is_ascii_digit());
            (!spec.is_empty() && !numeric).then(|| spec.to_string())
        })
    }
}

/// A stack frame a watchpoint lives in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchScope {
    /// The thread whose stack it is.
    pub tid: Tid,
    /// The frame's canonical frame address: the thread's stack pointer reaches it when the
    /// frame returns (or is unwound past).
    pub cfa: u64,
    /// The return address below it: a later call from the caller (the dead frame's stack
    /// reused before the stack pointer gets back up) puts its own there.
    pub ret: u64,
    /// The function, for the report (`main`).
    pub function: String,
}

/// One access a hit stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub id: u32,
    pub is_write: bool,
    pub old: Vec<u8>,
    pub new: Vec<u8>,
}

#[derive(Default)]
pub(crate) struct WatchTable {
    list: Vec<Watchpoint>,
    next_id: u32,
}

impl WatchTable {
    pub(crate) fn add(&mut self, mut w: Watchpoint) -> u32 {
        self.next_id += 1;
        w.id = self.next_id;
        self.list.push(w);
        self.next_id
    }

    pub(crate) fn name_taken(&self, name: &str) -> bool {
        self.list.iter().any(|w| w.name.as_deref() == Some(name))
    }

    pub(crate) fn remove_by(&mut self, pred: impl Fn(&Watchpoint) -> bool) -> Option<Watchpoint> {
        let pos = self.list.iter().position(pred)?;
        Some(self.list.remove(pos))
    }

    pub(crate) fn by_slot_mut(&mut self, slot: usize) -> Option<&mut Watchpoint> {
        self.list
            .iter_mut()
            .find(|w| w.armed && w.slots.contains(&slot))
    }

    /// The armed watchpoints holding the debug registers in `slots` (a bit each), once each.
    pub(crate) fn ids_of(&self, slots: u8) -> Vec<u32> {
        let mut ids = Vec::new();
        for slot in (0..crate::os::debugregs::SLOTS).filter(|s| slots & (1 << s) != 0) {
            // A watchpoint's registers need not be next to each other (0 and 2, another's 1).
            match self.by_slot(slot) {
                Some(w) if !ids.contains(&w.id) => ids.push(w.id),
                _ => {}
            }
        }
        ids
    }

    /// The armed watchpoint holding debug register `slot`.
    pub(crate) fn by_slot(&self, slot: usize) -> Option<&Watchpoint> {
        self.list
            .iter()
            .find(|w| w.armed && w.slots.contains(&slot))
    }

    /// Keeps each watchpoint's last value as process `pid`'s (the selection leaves it).
    pub(crate) fn stash_values(&mut self, pid: Tid) {
        // An unarmed one's value is not this process's.
        for w in self.list.iter_mut().filter(|w| w.armed) {
            w.last_in.retain(|(p, _)| *p != pid);
            w.last_in.push((pid, w.last.clone()));
        }
    }

    /// Forgets what was kept for process `pid` (it ended: its pid may come back as another).
    pub(crate) fn forget_values(&mut self, pid: Tid) {
        for w in &mut self.list {
            w.last_in.retain(|(p, _)| *p != pid);
        }
    }

    /// Makes process `pid`'s kept values the last ones (it is selected now).
    pub(crate) fn restore_values(&mut self, pid: Tid) {
        for w in &mut self.list {
            if let Some(i) = w.last_in.iter().position(|(p, _)| *p == pid) {
                w.last = w.last_in.swap_remove(i).1;
            }
        }
    }

    pub(crate) fn disarm_all(&mut self) {
        for w in &mut self.list {
            w.armed = false;
        }
    }

    pub(crate) fn list_mut(&mut self) -> &mut [Watchpoint] {
        &mut self.list
    }

    pub(crate) fn list(&self) -> &[Watchpoint] {
        &self.list
    }

    /// What watchpoint `id`'s next hit takes as the value before.
    pub(crate) fn set_last(&mut self, id: u32, bytes: Vec<u8>) {
        if let Some(w) = self.list.iter_mut().find(|w| w.id == id) {
            w.last = bytes;
        }
    }

    /// Books a hit on `slot` given the bytes there now and, when the instruction that made
    /// the access says, whether it wrote them. `None` when the access is not one the
    /// watchpoint reports (a write on a read watch). Without the instruction's word, a
    /// changed value counts as a write and an unchanged one as a read.
    pub(crate) fn hit(&mut self, slot: usize, now: Vec<u8>, wrote: Option<bool>) -> Option<Hit> {
        let w = self.by_slot_mut(slot)?;
        let changed = now != w.last;
        let old = std::mem::replace(&mut w.last, now.clone());
        let wrote = wrote.unwrap_or(changed);
        let is_write = match w.kind {
            WatchKind::Write => true,
            WatchKind::ReadWrite => wrote,
            WatchKind::Read if wrote => return None,
            WatchKind::Read => false,
        };
        w.hits += 1;
        Some(Hit {
            id: w.id,
            is_write,
            old,
            new: now,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(kind: WatchKind) -> Watchpoint {
        Watchpoint {
            id: 0,
            addr: 0x10,
            len: 4,
            kind,
            name: None,
            hits: 0,
            slots: vec![0],
            last: vec![0; 4],
            last_in: Vec::new(),
            ty: None,
            scope: None,
            spec: "0x10".into(),
            armed: true,
        }
    }

    #[test]
    fn hits_track_old_values_and_kinds() {
        let mut t = WatchTable::default();
        t.add(watch(WatchKind::ReadWrite));
        let a = t.hit(0, vec![1, 0, 0, 0], None).unwrap();
        assert!(a.is_write);
        assert_eq!(a.old, vec![0; 4]);
        let b = t.hit(0, vec![1, 0, 0, 0], None).unwrap();
        assert!(!b.is_write, "an unchanged value is a read");
        assert_eq!(t.list()[0].hits, 2);
    }

    #[test]
    fn read_watches_skip_writes() {
        let mut t = WatchTable::default();
        t.add(watch(WatchKind::Read));
        // Without the instruction's word, a changed value is taken for a write.
        assert!(t.hit(0, vec![2, 0, 0, 0], None).is_none());
        assert_eq!(t.list()[0].hits, 0);
        assert!(t.hit(0, vec![2, 0, 0, 0], None).is_some());
        // The instruction's word wins: a write of the same value is still a write.
        assert!(t.hit(0, vec![2, 0, 0, 0], Some(true)).is_none());
        assert!(!t.hit(0, vec![3, 0, 0, 0], Some(false)).unwrap().is_write);
    }

    #[test]
    fn fired_registers_name_each_watchpoint_once() {
        let mut t = WatchTable::default();
        // A wide watch in registers 0 and 2, another in 1 between them.
        let wide = t.add(Watchpoint {
            slots: vec![0, 2],
            ..watch(WatchKind::Write)
        });
        let narrow = t.add(Watchpoint {
            slots: vec![1],
            ..watch(WatchKind::Write)
        });
        assert_eq!(t.ids_of(0b111), vec![wide, narrow]);
        assert_eq!(t.ids_of(0b101), vec![wide]);
        assert_eq!(t.ids_of(0b1000), Vec::<u32>::new());
    }
}
