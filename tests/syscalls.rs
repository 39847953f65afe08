//! System calls as events and stops (`syscall.catch`), through the real binary against
//! fixtures/syscalls.c, which prints what each of its calls returned: that is the ground
//! truth every decoded result is compared with.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fixture, proc_status_field, temp_path, ChildGuard, Scry};

fn program() -> PathBuf {
    fixture("syscalls")
}

/// The number the kernel's own header gives a system call.
fn header_number(name: &str) -> u64 {
    let text = std::fs::read_to_string("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
        .expect("the kernel's unistd_64.h");
    let prefix = format!("#define __NR_{name} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no __NR_{name}"))
}

/// The fixture's own lines `PATH fd=N` / `PATH errno=NAME` as (path, "fd=N" | "errno=NAME").
fn opened(output: &str) -> Vec<(String, String)> {
    output
        .lines()
        .filter_map(|l| {
            let (path, result) = l.rsplit_once(' ')?;
            (result.starts_with("fd=") || result.starts_with("errno="))
                .then(|| (path.to_string(), result.to_string()))
        })
        .collect()
}

/// A listener that records every caught call as `tid phase path ret errno` and lets the run
/// go on.
const RECORD: &str = "ctx.calls = []
addEventListener('syscall', e => {
  ctx.calls.push(`${e.tid} ${e.phase} ${e.name} ${e.nr} ${e.path} ${e.ret} ${e.errno}`)
  return 'continue'
})";

fn recorded(scry: &mut Scry) -> Vec<Vec<String>> {
    scry.ok("print(ctx.calls.join('\\n'))")
        .lines()
        .map(|l| l.split(' ').map(str::to_string).collect())
        .collect()
}

/// A file that exists, made for this test.
fn existing_file(tag: &str) -> PathBuf {
    let path = temp_path(tag);
    std::fs::write(&path, "x").unwrap();
    path
}

#[test]
fn catching_openat_lists_every_path_with_its_fd_or_errno() {
    let there = existing_file("there");
    let there = there.to_str().unwrap();
    let missing = "/nonexistent/scry-syscalls";
    let mut scry = Scry::spawn(&program(), &["open", there, missing, "/etc/passwd", there]);
    assert_eq!(scry.ok("syscall.catch('openat')"), "1");
    scry.ok(RECORD);
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let out = scry.ok("output()");
    let truth = opened(&out);
    assert_eq!(truth.len(), 4, "{out}");
    let calls = recorded(&mut scry);
    // Every open of the program (the loader's were done before the entry stop), in order.
    assert_eq!(calls.len(), truth.len(), "{calls:?} vs {out}");
    let pid = scry.target_pid_after_exit();
    for (call, (path, result)) in calls.iter().zip(&truth) {
        assert_eq!(call[0], pid.to_string(), "{call:?}");
        assert_eq!(call[1], "exit");
        assert_eq!(call[2], "openat");
        assert_eq!(call[3], header_number("openat").to_string());
        assert_eq!(&call[4], path);
        match result.strip_prefix("fd=") {
            Some(fd) => {
                assert_eq!(&call[5], fd, "{call:?}");
                assert_eq!(call[6], "null", "success: no errno, {call:?}");
            }
            None => {
                let errno = result.strip_prefix("errno=").unwrap();
                assert_eq!(call[6], errno, "{call:?}");
                assert_eq!(call[5], "-2", "ENOENT is -2 as the kernel returns it");
            }
        }
    }
    let list = scry.ok("syscall.list()");
    assert!(list.contains("1\topenat\texit\t4"), "{list}");
}

trait AfterExit {
    fn target_pid_after_exit(&mut self) -> i32;
}

impl AfterExit for Scry {
    /// The pid of the process that exited (status() keeps it).
    fn target_pid_after_exit(&mut self) -> i32 {
        self.num("status().pid") as i32
    }
}

#[test]
fn a_caught_call_stops_with_a_line_like_strace_naming_its_thread() {
    let mut scry = Scry::spawn(&program(), &["open", "/nope"]);
    let pid = scry.target_pid();
    scry.ok("syscall.catch('openat')");
    let stop = scry.ok("ctx.stop = cont()");
    let want = "syscall openat(AT_FDCWD, \"/nope\", O_RDONLY|O_CLOEXEC) = -1 ENOENT at 0x";
    assert!(stop.starts_with(want), "{stop}");
    assert!(stop.contains(&format!(" thread {pid}")), "{stop}");
    // Stopped just after the `syscall` instruction, with the kernel's result in rax.
    assert_eq!(scry.ok("state.memory(state.pc - 2).bytes(2)"), "0f05");
    assert_eq!(
        scry.ok("print(String(BigInt.asIntN(64, BigInt(state.registers.rax))))"),
        "-2"
    );
    assert_eq!(
        scry.num("state.registers.orig_rax"),
        header_number("openat")
    );
    // The stop carries the event's fields.
    assert_eq!(
        scry.ok("const s = ctx.stop; print(s.reason, s.phase, s.name, s.path, s.flags, s.ret, s.errno, s.tid)"),
        format!("syscall exit openat /nope O_RDONLY|O_CLOEXEC -2 ENOENT {pid}")
    );
    let out = scry.ok("cont()");
    assert!(out.starts_with("exited with code 0"), "{out}");
    assert_eq!(
        opened(&scry.ok("output()")),
        vec![("/nope".into(), "errno=ENOENT".into())]
    );
}

#[test]
fn entry_and_exit_phases_each_report() {
    let there = existing_file("phases");
    let there = there.to_str().unwrap();
    let mut scry = Scry::spawn(&program(), &["open", "/nope", there]);
    scry.ok("syscall.catch('openat', {phase: 'both'})");
    scry.ok(RECORD);
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let truth = opened(&scry.ok("output()"));
    let calls = recorded(&mut scry);
    assert_eq!(calls.len(), 2 * truth.len(), "{calls:?}");
    for (pair, (path, result)) in calls.chunks(2).zip(&truth) {
        assert_eq!(pair[0][1], "entry");
        assert_eq!(&pair[0][4], path);
        assert_eq!(pair[0][5], "undefined", "no result before the call ran");
        assert_eq!(pair[1][1], "exit");
        assert_eq!(&pair[1][4], path);
        let expect = match result.strip_prefix("fd=") {
            Some(fd) => fd.to_string(),
            None => "-2".to_string(),
        };
        assert_eq!(pair[1][5], expect);
    }
    // Entry only: the stop comes before the call ran, so its line has no result.
    let mut scry = Scry::spawn(&program(), &["open", "/nope"]);
    scry.ok("syscall.catch('openat', {phase: 'entry'})");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("syscall openat(AT_FDCWD, \"/nope\", O_RDONLY|O_CLOEXEC) at 0x"),
        "{stop}"
    );
    assert_eq!(
        scry.ok("output()"),
        "",
        "the program has not printed its result yet"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(opened(&scry.ok("output()"))[0].1, "errno=ENOENT");
}

#[test]
fn uncatch_stops_catching_and_nothing_caught_installs_nothing() {
    let mut scry = Scry::spawn(&program(), &["open", "/nope", "/etc/passwd", "/nope2"]);
    let pid = scry.target_pid();
    scry.ok("breakpoint.set('open_one')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    // No catch: no filter in the program at all.
    assert_eq!(proc_status_field(pid, "Seccomp"), "0");
    scry.ok("breakpoint.remove(1)");
    let id = scry.ok("syscall.catch('openat')");
    assert!(scry.ok("cont()").starts_with("syscall openat("));
    // The filter is installed: mode 2 (filter).
    assert_eq!(proc_status_field(pid, "Seccomp"), "2");
    assert!(scry.ok("syscall.list()").contains("mode: seccomp"));
    scry.ok(&format!("syscall.uncatch({id})"));
    assert!(scry.ok("syscall.list()").starts_with("id\tsyscalls"));
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    let truth = opened(&scry.ok("output()"));
    assert_eq!(truth.len(), 3);
    assert_eq!(truth[1].1, "fd=3");
    // Nothing caught from the start: the program runs to its end without a stop.
    let mut scry = Scry::spawn(&program(), &["open", "/nope", "/etc/passwd"]);
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
}

#[test]
fn a_thread_is_named_by_its_own_tid_and_only_it_stops_for_a_listener() {
    let mut scry = Scry::spawn(&program(), &["thread", "/nope"]);
    let pid = scry.target_pid();
    scry.ok("syscall.catch('openat')");
    let stop = scry.ok("cont()");
    let out = scry.ok("output()");
    let tid: i32 = out
        .lines()
        .find_map(|l| l.strip_prefix("tid ")?.parse().ok())
        .unwrap_or_else(|| panic!("the fixture prints its tid first: {out}"));
    assert_ne!(tid, pid);
    assert!(
        stop.starts_with("syscall openat(AT_FDCWD, \"/nope\""),
        "{stop}"
    );
    assert!(stop.contains(&format!(" thread {tid}")), "{stop}");
    assert_eq!(scry.num("state.tid"), tid as u64);
    assert!(scry.ok("cont()").starts_with("exited with code 0"));

    // With a listener that lets the run go on, only the calling thread is stopped while it
    // runs: the main thread (in pthread_join) is still running.
    let mut scry = Scry::spawn(&program(), &["thread", "/nope"]);
    let pid = scry.target_pid();
    scry.ok("syscall.catch('openat')");
    scry.ok("addEventListener('syscall', e => {
           ctx.seen = `${e.tid} ${e.errno}`
           ctx.main = thread.list().find(t => t.tid !== e.tid)
           return 'continue' })");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let out = scry.ok("output()");
    let tid = out.lines().find_map(|l| l.strip_prefix("tid ")).unwrap();
    assert_eq!(scry.ok("print(ctx.seen)"), format!("{tid} ENOENT"));
    assert_eq!(
        scry.ok("print(ctx.main.tid, ctx.main.state)"),
        format!("{pid} running")
    );
}

#[test]
fn a_fork_child_runs_its_caught_calls_and_a_followed_child_is_caught() {
    let there = existing_file("fork");
    let there = there.to_str().unwrap();
    // Without scry, as ground truth: both opens succeed, exit code 0.
    let plain = Command::new(program())
        .args(["fork", there])
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(0));

    // The child is let go (it inherited the filter): its call must run, not fail with ENOSYS.
    let mut scry = Scry::spawn(&program(), &["fork", there]);
    let pid = scry.target_pid();
    scry.ok("syscall.catch('openat')");
    scry.ok(RECORD);
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    let out = scry.ok("output()");
    let truth = opened(&out);
    assert_eq!(truth.len(), 2, "{out}");
    assert!(truth.iter().all(|(_, r)| r == "fd=3"), "{out}");
    let calls = recorded(&mut scry);
    assert_eq!(calls.len(), 1, "only the parent is traced: {calls:?}");
    assert_eq!(calls[0][0], pid.to_string());
    assert_eq!(calls[0][5], "3");

    // Following the child: its call is the stop, and the parent, let go, runs its own.
    let mut scry = Scry::spawn(&program(), &["fork", there]);
    let parent = scry.target_pid();
    scry.ok("syscall.catch('openat'); config.follow_fork = 'child'");
    let stop = scry.ok("cont()");
    let child = scry.target_pid();
    assert_ne!(child, parent);
    assert!(
        stop.starts_with(&format!("syscall openat(AT_FDCWD, \"{there}\"")),
        "{stop}"
    );
    assert!(stop.contains(" = 3 at 0x"), "{stop}");
    assert!(stop.contains(&format!("thread {child}")), "{stop}");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    let out = scry.ok("output()");
    assert!(
        out.contains(&format!("child {child} {there} fd=3")),
        "{out}"
    );
    // The parent's line comes from a process scry no longer traces: it succeeded too.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut all = out.clone();
    while opened(&all).len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        all.push('\n');
        all.push_str(&scry.ok("output()"));
    }
    assert_eq!(
        opened(&all)[1],
        (there.to_string(), "fd=3".to_string()),
        "{all}"
    );
}

#[test]
fn catching_goes_on_through_exec() {
    let prog = program();
    let script = format!("exec {} open /nope", prog.display());
    let mut scry = Scry::spawn(Path::new("/bin/sh"), &["-c", &script]);
    scry.ok("syscall.catch('openat')");
    scry.ok(RECORD);
    let exec = scry.ok("cont()");
    assert!(exec.starts_with("exec "), "{exec}");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(
        opened(&scry.ok("output()")),
        vec![("/nope".into(), "errno=ENOENT".into())]
    );
    let calls = recorded(&mut scry);
    let last = calls.last().expect("the new program's open was caught");
    assert_eq!(&last[4..7], ["/nope", "-2", "ENOENT"]);
}

#[test]
fn the_deadline_ends_a_run_of_continued_calls() {
    let mut scry = Scry::spawn(&program(), &["reopen", "/nope", "100000", "1"]);
    scry.ok("syscall.catch('openat')");
    scry.ok("ctx.n = 0; addEventListener('syscall', e => { ctx.n++; return 'continue' })");
    let started = Instant::now();
    let stop = scry.ok("cont({timeout: 1})");
    let took = started.elapsed();
    assert!(stop.starts_with("timeout at "), "{stop}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    let n = scry.num("ctx.n");
    assert!(n >= 10, "only {n} calls in a second");
    let printed = opened(&scry.ok("output()")).len() as u64;
    // Every open the program finished was reported (one may be in flight).
    assert!(
        printed <= n && n <= printed + 1,
        "{printed} printed, {n} reported"
    );
}

/// Starts the fixture on its own (not under scry) and returns it with its pid.
fn start_alone(args: &[&str]) -> (ChildGuard, i32, BufReader<std::process::ChildStdout>) {
    let mut child = ChildGuard(
        Command::new(program())
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let pid: i32 = line.trim().strip_prefix("ready ").unwrap().parse().unwrap();
    assert_eq!(pid as u32, child.0.id());
    (child, pid, out)
}

#[test]
fn an_attached_process_is_traced_with_ptrace_syscall() {
    let (mut child, pid, mut out) = start_alone(&["reopen", "/etc/passwd", "150", "10"]);
    let mut scry = Scry::start(&["-p", &pid.to_string()]);
    scry.ok("syscall.catch('openat')");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("syscall openat(AT_FDCWD, \"/etc/passwd\", O_RDONLY|O_CLOEXEC) = 3 at 0x"),
        "{stop}"
    );
    assert!(stop.contains(&format!("thread {pid}")), "{stop}");
    let list = scry.ok("syscall.list()");
    assert!(
        list.contains("mode: ptrace: every system call stops twice"),
        "{list}"
    );
    // No filter in an attached program.
    assert_eq!(proc_status_field(pid, "Seccomp"), "0");
    scry.ok(RECORD);
    assert!(scry.ok("cont({timeout: 0.3})").starts_with("timeout at "));
    let calls = recorded(&mut scry);
    assert!(!calls.is_empty());
    assert!(
        calls
            .iter()
            .all(|c| c[0] == pid.to_string() && c[4] == "/etc/passwd" && c[5] == "3"),
        "{calls:?}"
    );
    assert_eq!(scry.ok("detach()"), "detached");
    let status = child.wait_timeout(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(rest.ends_with("done failed=0\n"), "{rest}");
    assert!(opened(&rest).iter().all(|(_, r)| r == "fd=3"), "{rest}");
}

#[test]
fn after_detach_the_filtered_program_runs_as_without_scry() {
    let file = temp_path("detach-out");
    let script = |target: &Path| {
        format!(
            "exec {} reopen /etc/passwd 40 10 > {}",
            target.display(),
            file.display()
        )
    };
    // Without scry, for the ground truth.
    let plain = Command::new("/bin/sh")
        .args(["-c", &script(&program())])
        .status()
        .unwrap();
    let expected = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert!(expected.ends_with("done failed=0\n"), "{expected}");

    let mut scry = Scry::spawn(Path::new("/bin/sh"), &["-c", &script(&program())]);
    let pid = scry.target_pid();
    scry.ok("syscall.catch('openat')");
    // The shell's redirection is the first open; then the program's own.
    let mut stop = scry.ok("cont()");
    while !stop.contains("/etc/passwd") {
        stop = scry.ok("cont()");
    }
    assert!(stop.contains("= 3 at"), "{stop}");
    assert_eq!(proc_status_field(pid, "Seccomp"), "2");
    // The filter stays for life, and detach says so, naming the keeper it now depends on.
    let detached = scry.ok("detach()");
    let keeper: i32 = detached
        .strip_prefix(&format!(
            "detached [process {pid} keeps scry's seccomp filter for life: its openat calls now pass through keeper process "
        ))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{detached}"));
    assert!(
        detached.contains("(killed, those calls fail with ENOSYS)"),
        "{detached}"
    );
    assert_eq!(proc_status_field(pid, "TracerPid"), "0");
    // A `pkill scry` (SIGTERM), a hang-up or a Ctrl-C does not take the keeper away.
    for sig in ["TERM", "HUP", "INT"] {
        assert!(Command::new("kill")
            .args([&format!("-{sig}"), &keeper.to_string()])
            .status()
            .unwrap()
            .success());
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        std::path::Path::new(&format!("/proc/{keeper}")).exists(),
        "the keeper survived SIGTERM, SIGHUP and SIGINT"
    );
    // Its remaining opens run (the keeper answers for scry's filter): never ENOSYS.
    let text = common::wait_for_file(&file, Duration::from_secs(20));
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut text = text;
    while !text.contains("done") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        text = std::fs::read_to_string(&file).unwrap();
    }
    let _ = std::fs::remove_file(&file);
    let strip = |t: &str| {
        t.lines()
            .filter(|l| !l.starts_with("ready"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // Same results, and the same exit code: the fixture exits with its failure count, which
    // its last line prints (its parent is scry, which no longer reports on it).
    assert_eq!(
        strip(&text),
        strip(&expected),
        "same results as without scry"
    );
    assert_eq!(plain.code(), Some(0));
}

#[test]
fn after_privileges_are_dropped_no_filter_unless_no_new_privs_is_accepted() {
    // By default, nothing permanent: an unprivileged program is traced with PTRACE_SYSCALL,
    // its no_new_privs flag untouched, and syscall.list() says why.
    let mut scry = Scry::spawn(&program(), &["dropuid", "/nope", "/etc/hostname"]);
    let pid = scry.target_pid();
    scry.ok("breakpoint.set('open_one')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    scry.ok("breakpoint.remove(1); syscall.catch('openat')");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("syscall openat(AT_FDCWD, \"/nope\""),
        "{stop}"
    );
    assert_eq!(proc_status_field(pid, "NoNewPrivs"), "0");
    assert_eq!(proc_status_field(pid, "Seccomp"), "0");
    let list = scry.ok("syscall.list()");
    assert!(
        list.contains("mode: ptrace")
            && list.contains("config.syscall_filter = 'seccomp' accepts that"),
        "{list}"
    );
    assert!(scry
        .ok("cont()")
        .starts_with("syscall openat(AT_FDCWD, \"/etc/hostname\""));
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry
        .err("config.syscall_filter = 'fast'")
        .contains("config.syscall_filter must be 'auto', 'seccomp' or 'ptrace'"));

    // Accepted: the filter, with the flag set for it.
    let mut scry = Scry::spawn(&program(), &["dropuid", "/nope", "/etc/hostname"]);
    let pid = scry.target_pid();
    scry.ok("config.syscall_filter = 'seccomp'; breakpoint.set('open_one')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    // The program now runs unprivileged (as nobody when started as root).
    scry.ok("breakpoint.remove(1); syscall.catch('openat')");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("syscall openat(AT_FDCWD, \"/nope\""),
        "{stop}"
    );
    assert_eq!(proc_status_field(pid, "NoNewPrivs"), "1");
    assert!(
        scry.ok("syscall.list()")
            .contains("scry set its no_new_privs flag"),
        "syscall.list() says why"
    );
    assert!(scry
        .ok("cont()")
        .starts_with("syscall openat(AT_FDCWD, \"/etc/hostname\""));
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
}

#[test]
fn bad_catches_are_one_line_errors_and_change_nothing() {
    let mut scry = Scry::spawn(&program(), &["open", "/nope"]);
    let e = scry.err("syscall.catch('opnat')");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("error: unknown system call 'opnat' (did you mean openat"),
        "{e}"
    );
    let e = scry.err("syscall.catch(['openat', 'clsoe'])");
    assert!(
        e.contains("'clsoe' (did you mean") && e.contains("close"),
        "{e}"
    );
    let e = scry.err("syscall.catch('%files')");
    assert!(e.contains("groups: %file %desc"), "{e}");
    assert!(scry
        .err("syscall.catch(9999)")
        .contains("no system call 9999"));
    assert!(scry
        .err("syscall.catch('openat', {phase: 'later'})")
        .contains("'entry' or 'both'"));
    assert!(scry
        .err("syscall.uncatch(5)")
        .contains("no syscall catch 5"));
    assert!(scry.err("syscall.catch()").contains("needs a system call"));
    // Nothing was caught by any of them.
    assert!(scry.ok("syscall.list()").contains("nothing caught"));
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
}

/// A read that a signal interrupts: with SA_RESTART it is one call that returns the byte
/// (reported once), without it the program gets EINTR, and that is reported too (it was
/// lost: the call's exit showed only ERESTARTSYS, and the EINTR comes out of the handler's
/// rt_sigreturn). Both with scry's seccomp filter and with PTRACE_SYSCALL (`--read-only`);
/// the program's own printout is the truth.
#[test]
fn a_call_a_signal_handler_interrupts_is_reported_with_the_eintr_the_program_sees() {
    let bin = program();
    let bin = bin.to_str().unwrap();
    for opts in [&[][..], &["--read-only"][..]] {
        let mut args = opts.to_vec();
        args.extend([bin, "eintr"]);
        let mut scry = Scry::start(&args);
        scry.ok("syscall.catch('read')");
        scry.ok("ctx.raw = []; addEventListener('syscall', e => { ctx.raw.push({args: e.args, ret: e.ret, errno: e.errno}); return 'continue' })");
        let end = scry.ok("cont({timeout: 20})");
        assert!(end.starts_with("exited with code 0"), "{opts:?}: {end}");
        let out = scry.ok("output()");
        let field = |key: &str| {
            out.split(&format!("{key}="))
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .unwrap_or_else(|| panic!("no {key} in {out}"))
                .to_string()
        };
        assert_eq!(
            (field("restarted"), field("interrupted"), field("errno")),
            ("1".into(), "-1".into(), "EINTR".into()),
            "{out}"
        );
        assert_eq!(field("alarms"), "2", "{out}");
        // The reads of the pipe (its fd as the program printed it): one per call.
        let reads = scry.ok(&format!(
            "print(ctx.raw.filter(e => e.args[0] === {}).map(e => e.ret + ' ' + e.errno).join('\\n'))",
            field("fd")
        ));
        assert_eq!(reads, "1 null\n-4 EINTR", "{opts:?}: {out}");
    }
}

/// Socket addresses read as host and port (a Unix socket's path): what a server binds,
/// where a client connects, whom `accept` took, each compared with the ports the program
/// printed itself (the kernel chose them).
#[test]
fn socket_addresses_read_as_the_program_used_them() {
    let mut scry = Scry::spawn(&program(), &["net"]);
    scry.ok("syscall.catch(['bind', 'connect', 'getsockname', 'accept'])");
    scry.ok("ctx.seen = []; addEventListener('syscall', e => { ctx.seen.push(`${e.tid} ${e.name} ${e.sockaddr} ${e.ret}`); return 'continue' })");
    let end = scry.ok("cont({timeout: 20})");
    assert!(end.starts_with("exited with code 0"), "{end}");
    let out = scry.ok("output()");
    let field = |key: &str| {
        out.split(&format!("{key}="))
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no {key} in {out}"))
            .to_string()
    };
    let (server, client, unix) = (field("server"), field("client"), field("unix"));
    let seen = scry.ok("print(ctx.seen.join('\\n'))");
    let calls: Vec<Vec<&str>> = seen.lines().map(|l| l.split(' ').collect()).collect();
    let find = |name: &str, addr: &str| {
        calls
            .iter()
            .find(|c| c[1] == name && c[2] == addr)
            .unwrap_or_else(|| panic!("no {name} with {addr} in\n{seen}"))
            .clone()
    };
    find("bind", "127.0.0.1:0");
    find("getsockname", &format!("127.0.0.1:{server}"));
    let connect = find("connect", &format!("127.0.0.1:{server}"));
    let mine = find("getsockname", &format!("127.0.0.1:{client}"));
    assert_eq!(
        connect[0], mine[0],
        "the client thread connects and asks: {seen}"
    );
    let accept = find("accept", &format!("127.0.0.1:{client}"));
    assert_ne!(accept[0], connect[0], "the server thread accepts: {seen}");
    find("bind", &unix);
    find("connect", &unix);
    // accept(u, NULL, NULL): no address to show.
    assert!(
        calls.iter().any(|c| c[1] == "accept" && c[2] == "0"),
        "{seen}"
    );
}
