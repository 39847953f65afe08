//! Thread-local variables on x86-64 (TLS variant II). The thread pointer (fs_base) points at
//! the TCB; its second word is the DTV, whose entry `modid` holds the address of that module's
//! TLS block in this thread. Module ids are given in link-map order to modules with a PT_TLS.

/// Byte offset of the DTV pointer in glibc's `tcbhead_t` (`tcb`, then `dtv`).
pub const TCB_DTV_OFFSET: u64 = 8;
/// `dtv_t` is a union of a counter and `{ void *val; void *to_free; }`: 16 bytes.
pub const DTV_ENTRY_SIZE: u64 = 16;
/// glibc marks a DTV entry whose block is not allocated yet with -1.
pub const DTV_UNALLOCATED: u64 = u64::MAX;

/// Where a module's TLS block starts when the static formula is all there is: the
/// executable's block sits right below the thread pointer, rounded to its alignment.
pub fn exe_block(fs_base: u64, memsz: u64, align: u64) -> u64 {
    let align = align.max(1);
    let size = memsz.div_ceil(align) * align;
    fs_base.wrapping_sub(size)
}

/// `struct r_debug`: `r_version` (int, padded) then `r_map`.
pub const R_DEBUG_MAP_OFFSET: u64 = 8;
/// `struct link_map`'s public head: `l_addr`, `l_name`, `l_ld`, `l_next`, `l_prev`.
pub const LINK_MAP_NEXT_OFFSET: u64 = 24;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exe_block_rounds_up() {
        assert_eq!(exe_block(0x1000, 4, 4), 0xffc);
        assert_eq!(exe_block(0x1000, 12, 8), 0xff0);
        assert_eq!(exe_block(0x1000, 0, 0), 0x1000);
    }
}
