//! The general-purpose register set as ptrace sees it, addressed by name.

pub(crate) type RawRegs = libc::user_regs_struct;

/// Every register name scripts can use, in display order.
pub(crate) const REGISTER_NAMES: [&str; 27] = [
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs", "fs_base", "gs_base",
    "orig_rax",
];

/// Index into [`REGISTER_NAMES`] for a name, accepting `pc`/`sp`/`fp` aliases.
pub(crate) fn register_index(name: &str) -> Option<usize> {
    let name = match name {
        "pc" => "rip",
        "sp" => "rsp",
        "fp" => "rbp",
        "rflags" | "flags" => "eflags",
        other => other,
    };
    REGISTER_NAMES.iter().position(|n| *n == name)
}

fn slot(regs: &mut RawRegs, index: usize) -> &mut u64 {
    match index {
        0 => &mut regs.rax,
        1 => &mut regs.rbx,
        2 => &mut regs.rcx,
        3 => &mut regs.rdx,
        4 => &mut regs.rsi,
        5 => &mut regs.rdi,
        6 => &mut regs.rbp,
        7 => &mut regs.rsp,
        8 => &mut regs.r8,
        9 => &mut regs.r9,
        10 => &mut regs.r10,
        11 => &mut regs.r11,
        12 => &mut regs.r12,
        13 => &mut regs.r13,
        14 => &mut regs.r14,
        15 => &mut regs.r15,
        16 => &mut regs.rip,
        17 => &mut regs.eflags,
        18 => &mut regs.cs,
        19 => &mut regs.ss,
        20 => &mut regs.ds,
        21 => &mut regs.es,
        22 => &mut regs.fs,
        23 => &mut regs.gs,
        24 => &mut regs.fs_base,
        25 => &mut regs.gs_base,
        _ => &mut regs.orig_rax,
    }
}

pub(crate) fn get_register(regs: &RawRegs, index: usize) -> u64 {
    let mut copy = *regs;
    *slot(&mut copy, index)
}

pub(crate) fn set_register(regs: &mut RawRegs, index: usize, value: u64) {
    *slot(regs, index) = value;
}

/// EFLAGS bit positions for the condition and control flags scripts may read.
pub(crate) const FLAG_BITS: [(&str, u32); 9] = [
    ("c", 0),
    ("p", 2),
    ("a", 4),
    ("z", 6),
    ("s", 7),
    ("t", 8),
    ("i", 9),
    ("d", 10),
    ("o", 11),
];

/// Bit for a flag name; `n` (negative) and `v` (overflow) are the vision's ARM-style aliases.
pub(crate) fn flag_bit(name: &str) -> Option<u32> {
    let name = match name {
        "n" => "s",
        "v" => "o",
        other => other,
    };
    FLAG_BITS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

pub(crate) fn zeroed() -> RawRegs {
    // SAFETY: user_regs_struct is plain integers; all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_distinct_slots() {
        let mut regs = zeroed();
        for (i, _) in REGISTER_NAMES.iter().enumerate() {
            set_register(&mut regs, i, i as u64 + 100);
        }
        for (i, name) in REGISTER_NAMES.iter().enumerate() {
            assert_eq!(
                get_register(&regs, register_index(name).unwrap()),
                i as u64 + 100
            );
        }
        assert_eq!(regs.rip, 116);
        assert_eq!(register_index("pc"), register_index("rip"));
        assert_eq!(register_index("nope"), None);
    }

    #[test]
    fn flag_aliases() {
        assert_eq!(flag_bit("z"), Some(6));
        assert_eq!(flag_bit("n"), flag_bit("s"));
        assert_eq!(flag_bit("v"), Some(11));
        assert_eq!(flag_bit("q"), None);
    }
}
