//! The run loop (Rust, `src/runner`): runs end where they should and clean up after
//! themselves whatever way they end, a listener's exception included.

mod common;

use common::{file_bytes, fixture, line_of, load_bias, proc_mem, text_file_offset, Scry};

const SOURCE: &str = include_str!("../fixtures/run_loops.c");

/// `next()` over a call whose breakpoint listener throws: the exception reaches the script,
/// the target stays where the listener stopped it, and scry's breakpoint at the call's return
/// address is gone from memory (the program runs on to its own result).
#[test]
fn a_listener_that_throws_inside_next_leaves_no_breakpoint_behind() {
    let exe = fixture("run_loops");
    let mut scry = Scry::spawn(&exe, &["10"]);
    let call_line = line_of(SOURCE, "line: call");
    scry.ok(&format!(
        "breakpoint.set('run_loops.c:{call_line}'); cont()"
    ));
    let ret = scry.num(
        "((c) => c.addr + c.bytes.length / 2)(state.disasm(8).find(i => i.mnemonic === 'call'))",
    );
    scry.ok(
        "breakpoint.set('add'); addEventListener('breakpoint', e => { throw new Error('boom') })",
    );
    let err = scry.err("next()");
    assert!(err.contains("boom") && err.contains("add"), "{err}");
    let pid = scry.target_pid();
    let bias = load_bias(pid, &exe);
    assert_eq!(
        proc_mem(pid, ret, 1),
        file_bytes(&exe, text_file_offset(&exe, ret - bias), 1),
        "the byte at the return address {ret:#x} is the program's"
    );
    scry.ok("removeEventListener('breakpoint'); breakpoint.remove(2)");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(scry.ok("output()").contains("sum=45 r=5"));
}

/// A `next()` over one line that takes tens of thousands of single steps (a loop written on
/// one line) ends on the next line, with the program's result unchanged; a `step(n)` listener
/// that throws ends the batch at that step with the exception.
#[test]
fn long_lines_and_throwing_step_listeners() {
    let exe = fixture("run_loops");
    let mut scry = Scry::spawn(&exe, &["3000"]);
    let loop_line = line_of(SOURCE, "line: loop");
    let print_line = line_of(SOURCE, "line: print");
    scry.ok(&format!(
        "breakpoint.set('run_loops.c:{loop_line}'); cont()"
    ));
    let stop = scry.ok("next({timeout: 60})");
    assert!(
        stop.starts_with("step at ") && stop.contains(&format!("run_loops.c:{print_line}")),
        "{stop}"
    );
    let err = scry.err(
        "let seen = 0; addEventListener('step', e => { if (++seen === 3) throw new Error('third') }); step(10)",
    );
    assert!(err.contains("third"), "{err}");
    assert_eq!(scry.num("seen"), 3);
    scry.ok("removeEventListener('step')");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(
        scry.ok("output()").contains("sum=4498500 r=5"),
        "3000 * 2999 / 2"
    );
}

const LOOPS: &str = include_str!("../fixtures/one_line_loop.c");

fn line_in(stop: &str) -> usize {
    stop.split_whitespace()
        .find_map(|w| w.strip_prefix("one_line_loop.c:"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no line in {stop}"))
}

/// `next()` over a loop on one line of 3,000,000 turns (~24 million instructions: minutes of
/// single steps, far past the 10 s deadline) ends on the next line: once the stepper has gone
/// round, the remaining turns run at full speed to the loop's way out.
#[test]
fn next_over_a_long_loop_on_one_line_reaches_the_next_line() {
    let mut scry = Scry::spawn(&fixture("one_line_loop"), &[]);
    let head = line_of(LOOPS, "i < 3000000");
    scry.ok(&format!("breakpoint.set('one_line_loop.c:{head}'); cont()"));
    let stop = scry.ok("next()");
    assert!(!stop.contains("timeout"), "{stop}");
    assert_eq!(
        line_in(&stop),
        line_of(LOOPS, "after the first loop"),
        "{stop}"
    );
    // The loop ran every turn: the program prints the full sum.
    let end = scry.ok("cont(); output()");
    assert!(end.contains("sum 4499998500000"), "{end}");
}

/// A loop calling a function with a breakpoint: the breakpoint still sees every call while
/// the turns run at full speed (its listener counts 1,000), and the step ends on the next line.
#[test]
fn laps_at_full_speed_keep_every_breakpoint_hit() {
    let mut scry = Scry::spawn(&fixture("one_line_loop"), &[]);
    let head = line_of(LOOPS, "i < 1000");
    scry.ok(&format!("breakpoint.set('one_line_loop.c:{head}'); cont()"));
    scry.ok("ctx.n = 0; breakpoint.set('tick'); \
         addEventListener('breakpoint', e => { ctx.n++; return 'continue' })");
    let stop = scry.ok("next()");
    assert_eq!(
        line_in(&stop),
        line_of(LOOPS, "after the second loop"),
        "{stop}"
    );
    assert_eq!(scry.ok("ctx.n"), "1000");
}

/// A loop on one line whose turns take two paths (an `if` inside): the path taken only on
/// some turns joins the cycle when first taken, and the 3,000,000 turns still run at full
/// speed to the next line (before, every other turn went back to single steps: a timeout).
#[test]
fn laps_take_in_every_path_of_a_loop_with_a_branch() {
    let mut scry = Scry::spawn(&fixture("one_line_loop"), &[]);
    let head = line_of(LOOPS, "m += i");
    scry.ok(&format!("breakpoint.set('one_line_loop.c:{head}'); cont()"));
    let stop = scry.ok("ctx.s = next()");
    assert!(!stop.contains("timeout"), "{stop}");
    let after = line_of(LOOPS, "after the third loop");
    assert_eq!(line_in(&stop), after, "{stop}");
    // The stop's line number is a number, as an event's `e.line` is.
    assert_eq!(
        scry.ok("typeof ctx.s.line + ' ' + (ctx.s.line - 1)"),
        format!("number {}", after - 1)
    );
    let end = scry.ok("cont(); output()");
    assert!(end.contains("mixed 1500001500000"), "{end}");
}

const CALLERS: &str = include_str!("../fixtures/two_callers.c");

/// `next()` and `finish()` over a call another thread makes from the same place: the fast
/// thread (its stack above the stepping one's) passes scry's breakpoint at the return address
/// thousands of times while the stepped call sleeps; only the stepping thread's return ends
/// the run, in that thread, after its call (before, the fast thread's first pass ended it
/// there, with the slow call not returned; finish() returned the fast call's 0 in the fast
/// thread).
#[test]
fn another_thread_at_the_return_address_is_no_return() {
    let call = line_of(CALLERS, "// the call");
    let slow = format!(
        "breakpoint.set('two_callers.c:{call}', {{if: e => state.var('id') == 1}}); ctx.hit = cont()"
    );
    let mut scry = Scry::spawn(&fixture("two_callers"), &[]);
    let hit = scry.ok(&slow);
    let tid = scry.ok("ctx.hit.tid");
    scry.ok("breakpoint.remove(1)");
    let stop = scry.ok("next()");
    assert!(stop.contains(&format!("thread {tid}")), "{hit} / {stop}");
    assert_eq!(
        scry.ok("state.var('id') + ' ' + state.var('calls')[1]"),
        "1 1",
        "{stop}"
    );

    // finish() from inside the slow call: back in the slow thread, with what it returned.
    let mut scry = Scry::spawn(&fixture("two_callers"), &[]);
    scry.ok("breakpoint.set('work', {if: e => state.var('id') == 1}); ctx.hit = cont()");
    let tid = scry.ok("ctx.hit.tid");
    scry.ok("breakpoint.remove(1)");
    let stop = scry.ok("finish()");
    assert!(
        stop.contains(&format!("thread {tid}")) && stop.contains("returned 1"),
        "{stop}"
    );
    let end = scry.ok("cont(); output()");
    assert!(end.contains("slow 1 fast>0 1"), "{end}");
}

/// `next({into: true})` is gdb's `step`: a call to a function with lines is entered and the
/// step ends at its first line past the prologue; a return mid-line runs the rest of the
/// caller's line (here, the loop's next call, entered again); a call through the PLT (printf)
/// is run over (a library of the program's own is entered). The same lines as gdb's `step` on the same program; an option a run does not
/// take is an error naming the ones it does.
#[test]
fn next_into_enters_calls_with_lines_as_gdbs_step() {
    let src = include_str!("../fixtures/loop.c");
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    let start = line_of(src, "int total = 0;");
    scry.ok(&format!("breakpoint.set('loop.c:{start}'); cont()"));
    let mut lines = Vec::new();
    for _ in 0..5 {
        let stop = scry.ok("const s = next({into: true}); `${s.symbol.split('+')[0]}:${s.line}`");
        lines.push(stop);
    }
    let call = line_of(src, "total = add(total, i)");
    let body = line_of(src, "counter += 1;");
    assert_eq!(
        lines,
        [
            format!("main:{call}"),
            format!("add:{body}"),
            format!("add:{}", body + 1),
            format!("add:{}", body + 2),
            format!("add:{body}"),
        ]
    );
    let print = line_of(src, "printf(");
    scry.ok(&format!("breakpoint.set('loop.c:{print}'); cont()"));
    // Through the PLT into libc: run over, even with libc6-dbg's lines (gdb's step enters
    // `__printf` at printf.c:28); a library of the program's own is entered.
    assert_eq!(scry.ok("next({into: true}).line"), (print + 1).to_string());
    let e = scry.err("step({into: true})");
    assert!(e.contains("next({into: true})"), "{e}");
    let e = scry.err("cont({timeuot: 1})");
    assert!(
        e.contains("cont(): no option 'timeuot'; it takes {timeout}"),
        "{e}"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
}

/// next() over a call that throws, and finish() out of it, end in the caller's catch
/// handler in the same loop turn (`i` still 3, `rejected` not yet counted); they ran on to
/// the next turn as if nothing had been thrown (gdb 13's next does too), and finish()'s
/// stop says the function did not return.
#[test]
fn next_and_finish_over_a_throw_end_in_the_handler_that_catches_it() {
    let src = include_str!("../fixtures/throw_catch.cpp");
    let call = common::line_of(src, "// the call");
    let handler = common::line_of(src, "// the handler");
    for opt in ["-O0", "-O2"] {
        let exe = common::fixture_from(
            &format!("throw_catch{opt}"),
            "g++",
            &["-g", opt],
            &["throw_catch.cpp"],
        );
        let mut scry = Scry::spawn(&exe, &[]);
        scry.ok(&format!(
            "breakpoint.set('throw_catch.cpp:{call}', {{if: e => e.state.var('i') == 3}})"
        ));
        assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
        let stop = scry.ok("next()");
        let line = stop
            .rsplit_once("throw_catch.cpp:")
            .and_then(|(_, l)| l.split_whitespace().next())
            .and_then(|l| l.parse::<usize>().ok())
            .unwrap_or(0);
        // The handler: its `catch` line (binding `e`) or its first statement.
        assert!(line == handler || line == handler - 1, "{opt}: {stop}");
        assert_eq!(scry.num("state.var('i')"), 3, "{opt}: {stop}");
        assert_eq!(scry.num("state.var('rejected')"), 0, "{opt}");
        scry.ok("breakpoint.remove(1)");
        assert!(scry.ok("cont()").starts_with("exited with code 0"));
        let truth = common::truth(&mut scry);
        assert_eq!(truth["rejected"], "1");
    }
    // finish() out of the function that throws.
    let exe = common::fixture_from(
        "throw_catch-O0",
        "g++",
        &["-g", "-O0"],
        &["throw_catch.cpp"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('check', {if: e => e.state.var('v') == 3})");
    scry.ok("cont()");
    let stop = scry.ok("finish()");
    assert!(
        stop.contains(
            "the function did not return: an exception (or a Rust panic) it let out is caught here"
        ),
        "{stop}"
    );
    assert_eq!(scry.num("state.var('i')"), 3, "{stop}");
    assert_eq!(scry.num("state.var('rejected')"), 0);
}

/// `next()` in a function without line information (`apply`, built without -g, calling
/// back into the program) runs it to its return and steps on in the caller to its next
/// line, as gdb's "single stepping until exit" (it was an error: "no line information at
/// pc; use step()").
#[test]
fn next_without_line_information_runs_to_the_caller() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("no_line_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let object = dir.join("no_line_apply.o");
    let built = |cmd: &mut std::process::Command| cmd.status().unwrap().success();
    assert!(built(
        std::process::Command::new("cc")
            .args(["-O1", "-c", "-o"])
            .arg(&object)
            .arg(src.join("no_line_apply.c"))
    ));
    let exe = dir.join("no_line_caller");
    assert!(built(
        std::process::Command::new("cc")
            .args(["-g", "-O0", "-o"])
            .arg(&exe)
            .arg(src.join("no_line_caller.c"))
            .arg(&object)
    ));
    let text = std::fs::read_to_string(src.join("no_line_caller.c")).unwrap();
    let after = common::line_of(&text, "// after");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('cb'); cont()");
    assert!(scry.ok("finish()").contains(" apply+"));
    let stop = scry.ok("next()");
    assert!(
        stop.starts_with("step at ") && stop.contains(&format!(" no_line_caller.c:{after}")),
        "{stop}"
    );
    assert!(stop.contains("no line information in apply"), "{stop}");
    scry.ok("cont()");
    assert_eq!(common::truth(&mut scry)["a"], "10");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `next({into: true})` at a call through the PLT into a library with lines enters the
/// library's function (through the loader's resolver on the first, lazily bound call),
/// as gdb's `step` does; it ran over the call as over a function without lines.
#[test]
fn next_into_enters_a_library_function_through_the_plt() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("plt_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let built = |cmd: &mut std::process::Command| cmd.status().unwrap().success();
    assert!(built(
        std::process::Command::new("cc")
            .args(["-g", "-O0", "-shared", "-fPIC", "-o"])
            .arg(dir.join("libplt.so"))
            .arg(src.join("plt_lib.c"))
    ));
    let exe = dir.join("plt_host");
    assert!(built(
        std::process::Command::new("cc")
            .args(["-g", "-O0", "-Wl,-z,lazy", "-o"])
            .arg(&exe)
            .arg(src.join("plt_host.c"))
            .arg(format!("-L{}", dir.display()))
            .arg("-lplt")
            .arg(format!("-Wl,-rpath,{}", dir.display()))
    ));
    let lib = std::fs::read_to_string(src.join("plt_lib.c")).unwrap();
    let body = common::line_of(&lib, "// libfn body");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('main'); cont()");
    for call in ["first", "second"] {
        let stop = scry.ok("next({into: true})");
        assert!(
            stop.contains(" libfn+") && stop.ends_with(&format!(" plt_lib.c:{body}")),
            "{call}: {stop}"
        );
        assert_eq!(
            scry.num("+state.var('x')"),
            if call == "first" { 3 } else { 4 }
        );
        scry.ok("finish()");
        scry.ok("next()");
    }
    scry.ok("cont()");
    let t = common::truth(&mut scry);
    assert_eq!((t["a"].as_str(), t["b"].as_str()), ("7", "9"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A handler that interrupted a system call in the middle of its line (libc's `poll`,
/// with libc6-dbg's lines): `next()` off its end runs on out of `poll` to the program's next
/// line, as gdb's does; it stopped in `poll`, a call more for nothing.
#[test]
fn next_off_a_handler_that_interrupted_poll_runs_out_of_it() {
    let exe = common::fixture_with("handler_poll", &["-g", "-O0"]);
    let src = include_str!("../fixtures/handler_poll.c");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('on_alarm')");
    // SIGALRM passes without a stop, as in gdb.
    assert!(scry.ok("cont()").starts_with("breakpoint 1 "));
    // Through the handler's lines (at most four), then out of it.
    let mut stop = String::new();
    for _ in 0..5 {
        stop = scry.ok("next()");
        if !stop.contains(" on_alarm+") {
            break;
        }
    }
    let after = common::line_of(src, "// after poll");
    assert!(
        stop.contains(" main+") && stop.contains(&format!("handler_poll.c:{after}")),
        "{stop}"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("ticks=1"));
    scry.finish();
}

/// `next()` off the end of a signal handler goes through the trampoline that ends it
/// (`__restore_rt`, which has no line) to the code the signal interrupted, in one call, as
/// gdb's `next` does; it stopped in the trampoline, and the next `next()` skipped the
/// interrupted frame.
#[test]
fn next_off_a_signal_handler_returns_to_the_interrupted_code() {
    let exe = common::fixture_with("handler_return", &["-g", "-O0"]);
    let mut scry = Scry::spawn(&exe, &[]);
    let signal = scry.ok("cont()");
    assert!(signal.starts_with("signal SIGUSR1 at "), "{signal}");
    let interrupted = scry.ok("hex(state.pc)");
    scry.ok("breakpoint.set('on_usr1')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 "));
    let line = common::line_of(
        include_str!("../fixtures/handler_return.c"),
        "// in the handler",
    );
    assert!(scry
        .ok("next()")
        .contains(&format!("handler_return.c:{}", line + 1)));
    let back = scry.ok("next()");
    assert!(!back.contains("__restore_rt"), "{back}");
    assert_eq!(scry.ok("hex(state.pc)"), interrupted, "{back}");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    scry.finish();
}
