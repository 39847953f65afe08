//! Stepping Rust as gdb steps it: `next` through a `for` loop at -O0 passes the "line 0"
//! code rustc puts between the loop's parts (fixtures/rust/line_zero_loop.rs).

mod common;

use std::process::Command;

use common::Scry;

const SOURCE: &str = include_str!("../fixtures/rust/line_zero_loop.rs");

#[test]
fn next_through_a_for_loop_shows_the_lines_gdb_shows() {
    let exe = common::rust_fixture("line_zero_loop", "0");
    let head = common::line_of(SOURCE, "for x in v.iter()");
    let body = common::line_of(SOURCE, "total += x;");
    let after = common::line_of(SOURCE, "println!");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!("breakpoint.set('line_zero_loop.rs:{head}')"));
    scry.ok("cont()");
    let mut lines = Vec::new();
    for _ in 0..5 {
        let stop = scry.ok("next()");
        let line = stop
            .split_whitespace()
            .find_map(|w| w.strip_prefix("line_zero_loop.rs:"))
            .unwrap_or_else(|| panic!("no line in {stop}"))
            .to_string();
        lines.push(line.parse::<usize>().unwrap());
    }
    assert_eq!(
        lines,
        vec![head, body, body, body, after],
        "one stop per turn, never on line 0"
    );

    // gdb's `next`, where gdb is installed, stops at the same lines.
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args([
            "-ex",
            &format!("break line_zero_loop.rs:{head}"),
            "-ex",
            "run",
        ]);
    for _ in 0..5 {
        cmd.args(["-ex", "next"]);
    }
    let Ok(out) = cmd.arg(&exe).output() else {
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let gdb: Vec<usize> = text
        .lines()
        .filter_map(|l| l.split('\t').next()?.trim().parse().ok())
        .collect();
    if gdb.len() == 6 {
        assert_eq!(&gdb[1..], &lines[..], "{text}");
    }
}

/// finish() out of a function whose panic catch_unwind catches ends where it is caught (std's
/// catch_unwind), said so, as for a C++ exception; it ran on to the program's end.
#[test]
fn finish_out_of_a_panic_ends_where_catch_unwind_catches_it() {
    let exe = common::rust_fixture("caught_panic", "0");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('caught_panic::risky'); cont()");
    let back = scry.ok("finish()");
    assert!(back.contains("it let out is caught here"), "{back}");
    assert!(scry.ok("String(state.unwind(6))").contains("catch_unwind"));
    scry.ok("cont()");
    assert!(scry.ok("finish()").ends_with("returned 8"));
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("caught=true ok=8"));
}
