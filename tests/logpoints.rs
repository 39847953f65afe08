//! Logpoints and conditions at scale: events that listeners let go stop only their own thread
//! (issue 11), and nothing is lost or counted twice.

mod common;

use common::{fixture, fixture_with, table, Scry};

fn program_output(binary: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new(binary)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn sixty_four_threads_hitting_a_logpoint_a_thousand_times_each_make_64000_calls() {
    let mut scry = Scry::spawn(&fixture("logpoints"), &["busy", "64", "1000"]);
    scry.ok("ctx.n = 0; breakpoint.set('hit'); addEventListener('breakpoint', e => { ctx.n++; return 'continue' })");
    let end = scry.ok("cont({timeout: 120})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert_eq!(scry.num("ctx.n"), 64_000);
    assert_eq!(scry.ok("output()"), "total 64000");
    assert_eq!(scry.ok("breakpoint.list()[0].hits"), "64000");
}

#[test]
fn a_real_stop_in_the_middle_loses_nothing_and_counts_nothing_twice() {
    let mut scry = Scry::spawn(&fixture("logpoints"), &["busy", "64", "1000"]);
    scry.ok("ctx.n = 0; breakpoint.set('hit');\
         addEventListener('breakpoint', e => ++ctx.n === 20000 ? 'stop' : 'continue')");
    let stop = scry.ok("cont({timeout: 120})");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    assert_eq!(scry.num("ctx.n"), 20_000);
    // A real stop stops every thread: nothing shows as running.
    let threads = scry.ok("thread.list()");
    assert!(!threads.contains("running"), "{threads}");
    assert!(table(&threads).len() > 1, "{threads}");
    let end = scry.ok("cont({timeout: 120})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert_eq!(scry.num("ctx.n"), 64_000);
    assert_eq!(scry.ok("output()"), "total 64000");
}

#[test]
fn inside_a_listener_the_other_threads_run_and_say_so() {
    let mut scry = Scry::spawn(&fixture("logpoints"), &["idle", "4", "50"]);
    scry.ok(
        "breakpoint.set('hit'); addEventListener('breakpoint', e => {\
           if (ctx.list === undefined) {\
             ctx.list = String(thread.list());\
             const other = thread.list().find(t => t.tid !== e.tid);\
             try { thread.select(other.tid) } catch (err) { ctx.err = err.message }\
             ctx.rdi = e.state.registers.rdi;\
           }\
           return 'continue' })",
    );
    let end = scry.ok("cont({timeout: 60})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    let list = scry.ok("ctx.list");
    assert_eq!(list.matches("\trunning\t").count(), 4, "{list}");
    assert!(
        scry.ok("ctx.err").contains("is running"),
        "the select was refused"
    );
    // The event thread's own registers are exact: the first call is hit(0).
    assert_eq!(scry.num("ctx.rdi"), 0);
}

/// Every instruction of functions with rip-relative data, direct and indirect calls, branches,
/// string instructions, pushes and returns carries a logpoint: each is stepped over without
/// lifting its int3 (emulated or displaced), and the program computes what it computes alone.
#[test]
fn every_instruction_can_carry_a_logpoint() {
    for flags in [&["-g", "-O0"][..], &["-g", "-O2"][..]] {
        let bin = fixture_with("logpoints", flags);
        let expected = program_output(&bin, &["kinds", "40"]);
        let mut scry = Scry::spawn(&bin, &["kinds", "40"]);
        scry.ok(
            "ctx.set = 0; for (const f of ['mix', 'pick', 'twice', 'thrice']) {\
               for (const i of state.disasm(400, f)) {\
                 const s = state.symbol_at(i.addr);\
                 if (!s || !(s === f || s.startsWith(f + '+'))) break;\
                 breakpoint.set(i.addr); ctx.set++ } }\
             ctx.n = 0; addEventListener('breakpoint', e => { ctx.n++; return 'continue' })",
        );
        let set = scry.num("ctx.set");
        assert!(set > 30, "{flags:?}: {set} breakpoints");
        let end = scry.ok("cont({timeout: 120})");
        assert!(end.starts_with("exited with code 0"), "{flags:?}: {end}");
        assert_eq!(scry.ok("output()"), expected.trim_end(), "{flags:?}");
        assert!(scry.num("ctx.n") > 40 * 10, "{flags:?}");
    }
}

#[test]
fn conditions_and_logs_are_breakpoint_options() {
    let mut scry = Scry::spawn(&fixture("logpoints"), &["idle", "2", "1000"]);
    // A log with a condition: one line per hundredth call, no stop.
    scry.ok(
        "breakpoint.set('hit', {name: 'tens', if: e => e.state.registers.rdi % 100 === 0,\
         log: e => 'i=' + e.state.registers.rdi})",
    );
    let r = scry.eval("cont({timeout: 60})");
    assert!(r.ok, "{r:?}");
    let lines: Vec<&str> = r.body.lines().collect();
    let logs: Vec<String> = (0..10).map(|k| format!("i={}", k * 100)).collect();
    assert_eq!(&lines[..10], &logs[..], "{}", r.body);
    assert!(lines[10].starts_with("exited with code 0"), "{}", r.body);
    // A condition alone stops where it holds.
    let mut scry = Scry::spawn(&fixture("logpoints"), &["idle", "2", "1000"]);
    scry.ok("breakpoint.set('hit', {if: e => e.state.registers.rdi === 500})");
    let stop = scry.ok("cont({timeout: 60})");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    assert_eq!(scry.num("state.registers.rdi"), 500);
    assert!(!scry.ok("thread.list()").contains("running"));
    // A condition that throws stops the run and names itself.
    scry.ok("breakpoint.remove(1); breakpoint.set('hit', {if: e => e.nope.x})");
    let err = scry.err("cont({timeout: 60})");
    assert!(
        err.contains("in breakpoint condition; target stopped: breakpoint 2"),
        "{err}"
    );
    assert!(scry
        .err("breakpoint.set('hit', {if: 5})")
        .contains("must be a function"));
}

#[test]
fn racing_watchpoint_writes_from_sixteen_threads_are_each_reported_once() {
    let mut scry = Scry::spawn(&fixture("logpoints"), &["race", "16", "100"]);
    scry.ok("ctx.n = 0; watchpoint.set('racy', 'w'); addEventListener('watchpoint', e => { ctx.n++; return 'continue' })");
    let end = scry.ok("cont({timeout: 120})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert_eq!(scry.num("ctx.n"), 1600, "one event per write");
}

/// With a hundred threads hitting a logpoint, some event is always waiting, so scry's wait
/// never blocks and the deadline's alarm never interrupts it: the run must still end at its
/// deadline (it ran until the program's own end, 30 s later, before the fix), and the
/// listener must have seen every hit the program counted, give or take one per thread (a
/// thread let go past its breakpoint may be stopped before it counts the return).
#[test]
fn a_run_of_logpoint_hits_from_a_hundred_threads_ends_at_its_deadline() {
    let threads = 100;
    let mut scry = Scry::spawn(&fixture("logpoints"), &["forever", &threads.to_string()]);
    scry.ok("ctx.n = 0; breakpoint.set('hit'); addEventListener('breakpoint', e => { ctx.n++; return 'continue' })");
    for round in 1..=2 {
        let started = std::time::Instant::now();
        let stop = scry.ok("cont({timeout: 1})");
        let took = started.elapsed();
        assert!(stop.starts_with("timeout at "), "round {round}: {stop}");
        assert!(
            took < std::time::Duration::from_secs(8),
            "round {round}: a 1 s run took {took:?}"
        );
        let seen = scry.num("ctx.n");
        let counted = scry.num("state.memory('calls').u64()");
        assert!(seen > 0, "round {round}: no hit seen");
        assert!(
            counted <= seen && seen <= counted + threads,
            "round {round}: the listener saw {seen} hits, the program counted {counted} returns"
        );
        assert_eq!(scry.num("breakpoint.list()[0].hits"), seen);
        let listing = scry.ok("thread.list()");
        assert!(
            !listing.contains("running"),
            "a timeout stops every thread: {listing}"
        );
    }
}

/// A log that returns nothing (it only counts) prints nothing; one that returns a value
/// prints one line per hit.
#[test]
fn a_log_that_returns_nothing_prints_nothing() {
    let mut scry = Scry::spawn(&fixture("logpoints"), &["idle", "2", "300"]);
    scry.ok("ctx.n = 0; breakpoint.set('hit', {log: e => { ctx.n++ }})");
    let end = scry.ok("cont({timeout: 60})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(!end.contains("undefined"), "{end}");
    assert_eq!(end.lines().count(), 1, "{end}");
    assert_eq!(scry.num("ctx.n"), 300);
    let mut scry = Scry::spawn(&fixture("logpoints"), &["idle", "2", "300"]);
    scry.ok("breakpoint.set('hit', {log: e => e.state.registers.rdi})");
    let end = scry.ok("cont({timeout: 60})");
    let lines: Vec<&str> = end.lines().collect();
    assert_eq!(lines.len(), 301, "{end}");
    assert_eq!(lines[299], "299");
}

/// Several breakpoints at one address each decide on their own terms, as gdb's do: a plain
/// one stops though another's condition is false, every log whose condition holds prints, and
/// the stop is named for the breakpoint that stopped it.
#[test]
fn breakpoints_sharing_an_address_each_keep_their_terms() {
    let exe = fixture("loop");
    // A condition on the first, a plain second: every hit stops, as breakpoint 2.
    let mut scry = Scry::spawn(&exe, &["4"]);
    scry.ok("breakpoint.set('add', {if: e => state.var('b') == 2})");
    let note = scry.ok("breakpoint.set('add')");
    assert!(note.contains("breakpoint 2 shares 0x"), "{note}");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 2 at "), "{stop}");
    assert_eq!(scry.ok("String(state.var('b'))"), "0");
    // A condition and a log: the log prints on every hit, its own included, the condition
    // stops at b == 2 as breakpoint 1.
    let mut scry = Scry::spawn(&exe, &["4"]);
    scry.ok("breakpoint.set('add', {if: e => state.var('b') == 2})");
    scry.ok("breakpoint.set('add', {log: e => 'b=' + state.var('b')})");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("b=0\nb=1\nb=2\nbreakpoint 1 at "),
        "{stop}"
    );
    assert_eq!(scry.ok("String(state.var('b'))"), "2");
    let end = scry.ok("cont()");
    assert!(end.starts_with("b=3\nexited with code 3"), "{end}");
}
