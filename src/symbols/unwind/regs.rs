//! Register values during a walk, by DWARF number, and the memory reader the walk uses.

/// Registers tracked, by DWARF number: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then 16, the
/// return address column (rip).
pub const NREGS: usize = 17;
pub const RBP: u16 = 6;
pub const RSP: u16 = 7;
pub const RA: u16 = 16;

/// Reads `buf.len()` bytes at an address; false when any of them is unreadable.
pub type MemReader<'a> = &'a dyn Fn(u64, &mut [u8]) -> bool;

/// Where a frame's value of a register lives, so it can be written: a caller's saved
/// register is a stack slot (what its callee saved), and one nobody saved is still the live
/// register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Loc {
    /// Computed (a CFA, a constant), or not known: nothing to write.
    #[default]
    Unknown,
    /// The thread's register itself.
    Live,
    /// Memory at this address.
    At(u64),
}

/// Register values by DWARF number (see `NREGS`); `None` where the value is not known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnwindRegs {
    pub vals: [Option<u64>; NREGS],
    /// Where each value lives (see `Loc`).
    pub locs: [Loc; NREGS],
}

impl UnwindRegs {
    /// Only pc and sp known: what a thread blocked in a system call reveals.
    pub fn from_pc_sp(pc: u64, sp: u64) -> UnwindRegs {
        let mut r = UnwindRegs::default();
        r.set(RA, pc);
        r.set(RSP, sp);
        r
    }

    /// The value of DWARF register `n`; `None` for unknown values and numbers past 16.
    pub fn get(&self, n: u16) -> Option<u64> {
        self.vals.get(usize::from(n)).copied().flatten()
    }

    /// Sets DWARF register `n` (where it lives not known); numbers past 16 are ignored.
    pub fn set(&mut self, n: u16, value: u64) {
        self.set_at(n, value, Loc::Unknown);
    }

    /// Sets DWARF register `n` and where its value lives.
    pub fn set_at(&mut self, n: u16, value: u64, loc: Loc) {
        let i = usize::from(n);
        if i < NREGS {
            self.vals[i] = Some(value);
            self.locs[i] = loc;
        }
    }

    /// Where DWARF register `n`'s value lives.
    pub fn loc(&self, n: u16) -> Loc {
        self.locs.get(usize::from(n)).copied().unwrap_or_default()
    }

    pub fn clear(&mut self, n: u16) {
        if let Some(slot) = self.vals.get_mut(usize::from(n)) {
            *slot = None;
            self.locs[usize::from(n)] = Loc::Unknown;
        }
    }

    pub fn rip(&self) -> Option<u64> {
        self.get(RA)
    }

    pub fn rsp(&self) -> Option<u64> {
        self.get(RSP)
    }

    pub fn rbp(&self) -> Option<u64> {
        self.get(RBP)
    }
}

/// A little-endian word of memory, `None` when unreadable.
pub(super) fn read_u64(mem: MemReader<'_>, addr: u64) -> Option<u64> {
    let mut buf = [0u8; 8];
    mem(addr, &mut buf).then(|| u64::from_le_bytes(buf))
}
