//! scry's heap: the system allocator, with large blocks backed by transparent huge pages.
//!
//! Loading a large program's symbols writes tens of megabytes of fresh memory. In 4 KiB pages
//! that is thousands of page faults, each a trip into the kernel (under a hypervisor, often out
//! of the guest too): on the 186 MB benchmark program, 20,000 faults and two fifths of the
//! start-up's CPU. A block asked to be backed by 2 MiB pages takes one fault per 2 MiB. The
//! kernel honours the request where transparent huge pages are enabled (`always` or
//! `madvise`, the usual settings); elsewhere it changes nothing.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks from this size on are advised. Smaller ones could not hold an aligned 2 MiB extent
/// often enough to be worth a system call.
const HUGE_FROM: usize = 4 << 20;
const PAGE: usize = 4096;

pub struct HugeBlocks;

// SAFETY: every request goes to the system allocator unchanged; `advise` only adds a hint
// about memory the block owns.
unsafe impl GlobalAlloc for HugeBlocks {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is the system allocator's.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` through this allocator, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller guarantees `new_size` is valid for `layout`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}

/// Asks for huge pages under the whole pages of a large block at `p`.
fn advise(p: *mut u8, len: usize) {
    if p.is_null() || len < HUGE_FROM {
        return;
    }
    let start = (p as usize).next_multiple_of(PAGE);
    let end = (p as usize + len) / PAGE * PAGE;
    // SAFETY: the range lies inside a block the allocator just handed out, so it is mapped
    // memory of this process; MADV_HUGEPAGE changes how it is backed, never its contents. A
    // refusal (no THP in this kernel) leaves it as it was.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_hold_what_is_written_through_growth_and_zeroing() {
        let a = HugeBlocks;
        let layout = Layout::from_size_align(HUGE_FROM + 12345, 16).unwrap();
        // SAFETY: a non-zero layout; every pointer is checked, used within its size and
        // freed once with the layout it has.
        unsafe {
            let z = a.alloc_zeroed(layout);
            assert!(!z.is_null());
            assert!(std::slice::from_raw_parts(z, layout.size())
                .iter()
                .all(|&b| b == 0));
            for i in (0..layout.size()).step_by(4093) {
                *z.add(i) = (i % 251) as u8;
            }
            let grown = a.realloc(z, layout, 3 * HUGE_FROM);
            assert!(!grown.is_null());
            for i in (0..layout.size()).step_by(4093) {
                assert_eq!(*grown.add(i), (i % 251) as u8);
            }
            a.dealloc(grown, Layout::from_size_align(3 * HUGE_FROM, 16).unwrap());
        }
    }
}
