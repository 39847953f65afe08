//! Frames that tail calls erased, rebuilt from DWARF call-site information: `middle` ends in
//! `jmp leaf`, so at a breakpoint in `leaf` the stack holds no frame of it; the unwind shows
//! one, marked as such, where gdb shows it.

mod common;

use std::process::Command;

use common::{fixture_with, Scry};

/// Each stop's backtrace as gdb prints it, `function(args)` per row, at `location` and each
/// of `more` continues after it (`None` without gdb). `a=a@entry=5` reads `a=5`: the value
/// is the same, gdb only says where it came from.
fn gdb_backtraces(exe: &std::path::Path, location: &str, more: usize) -> Option<Vec<Vec<String>>> {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args([
            "-ex",
            &format!("break {location}"),
            "-ex",
            "run",
            "-ex",
            "bt",
        ]);
    for _ in 0..more {
        cmd.args(["-ex", "continue", "-ex", "bt"]);
    }
    let out = cmd.arg(exe).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut stops: Vec<Vec<String>> = Vec::new();
    for line in text.lines().filter(|l| l.starts_with('#')) {
        let body = line.split_once(" in ").map_or_else(
            || {
                line.split_whitespace()
                    .skip(1)
                    .collect::<Vec<_>>()
                    .join(" ")
            },
            |(_, rest)| rest.to_string(),
        );
        let (name, rest) = body.split_once(" (").unwrap_or((&body, ")"));
        let args = rest.rsplit_once(')').map_or("", |(a, _)| a);
        let args: Vec<String> = args
            .split(", ")
            .filter(|a| !a.is_empty())
            .map(|a| match a.split_once('=') {
                Some((n, v)) => {
                    let v = v.strip_prefix(&format!("{n}@entry=")).unwrap_or(v);
                    format!("{n}={v}")
                }
                None => a.to_string(),
            })
            .collect();
        if line.starts_with("#0 ") {
            stops.push(Vec::new());
        }
        stops
            .last_mut()?
            .push(format!("{name}({})", args.join(", ")));
    }
    Some(stops)
}

/// scry's backtrace in the same shape: `function(args)` per row.
fn our_backtrace(scry: &mut Scry) -> Vec<String> {
    scry.ok(
        "state.unwind().map(f => f.symbol.split('+')[0] + '(' + (f.args || '') + ')').join('\\n')",
    )
    .lines()
    .map(str::to_string)
    .collect()
}

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
    // The erased frame's parameter, as its location list places it at the jump: an entry
    // value the chain cannot recover here (gdb: `middle (x=<optimized out>)`).
    assert_eq!(
        scry.ok("state.locals(1).map(v => `${v.name}=${v.value}`).join(' ')"),
        "x=<optimized out>"
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

/// The ground truth fixtures/tailchain.c prints.
fn truth(scry: &mut Scry) -> std::collections::HashMap<String, i64> {
    scry.ok("output()")
        .lines()
        .filter_map(|l| l.strip_prefix("truth "))
        .flat_map(|l| l.split(' '))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect()
}

#[test]
fn erased_frames_show_their_arguments_and_entry_values_pass_through_them() {
    // DWARF 5's call sites and GCC's DWARF 4 extensions (DW_TAG_GNU_call_site).
    for flags in [&["-g", "-O2"][..], &["-g", "-gdwarf-4", "-O2"]] {
        erased_frames_at_a_stop_in_h(flags);
    }
}

fn erased_frames_at_a_stop_in_h(flags: &[&str]) {
    let exe = fixture_with("tailchain", flags);
    let mut scry = Scry::spawn(&exe, &[]);
    // Line 17 (`hook(b)`): after a call through a pointer, so h's a and cancel are dead and
    // their registers reused; only entry values describe them.
    scry.ok("breakpoint.set('tailchain.c:17')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    let t = truth(&mut scry);
    let ours = our_backtrace(&mut scry);
    assert_eq!(
        ours,
        [
            format!("h(a={}, b={}, cancel=true)", t["h_a"], t["h_b"]),
            format!("g(a={}, cancel=true)", t["g_a"]),
            format!("f(a={}, cancel=true)", t["f_a"]),
            "main(argc=1, argv=<optimized out>)".to_string(),
        ]
    );
    // The premise: h's own DWARF places cancel only as an entry value at this stop.
    let loc = Command::new("readelf")
        .args(["--debug-dump=loc"])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&loc.stdout).contains("entry_value: (DW_OP_reg1 (rdx))"),
        "h's cancel (rdx) is an entry value somewhere"
    );
    // The same values through every entry point: a frame's variables, one by name.
    assert_eq!(scry.ok("state.var('cancel')"), "true");
    assert_eq!(scry.num("state.var('a')") as i64, t["h_a"]);
    assert_eq!(
        scry.ok("state.locals(1).map(v => `${v.name}=${v.value}`).join(' ')"),
        format!("a={} cancel=true", t["g_a"])
    );
    assert_eq!(scry.num("state.var('a', 2)") as i64, t["f_a"]);
    assert_eq!(
        scry.ok("state.unwind().map(f => !!f.tail_call).join(' ')"),
        "false true true false"
    );
    if let Some(gdb) = gdb_backtraces(&exe, "tailchain.c:17", 0) {
        assert_eq!(gdb.first(), Some(&ours), "{gdb:?}");
    }
}

#[test]
fn two_tail_call_paths_prove_no_entry_value() {
    let exe = fixture_with("tailchain", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('tailchain.c:17')");
    scry.ok("cont()");
    let t = truth(&mut scry);
    // The second stop: main called pick, which reaches h through g or g2; main's call site
    // gave pick its arguments, not h, and which path ran is not provable.
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    let a = t["main_a"];
    let b = if a & 1 == 1 { 2 * a } else { a };
    let ours = our_backtrace(&mut scry);
    assert_eq!(
        ours,
        [
            format!("h(a=<optimized out>, b={b}, cancel=<optimized out>)"),
            "main(argc=1, argv=<optimized out>)".to_string(),
        ]
    );
    assert_eq!(scry.ok("state.var('cancel')"), "<optimized out>");
    // Reading into a value that has none here is an error a script can tell from a bad
    // request by its mark, not its text.
    let caught = "p => { try { state.value(p, 1); return 'read' } catch (e) { return `${e.noValue === true} ${e.message}` } }";
    assert_eq!(
        scry.ok(&format!("({caught})('argv[0]')")),
        // Named by the part of the path that has none.
        "true argv: <optimized out>"
    );
    assert!(
        scry.ok(&format!("({caught})('nope')"))
            .starts_with("false no variable 'nope'"),
        "an unknown name is no missing value"
    );
    if let Some(gdb) = gdb_backtraces(&exe, "tailchain.c:17", 1) {
        assert_eq!(gdb.get(1), Some(&ours), "{gdb:?}");
    }
}

/// `function(args)` with every number past 65535 (an address, a thread id) as `#`: two runs
/// of one program agree on the rest.
fn stable(row: &str) -> String {
    let (name, args) = row.split_once('(').unwrap_or((row, ")"));
    let args: Vec<String> = args
        .trim_end_matches(')')
        .split(", ")
        .map(|a| match a.split_once('=') {
            Some((n, v)) => {
                let num = match v.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok(),
                    None => v.parse::<u64>().ok(),
                };
                match num {
                    Some(x) if x > 65535 => format!("{n}=#"),
                    _ => a.to_string(),
                }
            }
            None => a.to_string(),
        })
        .collect();
    format!("{name}({})", args.join(", "))
}

#[test]
fn erased_libc_frames_show_arguments_as_gdb_does() {
    let exe = fixture_with("join_wait", &["-g", "-O0"]);
    let mut scry = Scry::spawn(&exe, &[]);
    if scry.ok("modules().find(m => m.name.startsWith('libc.so')).debug") != "separate" {
        eprintln!("no debug file for libc; skipped");
        return;
    }
    scry.ok("breakpoint.set('ready')");
    scry.ok("cont()");
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("cont({timeout: 0.5})").starts_with("timeout"));
    scry.ok("thread.select(thread.list()[0].tid)");
    let ours = our_backtrace(&mut scry);
    let tail: Vec<&String> = ours
        .iter()
        .filter(|r| r.starts_with("__futex_abstimed_wait_cancelable64("))
        .collect();
    assert_eq!(tail.len(), 1, "{ours:?}");
    assert!(
        scry.ok(
            "state.unwind().filter(f => f.tail_call).map(f => f.symbol.split('+')[0]).join(' ')"
        )
        .contains("__futex_abstimed_wait_cancelable64"),
        "{ours:?}"
    );
    // What libc's source passes: pthread_join(t, 0) is __pthread_clockjoin_ex(t, 0, 0, NULL,
    // true), which waits on the thread's tid word, process-private (FUTEX_PRIVATE_FLAG).
    let main_row = scry.num("state.unwind().findIndex(f => f.symbol.startsWith('main'))");
    let t = scry.num(&format!("state.var('t', {main_row})"));
    let join = ours
        .iter()
        .find(|r| r.starts_with("__pthread_clockjoin_ex("))
        .unwrap();
    assert!(
        join.starts_with(&format!(
            "__pthread_clockjoin_ex(threadid={t}, thread_return=0x0, clockid=0, abstime=0x0"
        )),
        "{join}"
    );
    assert!(
        tail[0].contains("clockid=0, abstime=0x0, private=128"),
        "{ours:?}"
    );
    // gdb at the start of the same wait (the erased frame and its caller are the same
    // frames there), argument by argument (the inlined rows above them differ: gdb lists an
    // inlined call's arguments in another order).
    let gdb = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "break ready", "-ex", "run"])
        .args([
            "-ex",
            "break __futex_abstimed_wait_common",
            "-ex",
            "continue",
            "-ex",
            "bt",
        ])
        .arg(&exe)
        .output();
    let Ok(out) = gdb else {
        eprintln!("no gdb; compared nothing");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with('#') && l.contains(" in "))
        .map(|l| {
            let body = l.split_once(" in ").unwrap().1;
            let (name, rest) = body.split_once(" (").unwrap_or((body, ")"));
            let args = rest.rsplit_once(") at").map_or("", |(a, _)| a);
            let args: Vec<String> = args
                .split(", ")
                .map(|a| match a.split_once('=') {
                    Some((n, v)) => {
                        format!(
                            "{n}={}",
                            v.strip_prefix(&format!("{n}@entry=")).unwrap_or(v)
                        )
                    }
                    None => a.to_string(),
                })
                .collect();
            // gdb names the frame by libc's internal alias.
            let name = name.trim_start_matches("__GI_");
            format!("{name}({})", args.join(", "))
        })
        .collect();
    for name in [
        "__futex_abstimed_wait_cancelable64(",
        "__pthread_clockjoin_ex(",
    ] {
        let theirs = rows.iter().find(|r| r.starts_with(name));
        let mine = ours.iter().find(|r| r.starts_with(name));
        assert!(theirs.is_some() && mine.is_some(), "{text}\n{ours:?}");
        assert_eq!(
            stable(mine.unwrap()),
            stable(theirs.unwrap()),
            "{text}\n{ours:?}"
        );
    }
}

/// `descend(n=0)` tail-calls `leaf` from inside an inlined `helper`: the erased frame shows
/// the inlined call as a row of its own (gdb names it `helper`), with helper's variables,
/// then `descend` itself.
#[test]
fn an_erased_frame_shows_the_call_inlined_where_it_jumped() {
    let exe = fixture_with("tail_inline", &["-g", "-O2"]);
    let mut scry = Scry::spawn(&exe, &["3"]);
    // The deepest descend (n=0) reaches leaf by the jump; its caller (n=1) calls it.
    scry.ok("breakpoint.set('leaf', {if: e => e.state.value('ac->depth') == 4})");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at"));
    let names = rows(&mut scry);
    assert!(names[0].starts_with("leaf@"), "{names:?}");
    assert!(names[1].starts_with("tail:helper@"), "{names:?}");
    assert!(names[2].starts_with("tail:descend@"), "{names:?}");
    assert!(names[3].starts_with("descend@"), "{names:?}");
    assert_eq!(scry.ok("String(state.frame(1).inlined)"), "true");
    // helper(ac, k, n) was called with descend's k and n swapped; m is what leaf received.
    let v = scry.num("Number(state.var('v'))");
    assert_eq!(scry.num("Number(state.var('m', 1))"), v);
    assert_eq!(
        scry.num("Number(state.var('n', 1))"),
        scry.num("Number(state.var('k', 2))")
    );
    assert_eq!(scry.num("Number(state.var('n', 2))"), 0);
    // The deepest k is 1 + 3 + 2 + 1: m = k * k.
    assert_eq!(v, 49);
    // finish() returns to the physical caller, past the erased rows.
    let back = scry.ok("finish()");
    assert!(back.contains(" descend+"), "{back}");

    if let Some(stops) = gdb_backtraces(&exe, "leaf if ac->depth == 4", 0) {
        let gdb = &stops[0];
        assert!(
            gdb[1].starts_with("helper("),
            "gdb names the row helper: {gdb:?}"
        );
    }
}
