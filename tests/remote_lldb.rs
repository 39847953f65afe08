//! The GDB-remote backend against lldb-server's gdbserver mode (issue 23): its own dialect
//! (registers placed by `offset` in `g`, `rflags`, whole `ymm`, `reason:watchpoint` stops,
//! Linux signal numbers, SIGSTOP as the interrupt's answer, no fs_base) answers the same JS
//! calls as gdbserver does, and what it cannot give is said, never a 0.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// lldb-server running `program` on a free loopback port (told through `--named-pipe`).
struct Lldb {
    child: Child,
    port: u16,
}

impl Lldb {
    fn start(program: &Path, args: &[&str]) -> Option<Lldb> {
        let told = std::env::temp_dir().join(format!(
            "scry-lldb-port-{}-{}",
            std::process::id(),
            program.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&told, b"").unwrap();
        let spawned = Command::new("lldb-server-14")
            .args([
                "gdbserver",
                "--named-pipe",
                told.to_str().unwrap(),
                "127.0.0.1:0",
                "--",
            ])
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(child) = spawned else {
            eprintln!("lldb-server-14 is not installed: skipping");
            return None;
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let port = loop {
            let text = std::fs::read(&told).unwrap_or_default();
            let digits: String = text
                .iter()
                .take_while(|b| **b != 0)
                .map(|&b| b as char)
                .collect();
            if text.contains(&0) {
                break digits.parse().unwrap();
            }
            assert!(Instant::now() < deadline, "lldb-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = std::fs::remove_file(&told);
        Some(Lldb { child, port })
    }

    fn scry(&self, program: &Path) -> Scry {
        Scry::start(&[
            "--remote",
            &format!("127.0.0.1:{}", self.port),
            program.to_str().unwrap(),
        ])
    }
}

impl Drop for Lldb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Values, the stack, a watchpoint's old and new value with its culprit, finish's value and
/// the registers lldb-server does not send.
#[test]
fn values_watchpoints_and_registers_over_lldb_server() {
    let program = fixture("remote_counter");
    let Some(stub) = Lldb::start(&program, &["4"]) else {
        return;
    };
    let mut scry = stub.scry(&program);
    scry.ok("breakpoint.set('tally')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    // Registers placed by lldb's offsets: a wrong layout read k = 0 and a garbage caller.
    assert_eq!(scry.ok("state.var('k') + ' ' + state.var('total')"), "1 0");
    let frames = scry.ok("state.unwind().map(r => r.symbol.split('+')[0]).join(' ')");
    assert!(frames.starts_with("tally main"), "{frames}");
    scry.ok("breakpoint.remove(1); watchpoint.set('total', 'w')");
    let hit = scry.ok("cont()");
    assert!(
        hit.starts_with("watchpoint 1 (total) write ") && hit.contains("0 -> 1"),
        "{hit}"
    );
    assert!(scry.ok("finish()").ends_with("returned 1"));
    // fs_base and orig_rax are not in lldb-server 14's description: said, never 0.
    assert_eq!(
        scry.err("state.registers.fs_base"),
        "error: <unavailable: the remote stub sends no fs_base register>"
    );
    assert!(scry
        .ok("String(state.registers)")
        .contains("fs_base\t<unavailable>"));
    assert_eq!(
        scry.ok("try { state.registers.orig_rax } catch (e) { e.noValue }"),
        "true"
    );
    // A register write goes as `P` where `G` is refused (lldb-server 14 takes only `P`:
    // every write failed), and back as it was.
    assert_eq!(
        scry.ok("const r = state.registers.rbx; state.registers.rbx = 0x1234; const v = hex(state.registers.rbx); state.registers.rbx = r; [v, state.registers.rbx == r].join(' ')"),
        "0x1234 true"
    );
    scry.ok("watchpoint.remove(1)");
    assert_eq!(scry.ok("cont()"), "exited with code 4");
    scry.finish();
}

/// The deadline's interrupt is answered with a SIGSTOP in Linux numbering: a timeout stop,
/// not a signal passed back forever (scry hung there before it read `native-signals+`).
/// Threads' states say nothing of a system call the registers cannot show.
#[test]
fn a_deadline_and_threads_over_lldb_server() {
    let program = fixture("ticker");
    let Some(stub) = Lldb::start(&program, &["1000"]) else {
        return;
    };
    let mut scry = stub.scry(&program);
    let stop = scry.ok("cont({timeout: 0.5})");
    assert!(stop.starts_with("timeout at "), "{stop}");
    let ticks = scry.num("state.var('ticks')");
    assert!((1..1000).contains(&ticks), "{ticks}");
    scry.ok("breakpoint.set('tick')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    assert_eq!(scry.ok("kill()"), "killed by SIGKILL");
    scry.finish();

    let program = fixture("threads");
    let Some(stub) = Lldb::start(&program, &[]) else {
        return;
    };
    let mut scry = stub.scry(&program);
    scry.ok("breakpoint.set('all_started'); cont()");
    let list = scry.ok("thread.list()");
    assert_eq!(list.matches("worker").count(), 4, "{list}");
    assert!(
        !list.contains("in read"),
        "no orig_rax, no system call named: {list}"
    );
    assert!(scry
        .ok("breakpoint.remove(1); cont()")
        .starts_with("exited with code 0"));
    scry.finish();
}

/// Logpoint hits in four threads are each counted once.
#[test]
fn logpoints_in_four_threads_over_lldb_server() {
    let program = fixture("logpoints");
    let Some(stub) = Lldb::start(&program, &["busy", "4", "500"]) else {
        return;
    };
    let mut scry = stub.scry(&program);
    scry.ok("ctx.n = 0; breakpoint.set('hit', {log: e => { ctx.n++ }})");
    assert!(scry
        .ok("cont({timeout: 60})")
        .starts_with("exited with code 0"));
    assert_eq!(scry.ok("ctx.n"), "2000");
    scry.finish();
}

/// lldb-server's exec stop (`reason:exec`) is an exec as gdbserver's is; it keeps its old
/// breakpoints over the exec, so scry takes them out (said) and arms its own again: the new
/// image's work() stops.
#[test]
fn an_exec_over_lldb_server_arms_breakpoints_in_the_new_image() {
    let program = fixture("exec_self");
    let Some(stub) = Lldb::start(&program, &[]) else {
        return;
    };
    let mut scry = stub.scry(&program);
    scry.ok("breakpoint.set('work')");
    // lldb-server 14 reports no forks: a fork child would keep the int3 (said once).
    let first = scry.ok("cont()");
    assert!(first.contains("this stub reports no forks"), "{first}");
    assert_eq!(scry.ok("state.var('x')"), "1");
    let exec = scry.ok("cont()");
    assert!(
        exec.starts_with("exec ") && exec.contains("keeps its breakpoints over an exec"),
        "{exec}"
    );
    assert_eq!(scry.ok("cont(); state.var('x')"), "21");
    assert_eq!(scry.ok("cont()"), "exited with code 5");
    scry.finish();
}
