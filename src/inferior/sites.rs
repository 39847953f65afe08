//! Software breakpoint sites: the int3 bytes scry has written and the bytes they replaced.
//! One site per address however many user breakpoints share it.

use std::collections::HashMap;

pub(crate) const INT3: u8 = 0xcc;

#[derive(Default)]
pub(crate) struct Sites {
    original: HashMap<u64, u8>,
}

impl Sites {
    pub(crate) fn contains(&self, addr: u64) -> bool {
        self.original.contains_key(&addr)
    }

    pub(crate) fn original(&self, addr: u64) -> Option<u8> {
        self.original.get(&addr).copied()
    }

    pub(crate) fn insert(&mut self, addr: u64, original: u8) {
        self.original.insert(addr, original);
    }

    pub(crate) fn remove(&mut self, addr: u64) -> Option<u8> {
        self.original.remove(&addr)
    }

    pub(crate) fn addrs(&self) -> Vec<u64> {
        self.original.keys().copied().collect()
    }

    /// Replaces int3 bytes in `buf` (read from `addr`) with the bytes they hide, so readers see
    /// the program as it is on disk. A site whose int3 is gone was overwritten by the program
    /// itself (self-modifying or JIT code): the program's bytes win over the saved one.
    pub(crate) fn unpatch(&self, addr: u64, buf: &mut [u8]) {
        if self.original.is_empty() {
            return;
        }
        let end = addr.saturating_add(buf.len() as u64);
        let restore = |byte: &mut u8, orig: u8| {
            if *byte == INT3 {
                *byte = orig;
            }
        };
        if buf.len() <= self.original.len() {
            for (i, byte) in buf.iter_mut().enumerate() {
                if let Some(orig) = self.original.get(&(addr + i as u64)) {
                    restore(byte, *orig);
                }
            }
        } else {
            for (&site, &orig) in &self.original {
                if site >= addr && site < end {
                    restore(&mut buf[(site - addr) as usize], orig);
                }
            }
        }
    }

    /// A write over sites: the saved originals take the new bytes and the int3s stay in the
    /// buffer that will be written, so the breakpoint survives the write.
    pub(crate) fn patch_write(&mut self, addr: u64, buf: &mut [u8]) {
        let end = addr.saturating_add(buf.len() as u64);
        for (&site, orig) in self.original.iter_mut() {
            if site >= addr && site < end {
                let i = (site - addr) as usize;
                *orig = buf[i];
                buf[i] = INT3;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_see_original_bytes() {
        let mut sites = Sites::default();
        sites.insert(0x1001, 0x55);
        let mut buf = [0x90, INT3, 0x90];
        sites.unpatch(0x1000, &mut buf);
        assert_eq!(buf, [0x90, 0x55, 0x90]);
        let mut outside = [INT3];
        sites.unpatch(0x2000, &mut outside);
        assert_eq!(outside, [INT3]);
    }

    #[test]
    fn bytes_the_program_wrote_over_a_site_win() {
        let mut sites = Sites::default();
        sites.insert(0x1001, 0x55);
        let mut buf = [0x90, 0x2a, 0x90];
        sites.unpatch(0x1000, &mut buf);
        assert_eq!(buf, [0x90, 0x2a, 0x90]);
    }

    #[test]
    fn writes_keep_the_int3() {
        let mut sites = Sites::default();
        sites.insert(0x1001, 0x55);
        let mut buf = [1, 2, 3];
        sites.patch_write(0x1000, &mut buf);
        assert_eq!(buf, [1, INT3, 3]);
        assert_eq!(sites.original(0x1001), Some(2));
    }
}
