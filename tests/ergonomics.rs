//! What agents stumbled on when they used scry on unseen programs (issue 15): results that
//! print well must also stringify and serialize, one instruction object everywhere, typed
//! memory reads, help topics that answer, `-x` files split like stdin, exit statuses, unknown
//! options, and a first answer that orients.

mod common;

use std::process::{Command, Stdio};

use common::{fixture, load_bias, nm_address, objdump_function, temp_path, Scry, SCRY};

/// Each expression prints the same text as its `String(...)`.
#[test]
fn results_stringify_to_exactly_what_they_print() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    scry.ok("breakpoint.set('add'); watchpoint.set('counter', 'w')");
    let stop = scry.ok("ctx.stop = cont()");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    assert_eq!(scry.ok("'stop: ' + ctx.stop"), format!("stop: {stop}"));
    for expr in [
        "ctx.stop",
        "state",
        "state.instruction",
        "state.registers",
        "state.flags",
        "state.disasm(4)",
        "state.disasm(4)[1]",
        "symbols('add', 3)",
        "state.unwind()",
        "thread.list()",
        "breakpoint.list()",
        "watchpoint.list()",
        "state.stack",
        "status()",
        "state.frame(1)",
        "state.unwind()[1]",
        "modules()",
        "lines('loop.c:15')",
    ] {
        let printed = scry.ok(expr);
        assert!(!printed.is_empty(), "{expr}");
        assert_eq!(scry.ok(&format!("`${{{expr}}}`")), printed, "{expr}");
        assert_eq!(scry.ok(&format!("String({expr})")), printed, "{expr}");
    }
    // A listing is an array of rows, and its text splits like text.
    assert_eq!(scry.ok("Array.isArray(state.disasm(3))"), "true");
    assert_eq!(
        scry.ok("state.disasm(3).split('\\n').length"),
        scry.ok("String(state.disasm(3)).split('\\n').length")
    );
    let add = nm_address(&bin, "add") + load_bias(scry.target_pid(), &bin);
    assert_eq!(
        scry.ok("state.disasm(3).split('\\n')[0]"),
        format!("add {add:#x}:")
    );
}

#[test]
fn json_of_results_works_and_bigints_are_hex_strings() {
    let bin = fixture("strings");
    let mut scry = Scry::spawn(&bin, &[]);
    let pid = scry.target_pid();
    let bias = load_bias(pid, &bin);
    let big = nm_address(&bin, "big") + bias;
    assert_eq!(
        scry.ok("JSON.stringify({v: state.memory('big').u64(), a: symbol('big')})"),
        format!("{{\"v\":\"0xfedcba9876543210\",\"a\":{big}}}")
    );
    // Registers: numbers up to 2^53, hex strings above; every register is there.
    scry.ok("state.registers.r15 = 0xffffffffffffffffn; state.registers.r14 = 7");
    let json = scry.ok("JSON.stringify(state.registers)");
    assert!(json.contains("\"r15\":\"0xffffffffffffffff\""), "{json}");
    assert!(json.contains("\"r14\":7"), "{json}");
    assert_eq!(
        scry.ok("Object.keys(JSON.parse(JSON.stringify(state.registers))).length"),
        scry.ok("Object.keys(state.registers).length")
    );
    // `main+0`: the first byte (a bare name stops after the prologue).
    scry.ok("breakpoint.set('main+0')");
    let stop = scry.ok("JSON.stringify(cont())");
    let main = nm_address(&bin, "main") + bias;
    assert!(
        stop.starts_with(&format!("{{\"reason\":\"breakpoint\",\"pc\":{main},")),
        "{stop}"
    );
    assert!(scry
        .ok("JSON.stringify(breakpoint.list())")
        .starts_with("[{\"id\":1,"));
    assert!(scry
        .ok("JSON.stringify(state.unwind())")
        .starts_with("[{\"frame\":0,"));
}

#[test]
fn one_instruction_object_everywhere_and_the_one_a_step_executed() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    let bias = load_bias(scry.target_pid(), &bin);
    let add = objdump_function(&bin, "add");
    scry.ok("breakpoint.set('add+0'); cont()");
    // In a step listener: e.executed is the instruction just run, state.instruction the next.
    scry.ok("ctx.ran = []; ctx.next = []; ctx.f = e => { ctx.ran.push(e.executed.addr); ctx.next.push(e.state.instruction.addr) }; addEventListener('step', ctx.f)");
    scry.ok("step(3)");
    let ran: Vec<u64> = scry
        .ok("ctx.ran.join(' ')")
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    let next: Vec<u64> = scry
        .ok("ctx.next.join(' ')")
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    let truth: Vec<u64> = add.iter().take(4).map(|(a, _)| a + bias).collect();
    assert_eq!(ran, truth[..3]);
    assert_eq!(next, truth[1..4]);
    // A watchpoint's culprit is an object like state.instruction, in the event and the stop.
    scry.ok(
        "breakpoint.remove(1); removeEventListener('step', ctx.f); watchpoint.set('counter', 'w')",
    );
    scry.ok("ctx.w = null; addEventListener('watchpoint', e => { ctx.w = e.insn; return 'stop' })");
    let stop = scry.ok("ctx.stop = cont()");
    assert!(stop.starts_with("watchpoint 1 (counter) write "), "{stop}");
    let text = scry.ok("state.disasm(1, ctx.stop.insn_addr)[0].text");
    assert_eq!(scry.ok("ctx.w.text"), text);
    assert_eq!(scry.ok("ctx.stop.insn.text"), text);
    assert_eq!(scry.ok("ctx.w.mnemonic"), "mov");
    assert_eq!(scry.ok("ctx.w.addr === ctx.stop.insn_addr"), "true");
    assert_eq!(
        scry.ok("String(ctx.w)"),
        format!("{} <add+{:#x}>\t{text}", scry.ok("hex(ctx.w.addr)"), {
            let at: u64 = scry
                .ok("ctx.w.addr")
                .trim()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            at - (nm_address(&bin, "add") + bias)
        })
    );
    assert!(scry
        .ok("help('events')")
        .contains("insn (the instruction that accessed, an object) insn_addr"));
}

#[test]
fn typed_memory_reads() {
    let bin = fixture("strings");
    let mut scry = Scry::spawn(&bin, &[]);
    let (addr, offset, _) = common::section(&bin, ".rodata");
    let file = std::fs::read(&bin).unwrap();
    let with_nul = nm_address(&bin, "with_nul");
    let at = (with_nul - addr + offset) as usize;
    let truth: Vec<String> = file[at..at + 13].iter().map(|b| b.to_string()).collect();
    assert_eq!(
        scry.ok("state.memory('with_nul').array('u8', 13).join(' ')"),
        truth.join(" ")
    );
    assert_eq!(
        scry.ok("Array.from(state.memory('with_nul').u8array(13)).join(' ')"),
        truth.join(" ")
    );
    assert_eq!(
        scry.ok("state.memory('with_nul').u8array(4) instanceof Uint8Array"),
        "true"
    );
    assert_eq!(
        scry.ok("state.memory('with_nul').u8array(2)"),
        format!("{}\n{}", truth[0], truth[1])
    );
    assert_eq!(
        scry.ok("state.memory('big').array('u64', 1)[0] === state.memory('big').u64()"),
        "true"
    );
    assert_eq!(
        scry.ok("state.memory('big').array('u32', 2).map(hex).join(' ')"),
        "0x76543210 0xfedcba98"
    );
    assert!(scry
        .err("state.memory('big').array('u7', 2)")
        .contains("type is one of u8 u16"));
    assert!(scry
        .err("state.memory('big').array('u64', 1e9)")
        .contains("array(type, n)"));
    assert!(scry
        .ok("help('state')")
        .contains("bytes(n) is a hex string"));
}

#[test]
fn help_topics_answer_what_the_summary_leaves_out() {
    let mut scry = Scry::start(&[]);
    let all: usize = scry.ok("help().length").parse().unwrap();
    assert!(all < 3072, "help() is {all} bytes");
    let events = scry.ok("help('events')");
    for field in [
        "breakpoint_id",
        "watchpoint_id",
        "access_type",
        "insn_addr",
        "e.executed",
        "e.deliver",
        "kind ('start'|'exit')",
    ] {
        assert!(
            events.contains(field),
            "help('events') lacks {field}:\n{events}"
        );
    }
    let signals = scry.ok("help('signals')");
    assert!(signals.contains("SIGALRM SIGCHLD"), "{signals}");
    assert!(signals.contains("handle_signal(sig, 'stop')"), "{signals}");
    let stop = scry.ok("help('stop')");
    assert!(
        stop.contains("thread_start") && stop.contains("fault_addr"),
        "{stop}"
    );
    assert_eq!(
        scry.err("state.regs"),
        "error: state has no property 'regs'; did you mean state.registers? (help('state') lists them)"
    );
}

/// A `-x` file is split at `;;` lines like stdin: one response per chunk, an error loses
/// nothing after it, and a failed chunk makes the exit status 1.
#[test]
fn script_files_split_like_stdin_and_failures_set_the_exit_status() {
    let bin = fixture("loop");
    let script = temp_path("chunks.js");
    std::fs::write(
        &script,
        "print('one')\n;;\nno_such()\n;;\nbreakpoint.set('add'); cont()\n",
    )
    .unwrap();
    let out = Command::new(SCRY)
        .args([
            "-x",
            script.to_str().unwrap(),
            "--",
            bin.to_str().unwrap(),
            "3",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0..2], ["one", ";; ok"], "{text}");
    assert!(
        lines[2].starts_with("error: ReferenceError: no_such is not defined"),
        "{text}"
    );
    assert_eq!(lines[3], ";; error");
    assert!(lines[4].starts_with("breakpoint 1 at 0x"), "{text}");
    assert_eq!(lines[5], ";; ok");
    assert_eq!(out.status.code(), Some(1));
    let ok = Command::new(SCRY)
        .args(["--", bin.to_str().unwrap()])
        .stdin(std::fs::File::open("/dev/null").unwrap())
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0));
    let _ = std::fs::remove_file(script);
}

#[test]
fn unknown_options_are_errors_and_dash_programs_run_after_double_dash() {
    let out = Command::new(SCRY)
        .args(["--corefile", "core", "prog"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("scry: unknown option '--corefile'; options: -p/--pid PID, --core CORE, -x/--script FILE, --timeout SECS"), "{err}");
    assert!(err.contains("--read-only,"), "{err}");
    // A program named `-prog` (found on PATH) after `--`.
    let dir = temp_path("dash");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("loop"), dir.join("-prog")).unwrap();
    let out = Command::new(SCRY)
        .args(["--", "-prog", "2"])
        .env("PATH", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"cont()\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next(),
        Some("exited with code 3 [16 bytes of output]")
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cosmetics_seen_on_real_programs() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    let bias = load_bias(scry.target_pid(), &bin);
    // A memory operand with no register to imply its size says it (objdump does too).
    let dump = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn", "-M", "intel"])
        .arg(&bin)
        .output()
        .unwrap();
    let dump = String::from_utf8_lossy(&dump.stdout);
    let (addr, size) = dump
        .lines()
        .find_map(|l| {
            let (addr, insn) = l.split_once(":\t")?;
            let insn = insn.trim();
            (insn.starts_with("nop ") && insn.contains(" PTR [") && !insn.contains("cs ")).then(
                || {
                    (
                        u64::from_str_radix(addr.trim(), 16).unwrap(),
                        insn.split_whitespace().nth(1).unwrap().to_lowercase(),
                    )
                },
            )
        })
        .expect("a nop with a memory operand");
    let text = scry.ok(&format!("state.disasm(1, {})[0].text", addr + bias));
    assert!(text.starts_with(&format!("nop {size} ptr [")), "{text}");
    // Only scry's records show `start` in hex; a script's own key is its own number.
    assert_eq!(
        scry.ok("({start: 70000, end: 3, pc: 70000})"),
        "start\t70000\nend\t3\npc\t0x11170"
    );
    assert!(scry.ok("state.stack").starts_with("top\t0x7"));
    // No symbol listed twice.
    let rows = scry.ok("symbols('', 100000).map(s => s.module + ' ' + s.addr + ' ' + s.name)");
    let mut seen = std::collections::HashSet::new();
    for row in rows.lines() {
        assert!(seen.insert(row), "listed twice: {row}");
    }
    // output() shows invalid UTF-8 the way str() does.
    let mut strings = Scry::spawn(&fixture("strings"), &[]);
    strings.ok("cont()");
    assert_eq!(strings.ok("output()"), "ok\\xff\\xfe-end");
    assert_eq!(strings.ok("1"), "1");
}

#[test]
fn status_orients_in_two_lines() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    let pid = scry.target_pid();
    let module = bin.file_name().unwrap().to_str().unwrap().to_string();
    let stop = scry.ok("breakpoint.set('add+0'); cont()");
    let status = scry.ok(":status");
    let lines: Vec<&str> = status.lines().collect();
    assert_eq!(lines.len(), 2, "{status}");
    let add = nm_address(&bin, "add") + load_bias(pid, &bin);
    // Where it stopped is the last stop's line, which says why.
    assert!(
        lines[0].starts_with(&format!(
            "{} (pid {pid}): breakpoint 1 at {add:#x} add loop.c:7",
            bin.display()
        )) && lines[0].contains("; 1 thread; "),
        "{status}"
    );
    assert_eq!(scry.ok("status().stop"), stop);
    // Once the selected thread moves on without a stop of a run, it is its pc.
    scry.ok("state.registers.rip = symbol('main')");
    let moved = scry.ok(":status");
    assert!(
        moved.starts_with(&format!(
            "{} (pid {pid}): at {:#x} main",
            bin.display(),
            nm_address(&bin, "main") + load_bias(pid, &bin)
        )),
        "{moved}"
    );
    assert!(
        lines[0].contains(&format!("; debug info: {module}")),
        "{status}"
    );
    assert!(lines[1].starts_with("API: "), "{status}");
    let stripped = fixture_stripped();
    let mut bare = Scry::spawn(&stripped, &[]);
    let status = bare.ok(":status");
    // In pipe mode the entry stop is printed nowhere else.
    assert!(
        status.starts_with(&format!(
            "{} (pid {}): entry at 0x",
            stripped.display(),
            bare.target_pid()
        )),
        "{status}"
    );
    assert!(
        status.contains(&format!(
            "; no debug info in {} (no source lines or variables there: build with -g)",
            stripped.file_name().unwrap().to_str().unwrap()
        )),
        "{status}"
    );
    scry.ok("kill()");
    assert!(scry.ok(":status").starts_with(&format!(
        "no live process: {} (pid {pid}) killed by SIGKILL;",
        bin.display()
    )));
}

fn fixture_stripped() -> std::path::PathBuf {
    common::fixture_with("loop", &["-O0", "-s"])
}

#[test]
fn symbols_lead_with_the_name_typed_and_stay_short() {
    let bin = fixture("loop");
    let mut scry = Scry::spawn(&bin, &["3"]);
    let pid = scry.target_pid();
    let add = load_bias(pid, &bin) + nm_address(&bin, "add");
    // libc has many names containing "add"; the program's own `add` is the one typed.
    let first =
        scry.ok("const s = symbols('add'); [s[0].name, s[0].module, hex(s[0].addr)].join(' ')");
    let module = bin.file_name().unwrap().to_string_lossy();
    assert_eq!(first, format!("add {module} {add:#x}"));
    // Without a limit, a listing is at most 50 rows and says how many it left out.
    let all = scry.ok("const a = symbols(''); a.length");
    assert_eq!(all, "50");
    let text = scry.ok("symbols('')");
    let last = text.lines().last().unwrap();
    let more: u64 = last
        .strip_prefix("[... ")
        .and_then(|r| r.strip_suffix(" more]"))
        .unwrap_or_else(|| panic!("{last}"))
        .parse()
        .unwrap();
    assert!(more > 1000, "{last}");
    // Asking for more gives more.
    assert_eq!(scry.ok("symbols('', 120).length"), "120");
}

/// gdb's words typed at scry get the call that does it here, in one line: bare names
/// (`bt`, `c()`), commands that are no JavaScript (`p x`, `info locals`, `x/4x $sp`),
/// `delete 1` (valid JavaScript that deletes nothing: refused), and gdb's property names
/// (`pc`, `breakpoint.delete`).
#[test]
fn gdb_words_are_answered_with_the_call_that_does_it() {
    let mut scry = Scry::start(&[]);
    let cases = [
        ("bt", "did you mean state.unwind()?"),
        ("c()", "did you mean cont()?"),
        ("p x", "gdb's `p` is state.value('x')"),
        ("info locals", "gdb's `info` is state.locals()"),
        ("x/4x $sp", "gdb's `x` is state.memory(addr)"),
        ("delete 1", "breakpoint.remove(1) removes breakpoint 1"),
        ("state.registers.pc", "did you mean state.registers.rip?"),
        ("breakpoint.delete(1)", "did you mean breakpoint.remove?"),
    ];
    for (typed, hint) in cases {
        let e = scry.err(typed);
        assert!(e.contains(hint), "{typed}: {e}");
        assert_eq!(e.lines().count(), 1, "{typed}: {e}");
    }
    // JavaScript's own delete still works.
    assert_eq!(
        scry.ok("const o = {a: 1}; delete o.a; Object.keys(o).length"),
        "0"
    );
}

/// A variable the selected frame lacks but a caller has: the error names the frame and the
/// call that reads it, in one line.
#[test]
fn a_callers_variable_is_pointed_to() {
    let mut scry = Scry::spawn(&fixture("caller_local"), &[]);
    scry.ok("breakpoint.set('leaf'); cont()");
    let e = scry.err("state.var('local')");
    assert!(
        e.ends_with("frame 1 (mid) has one: state.var('local', 1)"),
        "{e}"
    );
    assert_eq!(scry.ok("state.var('local', 1)"), "21");
    let e = scry.err("state.var('nowhere')");
    assert!(!e.contains("has one"), "{e}");
}

/// A name several functions have stops in each of them, as gdb's `break NAME`: the two
/// classes' `price` (it waited as pending, matching neither, and the run went to the end),
/// two overloads of `scale` (it stopped in one), and a Rust generic's instances, which
/// share one symbol name (it stopped in the first only).
#[test]
fn a_breakpoint_on_a_name_stops_in_every_function_of_that_name() {
    let exe = common::fixture_from("same_name", "g++", &["-g", "-O0"], &["same_name.cpp"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('price'); breakpoint.set('scale')");
    assert_eq!(
        scry.ok(
            "breakpoint.list()[0].locations.length + ' ' + breakpoint.list()[1].locations.length"
        ),
        "2 2"
    );
    let mut seen = Vec::new();
    for _ in 0..4 {
        let stop = scry.ok("cont()");
        assert!(stop.starts_with("breakpoint "), "{stop}");
        let at = stop
            .split_whitespace()
            .nth(4)
            .unwrap()
            .split('+')
            .next()
            .unwrap()
            .to_string();
        seen.push(at);
    }
    assert_eq!(
        seen,
        ["Widget::price", "Gadget::price", "scale", "scale"],
        "{seen:?}"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("8 8 3.0"));
    scry.finish();

    let exe = common::rust_fixture("generic_instances", "0");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('generic_instances::largest')");
    let mut got = Vec::new();
    for _ in 0..3 {
        assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
        got.push(scry.ok("String(finish().returned)"));
    }
    assert_eq!(got, ["9", "1.5", "122 'z'"]);
    // A trait's methods by their name alone, and one impl's by `Type::method`.
    scry.ok(
        "breakpoint.remove(1); breakpoint.set('area'); breakpoint.set('Circle::area', 'circle')",
    );
    assert_eq!(scry.ok("breakpoint.list()[0].locations.length"), "2");
    let rect = scry.ok("cont()");
    assert!(rect.contains("Rect as Shape>::area"), "{rect}");
    let circle = scry.ok("cont()");
    assert!(circle.contains("Circle as Shape>::area"), "{circle}");
    assert_eq!(scry.ok("breakpoint.list()[1].hits"), "1");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("9 1.5 z 9"));
}

/// After the program ended, a new breakpoint waits for the next process (it was `no live
/// process`, the chunk's first statement failing), and `spawn()` alone runs the same program
/// with the same arguments again, as gdb's `break` and `run`.
#[test]
fn a_breakpoint_after_the_end_waits_and_spawn_runs_the_program_again() {
    let mut scry = Scry::spawn(&fixture("forker"), &[]);
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let set = scry.ok("breakpoint.set('work')");
    assert!(set.contains("pending: no live process"), "{set}");
    assert!(scry.ok("spawn()").starts_with("entry at "));
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("breakpoint 1 at ") && stop.contains("work+"),
        "{stop}"
    );
    assert_eq!(scry.ok("state.var('x')"), "1");
    scry.ok("kill()");
    let e = scry.err("spawn(42)");
    assert!(e.contains("spawn() alone runs the latest one again"), "{e}");
}

/// A program named like its function inlined everywhere (`tally` in ./tally): the name is the
/// function's inlined copies, not the program's base address, which a breakpoint refused as
/// data.
#[test]
fn a_function_named_like_the_program_is_the_function() {
    let exe = common::fixture_from("tally", "cc", &["-g", "-O2"], &["tally.c"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('tally')");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    assert!(
        scry.ok("state.unwind(1)").contains("[inlined] tally"),
        "{stop}"
    );
    scry.ok("breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("acc 30"));
}

/// A name more functions have than a breakpoint takes (70 `Box<N>::size`): it stops in the
/// first 64, and its set says so rather than leaving six out silently.
#[test]
fn a_name_of_more_functions_than_a_breakpoint_takes_says_so() {
    let exe = common::fixture_from("many_sizes", "g++", &["-g", "-O0"], &["many_sizes.cpp"]);
    let mut scry = Scry::spawn(&exe, &[]);
    let set = scry.ok("breakpoint.set('size')");
    assert!(
        set.contains("more than 64 functions are named 'size'"),
        "{set}"
    );
    assert_eq!(scry.ok("breakpoint.list()[0].locations.length"), "64");
    // One named whole is one.
    let one = scry.ok("breakpoint.set('Box<3>::size')");
    assert!(!one.contains("more than"), "{one}");
    // The template's method without its arguments is every instance's (it waited as
    // pending), as gdb's `break Box::size`.
    let all = scry.ok("breakpoint.set('Box::size')");
    assert!(
        all.contains("more than 64 functions are named 'Box::size'"),
        "{all}"
    );
    scry.ok("breakpoint.remove(1); breakpoint.remove(2); breakpoint.remove(3)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("2415"));
}
