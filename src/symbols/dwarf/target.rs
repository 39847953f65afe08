//! What values read: the target's memory, names for its code addresses and, for static and
//! thread-local members, where their module is; and the front end's printers, when values
//! are printed through them. The session implements it over a live process or a core file;
//! the DWARF side only asks.

use super::pretty::Pretty;

/// What values read: target memory, and names for code addresses.
pub trait Target {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool;
    /// `add` or `add+0x4` for a code address.
    fn symbolize(&self, addr: u64) -> Option<String>;
    /// The load bias of the module whose DWARF describes the values: where a static
    /// member's storage is (its definition gives a link-time address). `None`: unknown, and
    /// such a member reads as unavailable.
    fn load_bias(&self) -> Option<u64> {
        None
    }
    /// The address of `offset` in that module's thread-local block (a `thread_local`
    /// static member), for the selected thread.
    fn tls_address(&self, _offset: u64) -> Option<u64> {
        None
    }
    /// The front end's printers, if values are printed through them.
    fn pretty(&self) -> Option<&dyn Pretty> {
        None
    }
}

/// A `Target` whose memory is read a page at a time and kept: one conversion of a large
/// value (100,000 elements of a vector) costs a read per page instead of one per element.
/// Only for the length of one read-only walk: the target does not run meanwhile.
pub(crate) struct PageCache<'a> {
    inner: &'a dyn Target,
    /// Page address to its bytes, `None` for a page that could not be read whole.
    pages: std::cell::RefCell<std::collections::HashMap<u64, Option<Box<[u8]>>>>,
}

impl<'a> PageCache<'a> {
    const PAGE: u64 = 4096;
    /// Pages kept at most (16 MiB); past that the cache starts over.
    const MAX_PAGES: usize = 4096;

    pub(crate) fn new(inner: &'a dyn Target) -> Self {
        PageCache {
            inner,
            pages: Default::default(),
        }
    }

    /// Copies `buf.len()` bytes at `addr` from cached pages; false if one is unreadable.
    fn cached(&self, addr: u64, buf: &mut [u8]) -> bool {
        let mut pages = self.pages.borrow_mut();
        let mut done = 0usize;
        while done < buf.len() {
            let at = addr.wrapping_add(done as u64);
            let page = at & !(Self::PAGE - 1);
            if !pages.contains_key(&page) {
                if pages.len() >= Self::MAX_PAGES {
                    pages.clear();
                }
                let mut bytes = vec![0u8; Self::PAGE as usize].into_boxed_slice();
                let ok = self.inner.read(page, &mut bytes);
                pages.insert(page, ok.then_some(bytes));
            }
            let Some(Some(bytes)) = pages.get(&page) else {
                return false;
            };
            let from = (at - page) as usize;
            let n = (bytes.len() - from).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&bytes[from..from + n]);
            done += n;
        }
        true
    }
}

impl Target for PageCache<'_> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        // A page that cannot be read whole (a device mapping, a stub that refuses) is read
        // as asked, so the cache never answers differently than the target.
        self.cached(addr, buf) || self.inner.read(addr, buf)
    }

    fn symbolize(&self, addr: u64) -> Option<String> {
        self.inner.symbolize(addr)
    }

    fn load_bias(&self) -> Option<u64> {
        self.inner.load_bias()
    }

    fn tls_address(&self, offset: u64) -> Option<u64> {
        self.inner.tls_address(offset)
    }

    fn pretty(&self) -> Option<&dyn Pretty> {
        self.inner.pretty()
    }
}
