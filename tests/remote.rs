//! The GDB-remote backend (issue 23) against the real gdbserver on loopback: the same JS
//! calls answer as for a local process (breakpoints by name, logpoint counts, typed values,
//! registers, memory, watchpoints, a crash with its fault address), the program does what it
//! does alone (its output and exit code, as gdbserver reports them), detach leaves it
//! running, and a stub that closes, stays silent or sends garbage is a one-line error.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;

/// Appends every line `pipe` gives to `sink`, on a thread of its own.
fn collect_lines(pipe: Box<dyn Read + Send>, sink: &Arc<Mutex<String>>) {
    let sink = sink.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            let mut text = sink.lock().unwrap();
            text.push_str(&line);
            text.push('\n');
        }
    });
}

/// Starts a stub, its stdout (and stderr when `stderr_too`; else it is dropped) collected
/// line by line; `None`, said loudly, when the stub is not installed (.ci/run installs
/// gdbserver and qemu-user; a machine without them skips these tests).
fn spawn_collecting(mut command: Command, stderr_too: bool) -> Option<(Child, Arc<Mutex<String>>)> {
    let stderr = if stderr_too {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    let Ok(mut child) = command.spawn() else {
        eprintln!(
            "{} is not installed: skipping",
            command.get_program().to_string_lossy()
        );
        return None;
    };
    let output = Arc::new(Mutex::new(String::new()));
    collect_lines(Box::new(child.stdout.take().unwrap()), &output);
    if let Some(err) = child.stderr.take() {
        collect_lines(Box::new(err), &output);
    }
    Some((child, output))
}

/// gdbserver running `program` on a free loopback port; its output (the program's, and its
/// own messages) collected.
struct Stub {
    child: Child,
    port: u16,
    output: Arc<Mutex<String>>,
}

impl Stub {
    fn start(program: &Path, args: &[&str]) -> Option<Stub> {
        let mut argv = vec!["--once", "127.0.0.1:0", program.to_str().unwrap()];
        argv.extend_from_slice(args);
        Stub::run(&argv)
    }

    /// gdbserver attached to the running process `pid`.
    fn attach(pid: u32) -> Option<Stub> {
        Stub::run(&["--once", "--attach", "127.0.0.1:0", &pid.to_string()])
    }

    fn run(argv: &[&str]) -> Option<Stub> {
        let mut gdbserver = Command::new("gdbserver");
        gdbserver.args(argv);
        let (child, output) = spawn_collecting(gdbserver, true)?;
        let deadline = Instant::now() + Duration::from_secs(10);
        let port = loop {
            let text = output.lock().unwrap().clone();
            if let Some(rest) = text.split("Listening on port ").nth(1) {
                break rest.lines().next().unwrap().trim().parse().unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "gdbserver did not listen:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        Some(Stub {
            child,
            port,
            output,
        })
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn output(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    /// Waits for gdbserver to end (it does when its process does, with `--once`).
    fn wait_end(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "gdbserver still runs:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        self.output()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// QEMU's user-mode emulator running `program` with its gdbstub on a free loopback port
/// (`qemu-x86_64 -g PORT`); the program's output collected.
struct Qemu {
    child: Child,
    port: u16,
    output: Arc<Mutex<String>>,
}

impl Qemu {
    fn start(program: &Path, args: &[&str]) -> Option<Qemu> {
        // A port free a moment ago: qemu takes a number, not 0.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut qemu = Command::new("qemu-x86_64");
        qemu.args(["-g", &port.to_string(), program.to_str().unwrap()])
            .args(args);
        let (child, output) = spawn_collecting(qemu, false)?;
        // Listening, seen in /proc/net/tcp (a probe connection would take the stub's one
        // accept).
        let listening = format!(":{port:04X} 00000000:0000 0A");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read_to_string("/proc/net/tcp").is_ok_and(|t| t.contains(&listening)) {
            assert!(Instant::now() < deadline, "qemu's gdbstub did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Qemu {
            child,
            port,
            output,
        })
    }
}

impl Drop for Qemu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn remote(stub: &Stub, program: &Path) -> Scry {
    Scry::start(&["--remote", &stub.addr(), program.to_str().unwrap()])
}

/// QEMU's user-mode gdbstub (7.2) reads no files (no vFile, no exec-file, no library list):
/// the modules come from the auxiliary vector, the local copy's program headers and the
/// loader's link_map in the program's memory. A breakpoint by name, a local, the stack, a
/// logpoint's count and the program's end answer as locally.
#[test]
fn breakpoints_and_modules_over_qemus_gdbstub() {
    let program = fixture("remote_counter");
    let Some(mut stub) = Qemu::start(&program, &["6"]) else {
        return;
    };
    let mut scry = Scry::start(&[
        "--remote",
        &format!("127.0.0.1:{}", stub.port),
        program.to_str().unwrap(),
    ]);
    let names = scry.ok("modules().map(m => m.name).join(' ')");
    assert!(
        names.starts_with("remote_counter") && names.contains("libc.so.6"),
        "{names}"
    );
    assert_eq!(scry.ok("breakpoint.set('tally')"), "1");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("breakpoint 1 at ") && stop.contains("tally+"),
        "{stop}"
    );
    assert!(stop.contains("remote_counter.c:"), "{stop}");
    assert_eq!(scry.ok("state.var('k')"), "1");
    let frames = scry.ok("state.unwind().map(r => r.symbol.split('+')[0]).join(' ')");
    assert!(frames.starts_with("tally main"), "{frames}");
    // The registers after a commented-out part of QEMU's description are where it says:
    // fs_base is the thread pointer (glibc's TCB begins with its own address), and the SSE
    // registers are sent (fs_base read cr0, 24 bytes on, and xmm0 was "not sent").
    assert_eq!(
        scry.ok("const fs = state.registers.fs_base; state.memory(fs).u64() == fs"),
        "true"
    );
    assert_eq!(scry.ok("typeof state.registers.xmm0"), "object");
    scry.ok("breakpoint.remove(1); globalThis.seen = []");
    scry.ok("breakpoint.set('tally', {log: e => { seen.push(Number(state.var('k'))) }})");
    let end = scry.ok("cont()");
    assert_eq!(end, "exited with code 6", "{end}");
    assert_eq!(scry.ok("seen.join(',')"), "2,3,4,5,6");
    scry.finish();
    let deadline = Instant::now() + Duration::from_secs(20);
    while stub.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "qemu still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    let out = stub.output.lock().unwrap().clone();
    assert!(out.contains("sum 21"), "{out}");
}

/// A stub that gives no siginfo (QEMU's) says nothing of where a signal came from: a NULL
/// write's SIGSEGV read as "sent by process 0" (a zeroed siginfo is SI_USER from pid 0).
#[test]
fn a_signal_over_a_stub_without_siginfo_names_no_sender() {
    let program = fixture("remote_counter");
    let Some(_stub) = Qemu::start(&program, &["2", "crash"]) else {
        return;
    };
    let mut scry = Scry::start(&[
        "--remote",
        &format!("127.0.0.1:{}", _stub.port),
        program.to_str().unwrap(),
    ]);
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("signal SIGSEGV at "), "{stop}");
    assert!(!stop.contains("sent by"), "{stop}");
    scry.ok("kill()");
}

/// A static program under QEMU has no loader: its first stop is its entry point (running
/// to it ran the whole program), and a watchpoint QEMU cannot hold is one line naming the
/// packet.
#[test]
fn a_static_program_over_qemus_gdbstub_stops_at_its_entry() {
    let program = fixture_with("remote_counter", &["-g", "-O0", "-static"]);
    let Some(_stub) = Qemu::start(&program, &["3"]) else {
        return;
    };
    let mut scry = Scry::start(&[
        "--remote",
        &format!("127.0.0.1:{}", _stub.port),
        program.to_str().unwrap(),
    ]);
    assert_eq!(scry.ok("state.var('total')"), "0");
    assert!(scry.ok("modules()").contains("remote_counter"));
    let stop = scry.ok("breakpoint.set('tally'); cont()");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    let refused = scry.err("watchpoint.set('total')");
    assert!(refused.contains("'Z2'"), "{refused}");
    assert_eq!(
        scry.ok("breakpoint.remove(1); cont()"),
        "exited with code 3"
    );
}

/// QEMU 7.2's user-mode stub does not stop a program's threads together: each thread that
/// traps sends a stop reply of its own, also as the answer to other requests. scry never
/// counts on silently: the run ends in a one-line error in time (mostly: a stop reply where
/// another answer belongs), or gets through and says that other threads' hits may be
/// missing, or counts them all.
#[test]
fn several_threads_under_qemus_gdbstub_are_said_to_be_unreliable() {
    let program = fixture("logpoints");
    let Some(_stub) = Qemu::start(&program, &["busy", "4", "100"]) else {
        return;
    };
    let mut scry = Scry::start(&[
        "--remote",
        &format!("127.0.0.1:{}", _stub.port),
        program.to_str().unwrap(),
    ]);
    let started = Instant::now();
    let r =
        scry.eval("ctx.n = 0; breakpoint.set('hit', {log: e => { ctx.n++ }}); cont({timeout: 60})");
    assert!(started.elapsed() < Duration::from_secs(30), "{r:?}");
    if r.ok {
        assert!(
            r.body.contains("does not stop several threads together") || scry.num("ctx.n") == 400,
            "{r:?}"
        );
    } else {
        // Mostly the stop reply in place of an answer; the stub's stream can also be out of
        // step in other ways (an `E` for a thread it just reported): an error either way,
        // one line, in time.
        assert_eq!(r.body.trim_end().lines().count(), 1, "{r:?}");
        assert!(r.body.starts_with("error: "), "{r:?}");
    }
}

/// A breakpoint by name, its arguments and a global, a counting logpoint, the stack, and
/// the program's own end: all as locally, over gdbserver.
#[test]
fn breakpoints_values_and_counts_over_gdbserver() {
    let program = fixture("remote_counter");
    let Some(mut stub) = Stub::start(&program, &["6"]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    assert_eq!(
        scry.ok("process.list()[0].program"),
        program.to_str().unwrap()
    );
    // Stopped at the entry point, as a local spawn: main is not running yet.
    assert_eq!(scry.ok("state.var('total')"), "0");
    assert_eq!(scry.ok("breakpoint.set('tally')"), "1");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("breakpoint 1 at ") && stop.contains("tally+"),
        "{stop}"
    );
    assert!(stop.contains("remote_counter.c:"), "{stop}");
    assert_eq!(scry.ok("state.var('k')"), "1");
    let frames = scry.ok("state.unwind().map(r => r.symbol.split('+')[0]).join(' ')");
    assert!(frames.starts_with("tally main"), "{frames}");
    assert_eq!(
        scry.ok("cont(); state.var('k') + ' ' + state.var('total')"),
        "2 1"
    );
    // A stop's registers are read over the wire only when asked, yet `prev` after a plain
    // step still has the stop before it (the stop a run ends with is read for it).
    let pcs = scry.ok("const a = step().pc; step(); hex(a) + ' ' + hex(prev.pc)");
    let (first, prev) = pcs.split_once(' ').unwrap();
    assert!(first.starts_with("0x"), "{pcs}");
    assert_eq!(first, prev, "{pcs}");
    // A counting logpoint instead of stops: the other four calls, then the program's end.
    scry.ok("breakpoint.remove(1); globalThis.seen = []");
    scry.ok("breakpoint.set('tally', {log: e => { seen.push(Number(state.var('k'))) }})");
    let end = scry.ok("cont()");
    assert_eq!(end, "exited with code 6", "{end}");
    assert_eq!(scry.ok("seen.join(',')"), "3,4,5,6");
    scry.finish();
    let out = stub.wait_end();
    assert!(out.contains("sum 21"), "{out}");
    assert!(out.contains("exited with status 6"), "{out}");
}

/// Hits of hardware breakpoints over gdbserver pass their sites with a continue alone (the
/// kernel's RF, tested at the first hit); every hit is still counted once: at a function's
/// first instruction (where its argument is still in rdi), at a call (a branch, where the test is not made and the thread steps
/// off), and after a listener wrote a register (it steps off as before).
#[test]
fn every_hit_is_counted_once_whichever_way_its_site_is_passed() {
    let program = fixture("remote_counter");
    let Some(mut stub) = Stub::start(&program, &["300"]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    scry.ok(
        "ctx.calls = 0; ctx.entries = 0;\
         const call = state.disasm('main').find(i => i.mnemonic === 'call' && String(i.text).includes('tally'));\
         breakpoint.set(call.addr, {log: e => { ctx.calls++ }});\
         breakpoint.set(symbols('tally')[0].addr, {log: e => {\
           ctx.entries++;\
           if (Number(state.registers.rdi) === 300) state.registers.rdi = 1000 }})",
    );
    let end = scry.ok("cont()");
    assert_eq!(end, "exited with code 44", "{end}");
    assert_eq!(scry.ok("ctx.calls + ' ' + ctx.entries"), "300 300");
    scry.finish();
    // 1 + ... + 299, and 1000 for the last call.
    let out = stub.wait_end();
    assert!(out.contains("sum 45850"), "{out}");
}

/// Threads over gdbserver: `finish()` leaves a stop at the return address every worker
/// reaches, and a removed breakpoint leaves the other threads' hits in the stub's replies.
/// A late hit of a site taken out is run over, never a signal: it was reported as SIGTRAP
/// and passed on at the next resume, and the program was `killed by SIGTRAP`. Thread
/// listeners, which hear nothing over a stub yet, are told so.
#[test]
fn late_hits_of_removed_sites_never_reach_the_program() {
    let program = common::fixture_with("remote_workers", &["-g", "-O0", "-pthread"]);
    for _ in 0..2 {
        let Some(mut stub) = Stub::start(&program, &[]) else {
            return;
        };
        let mut scry = remote(&stub, &program);
        scry.ok("breakpoint.set('tally')");
        let odd = scry.ok(
            "ctx.r = []; for (let i = 0; i < 10; i++) { const s = String(cont()); ctx.r.push(s); if (!s.startsWith('breakpoint')) break; ctx.r.push(String(finish())); } ctx.r.filter(x => !x.startsWith('breakpoint') && !x.startsWith('finish')).join('|')",
        );
        assert_eq!(odd, "", "{}", scry.ok("ctx.r.join('\\n')"));
        let end = scry.ok("breakpoint.remove(1); String(cont())");
        assert_eq!(end, "exited with code 2", "{end}");
        scry.finish();
        assert!(stub.wait_end().contains("checksum 7350"));
    }
    // A thread listener hears nothing over a stub yet: said, never silent.
    let Some(_stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&_stub, &program);
    scry.ok("addEventListener('thread', e => {})");
    let end = scry.ok("cont()");
    assert!(
        end.starts_with("exited with code 2")
            && end.contains("thread listeners hear no thread starts"),
        "{end}"
    );
    scry.finish();
}

/// `next()` over gdbserver while a handled SIGALRM comes every millisecond: each handler runs
/// through, and the step ends at the next line (every next() ended in the handler, then on
/// the same line again).
#[test]
fn next_over_a_stub_runs_signal_handlers_through() {
    let program = common::fixture_with("remote_alarm", &["-g", "-O0"]);
    let src = include_str!("../fixtures/remote_alarm.c");
    let (the_loop, after) = (
        common::line_of(src, "// the loop"),
        common::line_of(src, "// after"),
    );
    let Some(mut stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    scry.ok(&format!(
        "breakpoint.set('remote_alarm.c:{the_loop}'); cont()"
    ));
    let stop = scry.ok("breakpoint.remove(1); next({timeout: 60})");
    assert!(stop.contains(&format!("remote_alarm.c:{after}")), "{stop}");
    assert_eq!(scry.ok("state.var('calls')"), "3000");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    scry.finish();
    assert!(stub.wait_end().contains("calls=3000 ticks=1"));
}

/// A stub killed while the program is stopped: every call after says the stub is gone and
/// that the program's fate is not known (it said "no live process (start one with spawn(path)
/// or attach(pid))", and status() "ended").
#[test]
fn a_stub_that_dies_is_named_in_every_call_after() {
    let program = fixture("remote_counter");
    let Some(mut stub) = Stub::start(&program, &["3"]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    assert!(scry
        .ok("breakpoint.set('tally'); cont()")
        .starts_with("breakpoint 1 "));
    let _ = stub.child.kill();
    let _ = stub.child.wait();
    let first = scry.err("state.unwind(); state.memory(state.registers.rsp).u64()");
    assert!(first.contains("remote stub at 127.0.0.1:"), "{first}");
    let later = scry.err("state.pc");
    assert!(
        later.contains("remote stub at 127.0.0.1:") && later.contains("not known"),
        "{later}"
    );
    assert!(!later.contains("start one"), "{later}");
    let status = scry.ok("status().ended");
    assert!(status.contains("remote stub"), "{status}");
}

/// A crash is the signal with its fault address; registers and memory read and write; a
/// watchpoint reports the store that fired it.
#[test]
fn a_crash_registers_memory_and_a_watchpoint_over_gdbserver() {
    let program = fixture("remote_counter");
    let Some(stub) = Stub::start(&program, &["4", "crash"]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    let total = nm_address(&program, "total");
    let load = scry.num("symbols('total')[0].addr") - total;
    assert_eq!(load % 4096, 0);
    let watch = scry.ok("watchpoint.set('total')");
    assert_eq!(watch, "1");
    let hit = scry.ok("cont()");
    assert!(
        hit.starts_with("watchpoint 1 (total) write") && hit.contains("0 -> 1"),
        "{hit}"
    );
    assert!(hit.contains("tally+"), "{hit}");
    scry.ok("watchpoint.remove(1)");
    // Memory: the global as bytes, written and read back through the stub.
    let addr = format!("{:#x}", load + total);
    assert_eq!(scry.num(&format!("state.memory({addr}).u64()")), 1);
    scry.ok(&format!("state.memory({addr}).write_u64(100)"));
    assert_eq!(scry.ok("state.var('total')"), "100");
    scry.ok(&format!("state.memory({addr}).write_u64(1)"));
    let crash = scry.ok("cont()");
    assert!(
        crash.starts_with("signal SIGSEGV fault_addr=0x8 at ") && crash.contains("tally+"),
        "{crash}"
    );
    assert_eq!(scry.ok("state.var('k')"), "4");
    // A register write goes to the stub and is what reads see.
    let rax = scry.num("state.registers.rax");
    scry.ok("state.registers.rax = 0x1234");
    assert_eq!(scry.num("state.registers.rax"), 0x1234);
    scry.ok(&format!("state.registers.rax = {rax}"));
    // A core of the remote process at its crash, read back here and by gdb.
    let core = temp_path("remote-gcore");
    let written = scry.ok(&format!("String(gcore({:?}))", core.to_str().unwrap()));
    assert!(written.contains("threads\t1"), "{written}");
    let end = scry.ok("cont()");
    assert_eq!(end, "killed by SIGSEGV", "{end}");
    scry.finish();
    let mut opened = Scry::start(&["--core", core.to_str().unwrap(), program.to_str().unwrap()]);
    let stop = opened.ok("String(status().stop)");
    assert!(stop.contains("SIGSEGV") && stop.contains("tally"), "{stop}");
    assert_eq!(
        opened.ok("state.var('k') + ' ' + state.var('total')"),
        "4 10"
    );
    let frames = opened.ok("state.unwind().map(r => r.symbol.split('+')[0]).join(' ')");
    assert!(frames.starts_with("tally main"), "{frames}");
    opened.finish();
    if let Some(bt) = gdb_prints_core(&program, &core) {
        assert!(bt.contains("tally") && bt.contains("main"), "{bt}");
        assert!(bt.contains("SIGSEGV"), "{bt}");
    }
    let _ = std::fs::remove_file(&core);
}

/// gdb's account of a core (`bt`), if gdb is here.
fn gdb_prints_core(program: &Path, core: &Path) -> Option<String> {
    let out = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "bt"])
        .arg(program)
        .arg(core)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// System calls are caught through the stub (`QCatchSyscalls`): a stop at the entry with
/// the arguments read there, one at the return with the result, lines as locally; after
/// uncatch the program runs to its end as alone.
#[test]
fn system_calls_are_caught_over_gdbserver() {
    let program = fixture("remote_counter");
    let Some(mut stub) = Stub::start(&program, &["3"]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    assert_eq!(scry.ok("syscall.catch('write', {phase: 'both'})"), "1");
    let entry = scry.ok("ctx.s = cont(); String(ctx.s)");
    assert!(
        entry.starts_with(r#"syscall write(1, "sum 6\n", 6) at "#),
        "{entry}"
    );
    assert_eq!(scry.ok("ctx.s.phase + ' ' + ctx.s.fd"), "entry 1");
    let exit = scry.ok("cont()");
    assert!(
        exit.starts_with(r#"syscall write(1, "sum 6\n", 6) = 6 at "#),
        "{exit}"
    );
    assert!(scry.ok("syscall.list()").contains("write\tboth\t2"));
    scry.ok("syscall.uncatch(1)");
    assert_eq!(scry.ok("cont()"), "exited with code 3");
    scry.finish();
    let out = stub.wait_end();
    assert_eq!(out.matches("sum 6").count(), 1, "{out}");
}

/// A stub without a process (`gdbserver --multi`) runs PROGRAM with the arguments after it
/// (extended mode, `vRun`), stopped at its entry as a program gdbserver started, or attaches
/// to a process with `-p` (`vAttach`); without PROGRAM, and with arguments for a stub that
/// has its process, one line at start.
#[test]
fn a_stub_without_a_process_runs_the_program_or_attaches() {
    let program = fixture("remote_counter");
    let path = program.to_str().unwrap();
    let Some(mut stub) = Stub::run(&["--multi", "127.0.0.1:0"]) else {
        return;
    };
    let alone = |args: &[&str]| {
        let out = Command::new(SCRY)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let why = alone(&["--remote", &stub.addr()]);
    assert!(why.contains("give PROGRAM to run it there"), "{why}");
    let mut scry = Scry::start(&["--remote", &stub.addr(), path, "4"]);
    assert_eq!(scry.ok("state.var('total')"), "0");
    scry.ok("breakpoint.set('tally')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    assert_eq!(scry.ok("state.var('k')"), "1");
    scry.ok("breakpoint.remove(1)");
    assert_eq!(scry.ok("cont()"), "exited with code 4");
    scry.finish();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !stub.output().contains("exited with status 4") {
        assert!(Instant::now() < deadline, "{}", stub.output());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(stub.output().contains("sum 10"), "{}", stub.output());
    // The same stub, still up, attaches to a running process (`-p`, vAttach); the end of
    // the session detaches it, and it runs on to its own end.
    let ticker = fixture("ticker");
    let child = Command::new(&ticker)
        .arg("30")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let pid = child.id().to_string();
    let mut scry = Scry::start(&[
        "--remote",
        &stub.addr(),
        "-p",
        &pid,
        ticker.to_str().unwrap(),
    ]);
    assert_eq!(scry.num("status().pid"), u64::from(child.id()));
    scry.ok("breakpoint.set('tick')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    assert!(scry.num("state.var('ticks')") < 30);
    assert!(scry.finish().success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ticks=30\n");
    let _ = stub.child.kill();
    // A stub with its process takes no arguments.
    let Some(started) = Stub::start(&program, &["2"]) else {
        return;
    };
    let why = alone(&["--remote", &started.addr(), path, "9"]);
    assert!(why.contains("has its process already"), "{why}");
}

/// detach() takes scry's breakpoints out and leaves the program running: it prints and
/// exits as alone.
#[test]
fn detach_leaves_the_remote_program_running_as_alone() {
    let program = fixture("remote_counter");
    let Some(mut stub) = Stub::start(&program, &["3"]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    scry.ok("breakpoint.set('tally')");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 1"), "{stop}");
    let detached = scry.ok("detach()");
    assert!(detached.starts_with("detached"), "{detached}");
    let out = stub.wait_end();
    // gdbserver lets it go (it sees no end), and the program finishes alone.
    assert!(out.contains("Detaching from process"), "{out}");
    assert!(out.contains("sum 6"), "{out}");
    scry.finish();
}

/// A process gdbserver attached to stops where it is; the end of scry's input detaches
/// (an attached process is someone's), and the program runs on to its own end and code.
#[test]
fn an_attached_process_is_detached_at_the_end_and_runs_on() {
    let program = fixture("ticker");
    let mut child = Command::new(&program)
        .arg("30")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let Some(stub) = Stub::attach(child.id()) else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    let mut scry = remote(&stub, &program);
    assert_eq!(scry.num("status().pid"), u64::from(child.id()));
    scry.ok("breakpoint.set('tick')");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("breakpoint 1 at ") && stop.contains("tick"),
        "{stop}"
    );
    let before = scry.num("state.var('ticks')");
    assert!(before < 30, "{before}");
    let status = scry.finish();
    assert!(status.success(), "{status:?}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ticks=30\n");
}

/// A run's deadline stops the program with the interrupt byte: a `timeout` stop where it
/// was, its SIGINT never delivered (the program goes on), and kill() ends it.
#[test]
fn a_deadline_interrupts_the_remote_program() {
    let program = fixture("ticker");
    let Some(mut stub) = Stub::start(&program, &["1000"]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    let stop = scry.ok("cont({timeout: 0.5})");
    assert!(stop.starts_with("timeout at "), "{stop}");
    let ticks = scry.num("state.var('ticks')");
    assert!((1..1000).contains(&ticks), "{ticks}");
    scry.ok("breakpoint.set('tick')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    assert_eq!(scry.num("state.var('ticks')"), ticks);
    assert_eq!(scry.ok("kill()"), "killed by SIGKILL");
    scry.finish();
    let out = stub.wait_end();
    assert!(!out.contains("ticks="), "{out}");
}

/// A local copy of another build of the program is not read for the target's symbols:
/// its names and lines would be wrong. The program's names are then not found (its module is
/// left out), never another build's.
#[test]
fn a_local_file_of_another_build_is_not_used() {
    let program = fixture("remote_counter");
    let other = fixture_with("remote_counter", &["-g", "-O1"]);
    let Some(stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&stub, &other);
    let modules = scry.ok("modules()");
    assert!(!modules.contains("remote_counter"), "{modules}");
    assert!(modules.contains("libc.so.6"), "{modules}");
    let pending = scry.ok("breakpoint.set('tally')");
    assert!(pending.contains("pending"), "{pending}");
    // Said, not only absent.
    let problems = scry.ok("status().problems.join('\\n')");
    assert!(
        problems.contains(&format!(
            "{}: the local copy's build id differs from the target's",
            program.display()
        )),
        "{problems}"
    );
    scry.finish();
    // The right copy reads (the same program given by its own path).
    let Some(stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    assert!(scry.ok("modules()").contains("remote_counter"));
    scry.finish();
}

/// A fake stub: accepts one connection and answers each packet with what `answer` says
/// (`None`: silence).
fn fake_stub(answer: fn(&[u8]) -> Option<Vec<u8>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((mut conn, _)) = listener.accept() else {
            return;
        };
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let Ok(n) = conn.read(&mut chunk) else { return };
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
            while let (Some(start), Some(end)) = (
                buf.iter().position(|&b| b == b'$'),
                buf.iter().position(|&b| b == b'#'),
            ) {
                if end < start || buf.len() < end + 3 {
                    break;
                }
                let packet = buf[start + 1..end].to_vec();
                buf.drain(..end + 3);
                let _ = conn.write_all(b"+");
                match answer(&packet) {
                    Some(reply) => {
                        let sum = reply.iter().fold(0u8, |s, &b| s.wrapping_add(b));
                        let mut framed = b"$".to_vec();
                        framed.extend_from_slice(&reply);
                        framed.extend_from_slice(format!("#{sum:02x}").as_bytes());
                        let _ = conn.write_all(&framed);
                    }
                    None if packet == b"?" => return, // close the connection
                    None => {}
                }
            }
        }
    });
    port
}

fn start_fails(port: u16) -> (String, std::time::Duration) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_scry"))
        .args(["--remote", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    (err, started.elapsed())
}

/// Garbage, silence and a closed connection are each one line naming the stub, in bounded
/// time; nothing hangs.
#[test]
fn a_hostile_or_dead_stub_is_a_one_line_error() {
    let garbage = fake_stub(|p| {
        Some(match p {
            _ if p.starts_with(b"qSupported") => b"PacketSize=1000".to_vec(),
            b"?" => b"Tzz;\x01\x02".to_vec(),
            _ => Vec::new(),
        })
    });
    let (err, _) = start_fails(garbage);
    assert!(err.contains("reported no stopped process"), "{err}");
    let closes = fake_stub(|p| (p != b"?").then(|| b"PacketSize=1000".to_vec()));
    let (err, _) = start_fails(closes);
    assert!(err.contains("closed the connection"), "{err}");
    let silent = fake_stub(|_| None);
    let (err, took) = start_fails(silent);
    assert!(
        err.contains("no answer to 'qSupported' within 5 s"),
        "{err}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
    let nobody = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = nobody.local_addr().unwrap().port();
    drop(nobody);
    let (err, _) = start_fails(port);
    assert!(err.contains("cannot connect to 127.0.0.1:"), "{err}");
}

/// `remote()` from a script, in a session started on nothing; bad input is one line and
/// changes nothing.
#[test]
fn remote_from_javascript_and_its_bad_input() {
    let program = fixture("remote_counter");
    let Some(stub) = Stub::start(&program, &["2"]) else {
        return;
    };
    let mut scry = Scry::start(&[]);
    assert!(scry.err("remote(1234)").contains("addr must be a string"));
    assert!(scry
        .err("remote('127.0.0.1:1', {prog: 'x'})")
        .contains("unknown option 'prog' (program)"));
    let none = scry.err("remote('127.0.0.1:1')");
    assert!(none.contains("cannot connect to 127.0.0.1:1"), "{none}");
    assert!(scry.ok("help('remote')").contains("gdbserver --attach"));
    let stop = scry.ok(&format!(
        "remote('{}', {{program: '{}'}})",
        stub.addr(),
        program.display()
    ));
    assert!(stop.contains("_start"), "{stop}");
    scry.ok("breakpoint.set('tally')");
    assert!(scry.ok("cont()").contains("remote_counter.c:"));
    assert_eq!(scry.ok("state.var('k')"), "1");
    // A second remote() while this process lives is refused before anything connects.
    let again = scry.err("remote('127.0.0.1:1')");
    assert!(
        again.contains("is still live; kill() or detach() it first"),
        "{again}"
    );
    assert_eq!(scry.ok("state.var('k')"), "1");
    scry.finish();
}

/// The stub going away mid-session is an error for what needs it; the REPL lives on.
#[test]
fn a_stub_that_goes_away_leaves_scry_usable() {
    let program = fixture("remote_counter");
    let Some(mut stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    scry.ok("breakpoint.set('tally')");
    scry.ok("cont()");
    stub.child.kill().unwrap();
    stub.child.wait().unwrap();
    let err = scry.err("cont()");
    assert!(
        err.contains(&format!("remote stub at {}", stub.addr())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(scry.ok("1 + 1"), "2");
    scry.finish();
}

/// Signals the session passes (SIGCHLD here) are handed to the program by the stub itself
/// (`QPassSignals`): 2,000 of them cost no stop reply each, and the program takes every one.
#[test]
fn passed_signals_cost_no_round_trip_over_gdbserver() {
    let program = fixture("signal_flood");
    let Some(mut stub) = Stub::start(&program, &["2000"]) else {
        return;
    };
    let mut command = Command::new(common::SCRY);
    command
        .args(["--remote", &stub.addr(), program.to_str().unwrap()])
        .env("SCRY_TRACE", "1");
    let mut scry = Scry::start_command(command);
    assert_eq!(scry.ok("cont()"), "exited with code 0");
    let trace = scry.stderr();
    scry.finish();
    let out = stub.wait_end();
    assert!(out.contains("truth taken=2000"), "{out}");
    assert!(trace.contains("remote <- QPassSignals:"), "{trace}");
    // gdb numbers SIGCHLD 20 (0x14): no stop reply for it reached scry.
    let stops = trace.matches("remote -> T14").count();
    assert_eq!(stops, 0, "stop replies for SIGCHLD");
}

/// A signal the remote program ignores does nothing to it, so it passes without a stop, as
/// locally: the target's own `/proc/PID/status` (through the stub's vFile) says SIG_IGN.
/// The one raised after a handler is set stops, with the ignored ones behind it.
#[test]
fn a_signal_the_remote_program_ignores_passes_without_a_stop() {
    let program = fixture("remote_ignored");
    let Some(mut stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("signal SIGUSR1"), "{stop}");
    assert_eq!(scry.ok("print(state.var('phase'))"), "1");
    assert_eq!(scry.ok("cont()"), "exited with code 0");
    scry.finish();
    let out = stub.wait_end();
    assert!(out.contains("truth phase=1 handled=1"), "{out}");
}

/// An exec over gdbserver (`exec-events`) is a stop of its own, as locally: the old image's
/// breakpoints went with it and are armed again in the new one. Before, the exec's SIGTRAP
/// was a signal stop and the next resume passed it on, which killed the program.
#[test]
fn an_exec_over_gdbserver_is_a_stop_and_breakpoints_follow_it() {
    let program = fixture("exec_self");
    let Some(mut stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    scry.ok("breakpoint.set('work')");
    assert_eq!(scry.ok("cont(); state.var('x')"), "1");
    let exec = scry.ok("cont()");
    assert!(
        exec.starts_with("exec ") && exec.contains("exec_self"),
        "{exec}"
    );
    // The new image's work(), its caller the new main with its new argv.
    assert_eq!(scry.ok("cont(); state.var('x')"), "21");
    assert_eq!(scry.ok("state.var('argc', 1)"), "2");
    assert_eq!(scry.ok("cont()"), "exited with code 5");
    scry.finish();
    let out = stub.wait_end();
    assert!(
        out.contains("parent 2") && out.contains("child 42"),
        "{out}"
    );
}

/// Fork and vfork children over gdbserver (`fork-events`): each is cleaned of scry's int3s
/// before the stub lets it go (a child left with them was killed by SIGTRAP at its first
/// call of work()), the vfork child's shared memory included; with `follow_fork = 'child'`
/// the fork child is the process from then on and its parent runs on alone.
#[test]
fn fork_children_over_gdbserver_are_cleaned_or_followed() {
    let program = fixture("remote_forks");
    let Some(mut stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    scry.ok("breakpoint.set('work', {hardware: false})");
    assert_eq!(scry.ok("cont(); state.var('x')"), "1");
    assert_eq!(scry.ok("cont()"), "exited with code 0");
    scry.finish();
    let out = stub.wait_end();
    assert!(out.contains("vfork child exit=11"), "{out}");
    assert!(out.contains("fork child exit=21"), "{out}");

    let Some(mut stub) = Stub::start(&program, &[]) else {
        return;
    };
    let mut scry = remote(&stub, &program);
    scry.ok("config.follow_fork = 'child'; breakpoint.set('work', {hardware: false})");
    let stop = scry.ok("cont()");
    assert!(
        stop.contains("a vfork child is not followed over the remote protocol")
            && stop.contains("followed fork child"),
        "{stop}"
    );
    assert_eq!(scry.ok("state.var('x')"), "20");
    assert_eq!(scry.ok("cont()"), "exited with code 21");
    scry.finish();
    let out = stub.wait_end();
    assert!(out.contains("vfork child exit=11"), "{out}");
    assert!(
        out.contains("fork child exit=21") && out.contains("parent 2"),
        "{out}"
    );
}
