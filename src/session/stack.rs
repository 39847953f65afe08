//! Which stack holds an address, and where its usable part ends. Pure over a maps snapshot.

use crate::maps::MapEntry;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackBounds {
    /// One past the highest usable byte.
    pub top: u64,
    /// The lowest address the stack may use before it hits its guard.
    pub usable_base: u64,
    /// Bytes of the guard below `usable_base` (a PROT_NONE mapping, or the kernel's gap).
    pub guard_size: u64,
    /// `main` (the process stack, grows on demand), `mapped` (a thread's or a coroutine's
    /// stack: a fixed mapping, usually with a PROT_NONE guard right below).
    pub kind: &'static str,
}

/// The kernel keeps this gap below a growing `[stack]` (stack_guard_gap, 256 pages).
const MAIN_STACK_GAP: u64 = 256 * 4096;

/// Bounds of the stack containing `sp`. `rlimit_stack` is the soft RLIMIT_STACK in bytes
/// (`None` for unlimited).
pub(crate) fn stack_bounds(
    maps: &[MapEntry],
    sp: u64,
    rlimit_stack: Option<u64>,
) -> Option<StackBounds> {
    let mut i = maps.iter().position(|m| m.start <= sp && sp < m.end)?;
    // sp inside a PROT_NONE guard (an overflow in progress): the stack is the one above it.
    if is_guard(&maps[i])
        && maps
            .get(i + 1)
            .is_some_and(|up| up.start == maps[i].end && !is_guard(up))
    {
        i += 1;
    }
    let region = &maps[i];
    let below = i.checked_sub(1).map(|j| &maps[j]);
    if region.path.as_deref() == Some("[stack]") {
        let top = region.end;
        let limit_base = rlimit_stack.map(|l| top.saturating_sub(l)).unwrap_or(0);
        // It can grow down to the rlimit, but not into the mapping below (plus the gap).
        let floor = below
            .map(|b| b.end.saturating_add(MAIN_STACK_GAP))
            .unwrap_or(0);
        return Some(StackBounds {
            top,
            usable_base: limit_base.max(floor).min(region.start),
            guard_size: MAIN_STACK_GAP,
            kind: "main",
        });
    }
    let guard =
        below.filter(|b| b.end == region.start && !b.perms.read && !b.perms.write && !b.perms.exec);
    Some(StackBounds {
        top: region.end,
        usable_base: region.start,
        guard_size: guard.map(|g| g.end - g.start).unwrap_or(0),
        kind: "mapped",
    })
}

const PAGE: u64 = 4096;

/// The true top of a `mapped` stack, from what unwinding found on it. The kernel merges an
/// anonymous mapping with an adjacent one of the same permissions, so a coroutine stack
/// mmap'd right below other memory shows up as one larger mapping whose end is not the
/// stack's. The frames know better: the outermost frame (makecontext's start, a thread's
/// `clone`) sits at the real top. `frame_sps` are the stack pointers of the frames on this
/// stack, innermost first; `outermost`: the walk ended at the stack's first frame.
/// `thread_pointer`: fs_base, which for a pthread points at its descriptor at the top of its
/// stack mapping. Returns the top and whether it is exact.
pub(crate) fn refine_top(
    bounds: &StackBounds,
    frame_sps: &[u64],
    outermost: bool,
    thread_pointer: u64,
) -> (u64, bool) {
    if bounds.kind == "main" {
        return (bounds.top, true);
    }
    let Some(&highest) = frame_sps.iter().max() else {
        return (bounds.top, false);
    };
    if !outermost {
        return (bounds.top, false);
    }
    // Nothing but the start frame's few words above it: the mapping ends where the stack does.
    if bounds.top - highest <= PAGE {
        return (bounds.top, true);
    }
    // A thread's descriptor and static TLS sit between its first frame and the mapping end.
    if (highest..bounds.top).contains(&thread_pointer) && bounds.top - thread_pointer <= PAGE {
        return (bounds.top, true);
    }
    // The mapping goes on above the first frame: other memory merged with the stack. The
    // stack ends in the page above its first frame (stacks are page-aligned allocations).
    (highest.saturating_add(1).next_multiple_of(PAGE), false)
}

fn is_guard(m: &MapEntry) -> bool {
    !m.perms.read && !m.perms.write && !m.perms.exec
}

/// The soft "Max stack size" of `/proc/PID/limits`, in bytes.
pub(crate) fn parse_stack_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max stack size"))?;
    let soft = line.split_whitespace().nth(3)?;
    soft.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maps::parse_maps;

    const MAPS: &str = "\
7ffff7d00000-7ffff7d01000 ---p 00000000 00:00 0
7ffff7d01000-7ffff7d21000 rw-p 00000000 00:00 0
7ffff7e00000-7ffff7e10000 r-xp 00000000 08:01 42 /usr/lib/libc.so.6
7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]
";

    #[test]
    fn main_stack_uses_the_rlimit() {
        let maps = parse_maps(MAPS);
        let b = stack_bounds(&maps, 0x7fffffffe000, Some(8 << 20)).unwrap();
        assert_eq!(b.top, 0x7ffffffff000);
        assert_eq!(b.usable_base, 0x7ffffffff000 - (8 << 20));
        assert_eq!(b.kind, "main");
    }

    #[test]
    fn mapped_stack_has_its_guard() {
        let maps = parse_maps(MAPS);
        let b = stack_bounds(&maps, 0x7ffff7d20000, None).unwrap();
        assert_eq!(
            (b.usable_base, b.top, b.guard_size),
            (0x7ffff7d01000, 0x7ffff7d21000, 0x1000)
        );
        assert_eq!(b.kind, "mapped");
        assert!(stack_bounds(&maps, 0x1000, None).is_none());
        let in_guard = stack_bounds(&maps, 0x7ffff7d00800, None).unwrap();
        assert_eq!(
            in_guard, b,
            "sp in the guard page belongs to the stack above it"
        );
    }

    #[test]
    fn the_first_frame_tells_the_top_of_a_merged_stack() {
        let stack = |top| StackBounds {
            top,
            usable_base: 0x7000_0000,
            guard_size: 4096,
            kind: "mapped",
        };
        // Frames end 16 bytes under the mapping's end: the mapping is the stack.
        assert_eq!(
            refine_top(&stack(0x7001_0000), &[0x7000_8000, 0x7000_fff0], true, 0),
            (0x7001_0000, true)
        );
        // The mapping runs 64 KiB past the first frame: merged with other memory.
        assert_eq!(
            refine_top(&stack(0x7002_0000), &[0x7000_8000, 0x7000_fff0], true, 0),
            (0x7001_0000, false)
        );
        // A pthread: its descriptor (fs_base) near the mapping's end vouches for it.
        assert_eq!(
            refine_top(&stack(0x7002_0000), &[0x7001_0000], true, 0x7001_f800),
            (0x7002_0000, true)
        );
        // The walk did not reach the first frame: the mapping end, not known to be exact.
        assert_eq!(
            refine_top(&stack(0x7002_0000), &[0x7000_8000], false, 0),
            (0x7002_0000, false)
        );
    }

    #[test]
    fn parses_limits() {
        let text = "Limit                     Soft Limit           Hard Limit           Units\n\
                    Max stack size            8388608              unlimited            bytes\n";
        assert_eq!(parse_stack_limit(text), Some(8388608));
        assert_eq!(
            parse_stack_limit("Max stack size            unlimited  unlimited  bytes"),
            None
        );
    }
}
