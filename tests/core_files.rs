//! Core files: the kernel's core of a real crash opened with `--core`/`core()`, read like a
//! stopped process (the values checked against what the program printed before it crashed),
//! refusing to run; `gcore()` writing cores that gdb reads and names the same frames in;
//! cores from "another machine" found through `--solib-dir`/`--sysroot`; truncated and
//! corrupt cores answering what they hold.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/crash.c");

/// The line of the fixture's source holding `text` (1-based).
fn source_line(text: &str) -> usize {
    std::fs::read_to_string(SOURCE)
        .unwrap()
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no {text:?} in crash.c"))
        + 1
}

/// The number after `key=` in `text`.
fn printed(text: &str, key: &str) -> i64 {
    let at = text
        .find(&format!("{key}="))
        .unwrap_or_else(|| panic!("no {key}= in {text:?}"))
        + key.len()
        + 1;
    let word: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    word.parse().unwrap()
}

/// `role tid=N tls=M` lines the fixture prints: role -> (tid, tls).
fn threads_printed(text: &str) -> HashMap<String, (i64, i64)> {
    text.lines()
        .filter(|l| l.contains(" tid="))
        .map(|l| {
            let role = l.split(' ').next().unwrap().to_string();
            (role, (printed(l, "tid"), printed(l, "tls")))
        })
        .collect()
}

/// A crash of the fixture and its core.
struct Crash {
    program: PathBuf,
    core: PathBuf,
    /// What the program printed before it crashed.
    output: String,
    dir: PathBuf,
}

impl Drop for Crash {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Why the kernel's core cannot be used here, if it cannot: scry never changes system
/// settings, it uses a core written by `gcore()` instead.
fn kernel_cores_unavailable() -> Option<String> {
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").ok()?;
    let pattern = pattern.trim();
    if pattern.starts_with('|') {
        return Some(format!("core_pattern pipes cores to a program ({pattern})"));
    }
    if pattern.starts_with('/') {
        return Some(format!("core_pattern writes cores elsewhere ({pattern})"));
    }
    None
}

/// Runs `program args` in a fresh directory with RLIMIT_CORE raised and returns the core the
/// kernel wrote; where that is impossible, a core written by `gcore()` at the same crash.
fn crash(program: &Path, args: &[&str]) -> Crash {
    let dir = temp_path("crash");
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(why) = kernel_cores_unavailable() {
        eprintln!("{why}: using a core written by gcore() instead of the kernel's");
        return crash_by_gcore(program, args, dir);
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -c unlimited 2>/dev/null || ulimit -c \"$(ulimit -H -c)\"; exec \"$0\" \"$@\"")
        .arg(program)
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.signal(),
        Some(11),
        "the fixture crashes: {out:?}"
    );
    let core = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("core"))
        });
    match core {
        Some(core) => Crash {
            program: program.to_path_buf(),
            core,
            output: String::from_utf8_lossy(&out.stdout).into_owned(),
            dir,
        },
        None => {
            eprintln!("the kernel wrote no core (RLIMIT_CORE or core_pattern): using gcore()");
            crash_by_gcore(program, args, dir)
        }
    }
}

/// The same crash under scry, snapshotted with `gcore()` at the SIGSEGV stop.
fn crash_by_gcore(program: &Path, args: &[&str], dir: PathBuf) -> Crash {
    let mut scry = Scry::spawn(program, args);
    let stop = scry.ok("String(cont())");
    assert!(stop.starts_with("signal SIGSEGV"), "{stop}");
    let output = scry.ok("output()");
    let core = dir.join("core");
    scry.ok(&format!("gcore({:?})", core.to_str().unwrap()));
    Crash {
        program: program.to_path_buf(),
        core,
        output,
        dir,
    }
}

fn core_arg(c: &Crash) -> String {
    format!(
        "core({:?}, {:?})",
        c.core.to_str().unwrap(),
        c.program.to_str().unwrap()
    )
}

/// The names of the frames of the selected thread (inlined calls included), as
/// `state.unwind()` gives them, with offsets cut.
fn frame_names(scry: &mut Scry) -> Vec<String> {
    scry.ok(
        "state.unwind({max: 64, all: true}).map(r => (r.symbol || '??').split('+')[0]).join(' ')",
    )
    .split(' ')
    .map(str::to_string)
    .collect()
}

#[test]
fn a_kernel_core_opens_at_the_crash_with_the_values_the_program_printed() {
    let c = crash(&fixture("crash"), &[]);
    let mut scry = Scry::start(&[]);
    let stop = scry.ok(&core_arg(&c));
    assert!(
        stop.starts_with("signal SIGSEGV fault_addr=0x1c at 0x"),
        "{stop}"
    );
    let line = source_line("it->value = v + (int)ratio;");
    assert!(
        stop.contains(" apply+0x") && stop.contains(&format!("crash.c:{line}")),
        "{stop}"
    );
    let pc = scry.num("state.pc");
    assert!(stop.contains(&format!("at {pc:#x} ")), "{stop} vs {pc:#x}");
    assert_eq!(scry.ok("state.symbol_at(state.pc).split('+')[0]"), "apply");

    // The call stack, the global and the thread-local the program printed.
    let names = frame_names(&mut scry);
    assert_eq!(&names[..2], ["apply", "main"], "{names:?}");
    assert_eq!(
        scry.ok("state.unwind().map(r => r.symbol.split('+')[0]).join(' ')"),
        "apply main"
    );
    let counter = printed(&c.output, "counter");
    let tls = printed(&c.output, "tls_mark");
    let ratio: f64 = c
        .output
        .split("ratio=")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(scry.num("state.memory('counter').i64()") as i64, counter);
    assert_eq!(scry.num("state.thread_local('tls_mark')") as i64, tls);
    assert_ne!(scry.num("state.registers.fs_base"), 0);
    // apply's parameters: a null pointer, and the counter as an int.
    assert_eq!(
        scry.ok("state.locals().map(l => `${l.name}=${l.value}`).join(' ')"),
        format!("it=0x0 v={counter} ratio={ratio}")
    );
    // The faulting instruction comes from the executable's file (the kernel leaves code
    // out of the core): it stores to [reg+0x1c].
    let insn = scry.ok("state.instruction.text");
    assert!(insn.contains("+0x1c]"), "{insn}");
    assert!(scry
        .ok("state.source(0)")
        .contains("it->value = v + (int)ratio;"));
    // Floating-point registers (NT_X86_XSTATE or NT_FPREGSET): the double argument in xmm0.
    assert_eq!(
        scry.ok("String(state.registers.xmm0.f64[0])"),
        format!("{ratio}")
    );
    assert_eq!(scry.ok("state.registers.mxcsr & 0x1f80"), "8064");

    // Nothing runs, nothing changes; each refusal names the core.
    let name = c.core.to_str().unwrap();
    for code in [
        "cont()",
        "step()",
        "next()",
        "finish()",
        "state.registers.rax = 1",
        "state.memory('counter').write_u64(1)",
        "breakpoint.set('main')",
        "watchpoint.set('counter')",
        "kill()",
    ] {
        let e = scry.err(code);
        assert!(
            e.starts_with(&format!(
                "error: this session is a core file ({name}): it cannot"
            )),
            "{code}: {e}"
        );
    }
    assert!(scry
        .err("cont()")
        .ends_with("spawn() the program to run it"));
    assert_eq!(scry.num("state.memory('counter').i64()") as i64, counter);
    assert_eq!(scry.ok("breakpoint.list().length"), "0");
    let status = scry.ok("status()");
    assert!(
        status.contains("live\tfalse") && status.contains(&format!("core\t{name}")),
        "{status}"
    );
    assert_eq!(scry.ok("status().problems.length"), "0", "{status}");
    // spawn() replaces the core with a live process.
    let entry = scry.ok(&format!("String(spawn({:?}))", c.program.to_str().unwrap()));
    assert!(entry.starts_with("entry at "), "{entry}");
    assert_eq!(scry.ok("status().live"), "true");
}

#[test]
fn a_multithreaded_core_lists_every_thread_with_its_own_stack() {
    let c = crash(&fixture("crash"), &["threads"]);
    let threads = threads_printed(&c.output);
    assert_eq!(threads.len(), 4, "{}", c.output);
    let mut scry = Scry::start(&[
        "--core",
        c.core.to_str().unwrap(),
        c.program.to_str().unwrap(),
    ]);
    let (main_tid, main_tls) = threads["main"];
    let listed = scry.ok("thread.list().map(t => t.tid).sort((a, b) => a - b).join(' ')");
    let mut want: Vec<i64> = threads.values().map(|(t, _)| *t).collect();
    want.sort();
    assert_eq!(
        listed,
        want.iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    assert_eq!(scry.num("state.tid") as i64, main_tid);
    assert_eq!(scry.num("state.thread_local('tls_mark')") as i64, main_tls);
    assert_eq!(&frame_names(&mut scry)[..2], ["apply", "main"]);
    for (role, blocker) in [
        ("reader", "worker_reads"),
        ("sleeper", "worker_sleeps"),
        ("waiter", "worker_waits"),
    ] {
        let (tid, tls) = threads[role];
        let at = scry.ok(&format!("String(thread.select({tid}))"));
        assert!(at.starts_with(&format!("thread {tid} at 0x")), "{at}");
        let names = frame_names(&mut scry);
        let i = names
            .iter()
            .position(|n| n == blocker)
            .unwrap_or_else(|| panic!("{role}: no {blocker} in {names:?}"));
        assert_eq!(
            names.get(i + 1).map(String::as_str),
            Some("worker"),
            "{names:?}"
        );
        assert!(names.iter().any(|n| n == "start_thread"), "{names:?}");
        assert_eq!(
            scry.num("state.thread_local('tls_mark')") as i64,
            tls,
            "{role}"
        );
        // Its own stack: a mapped one holding sp, not main's.
        let stack = scry.ok(
            "(() => { const s = state.stack; return [s.kind, s.usable_base <= state.sp && state.sp < s.top].join(' ') })()",
        );
        assert_eq!(stack, "mapped true", "{role}");
    }
    let states = scry.ok("thread.list().map(t => t.state).join(' ')");
    for call in ["in read", "in clock_nanosleep", "in futex"] {
        assert!(states.contains(call), "{states}");
    }
}

/// gdb's `thread apply all bt` on a core: LWP -> the frames' function names.
fn gdb_frames(program: &Path, core: &Path) -> Option<HashMap<i64, Vec<String>>> {
    let out = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "thread apply all bt", "-ex", "info threads"])
        .arg(program)
        .arg(core)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut frames: HashMap<i64, Vec<String>> = HashMap::new();
    let mut current = None;
    for line in text.lines() {
        if line.starts_with("Thread ") {
            current = line
                .split("(LWP ")
                .nth(1)
                .and_then(|r| r.split(')').next()?.parse().ok());
        } else if let (Some(tid), true) = (current, line.starts_with('#')) {
            // `#1  0x000055555555530c in worker_waits () at ...` or `#0  apply (it=...) at ...`
            let rest = line.split_once("  ").map_or("", |(_, r)| r);
            let rest = rest.split_once(" in ").map_or(rest, |(_, r)| r);
            let name = rest.split([' ', '(']).next().unwrap_or("").to_string();
            frames.entry(tid).or_default().push(name);
        }
    }
    Some(frames)
}

/// The fixture's own functions, in order: what both debuggers must agree on.
fn own(names: &[String]) -> Vec<String> {
    let mine = [
        "apply",
        "main",
        "worker",
        "worker_reads",
        "worker_sleeps",
        "worker_waits",
    ];
    names
        .iter()
        .filter(|n| mine.contains(&n.as_str()))
        .cloned()
        .collect()
}

#[test]
fn gdb_reads_a_gcore_written_core_and_names_the_same_frames() {
    let program = fixture("crash");
    let mut scry = Scry::spawn(&program, &["threads"]);
    let stop = scry.ok("String(cont())");
    assert!(stop.starts_with("signal SIGSEGV fault_addr=0x1c"), "{stop}");
    let output = scry.ok("output()");
    let threads = threads_printed(&output);
    let dir = temp_path("gcore");
    std::fs::create_dir_all(&dir).unwrap();
    let core = dir.join("snapshot.core");
    let written = scry.ok(&format!(
        "const w = gcore({:?}); [w.path, w.size, w.threads].join(' ')",
        core.to_str().unwrap()
    ));
    let size = std::fs::metadata(&core).unwrap().len();
    assert_eq!(
        written,
        format!("{} {size} 4", core.to_str().unwrap()),
        "gcore's answer names the file and its size"
    );
    // The process is untouched: it still stops where it did.
    assert_eq!(scry.ok("state.symbol_at(state.pc).split('+')[0]"), "apply");
    let fpu = "JSON.stringify([0, 1, 2, 3, 4, 5, 6, 7].map(i => state.registers['ymm' + i].hex).concat([state.registers.mxcsr, state.registers.st0]))";
    let live_fpu = scry.ok(fpu);

    let mut reader = Scry::start(&["--core", core.to_str().unwrap(), program.to_str().unwrap()]);
    let again = reader.ok(&format!(
        "String(core({:?}, {:?}))",
        core.to_str().unwrap(),
        program.to_str().unwrap()
    ));
    // (Less the note about the program's output, which the core does not hold.)
    let stop = match stop.rsplit_once(" [") {
        Some((line, note)) if note.ends_with("bytes of output]") => line,
        _ => stop.as_str(),
    };
    assert_eq!(
        again, stop,
        "the core's first stop is the stop it was written at"
    );
    assert_eq!(
        reader.ok(fpu),
        live_fpu,
        "floating-point registers (NT_X86_XSTATE)"
    );
    let mut ours: HashMap<i64, Vec<String>> = HashMap::new();
    for (tid, _) in threads.values() {
        reader.ok(&format!("thread.select({tid})"));
        ours.insert(*tid, own(&frame_names(&mut reader)));
    }
    assert_eq!(ours[&threads["main"].0], ["apply", "main"]);
    assert_eq!(ours[&threads["reader"].0], ["worker_reads", "worker"]);
    // With another thread selected, the core still holds the crash: its thread comes first,
    // with its signal (before, the selection went first and the signal was dropped).
    scry.ok(&format!("thread.select({})", threads["reader"].0));
    let selected = dir.join("selected.core");
    scry.ok(&format!("gcore({:?})", selected.to_str().unwrap()));
    let mut second = Scry::start(&[]);
    let reopened = second.ok(&format!(
        "String(core({:?}, {:?}))",
        selected.to_str().unwrap(),
        program.to_str().unwrap()
    ));
    assert_eq!(reopened, stop, "the crash, whichever thread was selected");

    let Some(gdb) = gdb_frames(&program, &core) else {
        eprintln!("no gdb; compared nothing");
        return;
    };
    let gdb: HashMap<i64, Vec<String>> = gdb.into_iter().map(|(t, f)| (t, own(&f))).collect();
    assert_eq!(gdb, ours, "gdb's bt and scry's unwind() on the same core");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn gcore_defaults_to_core_pid_here() {
    let dir = temp_path("gcore-cwd");
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(SCRY)
        .args(["--", fixture("crash").to_str().unwrap()])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = line_reader(child.stdout.take().unwrap());
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "breakpoint.set('apply'); cont(); const w = gcore(); print(w.path, status().pid)\n;;"
    )
    .unwrap();
    stdin.flush().unwrap();
    let answer = lines.recv_timeout(RESPONSE_TIMEOUT).unwrap();
    let (path, pid) = answer.split_once(' ').unwrap();
    assert_eq!(path, format!("core.{pid}"));
    assert!(dir.join(path).is_file());
    drop(stdin);
    let _ = child.wait();

    // Stopped at a breakpoint, not a signal: the core's stop says where it was taken, and
    // the breakpoint's int3 is not in the code it holds.
    let mut scry = Scry::start(&[]);
    let stop = scry.ok(&format!(
        "String(core({:?}))",
        dir.join(path).to_str().unwrap()
    ));
    assert!(
        stop.starts_with("core at 0x") && stop.contains(" apply+"),
        "{stop}"
    );
    assert_ne!(scry.ok("state.memory(state.pc).u8()"), "204");
    assert!(scry
        .err("gcore()")
        .contains("gcore() writes a core of a live process"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn gcore_never_replaces_what_it_was_not_asked_to() {
    let dir = temp_path("gcore-refusals");
    std::fs::create_dir_all(&dir).unwrap();
    let mut scry = Scry::spawn(&fixture("crash"), &[]);
    scry.ok("cont()");
    let taken = dir.join("taken");
    std::fs::write(&taken, "keep me").unwrap();
    let p = taken.to_str().unwrap();
    let err = scry.err(&format!("gcore({p:?})"));
    assert!(
        err.contains("exists; gcore(") && err.contains("{overwrite: true}"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "keep me");
    let w = scry.ok(&format!("gcore({p:?}, {{overwrite: true}}).path"));
    assert_eq!(w, p);
    assert!(std::fs::read(&taken).unwrap().starts_with(b"\x7fELF"));
    // A device, a directory or a link is never replaced, even when asked.
    let link = dir.join("link");
    std::os::unix::fs::symlink(&taken, &link).unwrap();
    for path in ["/dev/full", dir.to_str().unwrap(), link.to_str().unwrap()] {
        let err = scry.err(&format!("gcore({path:?}, {{overwrite: true}})"));
        assert!(err.contains("is not a regular file"), "{path}: {err}");
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
    assert!(scry
        .err("gcore({overwrite: 1})")
        .contains("overwrite must be true or false"));
    assert!(scry
        .err("gcore({force: true})")
        .contains("unknown option 'force'"));
    // A deadline that passes leaves nothing behind, and says how to allow longer.
    let late = dir.join("late");
    let err = scry.err(&format!(
        "gcore({:?}, {{timeout: 0.000001}})",
        late.to_str().unwrap()
    ));
    assert!(
        err.contains("the deadline passed") && err.contains("{timeout: secs}"),
        "{err}"
    );
    assert!(!late.exists());
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        2,
        "no partial file left"
    );
    // A read-only session writes nothing, on disk either.
    let mut ro = Scry::start(&["--read-only", "--", fixture("crash").to_str().unwrap()]);
    let err = ro.err(&format!("gcore({:?})", dir.join("ro").to_str().unwrap()));
    assert!(
        err.contains("read-only session: cannot write a core file"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_core_from_another_machine_finds_its_files_through_solib_dir_and_sysroot() {
    // The program ran (and crashed) at a path that is gone when the core is read.
    let dir = temp_path("elsewhere");
    let gone = dir.join("build/bin");
    std::fs::create_dir_all(&gone).unwrap();
    let exe = gone.join("crash");
    std::fs::copy(fixture("crash"), &exe).unwrap();
    let c = crash(&exe, &[]);
    let copies = dir.join("copies");
    std::fs::create_dir_all(&copies).unwrap();
    std::fs::copy(&exe, copies.join("crash")).unwrap();
    let sysroot = dir.join("sysroot");
    let in_root = sysroot.join(gone.strip_prefix("/").unwrap());
    std::fs::create_dir_all(&in_root).unwrap();
    std::fs::copy(&exe, in_root.join("crash")).unwrap();
    std::fs::remove_file(&exe).unwrap();

    let core = c.core.to_str().unwrap();
    let mut lost = Scry::start(&["--core", core]);
    let problems = lost.ok("status().problems.join('\\n')");
    assert!(
        problems.contains(&format!("{}: not found", exe.display())),
        "{problems}"
    );
    assert!(lost
        .err("state.instruction")
        .contains("was not found here (--sysroot / --solib-dir)"));
    assert_ne!(lost.ok("String(state.symbol_at(state.pc))"), "apply+0x12");

    for option in [
        ["--solib-dir", copies.to_str().unwrap()],
        ["--sysroot", sysroot.to_str().unwrap()],
    ] {
        let mut scry = Scry::start(&[option[0], option[1], "--core", core]);
        assert_eq!(scry.ok("status().problems.length"), "0", "{option:?}");
        assert_eq!(
            &frame_names(&mut scry)[..2],
            ["apply", "main"],
            "{option:?}"
        );
        assert!(scry.ok("state.instruction.text").contains("+0x1c]"));
    }
    // config reads the core again with the new places.
    lost.ok(&format!(
        "config.solib_dirs = [{:?}]",
        copies.to_str().unwrap()
    ));
    assert_eq!(&frame_names(&mut lost)[..2], ["apply", "main"]);
    assert!(lost
        .err("config.sysroot = '/no/such/dir'")
        .contains("not a directory"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn truncated_and_corrupt_cores_answer_what_they_hold() {
    let c = crash(&fixture("crash"), &[]);
    let bytes = std::fs::read(&c.core).unwrap();
    // Cut where the stack is: registers and code are still there, the stack is not.
    let mut scry = Scry::start(&[
        "--core",
        c.core.to_str().unwrap(),
        c.program.to_str().unwrap(),
    ]);
    let sp = scry.num("state.sp");
    drop(scry);
    let phoff = u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as usize;
    let phnum = u16::from_le_bytes(bytes[56..58].try_into().unwrap()) as usize;
    let segment_of = |addr: u64| {
        (0..phnum).find_map(|i| {
            let p = &bytes[phoff + 56 * i..phoff + 56 * (i + 1)];
            let field = |at: usize| u64::from_le_bytes(p[at..at + 8].try_into().unwrap());
            let (offset, vaddr, memsz) = (field(8), field(16), field(40));
            (vaddr <= addr && addr < vaddr + memsz).then_some(offset + (addr - vaddr))
        })
    };
    let cut_at = segment_of(sp).expect("sp's segment") as usize;
    let truncated = c.dir.join("truncated.core");
    std::fs::write(&truncated, &bytes[..cut_at]).unwrap();
    let mut scry = Scry::start(&[]);
    let stop = scry.ok(&format!(
        "String(core({:?}, {:?}))",
        truncated.to_str().unwrap(),
        c.program.to_str().unwrap()
    ));
    assert!(
        stop.starts_with("signal SIGSEGV fault_addr=0x1c at 0x"),
        "{stop}"
    );
    assert!(stop.contains("the core is truncated"), "{stop}");
    assert_eq!(scry.num("state.sp"), sp);
    assert!(scry.ok("state.instruction.text").contains("+0x1c]"));
    let e = scry.err("state.memory(state.sp).u64()");
    assert!(e.contains("the core file is truncated"), "{e}");
    // The stack walk ends early, saying so, instead of failing.
    let rows = scry.ok("state.unwind().length");
    assert!(rows.parse::<u32>().unwrap() >= 1);

    // Not a core at all: one clear line, and the session goes on.
    let junk = c.dir.join("junk.core");
    std::fs::write(
        &junk,
        "this is not an ELF file at all, just words. ".repeat(4),
    )
    .unwrap();
    let e = scry.err(&format!("core({:?})", junk.to_str().unwrap()));
    assert!(e.ends_with("junk.core: not an ELF file"), "{e}");
    std::fs::write(&junk, b"\x7fELF").unwrap();
    let e = scry.err(&format!("core({:?})", junk.to_str().unwrap()));
    assert!(e.contains("shorter than an ELF header"), "{e}");
    let e = scry.err(&format!("core({:?})", c.program.to_str().unwrap()));
    assert!(e.contains("give the core first, the program second"), "{e}");
    let e = scry.err("core('/no/such/core')");
    assert!(e.starts_with("error: core: /no/such/core:"), "{e}");
    // Only the header: no threads, no memory, and it says so.
    let header_only = c.dir.join("header.core");
    std::fs::write(&header_only, &bytes[..64]).unwrap();
    scry.ok(&format!("core({:?})", header_only.to_str().unwrap()));
    let e = scry.err("state.pc");
    assert!(e.contains("holds no registers"), "{e}");
    assert!(scry.ok("status().problems.join(' ')").contains("truncated"));
}

#[test]
fn the_command_line_sessions_and_mcp_open_cores() {
    let c = crash(&fixture("crash"), &[]);
    let core = c.core.to_str().unwrap();
    let program = c.program.to_str().unwrap();

    // A program's arguments mean nothing to a core.
    let out = Command::new(SCRY)
        .args(["--core", core, program, "extra"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not its arguments"));
    let out = Command::new(SCRY)
        .args(["--core", "/no/such/core"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("scry: core: /no/such/core:"));

    // A named session prints the crash and the orientation first.
    let runtime = temp_path("core-sessions");
    std::fs::create_dir_all(&runtime).unwrap();
    let session = |args: &[&str]| {
        Command::new(SCRY)
            .arg("session")
            .args(args)
            .env("XDG_RUNTIME_DIR", &runtime)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let start = session(&["start", "postmortem", "--core", core, program]);
    let text = String::from_utf8_lossy(&start.stdout).into_owned();
    assert!(start.status.success(), "{start:?}");
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("signal SIGSEGV fault_addr=0x1c at 0x"),
        "{text}"
    );
    assert!(
        lines
            .next()
            .unwrap()
            .contains(&format!("(core file {core} of pid")),
        "{text}"
    );
    assert!(lines.next().unwrap().contains("help('core')"), "{text}");
    let eval = session(&[
        "eval",
        "postmortem",
        "-e",
        "state.unwind().map(r => r.symbol.split('+')[0]).join(' ')",
    ]);
    assert_eq!(String::from_utf8_lossy(&eval.stdout).trim(), "apply main");
    let list = session(&["list"]);
    let row = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(row.contains(&format!("\t{program}\tcore\t")), "{row}");
    let eval = session(&["eval", "postmortem", "-e", "cont()"]);
    assert_eq!(eval.status.code(), Some(1));
    let stop = session(&["stop", "postmortem"]);
    assert_eq!(
        String::from_utf8_lossy(&stop.stdout).lines().next(),
        Some(format!("closed the core file {core}").as_str())
    );
    let _ = std::fs::remove_dir_all(&runtime);

    // MCP: scry_start with a core.
    let mut server = Command::new(SCRY)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = line_reader(server.stdout.take().unwrap());
    let mut stdin = server.stdin.take().unwrap();
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "scry_start", "arguments": {"core": core, "program": program}}});
    writeln!(stdin, "{call}").unwrap();
    stdin.flush().unwrap();
    let reply: serde_json::Value =
        serde_json::from_str(&lines.recv_timeout(RESPONSE_TIMEOUT).unwrap()).unwrap();
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    assert!(
        text.starts_with("signal SIGSEGV fault_addr=0x1c at 0x"),
        "{text}"
    );
    drop(stdin);
    let _ = server.wait();
}

/// In pipe mode nothing is printed before the first chunk, so `:status` and `status().stop`
/// are where a harness that started `scry --core` reads the crash: the signal and the fault
/// address, exactly as `core()` returns them (before, `:status` said only `at 0x...` and
/// nothing at all gave the signal).
#[test]
fn pipe_mode_status_says_the_crash_of_a_core_opened_on_the_command_line() {
    let c = crash(&fixture("crash"), &[]);
    let core = c.core.to_str().unwrap();
    let program = c.program.to_str().unwrap();
    let mut scry = Scry::start(&["--core", core, program]);
    let status = scry.ok(":status");
    let first = status.lines().next().unwrap();
    let pc = scry.num("state.pc");
    let line = source_line("it->value = v + (int)ratio;");
    assert!(
        first.contains(&format!(
            "(core file {core} of pid {}): signal SIGSEGV fault_addr=0x1c at {pc:#x} apply+0x",
            scry.num("status().pid")
        )) && first.contains(&format!(
            "crash.c:{line} [0x1c is NULL + 28: a member or element of a NULL pointer];"
        )),
        "{status}"
    );
    let stop = scry.ok("status().stop");
    assert!(first.contains(&format!("): {stop};")), "{stop} | {status}");
    assert_eq!(scry.ok(&format!("String({})", core_arg(&c))), stop);
}

/// `gcore()` in a logpoint's listener, where only the event's thread is stopped: every thread
/// is stopped first, so the core holds all of them with their registers (it held the event's
/// thread alone, the others listed as skipped), and the run goes on losing no hit.
#[test]
fn gcore_inside_a_logpoint_listener_holds_every_thread() {
    let program = fixture("logpoints");
    let mut scry = Scry::spawn(&program, &["busy", "8", "2000"]);
    let path = temp_path("listener-core");
    let path = path.to_str().unwrap();
    scry.ok(&format!(
        "ctx.n = 0; breakpoint.set('hit'); addEventListener('breakpoint', e => {{
           if (++ctx.n === 500) {{
             ctx.g = gcore({path:?})
             ctx.live = thread.list().length
             ctx.running = thread.list().filter(t => t.state === 'running').length
           }}
           return 'continue' }})"
    ));
    let end = scry.ok("cont({timeout: 60})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert_eq!(scry.ok("output()"), "total 16000");
    assert_eq!(scry.num("ctx.n"), 16000);
    assert_eq!(scry.ok("String(ctx.g.skipped_threads)"), "undefined");
    let live = scry.num("ctx.live");
    assert!(live > 1, "{live} threads");
    assert_eq!(scry.num("ctx.g.threads"), live);
    assert_eq!(scry.num("ctx.running"), 0);
    let mut core = Scry::start(&["--core", path, program.to_str().unwrap()]);
    assert_eq!(core.num("thread.list().length"), live);
    assert_eq!(core.ok("status().problems.length"), "0");
    assert_eq!(
        core.ok("thread.list().every(t => t.pc > 0 && t.symbol) + ''"),
        "true"
    );
}

#[test]
fn a_core_opened_with_another_program_says_so_even_without_build_ids() {
    let crash = fixture_with("crash", &["-g", "-O0", "-Wl,--build-id=none"]);
    let other = fixture_with("loop", &["-g", "-O0", "-Wl,--build-id=none"]);
    let dir = temp_path("wrong-program");
    std::fs::create_dir_all(&dir).unwrap();
    let core = dir.join("crash.core");
    let mut scry = Scry::spawn(&crash, &[]);
    assert!(scry.ok("cont()").starts_with("signal SIGSEGV"));
    scry.ok(&format!("gcore({:?})", core.to_str().unwrap()));
    drop(scry);
    let core = core.to_str().unwrap();
    // The right program: nothing to say.
    let mut right = Scry::start(&["--core", core, crash.to_str().unwrap()]);
    assert_eq!(right.ok("status().problems.length"), "0");
    // Another one: the first stop and status().problems say it, naming the program.
    let mut wrong = Scry::start(&["--core", core, other.to_str().unwrap()]);
    let problems = wrong.ok("status().problems.join('\\n')");
    assert!(
        problems.contains(&format!(
            "{} is not the program that dumped this core (its ELF headers differ",
            other.display()
        )),
        "{problems}"
    );
    assert!(wrong
        .ok("String(status().stop)")
        .contains("is not the program that dumped this core"));
    let _ = std::fs::remove_dir_all(dir);
}
