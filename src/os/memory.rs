//! Target memory through `/proc/PID/mem`: one open file, pread/pwrite at the address as the
//! offset. Unlike process_vm_writev it can write read-only text (for breakpoints), and it
//! reports unmapped pages as an error instead of a short read we would have to guess about.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;

use super::{OsError, Tid};

pub(crate) struct ProcMem {
    file: File,
}

impl ProcMem {
    pub(crate) fn open(pid: Tid) -> Result<Self, OsError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(format!("/proc/{pid}/mem"))
            .map_err(|err| OsError::Io {
                what: "open /proc/PID/mem",
                err,
            })?;
        Ok(ProcMem { file })
    }

    /// Fills `buf` from `addr`; any byte that cannot be read makes the whole read fail.
    pub(crate) fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), OsError> {
        let mut done = 0;
        while done < buf.len() {
            let at = addr.checked_add(done as u64).ok_or(OsError::Unmapped {
                addr,
                len: buf.len(),
            })?;
            match self.file.read_at(&mut buf[done..], at) {
                Ok(0) | Err(_) => {
                    return Err(OsError::Unmapped {
                        addr: at,
                        len: buf.len() - done,
                    })
                }
                Ok(n) => done += n,
            }
        }
        Ok(())
    }

    /// Reads as much as is readable from `addr`, up to `buf.len()`; returns the count.
    pub(crate) fn read_partial(&self, addr: u64, buf: &mut [u8]) -> usize {
        let mut done = 0;
        while done < buf.len() {
            let Some(at) = addr.checked_add(done as u64) else {
                break;
            };
            match self.file.read_at(&mut buf[done..], at) {
                Ok(0) | Err(_) => break,
                Ok(n) => done += n,
            }
        }
        done
    }

    pub(crate) fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), OsError> {
        let mut done = 0;
        while done < bytes.len() {
            let at = addr.checked_add(done as u64).ok_or(OsError::Unmapped {
                addr,
                len: bytes.len(),
            })?;
            match self.file.write_at(&bytes[done..], at) {
                Ok(0) | Err(_) => {
                    return Err(OsError::Unwritable {
                        addr: at,
                        len: bytes.len() - done,
                    })
                }
                Ok(n) => done += n,
            }
        }
        Ok(())
    }
}
