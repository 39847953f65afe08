//! The user's breakpoints: ids, names and hit counts. Sites (the int3 bytes) belong to the
//! inferior; several breakpoints may share one site.

#[derive(Debug, Clone)]
pub struct Breakpoint {
    pub id: u32,
    pub addr: u64,
    pub name: Option<String>,
    /// What the user asked for (`main+4`), for listings.
    pub spec: String,
    pub hits: u64,
    /// Its int3 is in the current process. Breakpoints outlive a process: when it ends they
    /// wait, and the next spawn/attach/exec re-arms them from `spec`.
    pub armed: bool,
}

#[derive(Default)]
pub struct BreakpointTable {
    list: Vec<Breakpoint>,
    next_id: u32,
}

/// A breakpoint named by id or by name.
pub enum BreakpointRef<'a> {
    Id(u32),
    Name(&'a str),
}

impl BreakpointTable {
    pub fn add(&mut self, addr: u64, name: Option<String>, spec: String) -> u32 {
        self.next_id += 1;
        let id = self.next_id;
        self.list.push(Breakpoint {
            id,
            addr,
            name,
            spec,
            hits: 0,
            armed: true,
        });
        id
    }

    /// A breakpoint waiting for its location to load (see `dynamic`).
    pub fn add_pending(&mut self, name: Option<String>, spec: String) -> u32 {
        let id = self.add(0, name, spec);
        if let Some(b) = self.list.last_mut() {
            b.armed = false;
        }
        id
    }

    pub fn find(&self, r: &BreakpointRef) -> Option<&Breakpoint> {
        self.list.iter().find(|b| match r {
            BreakpointRef::Id(id) => b.id == *id,
            BreakpointRef::Name(n) => b.name.as_deref() == Some(*n),
        })
    }

    pub fn name_taken(&self, name: &str) -> bool {
        self.list.iter().any(|b| b.name.as_deref() == Some(name))
    }

    /// Removes one breakpoint; returns it and whether its address still has another.
    pub fn remove(&mut self, r: &BreakpointRef) -> Option<(Breakpoint, bool)> {
        let pos = self.list.iter().position(|b| match r {
            BreakpointRef::Id(id) => b.id == *id,
            BreakpointRef::Name(n) => b.name.as_deref() == Some(*n),
        })?;
        let bp = self.list.remove(pos);
        let shared = self.list.iter().any(|b| b.armed && b.addr == bp.addr);
        Some((bp, shared))
    }

    /// Counts a hit at `addr` on every breakpoint there; returns the first (lowest id).
    pub fn hit(&mut self, addr: u64) -> Option<&Breakpoint> {
        let mut first = None;
        for (i, b) in self.list.iter_mut().enumerate() {
            if b.armed && b.addr == addr {
                b.hits += 1;
                first.get_or_insert(i);
            }
        }
        first.map(|i| &self.list[i])
    }

    pub fn list(&self) -> &[Breakpoint] {
        &self.list
    }

    /// The process is gone: every breakpoint waits for the next one.
    pub fn disarm_all(&mut self) {
        for b in &mut self.list {
            b.armed = false;
        }
    }

    pub fn list_mut(&mut self) -> &mut [Breakpoint] {
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
        assert_eq!(t.hit(0x10).map(|b| b.id), Some(a));
        assert_eq!(t.list()[1].hits, 1);
        let (removed, shared) = t.remove(&BreakpointRef::Name("a")).unwrap();
        assert_eq!(removed.id, a);
        assert!(shared);
        let (_, shared) = t.remove(&BreakpointRef::Id(b)).unwrap();
        assert!(!shared);
        assert!(t.hit(0x10).is_none());
    }
}
