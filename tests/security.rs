//! The JavaScript environment reaches the outside world only through the debugger API, and
//! `--read-only` sessions cannot change the target.

mod common;

use common::{fixture, Scry};

#[test]
fn no_file_network_or_process_access_from_javascript() {
    let mut scry = Scry::start(&[]);
    assert_eq!(
        scry.ok("[typeof std, typeof os, typeof require, typeof fetch, typeof XMLHttpRequest].join(' ')"),
        "undefined undefined undefined undefined undefined"
    );
    // `process` is scry's list of debugged processes, not Node's: nothing else is on it.
    assert_eq!(scry.ok("Object.keys(process).join(' ')"), "list select");
    for node in ["process.env", "process.exit(1)", "process.argv"] {
        assert!(scry.err(node).contains("process"), "{node}");
    }
    let imported = scry.ok("import('os').then(() => 'loaded', e => 'refused: ' + e.message)");
    assert!(imported.starts_with("refused: "), "{imported}");
    let file = scry.ok("import('/etc/passwd').then(() => 'loaded', e => 'refused')");
    assert_eq!(file, "refused");
}

#[test]
fn read_only_sessions_refuse_writes_but_inspect() {
    let program = fixture("loop");
    let mut scry = Scry::start(&["--read-only", "--", program.to_str().unwrap(), "2"]);
    assert_eq!(scry.ok("config.read_only"), "true");
    let before = scry.ok("hex(state.registers.rax)");
    assert!(scry
        .err("state.registers.rax = 1")
        .contains("read-only session: cannot write a register"));
    assert!(scry
        .err("state.flags.z = true")
        .contains("read-only session"));
    assert!(scry
        .err("state.memory('counter').write_u32(5)")
        .contains("read-only session: cannot write memory"));
    assert!(scry
        .err("state.memory('counter').write_bytes('00')")
        .contains("read-only session"));
    assert!(scry
        .err("config.read_only = false")
        .contains("command line"));
    assert_eq!(
        scry.ok("hex(state.registers.rax)"),
        before,
        "nothing changed"
    );
    // Inspection and control still work: breakpoints are restored transparently.
    scry.ok("breakpoint.set('add')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    assert_eq!(scry.ok("state.memory('counter').u32()"), "0");
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
}

#[test]
fn promises_settle_within_the_chunk() {
    let mut scry = Scry::start(&[]);
    assert_eq!(scry.ok("(async () => { await null; return 7 })()"), "7");
    assert!(scry
        .err("Promise.reject(new TypeError('bad'))")
        .starts_with("error: TypeError: bad"));
    // Nothing runs between chunks: a value that can never settle is an error, not `ok`.
    assert!(scry
        .err("new Promise(() => {})")
        .starts_with("error: the chunk's value is a promise still pending"));
}

#[test]
fn read_only_means_the_programs_memory_registers_and_life_are_untouched() {
    let program = fixture("loop");
    let mut scry = Scry::start(&["--read-only", "--", program.to_str().unwrap(), "3"]);
    let pid = scry.target_pid();
    // Breakpoints take debug registers: no byte of the program changes.
    scry.ok("breakpoint.set('add')");
    assert_eq!(scry.ok("breakpoint.list()[0].site"), "hw");
    assert!(scry
        .err("breakpoint.set('main', {hardware: false})")
        .contains("read-only session: cannot write an int3"));
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    // The code as the kernel holds it (not through scry's reads) is the file's.
    let bias = common::load_bias(pid, &program);
    let add = scry.num("symbol('add')");
    let on_disk = common::file_bytes(&program, add - bias, 8);
    let mut live = vec![0u8; 8];
    std::os::unix::fs::FileExt::read_exact_at(
        &std::fs::File::open(format!("/proc/{pid}/mem")).unwrap(),
        &mut live,
        add,
    )
    .unwrap();
    assert_eq!(live, on_disk);
    // Stepping, finishing (a debug register at the return address) and watching work.
    assert!(scry.ok("step()").starts_with("step at "));
    assert!(scry.ok("finish()").starts_with("finish at "), "finish");
    scry.ok("watchpoint.set('counter', 'w')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    let watched = scry.ok("cont()");
    assert!(
        watched.starts_with("watchpoint 1 (counter) write"),
        "{watched}"
    );
    // Its life is its own: no kill, no core written.
    assert!(scry
        .err("kill()")
        .contains("read-only session: cannot kill the program"));
    assert!(scry
        .err("gcore()")
        .contains("read-only session: cannot write a core file"));
    assert_eq!(scry.ok("detach().reason"), "detached");
}

#[test]
fn read_only_says_when_a_trap_resets_what_it_cannot_put_back() {
    // SIGTRAP ignored: the kernel resets it at scry's first trap, and only an injected call
    // could restore it, which a read-only session does not make. The stop says so.
    let bin = fixture("trap_disposition");
    let mut scry = Scry::start(&["--read-only", "--", bin.to_str().unwrap(), "ignore"]);
    assert!(scry.ok("cont({timeout: 0.15})").starts_with("timeout"));
    let stop = scry.ok("breakpoint.set('work'); cont()");
    assert!(
        stop.starts_with("breakpoint 1")
            && stop.contains("made the kernel reset the program's SIGTRAP disposition")
            && stop.contains("a read-only session cannot put it back"),
        "{stop}"
    );
}
