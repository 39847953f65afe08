//! The run loop (Rust, `src/runner`): runs end where they should and clean up after
//! themselves whatever way they end, a listener's exception included.

mod common;

use common::{file_bytes, fixture, line_of, load_bias, proc_mem, text_file_offset, Scry};

const SOURCE: &str = include_str!("../fixtures/run_loops.c");

/// `next()` over a call whose breakpoint listener throws: the exception reaches the script,
/// the target stays where the listener stopped it, and scry's breakpoint at the call's return
/// address is gone from memory (the program runs on to its own result).
#[test]
fn a_listener_that_throws_inside_next_leaves_no_breakpoint_behind() {
    let exe = fixture("run_loops");
    let mut scry = Scry::spawn(&exe, &["10"]);
    let call_line = line_of(SOURCE, "line: call");
    scry.ok(&format!(
        "breakpoint.set('run_loops.c:{call_line}'); cont()"
    ));
    let ret = scry.num(
        "((c) => c.addr + c.bytes.length / 2)(state.disasm(8).find(i => i.mnemonic === 'call'))",
    );
    scry.ok(
        "breakpoint.set('add'); addEventListener('breakpoint', e => { throw new Error('boom') })",
    );
    let err = scry.err("next()");
    assert!(err.contains("boom") && err.contains("add"), "{err}");
    let pid = scry.target_pid();
    let bias = load_bias(pid, &exe);
    assert_eq!(
        proc_mem(pid, ret, 1),
        file_bytes(&exe, text_file_offset(&exe, ret - bias), 1),
        "the byte at the return address {ret:#x} is the program's"
    );
    scry.ok("removeEventListener('breakpoint'); breakpoint.remove(2)");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(scry.ok("output()").contains("sum=45 r=5"));
}

/// A `next()` over one line that takes tens of thousands of single steps (a loop written on
/// one line) ends on the next line, with the program's result unchanged; a `step(n)` listener
/// that throws ends the batch at that step with the exception.
#[test]
fn long_lines_and_throwing_step_listeners() {
    let exe = fixture("run_loops");
    let mut scry = Scry::spawn(&exe, &["3000"]);
    let loop_line = line_of(SOURCE, "line: loop");
    let print_line = line_of(SOURCE, "line: print");
    scry.ok(&format!(
        "breakpoint.set('run_loops.c:{loop_line}'); cont()"
    ));
    let stop = scry.ok("next({timeout: 60})");
    assert!(
        stop.starts_with("step at ") && stop.contains(&format!("run_loops.c:{print_line}")),
        "{stop}"
    );
    let err = scry.err(
        "let seen = 0; addEventListener('step', e => { if (++seen === 3) throw new Error('third') }); step(10)",
    );
    assert!(err.contains("third"), "{err}");
    assert_eq!(scry.num("seen"), 3);
    scry.ok("removeEventListener('step')");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(
        scry.ok("output()").contains("sum=4498500 r=5"),
        "3000 * 2999 / 2"
    );
}
