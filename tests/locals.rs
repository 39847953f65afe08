//! `state.locals(frame)`: parameters and locals from DWARF, read from the stopped frame.

mod common;

use common::{fixture, fixture_with, Scry};

fn value_of(scry: &mut Scry, frame: usize, name: &str) -> String {
    scry.ok(&format!(
        "String(state.locals({frame}).find(v => v.name === '{name}').value)"
    ))
}

#[test]
fn parameters_and_locals_at_o0() {
    let mut scry = Scry::spawn(&fixture("vars"), &[]);
    // Line 9 of fixtures/vars.c: `calls++; hits++;`, after the locals are set.
    scry.ok("breakpoint.set('vars.c:9')");
    assert!(scry.ok("cont()").contains(" area+"));
    assert_eq!(value_of(&mut scry, 0, "w"), "-6");
    assert_eq!(value_of(&mut scry, 0, "h"), "7");
    assert_eq!(value_of(&mut scry, 0, "local"), "-42");
    assert_eq!(value_of(&mut scry, 0, "scale"), "0.5");
    assert_eq!(
        value_of(&mut scry, 0, "calls"),
        "7",
        "a static local, at its own address"
    );
    assert_eq!(
        value_of(&mut scry, 0, "p"),
        "{x: 3, y: 4}",
        "a struct by its members"
    );
    assert_eq!(
        scry.ok("state.locals().find(v => v.name === 'label').type"),
        "const char *"
    );
    let label = scry.num("state.locals().find(v => v.name === 'label').value.$value === 'box' && Number(state.var('label'))");
    assert_eq!(scry.ok(&format!("state.memory({label}).str()")), "box");
    assert_eq!(
        value_of(&mut scry, 0, "label"),
        format!("{label:#x} \"box\""),
        "a string pointer shows its address and its text"
    );
    assert_eq!(
        scry.ok("state.locals().filter(v => v.kind === 'param').map(v => v.name).join(',')"),
        "w,h,label,p"
    );
    // The caller's frame: main's locals.
    assert_eq!(
        value_of(&mut scry, 1, "c"),
        "-2 '\\xfe'",
        "a char: code and character"
    );
    assert_eq!(scry.num("-state.var('c', 1)"), 2);
    assert!(scry.err("state.locals(50)").contains("no frame 50"));
}

#[test]
fn optimized_code_says_what_it_cannot_read() {
    let mut scry = Scry::spawn(&fixture_with("vars", &["-g", "-O2"]), &[]);
    scry.ok("breakpoint.set('area')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    // Every variable has a value or a reason in angle brackets; nothing throws.
    let values = scry.ok("state.locals().map(v => `${v.name}=${v.value}`).join(' ')");
    assert!(values.contains("w="), "{values}");
}

/// Locals 80 blocks deep are all there (the walk of nested blocks stopped at 64 and lost the
/// rest silently; a Rust function with 65 `let`s nests as deep).
#[test]
fn locals_of_deeply_nested_blocks_are_all_there() {
    let mut scry = Scry::spawn(&fixture("deep_blocks"), &[]);
    scry.ok("breakpoint.set('inspect'); cont()");
    let truth = common::truth(&mut scry);
    assert_eq!(scry.ok("String(state.var('b79', 1))"), truth["deepest"]);
    assert_eq!(scry.ok("state.locals(1).length"), "80");
    let sum = scry.ok(
        "String([0, 10, 20, 30, 40, 50, 60, 70].reduce((a, i) => a + Number(state.var('b' + i, 1)), 0))",
    );
    assert_eq!(sum, truth["sum"]);
}

/// A double parameter whose register is reused (-O2) is its entry value, which the caller's
/// call site gives as a typed constant (`DW_OP_const_type <double> 2.25`): the value, as gdb
/// shows it, not `<optimized out>`; `y@entry` too.
#[test]
fn float_parameters_take_their_entry_values_from_the_call_site() {
    let exe = fixture_with("float_entry_values", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('dleaf'); cont(); cont()");
    let truth = common::truth(&mut scry);
    assert_eq!(scry.ok("String(state.var('y', 1))"), truth["y"]);
    assert_eq!(scry.ok("String(state.var('y@entry', 1))"), truth["y"]);
    assert_eq!(scry.ok("String(state.var('x', 1))"), truth["x"]);
    // A value with none here has no plain data: an error marked noValue, not the string
    // "<optimized out>" standing in for it.
    assert_eq!(
        scry.ok(
            "try { state.var('argv', 2).value } catch (e) { [e.message, e.noValue].join(' ') }"
        ),
        "argv: <optimized out> true"
    );
    // Arithmetic on it names it too (the error said only "<optimized out>").
    let e = scry.err("state.var('argv', 2) + 1");
    assert!(e.contains("argv: <optimized out>"), "{e}");
    // So does a path through it, by the part that has none (it said only "<optimized out>").
    let e = scry.err("state.value('argv[0]', 2)");
    assert!(e.contains("argv: <optimized out>"), "{e}");
    let e = scry.err("state.value('*argv', 2)");
    assert!(e.contains("argv: <optimized out>"), "{e}");
    // So does a row of `locals()`, the first thing written over them.
    let e = scry.err("state.locals(2).map(l => l.name + '=' + l.value).join(' ')");
    assert!(e.contains("argc: <optimized out>"), "{e}");
    // JSON is a rendering: there it is its text, so a listing still stringifies.
    assert_eq!(
        scry.ok("JSON.stringify(state.var('argv', 2))"),
        "\"<optimized out>\""
    );
}
