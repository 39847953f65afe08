//! Separate debug information, PLT names, names for every address, and the module and line
//! tables: what a stripped program (and the C library's own debug file) tell once their
//! debug information is found again.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fixture_with, Scry};

/// Runs a binutils tool, failing the test on error.
fn tool(name: &str, args: &[&str]) -> String {
    let out = Command::new(name).args(args).output().expect("binutils");
    assert!(
        out.status.success(),
        "{name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A private copy of the splitdebug fixture in its own directory.
fn copy_fixture(tag: &str) -> (PathBuf, PathBuf) {
    let built = fixture_with("splitdebug", &["-g", "-O0", "-Wl,--build-id"]);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("debuginfo-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("splitdebug");
    std::fs::copy(&built, &exe).unwrap();
    (dir, exe)
}

/// Moves the debug information of `exe` into `debug` and strips `exe` of all symbols.
fn split(exe: &Path, debug: &Path) {
    let (e, d) = (exe.to_str().unwrap(), debug.to_str().unwrap());
    tool("objcopy", &["--only-keep-debug", e, d]);
    tool("strip", &["--strip-all", e]);
}

/// The value of `nm`'s listing for `name` in `file` (the debug file has the full table).
fn nm(file: &Path, name: &str) -> u64 {
    let text = tool("nm", &[file.to_str().unwrap()]);
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(name))
        .unwrap_or_else(|| panic!("{name} not in nm {file:?}"));
    u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).unwrap()
}

/// `key=0x...` printed by the fixture.
fn printed(output: &str, key: &str) -> u64 {
    let at = output.find(&format!("{key}=0x")).expect(key) + key.len() + 3;
    let hex: String = output[at..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    u64::from_str_radix(&hex, 16).unwrap()
}

fn line_of(text: &str) -> u32 {
    common::line_of(include_str!("../fixtures/splitdebug.c"), text) as u32
}

/// Stops at `scale` by name and checks what only the debug file knows: the name, the line,
/// the locals, the unwind rows, and the values the program itself prints.
fn check_stripped_program(scry: &mut Scry, debug: &Path) {
    let base = scry.num("modules()[0].base");
    let scale = scry.num("symbol('scale')");
    assert_eq!(
        scale,
        base + nm(debug, "scale"),
        "address from the debug file's .symtab"
    );
    // `scale+0`: the function's first byte (a bare name would stop after the prologue).
    scry.ok("breakpoint.set('scale+0')");
    let stop = scry.ok("cont()");
    assert!(
        stop.contains(" scale ")
            && stop.contains(&format!("splitdebug.c:{}", line_of("static int scale("))),
        "{stop}"
    );
    // Past the prologue (a breakpoint on a line, found through the debug file's line
    // table), the parameters are stored and the locals read them.
    let body = line_of("int scaled = x * factor;");
    scry.ok(&format!("breakpoint.set('splitdebug.c:{body}')"));
    assert!(scry.ok("cont()").contains(&format!("splitdebug.c:{body}")));
    let locals = scry.ok("state.locals().map(l => `${l.name}=${l.value}`).join(' ')");
    assert!(locals.starts_with("x=7 factor=3"), "{locals}");
    let rows = scry.ok("state.unwind().map(f => f.symbol.split('+')[0] + ':' + f.line).join(' ')");
    assert_eq!(
        rows,
        format!("scale:{body} main:{}", line_of("int total = scale("))
    );
    assert_eq!(scry.ok("line_at(state.pc)"), format!("splitdebug.c:{body}"));
    assert_eq!(
        scry.num(&format!("lines('splitdebug.c:{body}')[0]")),
        scry.num("state.pc")
    );
    // A call inlined from the debug file's DWARF is a row of its own.
    let inlined = line_of("return v + 1;");
    scry.ok(&format!("breakpoint.set('splitdebug.c:{inlined}')"));
    assert!(scry
        .ok("cont()")
        .contains(&format!("splitdebug.c:{inlined}")));
    let rows = scry.ok(
        "state.unwind().map(f => (f.inlined ? '[inlined] ' : '') + f.symbol.split('+')[0] + ':' + f.line).join(' | ')",
    );
    assert_eq!(
        rows,
        format!(
            "[inlined] plus_one:{inlined} | scale:{} | main:{}",
            line_of("return plus_one(scaled);"),
            line_of("int total = scale(")
        )
    );
    scry.ok("breakpoint.remove(3)");
    scry.ok("breakpoint.remove(2)");
    scry.ok("breakpoint.remove(1)");
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert_eq!(printed(&out, "scale"), scale, "{out}");
    assert!(out.contains("total=22"), "{out}");
}

#[test]
fn names_lines_and_locals_come_from_a_debuglink_file() {
    let (dir, exe) = copy_fixture("link");
    let debug = dir.join("splitdebug.debug");
    split(&exe, &debug);
    tool(
        "objcopy",
        &[
            &format!("--add-gnu-debuglink={}", debug.display()),
            exe.to_str().unwrap(),
        ],
    );
    assert!(!tool("nm", &["-a", exe.to_str().unwrap()]).contains("scale"));

    let mut scry = Scry::spawn(&exe, &[]);
    let m = scry.ok("const m = modules()[0]; [m.name, m.symbols, m.debug, m.debug_file].join(' ')");
    assert_eq!(
        m,
        format!("splitdebug separate separate {}", debug.display())
    );
    check_stripped_program(&mut scry, &debug);

    // gdb, reading the same pair, names the same address the same way.
    let file_addr = nm(&debug, "scale") + 4;
    let gdb = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", &format!("info symbol {file_addr:#x}")])
        .arg(&exe)
        .output();
    if let Ok(out) = gdb {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with("scale + 4 in section .text"),
            "gdb: {text}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_build_id_tree_from_the_command_line_or_config() {
    let (dir, exe) = copy_fixture("buildid");
    let tree = dir.join("debug");
    let scratch = dir.join("scratch.debug");
    split(&exe, &scratch);
    let id = tool("readelf", &["-n", exe.to_str().unwrap()]);
    let id = id
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("a build id")
        .to_string();
    let debug = tree
        .join(".build-id")
        .join(&id[..2])
        .join(format!("{}.debug", &id[2..]));
    std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
    std::fs::rename(&scratch, &debug).unwrap();

    let tree_s = tree.to_str().unwrap();
    let mut scry = Scry::start(&["--debug-dir", tree_s, "--", exe.to_str().unwrap()]);
    assert_eq!(scry.ok("modules()[0].build_id"), id);
    assert_eq!(scry.ok("config.debug_dirs[0]"), tree_s);
    check_stripped_program(&mut scry, &debug);

    // Without the directory the name is unknown; adding it through config finds it.
    let mut scry = Scry::spawn(&exe, &[]);
    assert!(scry
        .err("symbol('scale')")
        .contains("unknown symbol 'scale'"));
    assert_eq!(scry.ok("modules()[0].debug"), "none");
    scry.ok(&format!("config.debug_dirs = ['{tree_s}']"));
    assert_eq!(scry.ok("modules()[0].debug_file"), debug.to_str().unwrap());
    check_stripped_program(&mut scry, &debug);
    assert!(scry
        .err("config.debug_dirs = ['/nonexistent/dir']")
        .contains("not a directory"));

    let bad = Command::new(common::SCRY)
        .args([
            "--debug-dir",
            "/nonexistent/dir",
            "--",
            exe.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr.contains("--debug-dir /nonexistent/dir: not a directory"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// `scry session start` passes `--debug-dir` to the session (it shares the plain command
/// line's options, as `scry mcp` does).
#[test]
fn session_start_accepts_debug_dirs() {
    let (dir, exe) = copy_fixture("session");
    let run = |args: &[&str]| {
        Command::new(common::SCRY)
            .args(args)
            .env("XDG_RUNTIME_DIR", &dir)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let dir_s = dir.to_str().unwrap();
    let start = run(&[
        "session",
        "start",
        "dbg",
        "--debug-dir",
        dir_s,
        exe.to_str().unwrap(),
    ]);
    assert!(
        start.status.success(),
        "{}",
        String::from_utf8_lossy(&start.stderr)
    );
    let eval = run(&["session", "eval", "dbg", "-e", "config.debug_dirs[0]"]);
    let stop = run(&["session", "stop", "dbg"]);
    assert!(stop.status.success());
    assert_eq!(String::from_utf8_lossy(&eval.stdout).trim(), dir_s);
    let _ = std::fs::remove_dir_all(dir);
}

/// objdump's `<name@plt>` entries of `exe`, as (link-time address, name).
fn objdump_plt(exe: &Path) -> Vec<(u64, String)> {
    tool("objdump", &["-d", exe.to_str().unwrap()])
        .lines()
        .filter_map(|l| {
            let (addr, rest) = l.split_once(" <")?;
            let name = rest.strip_suffix(">:")?;
            (name.ends_with("@plt") && !name.starts_with('*'))
                .then(|| (u64::from_str_radix(addr, 16).ok(), name.to_string()))
                .and_then(|(a, n)| Some((a?, n)))
        })
        .collect()
}

#[test]
fn plt_entries_are_named_as_objdump_names_them() {
    // The lazy .plt layout, and the IBT one (.plt.sec) where calls go through a second table.
    for flags in [
        &["-g", "-O0"][..],
        &["-g", "-O0", "-fcf-protection=full", "-Wl,-z,ibtplt"][..],
    ] {
        let exe = fixture_with("splitdebug", flags);
        let want = objdump_plt(&exe);
        assert!(want.iter().any(|(_, n)| n == "puts@plt"), "{want:?}");
        let mut scry = Scry::spawn(&exe, &[]);
        let base = scry.num("modules()[0].base");
        for (addr, name) in &want {
            assert_eq!(
                scry.num(&format!("symbol('{name}')")),
                base + addr,
                "{name} {flags:?}"
            );
            assert_eq!(
                scry.ok(&format!("state.symbol_at({})", base + addr + 4)),
                format!("{name}+0x4")
            );
        }
        let listing = scry.ok("state.disasm(40, 'main')");
        let puts = base + want.iter().find(|(_, n)| n == "puts@plt").unwrap().0;
        assert!(
            listing.contains(&format!("call {puts:#x} <puts@plt>")),
            "{listing}"
        );

        // A breakpoint on the entry stops in it, not in libc's puts.
        scry.ok("breakpoint.set('puts@plt')");
        let stop = scry.ok("cont()");
        assert!(stop.contains(&format!("at {puts:#x} puts@plt")), "{stop}");
        let frames = scry.ok("state.unwind().map(f => f.symbol.split('+')[0]).join(' ')");
        assert_eq!(frames, "puts@plt main");
        assert_ne!(scry.num("symbol('puts')"), puts, "plain puts is libc's");
    }
}

#[test]
fn addresses_no_symbol_covers_are_named_by_module_and_offset() {
    let exe = fixture_with("splitdebug", &["-g", "-O0"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!(
        "breakpoint.set('splitdebug.c:{}')",
        line_of("puts(\"done\")")
    ));
    scry.ok("cont()");
    // Outside every module: the mapping.
    let stack = scry.ok("state.symbol_at(state.sp)");
    assert!(stack.starts_with("[stack]+0x"), "{stack}");
    assert_eq!(scry.ok("state.symbol_at(8)"), "null");
    // `banner` is static data: named by the symbol table. Inside a string literal (no symbol
    // covers .rodata's strings), the module and the offset from its base.
    let banner_at = scry.num("symbol('banner')");
    assert_eq!(scry.ok(&format!("state.symbol_at({banner_at})")), "banner");
    let base = scry.num("modules()[0].base");
    let rodata = tool("readelf", &["-S", "-W", exe.to_str().unwrap()]);
    let line = rodata
        .lines()
        .find(|l| l.contains(" .rodata "))
        .expect(".rodata");
    let fields: Vec<&str> = line.split_whitespace().collect();
    let at = fields.iter().position(|f| *f == ".rodata").unwrap();
    let rodata_addr = u64::from_str_radix(fields[at + 2], 16).unwrap();
    let rodata_off = usize::from_str_radix(fields[at + 3], 16).unwrap();
    // The string "done" (puts' argument) inside .rodata, where no symbol is.
    let bytes = std::fs::read(&exe).unwrap();
    let pos = bytes[rodata_off..]
        .windows(5)
        .position(|w| w == b"done\0")
        .expect("the literal");
    let literal = rodata_addr + pos as u64;
    let covered = tool("nm", &["-S", exe.to_str().unwrap()])
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let a = u64::from_str_radix(f.first()?, 16).ok()?;
            let n = u64::from_str_radix(f.get(1)?, 16).ok()?;
            (f.len() == 4).then_some((a, n))
        })
        .any(|(a, n)| a <= literal && literal < a + n);
    assert!(!covered, "no symbol covers the literal");
    let module = exe.file_name().unwrap().to_str().unwrap();
    let name = scry.ok(&format!("state.symbol_at({})", base + literal));
    assert_eq!(name, format!("{module}+{literal:#x}"));
    assert_eq!(
        scry.num(&format!("symbol('{name}')")),
        base + literal,
        "reads back"
    );
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert_eq!(printed(&out, "banner"), banner_at, "{out}");
}

#[test]
fn modules_and_line_tables_without_running() {
    let exe = fixture_with("splitdebug", &["-g", "-O0"]);
    let mut scry = Scry::spawn(&exe, &[]);
    // The executable first, then libraries; every extent matches /proc/PID/maps.
    let pid = scry.num("status().pid");
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let rows = scry
        .ok("modules().map(m => [m.name, hex(m.start), hex(m.end), m.path].join(' ')).join('\\n')");
    let first = rows.lines().next().unwrap();
    let module = exe.file_name().unwrap().to_str().unwrap();
    assert!(first.starts_with(&format!("{module} ")), "{rows}");
    for row in rows.lines() {
        let f: Vec<&str> = row.split(' ').collect();
        if f[0] == "[vdso]" {
            assert!(maps.contains(&format!("{}-", &f[1][2..])) && maps.contains("[vdso]"));
            continue;
        }
        let start = format!("{}-", &f[1][2..]);
        assert!(
            maps.lines()
                .any(|l| l.starts_with(&start) && l.ends_with(f[3])),
            "{row} not in maps:\n{maps}"
        );
    }
    let listing = scry.ok("modules()");
    assert!(
        listing.starts_with("base\tend\tname\tsymbols\tdebug\n0x"),
        "{listing}"
    );
    assert!(scry.ok("modules()[0].symbols + ' ' + modules()[0].debug") == "symtab own");

    // Line -> addresses -> line, checked against the line table objdump decodes.
    let line = line_of("puts(\"done\");");
    let decoded = tool("objdump", &["--dwarf=decodedline", exe.to_str().unwrap()]);
    let want: Vec<u64> = decoded
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() >= 3 && f[0] == "splitdebug.c" && f[1] == line.to_string()
        })
        .map(|l| {
            u64::from_str_radix(
                l.split_whitespace()
                    .nth(2)
                    .unwrap()
                    .trim_start_matches("0x"),
                16,
            )
            .unwrap()
        })
        .collect();
    assert!(!want.is_empty(), "{decoded}");
    let base = scry.num("modules()[0].base");
    let got = scry.ok(&format!("lines('splitdebug.c:{line}').map(hex).join(' ')"));
    assert_eq!(got, format!("{:#x}", base + want[0]));
    assert_eq!(
        scry.ok(&format!("line_at({})", base + want[0])),
        format!("splitdebug.c:{line}")
    );
    assert_eq!(scry.ok("lines('splitdebug.c:1').length"), "0");
    assert!(scry
        .ok("lines('nosuch.c:3')")
        .contains("no code for nosuch.c:3"));

    // symbols() limited to one module.
    assert_eq!(
        scry.ok(&format!(
            "symbols('main', {{module: '{module}'}}).map(s => s.module).join(' ')"
        )),
        module
    );
    let libc_only = scry.ok(
        "[...new Set(symbols('printf', {module: 'libc', limit: 50}).map(s => s.module))].join(' ')",
    );
    assert_eq!(libc_only, "libc.so.6");
    assert!(scry
        .err("symbols('x', {module: 'nolib'})")
        .contains("no loaded module matches 'nolib'"));
}

/// With the C library's debug file installed (libc6-dbg), every frame of threads blocked in
/// it has the name gdb gives the same address; without it there is nothing to compare.
#[test]
fn libc_frames_are_named_as_gdb_names_them() {
    let exe = common::fixture("threads");
    let mut scry = Scry::spawn(&exe, &[]);
    if scry.ok("modules().find(m => m.name.startsWith('libc.so')).debug") != "separate" {
        eprintln!("no debug file for libc; skipped");
        return;
    }
    // At all_started the workers are blocked on a mutex main holds: in libc's lock code.
    scry.ok("breakpoint.set('all_started'); cont()");
    let libc = scry.ok("modules().find(m => m.name.startsWith('libc.so')).path");
    let base = scry.num("modules().find(m => m.name.startsWith('libc.so')).base");
    // Every frame in libc, of every thread, as `pc lookup_pc name`.
    let rows = scry.ok(
        "const out = []; for (const t of thread.list()) { thread.select(t.tid); \
         for (const f of state.unwind({all: true})) if (!f.inlined && f.symbol && \
         modules().find(m => m.name.startsWith('libc.so') && f.pc >= m.start && f.pc < m.end)) \
         out.push([f.pc, f.frame === 0 ? f.pc : f.pc - 1, f.symbol.split('+')[0]].join(' ')) } out.join('\\n')",
    );
    let frames: Vec<(u64, String)> = rows
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[1].parse::<u64>().unwrap() - base, f[2].to_string())
        })
        .collect();
    // Under load a worker may still be in the barrier before the mutex: either is libc's.
    assert!(
        frames
            .iter()
            .any(|(_, n)| n == "__lll_lock_wait" || n == "pthread_barrier_wait"),
        "{rows}"
    );
    assert!(frames.iter().any(|(_, n)| n == "start_thread"), "{rows}");
    let mut gdb = Command::new("gdb");
    gdb.args(["-batch", "-nx", "-iex", "set debuginfod enabled off"]);
    for (addr, _) in &frames {
        gdb.args(["-ex", &format!("info symbol {addr:#x}")]);
    }
    let Ok(out) = gdb.arg(&libc).output() else {
        eprintln!("no gdb; compared nothing");
        return;
    };
    let answers = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = answers
        .lines()
        .map(|l| {
            l.split(" + ")
                .next()
                .unwrap()
                .split(" in section")
                .next()
                .unwrap()
        })
        .collect();
    let ours: Vec<&str> = frames.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(ours, names, "scry vs gdb on {libc}");
}
