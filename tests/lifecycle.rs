//! Breakpoints and watchpoints outlive a process: re-armed by the next spawn and by exec.

mod common;

use common::{fixture, Scry};

#[test]
fn breakpoints_wait_for_the_next_process_and_rearm() {
    let program = fixture("loop");
    let mut scry = Scry::spawn(&program, &["3"]);
    scry.ok("breakpoint.set('add', 'add'); watchpoint.set('counter', 'w')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 (add)"));
    assert!(scry.ok("kill()").starts_with("killed by SIGKILL"));
    let waiting = scry.ok("breakpoint.list()");
    assert!(
        waiting.lines().nth(1).unwrap().ends_with("\ttrue"),
        "pending column: {waiting}"
    );
    assert_eq!(scry.ok("watchpoint.list()[0].pending"), "true");
    scry.ok(&format!("spawn({:?}, '2')", program.to_str().unwrap()));
    assert_eq!(
        scry.ok("breakpoint.list()[0].pending === undefined && breakpoint.list()[0].hits"),
        "0"
    );
    assert_eq!(
        scry.ok("hex(breakpoint.list()[0].addr) === hex(symbol('add'))"),
        "true"
    );
    assert!(scry.ok("cont()").starts_with("breakpoint 1 (add)"));
    assert!(
        scry.ok("cont()").starts_with("watchpoint 1 write"),
        "the watchpoint is armed again"
    );
    scry.ok("breakpoint.remove('add'); watchpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
}

#[test]
fn exec_is_a_stop_and_breakpoints_follow_the_new_image() {
    let mut scry = Scry::spawn(&fixture("exec_self"), &[]);
    scry.ok("breakpoint.set('work')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at"));
    assert_eq!(scry.ok("state.registers.rdi"), "1", "the parent's call");
    let exec = scry.ok("cont()");
    assert!(exec.starts_with("exec at "), "{exec}");
    assert!(
        scry.ok("cont()").starts_with("breakpoint 1 at"),
        "re-armed in the new image"
    );
    assert_eq!(scry.ok("state.registers.rdi"), "21", "the child's call");
    assert!(scry.ok("cont()").starts_with("exited with code 5"));
    let out = scry.ok("output()");
    assert!(
        out.contains("parent 2") && out.contains("child 42"),
        "{out}"
    );
}
