//! x86 debug registers: DR0-DR3 hold addresses, DR7 says which are armed and for what, DR6
//! says which one fired. Pure encoding; the ptrace side is in `ptrace.rs`.

/// What a hardware watchpoint traps on. x86 has no read-only watch: `ReadWrite` also traps on
/// writes, and scry tells reads from writes by whether the value changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Execute,
    Write,
    ReadWrite,
}

pub(crate) const SLOTS: usize = 4;
pub(crate) const DR6: usize = 6;
pub(crate) const DR7: usize = 7;

/// DR6 bit 14: the trap was a single step.
const DR6_BS: u64 = 1 << 14;

/// The aligned pieces, one debug register each, that cover `[addr, addr + len)` exactly:
/// the largest aligned length (8, 4, 2, 1) at each step. 16 bytes at an 8-aligned address
/// are two pieces; 4 bytes at `...2` are two of 2. More than `SLOTS` pieces is an error.
pub(crate) fn pieces(addr: u64, len: u64) -> Result<Vec<(u64, u64)>, String> {
    if len == 0 {
        return Err("watch length must be at least 1 byte".into());
    }
    let end = addr
        .checked_add(len)
        .ok_or_else(|| format!("a watch of {len} bytes at {addr:#x} passes the end of memory"))?;
    let mut out = Vec::new();
    let mut at = addr;
    while at < end {
        let size = [8u64, 4, 2, 1]
            .into_iter()
            .find(|&s| at.is_multiple_of(s) && at + s <= end)
            .unwrap_or(1);
        out.push((at, size));
        at += size;
    }
    if out.len() > SLOTS {
        return Err(format!(
            "a watch of {len} bytes at {addr:#x} needs {} debug registers of aligned 1, 2, 4 or 8 bytes; x86 has {SLOTS}",
            out.len()
        ));
    }
    Ok(out)
}

fn len_bits(len: u64) -> u64 {
    match len {
        1 => 0b00,
        2 => 0b01,
        8 => 0b10,
        _ => 0b11, // 4
    }
}

fn access_bits(access: Access) -> u64 {
    match access {
        Access::Execute => 0b00,
        Access::Write => 0b01,
        Access::ReadWrite => 0b11,
    }
}

/// DR7 with `slot` armed (local enable) for `access` of `len` bytes.
pub(crate) fn arm(dr7: u64, slot: usize, access: Access, len: u64) -> u64 {
    let shift = 16 + 4 * slot as u64;
    let cleared = disarm(dr7, slot);
    cleared | (1 << (2 * slot)) | (access_bits(access) << shift) | (len_bits(len) << (shift + 2))
}

/// DR7 with `slot` disarmed and its condition bits cleared.
pub(crate) fn disarm(dr7: u64, slot: usize) -> u64 {
    let shift = 16 + 4 * slot as u64;
    dr7 & !(0b11 << (2 * slot)) & !(0b1111 << shift)
}

/// The slots DR6 reports as fired (bit n = slot n), and whether it was also a single step.
pub(crate) fn fired(dr6: u64) -> (u8, bool) {
    ((dr6 & 0xf) as u8, dr6 & DR6_BS != 0)
}

#[cfg(test)]
mod tests {

    #[test]
    fn wide_and_unaligned_watches_split_into_aligned_pieces() {
        assert_eq!(pieces(0x1000, 8).unwrap(), [(0x1000, 8)]);
        assert_eq!(pieces(0x1000, 16).unwrap(), [(0x1000, 8), (0x1008, 8)]);
        assert_eq!(pieces(0x1000, 32).unwrap().len(), 4);
        assert_eq!(pieces(0x1002, 4).unwrap(), [(0x1002, 2), (0x1004, 2)]);
        assert_eq!(pieces(0x1001, 3).unwrap(), [(0x1001, 1), (0x1002, 2)]);
        assert!(pieces(0x1000, 40)
            .unwrap_err()
            .contains("needs 5 debug registers"));
        assert!(
            pieces(0x1001, 16).is_err(),
            "1 + 2 + 4 + 8 + 1: five pieces"
        );
        assert!(pieces(0x1000, 0).is_err());
    }

    use super::*;

    #[test]
    fn encodes_slots() {
        // Slot 0, write, 4 bytes: L0 (bit 0), RW0 = 01 (bits 16-17), LEN0 = 11 (bits 18-19).
        assert_eq!(arm(0, 0, Access::Write, 4), 0b1101 << 16 | 1);
        // Slot 3, read/write, 8 bytes: L3 (bit 6), RW3 = 11 (bits 28-29), LEN3 = 10 (bits 30-31).
        assert_eq!(
            arm(0, 3, Access::ReadWrite, 8),
            (0b1011u64 << 28) | (1 << 6)
        );
        let both = arm(arm(0, 0, Access::Write, 4), 1, Access::Write, 1);
        assert_eq!(disarm(both, 0), arm(0, 1, Access::Write, 1));
        assert_eq!(disarm(disarm(both, 0), 1), 0);
    }

    #[test]
    fn reads_dr6() {
        assert_eq!(fired(0x4001), (1, true));
        assert_eq!(fired(0b1010), (0b1010, false));
    }
}
