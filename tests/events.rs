//! What a listener's event carries, and `prev`.

mod common;

use common::{fixture, Scry};

#[test]
fn events_carry_reason_symbol_line_state_and_prev() {
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    scry.ok("breakpoint.set('add', 'adder')");
    scry.ok(
        "ctx.seen = []; addEventListener('breakpoint', e => {
           ctx.seen.push([e.stop_reason, e.breakpoint_id, e.breakpoint_name, e.symbol, e.line.split(' at ')[0],
                          e.state.registers.rdi, e.prev.registers.rdi === undefined ? 'none' : e.prev.registers.rdi].join(','));
           return 'continue';
         })",
    );
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
    let seen = scry.ok("ctx.seen.slice(1).join(' | ')");
    // prev is what was read at the previous stop: rdi of the previous call.
    assert_eq!(seen, "breakpoint,1,adder,add,breakpoint 1 (adder),0,0 | breakpoint,1,adder,add,breakpoint 1 (adder),1,0");
    let first = scry.ok("ctx.seen[0]");
    assert!(
        first.starts_with("breakpoint,1,adder,add,breakpoint 1 (adder),0,"),
        "{first}"
    );
}

#[test]
fn step_events_and_prev_memory() {
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    scry.ok("breakpoint.set('add'); cont()");
    scry.ok("ctx.changes = 0; addEventListener('step', e => {
           const now = e.state.memory('counter').u32();
           const before = e.prev.memory('counter').u32();
           if (before !== undefined && before !== now) ctx.changes++;
         })");
    let stop = scry.ok("step(20)");
    assert!(
        stop.starts_with("step at ") && stop.contains("[20 of 20 steps]"),
        "{stop}"
    );
    assert_eq!(
        scry.ok("ctx.changes"),
        "1",
        "counter++ in add() seen once through prev"
    );
}
