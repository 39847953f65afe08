//! Frames that tail calls erased, rebuilt from DWARF call-site information: `middle` ends in
//! `jmp leaf`, so at a breakpoint in `leaf` the stack holds no frame of it; the unwind shows
//! one, marked as such, where gdb shows it.

mod common;

use std::process::Command;

use common::{fixture_with, Scry};

/// `leaf middle outer main`-style names of the listed rows, tail-call rows marked `tail:`.
fn rows(scry: &mut Scry) -> Vec<String> {
    scry.ok("state.unwind().map(f => (f.tail_call ? 'tail:' : '') + f.symbol.split('+')[0] + '@' + hex(f.pc)).join(' ')")
        .split(' ')
        .map(str::to_string)
        .collect()
}

#[test]
fn a_tail_call_is_a_row_of_its_own_where_gdb_puts_it() {
    let exe = fixture_with("tailcall", &["-g", "-O2"]);
    // The premise: middle's last instruction jumps to leaf.
    let dis = Command::new("objdump")
        .args(["-d", exe.to_str().unwrap()])
        .output()
        .unwrap();
    let dis = String::from_utf8_lossy(&dis.stdout);
    let middle = dis.split("<middle>:").nth(1).expect("middle");
    assert!(
        middle
            .lines()
            .take(4)
            .any(|l| l.contains("jmp") && l.contains("<leaf>")),
        "{middle}"
    );

    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('leaf')");
    scry.ok("cont()");
    let ours = rows(&mut scry);
    let names: Vec<&str> = ours.iter().map(|r| r.split('@').next().unwrap()).collect();
    assert_eq!(names, ["leaf", "tail:middle", "outer", "main"]);
    let listing = scry.ok("state.unwind()");
    assert!(
        listing
            .lines()
            .nth(1)
            .unwrap()
            .contains(" [tail call] middle+"),
        "{listing}"
    );
    assert_eq!(
        scry.ok("state.locals(1).length"),
        "0",
        "no frame, no variables"
    );

    // gdb's backtrace of the same binary at the same place: the same functions, and the
    // same pc for the rebuilt frame (the address after the jump).
    let gdb = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "break leaf", "-ex", "run", "-ex", "bt"])
        .arg(&exe)
        .output();
    if let Ok(out) = gdb {
        let text = String::from_utf8_lossy(&out.stdout);
        let bt: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
        assert_eq!(bt.len(), 4, "{text}");
        assert!(bt[1].contains(" in middle "), "{text}");
        let gdb_pc = bt[1].split_whitespace().nth(1).unwrap();
        let our_pc = ours[1].split('@').nth(1).unwrap();
        assert_eq!(
            u64::from_str_radix(gdb_pc.trim_start_matches("0x"), 16).unwrap(),
            u64::from_str_radix(our_pc.trim_start_matches("0x"), 16).unwrap()
        );
    }

    // finish() returns to the caller that made the call (outer), not into the erased frame.
    let stop = scry.ok("finish()");
    assert!(
        stop.starts_with("finish") && stop.contains(" outer+"),
        "{stop}"
    );
}

#[test]
fn no_tail_call_rows_without_call_site_information() {
    // At -O0 there is no tail call and no row is invented.
    let mut scry = Scry::spawn(&fixture_with("tailcall", &["-g", "-O0"]), &[]);
    scry.ok("breakpoint.set('leaf')");
    scry.ok("cont()");
    let names: Vec<String> = rows(&mut scry)
        .iter()
        .map(|r| r.split('@').next().unwrap().to_string())
        .collect();
    assert_eq!(names, ["leaf", "middle", "outer", "main"]);
}
