//! `next()` through C++ (libstdc++, g++ at -O0 and -O2) stops on exactly the lines gdb's
//! `next` stops on (fixtures/cpp_tally.cpp), through the program's return into `main`.

mod common;

use std::path::Path;
use std::process::Command;

use common::Scry;

const NEXTS: usize = 30;

/// The `file:line` of each stop gdb's `next` makes after a breakpoint on `function`.
fn gdb_stops(exe: &Path, function: &str) -> Option<Vec<String>> {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args([
            "-ex",
            &format!("break {function}"),
            "-ex",
            "run",
            "-ex",
            "frame",
        ]);
    for _ in 0..NEXTS {
        cmd.args(["-ex", "next", "-ex", "frame"]);
    }
    let out = cmd.arg(exe).output().ok()?;
    // `#0  tally (words=...) at /path/fixtures/cpp_tally.cpp:20`
    let stops: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("#0 "))
        .filter_map(|l| l.rsplit(['/', ' ']).next())
        .map(str::to_string)
        .collect();
    (!stops.is_empty()).then_some(stops)
}

fn scry_stops(exe: &Path, function: &str, count: usize) -> Vec<String> {
    let mut scry = Scry::spawn(exe, &[]);
    let mut stops = vec![scry.ok(&format!("breakpoint.set('{function}'); cont()"))];
    while stops.len() < count {
        stops.push(scry.ok("next()"));
    }
    stops
        .iter()
        .map(|s| {
            s.split_whitespace()
                .find(|w| w.contains(".cpp:") || w.contains(".h:") || w.contains(".tcc:"))
                .unwrap_or_else(|| panic!("no line in {s:?}"))
                .to_string()
        })
        .collect()
}

#[test]
fn next_through_cpp_stops_where_gdb_does() {
    for opt in ["-O0", "-O2"] {
        let exe = common::fixture_from(
            &format!("cpp_tally{opt}"),
            "g++",
            &["-g", opt],
            &["cpp_tally.cpp"],
        );
        for function in ["tally", "main"] {
            let Some(gdb) = gdb_stops(&exe, function) else {
                eprintln!("skipped: gdb is not installed");
                return;
            };
            // gdb ends its list where the program exits; scry is asked as many times.
            let scry = scry_stops(&exe, function, gdb.len());
            assert_eq!(scry, gdb, "{function} at {opt}");
        }
    }
}

/// The jump into the middle of the closing line's row (the shared exit after `Guard`'s
/// destructor) runs that line to its end: the next stop is the caller's, not line `}` again.
#[test]
fn a_jump_into_the_middle_of_a_line_runs_the_rest_of_it() {
    let exe = common::fixture_from("cpp_tally-O0", "g++", &["-g", "-O0"], &["cpp_tally.cpp"]);
    let source = include_str!("../fixtures/cpp_tally.cpp");
    let ret = common::line_of(source, "return counts;");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!("breakpoint.set('cpp_tally.cpp:{ret}'); cont()"));
    let lines: Vec<String> = (0..3)
        .map(|_| {
            let stop = scry.ok("next()");
            stop.split_whitespace()
                .find_map(|w| w.strip_prefix("cpp_tally.cpp:"))
                .unwrap_or_else(|| panic!("no line in {stop}"))
                .to_string()
        })
        .collect();
    let call = common::line_of(source, "auto counts = tally(words);");
    assert_eq!(
        lines,
        [ret + 1, ret, call + 1].map(|l| l.to_string()),
        "`}}` (destructors), the return line's jump, then main's next line"
    );
}

/// `finish()` returning to where an inlined destructor begins (a temporary's, at -O2) stops
/// in the caller on the calling line, with the returned value, as gdb's finish does.
#[test]
fn finish_shows_the_callers_line_not_an_inlined_destructor_about_to_run() {
    let exe = common::fixture_from("finish_dtor", "g++", &["-g", "-O2"], &["finish_dtor.cpp"]);
    let line = common::line_of(include_str!("../fixtures/finish_dtor.cpp"), "line: call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('use'); cont()");
    let stop = scry.ok("finish()");
    assert!(
        stop.contains(" main+0x") && stop.contains(&format!("finish_dtor.cpp:{line} returned 26")),
        "{stop}"
    );
    let top = scry.ok("state.unwind()[0].symbol");
    assert!(top.starts_with("main"), "{top}");
}

/// A `file:line` breakpoint on a line whose only row shares its address with the next
/// line's inlined calls (`int total = 0;` kept in a register at -O2) stops on the next line
/// in main, its calls not entered; before, the stop was named `stl_tree.h:995`, six calls
/// deep in `m.begin()`. The program runs on to its own answer.
#[test]
fn a_line_without_code_of_its_own_stops_on_the_next_line_in_its_function() {
    let exe = common::fixture_from(
        "line_without_code-O2",
        "g++",
        &["-g", "-O2"],
        &["line_without_code.cpp"],
    );
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/line_without_code.cpp"),
    )
    .unwrap();
    let asked = common::line_of(&src, "// no code of its own");
    let next = common::line_of(&src, "// the loop");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!("breakpoint.set('line_without_code.cpp:{asked}')"));
    let stop = scry.ok("cont()");
    assert!(
        stop.ends_with(&format!(" line_without_code.cpp:{next}")),
        "{stop}"
    );
    let row0 = scry.ok(
        "const f = state.unwind()[0]; [f.file.split('/').pop(), f.line, !!f.inlined].join(' ')",
    );
    assert_eq!(row0, format!("line_without_code.cpp {next} false"));
    scry.ok("breakpoint.remove(1); cont()");
    assert_eq!(common::truth(&mut scry)["total"], "30");
}
