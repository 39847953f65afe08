//! From a maps snapshot to modules: which mappings are one loaded copy of one file, and the
//! load bias that copy was given.

use std::collections::HashMap;

use crate::maps::MapEntry;
use crate::symbols::addr::LoadBias;
use crate::symbols::elf::ElfImage;

/// The mappings of one loaded copy of one file, in address order.
pub(super) struct Group<'m> {
    pub path: &'m str,
    pub inode: u64,
    /// Indices into the maps slice.
    pub entries: Vec<usize>,
    last_offset: u64,
}

/// The bias that explains every mapping of the module. One mapping alone can be ambiguous
/// (segments share file pages), but the set of them is not. Mappings that fit no candidate
/// (a program re-mapping part of its own file) do not veto; failing agreement, the lowest
/// mapping's first reading stands, which is right for the usual layout.
pub(super) fn agreed_bias<'m>(
    image: &ElfImage,
    mut entries: impl Iterator<Item = &'m MapEntry>,
) -> Option<LoadBias> {
    let first = entries.next()?;
    let rest: Vec<&MapEntry> = entries.collect();
    let candidates: Vec<LoadBias> = image.bias_candidates(first.start, first.offset).collect();
    let fits = |b: LoadBias| {
        rest.iter()
            .filter(|m| image.bias_candidates(m.start, m.offset).any(|c| c == b))
            .count()
    };
    let mut chosen = *candidates.first()?;
    let mut chosen_fits = fits(chosen);
    for &b in &candidates[1..] {
        let f = fits(b);
        if f > chosen_fits {
            (chosen, chosen_fits) = (b, f);
        }
    }
    Some(chosen)
}

/// Whether a file's mappings are a loaded object (the kernel's executable, the loader's
/// libraries) rather than a program's own `mmap` of an ELF file (Rust's backtrace code maps
/// its executable and debug files read-only): both map private copies, and an object with
/// code has it mapped executable. A shared mapping, or code never mapped executable, is
/// data; taken as a module, it would give every function twice, once at a bogus address.
pub(super) fn loader_mapped<'m>(
    image: &ElfImage,
    mut entries: impl Iterator<Item = &'m MapEntry> + Clone,
) -> bool {
    let has_code = image.load_segments.iter().any(|s| s.flags.exec);
    !entries.clone().any(|m| m.perms.shared) && (!has_code || entries.any(|m| m.perms.exec))
}

pub(super) fn round_up_page(x: u64) -> u64 {
    x.checked_add(0xfff).map_or(!0xfff, |v| v & !0xfff)
}

/// Groups file mappings by the file they map. A file mapped again from a lower offset than
/// its previous mapping is a second copy (dlmopen, or a program mapping its own binary) and
/// becomes its own group.
pub(super) fn group_mappings(maps: &[MapEntry]) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut open: HashMap<(&str, u64, &str), usize> = HashMap::new();
    for (i, m) in maps.iter().enumerate() {
        // Loaders map modules privately; a shared mapping is a program (or a debugger
        // sharing the address space) reading the file as data, and would skew the bias.
        if m.is_pseudo() || m.perms.shared {
            continue;
        }
        let Some(path) = m.file_path() else { continue };
        let key = (path, m.inode, m.dev.as_str());
        match open.get(&key) {
            Some(&g) if m.offset >= groups[g].last_offset => {
                groups[g].entries.push(i);
                groups[g].last_offset = m.offset;
            }
            _ => {
                open.insert(key, groups.len());
                groups.push(Group {
                    path,
                    inode: m.inode,
                    entries: vec![i],
                    last_offset: m.offset,
                });
            }
        }
    }
    groups
}
