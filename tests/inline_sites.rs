//! A breakpoint on a line of a helper inlined into several callers stops in every copy, as
//! gdb's "(2 locations)" does (fixtures/inline_twice.c, -O2).

mod common;

use std::process::Command;

use common::{fixture_with, Scry};

const SOURCE: &str = include_str!("../fixtures/inline_twice.c");

fn line_of(needle: &str) -> usize {
    common::line_of(SOURCE, needle)
}

/// The values the fixture printed: `left=3 right=21 left=25 c=12`.
fn printed(output: &str) -> Vec<(String, i64)> {
    let line = output
        .lines()
        .find(|l| l.starts_with("left="))
        .expect("the fixture's line");
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect()
}

/// How many locations gdb gives a breakpoint on `location`, or None without gdb.
fn gdb_locations(exe: &std::path::Path, location: &str) -> Option<usize> {
    let out = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", &format!("break {location}")])
        .arg(exe)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("Breakpoint 1 at"))?;
    Some(
        line.split('(')
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(1),
    )
}

#[test]
fn a_line_of_an_inlined_helper_stops_in_every_copy() {
    let exe = fixture_with("inline_twice", &["-g", "-O2"]);
    let line = line_of("the helper's line");
    let spec = format!("inline_twice.c:{line}");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!("breakpoint.set('{spec}')"));
    let sites = scry.num("breakpoint.list()[0].locations.length");
    assert_eq!(sites, 2, "one site in left, one in right");
    if let Some(n) = gdb_locations(&exe, &spec) {
        assert_eq!(sites as usize, n, "gdb places as many");
    }
    let listing = scry.ok("breakpoint.list()");
    assert!(listing.contains("locations"), "{listing}");

    // Three calls: left, right, left; each stops in its own copy of bump.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let stop = scry.ok("cont()");
        assert!(stop.starts_with("breakpoint 1 at"), "{stop}");
        assert!(stop.contains(&format!("inline_twice.c:{line}")), "{stop}");
        let rows = scry.ok("state.unwind()");
        assert!(
            rows.lines().next().unwrap().contains("[inlined] bump("),
            "{rows}"
        );
        let caller = scry.ok("state.frame(1).symbol.split('+')[0]");
        seen.push((caller, scry.num("Number(state.var('by'))")));
    }
    assert_eq!(scry.num("breakpoint.list()[0].hits"), 3);
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    let values = printed(&scry.ok("output()"));
    // left adds 1 and right 10: c ends at 1 + 10 + 1.
    assert_eq!(values.last().unwrap(), &("c".to_string(), 12));
    assert_eq!(
        seen,
        vec![
            ("left".to_string(), 1),
            ("right".to_string(), 10),
            ("left".to_string(), 1)
        ]
    );
}

#[test]
fn removing_a_breakpoint_with_several_sites_removes_them_all() {
    let exe = fixture_with("inline_twice", &["-g", "-O2"]);
    let line = line_of("the helper's line");
    let mut scry = Scry::spawn(&exe, &[]);
    let id = scry.num(&format!("breakpoint.set('inline_twice.c:{line}')"));
    // Another breakpoint shares the second site: it keeps its int3.
    let second = scry.num("breakpoint.list()[0].locations[1]");
    scry.ok(&format!("breakpoint.set({second})"));
    scry.ok(&format!("breakpoint.remove({id})"));
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 2 at"), "{stop}");
    assert!(stop.contains(" right "), "{stop}");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
}

#[test]
fn a_function_inlined_into_every_caller_stops_at_each_copy() {
    let exe = fixture_with("inline_twice", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    // `bump` has no code of its own (no symbol): its inlined copies are the sites.
    assert!(scry.err("symbol('bump')").contains("bump"));
    scry.ok("breakpoint.set('bump')");
    assert!(
        !scry.ok("breakpoint.list()").contains("pending"),
        "not waiting for a library"
    );
    let sites = scry.num("breakpoint.list()[0].locations.length");
    assert_eq!(sites, 2);
    if let Some(n) = gdb_locations(&exe, "bump") {
        assert_eq!(sites as usize, n, "gdb places as many");
    }
    let mut seen = Vec::new();
    for _ in 0..3 {
        scry.ok("cont()");
        let rows = scry.ok("state.unwind()");
        assert!(
            rows.lines().next().unwrap().contains("[inlined] bump("),
            "the stop is in bump, its own row #0: {rows}"
        );
        seen.push((
            scry.ok("state.frame(1).symbol.split('+')[0]"),
            scry.num("Number(state.var('by'))"),
        ));
    }
    assert_eq!(
        seen,
        vec![
            ("left".to_string(), 1),
            ("right".to_string(), 10),
            ("left".to_string(), 1)
        ]
    );
    // A function with code of its own stops there only; an unknown name still waits.
    scry.ok("breakpoint.remove(1)");
    scry.ok("breakpoint.set('left')");
    assert_eq!(
        scry.ok("String(breakpoint.list()[0].locations)"),
        "undefined"
    );
    assert!(scry
        .ok("breakpoint.set('no_such_function')")
        .contains("pending"));
}

#[test]
fn a_function_inlined_and_kept_out_of_line_stops_at_every_copy() {
    let exe = fixture_with("inline_and_outline", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('weigh')");
    let list = scry.ok("breakpoint.list()");
    let sites = list.matches("0x").count() - 1;
    if let Some(gdb) = gdb_locations(&exe, "weigh") {
        assert_eq!(sites, gdb, "scry's locations are gdb's: {list}");
    }
    let mut xs = Vec::new();
    for _ in 0..20 {
        let stop = scry.ok("cont()");
        if !stop.starts_with("breakpoint 1") {
            break;
        }
        xs.push(scry.num("Number(state.var('x'))"));
    }
    xs.sort_unstable();
    assert_eq!(
        xs,
        vec![0, 0, 1, 1, 2, 2, 3, 3, 100, 101, 102, 103],
        "every call stops once, each with its own x"
    );
    assert!(scry.ok("output()").contains("truth 24 1624 24"));
}

#[test]
fn inside_an_inlined_helper_the_callers_names_are_found() {
    let exe = fixture_with("inlined_caller_names", &["-g", "-O2"]);
    let source = include_str!("../fixtures/inlined_caller_names.c");
    let line = common::line_of(source, "the helper's line");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!("breakpoint.set('inlined_caller_names.c:{line}')"));
    scry.ok("cont()");
    assert!(scry.ok("state.unwind(1)").contains("[inlined] scaled"));
    // `v` is the helper's own; `step` and `start` are the function it is inlined in.
    assert_eq!(scry.num("Number(state.var('v'))"), 3);
    assert_eq!(scry.num("Number(state.var('step'))"), 7);
    assert_eq!(scry.num("Number(state.var('start'))"), 3);
    // In a condition, as a logpoint would ask.
    scry.ok("breakpoint.remove(1)");
    scry.ok(&format!(
        "breakpoint.set('inlined_caller_names.c:{line}', {{if: () => state.var('v') > 20 && state.var('step') == 7}})"
    ));
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint"), "{stop}");
    assert_eq!(scry.num("Number(state.var('v'))"), 24);
    scry.ok("breakpoint.remove(2)");
    scry.ok("cont()");
    assert!(scry.ok("output()").contains("truth walk=246 step=7"));
}

/// A function defined in a header and inlined into two units, with one out-of-line copy: a
/// breakpoint on it stops at every copy in every unit that includes the header, as gdb's
/// four locations do (it was the copies of the out-of-line copy's own unit only).
#[test]
fn a_header_function_inlined_in_several_units_stops_in_each() {
    let exe = common::fixture_from(
        "header_inline",
        "cc",
        &["-g", "-O2"],
        &["header_inline_main.c", "header_inline_other.c"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('scale')");
    let list = scry.ok("breakpoint.list()");
    let sites = list.matches("0x").count() - 1;
    if let Some(gdb) = gdb_locations(&exe, "scale") {
        assert_eq!(sites, gdb, "scry's locations are gdb's: {list}");
    }
    let mut xs = Vec::new();
    for _ in 0..10 {
        if !scry.ok("cont()").starts_with("breakpoint 1") {
            break;
        }
        xs.push(scry.num("Number(state.var('x'))"));
    }
    xs.sort_unstable();
    assert_eq!(
        xs,
        vec![1, 2, 3],
        "each call once, the one in main's unit too"
    );
    let truth = common::truth(&mut scry);
    assert_eq!(truth["calls"], "3");
}

/// C++ member functions -O2 inlines into every caller and keeps no copy of (`Acc::add`,
/// `calc::Scaler::apply`: no ELF symbol, only abstract instances whose names are their
/// declarations' in the class) stop at their inlined copies as gdb's `break Acc::add` does;
/// they were pending forever ("no loaded module has 'Acc::add' yet"). Hits counted against
/// the loop's own count, frame 0 the inlined member.
#[test]
fn an_inline_only_member_function_stops_at_its_copies() {
    let exe = common::fixture_from(
        "inline_member-O2",
        "g++",
        &["-g", "-O2"],
        &["inline_member.cpp"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    for f in ["Acc::add", "calc::Scaler::apply"] {
        let set = scry.ok(&format!("breakpoint.set('{f}')"));
        assert!(!set.contains("pending"), "{f}: {set}");
        // gdb finds it too (its location count is its own business).
        if let Some(n) = gdb_locations(&exe, f) {
            assert!(n >= 1, "{f}");
        }
    }
    let mut adds = 0;
    let mut applies = 0;
    for _ in 0..20 {
        let stop = scry.ok("cont()");
        if !stop.starts_with("breakpoint ") {
            assert!(stop.starts_with("exited with code 0"), "{stop}");
            break;
        }
        let top = scry.ok("String(state.unwind()[0])");
        if top.contains("[inlined] Acc::add") {
            adds += 1;
        } else if top.contains("[inlined] calc::Scaler::apply") {
            applies += 1;
        } else {
            panic!("{stop}: frame 0 {top}");
        }
    }
    // argc 1: the loop runs four times.
    assert_eq!((adds, applies), (4, 4));
}
