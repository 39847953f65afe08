//! Optimized code read as gdb reads it (fixtures/inline_entry.c, -O2): a breakpoint on a
//! function whose first instruction begins a call inlined into it stops in the function; a
//! static the optimizer dropped is `<optimized out>`; `*array` is its first element;
//! `state.unwind(max)` counts the rows it shows.

mod common;

use std::process::Command;

use common::{fixture_with, Scry};

const SOURCE: &str = include_str!("../fixtures/inline_entry.c");

/// The 1-based line of the fixture whose text contains `needle`.
fn line_of(needle: &str) -> usize {
    common::line_of(SOURCE, needle)
}

/// gdb's answers to `commands` at a breakpoint on `location`, or None without gdb.
fn gdb_at(exe: &std::path::Path, location: &str, commands: &[&str]) -> Option<String> {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", &format!("break {location}"), "-ex", "run"]);
    for c in commands {
        cmd.args(["-ex", c]);
    }
    let out = cmd.arg(exe).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The printed "scale(v=57, k=3) = 171" line: the arguments the fixture passed.
fn printed_args(output: &str) -> (String, String) {
    let line = output
        .lines()
        .find(|l| l.starts_with("scale(v="))
        .expect("the fixture printed its call");
    let v = line["scale(v=".len()..]
        .split(',')
        .next()
        .unwrap()
        .to_string();
    let k = line.split("k=").nth(1).unwrap().split(')').next().unwrap();
    (v, k.to_string())
}

#[test]
fn a_function_breakpoint_stops_in_the_function_not_in_a_call_inlined_at_its_start() {
    let exe = fixture_with("inline_entry", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &["41", "5"]);
    scry.ok("breakpoint.set('scale')");
    let body_line = line_of("return clamp(v) * k;");
    let stop = scry.ok("cont()");
    assert!(
        stop.contains(&format!("inline_entry.c:{body_line}")),
        "the stop names scale's own line (the call to clamp), as gdb does: {stop}"
    );
    let rows = scry.ok("state.unwind()");
    let first = rows.lines().next().unwrap();
    assert!(
        first.contains(" scale(") && !first.contains("[inlined]"),
        "frame #0 is scale itself: {rows}"
    );
    assert_eq!(
        scry.ok("state.locals().map(v => v.name).join(',')"),
        "v,k",
        "the function's own parameters, not clamp's"
    );
    let v = scry.ok("String(state.var('v'))");
    let k = scry.ok("String(state.var('k'))");
    assert_eq!(
        scry.ok("state.source(0).split('\\n')[1].slice(0, 3)"),
        format!(">{body_line}")
    );
    scry.ok("breakpoint.remove(1)");
    scry.ok("cont()");
    let (pv, pk) = printed_args(&scry.ok("output()"));
    assert_eq!((v, k), (pv, pk), "the arguments the program printed");
    scry.finish();

    if let Some(gdb) = gdb_at(&exe, "scale", &["bt 1"]) {
        let frame0 = gdb.lines().find(|l| l.starts_with("#0")).unwrap_or("");
        assert!(frame0.contains(" scale ("), "gdb agrees: {gdb}");
    }
}

#[test]
fn a_line_breakpoint_on_the_line_making_an_inlined_call_shows_that_line() {
    let exe = fixture_with("inline_entry", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    // scale's line: clamp, inlined on it, begins at the same byte. The stop is the line
    // asked for (gdb 13 shows clamp's first line there); a step enters clamp.
    let line = line_of("return clamp(v) * k;");
    scry.ok(&format!("breakpoint.set('inline_entry.c:{line}')"));
    let stop = scry.ok("cont()");
    assert!(
        stop.contains(" scale ") && stop.ends_with(&format!("inline_entry.c:{line}")),
        "{stop}"
    );
    let rows = scry.ok("state.unwind(1)");
    assert!(
        rows.lines().next().unwrap().contains(" scale(v=57, k=3)"),
        "{rows}"
    );
    assert_eq!(scry.ok("String(state.var('k'))"), "3");
    scry.ok("step()");
    let rows = scry.ok("state.unwind(1)");
    assert!(rows.contains("[inlined] clamp("), "{rows}");
}

#[test]
fn a_line_breakpoint_inside_the_inlined_call_shows_it_and_unwind_max_counts_rows() {
    let exe = fixture_with("inline_entry", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    // The first line of clamp: its code begins at scale's first byte, like the call.
    let line = line_of("if (v < 0) return 0;");
    scry.ok(&format!("breakpoint.set('inline_entry.c:{line}')"));
    scry.ok("cont()");
    let rows = scry.ok("state.unwind()");
    assert!(
        rows.lines().next().unwrap().contains("[inlined] clamp("),
        "a line in clamp stops in clamp: {rows}"
    );
    assert!(rows.lines().nth(1).unwrap().contains(" scale("), "{rows}");
    // max counts the rows a user sees, inlined ones included.
    assert_eq!(scry.num("state.unwind(1).length"), 1);
    assert_eq!(scry.num("state.unwind(2).length"), 2);
    let one = scry.ok("state.unwind(1)");
    assert_eq!(one.lines().count(), 2, "one row, then why: {one}");
    assert!(one.contains("frame limit (1)"), "{one}");
    assert!(one.lines().next().unwrap().contains("clamp("), "{one}");
}

#[test]
fn a_dropped_static_is_optimized_out_and_an_array_dereferences_to_its_first_element() {
    let exe = fixture_with("inline_entry", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('scale')");
    scry.ok("cont()");
    assert_eq!(scry.ok("String(state.value('g_last'))"), "<optimized out>");
    assert_eq!(scry.ok("String(state.var('g_last'))"), "<optimized out>");
    assert!(scry
        .err("state.value('g_lsat')")
        .contains("no variable 'g_lsat'"));
    assert_eq!(scry.ok("String(state.value('*grid'))"), "[1, 2, 3, 4]");
    assert_eq!(scry.num("Number(state.value('*grid[2]'))"), 9);
    assert_eq!(scry.num("Number(state.var('grid').deref()[1])"), 2);
    let first = scry.ok("String(state.value('*names'))");
    assert!(first.ends_with("\"first\""), "{first}");

    if let Some(gdb) = gdb_at(&exe, "scale", &["print g_last", "print *grid"]) {
        assert!(gdb.contains("= <optimized out>"), "gdb agrees: {gdb}");
        assert!(gdb.contains("= {1, 2, 3, 4}"), "gdb agrees: {gdb}");
    }
}

/// The source line in a stop line such as `step at 0x... work+0x7 next_inline.c:13`.
fn stop_line(stop: &str) -> Option<usize> {
    stop.rsplit_once("next_inline.c:")?.1.trim().parse().ok()
}

#[test]
fn next_steps_over_inlined_calls_line_by_line_as_gdb() {
    const NEXT_SOURCE: &str = include_str!("../fixtures/next_inline.c");
    let line = |needle: &str| common::line_of(NEXT_SOURCE, needle);
    let exe = fixture_with("next_inline", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('work')");
    let stop = scry.ok("cont()");
    assert_eq!(stop_line(&stop), Some(line("int t = sq(a);")), "{stop}");
    // Each statement line of `work` once, in order: the second call to `sq` begins its line,
    // and the stop there is in `work`, not in the inlined body.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let stop = scry.ok("next()");
        seen.push(stop_line(&stop).unwrap_or_else(|| panic!("{stop}")));
    }
    assert_eq!(
        seen,
        [
            line("t += sq(t);"),
            line("printf(\"work=%d"),
            line("return t;")
        ]
    );
    // Out of `work`: main's line is finished (its return value compared), so the step ends
    // where main returns to, not in the middle of main's line.
    let out = scry.ok("next()");
    assert!(
        !out.contains(" main+") && out.starts_with("step at "),
        "{out}"
    );
    assert_eq!(scry.ok("1 + 1"), "2");

    // The second call's stop, seen again: the frame is `work` at the calling line.
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('work')");
    scry.ok("cont()");
    scry.ok("next()");
    let top = scry.ok("state.unwind(1)");
    assert!(
        top.contains(" work+") && top.contains(&format!("next_inline.c:{}", line("t += sq(t);"))),
        "{top}"
    );

    if let Some(gdb) = gdb_at(&exe, "work", &["next", "next", "next", "next"]) {
        let gdb_lines: Vec<usize> = gdb
            .lines()
            .filter_map(|l| l.split('\t').next()?.trim().parse().ok())
            .collect();
        // gdb prints the stop line of `break` and of each `next` inside work.
        assert!(
            gdb_lines.starts_with(&[
                line("int t = sq(a);"),
                line("t += sq(t);"),
                line("printf(\"work=%d"),
                line("return t;")
            ]),
            "{gdb}"
        );
        let gdb_last = gdb
            .lines()
            .rev()
            .find(|l| l.contains(" at ") || l.contains(" ("))
            .unwrap_or("");
        assert!(!gdb_last.starts_with("main ("), "{gdb}");
    }
}

/// A breakpoint on a function that exists only inlined stops inside the inlined call (GCC's
/// entry_pc can lie before the call's first range: the first range wins, as in gdb), and
/// finish() from there leaves the inlined call for its caller at the pc gdb's finish stops
/// at, with no value (nothing returned one).
#[test]
fn finish_from_an_inlined_call_leaves_it_where_gdb_does() {
    let exe = fixture_with("finish_inlined", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('helper'); cont()");
    assert_eq!(scry.ok("state.unwind()[0].symbol"), "helper");
    assert_eq!(scry.ok("state.unwind()[0].inlined"), "true");
    let at_bp = scry.num("state.pc");
    let done = scry.ok("finish()");
    assert!(
        done.starts_with("finish at ") && !done.contains("returned"),
        "{done}"
    );
    assert_eq!(scry.ok("!!state.unwind()[0].inlined"), "false");
    assert!(scry.ok("state.unwind()[0].symbol").starts_with("work"));
    let after = scry.num("state.pc");
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("t=30"));
    let Some(gdb) = gdb_at(
        &exe,
        "helper",
        &[
            "printf \"pc=%#lx\\n\", $pc",
            "finish",
            "printf \"pc=%#lx\\n\", $pc",
        ],
    ) else {
        return;
    };
    let pcs: Vec<u64> = gdb
        .lines()
        .filter_map(|l| l.strip_prefix("pc=0x"))
        .filter_map(|h| u64::from_str_radix(h.trim(), 16).ok())
        .collect();
    assert_eq!(pcs, vec![at_bp, after], "{gdb}");
}
