//! The user's breakpoints: ids, names and hit counts. Sites (the int3 bytes) belong to the
//! inferior; several breakpoints may share one site.

use crate::os::Tid;

#[derive(Debug, Clone)]
pub struct Breakpoint {
    pub id: u32,
    pub addr: u64,
    /// Further addresses of the same breakpoint: the other inlined copies of a
    /// `file.c:line` (gdb's locations 1.2, 1.3, ...). Armed and hit like `addr`.
    pub more: Vec<u64>,
    pub name: Option<String>,
    /// What the user asked for (`main+4`), for listings.
    pub spec: String,
    pub hits: u64,
    /// `hits` by process, in the order first hit (a tree of processes counts each).
    pub by_process: Vec<(Tid, u64)>,
    /// How it stops (`{hardware}`): `Some(true)` a debug register, `Some(false)` an int3,
    /// `None` a debug register while one is free.
    pub hardware: Option<bool>,
    /// Its int3 is in the current process. Breakpoints outlive a process: when it ends they
    /// wait, and the next spawn/attach/exec re-arms them from `spec`.
    pub armed: bool,
}

impl Breakpoint {
    /// Every address it stops at: `addr`, then `more`.
    pub fn addresses(&self) -> impl Iterator<Item = u64> + '_ {
        std::iter::once(self.addr).chain(self.more.iter().copied())
    }

    pub fn at(&self, addr: u64) -> bool {
        self.addr == addr || self.more.contains(&addr)
    }
}

#[derive(Default)]
pub(crate) struct BreakpointTable {
    list: Vec<Breakpoint>,
    next_id: u32,
}

/// A breakpoint named by id or by name.
pub enum BreakpointRef<'a> {
    Id(u32),
    Name(&'a str),
}

impl BreakpointTable {
    pub(crate) fn add(&mut self, addr: u64, name: Option<String>, spec: String) -> u32 {
        self.next_id += 1;
        let id = self.next_id;
        self.list.push(Breakpoint {
            id,
            addr,
            more: Vec::new(),
            name,
            spec,
            hits: 0,
            by_process: Vec::new(),
            hardware: None,
            armed: true,
        });
        id
    }

    /// A breakpoint waiting for its location to load (see `dynamic`).
    pub(crate) fn add_pending(&mut self, name: Option<String>, spec: String) -> u32 {
        let id = self.add(0, name, spec);
        if let Some(b) = self.list.last_mut() {
            b.armed = false;
        }
        id
    }

    pub(crate) fn name_taken(&self, name: &str) -> bool {
        self.list.iter().any(|b| b.name.as_deref() == Some(name))
    }

    /// Removes one breakpoint; returns it and those of its addresses no other armed
    /// breakpoint has (their int3 can go).
    pub(crate) fn remove(&mut self, r: &BreakpointRef) -> Option<(Breakpoint, Vec<u64>)> {
        let pos = self.list.iter().position(|b| match r {
            BreakpointRef::Id(id) => b.id == *id,
            BreakpointRef::Name(n) => b.name.as_deref() == Some(*n),
        })?;
        let bp = self.list.remove(pos);
        let alone = bp.addresses().filter(|&a| !self.is_user_site(a)).collect();
        Some((bp, alone))
    }

    /// Whether an armed breakpoint has an int3 at `addr`.
    pub(crate) fn is_user_site(&self, addr: u64) -> bool {
        self.list.iter().any(|b| b.armed && b.at(addr))
    }

    /// Counts a hit at `addr` on every breakpoint there; returns the first (lowest id).
    /// Counts a hit at `addr` in process `pid` on every armed breakpoint there; the first.
    pub(crate) fn hit(&mut self, addr: u64, pid: Tid) -> Option<&Breakpoint> {
        let mut first = None;
        for (i, b) in self.list.iter_mut().enumerate() {
            if b.armed && b.at(addr) {
                b.hits += 1;
                match b.by_process.iter_mut().find(|p| p.0 == pid) {
                    Some(p) => p.1 += 1,
                    None => b.by_process.push((pid, 1)),
                }
                first.get_or_insert(i);
            }
        }
        first.map(|i| &self.list[i])
    }

    pub(crate) fn list(&self) -> &[Breakpoint] {
        &self.list
    }

    /// Every address an armed breakpoint stops at (the int3 sites of the user's breakpoints).
    pub(crate) fn armed_addresses(&self) -> Vec<u64> {
        self.list()
            .iter()
            .filter(|b| b.armed)
            .flat_map(|b| b.addresses())
            .collect()
    }

    /// The process is gone: every breakpoint waits for the next one.
    pub(crate) fn disarm_all(&mut self) {
        for b in &mut self.list {
            b.armed = false;
            b.more.clear();
        }
    }

    pub(crate) fn list_mut(&mut self) -> &mut [Breakpoint] {
        &mut self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_sites_and_hits() {
        let mut t = BreakpointTable::default();
        let a = t.add(0x10, Some("a".into()), "f".into());
        let b = t.add(0x10, None, "0x10".into());
        assert_eq!(t.hit(0x10, 7).map(|b| b.id), Some(a));
        assert_eq!(t.list()[1].hits, 1);
        let (removed, alone) = t.remove(&BreakpointRef::Name("a")).unwrap();
        assert_eq!(removed.id, a);
        assert!(alone.is_empty());
        let (_, alone) = t.remove(&BreakpointRef::Id(b)).unwrap();
        assert_eq!(alone, vec![0x10]);
        assert!(t.hit(0x10, 7).is_none());
    }

    #[test]
    fn a_breakpoint_with_several_locations() {
        let mut t = BreakpointTable::default();
        let a = t.add(0x10, None, "f.c:3".into());
        t.list_mut()[0].more = vec![0x40, 0x80];
        let b = t.add(0x40, None, "0x40".into());
        assert_eq!(t.hit(0x80, 7).map(|b| b.id), Some(a));
        assert_eq!(t.hit(0x40, 8).map(|b| b.id), Some(a));
        assert_eq!(t.hit(0x40, 7).map(|b| b.id), Some(a));
        assert_eq!(t.list()[0].hits, 3);
        // Counted by process too, in the order first hit.
        assert_eq!(t.list()[0].by_process, vec![(7, 2), (8, 1)]);
        assert_eq!(t.list()[1].hits, 2);
        let (_, alone) = t.remove(&BreakpointRef::Id(a)).unwrap();
        assert_eq!(alone, vec![0x10, 0x80], "0x40 keeps breakpoint {b}'s int3");
    }
}
