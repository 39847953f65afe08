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
