//! Scripts and targets that try to crash, wedge or fool scry itself (issue 9's script side):
//! hostile prototype setters and getters, printing bombs, listeners cut short by the script
//! budget, forged status lines, durations that overflow, and errors that must be clear.
//! Each test is a row of SPEC §8a's fault matrix.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{fixture, load_bias, nm_address, proc_status_field, Scry};

/// Every field name scry's native code defines on a result (`put("name", ...)` in
/// src/script/native), plus the ones the prelude defines, so a field added later is covered
/// without editing this test.
fn field_names() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/script/native");
    let mut names: Vec<String> = [
        "line",
        "deliver",
        "kind",
        "addr",
        "rows",
        "text",
        "more",
        "0",
        "1",
        "2",
        "message",
        "name",
        "stack",
        "registers",
        "source",
        "selected",
        "state",
        "prev",
        "symbol",
        "insn",
        "insn_addr",
        "stop_reason",
        // What a property descriptor is read for: poisoned, every defineProperty scry made
        // with a plain descriptor object would fail.
        "get",
        "set",
        "value",
        "writable",
        "enumerable",
        "configurable",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // The natives are a tree (`native/state/...`), one file per JS namespace.
    let mut dirs = vec![dir];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            for part in text.split(".put(\"").skip(1) {
                if let Some(end) = part.find('"') {
                    names.push(part[..end].to_string());
                }
            }
        }
    }
    names.sort();
    names.dedup();
    assert!(names.len() > 40, "found only {names:?}");
    names
}

/// A chunk that puts a setter and a getter for every name on Object.prototype and
/// Array.prototype; each one touches `state` (re-entering scry) and counts itself in
/// `globalThis.hostile`. Getters answer 'FAKE'.
fn hostile_prototypes() -> String {
    let names: Vec<String> = field_names().iter().map(|n| format!("'{n}'")).collect();
    format!(
        "globalThis.hostile = 0; globalThis.hostileWhere = '';
         for (const k of [{}]) for (const P of [Object.prototype, Array.prototype])
           Object.defineProperty(P, k, {{ __proto__: null,
             set(v) {{ globalThis.hostile++; globalThis.hostileWhere += ' set ' + k; try {{ state.pc; breakpoint.list() }} catch (e) {{}} }},
             get() {{ globalThis.hostile++; globalThis.hostileWhere += ' get ' + k; try {{ state.pc }} catch (e) {{}} return 'FAKE' }},
             configurable: true }});
         Error.prepareStackTrace = () => state.pc;
         undefined",
        names.join(", ")
    )
}

#[test]
fn hostile_prototype_setters_and_getters_run_nowhere_inside_scry() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    let pid = scry.target_pid();
    scry.ok(&hostile_prototypes());
    let bias = load_bias(pid, &bin);
    let add = nm_address(&bin, "add") + bias;
    let counter = nm_address(&bin, "counter") + bias;

    let status = scry.ok("status()");
    assert!(status.contains(&format!("pid\t{pid}")), "{status}");
    assert!(status.contains("live\ttrue"), "{status}");
    assert_eq!(scry.ok("breakpoint.set('add+0')"), "1");
    let list = scry.ok("breakpoint.list()");
    assert!(list.contains(&format!("{add:#x}\t\tadd\t0")), "{list}");
    let module = bin.file_name().unwrap().to_str().unwrap();
    let syms = scry.ok("symbols('counter')");
    assert!(
        syms.contains(&format!("{counter:#x}\t4\tobject\tcounter\t{module}")),
        "{syms}"
    );
    assert!(scry.ok("state.disasm(2)").starts_with("_start "));
    assert!(scry.ok("state.instruction").contains("<_start>"));
    assert!(scry.ok("state.registers").contains("rip\t0x"));
    assert!(scry.ok("state.flags").starts_with("c="));
    assert_eq!(scry.ok("state.memory('counter').u32()"), "0");
    assert_eq!(scry.ok("state.memory(symbol('counter')).u32()"), "0");
    assert_eq!(scry.ok("prev.memory('counter').u32()"), "");
    let stop = scry.ok("cont()");
    assert_eq!(stop, format!("breakpoint 1 at {add:#x} add loop.c:7"));
    assert!(scry.ok("state.unwind()").contains("main+0x"));
    assert!(scry.ok("state.frame(1).symbol").starts_with("main+"));
    let threads = scry.ok("thread.list()");
    let comm: String = module.chars().take(15).collect();
    assert!(
        threads.contains(&format!("{pid}*\t{comm}\tstopped\t{add:#x}\tadd")),
        "{threads}"
    );
    assert!(scry.ok(&format!("thread.select({pid})")).contains(" add"));
    assert!(scry.ok("state.stack").contains("kind\tmain"));
    assert!(scry.ok("state.locals()").contains("a\tint"));
    // Typed values build their answers without the script's setters and getters too.
    assert_eq!(scry.ok("state.value('counter').$type"), "int");
    assert_eq!(scry.ok("state.var('counter').value"), "0");
    assert_eq!(scry.ok("state.var('n', 1)"), "3");
    assert_eq!(
        scry.ok("state.locals(1)[2].name + ' ' + state.locals(1)[2].value.value"),
        "n 3"
    );
    assert!(scry.ok("state.source(0)").contains(">7"));

    // Events: a watchpoint listener reads the culprit; a step listener; a signal listener.
    scry.ok("breakpoint.remove(1); watchpoint.set('counter', 'w')");
    // (The script appends by definition: its own pushes would meet its own setters.)
    scry.ok("ctx.seen = []; addEventListener('watchpoint', e => { Object.defineProperty(ctx.seen, ctx.seen.length, {__proto__: null, value: [e.insn_addr, e.insn, e.new, e.symbol, e.line], enumerable: true, writable: true, configurable: true}); return 'continue' })");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 3"), "{end}");
    let seen =
        scry.ok("ctx.seen.length + ' ' + ctx.seen[2][2] + ' ' + String(ctx.seen[0][1]).length");
    assert!(seen.starts_with("3 3 "), "{seen}");
    let status = scry.ok("status()");
    assert!(status.contains(&format!("pid\t{pid}")), "{status}");
    assert!(status.contains("ended\texited with code 3"), "{status}");
    assert!(scry.ok("output()").contains("total=3 calls=3"));

    // After all of it: no setter ran inside scry (the script's own reads are not counted:
    // none of the answers above is 'FAKE').
    assert_eq!(scry.ok("hostile + hostileWhere"), "0");
    let spawned = scry.ok(&format!("spawn('{}', '2')", bin.display()));
    assert!(spawned.starts_with("entry at "), "{spawned}");
    assert_eq!(scry.ok("hostile + hostileWhere"), "0");
    let (status, _) = scry.finish_with_output();
    assert!(status.success(), "{status:?}");
}

#[test]
fn printing_a_self_referencing_array_is_small_and_quick() {
    let mut scry = Scry::start(&["--output-limit", "4000000"]);
    let started = Instant::now();
    let r = scry.eval("a = []; for (let i = 0; i < 1000; i++) a.push(a); a");
    assert!(r.ok, "{r:?}");
    assert_eq!(r.body.lines().count(), 1000);
    assert!(r.body.lines().all(|l| l == "[Circular]"), "{r:?}");
    // A wide, deep, shared (not cyclic) structure: cut at the value limit, and said so.
    let r = scry.eval(
        "b = []; for (let i = 0; i < 1000; i++) { const r = []; for (let j = 0; j < 1000; j++) r.push(null); b.push(r) }; print(b); 1",
    );
    assert!(r.ok, "{r:?}");
    assert!(
        r.body.contains("[scry: printing stopped at 200000 values"),
        "{}",
        &r.body[r.body.len().saturating_sub(300)..]
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    let peak: u64 = proc_status_field(scry.pid() as i32, "VmHWM")
        .trim_end_matches(" kB")
        .parse()
        .unwrap();
    assert!(peak < 400 * 1024, "scry peaked at {peak} kB");
    assert_eq!(
        scry.ok("o = {n: 1}; o.self = o; o"),
        "n\t1\nself\t[Circular]"
    );
}

#[test]
fn printing_counts_against_the_script_budget() {
    let mut scry = Scry::start(&["--script-timeout", "1"]);
    // Every value's getter burns time: the print is stopped like a runaway script.
    let err = scry.err(
        "const o = {}; for (let i = 0; i < 100; i++) Object.defineProperty(o, 'k' + i, {get() { const t = Date.now(); while (Date.now() - t < 50); return i }, enumerable: true}); o",
    );
    assert!(
        err.starts_with("error: script stopped after running 1s (config.script_timeout)"),
        "{err}"
    );
    assert_eq!(scry.ok("1 + 1"), "2");
}

/// `config.script_timeout` set in a chunk is that chunk's budget from there on: raised
/// before a long read, the read runs (the chunk kept the budget it began with, then said it
/// had run the new one); lowered, the rest of the chunk stops at it.
#[test]
fn the_script_budget_set_in_a_chunk_applies_to_it() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["1"]);
    scry.ok("config.script_timeout = 1");
    assert_eq!(
        scry.ok("config.script_timeout = 4; const t0 = Date.now(); while (Date.now() - t0 < 1500); 'ran'"),
        "ran"
    );
    let started = std::time::Instant::now();
    let err = scry.err("config.script_timeout = 0.5; for (;;);");
    assert!(
        err.starts_with("error: script stopped after running 0.5s (config.script_timeout)"),
        "{err}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(scry.ok("1 + 1"), "2");
}

#[test]
fn a_listener_cut_short_by_the_budget_leaves_no_listener_depth_behind() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["2000000000"]);
    let pid = scry.target_pid();
    let add = nm_address(&bin, "add") + load_bias(pid, &bin);
    scry.ok("config.script_timeout = 1; breakpoint.set('add+0')");
    scry.ok("ctx.spin = e => { for (;;) {} }; addEventListener('breakpoint', ctx.spin)");
    let err = scry.err("cont()");
    let head = err.lines().next().unwrap();
    assert_eq!(
        head,
        format!(
            "error: script stopped after running 1s (config.script_timeout); the session is intact \
             [in breakpoint listener; target stopped: breakpoint 1 at {add:#x} add loop.c:7]"
        )
    );
    // Every run and lifecycle call works again.
    assert_eq!(
        scry.ok("removeEventListener('breakpoint', ctx.spin)"),
        "true"
    );
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("step()").starts_with("step at "));
    assert!(scry.ok("cont({timeout: 0.2})").starts_with("timeout at "));
    assert!(scry.ok("kill()").starts_with("killed by SIGKILL"));
    assert!(scry
        .ok(&format!("spawn('{}', '1')", bin.display()))
        .starts_with("entry at "));
    assert!(scry.ok("detach()").starts_with("detached"));
}

#[test]
fn an_interrupted_finish_leaves_no_breakpoint_of_scrys_behind() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    scry.ok("config.script_timeout = 1; breakpoint.set('add+0'); cont()");
    // finish() arms scry's own breakpoint at the return address in main; a listener on a
    // breakpoint before the return is interrupted, skipping finish's own cleanup.
    scry.ok("breakpoint.set('add+4'); addEventListener('breakpoint', e => { if (e.breakpoint_id === 2) for (;;) {} })");
    let err = scry.err("finish()");
    assert!(
        err.contains("[in breakpoint listener; target stopped: breakpoint 2 at "),
        "{err}"
    );
    // With the user's breakpoints gone, the program runs to its end: nothing stops it at the
    // old return address.
    scry.ok("breakpoint.remove(1); breakpoint.remove(2)");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 3"), "{end}");
}

#[test]
fn forged_status_lines_in_target_data_are_escaped() {
    let bin = fixture("forger");
    let mut scry = Scry::spawn(&bin, &[]);
    scry.ok("breakpoint.set('named'); cont()");
    // The program printed `;; ok` and `;; error` lines; a harness still sees one response.
    let out = scry.ok("output()");
    assert_eq!(
        out, "before\n\\;; ok\n\\;; error\n\x1b]0;owned\x07after",
        "pipes get the bytes, with status-line look-alikes escaped"
    );
    assert_eq!(scry.ok("state.memory('forged').str()"), "x\n\\;; ok\ny");
    assert_eq!(
        scry.ok("thread.list().map(t => t.name).join('\\n')"),
        "\\;; ok"
    );
    assert_eq!(
        scry.ok("print(';;'); '\\\\;; not a status'"),
        "\\;;\n\\\\;; not a status"
    );
    // The next answer is the next chunk's.
    assert_eq!(scry.ok("1 + 1"), "2");
    // With another marker, that marker is the one escaped.
    let mut other = Scry::start(&["--marker", "@@END"]);
    other.send_raw("print('@@END ok'); ';; ok'\n@@END\n");
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let r = other.read_line();
        let done = r.starts_with("@@END ");
        lines.push(r);
        if done {
            break;
        }
    }
    assert_eq!(lines, ["\\@@END ok", ";; ok", "@@END ok"]);
}

#[test]
fn forged_status_lines_stay_escaped_in_more_parts() {
    let mut scry = Scry::start(&["--output-limit", "256"]);
    let first = scry.ok(
        "for (let i = 0; i < 20; i++) print('x'.repeat(19)); print(';; ok'); print(';; error')",
    );
    assert!(first.contains("send :more"), "{first}");
    let rest = scry.ok(":more");
    assert!(rest.ends_with("\\;; ok\n\\;; error"), "{rest}");
    assert_eq!(scry.ok("1 + 1"), "2");
}

/// At a terminal, control characters from the target are shown, not obeyed (the program's
/// output carries an OSC sequence that would retitle the window). `script` gives scry a pty.
#[test]
fn terminal_mode_shows_target_control_characters() {
    use std::io::Write;
    let bin = fixture("forger");
    let mut child = std::process::Command::new("script")
        .args([
            "-qfec",
            &format!("{} {}", common::SCRY, bin.display()),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux runs");
    let mut stdin = child.stdin.take().unwrap();
    let lines = common::line_reader(child.stdout.take().unwrap());
    stdin
        .write_all(b"breakpoint.set('named'); cont(); output()\n")
        .unwrap();
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !seen.contains("after") && Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_secs(1)) {
            seen.push_str(&line);
            seen.push('\n');
        }
    }
    let _ = stdin.write_all(b":quit\n");
    let _ = child.wait();
    assert!(seen.contains("\\x1b]0;owned\\x07after"), "{seen:?}");
    assert!(!seen.contains('\x1b') && !seen.contains('\x07'), "{seen:?}");
}

#[test]
fn durations_too_large_are_clamped_never_a_panic() {
    let bin = fixture("loop");
    let mut scry = Scry::start(&[
        "--timeout",
        "1e308",
        "--script-timeout",
        "1e19",
        "--",
        bin.to_str().unwrap(),
    ]);
    assert_eq!(scry.ok("config.timeout"), "86400 (0x15180)");
    assert_eq!(scry.ok("config.script_timeout"), "86400 (0x15180)");
    assert!(scry
        .ok("cont({timeout: 1e19})")
        .starts_with("exited with code 3"));
    scry.ok("config.timeout = 1e300; config.script_timeout = Number.MAX_VALUE");
    assert_eq!(scry.ok("config.timeout"), "86400 (0x15180)");
    assert!(scry
        .err("config.timeout = -1")
        .contains("config.timeout must be a positive number of seconds"));
    assert!(scry
        .err("cont({timeout: NaN})")
        .contains("timeout must be a positive number of seconds"));
    // Some chunks above failed (on purpose): pipe mode says so in its exit status.
    let (status, _) = scry.finish_with_output();
    assert_eq!(status.code(), Some(1));
    let out = std::process::Command::new(common::SCRY)
        .args(["--timeout", "0", "--", bin.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--timeout must be a positive number of seconds"));
}

#[test]
fn script_side_errors_say_what_to_do() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    assert_eq!(
        scry.err("symbol('loop.c:0')"),
        "error: no line 0 in loop.c: line numbers start at 1"
    );
    // A 100 MB name: answered quickly, and not echoed back.
    let started = Instant::now();
    let err = scry.err("symbol('x'.repeat(1e8))");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(err.len() < 600, "{} bytes", err.len());
    assert!(err.starts_with("error: bad address 'xxxxx"), "{err}");
    assert!(err.contains("too long"), "{err}");
    let err = scry.err(&format!(
        "breakpoint.set('{}', {{pending: false}})",
        "y".repeat(5000)
    ));
    assert!(err.len() < 600 && err.contains("bytes cut]"), "{err}");
    // Pending (the default for a name no module has yet): the note is cut the same way.
    let note = scry.ok(&format!("breakpoint.set('{}')", "y".repeat(5000)));
    assert!(note.len() < 600 && note.contains("bytes cut]"), "{note}");
    let frames: usize = scry.ok("state.unwind({all: true}).length").parse().unwrap();
    assert_eq!(
        scry.err("state.frame(1e9)"),
        format!(
            "error: no frame 1000000000: the stack has {frames} frame{}, #0 to #{} (state.unwind() lists them)",
            if frames == 1 { "" } else { "s" },
            frames - 1
        )
    );
    assert!(scry
        .err("new Promise(() => {})")
        .starts_with("error: the chunk's value is a promise still pending"));
    let err = scry.err("Promise.reject(new RangeError('boom')); 1");
    assert!(
        err.ends_with("error: a promise was rejected and nothing handled it: RangeError: boom"),
        "{err}"
    );
    assert_eq!(
        scry.ok("const p = Promise.reject(1); p.catch(() => {}); 2"),
        "2"
    );
    assert_eq!(scry.ok("(async () => { await null; return 5 })()"), "5");
    let status = scry.ok("status()");
    assert!(
        status.starts_with(&format!(
            "live\ttrue\npid\t{}\nprogram\t{}\nstop\tentry at 0x",
            scry.target_pid(),
            bin.display()
        )),
        "{status}"
    );
    let pid = scry.target_pid();
    scry.ok("cont()");
    assert_eq!(
        scry.ok("status()"),
        format!(
            "live\tfalse\npid\t{pid}\nprogram\t{}\nended\texited with code 3",
            bin.display()
        )
    );
    let mut empty = Scry::start(&[]);
    assert_eq!(
        empty.ok("status()"),
        "live\tfalse\nnote\tno process yet: spawn(path) or attach(pid)"
    );
}

/// `loop.c` compiled as a file named `name` in a scratch directory whose path the debug
/// information rewrites to `dir` (`-fdebug-prefix-map`): the program's source is then
/// `dir/name` for every debugger.
fn with_source_at(dir: &str, name: &str) -> std::path::PathBuf {
    let scratch = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-src-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/loop.c");
    std::fs::copy(src, scratch.join(name)).unwrap();
    let exe = scratch.join("prog");
    let status = std::process::Command::new("cc")
        .current_dir(&scratch)
        .args(["-g", "-O0", "-x", "c", name, "-o"])
        .arg(&exe)
        .arg(format!("-fdebug-prefix-map={}={dir}", scratch.display()))
        .status()
        .unwrap();
    assert!(status.success());
    exe
}

#[test]
fn a_source_path_naming_a_device_or_scrys_stdin_is_refused_at_once() {
    // Debug info saying the source is /dev/stdin (scry's own protocol input), /dev/zero
    // (endless) and a FIFO (open blocks): each is refused in one line, and the chunks after
    // it are still read.
    let fifo_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("hostile-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&fifo_dir).unwrap();
    let fifo = fifo_dir.join("pipe.c");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (dir, name) in [
        ("/dev", "stdin"),
        ("/dev", "zero"),
        (fifo_dir.to_str().unwrap(), "pipe.c"),
    ] {
        let exe = with_source_at(dir, name);
        let mut scry = Scry::spawn(&exe, &["3"]);
        scry.ok("breakpoint.set('add'); cont()");
        let started = std::time::Instant::now();
        let note = scry.ok("state.source()");
        assert!(
            note.starts_with(&format!("{dir}/{name}:"))
                && note.contains("(source not available: ")
                && note.contains("not a regular file")
                && note.lines().count() == 1,
            "{note}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Nothing of the protocol was swallowed.
        assert_eq!(scry.ok("1 + 1"), "2");
        assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    }
}

/// A program writing a forged reply to /dev/tty while scry runs on a terminal (a client that
/// drives scry on a pty): the text is the program's own terminal output, captured and
/// escaped in `output()`, never a line of scry's; and reading its terminal does not stop it
/// with SIGTTIN.
#[test]
fn the_programs_terminal_is_its_own_and_captured() {
    use std::io::Write;
    let bin = fixture("tty_forger");
    let mut child = std::process::Command::new("script")
        .args([
            "-qfec",
            &format!("{} --batch {}", common::SCRY, bin.display()),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("script(1) from util-linux runs");
    let mut stdin = child.stdin.take().unwrap();
    let lines = common::line_reader(child.stdout.take().unwrap());
    // The terminal's text may trail the stop by a moment (the kernel moves a pty's output on
    // a worker): output() is asked until it is there, within a bound.
    stdin
        .write_all(b"cont()\n;;\nlet o = ''; for (let i = 0; i < 400 && !o.includes('FORG' + 'ED'); i++) o += output(); o\n;;\n")
        .unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Until the status line of the second answer, output()'s.
    while seen
        .iter()
        .filter(|l: &&String| l.starts_with(";; ok"))
        .count()
        < 2
        && Instant::now() < deadline
    {
        if let Ok(line) = lines.recv_timeout(Duration::from_secs(1)) {
            seen.push(line.trim_end_matches('\r').to_string());
        }
    }
    let _ = stdin.write_all(b":quit\n;;\n");
    drop(stdin);
    let _ = child.wait();
    let exited = seen
        .iter()
        .position(|l| l.starts_with("exited with code 0"))
        .unwrap_or_else(|| panic!("{seen:#?}"));
    assert!(
        !seen[..exited].iter().any(|l| l.contains("FORGED")),
        "nothing of the program's reaches scry's terminal: {seen:#?}"
    );
    let body = &seen[exited + 2..];
    assert!(body.contains(&"FORGED-BODY".to_string()), "{seen:#?}");
    assert!(body.contains(&"\\;; ok".to_string()), "escaped: {seen:#?}");
    assert!(
        body.contains(
            &"tty=open wrote=19 read=-1 errno=Resource temporarily unavailable".to_string()
        ),
        "{seen:#?}"
    );
}

#[test]
fn without_a_terminal_the_program_has_none_of_scrys() {
    // scry on pipes: the program leads its own session, with no controlling terminal.
    let mut scry = Scry::spawn(&fixture("tty_forger"), &[]);
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(
        scry.ok("output()"),
        "tty=none errno=No such device or address"
    );
}
