//! Time travel: a recording of the selected thread asked without moving (`history.writes`),
//! moved along (`reverse_cont`, `reverse_step`, `goto`, replay), and its honest ends (a
//! barrier, the limit, the start). The fixture prints what it computed, so a replay that
//! changed the program would show in its output.

mod common;

use common::{fixture, Scry};

/// At the first `checkpoint()` (after the loop of 2000 deposits and one stray write),
/// recorded from the start of `main`.
fn recorded_loop() -> Scry {
    let mut scry = Scry::spawn(&fixture("clobber"), &[]);
    scry.ok("breakpoint.set('main')");
    scry.ok("cont()");
    scry.ok("record.start()");
    scry.ok("breakpoint.set('checkpoint')");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 2 at "), "{stop}");
    scry
}

#[test]
fn history_names_the_write_that_made_a_value_negative() {
    let mut scry = recorded_loop();
    // 2000 deposits and one stray write changed `balance`.
    assert_eq!(
        scry.ok("ctx.w = history.writes('balance'); ctx.w.length"),
        "2001"
    );
    let stray = scry.ok("ctx.s = ctx.w.find(x => x.at.startsWith('stray')); String(ctx.s)");
    assert!(
        stray.contains("stray+") && stray.contains("clobber.c:19"),
        "{stray}"
    );
    assert!(stray.ends_with("1501 -> -7"), "{stray}");
    // The step that entered stray() comes a few instructions before its write.
    let entered = scry.num("ctx.s.step - history.find(s => s.pc === symbol('stray')).step");
    assert!((1..10).contains(&entered), "{entered}");
    // The values are the whole variable's, typed as `state.var()` gives them, and numbers
    // to compute with.
    assert_eq!(scry.ok("ctx.s.old + 1"), "1502");
    assert_eq!(scry.ok("ctx.s.new | 0"), "-7");
    // The last write is the one that left the value the program has now.
    let last = scry.ok("String(ctx.w[ctx.w.length - 1])");
    assert!(
        last.contains("deposit+") && last.ends_with("491 -> 492"),
        "{last}"
    );
    assert_eq!(scry.ok("state.memory('balance').i32()"), "492");
    // Back out of checkpoint() to the call that entered it, in main.
    let call = scry.ok("reverse_finish()");
    assert!(
        call.contains("main+") && call.contains("[past: step "),
        "{call}"
    );
    assert!(scry.ok("state.instruction.text").ends_with("<checkpoint>"));
    scry.ok("goto(record.status().end)");
    let status = scry.ok("const st = record.status(); [st.recording, st.steps === st.end, st.at === st.end, st.bytes / st.steps < 64].join(' ')");
    assert_eq!(status, "true true true true");
}

#[test]
fn going_back_to_a_watched_write_shows_the_program_as_it_was() {
    let mut scry = recorded_loop();
    scry.ok("watchpoint.set('balance', 'w')");
    scry.ok(
        "ctx.seen = []; addEventListener('watchpoint', e => { ctx.seen.push(e.direction + ' ' + e.replay); })",
    );
    let back = scry.ok("reverse_cont()");
    assert!(
        back.starts_with("watchpoint 1 (balance) write ")
            && back.contains(" 491 -> 492 ")
            && back.contains("[past: step "),
        "{back}"
    );
    // Before the write: the value and the caller's loop counter as they were then.
    assert_eq!(scry.ok("state.memory('balance').i32()"), "491");
    assert_eq!(scry.ok("state.var('i', 1)"), "1999");
    assert_eq!(scry.ok("ctx.seen.join()"), "reverse true");
    // One step back and one forward come back to the same place and state.
    scry.ok("ctx.pc = state.pc; ctx.rsp = state.sp");
    scry.ok("reverse_step(1)");
    scry.ok("step(1)");
    assert_eq!(
        scry.ok("state.pc === ctx.pc && state.sp === ctx.rsp"),
        "true"
    );
    // Replaying the write forward stops after it, as a live watchpoint does.
    let fwd = scry.ok("cont()");
    assert!(
        fwd.starts_with("watchpoint 1 (balance) write ") && fwd.contains(" 491 -> 492 "),
        "{fwd}"
    );
    assert_eq!(scry.ok("state.memory('balance').i32()"), "492");
    // Writing into the past is refused, and the process is left as it was.
    let err = scry.err("state.registers.rax = 1");
    assert!(err.contains("cannot write a register in the past"), "{err}");
    let err = scry.err("state.memory('balance').write_u32(5)");
    assert!(err.contains("in the past"), "{err}");
    // The stray write, far back: reverse_cont from a breakpoint there stops at its hit.
    scry.ok("watchpoint.remove(1); breakpoint.set('stray')");
    let bp = scry.ok("reverse_cont()");
    assert!(
        bp.starts_with("breakpoint 3 at ") && bp.contains("stray+"),
        "{bp}"
    );
    assert_eq!(scry.ok("state.memory('balance').i32()"), "1501");
    // `prev` is the stop before, as after a live step.
    scry.ok("ctx.pc = state.pc; reverse_step()");
    assert_eq!(scry.ok("prev.registers.rip === ctx.pc"), "true");
    // A core written in the past holds that moment.
    let core = common::temp_path("past.core");
    scry.ok(&format!("gcore('{}')", core.display()));
    let program = fixture("clobber");
    let mut reader = Scry::start(&["--core", core.to_str().unwrap(), program.to_str().unwrap()]);
    assert_eq!(reader.ok("state.var('balance')"), "1501");
    reader.finish();
    let _ = std::fs::remove_file(&core);
}

#[test]
fn a_replay_to_the_end_goes_live_and_the_program_ends_as_alone() {
    let mut scry = recorded_loop();
    let start = scry.ok("goto(0)");
    assert!(
        start.contains("main+") && start.contains("[past: step 0 of "),
        "{start}"
    );
    assert_eq!(scry.ok("state.memory('balance').i32()"), "0");
    // Forward from the start: the replay meets the breakpoint where the present is.
    let present = scry.ok("cont()");
    assert!(
        present.starts_with("breakpoint 2 at ") && !present.contains("past"),
        "{present}"
    );
    assert_eq!(scry.ok("state.memory('balance').i32()"), "492");
    // Then live, recording on: the pipe's read is recorded with the bytes the kernel wrote.
    scry.ok("cont()");
    let read = scry.ok("String(history.writes('inbox').find(w => w.insn === 'syscall'))");
    assert!(
        read.contains("read") && read.ends_with("\"\" -> \"kernel-wrote\""),
        "{read}"
    );
    // By address, the bytes (hex: wider than a number).
    assert_eq!(
        scry.ok("history.writes(symbol('inbox'), 16).find(w => w.insn === 'syscall').new"),
        "6b65726e656c2d77726f746500000000"
    );
    // times() is a call whose writes are not known: going back stops at it, naming it.
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 2"), "{stop}");
    let end = scry.ok("reverse_cont()");
    assert!(
        end.starts_with("history_end ") && end.contains("times"),
        "{end}"
    );
    let err = scry.err("goto(0)");
    assert!(
        err.contains("cannot go back past step") && err.contains("times"),
        "{err}"
    );
    scry.ok("breakpoint.remove(2); breakpoint.remove(1)");
    let exit = scry.ok("cont()");
    assert!(exit.starts_with("exited with code 0"), "{exit}");
    assert_eq!(
        scry.ok("output()").trim(),
        "balance=492 n=12 inbox=kernel-wrote"
    );
    // The log outlives the process, but not for moving.
    assert_eq!(scry.ok("record.status().steps > 2000"), "true");
    let err = scry.err("reverse_step()");
    assert!(
        err.contains("cannot be moved along") && err.contains("ended"),
        "{err}"
    );
}

#[test]
fn the_limit_ends_the_run_and_says_so() {
    let mut scry = Scry::spawn(&fixture("clobber"), &[]);
    scry.ok("breakpoint.set('main'); cont()");
    scry.ok("record.start({limit: 1000}); breakpoint.set('checkpoint')");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("step at ") && stop.contains("limit of 1000 instructions"),
        "{stop}"
    );
    assert_eq!(
        scry.ok("const s = record.status(); [s.steps, s.recording].join()"),
        "1000,false"
    );
    // Back to where recording began (a breakpoint there is a hit), and no further.
    let bp = scry.ok("reverse_cont()");
    assert!(
        bp.starts_with("breakpoint 1 at ") && bp.contains("[past: step 0 of 1000]"),
        "{bp}"
    );
    let start = scry.ok("reverse_cont()");
    assert!(
        start.starts_with("history_end ") && start.contains("the start of the recording"),
        "{start}"
    );
    assert!(start.contains("main+"), "{start}");
    // Forward again to the present, then live and unrecorded: the log no longer leads here.
    scry.ok("goto(1000)");
    scry.ok("cont()");
    let err = scry.err("reverse_step()");
    assert!(err.contains("ran on unrecorded"), "{err}");
    assert!(scry
        .ok("cont(); cont(); cont()")
        .starts_with("exited with code 0"));
}

#[test]
fn a_signal_handler_in_the_recording_is_taken_back_whole() {
    let mut scry = Scry::spawn(&fixture("record_signal"), &[]);
    scry.ok("handle_signal('SIGUSR1', 'pass'); breakpoint.set('checkpoint')");
    scry.ok("cont()");
    // The stack below sp (where the kernel puts the handler's frame), the registers and
    // the vector state, as they are when recording begins.
    scry.ok(
        "ctx.sp = state.sp; ctx.below = state.memory(ctx.sp - 16384).bytes(16384 + 512);
         ctx.regs = JSON.stringify(state.registers); ctx.fpu = JSON.stringify(state.fpu)",
    );
    scry.ok("record.start()");
    scry.ok("cont()");
    let write = scry.ok("String(history.writes('flag')[0])");
    assert!(
        write.contains("on_usr1+") && write.ends_with("0 -> 100"),
        "{write}"
    );
    let start = scry.ok("goto(0)");
    assert!(start.contains("[past: step 0 of "), "{start}");
    assert_eq!(
        scry.ok("[state.memory(ctx.sp - 16384).bytes(16384 + 512) === ctx.below, JSON.stringify(state.registers) === ctx.regs, JSON.stringify(state.fpu) === ctx.fpu, +state.var('flag')].join()"),
        "true,true,true,0"
    );
    // Replayed to the present and run on, the program computes what it does alone.
    scry.ok("goto(record.status().end); breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()").trim(), "flag=100 sum=-128");
}

#[test]
fn every_thread_is_recorded_in_the_order_it_ran() {
    let mut scry = Scry::spawn(&fixture("record_threads"), &[]);
    scry.ok("breakpoint.set('checkpoint')");
    scry.ok("cont()");
    scry.ok("record.start()");
    // The two writers take turns with main (which waits for them in a futex, and they for
    // each other's lock); their sleeps pass while the other one runs.
    let stop = scry.ok("cont({timeout: 60})");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    assert_eq!(scry.ok("record.status().threads.length"), "3");
    // Both threads' 50 writes each, in the order they ran, each thread's own in its order.
    scry.ok("ctx.w = history.writes('shared')");
    assert_eq!(scry.ok("ctx.w.length"), "100");
    assert_eq!(
        scry.ok("ctx.w.every((x, i) => i === 0 || x.step > ctx.w[i - 1].step)"),
        "true"
    );
    assert_eq!(
        scry.ok(
            "const by = {}; for (const x of ctx.w) (by[x.tid] = by[x.tid] || []).push(+x.new);
             Object.values(by).map(v => v.every((n, i) => n % 1000 === i) && v.length).join()"
        ),
        "50,50"
    );
    // The value now is the last write's.
    assert_eq!(scry.ok("+state.var('shared') === +ctx.w[99].new"), "true");
    // Going back to the last write, made by a thread that has ended since: its writes are
    // taken back (a note says it cannot be shown).
    scry.ok("watchpoint.set('shared', 'w')");
    let last = scry.ok("ctx.b = reverse_cont(); String(ctx.b)");
    assert!(
        last.starts_with("watchpoint 1 (shared) write ") && last.contains("by writer+"),
        "{last}"
    );
    assert!(
        last.contains("has ended: its writes are taken back"),
        "{last}"
    );
    assert_eq!(
        scry.ok("+ctx.b.new === +ctx.w[99].new && +state.var('shared') === +ctx.w[98].new"),
        "true"
    );
    // And back past both threads' lives (their creation, their stacks freed at their end)
    // to where recording began.
    scry.ok("watchpoint.remove(1)");
    let start = scry.ok("reverse_cont()");
    assert!(
        start.starts_with("breakpoint 1 at ") && start.contains("[past: step 0 of "),
        "{start}"
    );
    assert_eq!(scry.ok("state.var('shared')"), "0");
    scry.ok("goto(record.status().end); breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let out = scry.ok("output()");
    assert!(
        out.trim() == "shared=1049" || out.trim() == "shared=2049",
        "{out}"
    );
}

#[test]
fn buffers_named_through_memory_are_recorded() {
    let mut scry = Scry::spawn(&fixture("record_io"), &[]);
    scry.ok("breakpoint.set('checkpoint')");
    scry.ok("cont()");
    scry.ok("record.start()");
    scry.ok("cont()");
    // readv's two iovecs, recvmsg's two parts: each buffer's bytes as the kernel wrote them.
    let rows = scry.ok(
        "['head', 'tail', 'msg_a', 'msg_b'].map(v => { const w = history.writes(v); return w.length + ' ' + w[0].at.split(' ')[0] + ' ' + w[0].new; }).join('\\n')",
    );
    let rows: Vec<&str> = rows.lines().collect();
    assert!(
        rows[0].starts_with("1 readv+") && rows[0].ends_with(" head"),
        "{rows:?}"
    );
    assert!(
        rows[1].starts_with("1 readv+") && rows[1].ends_with(" tail-42"),
        "{rows:?}"
    );
    assert!(
        rows[2].starts_with("1 recvmsg+") && rows[2].ends_with(" first!"),
        "{rows:?}"
    );
    assert!(
        rows[3].starts_with("1 recvmsg+") && rows[3].ends_with(" second"),
        "{rows:?}"
    );
    // Going back before them takes the bytes back out.
    let back = scry.ok("reverse_cont()");
    assert!(back.contains("[past: step 0 of "), "{back}");
    assert_eq!(
        scry.ok("state.memory('tail').bytes(8) + ' ' + state.memory('msg_b').bytes(6)"),
        "0000000000000000 000000000000"
    );
}

#[test]
fn a_recording_is_never_written_into_another_process() {
    let program = fixture("clobber");
    let mut scry = Scry::spawn(&program, &[]);
    scry.ok("breakpoint.set('main'); cont()");
    scry.ok("record.start(); step(100); reverse_step(50)");
    // Detached in the past: the program goes on from the present, as it would have.
    scry.ok("detach()");
    scry.ok(&format!("spawn('{}')", program.display()));
    scry.ok("cont()");
    let err = scry.err("reverse_step()");
    assert!(err.contains("no longer the one debugged"), "{err}");
    let err = scry.err("goto(0)");
    assert!(err.contains("no longer the one debugged"), "{err}");
    // The new process runs as alone.
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
}

#[test]
fn going_back_past_a_munmap_gives_the_memory_back() {
    let mut scry = Scry::spawn(&fixture("record_unmap"), &[]);
    scry.ok("breakpoint.set('checkpoint')");
    scry.ok("cont()");
    scry.ok("record.start()");
    scry.ok("cont()");
    // free() gave the big block back with munmap: its memory is gone in the present.
    let gone = scry.err("state.memory(+state.var('big') + 100).u8()");
    assert!(gone.contains("not mapped"), "{gone}");
    // Back before the last sum: mapped again, with what it held (only pages with data are
    // kept in the recording).
    scry.ok("watchpoint.set('total', 'w')");
    let back = scry.ok("reverse_cont()");
    assert!(
        back.starts_with("watchpoint 1 (total) write ") && back.contains("2016 -> 2080"),
        "{back}"
    );
    assert_eq!(
        scry.ok("[1, 32, 64].map(i => state.memory(+state.var('big') + (i - 1) * 4096 + 100).u8()).join()"),
        "1,32,64"
    );
    assert_eq!(scry.ok("state.memory(+state.var('big') + 5000).u8()"), "9");
    // memset's `rep stosb` of a megabyte ran whole: a step, not a million.
    assert_eq!(scry.ok("record.status().steps < 20000"), "true");
    let fill = scry.ok("String(history.writes(+state.var('big') + 7, 1)[0])");
    assert!(
        fill.contains("rep stos") && fill.ends_with("0 -> 9"),
        "{fill}"
    );
    // Forward to the present: unmapped again; and on, the program ends as alone.
    scry.ok("watchpoint.remove(1)");
    scry.ok("cont()");
    assert!(scry
        .err("state.memory(+state.var('big') + 100).u8()")
        .contains("not mapped"));
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()").trim(), "total=2080");
}

#[test]
fn a_sleep_ends_while_another_thread_spins_under_recording() {
    let mut scry = Scry::spawn(&fixture("record_spin"), &[]);
    scry.ok("breakpoint.set('checkpoint')");
    scry.ok("cont()");
    scry.ok("record.start()");
    // The worker's sleep is given up at each of its turns and resumed by the kernel with
    // the time it has left: it ends, sets the flag, and main leaves its loop.
    let stop = scry.ok("cont({timeout: 30})");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    let write = scry.ok("String(history.writes('flag')[0])");
    assert!(
        write.contains("worker+") && write.ends_with("0 -> 1"),
        "{write}"
    );
    scry.ok("goto(0)");
    assert_eq!(scry.ok("state.var('flag')"), "0");
    scry.ok("goto(record.status().end); breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()").trim(), "flag=1");
}

#[test]
fn the_present_is_made_only_where_the_kernel_can_follow() {
    let mut scry = Scry::spawn(&fixture("clobber"), &[]);
    scry.ok("breakpoint.set('fill')");
    scry.ok("cont()");
    scry.ok("record.start(); breakpoint.set('checkpoint')");
    scry.ok("cont()");
    // Before the pipe was made and read: the kernel has done those, so the present cannot
    // be made there.
    scry.ok("goto(3)");
    let err = scry.err("record.stop()");
    assert!(
        err.contains("cannot make the present at step 3") && err.contains("system call"),
        "{err}"
    );
    // Back at the present, a write by scry ends the recording for moving, and says so.
    scry.ok("goto(record.status().end)");
    let note = scry.ok("state.memory('counter').write_u32(41); String(step())");
    assert!(note.contains("can no longer be moved along"), "{note}");
    let err = scry.err("reverse_step()");
    assert!(err.contains("scry wrote into the program"), "{err}");
    assert_eq!(scry.ok("record.status().recording"), "false");
}

/// history.writes takes what watchpoint.set takes: a local by name, a path, a typed value
/// (its storage, not its value read as an address). A local and a path were "unknown
/// symbol", and a typed value's value was taken for an address ("cannot read 1 byte at 0x1").
#[test]
fn history_writes_takes_locals_paths_and_typed_values() {
    let exe = common::fixture("history_paths");
    let line = common::line_of(include_str!("../fixtures/history_paths.c"), "printf(");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('main'); cont()");
    scry.ok(&format!(
        "record.start(); breakpoint.set('history_paths.c:{line}'); cont()"
    ));
    let values = |scry: &mut Scry, what: &str| {
        scry.ok(&format!(
            "history.writes({what}).map(w => `${{w.old}}>${{w.new}}`).join(' ')"
        ))
    };
    let need = "0>16 16>11 11>6 6>1";
    assert_eq!(values(&mut scry, "'need'"), need);
    assert_eq!(values(&mut scry, "state.var('need')"), need);
    let updated = "0>1 1>2 2>3";
    assert_eq!(values(&mut scry, "'g_stats.updated'"), updated);
    assert_eq!(values(&mut scry, "state.value('g_stats.updated')"), updated);
}
