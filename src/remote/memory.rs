//! Memory over the protocol: `m`/`M` in pieces of the packet size, an aligned block cache
//! that lives until the next resume or write (an unwind or a struct print reads the same
//! stack and heap lines many times), and files of the target's machine read with `vFile`
//! (its `/proc/PID/maps` and `limits`, as its kernel shows them).

use std::cell::RefCell;
use std::collections::HashMap;

use super::{conn, packet, Remote};
use crate::os::OsError;

/// Cached blocks are this big and this aligned: a power of two that divides a page, so a
/// block is readable whole or not at all.
const BLOCK: u64 = 1024;

pub(crate) struct MemoryCache {
    /// Block start -> its bytes (shorter than a block where reading stopped).
    blocks: RefCell<HashMap<u64, Vec<u8>>>,
    /// The most bytes one `m` reply may carry (two hex digits a byte).
    max_read: usize,
}

impl MemoryCache {
    pub(crate) fn new(packet_size: usize) -> MemoryCache {
        MemoryCache {
            blocks: RefCell::new(HashMap::new()),
            max_read: (packet_size.saturating_sub(8) / 2).max(BLOCK as usize),
        }
    }

    pub(crate) fn clear(&self) {
        self.blocks.borrow_mut().clear();
    }

    /// Drops the blocks a write to `[addr, addr+len)` touched.
    fn forget(&self, addr: u64, len: usize) {
        let first = addr & !(BLOCK - 1);
        let end = addr.saturating_add(len as u64);
        self.blocks
            .borrow_mut()
            .retain(|&start, _| start + BLOCK <= first || start >= end);
    }
}

impl Remote {
    /// Reads up to `buf.len()` bytes at `addr`, stopping at the first unreadable one.
    pub(super) fn read_partial(&self, addr: u64, buf: &mut [u8]) -> usize {
        let mut done = 0;
        while done < buf.len() {
            let at = addr.wrapping_add(done as u64);
            let start = at & !(BLOCK - 1);
            if !self.memory.blocks.borrow().contains_key(&start) {
                let want = (buf.len() - done) as u64 + (at - start);
                self.fetch_blocks(start, want);
            }
            let blocks = self.memory.blocks.borrow();
            let Some(block) = blocks.get(&start) else {
                break;
            };
            let from = (at - start) as usize;
            if from >= block.len() {
                break;
            }
            let n = (block.len() - from).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&block[from..from + n]);
            done += n;
            if block.len() < BLOCK as usize {
                break;
            }
        }
        done
    }

    /// Reads up to `buf.len()` bytes at `addr` without the cache, in pieces as large as a
    /// reply carries, stopping at the first unreadable byte; the count.
    pub(super) fn read_through(&self, addr: u64, buf: &mut [u8]) -> usize {
        let piece = self.memory.max_read.max(1);
        let mut done = 0;
        while done < buf.len() {
            let want = piece.min(buf.len() - done);
            let Ok(bytes) = self.read_raw(addr.wrapping_add(done as u64), want) else {
                break;
            };
            buf[done..done + bytes.len()].copy_from_slice(&bytes);
            done += bytes.len();
            if bytes.len() < want {
                break;
            }
        }
        done
    }

    /// Reads the blocks from `start` covering `want` bytes (as many as one reply carries)
    /// into the cache; a block the stub could not read is cached short (or empty).
    fn fetch_blocks(&self, start: u64, want: u64) {
        let max = self.memory.max_read as u64 & !(BLOCK - 1);
        let len = want
            .div_ceil(BLOCK)
            .saturating_mul(BLOCK)
            .clamp(BLOCK, max.max(BLOCK));
        let bytes = self.read_raw(start, len as usize).unwrap_or_default();
        let mut blocks = self.memory.blocks.borrow_mut();
        let mut at = 0usize;
        while (at as u64) < len {
            let end = (at + BLOCK as usize).min(bytes.len());
            let block = if at < bytes.len() {
                bytes[at..end].to_vec()
            } else {
                Vec::new()
            };
            let short = block.len() < BLOCK as usize;
            blocks.insert(start + at as u64, block);
            if short {
                break;
            }
            at += BLOCK as usize;
        }
    }

    /// One `m` request: the bytes the stub could read (fewer than asked, or none, at an
    /// unreadable address).
    fn read_raw(&self, addr: u64, len: usize) -> Result<Vec<u8>, OsError> {
        let reply = self.request(format!("m{addr:x},{len:x}").as_bytes())?;
        if reply.starts_with(b"E") && reply.len() == 3 {
            return Ok(Vec::new());
        }
        let bytes = packet::unhex_all(&reply).ok_or_else(|| {
            OsError::Remote(format!(
                "the stub answered a memory read with {}",
                conn::preview(&reply)
            ))
        })?;
        if bytes.len() > len {
            return Err(OsError::Remote(format!(
                "the stub sent {} bytes for a read of {len}",
                bytes.len()
            )));
        }
        Ok(bytes)
    }

    /// Writes `bytes` at `addr` (`M`, in pieces of the packet size).
    pub(super) fn write_raw(&mut self, addr: u64, bytes: &[u8]) -> Result<(), OsError> {
        let piece = self.memory.max_read.max(1);
        for (i, chunk) in bytes.chunks(piece).enumerate() {
            let at = addr.wrapping_add((i * piece) as u64);
            let ask = format!("M{at:x},{:x}:{}", chunk.len(), packet::hex(chunk));
            let reply = self.request(ask.as_bytes())?;
            self.memory.forget(at, chunk.len());
            if reply != b"OK" {
                return Err(OsError::Unwritable {
                    addr: at,
                    len: chunk.len(),
                });
            }
        }
        Ok(())
    }

    /// A file of the target's machine, as the process sees it, read whole (`vFile`), at
    /// most `limit` bytes.
    pub(super) fn read_target_file(&self, path: &str, limit: usize) -> Result<Vec<u8>, OsError> {
        // The process's own mount namespace, where the stub can enter it (asked once: the
        // stub keeps it for the connection).
        if !self.file_namespace_set.replace(true) {
            let _ = self.request(format!("vFile:setfs:{:x}", self.pid).as_bytes());
        }
        let open = format!("vFile:open:{},0,0", packet::hex(path.as_bytes()));
        let reply = self.request(open.as_bytes())?;
        let fd = file_result(&reply).ok_or_else(|| {
            OsError::Remote(format!(
                "the stub cannot open {path} ({})",
                conn::preview(&reply)
            ))
        })?;
        let mut out = Vec::new();
        let piece = self.memory.max_read.max(256);
        let result = loop {
            let ask = format!("vFile:pread:{fd:x},{piece:x},{:x}", out.len());
            let reply = match self.request(ask.as_bytes()) {
                Ok(r) => r,
                Err(e) => break Err(e),
            };
            let Some(count) = file_result(&reply) else {
                break Err(OsError::Remote(format!(
                    "the stub cannot read {path} ({})",
                    conn::preview(&reply)
                )));
            };
            let data = reply
                .iter()
                .position(|&b| b == b';')
                .map_or(&[][..], |semi| &reply[semi + 1..]);
            if count == 0 || data.is_empty() {
                break Ok(());
            }
            out.extend_from_slice(&data[..data.len().min(count as usize)]);
            if out.len() > limit {
                break Err(OsError::Remote(format!(
                    "{path} on the target is over {limit} bytes"
                )));
            }
        };
        let _ = self.request(format!("vFile:close:{fd:x}").as_bytes());
        result.map(|()| out)
    }
}

/// The number of a `vFile` reply `F<n>[,errno][;data]`, unless it is `-1`.
fn file_result(reply: &[u8]) -> Option<u64> {
    let body = reply.strip_prefix(b"F")?;
    let end = body
        .iter()
        .position(|&b| b == b',' || b == b';')
        .unwrap_or(body.len());
    packet::number(&body[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_results() {
        assert_eq!(file_result(b"F5"), Some(5));
        assert_eq!(file_result(b"F3;abc"), Some(3));
        assert_eq!(file_result(b"F-1,2"), None);
        assert_eq!(file_result(b"E01"), None);
    }

    #[test]
    fn a_write_forgets_the_blocks_it_touches() {
        let cache = MemoryCache::new(4096);
        for start in [0u64, 1024, 2048] {
            cache.blocks.borrow_mut().insert(start, vec![0; 1024]);
        }
        cache.forget(1500, 600);
        let mut kept: Vec<u64> = cache.blocks.borrow().keys().copied().collect();
        kept.sort();
        assert_eq!(kept, [0]);
    }
}
