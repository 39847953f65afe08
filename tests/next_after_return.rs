//! `next()` that returns into the middle of a caller's line at -O2 stops where gdb's `next`
//! does: the first row after the return address sets the line being stepped, so the caller's
//! next statement row ends the step even when it is on the line the call was on.

mod common;

use std::process::Command;

use common::{fixture_with, Scry};

/// gdb's pc after `break apply`, `run`, `finish` and then each `next` (`None` without gdb).
fn gdb_pcs(exe: &std::path::Path, nexts: usize) -> Option<Vec<u64>> {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "break apply", "-ex", "run", "-ex", "finish"]);
    for _ in 0..nexts {
        cmd.args(["-ex", "next", "-ex", "printf \"pc=%#lx\\n\", $pc"]);
    }
    let out = cmd.arg(exe).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let pcs: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("pc=0x"))
        .filter_map(|h| u64::from_str_radix(h.trim(), 16).ok())
        .collect();
    assert_eq!(pcs.len(), nexts, "{text}");
    Some(pcs)
}

#[test]
fn next_back_in_the_caller_stops_where_gdb_stops() {
    let exe = fixture_with("ast_eval", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('apply')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    assert!(scry.ok("finish()").starts_with("finish at "));
    let mut ours = Vec::new();
    for _ in 0..3 {
        let stop = scry.ok("next()");
        let pc = scry.num("state.pc");
        ours.push(pc);
        // Every stop is a place the line table marks as a statement, or a breakpoint.
        assert!(
            stop.starts_with("step at ") || stop.starts_with("breakpoint 1 at "),
            "{stop}"
        );
    }
    // The run is not disturbed: it ends with the result the program computes.
    scry.ok("breakpoint.remove(1)");
    scry.ok("cont()");
    assert!(scry.ok("output()").contains("result -58"));
    let Some(gdb) = gdb_pcs(&exe, 3) else { return };
    // Both run with ASLR off, so addresses agree exactly.
    assert_eq!(
        ours.iter().map(|p| format!("{p:#x}")).collect::<Vec<_>>(),
        gdb.iter().map(|p| format!("{p:#x}")).collect::<Vec<_>>()
    );
}
