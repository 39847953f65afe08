//! Two address spaces that are easy to mix up: what the ELF file says (`FileAddr`, the link-time
//! virtual address) and what the running process sees (`RuntimeAddr`). They differ by the load
//! bias the kernel or ld.so picked for a PIE or shared object, so the types keep them apart.

use std::fmt;

/// An address as the running process sees it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct RuntimeAddr(pub u64);

/// A virtual address as written in the ELF file (symbol values, program headers).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct FileAddr(pub u64);

/// `runtime - file` for one loaded module. Zero for a non-PIE executable. Arithmetic wraps
/// because a bias is conceptually signed (a prelinked library may load below its link address).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct LoadBias(pub u64);

impl LoadBias {
    pub fn to_runtime(self, addr: FileAddr) -> RuntimeAddr {
        RuntimeAddr(addr.0.wrapping_add(self.0))
    }

    pub fn to_file(self, addr: RuntimeAddr) -> FileAddr {
        FileAddr(addr.0.wrapping_sub(self.0))
    }
}

impl fmt::Display for RuntimeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl fmt::Display for FileAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl fmt::Display for LoadBias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

impl fmt::LowerHex for RuntimeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl fmt::LowerHex for FileAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bias_round_trips_and_wraps() {
        let bias = LoadBias(0x5555_5555_4000);
        let rt = bias.to_runtime(FileAddr(0x1139));
        assert_eq!(rt, RuntimeAddr(0x5555_5555_5139));
        assert_eq!(bias.to_file(rt), FileAddr(0x1139));

        // A "negative" bias: loaded below the link address.
        let down = LoadBias(0u64.wrapping_sub(0x1000));
        assert_eq!(down.to_runtime(FileAddr(0x401000)), RuntimeAddr(0x400000));
        assert_eq!(down.to_file(RuntimeAddr(0x400000)), FileAddr(0x401000));
    }

    #[test]
    fn displays_lowercase_hex() {
        assert_eq!(RuntimeAddr(0x7FFF_ABCD).to_string(), "0x7fffabcd");
        assert_eq!(FileAddr(0).to_string(), "0x0");
        assert_eq!(LoadBias(0x1000).to_string(), "0x1000");
        assert_eq!(format!("{:x}", RuntimeAddr(0xAB)), "ab");
    }
}
