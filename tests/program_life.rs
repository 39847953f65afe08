//! The program's whole life (issue 13): libraries as they load and unload, pending
//! breakpoints, the earliest stop, exec, fork children, thread-locals of dlopened libraries.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fixture, fixture_with, table, Scry};

fn plugin() -> PathBuf {
    fixture_with("plugin", &["-g", "-shared", "-fPIC"])
}

/// `fixtures/ctor_host.c` linked against a library built from `fixtures/ctor_lib.c`, in a
/// directory of its own (the library found through the host's rpath).
fn ctor_host() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ctor_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let lib = dir.join("libctor_lib.so");
    let host = dir.join("ctor_host");
    if !host.exists() {
        let ok = Command::new("cc")
            .args(["-g", "-shared", "-fPIC", "-o"])
            .arg(&lib)
            .arg(src.join("ctor_lib.c"))
            .status()
            .unwrap()
            .success();
        assert!(ok, "building libctor_lib.so");
        let ok = Command::new("cc")
            .args(["-g", "-o"])
            .arg(&host)
            .arg(src.join("ctor_host.c"))
            .arg(format!("-L{}", dir.display()))
            .arg("-lctor_lib")
            .arg(format!("-Wl,-rpath,{}", dir.display()))
            .status()
            .unwrap()
            .success();
        assert!(ok, "building ctor_host");
    }
    host
}

#[test]
fn a_library_is_known_at_the_very_next_instruction_after_dlopen() {
    let lib = plugin();
    let mut scry = Scry::spawn(&fixture("dlopen_host"), &[lib.to_str().unwrap()]);
    scry.ok("breakpoint.set('after_dlopen'); cont()");
    // No waiting anywhere: the loader told scry the moment it mapped the library.
    let addr = scry.num("symbol('plugin_work')");
    let text = scry.ok("modules()");
    assert!(text.contains("plugin"), "{text}");
    assert!(scry
        .ok("state.symbol_at(symbol('plugin_work'))")
        .starts_with("plugin_work"));
    scry.ok("breakpoint.set('plugin_work')");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 2 at "), "{stop}");
    assert!(scry.num("state.pc") >= addr);
}

#[test]
fn a_pending_breakpoint_follows_the_library_through_dlclose_and_dlopen() {
    let lib = plugin();
    let mut scry = Scry::spawn(&fixture("dlopen_host"), &[lib.to_str().unwrap()]);
    let answer = scry.ok("breakpoint.set('plugin_work')");
    assert!(
        answer.contains("breakpoint 1 pending: no loaded module has 'plugin_work' yet"),
        "{answer}"
    );
    let list = table(&scry.ok("breakpoint.list()"));
    assert_eq!(list[0]["pending"], "true");
    assert_eq!(list[0]["symbol"], "plugin_work");
    scry.ok(
        "ctx.n = 0; ctx.libs = [];\
         addEventListener('breakpoint', e => { ctx.n++; return 'continue' });\
         addEventListener('library', e => { if (e.path.includes('plugin')) ctx.libs.push(e.kind) })",
    );
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert_eq!(scry.num("ctx.n"), 5, "3 calls, dlclose, dlopen, 2 calls");
    assert_eq!(scry.ok("ctx.libs.join(' ')"), "load unload load");
    assert_eq!(scry.ok("output()"), "sum 8");
}

#[test]
fn unknown_everywhere_is_an_error_only_when_asked() {
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    let note = scry.ok("breakpoint.set('ad')");
    assert!(
        note.contains("pending") && note.contains("did you mean add"),
        "{note}"
    );
    let err = scry.err("breakpoint.set('nope_nothing', {pending: false})");
    assert!(err.contains("unknown symbol 'nope_nothing'"), "{err}");
}

#[test]
fn the_earliest_stop_sees_library_constructors_run() {
    let host = ctor_host();
    // At the usual entry stop every start-up library's constructor has already run.
    let mut scry = Scry::spawn(&host, &[]);
    assert_eq!(scry.num("state.memory('ctor_ran').u32()"), 42);
    // Stopped at the loader instead, a breakpoint in the constructor is hit.
    let mut scry = Scry::start(&["--stop-at", "loader", "--", host.to_str().unwrap()]);
    assert!(scry.ok("status()").contains("live\ttrue"));
    let answer = scry.ok("breakpoint.set('lib_ctor')");
    assert!(answer.contains("pending"), "{answer}");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("breakpoint 1 at ") && stop.contains("lib_ctor"),
        "{stop}"
    );
    assert_eq!(scry.num("state.memory('ctor_ran').u32()"), 0);
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()"), "value 42");
    // The same from JavaScript.
    let mut scry = Scry::start(&[]);
    let first = scry.ok(&format!("spawn('{}', {{stop: 'loader'}})", host.display()));
    assert!(first.starts_with("loader at "), "{first}");
}

#[test]
fn a_breakpoint_by_name_survives_exec_through_a_shell() {
    let target = fixture("loop");
    let script = format!("exec {} 3", target.display());
    let mut scry = Scry::spawn(Path::new("/bin/sh"), &["-c", &script]);
    let answer = scry.ok("breakpoint.set('add')");
    assert!(
        answer.contains("pending"),
        "the shell has no add(): {answer}"
    );
    let exec = scry.ok("cont()");
    assert!(exec.starts_with("exec "), "{exec}");
    assert_eq!(scry.ok("status().program"), target.display().to_string());
    let hit = scry.ok("cont()");
    assert!(
        hit.starts_with("breakpoint 1 at ") && hit.contains(" add"),
        "{hit}"
    );
    assert!(scry
        .ok("cont(); cont(); cont()")
        .starts_with("exited with code 3"));
}

#[test]
fn a_crashing_fork_child_is_caught_with_its_stack() {
    let mut scry = Scry::spawn(&fixture("worker_crash"), &[]);
    scry.ok("config.follow_fork = 'child'");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("signal SIGSEGV fault_addr=0x0"), "{stop}");
    assert!(stop.contains("followed fork child"), "{stop}");
    let child = scry.num("status().pid");
    let out = scry.ok("output()");
    assert!(out.contains(&format!("worker {child}")), "{out}");
    let stack = scry.ok("state.unwind()");
    let names: Vec<&str> = stack
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(names[0].starts_with("handle_request"), "{stack}");
    assert!(names[1].starts_with("worker_main"), "{stack}");
    assert!(names[2].starts_with("main"), "{stack}");
    assert_eq!(scry.num("state.memory('served').u32()"), 6);
    // The parent was let go: it sees its worker die as it would without scry.
    assert!(scry.ok("kill()").starts_with("killed"));
}

#[test]
fn thread_locals_of_a_dlopened_library_in_two_threads() {
    let lib = plugin();
    let mut scry = Scry::spawn(&fixture("dlopen_host"), &[lib.to_str().unwrap(), "threads"]);
    scry.ok("breakpoint.set('tls_ready')");
    for _ in 0..2 {
        assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
        // The fixture passes its own view: the address and the value of plugin_tls.
        let id = scry.num("state.registers.rdi");
        assert_eq!(
            scry.num("state.thread_local_addr('plugin_tls')"),
            scry.num("state.registers.rsi")
        );
        assert_eq!(scry.num("state.thread_local('plugin_tls')"), 7 + 10 * id);
    }
}

/// The note that scry followed a fork child reaches the stop the user sees, also when the
/// first stops in the child are logpoint hits that listeners let go (it came with the first
/// of them and was lost).
#[test]
fn the_followed_fork_note_survives_stops_that_listeners_let_go() {
    let mut scry = Scry::spawn(&fixture("worker_crash"), &[]);
    scry.ok("config.follow_fork = 'child'");
    scry.ok("ctx.n = 0; breakpoint.set('handle_request', {log: e => { ctx.n++ }})");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("signal SIGSEGV fault_addr=0x0"), "{stop}");
    assert_eq!(scry.num("ctx.n"), 3, "three requests in the child: {stop}");
    let child = scry.num("status().pid");
    assert!(
        stop.contains(&format!("[followed fork child {child}; parent ")),
        "{stop}"
    );
    // Shown once.
    assert!(!scry.ok(":status").contains("followed fork"));
    assert!(scry.ok("kill()").starts_with("killed"));
}

/// Code of a library the program dlclosed, and of a program that exited, is still readable
/// from its file: `state.disasm` and `line_at` answer where memory says "not mapped", and the
/// bytes are the file's (the program's own memory there is gone: reads of it still fail).
#[test]
fn code_of_an_unloaded_library_or_an_exited_program_stays_readable() {
    let lib = plugin();
    let mut scry = Scry::spawn(&fixture("dlopen_host"), &[lib.to_str().unwrap()]);
    scry.ok("breakpoint.set('after_dlopen'); cont()");
    let live = scry.ok("state.disasm(4, 'plugin_work').map(i => i.text).join('; ')");
    let line = scry.ok("line_at('plugin_work')");
    scry.ok("ctx.w = symbol('plugin_work'); addEventListener('library', e => e.kind === 'unload' && e.path.includes('plugin') ? 'stop' : undefined)");
    assert!(scry.ok("cont()").starts_with("library unload "));
    assert_eq!(
        scry.ok("state.disasm(4, ctx.w).map(i => i.text).join('; ')"),
        live
    );
    assert_eq!(scry.ok("line_at(ctx.w)"), line);
    assert!(scry.err("state.memory(ctx.w).u8()").contains("not mapped"));
    scry.ok("removeEventListener('library'); breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    // The program is gone: its own code still disassembles from the file.
    let main = scry.ok("state.disasm('main').at(-1).mnemonic");
    assert_eq!(main, "ret");
}
