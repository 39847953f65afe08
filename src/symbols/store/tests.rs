//! The store against synthetic maps laid out as the kernel would, and against this test
//! process's own maps.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::maps::{parse_maps, Perms};
use crate::symbols::addr::{LoadBias, RuntimeAddr};
use crate::symbols::elf::{ElfImage, SymKind};
use crate::symbols::error::SymbolError;
use crate::symbols::testutil::{compile, nm_address, C_PROGRAM};

const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";
const PAGE: u64 = 0xfff;

/// The maps lines the kernel (or ld.so) would produce for `img` loaded at `base`.
fn kernel_maps(img: &ElfImage, path: &str, inode: u64, base: u64) -> Vec<MapEntry> {
    let base = if img.is_dyn { base } else { 0 };
    let mut out = Vec::new();
    for s in &img.load_segments {
        let start = base + (s.vaddr.0 & !PAGE);
        let file_end = (base + s.vaddr.0 + s.filesz + PAGE) & !PAGE;
        let mem_end = (base + s.vaddr.0 + s.memsz + PAGE) & !PAGE;
        let perms = Perms {
            read: s.flags.read,
            write: s.flags.write,
            exec: s.flags.exec,
            shared: false,
        };
        out.push(MapEntry {
            start,
            end: file_end,
            perms,
            offset: s.offset & !PAGE,
            dev: "08:01".into(),
            inode,
            path: Some(path.into()),
        });
        if mem_end > file_end {
            out.push(MapEntry {
                start: file_end,
                end: mem_end,
                perms,
                offset: 0,
                dev: "00:00".into(),
                inode: 0,
                path: None,
            });
        }
    }
    out
}

fn pseudo(start: u64, name: &str) -> MapEntry {
    MapEntry {
        start,
        end: start + 0x21000,
        perms: Perms {
            read: true,
            write: true,
            exec: false,
            shared: false,
        },
        offset: 0,
        dev: "00:00".into(),
        inode: 0,
        path: Some(name.into()),
    }
}

fn identity(m: &MapEntry) -> PathBuf {
    PathBuf::from(m.file_path().unwrap_or_default())
}

#[test]
fn pie_and_libc_from_synthetic_maps() {
    let exe = compile(
        "store-pie",
        C_PROGRAM,
        false,
        &["-g", "-O0", "-pie", "-fpie"],
    );
    let exe_s = exe.to_str().unwrap().to_string();
    let img = ElfImage::load(&exe).unwrap();
    let base = 0x5555_5555_4000u64;
    let lib_base = 0x7fff_f7d8_0000u64;
    let have_libc = Path::new(LIBC).is_file();

    let mut maps = kernel_maps(&img, &exe_s, 11, base);
    maps.push(pseudo(0x5555_5556_0000, "[heap]"));
    if have_libc {
        let libc = ElfImage::load(Path::new(LIBC)).unwrap();
        maps.extend(kernel_maps(&libc, LIBC, 22, lib_base));
    }
    maps.push(pseudo(0x7fff_ffde_0000, "[stack]"));
    maps.push(pseudo(0x7fff_fff0_0000, "[vdso]"));
    maps.sort_by_key(|m| m.start);

    let mut store = SymbolStore::new();
    store.refresh(&maps, Some(&*exe), &identity);
    let mods = store.modules();
    assert_eq!(mods.len(), if have_libc { 2 } else { 1 });
    assert!(mods[0].is_exe);
    assert_eq!(mods[0].bias, LoadBias(base));
    assert_eq!(mods[0].name, "prog");

    let main = img.symbols.lookup_name("main").unwrap().addr.0;
    let main_rt = base + main;
    assert_eq!(store.resolve("main"), Ok(RuntimeAddr(main_rt)));
    assert_eq!(store.resolve("main+0x10"), Ok(RuntimeAddr(main_rt + 0x10)));
    assert_eq!(store.resolve("main+16"), Ok(RuntimeAddr(main_rt + 16)));
    assert_eq!(store.resolve("prog:main"), Ok(RuntimeAddr(main_rt)));
    assert_eq!(store.resolve("0x401136"), Ok(RuntimeAddr(0x401136)));
    assert_eq!(store.resolve("4198710"), Ok(RuntimeAddr(4198710)));
    assert_eq!(
        store.resolve(&format!("prog:{main:#x}")),
        Ok(RuntimeAddr(main_rt))
    );

    assert_eq!(
        store.symbolize(RuntimeAddr(main_rt)).as_deref(),
        Some("main")
    );
    assert_eq!(
        store.symbolize(RuntimeAddr(main_rt + 4)).as_deref(),
        Some("main+0x4")
    );
    let (m, s, off) = store.symbol_at(RuntimeAddr(main_rt + 4)).unwrap();
    assert_eq!((m.name.as_str(), &*s.name, off), ("prog", "main", 4));

    let counter = store.resolve("counter").unwrap();
    assert_eq!(store.symbolize(counter).as_deref(), Some("counter"));
    // .bss lives past the file-backed pages; it still belongs to the module.
    let hidden = store.resolve("hidden_total").unwrap();
    assert_eq!(
        store.symbolize(RuntimeAddr(hidden.0 + 2)).as_deref(),
        Some("hidden_total+0x2")
    );
    assert_eq!(
        store.module_at(hidden).map(|m| m.name.as_str()),
        Some("prog")
    );

    match store.resolve("mian") {
        Err(e @ SymbolError::Unknown { .. }) => {
            assert_eq!(e.to_string(), "unknown symbol 'mian' (did you mean main?)")
        }
        other => panic!("{other:?}"),
    }
    // Without the suggestions: a miss is `None`, a hit its address, a bad expression an error.
    assert_eq!(store.try_resolve("mian"), Ok(None));
    assert_eq!(store.try_resolve("prog:mian"), Ok(None));
    assert_eq!(store.try_resolve("main"), Ok(Some(RuntimeAddr(main_rt))));
    assert!(matches!(
        store.try_resolve("nolib:main"),
        Err(SymbolError::BadExpr(_))
    ));
    assert_eq!(
        store.unknown_in("prog:mian").to_string(),
        "unknown symbol 'mian' (did you mean main?)"
    );
    assert!(matches!(
        store.resolve("nolib:main"),
        Err(SymbolError::BadExpr(_))
    ));
    assert!(matches!(
        store.resolve("main+"),
        Err(SymbolError::BadExpr(_))
    ));
    assert!(matches!(
        store.resolve("0xffffffffffffffff+1"),
        Err(SymbolError::BadExpr(_))
    ));
    assert!(matches!(
        store.resolve("tls_value"),
        Err(SymbolError::BadExpr(_))
    ));
    let (tm, ts) = store.tls_symbol("tls_value").unwrap();
    assert_eq!((tm.name.as_str(), ts.kind), ("prog", SymKind::Tls));

    let adds: Vec<_> = store
        .symbols(Some("add"), None)
        .unwrap()
        .filter(|(m, _, _)| m.is_exe)
        .collect();
    assert!(adds
        .iter()
        .any(|(_, s, a)| &*s.name == "add" && a.0 == base + s.addr.0));
    assert!(store
        .symbols(None, None)
        .unwrap()
        .all(|(_, s, _)| s.kind != SymKind::Tls));
    assert!(store
        .symbols(None, Some("prog"))
        .unwrap()
        .all(|(m, _, _)| m.is_exe));
    assert!(store.symbols(None, Some("nolib")).is_err());

    if have_libc {
        let puts = store.resolve("libc:puts").unwrap();
        let libc_mod = store.module_at(puts).unwrap();
        assert_eq!(libc_mod.name, "libc.so.6");
        assert_eq!(libc_mod.bias, LoadBias(lib_base));
        assert_eq!(store.resolve("libc.so.6:puts"), Ok(puts));
        assert_eq!(
            store.resolve("puts"),
            Ok(puts),
            "bare names fall through to libraries"
        );
        assert_eq!(
            store.symbolize(puts).as_deref(),
            Some("puts"),
            "no module prefix"
        );
        let (lm, ls, la) = store.lookup("puts").unwrap();
        assert_eq!(
            (lm.name.as_str(), &*ls.name, la),
            ("libc.so.6", "puts", puts)
        );
    }

    // A second refresh reuses the parsed images.
    let before = Arc::clone(&store.modules()[0].file);
    store.refresh(&maps, Some(&*exe), &identity);
    assert!(Arc::ptr_eq(&before, &store.modules()[0].file));
}

#[test]
fn non_pie_has_zero_bias() {
    let exe = compile(
        "store-nopie",
        C_PROGRAM,
        false,
        &["-O0", "-no-pie", "-fno-pie"],
    );
    let img = ElfImage::load(&exe).unwrap();
    let maps = kernel_maps(&img, exe.to_str().unwrap(), 5, 0);
    let mut store = SymbolStore::new();
    store.refresh(&maps, Some(&*exe), &identity);
    assert_eq!(store.modules()[0].bias, LoadBias(0));
    let main = store.resolve("main").unwrap();
    if let Some(nm_main) = nm_address(&exe, "main") {
        assert_eq!(main, RuntimeAddr(nm_main));
    }
}

#[test]
fn unreadable_and_non_elf_mappings_are_skipped() {
    let text = "\
7f0000000000-7f0000001000 r--p 00000000 08:01 99 /nonexistent/libgone.so
7f0000001000-7f0000002000 r--p 00000000 08:01 98 /etc/hostname
7f0000002000-7f0000003000 r--p 00000000 00:00 0 [vvar]
";
    let mut store = SymbolStore::new();
    store.refresh(&parse_maps(text), None, &identity);
    assert!(store.modules().is_empty());
    assert_eq!(store.symbolize(RuntimeAddr(0x7f0000000010)), None);
    assert!(matches!(
        store.resolve("anything"),
        Err(SymbolError::Unknown { .. })
    ));
}

#[inline(never)]
fn marker_fn(x: u64) -> u64 {
    std::hint::black_box(x).wrapping_mul(3)
}

/// The real kernel's layout for this very test process: checks bias arithmetic against
/// ground truth rather than our own idea of the kernel.
#[test]
fn symbolizes_own_process() {
    let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
    let exe = std::fs::read_link("/proc/self/exe").unwrap();
    let mut store = SymbolStore::new();
    store.refresh(&maps, Some(&*exe), &identity);
    assert!(store.exe().is_some(), "{:?}", store.modules());

    let f = marker_fn as fn(u64) -> u64 as usize as u64;
    assert_eq!(marker_fn(2), 6);
    let name = store.symbolize(RuntimeAddr(f)).unwrap();
    assert!(name.ends_with("store::tests::marker_fn"), "{name}");
    assert_eq!(store.resolve(&name), Ok(RuntimeAddr(f)));
    assert_eq!(
        store.symbolize(RuntimeAddr(f + 1)),
        Some(format!("{name}+0x1"))
    );
    assert_eq!(
        store.resolve("marker_fn"),
        Ok(RuntimeAddr(f)),
        "unique path suffix"
    );

    if let Some(libc) = store
        .modules()
        .iter()
        .find(|m| m.name.starts_with("libc.so"))
    {
        let malloc = store.resolve("libc:malloc").unwrap();
        assert!(libc.contains(malloc));
    }
}

/// With the C library's debug file installed (libc6-dbg), its internal functions have names
/// and its code has lines; without it the test has nothing to check.
#[test]
fn system_libc_debug_file_names_internal_functions() {
    let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
    let mut store = SymbolStore::new();
    store.refresh(&maps, None, &identity);
    let Some(libc) = store
        .modules()
        .iter()
        .find(|m| m.name.starts_with("libc.so"))
    else {
        return;
    };
    let Some(dbg) = libc.file.debug_file() else {
        eprintln!("no debug file for {}; skipped", libc.path);
        return;
    };
    assert_eq!(dbg.found_by, FoundBy::BuildId);
    assert!(!libc.image().has_symtab, "distributions strip .symtab");
    for name in ["__libc_start_call_main", "__restore_rt"] {
        assert!(
            libc.image().symbols.lookup_name(name).is_none(),
            "{name} is not in .dynsym"
        );
        let s = libc
            .file
            .symbols()
            .lookup_name(name)
            .unwrap_or_else(|| panic!("{name} from the debug file"));
        let addr = libc.bias.to_runtime(s.addr);
        assert_eq!(store.symbolize(addr).as_deref(), Some(name));
    }
    let (_, source) = libc
        .file
        .dwarf_with_source()
        .expect("compressed DWARF inflated");
    assert_eq!(source, DwarfSource::Separate);
    let malloc = store.resolve("libc:malloc").unwrap();
    let loc = store.locations(malloc).pop().unwrap();
    assert!(loc.file.is_some() && loc.line.is_some(), "{loc:?}");
}

/// The loader's rendezvous symbols are exported: finding them at every start must not read
/// a stripped library's separate debug file on the way (libc's, listed before the loader).
#[test]
fn raw_abi_lookup_leaves_debug_files_unread() {
    let maps = parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
    let mut store = SymbolStore::new();
    store.refresh(&maps, None, &identity);
    let Some(loader) = store
        .modules()
        .iter()
        .find(|m| m.name.starts_with("ld-linux"))
    else {
        return;
    };
    let own = loader
        .image()
        .symbols
        .lookup_name_raw("_dl_debug_state")
        .expect("the loader exports _dl_debug_state");
    assert_eq!(
        store.lookup_raw("_dl_debug_state"),
        Some(loader.bias.to_runtime(own.addr))
    );
    for m in store.modules() {
        assert!(!m.file.debug_file_searched(), "{} debug file read", m.name);
    }
}
