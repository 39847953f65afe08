//! Where a module's separate debug information lives, searched the way gdb searches: by
//! build id, then by `.gnu_debuglink` name (its CRC checked), in the user's debug directories
//! first and the system's (`/usr/lib/debug`) last. Paths are looked up in scry's own file
//! system.

use std::path::{Path, PathBuf};

use crate::symbols::elf::{crc32, DebugImage, DebugLink, ElfImage};

/// The global debug directory distributions install debug files under.
pub const SYSTEM_DEBUG_DIR: &str = "/usr/lib/debug";

/// How a separate debug file was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoundBy {
    BuildId,
    DebugLink,
}

/// A separate debug file of a module, verified to belong to it.
#[derive(Debug)]
pub struct DebugFile {
    pub image: DebugImage,
    pub found_by: FoundBy,
}

/// What identifies a module's separate debug file: owned, so that a search can run on
/// another thread while the module's image is being used.
#[derive(Clone, Debug)]
pub(super) struct Wanted {
    /// The image's own file, never taken for its own debug file.
    path: PathBuf,
    /// The path the process maps the file from (debuglink names are looked for beside it).
    module_path: PathBuf,
    build_id: Option<Vec<u8>>,
    debuglink: Option<DebugLink>,
}

impl Wanted {
    pub(super) fn of(image: &ElfImage, module_path: &Path) -> Wanted {
        Wanted {
            path: image.path.clone(),
            module_path: module_path.to_path_buf(),
            build_id: image.build_id.clone(),
            debuglink: image.debuglink.clone(),
        }
    }

    /// Whether the system debug directory has a file under this build id: one `stat`,
    /// nothing read.
    pub(super) fn installed_by_build_id(&self) -> bool {
        self.build_id
            .as_deref()
            .filter(|id| id.len() >= 2)
            .is_some_and(|id| by_build_id(Path::new(SYSTEM_DEBUG_DIR), id).is_file())
    }
}

/// Searches for the debug file `wanted` describes. `user_dirs` come before the system
/// directory.
pub(super) fn find(wanted: &Wanted, user_dirs: &[PathBuf]) -> Option<DebugFile> {
    let dirs: Vec<&Path> = user_dirs
        .iter()
        .map(PathBuf::as_path)
        .chain(std::iter::once(Path::new(SYSTEM_DEBUG_DIR)))
        .collect();
    if let Some(id) = wanted.build_id.as_deref().filter(|id| id.len() >= 2) {
        for dir in &dirs {
            let Ok(candidate) = DebugImage::load(&by_build_id(dir, id)) else {
                continue;
            };
            // A stale file under the right name (a rebuilt package) is not this build's.
            if candidate.build_id.as_deref().is_none_or(|b| b == id) {
                return Some(DebugFile {
                    image: candidate,
                    found_by: FoundBy::BuildId,
                });
            }
        }
    }
    let link = wanted.debuglink.as_ref()?;
    for path in debuglink_candidates(&wanted.module_path, &link.name, &dirs) {
        if same_file(&path, &wanted.path) || same_file(&path, &wanted.module_path) {
            continue;
        }
        let Ok(candidate) = DebugImage::load(&path) else {
            continue;
        };
        let ids_agree = match (&candidate.build_id, &wanted.build_id) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        if ids_agree && crc32(candidate.data()) == link.crc {
            return Some(DebugFile {
                image: candidate,
                found_by: FoundBy::DebugLink,
            });
        }
    }
    None
}

/// `DIR/.build-id/ab/cdef….debug`.
fn by_build_id(dir: &Path, build_id: &[u8]) -> PathBuf {
    let hex: String = build_id.iter().map(|b| format!("{b:02x}")).collect();
    let (head, rest) = hex.split_at(2);
    dir.join(".build-id")
        .join(head)
        .join(format!("{rest}.debug"))
}

/// gdb's places for a debuglink name, in its order: beside the binary, in `.debug/` beside
/// it, then in each debug directory under the binary's own directory path; last, for
/// directories the user named, the name directly in them (a flat folder of debug files).
fn debuglink_candidates(module_path: &Path, name: &str, dirs: &[&Path]) -> Vec<PathBuf> {
    let bin_dir = module_path.parent().unwrap_or(Path::new("/"));
    let mut out = vec![bin_dir.join(name), bin_dir.join(".debug").join(name)];
    let relative = bin_dir.strip_prefix("/").unwrap_or(bin_dir);
    for dir in dirs {
        out.push(dir.join(relative).join(name));
    }
    for dir in &dirs[..dirs.len().saturating_sub(1)] {
        out.push(dir.join(name));
    }
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_id_path() {
        assert_eq!(
            by_build_id(Path::new("/usr/lib/debug"), &[0xab, 0xcd, 0xef, 0x01]),
            PathBuf::from("/usr/lib/debug/.build-id/ab/cdef01.debug")
        );
    }

    #[test]
    fn debuglink_places_in_gdb_order() {
        let dirs = [Path::new("/opt/dbg"), Path::new(SYSTEM_DEBUG_DIR)];
        let got = debuglink_candidates(Path::new("/usr/bin/prog"), "prog.debug", &dirs);
        let want = [
            "/usr/bin/prog.debug",
            "/usr/bin/.debug/prog.debug",
            "/opt/dbg/usr/bin/prog.debug",
            "/usr/lib/debug/usr/bin/prog.debug",
            "/opt/dbg/prog.debug",
        ];
        assert_eq!(got, want.iter().map(PathBuf::from).collect::<Vec<_>>());
    }
}

#[cfg(test)]
mod split_tests {
    //! A fixture's debug information split off with binutils, the way distributions ship it,
    //! and found again by the module.

    use std::ffi::OsStr;
    use std::sync::Arc;

    use super::*;
    use crate::symbols::addr::FileAddr;
    use crate::symbols::store::{DwarfSource, ModuleFile};
    use crate::symbols::testutil::{compile, run_tool, TempExe, C_PROGRAM};

    /// `prog` stripped of everything, its debug file written to `debug`.
    fn split(tag: &str, debug: &Path) -> (TempExe, ElfImage) {
        let exe = compile(tag, C_PROGRAM, false, &["-g", "-O0", "-Wl,--build-id"]);
        let full = ElfImage::load(&exe).unwrap();
        run_tool(
            "objcopy",
            &[
                OsStr::new("--only-keep-debug"),
                exe.as_os_str(),
                debug.as_os_str(),
            ],
        );
        run_tool("strip", &[OsStr::new("--strip-all"), exe.as_os_str()]);
        (exe, full)
    }

    fn link(exe: &Path, debug: &Path) {
        let arg = format!("--add-gnu-debuglink={}", debug.display());
        run_tool("objcopy", &[OsStr::new(&arg), exe.as_os_str()]);
    }

    fn module(exe: &Path, dirs: &[PathBuf]) -> ModuleFile {
        let image = ElfImage::load(exe).unwrap();
        ModuleFile::new(image, exe.to_path_buf(), Arc::from(dirs.to_vec()))
    }

    /// Names, lines and variables that only the debug file has.
    fn check_debug_info(m: &ModuleFile, full: &ElfImage) {
        let helper = full.symbols.lookup_name("helper").unwrap();
        assert!(!helper.global);
        let found = m
            .symbols()
            .lookup_name("helper")
            .expect("local name from the debug file");
        assert_eq!(found.addr, helper.addr);
        let (s, off) = m
            .symbols()
            .lookup_addr(FileAddr(helper.addr.0 + 2))
            .unwrap();
        assert_eq!((&*s.name, off), ("helper", 2));

        let (_, source) = m.dwarf_with_source().expect("DWARF from the debug file");
        assert_eq!(source, DwarfSource::Separate);
        let add = full.symbols.lookup_name("add").unwrap().addr;
        let loc = m.locations(add).pop().unwrap();
        assert_eq!(loc.function.as_deref(), Some("add"));
        let line = C_PROGRAM
            .lines()
            .position(|l| l.starts_with("int add("))
            .unwrap()
            + 1;
        assert_eq!(loc.line, Some(line as u32));
        let scope = m.dwarf().unwrap().scopes_at(add).expect("add's scope");
        let names: Vec<String> = scope.chain[0].vars.iter().map(|v| v.name.clone()).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn a_debug_file_opened_ahead_of_need_answers_as_one_found_on_need() {
        use crate::symbols::store::DwarfOpening;
        let dir = crate::symbols::testutil::temp_dir("dbgahead");
        let debug = dir.join("prog.debug");
        let (exe, full) = split("dbgahead-exe", &debug);
        link(&exe, &debug);
        std::fs::rename(&debug, exe.dir().join("prog.debug")).unwrap();
        let image = ElfImage::load(&exe).unwrap();
        let dirs: Arc<[PathBuf]> = Arc::from(Vec::new());
        // Asked for its DWARF first, then for the file; and the other way round.
        for dwarf_first in [true, false] {
            let wanted = Wanted::of(&image, &exe);
            let opening = DwarfOpening::start_separate(wanted, dirs.clone());
            if std::thread::available_parallelism().is_ok_and(|n| n.get() > 1) {
                assert!(opening.is_some(), "a thread where a core is spare");
            }
            let image = ElfImage::load(&exe).unwrap();
            let m = ModuleFile::with_opening(image, exe.to_path_buf(), dirs.clone(), opening);
            if dwarf_first {
                assert!(m.dwarf().is_some());
            }
            let dbg = m.debug_file().expect("the opening's debug file");
            assert_eq!(dbg.found_by, FoundBy::DebugLink);
            check_debug_info(&m, &full);
        }
    }

    #[test]
    fn found_by_debuglink_beside_the_binary_with_its_crc() {
        let dir = crate::symbols::testutil::temp_dir("dbglink");
        let debug = dir.join("prog.debug");
        let (exe, full) = split("dbglink-exe", &debug);
        let moved = exe.dir().join("prog.debug");
        link(&exe, &debug);
        std::fs::rename(&debug, &moved).unwrap();
        // Without build-id lookups succeeding (the system tree has no such id), the link is
        // followed: beside the binary.
        let m = module(&exe, &[]);
        assert!(!m.image.has_symtab);
        assert!(m.image.symbols.lookup_name("helper").is_none(), "stripped");
        let dbg = m.debug_file().expect("debug file beside the binary");
        assert_eq!(dbg.found_by, FoundBy::DebugLink);
        assert_eq!(dbg.image.path, moved);
        check_debug_info(&m, &full);

        // A file of that name with other contents fails the CRC and is not used.
        let mut bytes = std::fs::read(&moved).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&moved, bytes).unwrap();
        let m = module(&exe, &[]);
        assert!(m.debug_file().is_none());
        assert!(m.dwarf().is_none());
        assert!(m.symbols().lookup_name("helper").is_none());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn found_by_build_id_in_a_user_debug_dir() {
        let root = crate::symbols::testutil::temp_dir("buildid");
        let scratch = root.join("prog.debug");
        let (exe, full) = split("buildid-exe", &scratch);
        let id = full.build_id.clone().expect("linked with --build-id");
        let target = by_build_id(&root, &id);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::rename(&scratch, &target).unwrap();

        assert!(
            module(&exe, &[]).debug_file().is_none(),
            "not in the system dir"
        );
        let m = module(&exe, std::slice::from_ref(&root));
        let dbg = m.debug_file().expect("found under DIR/.build-id");
        assert_eq!(dbg.found_by, FoundBy::BuildId);
        assert_eq!(dbg.image.path, target);
        check_debug_info(&m, &full);
        let _ = std::fs::remove_dir_all(root);
    }
}
