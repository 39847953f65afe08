//! Tracepoints: probes inside the program that collect registers and memory at each hit
//! while it runs on, their records handed to `trace` listeners. The fixture prints what it
//! computed, so a probe that changed what the program does shows in its output.

mod common;

use common::{fixture, fixture_from, proc_status_field, text_is_the_file_s, Scry};

#[test]
fn a_probe_delivers_every_record_of_200000_calls_without_a_stop() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["calls", "200000"]);
    // 200,000 listener calls: JS time, which the script budget counts (a debug build on a
    // loaded machine needs more than the default 5 s).
    scry.ok("config.script_timeout = 60");
    // Set at the entry, where the arguments are in the ABI's registers.
    scry.ok("ctx.id = tracepoint.set('work', {collect: ['rdi', {mem: 'rsi', str: 32}]})");
    assert_eq!(scry.ok("tracepoint.list()[0].mode"), "jump");
    scry.ok("ctx.n = 0; ctx.sum = 0; ctx.names = 0; ctx.last = '';
         addEventListener('trace', e => {
           ctx.n++; ctx.sum += e.registers.rdi;
           ctx.last = e.memory(e.chunks[0].addr).str();
           if (ctx.last === 'item-' + (e.registers.rdi % 1000)) ctx.names++;
         })");
    // One continue to the end: no stop on the way.
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    assert_eq!(
        scry.ok("[ctx.n, ctx.names, ctx.last].join(' ')"),
        "200000 200000 item-999"
    );
    // The sum of 0..199999, exact.
    assert_eq!(scry.ok("print(String(ctx.sum))"), "19999900000");
    let row = scry.ok("const r = tracepoint.list()[0]; [r.hits, r.delivered, r.lost].join(' ')");
    assert_eq!(row, "200000 200000 0");
    assert_eq!(scry.ok("output()"), "total 19999900000 last item-999");
}

/// `{if}` filters records before the listeners; times are CLOCK_MONOTONIC nanoseconds, in
/// order within a thread.
#[test]
fn if_filters_records_and_their_times_go_forward() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["calls", "1000"]);
    scry.ok("tracepoint.set('work', {collect: ['rdi'], if: e => e.registers.rdi % 2 === 0})");
    scry.ok(
        "ctx.x = []; ctx.t = []; addEventListener('trace', e => { ctx.x.push(e.registers.rdi); ctx.t.push(e.time); })",
    );
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    assert_eq!(
        scry.ok("[ctx.x.length, ctx.x.every(v => v % 2 === 0), ctx.x[499]].join(' ')"),
        "500 true 998"
    );
    assert_eq!(
        scry.ok("ctx.t.every((t, i) => i === 0 || t >= ctx.t[i - 1])"),
        "true"
    );
    // The whole run took well under 10 s, and the first record is after boot.
    assert_eq!(
        scry.ok("const d = ctx.t[499] - ctx.t[0]; [d > 0, d < 10e9, ctx.t[0] > 0].join(' ')"),
        "true true true"
    );
    // Every record reached the script; the filter is the script's.
    let row = scry.ok("const r = tracepoint.list()[0]; [r.hits, r.delivered, r.lost].join(' ')");
    assert_eq!(row, "1000 1000 0");
}

#[test]
fn four_threads_lose_nothing_waiting_and_count_what_they_drop() {
    for (full, exact) in [("wait", true), ("drop", false)] {
        let mut scry = Scry::spawn(&fixture("tracepoints"), &["threads"]);
        scry.ok("config.script_timeout = 60");
        scry.ok(&format!(
            "tracepoint.set('hit', {{collect: ['rdi', 'rsi'], full: '{full}'}})"
        ));
        scry.ok(
            "ctx.n = 0; ctx.tids = new Set(); ctx.sum = 0;
             addEventListener('trace', e => { ctx.n++; ctx.tids.add(e.tid); ctx.sum += e.registers.rsi; })",
        );
        let stop = scry.ok("cont()");
        assert!(stop.starts_with("exited with code 0"), "{full}: {stop}");
        let counts = scry.ok(
            "const r = tracepoint.list()[0]; [r.hits, r.delivered + r.lost, r.delivered === ctx.n].join(' ')",
        );
        assert_eq!(counts, "200000 200000 true", "{full}");
        if exact {
            assert_eq!(scry.ok("tracepoint.list()[0].lost"), "0");
            assert_eq!(scry.ok("ctx.tids.size"), "4");
            // 4 x (0 + 1 + ... + 49999)
            assert_eq!(scry.ok("print(String(ctx.sum))"), "4999900000");
        }
        assert_eq!(
            scry.ok("output()"),
            "1249975000 1249975000 1249975000 1249975000",
            "{full}"
        );
    }
}

#[test]
fn an_unsafe_site_falls_back_to_a_trap_and_a_bad_pointer_is_a_record_s_fact() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["edge"]);
    // spin's second instruction is a loop head the jump would cover; tiny is one byte.
    let spin = scry.ok("tracepoint.set('spin', {collect: ['rdi']})");
    assert!(
        spin.contains("is a trap") && spin.contains("branches to"),
        "{spin}"
    );
    let tiny = scry.ok("tracepoint.set('tiny', {collect: ['rdi']})");
    assert!(
        tiny.contains("is a trap") && tiny.contains("the function has 1 byte from the site"),
        "{tiny}"
    );
    scry.ok("tracepoint.set('maybe_len', {collect: ['rdi', {mem: 'rdi', str: 16}]})");
    let modes = scry.ok("tracepoint.list().map(r => r.mode).join(' ')");
    assert_eq!(modes, "trap trap jump");
    scry.ok(
        "ctx.seen = []; addEventListener('trace', e => {
           const c = e.chunks[0];
           ctx.seen.push(e.symbol + ' ' + (c ? (c.error ?? e.memory(c.addr).str()) : e.registers.rdi));
           if (c && c.error) { try { e.memory(c.addr).u8(); } catch (err) { ctx.err = err.message; } }
         })",
    );
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    // Trap records come as the probe's do; NULL and 0x10 are unreadable, never a crash.
    assert_eq!(
        scry.ok("ctx.seen.join(', ')"),
        "spin 1000, tiny 1000, maybe_len hello, maybe_len unreadable, maybe_len unreadable"
    );
    assert!(scry
        .ok("ctx.err")
        .contains("was unreadable when tracepoint 3 hit"));
    assert_eq!(scry.ok("output()"), "spin 1000 lens 5 0 0");
}

#[test]
fn removal_and_detach_leave_the_file_s_code_and_the_program_running() {
    let program = fixture("tracepoints");
    let mut scry = Scry::spawn(&program, &["slow"]);
    let pid = scry.num("status().pid") as i32;
    scry.ok("ctx.id = tracepoint.set('work', {collect: ['rdi']})");
    scry.ok("ctx.n = 0; addEventListener('trace', e => { ctx.n++; })");
    scry.ok("breakpoint.set('usleep')");
    scry.ok("cont()");
    scry.ok("cont()");
    assert_eq!(scry.ok("ctx.n"), "2");
    // While probed, reads of the site show the program's own code.
    assert!(
        !text_is_the_file_s(&program, pid),
        "the probe's jump is in memory"
    );
    assert_eq!(
        scry.ok("state.disasm(1, symbol('work'))[0].text"),
        "push rbp"
    );
    scry.ok("tracepoint.remove(ctx.id)");
    assert!(
        text_is_the_file_s(&program, pid),
        "removal left the file's code"
    );
    // Set again, then detach: the program goes on alone, its code as in the file.
    scry.ok("tracepoint.set('work', {collect: ['rdi']})");
    scry.ok("cont()");
    assert_eq!(scry.ok("ctx.n"), "3");
    scry.ok("breakpoint.remove(1)");
    assert_eq!(scry.ok("detach().reason"), "detached");
    assert!(
        text_is_the_file_s(&program, pid),
        "detach left the file's code"
    );
    assert_eq!(proc_status_field(pid, "TracerPid"), "0");
    // The tracepoint waits, its count kept, as a breakpoint does (a detach deleted it).
    assert_eq!(
        scry.ok(
            "const t = tracepoint.list()[0]; [tracepoint.list().length, t.hits, t.mode].join(' ')"
        ),
        "1 1 pending"
    );
    // Attached again, it is set again and counts on.
    scry.ok(&format!("attach({pid})"));
    assert_eq!(scry.ok("tracepoint.list()[0].mode"), "jump");
    scry.ok("cont({timeout: 0.3})");
    assert!(scry.num("tracepoint.list()[0].hits") > 1);
    assert_eq!(scry.ok("detach().reason"), "detached");
    assert!(
        text_is_the_file_s(&program, pid),
        "the second detach left the file's code"
    );
    scry.finish();
    // It runs on to its end (about a second of usleeps left).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !proc_status_field(pid, "State").starts_with('Z')
    {
        assert!(std::time::Instant::now() < deadline, "{pid} did not end");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_fork_child_runs_the_program_s_own_code_and_the_parent_is_probed() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["fork"]);
    let pid = scry.num("status().pid");
    scry.ok("tracepoint.set('work', {collect: [{mem: 'rsi', str: 16}]})");
    scry.ok("ctx.by = {}; addEventListener('trace', e => {
           const k = e.memory(e.chunks[0].addr).str() + (e.tid === status().pid ? '' : '?');
           ctx.by[k] = (ctx.by[k] || 0) + 1;
         })");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    assert_eq!(scry.ok("JSON.stringify(ctx.by)"), r#"{"parent":20}"#);
    let _ = pid;
    assert_eq!(
        scry.ok("output()"),
        "child total 90\nparent total 1045 child status 0"
    );
}

/// Probes go with the selected process, as breakpoints do: selecting a kept fork child
/// takes them out of the parent (its code the file's again) and puts them into the child,
/// the counts going on.
#[test]
fn probes_follow_the_selected_process_of_a_tree() {
    let bin = fixture("tracepoints");
    let mut scry = Scry::spawn_holding_children(&bin, &["fork"]);
    let parent = scry.num("status().pid");
    scry.ok(
        "tracepoint.set('work', {collect: [{mem: 'rsi', str: 16}]}); ctx.by = {};\
         addEventListener('trace', e => {\
           const k = e.memory(e.chunks[0].addr).str(); ctx.by[k] = (ctx.by[k] || 0) + 1 })",
    );
    // The parent waits for its held child.
    let waited = scry.ok("cont({timeout: 2})");
    assert!(waited.starts_with("timeout"), "{waited}");
    assert_eq!(scry.ok("JSON.stringify(ctx.by)"), r#"{"parent":10}"#);
    let child = scry.num("process.list().find(p => p.state === 'held').pid");
    scry.ok(&format!("process.select({child})"));
    assert!(
        text_is_the_file_s(&bin, parent as i32),
        "the parent keeps no jump"
    );
    assert_eq!(scry.ok("tracepoint.list()[0].mode"), "jump");
    let mut stops = vec![scry.ok("cont()")];
    while !stops.last().unwrap().starts_with("exited") && stops.len() < 4 {
        stops.push(scry.ok("cont()"));
    }
    let all = stops.join("\n");
    assert!(
        stops.last().unwrap().starts_with("exited with code 0"),
        "{all}"
    );
    assert_eq!(
        scry.ok("JSON.stringify(ctx.by)"),
        r#"{"parent":10,"child":10}"#,
        "{all}"
    );
    assert_eq!(scry.ok("tracepoint.list()[0].hits"), "20");
    // The child ended with the probe in it: selecting the parent sets it there again (a
    // trap: the parent's one thread waits in wait4, where no probe's system calls can run).
    scry.ok(&format!("process.select({parent})"));
    assert_eq!(scry.ok("tracepoint.list()[0].mode"), "trap");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert_eq!(
        scry.ok("JSON.stringify(ctx.by)"),
        r#"{"parent":20,"child":10}"#
    );
    assert_eq!(scry.ok("tracepoint.list()[0].hits"), "30");
}

#[test]
fn stepping_through_a_probed_site_shows_the_program_s_instructions_and_counts_the_hit() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["calls", "5"]);
    scry.ok("tracepoint.set('work', {collect: ['rdi']})");
    scry.ok("ctx.rdi = []; addEventListener('trace', e => { ctx.rdi.push(e.registers.rdi); })");
    scry.ok("breakpoint.set('work+0')");
    scry.ok("cont()");
    let s1 = scry.ok("step()");
    assert!(s1.contains("work+0x1"), "{s1}");
    let s2 = scry.ok("step()");
    assert!(s2.contains("work+0x4"), "{s2}");
    scry.ok("breakpoint.remove(1)");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    // The stepped hit is collected by scry, the other four by the probe.
    assert_eq!(scry.ok("ctx.rdi.join(' ')"), "0 1 2 3 4");
    assert_eq!(scry.ok("tracepoint.list()[0].hits"), "5");
}

#[test]
fn a_listener_that_asks_for_a_stop_stops_the_program_soon_after() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["calls", "200000"]);
    scry.ok("tracepoint.set('work', {collect: ['rdi']})");
    scry.ok("addEventListener('trace', e => e.registers.rdi === 1000 ? 'stop' : undefined)");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("trace (tracepoint 1's listener asked; stopped after the hit)"),
        "{stop}"
    );
    // A listener that throws is reported once with a count, and the run goes on (to a
    // breakpoint at the program's last printf).
    scry.ok("breakpoint.set('printf')");
    scry.ok(
        "removeEventListener('trace'); addEventListener('trace', e => { if (e.registers.rdi % 2) throw new Error('boom') })",
    );
    let out = scry.ok("cont()");
    assert!(out.contains("[a trace listener threw "), "{out}");
    assert!(out.contains(" times; the first: Error: boom]"), "{out}");
    assert!(out.contains("breakpoint 1 at "), "{out}");
    // Asked for when the program had come to its next stop: said on that stop.
    scry.ok("breakpoint.remove(1); removeEventListener('trace')");
    scry.ok("tracepoint.remove(1); tracepoint.set('printf')");
    scry.ok("breakpoint.set('exit')");
    scry.ok("addEventListener('trace', e => 'stop')");
    let late = scry.ok("cont()");
    assert!(late.starts_with("breakpoint 2 at "), "{late}");
    assert!(
        late.contains(
            "[tracepoint 2's listener asked for a stop; the program had reached this one first]"
        ),
        "{late}"
    );
}

/// A fault in an instruction the probe moved is shown where it is in the program, never in
/// the trampoline: the stop, the registers and the stack are the program's.
#[test]
fn a_fault_in_a_moved_instruction_is_shown_at_its_own_address() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["crash"]);
    scry.ok("tracepoint.set('load', {collect: ['rdi']})");
    assert_eq!(scry.ok("tracepoint.list()[0].mode"), "jump");
    scry.ok("ctx.rdi = []; addEventListener('trace', e => { ctx.rdi.push(e.registers.rdi); })");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("signal SIGSEGV fault_addr=0x0 at ") && stop.contains(" load"),
        "{stop}"
    );
    assert!(!stop.contains("[anon]"), "{stop}");
    assert_eq!(scry.ok("state.pc === symbol('load')"), "true");
    let caller = scry.ok("state.unwind()[1].symbol");
    assert!(caller.starts_with("main"), "{caller}");
    // Both calls were recorded: the good pointer's, then NULL.
    assert_eq!(scry.ok("ctx.rdi.length + ' ' + ctx.rdi[1]"), "2 0");
    assert_eq!(scry.ok("tracepoint.list()[0].hits"), "2");
    let end = scry.ok("cont()");
    assert!(end.starts_with("killed by SIGSEGV"), "{end}");
}

/// A library unloaded with a tracepoint in it takes the tracepoint along (said), and the
/// library loaded again at the same place runs its own code.
/// A tracepoint on a library's function set before the library loads waits (`pending`), is
/// set when it loads, waits again when dlclose takes the code, and is set again when the
/// library loads again: every call traced, the hits counted across both loads.
#[test]
fn a_tracepoint_waits_for_its_library_and_follows_it_through_dlclose() {
    let lib = fixture_from(
        "libplugin_tp.so",
        "cc",
        &["-g", "-shared", "-fPIC"],
        &["plugin.c"],
    );
    let mut scry = Scry::spawn(&fixture("dlopen_host"), &[lib.to_str().unwrap()]);
    let set = scry.ok("tracepoint.set('plugin_work', {collect: ['rdi']})");
    assert!(set.contains("tracepoint 1 pending: "), "{set}");
    assert_eq!(scry.ok("tracepoint.list()[0].mode"), "pending");
    let twice = scry.err("tracepoint.set('plugin_work', {collect: ['rsi']})");
    assert!(
        twice.contains("tracepoint 1 already waits for 'plugin_work'"),
        "{twice}"
    );
    assert!(scry
        .ok("tracepoint.list()")
        .contains("pending\tplugin_work\thits 0"));
    scry.ok("ctx.x = []; addEventListener('trace', e => { ctx.x.push(e.registers.rdi); })");
    let end = scry.ok("cont()");
    assert!(end.contains("exited with code 0"), "{end}");
    assert!(
        end.contains("tracepoint 1 (plugin_work) went with its library's code after 3 hits"),
        "{end}"
    );
    assert_eq!(
        end.matches("tracepoint 1 (plugin_work) set at ").count(),
        2,
        "{end}"
    );
    assert_eq!(scry.ok("ctx.x.join(' ')"), "0 1 2 0 1");
    assert_eq!(scry.ok("tracepoint.list()[0].hits"), "5");
    assert_eq!(scry.ok("tracepoint.list()[0].delivered"), "5");
    // 0*2 + 1*2 + 2*2 + 0*2 + 1*2
    assert_eq!(scry.ok("output()"), "sum 8");
}

/// exec replaces the program's code: the tracepoint is set again where its function is in
/// the new image, and both images' calls are traced.
#[test]
fn a_tracepoint_is_set_again_after_exec() {
    let mut scry = Scry::spawn(&fixture("exec_self"), &[]);
    scry.ok("tracepoint.set('work', {collect: ['rdi']})");
    scry.ok("ctx.x = []; addEventListener('trace', e => { ctx.x.push(e.registers.rdi); })");
    let mut stops = vec![scry.ok("cont()")];
    while !stops.last().unwrap().starts_with("exited") && stops.len() < 4 {
        stops.push(scry.ok("cont()"));
    }
    let all = stops.join("\n");
    assert!(
        stops.last().unwrap().starts_with("exited with code 5"),
        "{all}"
    );
    assert!(all.contains("tracepoint 1 (work) set at "), "{all}");
    assert_eq!(scry.ok("ctx.x.join(' ')"), "1 21", "{all}");
    assert_eq!(scry.ok("tracepoint.list()[0].hits"), "2");
    assert_eq!(scry.ok("tracepoint.list()[0].mode"), "jump");
    assert_eq!(scry.ok("output()"), "parent 2\nchild 42");
}

#[test]
fn bad_tracepoint_input_is_one_clear_line() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["calls", "5"]);
    let e = scry.err("tracepoint.set('work', {collect: ['fs']})");
    assert!(e.contains("'fs' is no register to collect"), "{e}");
    let e = scry.err("tracepoint.set('work', {collect: [{mem: 'rsi'}]})");
    assert!(e.contains("needs len (bytes) or str"), "{e}");
    let e = scry.err("tracepoint.set('work', {collect: [{mem: 'nosuch+8', len: 4}]})");
    assert!(e.contains("is no address"), "{e}");
    let e = scry.err("tracepoint.set('work', {full: 'never'})");
    assert!(e.contains("full is 'wait'"), "{e}");
    let e = scry.err("tracepoint.set('work', {collect: [{mem: '', len: 4}]})");
    assert!(e.contains("is no address"), "{e}");
    let e = scry.err("tracepoint.set('work', {collect: [{mem: 'é', len: 4}]})");
    assert!(e.contains("is no address"), "{e}");
    let e = scry.err("tracepoint.remove(1.5)");
    assert!(e.contains("id is the number tracepoint.set() gave"), "{e}");
    let e = scry.err("tracepoint.remove(9)");
    assert!(e.contains("no tracepoint 9"), "{e}");
    scry.ok("tracepoint.set('work', {collect: ['rdi']})");
    let e = scry.err("tracepoint.set('work', {collect: ['rsi']})");
    assert!(e.contains("a tracepoint is already at"), "{e}");
    // Inside the first one's jump: neither a jump nor an int3 can go there.
    let inner = scry.err("tracepoint.set('work+1', {collect: ['rsi']})");
    assert!(
        inner.contains("is inside the bytes the jump of the tracepoint at"),
        "{inner}"
    );
    let e = scry.err("breakpoint.set('work+4', {hardware: false})");
    assert!(e.contains("is inside the bytes the jump"), "{e}");
    let e = scry.err("stop()");
    assert!(e.contains("inside a trace listener"), "{e}");
    // Nothing was lost: the program runs to its end as alone.
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    assert_eq!(scry.ok("tracepoint.list()[0].hits"), "5");
}

/// An `{if}` of the form `e => e.registers.REG OP N` is tested in the probe itself: a hit it
/// turns away writes no record (counted in `filtered`), the records that pass are the same
/// as the JS filter's, and `delivered + filtered = hits`. Any other form stays the script's.
#[test]
fn a_simple_if_is_tested_in_the_probe() {
    let mut scry = Scry::spawn(&fixture("tracepoints"), &["calls", "100000"]);
    scry.ok("tracepoint.set('work', {collect: ['rdi'], if: e => e.registers.rdi >= 99990})");
    scry.ok("ctx.x = []; addEventListener('trace', e => { ctx.x.push(e.registers.rdi) })");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    assert_eq!(
        scry.ok("[ctx.x.length, ctx.x[0], ctx.x[9]].join(' ')"),
        "10 99990 99999"
    );
    let row = scry
        .ok("const r = tracepoint.list()[0]; [r.hits, r.delivered, r.lost, r.filtered].join(' ')");
    assert_eq!(row, "100000 10 0 99990");
    assert!(scry
        .ok("String(tracepoint.list())")
        .contains("filtered in the probe 99990"));

    // Each comparison, hex constants, and a parenthesized parameter, against the JS filter.
    for (cond, want) in [
        ("(r) => r.registers.rdi == 0x10", "1"),
        ("e => e.registers.rdi != 5", "999"),
        ("e => e.registers.rdi < 10", "10"),
        ("e => e.registers.rdi <= 10", "11"),
        ("e => e.registers.rdi > 990", "9"),
        ("e => e.registers.rdi % 2 === 0", "500"),
    ] {
        let mut scry = Scry::spawn(&fixture("tracepoints"), &["calls", "1000"]);
        scry.ok(&format!(
            "tracepoint.set('work', {{collect: ['rdi'], if: {cond}}}); ctx.n = 0; addEventListener('trace', () => {{ ctx.n++ }})"
        ));
        assert!(scry.ok("cont()").starts_with("exited with code 0"));
        assert_eq!(scry.ok("ctx.n"), want, "{cond}");
        let probe = scry.ok("tracepoint.list()[0].filtered !== undefined");
        assert_eq!(
            probe,
            if cond.contains('%') { "false" } else { "true" },
            "{cond}"
        );
    }
}
