//! Trust: a program behaves under scry exactly as it does alone. Each test runs a fixture
//! without scry and under it, and compares what the program itself reports.

mod common;

use std::process::Command;

use common::{fixture, fixture_with, Scry};

/// What the fixture prints when it runs alone.
fn alone(binary: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(binary)
        .args(args)
        .output()
        .expect("fixture runs");
    assert!(
        out.status.success(),
        "{} {args:?} failed alone",
        binary.display()
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `script` (which must end the run) under scry and returns the program's output.
fn under_scry(binary: &std::path::Path, args: &[&str], setup: &str, run: &str) -> String {
    let mut scry = Scry::spawn(binary, args);
    if !setup.is_empty() {
        scry.ok(setup);
    }
    let end = scry.ok(run);
    assert!(
        end.contains("exited with code 0"),
        "the run ended with: {end}"
    );
    scry.ok("output()")
}

// ---- signals 1-64 --------------------------------------------------------------------

#[test]
fn every_catchable_signal_reaches_its_handler_as_often_as_without_scry() {
    let bin = fixture("signals");
    let expected = alone(&bin, &["table"]);
    assert!(
        expected.contains("34 5\n") && expected.contains("64 5\n"),
        "{expected}"
    );
    // Each stop continued by hand, as an agent would.
    let by_hand = under_scry(
        &bin,
        &["table"],
        "",
        "let s; do { s = cont() } while (s.reason === 'signal'); s",
    );
    assert_eq!(
        by_hand.trim_end(),
        expected.trim_end(),
        "continuing every signal stop"
    );
    // A signal listener that lets every signal go on.
    let listener = under_scry(
        &bin,
        &["table"],
        "ctx.seen = 0; addEventListener('signal', e => { ctx.seen++; return 'continue' })",
        "cont()",
    );
    assert_eq!(
        listener.trim_end(),
        expected.trim_end(),
        "a 'continue' listener"
    );
    // Every signal passed without a stop.
    let passed = under_scry(
        &bin,
        &["table"],
        "for (let s = 1; s <= 64; s++) if (s !== 9 && s !== 19) handle_signal(s, 'pass')",
        "cont()",
    );
    assert_eq!(
        passed.trim_end(),
        expected.trim_end(),
        "handle_signal(s, 'pass')"
    );
}

#[test]
fn realtime_signals_are_named_as_glibc_numbers_them() {
    let mut scry = Scry::spawn(&fixture("signals"), &["table"]);
    scry.ok("for (let s = 1; s <= 33; s++) if (s !== 9 && s !== 19) handle_signal(s, 'pass')");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("signal SIGRTMIN (34) at "), "{stop}");
    assert_eq!(scry.ok("cont().signal"), "SIGRTMIN");
    scry.ok("handle_signal('rtmin', 'pass'); handle_signal('SIGRTMIN+1', 'pass')");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("signal SIGRTMIN+2 (36) at "), "{stop}");
    assert!(scry
        .err("handle_signal('SIGRTMIN+40', 'pass')")
        .contains("unknown signal"));
}

#[test]
fn queued_realtime_signals_all_run_their_handler_during_a_logpoint() {
    let mut scry = Scry::spawn(&fixture("signals"), &["queue", "300"]);
    scry.ok("ctx.ticks = 0; ctx.signals = 0; breakpoint.set('tick');\
         addEventListener('breakpoint', e => { ctx.ticks++; return 'continue' });\
         addEventListener('signal', e => { ctx.signals++; return 'continue' })");
    let end = scry.ok("cont({timeout: 30})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert_eq!(scry.ok("output()").trim(), "handled 300 of 300");
    assert_eq!(scry.num("ctx.ticks"), 300);
    assert_eq!(
        scry.num("ctx.signals"),
        300,
        "one signal event per sigqueue"
    );
}

#[test]
fn pthread_cancel_takes_effect_deferred_and_asynchronous() {
    let bin = fixture("signals");
    let expected = alone(&bin, &["cancel"]);
    assert_eq!(expected, "deferred cancelled\nasynchronous cancelled\n");
    let got = under_scry(&bin, &["cancel"], "", "cont({timeout: 20})");
    assert_eq!(got.trim_end(), expected.trim_end());
}

#[test]
fn setuid_in_a_threaded_program_changes_every_thread() {
    // glibc changes every thread's credentials with SIGSETXID (33): it must pass untouched.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc_geteuid() } != 0 {
        eprintln!("skipped: setuid needs root (CI runs as root)");
        return;
    }
    let bin = fixture("signals");
    let expected = alone(&bin, &["setuid"]);
    let got = under_scry(&bin, &["setuid"], "", "cont({timeout: 20})");
    let sorted = |s: &str| {
        let mut lines: Vec<&str> = s.lines().collect();
        lines.sort();
        lines.join("\n")
    };
    assert_eq!(sorted(&got), sorted(&expected));
    assert!(got.contains("setuid 0 main uid 65534"), "{got}");
    assert_eq!(got.matches("uid 65534").count(), 5, "{got}");
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

// ---- CPU placement -----------------------------------------------------------------------

#[test]
fn the_program_sees_and_keeps_its_own_cpu_mask() {
    let bin = fixture("affinity");
    let expected = alone(&bin, &[]);
    // Stepping through the loop that reads the mask (scry places the target on its own core
    // for plain instructions, never for a system call), then a logpoint run to the end
    // through the program's own sched_setaffinity.
    let got = under_scry(
        &bin,
        &[],
        "breakpoint.set('tick'); cont(); breakpoint.remove(1); step(20000);\
         breakpoint.set('tick'); addEventListener('breakpoint', e => 'continue')",
        "cont()",
    );
    assert_eq!(got.trim_end(), expected.trim_end());
    // The loop was really stepped through: 20000 steps cover many of its 40 rounds.
    assert!(expected.contains("during"), "{expected}");
}

#[test]
fn the_program_inherits_the_signal_dispositions_it_would_alone() {
    // scry's Rust runtime ignores SIGPIPE; the program must not inherit that.
    let bin = fixture("signals");
    let expected = alone(&bin, &["dispositions"]);
    assert!(expected.contains("13 default\n"), "{expected}");
    let got = under_scry(&bin, &["dispositions"], "", "cont()");
    assert_eq!(got.trim_end(), expected.trim_end());
}

// ---- breakpoint bytes ----------------------------------------------------------------------

#[test]
fn code_the_program_rewrites_under_a_breakpoint_is_its_own() {
    let bin = fixture("rewrite");
    assert_eq!(alone(&bin, &[]), "c=42\n");
    let mut scry = Scry::spawn(&bin, &[]);
    // Int3 breakpoints: what the program writes over one is its own code.
    scry.ok("breakpoint.set('f', {hardware: false}); breakpoint.set('patched', {hardware: false})");
    assert!(scry.ok("cont()").starts_with("breakpoint 2"));
    // The program's new bytes, not the saved original under the int3.
    assert_eq!(scry.ok("state.memory('f').bytes(6)"), "b82a000000c3");
    let list = common::table(&scry.ok("breakpoint.list()"));
    assert_eq!(list[0]["overwritten"], "true", "{list:?}");
    // Removing it must not write the stale byte back into the new code.
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()"), "c=42");
}

#[test]
fn detach_leaves_rewritten_code_alone() {
    let mut scry = Scry::spawn(&fixture("rewrite"), &[]);
    scry.ok("breakpoint.set('f'); breakpoint.set('patched'); cont()");
    assert_eq!(scry.ok("detach()"), "detached");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut out = String::new();
    while std::time::Instant::now() < deadline && !out.contains("c=") {
        std::thread::sleep(std::time::Duration::from_millis(50));
        out += &scry.ok("output()");
    }
    assert_eq!(out, "c=42");
}

#[test]
fn breakpoints_refuse_data_and_the_middle_of_instructions() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    let data = scry.err("breakpoint.set('counter')");
    assert!(data.contains("data, not code"), "{data}");
    let inside = scry.err("breakpoint.set('main+2')");
    assert!(
        inside.contains("inside the instruction at main+0x1"),
        "{inside}"
    );
    // Every instruction start objdump lists is accepted.
    let bias = {
        let pid = scry.target_pid();
        common::load_bias(pid, &bin)
    };
    for (addr, _) in common::objdump_function(&bin, "add") {
        scry.ok(&format!(
            "breakpoint.remove(breakpoint.set({}))",
            addr + bias
        ));
    }
    // Nothing was written: the program still counts right.
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
    assert_eq!(scry.ok("output()"), "total=3 calls=3");
}

#[test]
fn forcing_a_breakpoint_is_possible_but_not_in_a_read_only_session() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    let id = scry.ok("breakpoint.set('main+2', {force: true, name: 'odd'})");
    assert_eq!(id, "1");
    assert!(scry.ok("breakpoint.list()").contains("odd"));
    let mut ro = Scry::start(&["--read-only", "--", bin.to_str().unwrap(), "3"]);
    let refused = ro.err("breakpoint.set('counter', {force: true})");
    assert!(refused.contains("read-only"), "{refused}");
    assert!(ro
        .err("breakpoint.set('counter')")
        .contains("data, not code"));
}

// ---- runs that must come back --------------------------------------------------------------

#[test]
fn a_process_waiting_in_vfork_still_gives_a_timeout_stop() {
    // The child holds its parent inside vfork() for 4 s; a 1 s deadline must answer in time.
    let mut scry = Scry::spawn(&fixture("vfork_hold"), &["4000"]);
    let started = std::time::Instant::now();
    let stop = scry.ok("cont({timeout: 1})");
    assert!(stop.starts_with("timeout"), "{stop}");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(3500),
        "{:?}",
        started.elapsed()
    );
    // The thread answers questions (or says exactly why it cannot).
    let r = scry.eval("thread.list()");
    assert!(r.ok, "{r:?}");
    let end = scry.ok("cont({timeout: 20})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(scry.ok("output()").contains("child exit=7"));
}

// ---- clear answers for what scry cannot do -------------------------------------------------

#[test]
fn a_32_bit_program_is_refused_with_the_reason() {
    let out_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixtures");
    std::fs::create_dir_all(&out_dir).unwrap();
    let bin = out_dir.join("i386");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/i386.c");
    let built = Command::new("cc")
        .args(["-m32", "-nostdlib", "-static", "-o"])
        .arg(&bin)
        .arg(src)
        .status()
        .expect("cc runs");
    assert!(built.success(), "building the i386 fixture failed");
    let out = Command::new(common::SCRY)
        .args(["--", bin.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("32-bit program (i386); scry debugs x86-64 programs only"),
        "{err}"
    );
    let mut scry = Scry::start(&[]);
    let e = scry.err(&format!("spawn('{}')", bin.display()));
    assert!(e.contains("32-bit program"), "{e}");
}

#[test]
fn attaching_to_a_zombie_says_it_is_one() {
    let child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !common::process_is_dead(pid as i32) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut scry = Scry::start(&[]);
    let e = scry.err(&format!("attach({pid})"));
    assert!(e.contains("is a zombie"), "{e}");
    drop(child);
}

#[test]
fn a_process_stopped_by_sigstop_stays_stopped_and_says_why() {
    let mut target = common::ChildGuard(
        Command::new(fixture("ticker"))
            .arg("100000")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = target.0.id() as i32;
    std::thread::sleep(std::time::Duration::from_millis(200));
    Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut scry = Scry::start(&["-p", &pid.to_string()]);
    scry.ok("breakpoint.set('tick')");
    // Without scry the program would not run: under scry it does not either.
    let stop = scry.ok("cont({timeout: 1})");
    assert!(stop.starts_with("timeout"), "{stop}");
    assert!(
        stop.contains("stopped by SIGSTOP (job control) and runs only after SIGCONT"),
        "{stop}"
    );
    Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .unwrap();
    let stop = scry.ok("cont({timeout: 5})");
    assert!(stop.starts_with("breakpoint 1"), "{stop}");
    assert_eq!(scry.ok("detach()"), "detached");
    drop(scry);
    let _ = target.0.kill();
}

#[test]
fn debug_registers_taken_by_the_program_are_named() {
    let mut scry = Scry::spawn(&fixture("perf_bps"), &[]);
    scry.ok("breakpoint.set('ready'); cont()");
    if scry.ok("state.registers.rdi") != "4" {
        eprintln!("skipped: perf hardware breakpoints are not available here");
        return;
    }
    let e = scry.err("watchpoint.set('counter')");
    assert!(
        e.contains("no free debug register in thread") && e.contains("perf"),
        "{e}"
    );
    // Nothing was left half-armed: the program runs to its own end.
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("counter 50"));
}

#[test]
fn a_setuid_program_is_said_to_run_without_its_privilege() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc_geteuid() } != 0 {
        eprintln!("skipped: needs root to give the copy another owner");
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("suid");
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join(format!("loop_suid_{}", std::process::id()));
    std::fs::copy(fixture("loop"), &bin).unwrap();
    Command::new("chown")
        .args(["65534"])
        .arg(&bin)
        .status()
        .unwrap();
    Command::new("chmod")
        .args(["u+s"])
        .arg(&bin)
        .status()
        .unwrap();
    let mut scry = Scry::start(&[]);
    let stop = scry.ok(&format!("spawn('{}', '2')", bin.display()));
    assert!(
        stop.contains("[setuid 65534 ignored under ptrace: the program runs as uid 0"),
        "{stop}"
    );
    let _ = std::fs::remove_file(&bin);
}

// ---- the program's SIGTRAP ------------------------------------------------------------------

#[test]
fn an_ignored_or_blocked_sigtrap_is_kept_across_breakpoints_and_steps() {
    let bin = fixture("trap_disposition");
    for mode in ["ignore", "block"] {
        let expected = alone(&bin, &[mode]);
        let mut scry = Scry::spawn(&bin, &[mode]);
        // Interrupted while it sleeps (no trap), after it set its disposition.
        assert!(scry.ok("cont({timeout: 0.15})").starts_with("timeout"));
        // Traps of scry's own: a breakpoint hit, single steps, more hits via a logpoint.
        scry.ok("breakpoint.set('work'); cont(); step(5)");
        scry.ok("addEventListener('breakpoint', e => 'continue')");
        // The program's own SIGTRAP is reported, then delivered as it would be alone.
        let mut stop = scry.ok("cont()");
        while stop.starts_with("signal SIGTRAP") {
            stop = scry.ok("cont()");
        }
        assert!(stop.starts_with("exited with code 0"), "{mode}: {stop}");
        assert_eq!(
            scry.ok("output()").trim_end(),
            expected.trim_end(),
            "{mode}"
        );
    }
}

#[test]
fn a_sigtrap_disposition_set_in_the_middle_of_a_run_is_kept() {
    // The program sets its action after scry's first stop, in the run that traps: learnt
    // as it is set (scry follows libc's sigaction), on a continue and on single steps.
    let bin = fixture("trap_disposition");
    for mode in ["ignore", "block"] {
        let expected = alone(&bin, &[mode]);
        for stepped in [false, true] {
            let mut scry = Scry::spawn(&bin, &[mode]);
            if stepped {
                // Single steps over the rt_sigaction call itself.
                scry.ok("breakpoint.set('__libc_sigaction'); cont(); step(80)");
            }
            scry.ok("breakpoint.set('work'); addEventListener('breakpoint', e => 'continue')");
            let mut stop = scry.ok("cont()");
            while stop.starts_with("signal SIGTRAP") {
                stop = scry.ok("cont()");
            }
            assert!(
                stop.starts_with("exited with code 0"),
                "{mode} stepped={stepped}: {stop}"
            );
            assert_eq!(
                scry.ok("output()").trim_end(),
                expected.trim_end(),
                "{mode} stepped={stepped}"
            );
        }
    }
}

// ---- stacks --------------------------------------------------------------------------------

#[test]
fn a_coroutine_stack_merged_with_other_memory_has_its_real_top() {
    let mut scry = Scry::spawn(&fixture("coro_merged"), &[]);
    scry.ok("breakpoint.set('in_task'); cont()");
    // The program's own record of where its stack ends.
    let real_top = scry.num("state.memory('STACK_TOP').u64()");
    let printed = scry.ok("output()");
    assert!(
        printed.contains(&format!("-{real_top:#x} mapping end")),
        "{printed}"
    );
    assert_eq!(scry.num("state.stack.top"), real_top);
    // Found from the frames, not from the mapping: said so.
    assert_eq!(scry.ok("state.stack.top_exact"), "false");
    assert!(scry.num("state.stack.usable_base") < real_top);
}

#[test]
fn thread_and_main_stacks_have_exact_tops() {
    let mut scry = Scry::spawn(&fixture("threads"), &[]);
    scry.ok("breakpoint.set('all_started'); cont()");
    assert_eq!(scry.ok("state.stack.kind"), "main");
    assert_eq!(scry.ok("state.stack.top_exact"), "true");
    scry.ok("thread.select(thread.list()[1].tid)");
    assert_eq!(scry.ok("state.stack.kind"), "mapped");
    assert_eq!(scry.ok("state.stack.top_exact"), "true");
    // A pthread's descriptor (fs_base) sits just under the top of its stack mapping.
    let top = scry.num("state.stack.top");
    let fs = scry.num("state.registers.fs_base");
    assert!(fs < top && top - fs < 4096, "top {top:#x} fs_base {fs:#x}");
}

#[test]
fn a_program_that_stops_its_tracer_does_not_freeze_scry() {
    let mut scry = Scry::spawn(&fixture("stop_tracer"), &[]);
    let started = std::time::Instant::now();
    let end = scry.ok("cont({timeout: 10})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let out = scry.ok("output()");
    assert!(
        out.contains(&format!("stopped tracer {} and went on", scry.pid())),
        "{out}"
    );
}

// ---- what a launcher hands down ------------------------------------------------------

/// `program` started by a launcher that, with `ignoring`, ignores SIGHUP, SIGINT, SIGPIPE and
/// SIGTERM and blocks SIGUSR2; without, leaves them at their defaults and blocks nothing (the
/// test runner itself ignores SIGPIPE, as every Rust program does).
fn launched(program: &std::path::Path, args: &[&str], ignoring: bool) -> Command {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(program);
    command.args(args);
    // SAFETY: between fork and exec the closure only calls async-signal-safe functions.
    unsafe {
        command.pre_exec(move || {
            let handler = if ignoring {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            };
            for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGPIPE, libc::SIGTERM] {
                libc::signal(sig, handler);
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            if ignoring {
                libc::sigaddset(&mut set, libc::SIGUSR2);
            }
            libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
    command
}

#[test]
fn a_spawned_program_inherits_the_dispositions_and_mask_scry_was_started_with() {
    let bin = fixture("inherited_signals");
    let native = launched(&bin, &[], true).output().unwrap();
    let expected = String::from_utf8(native.stdout).unwrap();
    assert_eq!(
        expected,
        "ignored: HUP INT PIPE TERM blocked: 12\nwrite=-1 errno=Broken pipe\n"
    );
    assert_eq!(native.status.code(), Some(7));
    let scry_path = std::path::Path::new(common::SCRY);
    let program = ["--", bin.to_str().unwrap()];
    let mut scry = Scry::start_command(launched(scry_path, &program, true));
    // The ignored SIGPIPE changes nothing in the program, so it is no stop either.
    assert!(scry.ok("cont()").starts_with("exited with code 7"));
    assert_eq!(scry.ok("output()"), expected.trim_end());
    // Started with the defaults, the program gets the defaults: scry's own SIG_IGN of
    // SIGPIPE and its handlers are not handed down.
    let native = launched(&bin, &[], false).output().unwrap();
    assert_eq!(
        String::from_utf8(native.stdout).unwrap(),
        "ignored: blocked:\n"
    );
    let mut plain = Scry::start_command(launched(scry_path, &program, false));
    assert!(plain.ok("cont()").starts_with("signal SIGPIPE"));
    assert!(plain.ok("cont()").starts_with("killed by SIGPIPE"));
    assert_eq!(plain.ok("output()"), "ignored: blocked:");
}

#[test]
fn traps_the_program_makes_itself_reach_its_handler() {
    // Its own trap flag (TRAP_TRACE while scry did not step it) and a perf breakpoint with
    // sigtrap=1 (TRAP_PERF): the program's, each delivered as often as alone.
    let bin = fixture("own_sigtraps");
    let expected = alone(&bin, &[]);
    if expected.contains("perf=-1") {
        eprintln!("perf hardware breakpoints are not available here: the trap flag only");
    } else {
        assert_eq!(expected, "tf=1 code=2 perf=5\n");
    }
    let stops = under_scry(
        &bin,
        &[],
        "",
        "let s, n = 0; do { s = cont(); n++ } while (s.reason === 'signal' && s.signal === 'SIGTRAP'); s",
    );
    assert_eq!(stops, expected.trim_end(), "continuing each SIGTRAP stop");
    let passed = under_scry(&bin, &[], "handle_signal('SIGTRAP', 'pass')", "cont()");
    assert_eq!(passed, expected.trim_end(), "SIGTRAP passed");
    // With scry's own breakpoint and steps in the same run, the counts stay the same.
    let mixed = under_scry(
        &bin,
        &[],
        "handle_signal('SIGTRAP', 'pass'); breakpoint.set('on_trap'); cont(); step(); step()",
        "breakpoint.remove(1); cont()",
    );
    assert_eq!(mixed, expected.trim_end(), "with a breakpoint and steps");
}

#[test]
fn the_mask_inside_the_programs_trap_handler_is_not_put_back_after_it() {
    // The handler ran with SIGTRAP blocked and unblocked it on return; the thread made next
    // brought a trap of scry's, after which scry blocked SIGTRAP again in the main thread
    // (the mask it saw entering the handler). Alone, stopped at, and passed alike.
    let bin = fixture("trap_handler_mask");
    let expected = alone(&bin, &[]);
    assert_eq!(expected, "truth hits=1 before=0 after=0\n");
    let stopped = under_scry(&bin, &[], "cont()", "cont()");
    assert_eq!(
        stopped,
        expected.trim_end(),
        "the program's SIGTRAP stopped at"
    );
    let passed = under_scry(&bin, &[], "handle_signal('SIGTRAP', 'pass')", "cont()");
    assert_eq!(passed, expected.trim_end(), "SIGTRAP passed");
}

#[test]
fn the_programs_own_icebp_before_a_hardware_breakpoint_stays_its_own() {
    // icebp traps with an empty debug status, which is also what a hardware breakpoint's
    // hit looks like when the machine loses its status (seen under KVM, where scry takes it
    // for the hit it is). A breakpoint on the instruction after the icebp: each SIGTRAP is
    // the program's (a stop, then its handler), each arrival at the next instruction a hit.
    let bin = fixture("own_icebp");
    let expected = alone(&bin, &["3"]);
    assert_eq!(expected, "traps=3 code=1\n");
    let mut scry = Scry::spawn(&bin, &["3"]);
    scry.ok(
        "const a = state.disasm(8, 'trap_once').find(i => i.mnemonic === 'int1');\
         breakpoint.set(a.addr + 1); ctx.n = 0;\
         addEventListener('breakpoint', e => { ctx.n++; return 'continue' })",
    );
    assert_eq!(scry.ok("breakpoint.list()[0].site"), "hw");
    let counted = scry.ok(
        "let s, traps = 0; do { s = cont(); traps += s.reason === 'signal' } while (s.reason === 'signal');\
         print(traps, ctx.n, s.reason)",
    );
    assert_eq!(counted, "3 3 exited");
    assert_eq!(scry.ok("output()"), expected.trim_end());
}

#[test]
fn a_program_that_ptrace_attaches_scry_cannot_hold_it() {
    let bin = fixture("attach_tracer");
    // With CAP_SYS_PTRACE (root) the attach succeeds and holds scry in a stop no signal
    // ends: the guardian ends the program instead, and the stop says so.
    if unsafe { libc_geteuid() } == 0 {
        let mut scry = Scry::spawn(&bin, &[]);
        let started = std::time::Instant::now();
        let stop = scry.ok("cont({timeout: 20})");
        assert!(
            stop.starts_with("killed by SIGKILL [process ")
                && stop.contains("ptrace-attached scry and held it stopped"),
            "{stop}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(scry.ok("1 + 1"), "2", "the session goes on");
    }
    // Without it the attach is refused (scry is not dumpable), and the program goes on as it
    // does when its parent cannot be traced.
    if unsafe { libc_geteuid() } != 0 || !std::path::Path::new("/usr/bin/setpriv").exists() {
        return;
    }
    let mut command = Command::new("/usr/bin/setpriv");
    command.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        common::SCRY,
        "--",
    ]);
    command.arg(&bin);
    let mut scry = Scry::start_command(command);
    assert!(scry
        .ok("cont({timeout: 20})")
        .starts_with("exited with code 0"));
    assert_eq!(
        scry.ok("output()"),
        "attach=-1 errno=Operation not permitted\ndone"
    );
}

#[test]
fn a_fault_signal_sent_by_kill_names_its_sender_not_an_address() {
    let mut scry = Scry::spawn(&fixture("kill_self"), &[]);
    let pid = scry.target_pid();
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("signal SIGSEGV at "), "{stop}");
    assert!(!stop.contains("fault_addr"), "{stop}");
    // Its own kill(): raised by itself, not an outsider's.
    assert!(
        stop.contains(&format!("[raised by the program itself (process {pid})]")),
        "{stop}"
    );
    assert_eq!(scry.ok("String(cont())"), "killed by SIGSEGV");
}

#[test]
fn a_register_write_reads_back_what_the_kernel_kept() {
    let mut scry = Scry::spawn(&fixture("loop"), &["1"]);
    let kept = {
        scry.ok("state.registers.eflags = 0xffffffff");
        scry.num("state.registers.eflags")
    };
    assert_ne!(
        kept, 0xffff_ffff,
        "reserved and privileged bits never stick"
    );
    assert_eq!(kept & 0x2, 0x2, "bit 1 is always set");
    assert_eq!(kept & (3 << 12), 0, "IOPL cannot be raised");
    // The same value from a fresh read of the kernel's registers.
    assert_eq!(scry.num("state.registers.eflags"), kept);
    assert_eq!(
        {
            scry.ok("state.registers.eflags = 0x246");
            scry.num("state.registers.eflags")
        },
        0x246
    );
}

#[test]
fn an_int3_the_program_writes_at_a_breakpoint_is_its_own() {
    // The breakpoint on f is a debug register: the program reads f's own first byte, and
    // the int3 it writes there itself reaches its handler (after the breakpoint's stop).
    let bin = fixture_with("own_int3", &["-g", "-O1"]);
    let expected = alone(&bin, &[]);
    assert!(expected.starts_with("b=500 hits=1 first="), "{expected}");
    let mut scry = Scry::spawn(&bin, &[]);
    scry.ok("breakpoint.set('f')");
    assert_eq!(scry.ok("breakpoint.list()[0].site"), "hw");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("breakpoint 1 at ") && stop.contains(" f "),
        "{stop}"
    );
    let own = scry.ok("cont()");
    assert!(
        own.starts_with("signal SIGTRAP at "),
        "the program's own int3: {own}"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()"), expected.trim_end());
    // An int3 breakpoint (asked for, or when no debug register is free) is what cannot be
    // hidden: the program reads it and takes it for its own.
    let forced = under_scry(
        &bin,
        &[],
        "breakpoint.set('f', {hardware: false})",
        "let s; do { s = cont() } while (s.reason === 'breakpoint' || s.reason === 'signal'); s",
    );
    assert!(forced.contains("first=cc"), "{forced}");
}

#[test]
fn breakpoints_take_debug_registers_then_int3_and_give_them_to_watchpoints() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    // Five instructions of main: four debug registers, then an int3.
    scry.ok("ctx.at = state.disasm(5, symbol('main')).map(i => i.addr); for (const a of ctx.at) breakpoint.set(a)");
    assert_eq!(
        scry.ok("breakpoint.list().map(b => b.site).join(' ')"),
        "hw hw hw hw int3"
    );
    assert!(scry
        .err("breakpoint.set('add', {hardware: true})")
        .contains("no free debug register for a breakpoint"));
    // Reads show the program's code under every kind of site.
    let bias = common::load_bias(scry.target_pid(), &bin);
    let main = scry.num("symbol('main')");
    let on_disk = common::file_bytes(&bin, main - bias, 16);
    let hex: String = on_disk.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(scry.ok("state.memory(symbol('main')).bytes(16)"), hex);
    // A watchpoint takes the newest breakpoint's register; that one goes on as an int3.
    scry.ok("watchpoint.set('counter', 'w')");
    assert_eq!(
        scry.ok("breakpoint.list().map(b => b.site).join(' ')"),
        "hw hw hw int3 int3"
    );
    scry.ok("for (let i = 1; i <= 5; i++) breakpoint.remove(i); breakpoint.set('add')");
    assert_eq!(scry.ok("breakpoint.list()[0].site"), "hw");
    assert!(scry.ok("cont()").starts_with("breakpoint 6 at "));
    assert!(scry
        .ok("cont()")
        .starts_with("watchpoint 1 (counter) write "));
    assert!(scry
        .err("breakpoint.set('main', {hardware: 1})")
        .contains("hardware must be true (a debug register) or false (an int3)"));
    scry.ok("breakpoint.remove(6); watchpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
    assert_eq!(scry.ok("output()"), "total=3 calls=3");
}

#[test]
fn stdout_and_stderr_come_back_in_the_order_they_were_written() {
    let mut scry = Scry::spawn(&fixture("alternating_output"), &[]);
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let out = scry.ok("output()");
    assert_eq!(out, "oe".repeat(2000));
}
