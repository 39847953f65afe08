//! What scry can debug, said before anything runs: x86-64 ELF programs. A 32-bit program
//! would be decoded as 64-bit code (`inc eax` read as a REX prefix) with no symbols, which
//! is worse than a refusal. And what the kernel changes for a traced program: a setuid or
//! setgid bit is ignored under ptrace, so the program runs without that privilege.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

const EM_X86_64: u16 = 62;

/// Checks an ELF header: `Ok` for x86-64 ELF files and for anything that is not ELF (a
/// `#!` script runs its interpreter, which is checked after exec).
pub(super) fn check_elf_header(header: &[u8]) -> Result<(), String> {
    if header.len() < 20 || &header[..4] != b"\x7fELF" {
        return Ok(());
    }
    let class = header[4];
    let machine = u16::from_le_bytes([header[18], header[19]]);
    let arch = match machine {
        3 => "i386",
        EM_X86_64 => "x86-64",
        40 => "ARM",
        183 => "AArch64",
        243 => "RISC-V",
        _ => "another architecture",
    };
    match (class, machine) {
        (2, EM_X86_64) => Ok(()),
        (1, _) => Err(format!(
            "it is a 32-bit program ({arch}); scry debugs x86-64 programs only"
        )),
        _ => Err(format!(
            "it is built for {arch} (ELF machine {machine}); scry debugs x86-64 programs only"
        )),
    }
}

/// Refuses a program file scry cannot debug.
pub(super) fn check_program(path: &Path) -> Result<(), String> {
    use std::io::Read;
    let mut header = [0u8; 20];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut header))
        .unwrap_or(0);
    check_elf_header(&header[..n])
}

/// What the kernel drops when it runs `path` under ptrace: its setuid/setgid privilege.
pub(super) fn privilege_note(path: &Path, euid: u32, egid: u32) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let mode = meta.mode();
    let suid = mode & 0o4000 != 0 && meta.uid() != euid;
    let sgid = mode & 0o2000 != 0 && meta.gid() != egid;
    let what = match (suid, sgid) {
        (true, true) => format!("setuid {} and setgid {}", meta.uid(), meta.gid()),
        (true, false) => format!("setuid {}", meta.uid()),
        (false, true) => format!("setgid {}", meta.gid()),
        (false, false) => return None,
    };
    Some(format!(
        "{what} ignored under ptrace: the program runs as uid {euid} gid {egid}, without that privilege"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(class: u8, machine: u16) -> Vec<u8> {
        let mut h = b"\x7fELF".to_vec();
        h.extend_from_slice(&[class, 1, 1, 0]);
        h.extend_from_slice(&[0; 10]);
        h.extend_from_slice(&machine.to_le_bytes());
        h
    }

    #[test]
    fn x86_64_passes_and_others_are_named() {
        assert!(check_elf_header(&header(2, 62)).is_ok());
        assert!(check_elf_header(b"#!/bin/sh\n").is_ok());
        let e = check_elf_header(&header(1, 3)).unwrap_err();
        assert!(e.contains("32-bit program (i386)"), "{e}");
        let e = check_elf_header(&header(2, 183)).unwrap_err();
        assert!(e.contains("AArch64"), "{e}");
    }
}
