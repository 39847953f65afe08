//! The fault matrix: targets that misbehave, scripts that misbehave, sessions used wrongly.
//! Each test asserts what the user sees, and that the session goes on.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fixture, ChildGuard, Scry};

fn kill(sig: &str, pid: impl ToString) {
    Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
}

// ---- target faults ---------------------------------------------------------------------

#[test]
fn target_sigkilled_from_outside_during_cont() {
    let mut scry = Scry::spawn(&fixture("ticker"), &["1000"]);
    let pid = scry.target_pid();
    scry.send_raw("cont({timeout: 30})\n;;\n");
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    kill("-KILL", pid);
    let r = scry.read_response();
    assert_eq!(r.body.trim(), "killed by SIGKILL", "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(scry
        .err("state.pc")
        .contains("no live process (killed by SIGKILL)"));
    assert_eq!(scry.ok("1 + 1"), "2");
}

#[test]
fn target_exits_during_a_step_listener() {
    let mut scry = Scry::spawn(&fixture("loop"), &["1"]);
    scry.ok("breakpoint.set('exit'); cont(); breakpoint.remove(1)");
    scry.ok("ctx.steps = 0; ctx.exits = []; addEventListener('step', e => { ctx.steps++ }); addEventListener('exit', e => { ctx.exits.push(e.code) })");
    let stop = scry.ok("step(1000000)");
    assert!(stop.starts_with("exited with code 3"), "{stop}");
    assert!(
        stop.contains(" of 1000000 steps]"),
        "the batch says how far it got: {stop}"
    );
    assert_eq!(scry.ok("ctx.exits.join(',')"), "3");
    assert!(scry.num("ctx.steps") > 10);
}

#[test]
fn sigstop_and_sigcont_from_outside() {
    let mut scry = Scry::spawn(&fixture("ticker"), &["1000"]);
    let pid = scry.target_pid();
    scry.send_raw("cont({timeout: 20})\n;;\n");
    std::thread::sleep(Duration::from_millis(200));
    kill("-STOP", pid);
    let r = scry.read_response();
    assert_eq!(
        r.body.split(" at ").next().unwrap(),
        "signal SIGSTOP",
        "{r:?}"
    );
    // Continuing passes the SIGSTOP on; the program can still be driven afterwards.
    let next = scry.ok("breakpoint.set('tick'); cont({timeout: 5})");
    assert!(
        next.starts_with("breakpoint 1") || next.starts_with("timeout"),
        "{next}"
    );
    kill("-CONT", pid);
    let after = scry.ok("cont({timeout: 5})");
    assert!(
        after.starts_with("breakpoint 1") || after.starts_with("signal SIGCONT"),
        "{after}"
    );
    assert!(scry.ok("state.pc").len() > 2);
}

#[test]
fn programs_own_sigtrap_handler_and_int3_still_work() {
    let mut scry = Scry::spawn(&fixture("own_trap"), &[]);
    let first = scry.ok("cont()");
    assert!(
        first.starts_with("signal SIGTRAP at "),
        "its own int3: {first}"
    );
    let second = scry.ok("cont()");
    assert!(
        second.starts_with("signal SIGTRAP at "),
        "raise(SIGTRAP): {second}"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(
        scry.ok("output()"),
        "traps=2",
        "both traps reached the handler of the program"
    );
}

fn delivered(out: &str) -> u64 {
    out.trim()
        .strip_prefix("delivered=")
        .unwrap_or_else(|| panic!("fixture line: {out}"))
        .parse()
        .unwrap()
}

#[test]
fn signal_storm_while_continuing_loses_no_signal() {
    let mut scry = Scry::spawn(&fixture("sigstorm"), &[]);
    scry.ok("breakpoint.set('checkpoint'); ctx.hits = 0; addEventListener('breakpoint', e => { ctx.hits++; return 'continue' })");
    assert!(scry
        .ok("cont({timeout: 60})")
        .starts_with("exited with code 0"));
    assert_eq!(scry.ok("ctx.hits"), "40");
    let n = delivered(&scry.ok("output()"));
    assert!(n > 20, "the storm happened: {n}");
}

#[test]
fn signal_storm_while_stepping_loses_no_signal() {
    let mut scry = Scry::spawn(&fixture("sigstorm"), &[]);
    scry.ok("ctx.handler = symbol('on_alarm'); ctx.entries = 0; addEventListener('step', e => { if (e.pc === ctx.handler) ctx.entries++ })");
    // Step a while through the storm, then let it finish.
    let stop = scry.ok("step(30000, {timeout: 60})");
    assert!(stop.contains("[30000 of 30000 steps]"), "{stop}");
    assert!(scry
        .ok("cont({timeout: 60})")
        .starts_with("exited with code 0"));
    let n = delivered(&scry.ok("output()"));
    assert!(
        n >= scry.num("ctx.entries"),
        "every handler entry seen while stepping is a delivery"
    );
    assert!(n > 20, "{n}");
}

// ---- script faults ---------------------------------------------------------------------

#[test]
fn a_throwing_listener_stops_the_run_and_the_session_survives() {
    let mut scry = Scry::spawn(&fixture("loop"), &["5"]);
    scry.ok("breakpoint.set('add+0'); ctx.n = 0; addEventListener('breakpoint', e => { if (++ctx.n === 2) throw new RangeError('second'); return 'continue' })");
    let err = scry.err("cont()");
    assert!(
        err.starts_with(
            "error: RangeError: second [in breakpoint listener; target stopped: breakpoint 1 at "
        ),
        "{err}"
    );
    assert_eq!(
        scry.ok("hex(state.pc) === hex(symbol('add'))"),
        "true",
        "stopped at the event"
    );
    let thrown = scry.err("ctx.n = 10; removeEventListener('breakpoint', () => 0); addEventListener('breakpoint', () => { throw 42 }); cont()");
    assert!(thrown.contains("breakpoint listener threw 42"), "{thrown}");
}

#[test]
fn listeners_cannot_resume_reentrantly() {
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    scry.ok("breakpoint.set('add'); addEventListener('breakpoint', e => { step() })");
    let err = scry.err("cont()");
    assert!(
        err.contains("step() cannot be called inside a listener"),
        "{err}"
    );
    assert!(scry.ok("state.pc").len() > 2);
}

#[test]
fn huge_print_is_capped_and_marked() {
    let mut scry = Scry::start(&["--output-limit", "4096"]);
    let r = scry.eval("for (let i = 0; i < 200; i++) print('y'.repeat(50000))");
    assert!(r.ok);
    assert!(r.body.len() < 8192, "{} bytes", r.body.len());
    assert!(
        r.body.contains("[scry: response cut after "),
        "{}",
        &r.body[r.body.len() - 200..]
    );
    let r = scry.eval("print('z'.repeat(10 * 1024 * 1024))");
    assert!(r.body.contains("more bytes: send :more"));
    assert_eq!(scry.ok("1 + 2"), "3");
}

#[test]
fn target_strings_with_invalid_utf8_and_nuls() {
    let mut scry = Scry::spawn(&fixture("strings"), &[]);
    assert_eq!(
        scry.ok("state.memory('bad_utf8').str()"),
        "ok\\xff\\xfe-end"
    );
    assert_eq!(scry.ok("state.memory('with_nul').str()"), "before");
    assert_eq!(
        scry.ok("state.memory('with_nul').bytes(13)"),
        "6265666f726500616674657200"
    );
}

#[test]
fn numbers_and_addresses_mixups_are_clear() {
    let mut scry = Scry::spawn(&fixture("strings"), &[]);
    assert_eq!(scry.ok("typeof state.memory('big').u64()"), "bigint");
    assert_eq!(
        scry.ok("hex(state.memory('big').u64())"),
        "0xfedcba9876543210"
    );
    let mixed = scry.err("state.memory('big').u64() + 1");
    assert!(
        mixed.contains("BigInt(x)"),
        "the error teaches the fix: {mixed}"
    );
    // Addresses accept a Number or a BigInt alike.
    assert_eq!(scry.ok("state.memory(BigInt(symbol('big'))).u8()"), "16");
    assert!(scry
        .err("state.memory(-8).u8()")
        .contains("bad address -8: negative"));
    assert!(scry
        .err("state.memory(2n ** 64n).u8()")
        .contains("beyond 64 bits"));
    assert!(scry
        .err("state.memory(2 ** 47).u8()")
        .contains("address not mapped"));
    assert!(scry
        .err("state.memory(1.5).u8()")
        .contains("expected an integer"));
    assert!(scry
        .err("state.memory('nosuch').u8()")
        .contains("unknown symbol 'nosuch'"));
}

// ---- session faults --------------------------------------------------------------------

#[test]
fn attach_errors_are_clear() {
    let mut scry = Scry::start(&[]);
    assert!(scry
        .err("attach(999999999)")
        .contains("attach: no process 999999999"));
    assert!(scry
        .err(&format!("attach({})", scry.pid()))
        .contains("refusing to attach to scry itself"));
    // A process another scry already traces.
    let mut other = Scry::spawn(&fixture("ticker"), &["1000"]);
    let traced = other.target_pid();
    let err = scry.err(&format!("attach({traced})"));
    assert!(err.contains("already traced by process"), "{err}");
    assert!(scry.err("attach(-1)").contains("attach"));
    assert_eq!(scry.ok("status().live"), "false");
}

#[test]
fn stdin_closed_mid_chunk_evaluates_what_arrived_and_ends() {
    let mut scry = Scry::spawn(&fixture("ticker"), &["1000"]);
    let pid = scry.target_pid();
    scry.send_raw("print('partial')");
    let status = scry.finish_with_output();
    assert!(status.0.success());
    assert!(status.1.contains("partial\n;; ok"), "{:?}", status.1);
    assert!(
        common::process_is_dead(pid),
        "the spawned target was killed at end of input"
    );
}

/// Spawning again while the spawned program lives starts over, as gdb's `run` does: the old
/// process is killed, and the new entry stop says so.
#[test]
fn a_second_spawn_starts_over() {
    let program = fixture("loop");
    let mut scry = Scry::spawn(&program, &[]);
    let first = scry.target_pid();
    let stop = scry.ok(&format!("spawn({:?}, '2')", program.to_str().unwrap()));
    assert!(
        stop.contains(&format!(
            "[the previous process {first} was killed to start this one]"
        )),
        "{stop}"
    );
    assert!(common::process_is_dead(first), "the first target is killed");
    let second = scry.num("status().pid") as i32;
    assert_ne!(second, first);
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
    // The new process ran with the new arguments.
    assert!(scry.ok("output()").contains("total=1 calls=2"));
}

#[test]
fn detach_leaves_an_attached_program_running_unchanged() {
    let mut child = ChildGuard(
        Command::new(fixture("ticker"))
            .arg("40")
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id();
    let mut scry = Scry::start(&["-p", &pid.to_string()]);
    scry.ok("breakpoint.set('tick'); watchpoint.set('ticks', 'w'); cont()");
    scry.ok("detach()");
    assert_eq!(common::proc_status_field(pid as i32, "TracerPid"), "0");
    assert!(!common::proc_status_field(pid as i32, "State").starts_with('t'));
    assert_eq!(child.wait_timeout(Duration::from_secs(20)).code(), Some(7));
}

#[test]
fn stepping_over_a_breakpoint_on_a_blocking_syscall_meets_the_deadline() {
    let mut scry = Scry::spawn(&fixture("blocked_read"), &[]);
    // The `syscall` instruction inside libc's read(): stepping over a breakpoint there blocks.
    let at = scry.num("state.disasm(40, symbol('read')).find(i => i.mnemonic === 'syscall').addr");
    scry.ok(&format!("breakpoint.set({at})"));
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at"));
    let started = Instant::now();
    let stop = scry.ok("cont({timeout: 1})");
    assert!(stop.starts_with("timeout at "), "{stop}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(scry.ok("state.pc").len() > 2, "still inspectable");
    // The interrupted read restarts when resumed: it blocks again (or re-executes the syscall
    // instruction under the breakpoint); either way the call returns within its deadline.
    let started = Instant::now();
    let again = scry.ok("cont({timeout: 1})");
    assert!(
        again.starts_with("timeout at ") || again.starts_with("breakpoint 1 at "),
        "{again}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(scry.ok("kill()").starts_with("killed by SIGKILL"));
}

#[test]
fn allocation_bomb_and_deep_recursion_leave_the_session_usable() {
    let mut scry = Scry::spawn(&fixture("loop"), &[]);
    let oom = scry.err("let a = []; while (true) a.push(new Array(1e6).fill(1))");
    assert!(oom.contains("ran out of memory"), "{oom}");
    let deep = scry.err("function f(n) { return f(n + 1) + 1 } f(0)");
    assert!(deep.contains("stack overflow"), "{deep}");
    assert_eq!(scry.ok("[1, 2, 3].map(x => x * 2).join(',')"), "2,4,6");
    assert!(scry.ok("state.pc").len() > 2);
}

#[test]
fn every_signal_of_a_storm_is_seen_once_and_delivered() {
    let mut scry = Scry::spawn(&fixture("sigstorm"), &[]);
    // Make SIGALRM a stopping signal and count each one in a listener that lets it through.
    scry.ok("handle_signal('SIGALRM', 'stop'); ctx.n = 0; addEventListener('signal', e => { if (e.signal === 'SIGALRM') ctx.n++; return 'continue' })");
    scry.ok("breakpoint.set('checkpoint'); addEventListener('breakpoint', () => 'continue')");
    assert!(scry
        .ok("cont({timeout: 60})")
        .starts_with("exited with code 0"));
    let n = delivered(&scry.ok("output()"));
    assert!(n > 20, "{n}");
    assert_eq!(
        scry.num("ctx.n"),
        n,
        "scry saw exactly the signals the program received"
    );
}

#[test]
fn a_cut_response_keeps_its_error_and_its_limit() {
    let mut scry = Scry::start(&["--output-limit", "300"]);
    let r = scry.eval(
        "for (let i = 0; i < 100; i++) print('line ' + i); throw new Error('the real reason')",
    );
    assert!(!r.ok);
    assert!(r.body.len() <= 300, "{} bytes: {}", r.body.len(), r.body);
    let lines: Vec<&str> = r.body.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"error: Error: the real reason"),
        "{}",
        r.body
    );
    assert!(
        lines[lines.len() - 2].starts_with("[scry: response cut after "),
        "{}",
        r.body
    );
    // A response that succeeds stays within the limit with its note too.
    let r = scry.eval("for (let i = 0; i < 100; i++) print('line ' + i)");
    assert!(r.ok && r.body.len() <= 300, "{} bytes", r.body.len());
    // Its value (a cont()'s stop line after thousands of log lines) comes after the note,
    // not 19 `:more`s later; the printed lines cut go to `:more` without it.
    let r = scry.eval("for (let i = 0; i < 100; i++) print('line ' + i); 'how it ended'");
    let lines: Vec<&str> = r.body.lines().collect();
    assert!(r.ok && r.body.len() <= 300, "{} bytes", r.body.len());
    assert_eq!(lines.last(), Some(&"how it ended"), "{}", r.body);
    assert!(lines[lines.len() - 2].starts_with("[scry: response cut after "));
    let more = scry.eval(":more");
    assert!(
        more.body.starts_with("line ") && !more.body.contains("how it ended"),
        "{}",
        more.body
    );
}

/// A non-canonical pointer faults with no address from the kernel (si_code SI_KERNEL, address
/// field 0): the stop must not read as a NULL dereference. The instruction's operand is the
/// address, live and in a core written there.
#[test]
fn a_general_protection_fault_names_its_address_never_null() {
    let mut scry = Scry::spawn(&fixture("wild_pointer"), &[]);
    let stop = scry.ok("cont()");
    let truth = common::truth(&mut scry);
    let wild = u64::from_str_radix(truth["pointer"].trim_start_matches("0x"), 16).unwrap();
    // `size_of` reads r->size, 8 bytes past the pointer.
    let at = format!("{:#x}", wild + 8);
    assert!(
        stop.starts_with(&format!("signal SIGSEGV fault_addr={at} at "))
            && stop.contains("size_of")
            && stop.contains(&format!(
                "general protection fault: the non-canonical address {at}"
            )),
        "{stop}"
    );
    let core = common::temp_path("wild.core");
    scry.ok(&format!("gcore({:?})", core.to_str().unwrap()));
    let exe = fixture("wild_pointer");
    let mut again = Scry::start(&[]);
    let stop = again.ok(&format!(
        "core({:?}, {:?})",
        core.to_str().unwrap(),
        exe.to_str().unwrap()
    ));
    assert!(
        stop.starts_with(&format!("signal SIGSEGV fault_addr={at} at ")),
        "{stop}"
    );
    let _ = std::fs::remove_file(&core);
}

/// `next()` while a timer's signal keeps arriving: the handler runs through during the
/// steps, which stay on main's loop lines, as gdb's do (they stopped inside `on_alarm`,
/// then in `__restore_rt` with no line, and every next() after was an error). A breakpoint
/// inside the handler still stops there.
#[test]
fn next_runs_a_signal_handler_through_and_stays_on_its_lines() {
    let exe = fixture("next_signal");
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/next_signal.c"
    ))
    .unwrap();
    let head = common::line_of(&src, "// loop head");
    let body = common::line_of(&src, "// loop body");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!("breakpoint.set('next_signal.c:{body}'); cont()"));
    scry.ok("breakpoint.remove(1)");
    let lines = scry.ok(
        "const seen = new Set(); for (let i = 0; i < 400; i++) { const s = next(); seen.add(s.symbol.split('+')[0] + ':' + s.line) } [...seen].sort().join(' ')",
    );
    assert_eq!(lines, format!("main:{head} main:{body}"));
    // The handler ran meanwhile (the steps took long enough for many alarms).
    assert!(scry.num("+state.var('ticks')") > 0);
    scry.ok("breakpoint.set('on_alarm')");
    let stop = scry.ok("next()");
    assert!(
        stop.starts_with("breakpoint 2 at ") && stop.contains(" on_alarm"),
        "{stop}"
    );
    scry.ok("breakpoint.remove(2); cont({timeout: 60})");
    assert_eq!(common::truth(&mut scry)["ticked"], "1");
}
