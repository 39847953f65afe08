//! The kernel's side of a recorded system call: what the call about to be made may write
//! into the program (its output buffers by the effects table, a munmap's pages), read
//! before it runs so that going back can put it as it was.

use super::*;

/// What the system call about to be made may write, read before it runs.
pub(super) fn syscall_before(
    process: &mut dyn Target,
    nr: u64,
    r: &RawRegs,
    before: &mut Before,
    own_clear_tid: Option<u64>,
) {
    let args = [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9];
    let name = crate::os::syscalls::name(nr);
    let word = |process: &dyn Target, addr: u64| {
        let mut b = [0u8; 4];
        let n = process.read_memory_partial(addr, &mut b);
        b[..n].to_vec()
    };
    match nr {
        SYS_SET_TID_ADDRESS => {
            before.sets_clear_tid = Some(args[0]);
            return;
        }
        // A thread's end: the kernel clears the id it was told to.
        SYS_EXIT => {
            match own_clear_tid {
                Some(0) => {}
                Some(at) => before.memory.push((at, word(process, at))),
                // Made before recording began: where the kernel clears its id at the end
                // was never seen.
                None => {
                    before.barrier = Some(format!(
                        "{name}: a thread made before recording ends, and the kernel clears its id where the recording does not know"
                    ))
                }
            }
            return;
        }
        SYS_MUNMAP => {
            match unmapping(process, args[0], args[1]) {
                Ok(pieces) => before.unmapping = pieces,
                Err(why) => before.barrier = Some(format!("{name}: {why}")),
            }
            return;
        }
        SYS_CLONE | SYS_CLONE3 => {
            let fields = if nr == SYS_CLONE {
                Some((args[0], args[2], args[3]))
            } else {
                // struct clone_args: flags @0, child_tid @16, parent_tid @24.
                let mut raw = [0u8; 32];
                (args[1] >= 32 && process.read_memory(args[0], &mut raw).is_ok()).then(|| {
                    (
                        le_u64(&raw[..8]),
                        le_u64(&raw[24..32]),
                        le_u64(&raw[16..24]),
                    )
                })
            };
            let Some((flags, parent_tid, child_tid)) = fields else {
                before.barrier = Some(format!("{name}: its arguments are unreadable"));
                return;
            };
            if flags & (CLONE_VM | CLONE_THREAD) != CLONE_VM | CLONE_THREAD {
                before.barrier = Some(format!("{name}: a new process"));
                return;
            }
            // The ids the kernel writes at the clone, into memory both threads share.
            for (flag, at) in [
                (CLONE_PARENT_SETTID, parent_tid),
                (CLONE_CHILD_SETTID, child_tid),
            ] {
                if flags & flag != 0 && at != 0 {
                    before.memory.push((at, word(process, at)));
                }
            }
            before.clone =
                Some((flags & CLONE_CHILD_CLEARTID != 0 && child_tid != 0).then_some(child_tid));
            return;
        }
        _ => {}
    }
    let effects = match effects::of(nr, &args) {
        // A break moved down gives pages back: their bytes would be gone going back.
        Effects::None if nr == SYS_BRK && args[0] != 0 => match heap_end(process) {
            Some(end) if args[0].next_multiple_of(4096) < end => {
                Effects::Barrier("the heap shrunk")
            }
            _ => Effects::None,
        },
        e => e,
    };
    // Buffers named through memory: `(address, length)` read from the iovec array.
    let iovecs = |at: u64, count: u64| -> Option<Vec<(u64, u64)>> {
        let count = count.min(IOV_MAX);
        let mut raw = vec![0u8; (count * 16) as usize];
        process.read_memory(at, &mut raw).ok()?;
        Some(
            raw.chunks(16)
                .map(|c| (le_u64(&c[..8]), le_u64(&c[8..])))
                .collect(),
        )
    };
    // Every buffer the call may fill, `(address, length)`, however the call names it.
    let mut named: Vec<(u64, u64)> = Vec::new();
    let mut unreadable = false;
    match &effects {
        Effects::None => {}
        Effects::Barrier(why) => before.barrier = Some(format!("{name}: {why}")),
        Effects::Buffers(list) => {
            for (arg, len) in list {
                let len = match *len {
                    Len::Arg(i) => args[i],
                    Len::Fixed(n) => n,
                    Len::Pointed(i) => {
                        let mut n = [0u8; 4];
                        if args[i] == 0 || process.read_memory(args[i], &mut n).is_err() {
                            continue;
                        }
                        u64::from(u32::from_le_bytes(n))
                    }
                };
                named.push((args[*arg], len));
            }
        }
        Effects::Iovec(iov, count) => match iovecs(args[*iov], args[*count]) {
            Some(list) => named = list,
            None => unreadable = true,
        },
        Effects::Msghdr(msg) => {
            let mut hdr = [0u8; MSGHDR_SIZE as usize];
            if process.read_memory(args[*msg], &mut hdr).is_ok() {
                let at = |o: usize| le_u64(&hdr[o..o + 8]);
                named.push((args[*msg], MSGHDR_SIZE));
                named.push((at(0), at(8) & 0xffff_ffff));
                named.push((at(32), at(40)));
                match iovecs(at(16), at(24)) {
                    Some(list) => named.extend(list),
                    None => unreadable = true,
                }
            } else {
                unreadable = true;
            }
        }
    }
    if unreadable {
        before.barrier = Some(format!("{name}: its buffer list is unreadable"));
    }
    let mut total = 0u64;
    for (addr, len) in named {
        if addr == 0 || len == 0 {
            continue;
        }
        total = total.saturating_add(len);
        if total > BUFFER_LIMIT {
            before.barrier = Some(format!(
                "{name}: buffers of more than {BUFFER_LIMIT} bytes (not recorded)"
            ));
            break;
        }
        let mut buf = vec![0u8; len as usize];
        let n = process.read_memory_partial(addr, &mut buf);
        buf.truncate(n);
        before.memory.push((addr, buf));
    }
}

/// What munmap(addr, len) takes away, read before it runs: each private anonymous mapping
/// in the range, its protection and its bytes (zero pages at either end left out). Memory
/// that cannot be given back as it was (a file's, a shared mapping) is why not.
fn unmapping(
    process: &dyn Target,
    addr: u64,
    len: u64,
) -> std::result::Result<Vec<Unmapped>, String> {
    const PAGE: u64 = 4096;
    let end = addr.saturating_add(len.div_ceil(PAGE) * PAGE);
    let maps = process
        .maps()
        .map_err(|e| format!("the mappings are unreadable ({e})"))?;
    let mut out = Vec::new();
    let mut total = 0u64;
    for m in maps.iter().filter(|m| m.start < end && addr < m.end) {
        let anonymous = m
            .path
            .as_deref()
            .is_none_or(|p| p.starts_with("[anon") || p == "[heap]" || p == "[stack]");
        if !anonymous || m.perms.shared {
            return Err(format!(
                "memory unmapped that cannot be mapped again as it was ({})",
                m.path.as_deref().unwrap_or("shared memory")
            ));
        }
        let (start, stop) = (m.start.max(addr), m.end.min(end));
        total += stop - start;
        if total > BUFFER_LIMIT {
            return Err(format!(
                "more than {BUFFER_LIMIT} bytes unmapped (not recorded)"
            ));
        }
        let mut bytes = vec![0u8; (stop - start) as usize];
        // A PROT_NONE page (a guard) reads too: the debugger's access is forced.
        if process.read_memory(start, &mut bytes).is_err() {
            return Err(format!(
                "memory unmapped whose bytes are unreadable ({start:#x})"
            ));
        }
        let nonzero = |p: &[u8]| p.iter().any(|b| *b != 0);
        let pages: Vec<&[u8]> = bytes.chunks(PAGE as usize).collect();
        let first = pages.iter().position(|p| nonzero(p));
        let last = pages.iter().rposition(|p| nonzero(p));
        let (data_at, data) = match (first, last) {
            (Some(f), Some(l)) => {
                let from = f * PAGE as usize;
                let to = ((l + 1) * PAGE as usize).min(bytes.len());
                (from as u64, bytes[from..to].to_vec())
            }
            _ => (0, Vec::new()),
        };
        let prot =
            u64::from(m.perms.read) | u64::from(m.perms.write) << 1 | u64::from(m.perms.exec) << 2;
        out.push(Unmapped {
            addr: start,
            len: stop - start,
            prot,
            data_at,
            data,
        });
    }
    Ok(out)
}

/// Most iovec entries a call takes (UIO_MAXIOV).
const IOV_MAX: u64 = 1024;
/// `struct msghdr` on x86-64: name, namelen, iov, iovlen, control, controllen, flags.
const MSGHDR_SIZE: u64 = 56;

fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
}

/// The end of the `[heap]` mapping: the program break, rounded up to a page.
fn heap_end(process: &dyn Target) -> Option<u64> {
    let maps = process.maps().ok()?;
    maps.iter()
        .find(|m| m.path.as_deref() == Some("[heap]"))
        .map(|m| m.end)
}
