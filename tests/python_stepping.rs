//! `next()` through CPython 3.11 (built -O2 with LTO, Debian's python3.11-dbg for its debug
//! file), the acceptance program whose inlined calls split in parts and begin at return
//! addresses: scry stops on exactly the lines gdb stops on.

mod common;

use std::path::Path;
use std::process::Command;

use common::Scry;

const PYTHON: &str = "/usr/bin/python3.11";
const SCRIPT: &str = "x = []\nfor i in range(50): x.append(i); d = {i: i}; s = str(i) + 'a'\n";
const NEXTS: usize = 10;

/// The source lines gdb's `next` stops on after a breakpoint on `function`, the breakpoint's
/// line first.
fn gdb_lines(function: &str) -> Vec<String> {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args([
            "-ex",
            "set pagination off",
            "-ex",
            &format!("break {function}"),
        ])
        .args(["-ex", "run", "-ex", "frame"]);
    for _ in 0..NEXTS {
        cmd.args(["-ex", "next", "-ex", "frame"]);
    }
    let out = cmd
        .args(["-ex", "kill", "--args", PYTHON, "-c", SCRIPT])
        .output()
        .expect("gdb runs");
    // `frame` says `#0  list_append (self=..., object=...) at ../Objects/listobject.c:865`.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("#0 "))
        .filter_map(|l| l.rsplit(':').next())
        .map(|n| n.trim().to_string())
        .collect()
}

fn scry_lines(function: &str) -> Vec<String> {
    let mut scry = Scry::spawn(Path::new(PYTHON), &["-c", SCRIPT]);
    let mut stops = vec![scry.ok(&format!("breakpoint.set('{function}'); cont()"))];
    for _ in 0..NEXTS {
        stops.push(scry.ok("next()"));
    }
    stops
        .iter()
        .map(|s| {
            let last = s
                .split_whitespace()
                .find(|w| w.contains(".c:") || w.contains(".h:"));
            last.and_then(|w| w.rsplit(':').next())
                .unwrap_or("?")
                .to_string()
        })
        .collect()
}

/// Whether python3.11 and its debug file (python3.11-dbg, which .ci/run installs) are here.
fn python_with_debug_info() -> bool {
    let debug_info = Command::new("dpkg")
        .args(["-s", "python3.11-dbg"])
        .output()
        .is_ok_and(|o| o.status.success());
    let here = Path::new(PYTHON).exists() && debug_info;
    if !here {
        eprintln!("skipped: python3.11 with python3.11-dbg is not installed");
    }
    here
}

#[test]
fn next_through_optimized_python_stops_where_gdb_does() {
    if !python_with_debug_info() {
        return;
    }
    // list_append: `Py_RETURN_NONE` inlined in two parts (the second reached by a jump after
    // the list grew), and returns into callers where inlined calls begin at the return
    // address. PyObject_Hash: a tail call, then a jump back into a later part of the
    // inlined call being stepped (gdb stops at the call site, codeobject.c:2224).
    // _PyObject_Malloc: the same jump onto a row that is no statement (gdb steps on, in the
    // caller's frame). PyLong_FromLong and long_add: returns into the middle of a row (the
    // row's line is the caller's) and onto the start of a row that is no statement (no line).
    // PyTuple_New: its GCC copy PyTuple_New.part.0 is a location (gdb's `next` from an inlined
    // copy stops there), and a stop where inlined calls begin shows their call site.
    // PyUnicode_Concat: calls inlined on two lines interleaved within one row (the row is the
    // step's range, cut where a hidden call ends).
    for function in [
        "PyTuple_New",
        "PyUnicode_Concat",
        "list_append",
        "PyDict_SetItem",
        "long_add",
        "PyNumber_Add",
        "PyObject_Hash",
        "_PyObject_Malloc",
        "PyLong_FromLong",
    ] {
        let gdb = gdb_lines(function);
        assert_eq!(gdb.len(), NEXTS + 1, "{function}: gdb said {gdb:?}");
        assert_eq!(scry_lines(function), gdb, "{function}");
    }
}

/// In an LTO program the copies of a function inlined into other units are its breakpoint's
/// locations too, as gdb's are: every place gdb stops for `break PyNumber_Add` is one of
/// scry's (scry finds more: gdb 13 misses the copies inside `binary_op1`'s callers that
/// addr2line shows as PyNumber_Add).
#[test]
fn a_breakpoint_on_an_lto_function_covers_its_copies_in_other_units() {
    if !python_with_debug_info() {
        return;
    }
    let out = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args([
            "-ex",
            "break PyNumber_Add",
            "-ex",
            "info breakpoints",
            PYTHON,
        ])
        .output()
        .expect("gdb runs");
    let gdb: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("0x"))
        .filter_map(|h| u64::from_str_radix(h, 16).ok())
        .collect();
    assert!(gdb.len() > 2, "gdb found {gdb:?}");
    let mut scry = Scry::spawn(Path::new(PYTHON), &["-c", SCRIPT]);
    scry.ok("breakpoint.set('PyNumber_Add')");
    let listed = scry.ok("breakpoint.list()[0].locations.map(a => hex(a)).join(' ')");
    let scry_sites: Vec<u64> = listed
        .split_whitespace()
        .filter_map(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok())
        .collect();
    for a in &gdb {
        assert!(
            scry_sites.contains(a),
            "gdb's {a:#x} is not in scry's {listed}"
        );
    }
    // A hit at a copy inlined into another unit stops as the breakpoint, in PyNumber_Add.
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
}
