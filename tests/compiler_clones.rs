//! Functions the compiler kept only as specialised copies (`weigh.constprop.0.isra.0`) are
//! found by the name the source gives them, as gdb finds them; `finish()` out of a `void`
//! one shows no return value.

mod common;

use std::process::Command;

use common::{fixture_with, nm_address, parse_num, Scry};

/// The raw name of the symbol whose name starts with `name.` in `nm`'s listing.
fn clone_of(exe: &std::path::Path, name: &str) -> Option<String> {
    let out = Command::new("nm").arg(exe).output().expect("nm runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .find(|s| s.starts_with(&format!("{name}.")) && !s.ends_with(".cold"))
        .map(str::to_string)
}

/// gdb's breakpoint address for `break NAME` (a file address), `None` without gdb.
fn gdb_break(exe: &std::path::Path, name: &str) -> Option<u64> {
    let out = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", &format!("break {name}")])
        .arg(exe)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let at = text.split(" at 0x").nth(1)?;
    u64::from_str_radix(at.split(':').next()?, 16).ok()
}

#[test]
fn a_cloned_function_is_found_by_its_source_name() {
    let exe = fixture_with("clones", &["-g", "-O3"]);
    let summarize = clone_of(&exe, "summarize").expect("gcc -O3 clones summarize");
    let weigh = clone_of(&exe, "weigh").expect("gcc -O3 clones weigh");
    let mut scry = Scry::spawn(&exe, &[]);
    // symbol() names the copy's entry, the address nm gives the clone.
    let bias = {
        let at = parse_num(&scry.ok("hex(symbol('main'))"));
        at - nm_address(&exe, "main")
    };
    assert_eq!(
        parse_num(&scry.ok("hex(symbol('weigh'))")),
        bias + nm_address(&exe, &weigh)
    );
    scry.ok("breakpoint.set('summarize')");
    scry.ok("breakpoint.set('weigh')");
    let stop = scry.ok("cont()");
    assert!(stop.contains(&summarize), "{stop}");
    // The breakpoint is where gdb puts `break summarize`.
    if let Some(g) = gdb_break(&exe, "summarize") {
        assert!(
            stop.contains(&format!("{:#x}", bias + g)),
            "{stop} vs gdb {g:#x}"
        );
    }
    assert!(scry.ok("state.unwind(1)").contains("n=1001"));
    // summarize is void: rax after it is noise, not a value.
    let fin = scry.ok("finish()");
    assert!(fin.starts_with("finish at "), "{fin}");
    assert!(!fin.contains("returned"), "{fin}");
    let stop = scry.ok("cont()");
    assert!(stop.contains(&weigh), "{stop}");
    // The clone no longer receives `st` itself (GCC describes it by DW_OP_GNU_parameter_ref):
    // its value is what main's call site passed, as gdb shows it.
    let st_here = scry.ok("state.value('st')");
    let n_here = scry.ok("state.value('st->n')");
    let factor = scry.ok("state.value('factor')");
    let fin = scry.ok("finish()");
    scry.ok("cont()");
    let out = scry.ok("output()");
    let w = out
        .split("truth w=")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .expect("the program prints w");
    assert!(fin.ends_with(&format!("returned {w}")), "{fin} vs {w}");
    let field = |key: &str| {
        out.split(&format!(" {key}="))
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or_else(|| panic!("the program prints {key}: {out}"))
            .to_string()
    };
    assert_eq!(parse_num(&st_here), parse_num(&field("st")), "{st_here}");
    assert_eq!(n_here, field("n"));
    assert_eq!(factor, "4");
}

/// A function GCC split at -O2 (`take` and `take [clone .cold]`, the cold part in
/// `.text.unlikely` below it) is stopped at by its own entry, never in the part only a
/// throw runs: every call stops. A call site naming such a function (DWARF ranges, no low
/// pc) gives its parameters' entry values, as gdb shows `c=c@entry=100`.
#[test]
fn a_function_split_into_a_cold_part_stops_at_its_entry() {
    let exe = common::fixture_from("cold_split-O2", "g++", &["-g", "-O2"], &["cold_split.cpp"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('take'); breakpoint.set('Ledger::add')");
    let list = scry.ok("breakpoint.list()");
    assert!(!list.contains("cold"), "{list}");
    for n in 0..3 {
        let stop = scry.ok("cont()");
        assert!(
            stop.starts_with("breakpoint 1 ") && stop.contains("take"),
            "{n}: {stop}"
        );
    }
    for n in 0..3 {
        let stop = scry.ok("cont()");
        assert!(
            stop.starts_with("breakpoint 2 ") && stop.contains("Ledger::add"),
            "{n}: {stop}"
        );
        assert_eq!(
            scry.ok("print(state.value('c@entry'))"),
            (100 * (n + 1)).to_string()
        );
    }
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()"), "s=54 total=6 ledger=600");
    scry.finish();
}
