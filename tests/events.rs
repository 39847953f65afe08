//! What a listener's event carries, and `prev`.

mod common;

use common::{fixture, Scry};

#[test]
fn events_carry_reason_symbol_line_state_and_prev() {
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    // `add+0`: the function's first byte, so the event's symbol is the bare name.
    scry.ok("breakpoint.set('add+0', 'adder')");
    scry.ok(
        "ctx.seen = []; addEventListener('breakpoint', e => {
           ctx.seen.push([e.stop_reason, e.breakpoint_id, e.breakpoint_name, e.symbol, e.text.split(' at ')[0],
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

#[test]
fn finish_returns_to_the_caller_even_in_recursion() {
    let mut scry = Scry::spawn(&fixture("recurse"), &[]);
    scry.ok("breakpoint.set('fact')");
    // Stop in the third call: fact(3).
    for _ in 0..3 {
        assert!(scry.ok("cont()").starts_with("breakpoint 1 at"));
    }
    assert_eq!(scry.ok("state.registers.rdi"), "3");
    scry.ok("breakpoint.remove(1)");
    let stop = scry.ok("finish()");
    // fact(3) returned 6 into fact(4) (not into a deeper level that returns to the same place).
    assert!(
        stop.starts_with("finish at ") && stop.contains(" fact+") && stop.contains("returned 6"),
        "{stop}"
    );
    assert_eq!(scry.ok("ctx.s = finish(); ctx.s.returned"), "24");
    assert_eq!(scry.ok("finish().returned"), "120");
    assert!(scry.ok("state.symbol_at(state.pc)").starts_with("main+"));
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()"), "120");
}

#[test]
fn next_goes_line_by_line_over_calls() {
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    // A breakpoint on main stops after its prologue: on the first line of its body.
    let first =
        scry.ok("let s = breakpoint.set('main'); ctx.s = cont(); breakpoint.remove(s); ctx.s");
    assert!(first.ends_with("loop.c:13"), "{first}");
    let mut lines = vec!["13".to_string()];
    for _ in 0..5 {
        let stop = scry.ok("next()");
        assert!(stop.starts_with("step at "), "{stop}");
        lines.push(stop.rsplit(':').next().unwrap().to_string());
    }
    // Lines 13..18 of fixtures/loop.c: the loop on line 15 calls add() three times without
    // stopping in it, and printf on line 16 is run over.
    assert_eq!(lines, ["13", "14", "15", "16", "17", "18"]);
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
    assert_eq!(
        scry.ok("output()"),
        "total=3 calls=3",
        "every call ran exactly once"
    );
    // A breakpoint inside a called function ends next() there.
    let mut again = Scry::spawn(&fixture("loop"), &["3"]);
    again.ok("breakpoint.set('loop.c:15'); cont(); breakpoint.remove(1); breakpoint.set('add')");
    assert!(again.ok("next()").starts_with("breakpoint 2 at "));
}

#[test]
fn remove_event_listener_without_a_function_removes_every_one_of_the_type() {
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    scry.ok("ctx.n = 0; addEventListener('step', e => { ctx.n++ }); addEventListener('step', e => { ctx.n++ })");
    assert_eq!(scry.ok("removeEventListener('step')"), "2");
    scry.ok("step(3)");
    assert_eq!(scry.ok("ctx.n"), "0", "no step listener is left");
    assert!(scry
        .err("removeEventListener('step', 3)")
        .contains("fn must be the function given to addEventListener"));
    assert_eq!(scry.ok("removeEventListener('step')"), "0");
}

/// An event's `line` is the source line's number and `source` its `file:line`, as frames
/// have them; the stop's whole printed line is `text`.
#[test]
fn an_event_says_its_source_line_as_a_number() {
    let mut scry = Scry::spawn(&fixture("loop"), &["2"]);
    scry.ok("breakpoint.set('loop.c:8')");
    scry.ok("ctx.seen = []; addEventListener('breakpoint', e => { ctx.seen.push([typeof e.line, e.line, e.source, e.text.startsWith('breakpoint 1 at ')].join(' ')); return 'continue' })");
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
    assert_eq!(
        scry.ok("ctx.seen.join(' | ')"),
        "number 8 loop.c:8 true | number 8 loop.c:8 true"
    );
}
