//! The files the crashed process had mapped (NT_FILE), found on this machine: the executable,
//! every library. They give symbols and debug information, and the memory the kernel left
//! out of the core (read-only file pages: code, constants).
//!
//! A core often comes from another machine, so each path is looked for in order: the program
//! the user named (for the executable), each `--solib-dir` folder by file name, the
//! `--sysroot` tree by full path, the path itself, and last by build id (in the `--solib-dir`
//! folders and `.build-id/xx/rest` links). When the core holds the module's first page (the
//! kernel dumps ELF headers by default), its build id must match the candidate's, so a
//! library of another version is never used by mistake. With a sysroot, this machine's own
//! file at the path is used only when its build id proves it is the same file.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use super::elf;
use super::image::{read_fully, CoreImage};

/// Where to look for the mapped files.
#[derive(Debug, Clone, Default)]
pub struct FileSearch {
    /// The program the user named: the executable.
    pub program: Option<PathBuf>,
    /// A tree holding the other machine's files under their full paths.
    pub sysroot: Option<PathBuf>,
    /// Folders holding copies of the files, by name (or by build id).
    pub solib_dirs: Vec<PathBuf>,
}

/// One mapped file and its copy here.
#[derive(Debug)]
pub struct MappedFile {
    /// The path the process mapped.
    pub core_path: String,
    /// The copy used here, if one was found.
    pub local: Option<PathBuf>,
    /// The build id the core holds for it (from its dumped first page).
    pub build_id: Option<Vec<u8>>,
    /// Why there is no copy, or why the one used is doubtful.
    pub note: Option<String>,
    handle: OnceCell<Option<File>>,
}

impl MappedFile {
    /// Reads the local copy at `offset`; the count read.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let file = self
            .handle
            .get_or_init(|| self.local.as_ref().and_then(|p| open_regular(p)));
        match file {
            Some(f) => read_fully(f, offset, buf),
            None => 0,
        }
    }
}

/// Opens only regular files: a path from a core may name a device, where even `open` can
/// block or have effects.
fn open_regular(path: &Path) -> Option<File> {
    crate::os::files::open_regular(path).ok()
}

fn file_build_id(path: &Path) -> Option<Vec<u8>> {
    let f = open_regular(path)?;
    elf::build_id(&|at, buf| read_fully(&f, at, buf) == buf.len())
}

/// The build id in the core's copy of the first page of the file mapped at `start` (file
/// offset 0), when the core holds that page.
fn dumped_build_id(core: &CoreImage, start: u64) -> Option<Vec<u8>> {
    let read = |at: u64, buf: &mut [u8]| {
        let Some(addr) = start.checked_add(at) else {
            return false;
        };
        let Some(seg) = core.segment_at(addr) else {
            return false;
        };
        let within = addr - seg.vaddr;
        if within.saturating_add(buf.len() as u64) > seg.present {
            return false;
        }
        core.read_file(seg.offset + within, buf) == buf.len()
    };
    elf::build_id(&read)
}

/// The core's copy of the start of the file mapped at `start` (file offset 0): up to a page,
/// as much as the core holds.
fn dumped_head(core: &CoreImage, start: u64) -> Option<Vec<u8>> {
    let seg = core.segment_at(start)?;
    let within = start - seg.vaddr;
    let n = seg.present.checked_sub(within)?.min(4096) as usize;
    let mut buf = vec![0u8; n];
    (n >= 64 && core.read_file(seg.offset + within, &mut buf) == n).then_some(buf)
}

/// Whether `path` starts with the bytes the core dumped of its first page: the ELF header
/// and program headers (a program without a build id is told apart by them). `None` when
/// either cannot be read.
fn same_head(path: &Path, head: &[u8]) -> Option<bool> {
    let f = open_regular(path)?;
    let mut mine = vec![0u8; head.len()];
    let n = read_fully(&f, 0, &mut mine);
    (n >= 64).then(|| mine[..n] == head[..n])
}

/// The path of the executable among the mapped files: the one holding the entry point
/// (AT_ENTRY), or failing that the program headers (AT_PHDR); else the first mapping.
pub fn executable_path(core: &CoreImage) -> Option<String> {
    const AT_PHDR: u64 = 3;
    const AT_ENTRY: u64 = 9;
    let files = &core.notes.files;
    [AT_ENTRY, AT_PHDR]
        .iter()
        .filter_map(|k| core.notes.auxv_value(*k))
        .find_map(|a| files.iter().find(|f| f.start <= a && a < f.end))
        .or(files.first())
        .map(|f| f.path.clone())
}

/// At most this many entries of a `--solib-dir` folder are read looking for a build id.
const MAX_SCANNED: usize = 4096;

/// At most this many distinct files are looked for (a real process maps a few hundred; a
/// corrupt NT_FILE can name a million).
const MAX_FILES: usize = 4096;

/// Finds a copy of every mapped file; and a problem line when there were too many to look for.
pub fn resolve(
    core: &CoreImage,
    exe: Option<&str>,
    search: &FileSearch,
) -> (Vec<MappedFile>, Option<String>) {
    // Where each file's first page is mapped (file offset 0): its build id is there.
    let mut first_pages: HashMap<&str, Vec<u64>> = HashMap::new();
    for f in core.notes.files.iter().filter(|f| f.offset == 0) {
        first_pages.entry(&f.path).or_default().push(f.start);
    }
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out: Vec<MappedFile> = Vec::new();
    let mut problem = None;
    for f in &core.notes.files {
        if !seen.insert(&f.path) {
            continue;
        }
        if out.len() == MAX_FILES {
            problem = Some(format!(
                "the core names more than {MAX_FILES} files; only the first {MAX_FILES} are looked for"
            ));
            break;
        }
        let build_id = first_pages
            .get(f.path.as_str())
            .into_iter()
            .flatten()
            .take(4)
            .find_map(|start| dumped_build_id(core, *start));
        let is_exe = exe == Some(f.path.as_str());
        // Without build ids the dumped headers tell the program apart.
        let head = if is_exe && build_id.is_none() {
            first_pages
                .get(f.path.as_str())
                .into_iter()
                .flatten()
                .take(4)
                .find_map(|start| dumped_head(core, *start))
        } else {
            None
        };
        let (local, note) = find_copy(&f.path, is_exe, &build_id, head.as_deref(), search);
        out.push(MappedFile {
            core_path: f.path.clone(),
            local,
            build_id,
            note,
            handle: OnceCell::new(),
        });
    }
    (out, problem)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The copy of `path` to use, and a note when there is none or it is doubtful.
fn find_copy(
    path: &str,
    is_exe: bool,
    want: &Option<Vec<u8>>,
    head: Option<&[u8]>,
    search: &FileSearch,
) -> (Option<PathBuf>, Option<String>) {
    let name = Path::new(path).file_name().map(PathBuf::from);
    // The user said which program this is: it is used, with a warning when it differs.
    if let (true, Some(program)) = (is_exe, &search.program) {
        let note = match (want, file_build_id(program)) {
            (Some(w), Some(have)) if *w != have => Some(format!(
                "{} is not the program that dumped this core (build id {} there, {} in the core): names and lines may be wrong",
                program.display(),
                hex(&have),
                hex(w)
            )),
            (Some(w), None) => Some(format!(
                "{} has no build id but the program that dumped this core had {}: it is not that program, names and lines may be wrong",
                program.display(),
                hex(w)
            )),
            (None, _) => match head.and_then(|h| same_head(program, h)) {
                Some(false) => Some(format!(
                    "{} is not the program that dumped this core (its ELF headers differ from those in the core): names and lines may be wrong",
                    program.display()
                )),
                _ => None,
            },
            _ => None,
        };
        return (Some(program.clone()), note);
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(name) = &name {
        candidates.extend(search.solib_dirs.iter().map(|d| d.join(name)));
    }
    if let Some(root) = &search.sysroot {
        candidates.push(root.join(path.trim_start_matches('/')));
    }
    // The host's own file: taken on trust without a sysroot, only when proven with one.
    let host = PathBuf::from(path);
    let host_proven_only = search.sysroot.is_some();
    candidates.push(host.clone());
    if let Some(id) = want.as_ref().filter(|id| id.len() > 1) {
        let rel = format!(".build-id/{:02x}/{}", id[0], hex(&id[1..]));
        let mut roots: Vec<PathBuf> = search.solib_dirs.clone();
        roots.push(
            search
                .sysroot
                .clone()
                .unwrap_or_else(|| PathBuf::from("/"))
                .join("usr/lib"),
        );
        candidates.extend(roots.iter().map(|r| r.join(&rel)));
    }
    let mut differs = None;
    for c in &candidates {
        if !c.is_file() {
            continue;
        }
        match (want, file_build_id(c)) {
            (Some(w), Some(have)) if *w != have => differs = differs.or(Some(c.clone())),
            (Some(_), Some(_)) => return (Some(c.clone()), None),
            _ if host_proven_only && *c == host => {}
            _ => return (Some(c.clone()), None),
        }
    }
    if let Some(id) = want {
        for dir in &search.solib_dirs {
            if let Some(found) = scan_for_build_id(dir, id) {
                return (Some(found), None);
            }
        }
    }
    let looked = if search.sysroot.is_none() && search.solib_dirs.is_empty() {
        "(--sysroot DIR or --solib-dir DIR point at copies)".to_string()
    } else {
        "in the --sysroot/--solib-dir given".to_string()
    };
    let note = match differs {
        Some(c) => format!(
            "{path}: {} is another build (its build id differs from the core's), so it is not used: no names there, and its code pages are not in the core {looked}",
            c.display()
        ),
        None => format!("{path}: not found, so no names there and its code pages are not in the core {looked}"),
    };
    (None, Some(note))
}

fn scan_for_build_id(dir: &Path, id: &[u8]) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .take(MAX_SCANNED)
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| file_build_id(p).as_deref() == Some(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_program_wins_and_missing_files_say_where_to_look() {
        let search = FileSearch {
            program: Some(PathBuf::from("/bin/sh")),
            ..Default::default()
        };
        let (local, note) = find_copy("/elsewhere/app", true, &None, None, &search);
        assert_eq!(local, Some(PathBuf::from("/bin/sh")));
        assert!(note.is_none());
        let (local, note) = find_copy("/no/such/libx.so", false, &None, None, &search);
        assert!(local.is_none());
        assert!(note.unwrap().contains("--sysroot DIR or --solib-dir DIR"));
    }

    #[test]
    fn a_copy_of_another_build_is_refused() {
        // /bin/sh has some build id; ask for another.
        let search = FileSearch::default();
        let want = Some(vec![0xde, 0xad, 0xbe, 0xef]);
        let (local, note) = find_copy("/bin/sh", false, &want, None, &search);
        if file_build_id(Path::new("/bin/sh")).is_some() {
            assert!(local.is_none());
            assert!(note.unwrap().contains("another build"));
        }
        // Without a build id in the core, the path is taken as it is.
        let (local, _) = find_copy("/bin/sh", false, &None, None, &search);
        assert_eq!(local, Some(PathBuf::from("/bin/sh")));
    }

    #[test]
    fn a_solib_dir_is_searched_by_name_first() {
        let dir = std::env::temp_dir().join(format!("scry-solib-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libfoo.so"), b"not even ELF").unwrap();
        let search = FileSearch {
            solib_dirs: vec![dir.clone()],
            ..Default::default()
        };
        let (local, _) = find_copy("/opt/app/lib/libfoo.so", false, &None, None, &search);
        assert_eq!(local, Some(dir.join("libfoo.so")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
