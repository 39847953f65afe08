//! The module mappings of a target whose stub reads no files: QEMU's user-mode gdbstub
//! (7.2) has no `vFile`, so the target's `/proc/PID/maps` cannot be read. They are made from
//! what such a stub does give: the auxiliary vector (`AT_ENTRY` places the program,
//! `AT_BASE` the dynamic loader) and the loader's list of libraries in the target's memory
//! (`r_debug`'s `link_map`, found through the program's `DT_DEBUG`), each module laid out
//! by the program headers of the local copy of its file (`--sysroot`, else the same path
//! here). What is not made: anonymous memory, the stack, the heap (their regions are
//! unknown, which only costs the stack-bounds and region answers).

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::Remote;
use crate::corefile::elf;
use crate::maps::{MapEntry, Perms};
use crate::os::OsError;

const AT_BASE: u64 = 7;
const AT_ENTRY: u64 = 9;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NULL: u64 = 0;
const DT_DEBUG: u64 = 21;
const PAGE: u64 = 4096;
/// Bounds on what the target's memory may claim (it is hostile like every byte of it).
const MAX_LIBRARIES: usize = 1024;
const MAX_DYNAMIC: usize = 512;
const MAX_NAME: usize = 4096;

/// A local ELF file's entry point and program headers.
struct Layout {
    entry: u64,
    headers: Vec<elf::ProgramHeader>,
    file: std::fs::File,
}

impl Layout {
    fn read(path: &Path) -> Option<Layout> {
        let file = std::fs::File::open(path).ok()?;
        let mut head = [0u8; 64];
        file.read_exact_at(&mut head, 0).ok()?;
        let h = elf::parse_header(&head).ok()?;
        if h.phentsize as usize != 56 || h.phnum > 256 {
            return None;
        }
        let mut table = vec![0u8; h.phnum as usize * 56];
        file.read_exact_at(&mut table, h.phoff).ok()?;
        let headers = table.chunks_exact(56).filter_map(elf::parse_phdr).collect();
        Some(Layout {
            entry: h.entry,
            headers,
            file,
        })
    }

    fn first(&self, p_type: u32) -> Option<&elf::ProgramHeader> {
        self.headers.iter().find(|p| p.p_type == p_type)
    }

    /// The path `PT_INTERP` names.
    fn interpreter(&self) -> Option<String> {
        let p = self.first(PT_INTERP)?;
        let mut bytes = vec![0u8; p.filesz.min(MAX_NAME as u64) as usize];
        self.file.read_exact_at(&mut bytes, p.offset).ok()?;
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
    }

    /// The mappings the loader makes of this file at `bias`, as the maps would list them.
    fn mappings(&self, bias: u64, path: &str, inode: u64) -> Vec<MapEntry> {
        self.headers
            .iter()
            .filter(|p| p.p_type == PT_LOAD && p.memsz > 0)
            .map(|p| {
                let start = bias.wrapping_add(p.vaddr) & !(PAGE - 1);
                let end = bias.wrapping_add(p.end()).wrapping_add(PAGE - 1) & !(PAGE - 1);
                MapEntry {
                    start,
                    end,
                    perms: Perms {
                        read: p.flags & 4 != 0,
                        write: p.flags & 2 != 0,
                        exec: p.flags & 1 != 0,
                        shared: false,
                    },
                    offset: p.offset & !(PAGE - 1),
                    dev: "00:00".into(),
                    inode,
                    path: Some(path.to_string()),
                }
            })
            .collect()
    }
}

/// A made mapping's inode: the same for a path at every stop (the symbol store keys files
/// by path and inode), whatever was loaded before it.
fn pseudo_inode(path: &str) -> u64 {
    // FNV-1a: small, stable across runs (std's hasher is seeded).
    path.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Remote {
    /// The mappings of the program, the loader and every library the loader lists (see
    /// the module doc); an error when not even the program's can be placed.
    pub(super) fn made_maps(&self) -> Result<Vec<MapEntry>, OsError> {
        let why = |what: &str| {
            OsError::Remote(format!(
                "the stub reads no files (no vFile) and {what}: the modules are unknown"
            ))
        };
        let program = self
            .program
            .as_ref()
            .ok_or_else(|| why("no local copy of the program was given"))?;
        let exe = Layout::read(program).ok_or_else(|| why("the program's copy is no ELF file"))?;
        let entry = self
            .auxv(AT_ENTRY)
            .ok_or_else(|| why("the auxiliary vector has no entry point"))?;
        let bias = entry.wrapping_sub(exe.entry);
        let exe_path = self.exe.clone().unwrap_or_else(|| program.clone());
        let exe_path = exe_path.to_string_lossy();
        let mut out = exe.mappings(bias, &exe_path, pseudo_inode(&exe_path));
        let interp = exe.interpreter();
        if let (Some(path), Some(base)) = (&interp, self.auxv(AT_BASE).filter(|&b| b != 0)) {
            if let Some(ld) = Layout::read(&self.local_copy(path)) {
                out.extend(ld.mappings(base, path, pseudo_inode(path)));
            }
        }
        for (l_addr, name) in self.link_map(&exe, bias) {
            if Some(&name) == interp.as_ref() || out.iter().any(|m| m.path.as_ref() == Some(&name))
            {
                continue;
            }
            if let Some(lib) = Layout::read(&self.local_copy(&name)) {
                out.extend(lib.mappings(l_addr, &name, pseudo_inode(&name)));
            }
        }
        out.sort_by_key(|m| m.start);
        Ok(out)
    }

    /// The local copy of the target's file at `path`: under `--sysroot` when there.
    fn local_copy(&self, path: &str) -> PathBuf {
        if let Some(root) = &self.sysroot {
            let rooted = root.join(path.trim_start_matches('/'));
            if rooted.exists() {
                return rooted;
            }
        }
        PathBuf::from(path)
    }

    /// The loader's libraries (`l_addr`, `l_name`) in its `link_map`, reached through the
    /// program's `DT_DEBUG` (empty before the loader has filled it in).
    fn link_map(&self, exe: &Layout, bias: u64) -> Vec<(u64, String)> {
        let word = |at: u64| -> Option<u64> {
            let mut b = [0u8; 8];
            (self.read_partial(at, &mut b) == 8).then(|| u64::from_le_bytes(b))
        };
        let Some(dynamic) = exe.first(PT_DYNAMIC) else {
            return Vec::new();
        };
        let at = bias.wrapping_add(dynamic.vaddr);
        let mut r_debug = 0;
        for i in 0..MAX_DYNAMIC.min((dynamic.memsz / 16) as usize) {
            let entry = at.wrapping_add(i as u64 * 16);
            let (Some(tag), Some(value)) = (word(entry), word(entry.wrapping_add(8))) else {
                break;
            };
            match tag {
                DT_NULL => break,
                DT_DEBUG => r_debug = value,
                _ => {}
            }
        }
        let mut out = Vec::new();
        let mut link = if r_debug == 0 {
            0
        } else {
            word(r_debug + 8).unwrap_or(0)
        };
        while link != 0 && out.len() < MAX_LIBRARIES {
            let (Some(l_addr), Some(l_name), Some(next)) =
                (word(link), word(link + 8), word(link + 24))
            else {
                break;
            };
            let mut name = vec![0u8; MAX_NAME];
            let n = self.read_partial(l_name, &mut name);
            name.truncate(n);
            if let Some(end) = name.iter().position(|&b| b == 0) {
                name.truncate(end);
                if !name.is_empty() {
                    out.push((l_addr, String::from_utf8_lossy(&name).into_owned()));
                }
            }
            link = next;
        }
        out
    }
}
