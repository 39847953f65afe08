//! Answers usable in one call: typed values are numbers wherever numbers go, 64-bit reads
//! that are always BigInts, logs that return nothing print nothing.

mod common;

use common::{fixture, Scry};

/// The addresses the program prints of its own pointer and buffer.
fn printed(output: &str, key: &str) -> u64 {
    let word = output
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=0x")))
        .unwrap_or_else(|| panic!("no {key}= in {output}"));
    u64::from_str_radix(word, 16).unwrap()
}

#[test]
fn typed_values_are_numbers_wherever_numbers_go() {
    let exe = fixture("numbers_in_one_call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('stop_here'); cont()");
    assert_eq!(scry.ok("hex(state.var('total'))"), "0x4d2");
    // A pointer is its address: arithmetic is on the address, memory() reads where it points.
    let ptr = scry.num("Number(state.var('ptr'))");
    assert_eq!(scry.num("state.var('ptr') + 8"), ptr + 8);
    assert_eq!(scry.ok("hex(state.var('ptr'))"), format!("{ptr:#x}"));
    assert_eq!(scry.ok("state.memory(state.var('ptr')).u32()"), "7");
    assert_eq!(
        scry.ok("state.var('ptr') > 0 && state.var('ptr') == state.var('counter').addr"),
        "true"
    );
    // Text stays text where JavaScript asks for either; a template literal is the printed text.
    assert_eq!(scry.ok("'c=' + state.var('col')"), "c=BLUE");
    assert!(scry.ok("`${state.var('ptr')}`").contains("<counter>"));
    // An array as a number is its address (C's decay).
    let buf = scry.num("Number(state.var('buf'))");
    assert_eq!(scry.ok("state.memory(state.var('buf')).str()"), "hello");
    // A watchpoint at the address a pointer holds catches the program's write through it.
    scry.ok("watchpoint.set(state.var('ptr'), 'w')");
    let hit = scry.ok("cont()");
    assert!(
        hit.starts_with("watchpoint 1 write") && hit.contains("7 -> 8"),
        "{hit}"
    );
    // What has no number says so in one line, and names itself.
    let err = scry.err("state.memory(state.var('pr'))");
    assert!(
        err.contains("no integer value") && err.contains("a: 1"),
        "{err}"
    );
    // 64-bit reads that are always BigInts: bit arithmetic works on small values too.
    assert_eq!(
        scry.ok("hex(state.memory('tagged').u64n() & ~7n)"),
        "0x1000"
    );
    assert_eq!(scry.ok("typeof state.memory('tagged').i64n()"), "bigint");
    scry.ok("watchpoint.remove(1)");
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert_eq!(printed(&out, "ptr"), ptr);
    assert_eq!(printed(&out, "buf"), buf);
}

#[test]
fn a_log_that_returns_null_prints_nothing() {
    let exe = fixture("numbers_in_one_call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("let hits = 0; breakpoint.set('stop_here', {log: e => { hits++; return null }})");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(!end.contains("null"), "{end}");
    assert_eq!(scry.num("hits"), 1);
}

/// Chunk after chunk may declare the same names again; values persist between chunks; block
/// scopes and closures inside a chunk are untouched.
#[test]
fn chunks_may_declare_the_same_names_again() {
    let mut scry = Scry::start(&[]);
    scry.ok("const out = 1; let n = 2");
    assert_eq!(scry.ok("const out = 10; let n = 20; out + n"), "30");
    assert_eq!(scry.ok("out"), "10");
    // Closures over loop-scoped declarations keep one binding per turn.
    assert_eq!(
        scry.ok("const fns = []; for (let i = 0; i < 3; i++) { const j = i; fns.push(() => j) } fns.map(f => f()).join(',')"),
        "0,1,2"
    );
    assert_eq!(scry.ok("const fns = 'again'; fns"), "again");
}
