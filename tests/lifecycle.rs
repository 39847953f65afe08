//! Breakpoints and watchpoints outlive a process: re-armed by the next spawn and by exec.

mod common;

use common::{fixture, Scry};

#[test]
fn breakpoints_wait_for_the_next_process_and_rearm() {
    let program = fixture("loop");
    let mut scry = Scry::spawn(&program, &["3"]);
    scry.ok("breakpoint.set('add', 'add'); watchpoint.set('counter', 'w')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 (add)"));
    // Where in add the breakpoint is (after the prologue: a bare name).
    let offset = scry.num("breakpoint.list()[0].addr - symbol('add')");
    assert!(offset > 0, "after the prologue");
    assert!(scry.ok("kill()").starts_with("killed by SIGKILL"));
    let waiting = scry.ok("breakpoint.list()");
    assert!(
        waiting.lines().nth(1).unwrap().ends_with("\ttrue"),
        "pending column: {waiting}"
    );
    assert_eq!(scry.ok("watchpoint.list()[0].pending"), "true");
    scry.ok(&format!("spawn({:?}, '2')", program.to_str().unwrap()));
    assert_eq!(
        scry.ok("breakpoint.list()[0].pending === undefined && breakpoint.list()[0].hits"),
        "0"
    );
    assert_eq!(
        scry.num("breakpoint.list()[0].addr - symbol('add')"),
        offset,
        "re-armed where it was: the spec is resolved again"
    );
    assert!(scry.ok("cont()").starts_with("breakpoint 1 (add)"));
    assert!(
        scry.ok("cont()")
            .starts_with("watchpoint 1 (counter) write"),
        "the watchpoint is armed again"
    );
    scry.ok("breakpoint.remove('add'); watchpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 3"));
}

#[test]
fn exec_is_a_stop_and_breakpoints_follow_the_new_image() {
    let mut scry = Scry::spawn(&fixture("exec_self"), &[]);
    scry.ok("breakpoint.set('work')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at"));
    assert_eq!(scry.ok("state.registers.rdi"), "1", "the parent's call");
    let exec = scry.ok("cont()");
    let program = fixture("exec_self");
    assert!(
        exec.starts_with(&format!("exec {} at ", program.display())),
        "{exec}"
    );
    assert!(
        scry.ok("cont()").starts_with("breakpoint 1 at"),
        "re-armed in the new image"
    );
    assert_eq!(scry.ok("state.registers.rdi"), "21", "the child's call");
    assert!(scry.ok("cont()").starts_with("exited with code 5"));
    let out = scry.ok("output()");
    assert!(
        out.contains("parent 2") && out.contains("child 42"),
        "{out}"
    );
}

/// Waits for `scry` to exit and returns its status.
fn wait_exit(scry: Scry) -> std::process::ExitStatus {
    scry.finish()
}

#[test]
fn sigterm_during_cont_detaches_an_attached_target() {
    let mut child = common::ChildGuard(
        std::process::Command::new(fixture("ticker"))
            .arg("60")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = child.0.id() as i32;
    let mut scry = Scry::start(&["-p", &pid.to_string()]);
    scry.ok("breakpoint.set('tick'); cont()");
    scry.send_raw("while (true) cont({timeout: 30})\n;;\n");
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::process::Command::new("kill")
        .args(["-TERM", &scry.pid().to_string()])
        .status()
        .unwrap();
    let r = scry.read_response();
    assert!(!r.ok && r.body.contains("interrupted by a signal"), "{r:?}");
    let status = wait_exit(scry);
    assert_eq!(status.code(), Some(128 + 15));
    // Detached cleanly: no stray int3 (it would kill the program with SIGTRAP), not traced.
    assert_eq!(common::proc_status_field(pid, "TracerPid"), "0");
    let status = child.wait_timeout(std::time::Duration::from_secs(20));
    assert_eq!(status.code(), Some(7));
}

#[test]
fn a_program_whose_binary_was_replaced_is_read_from_the_file_it_runs() {
    // A rebuild renames a new binary over the one running: the path names another program
    // now, and the maps say "(deleted)". Its symbols come from the file it runs.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("replaced");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("ticker{}", std::process::id()));
    std::fs::copy(fixture("ticker"), &path).unwrap();
    let mut child = common::ChildGuard(
        std::process::Command::new(&path)
            .arg("100")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let other = path.with_extension("new");
    std::fs::copy(fixture("loop"), &other).unwrap();
    std::fs::rename(&other, &path).unwrap();
    let pid = child.0.id() as i32;
    let mut scry = Scry::start(&["-p", &pid.to_string()]);
    let stop = scry.ok("breakpoint.set('tick'); cont({timeout: 20})");
    assert!(
        stop.starts_with("breakpoint 1 at ") && stop.contains("tick"),
        "{stop}"
    );
    assert!(scry.num("state.var('ticks')") > 0);
    scry.ok("detach()");
    let status = child.wait_timeout(std::time::Duration::from_secs(30));
    assert_eq!(status.code(), Some(7));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn sigterm_kills_a_spawned_target() {
    let mut scry = Scry::spawn(&fixture("ticker"), &["1000"]);
    let pid = scry.target_pid();
    scry.send_raw("cont({timeout: 30})\n;;\n");
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::process::Command::new("kill")
        .args(["-TERM", &scry.pid().to_string()])
        .status()
        .unwrap();
    let r = scry.read_response();
    assert!(r.body.starts_with("interrupted at "), "{r:?}");
    assert_eq!(wait_exit(scry).code(), Some(128 + 15));
    assert!(
        common::process_is_dead(pid),
        "the spawned target must not outlive the session"
    );
}

#[test]
fn fork_and_vfork_children_are_released_without_breakpoints() {
    let mut scry = Scry::spawn(&fixture("forker"), &[]);
    scry.ok("breakpoint.set('work')");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("breakpoint 1 at"),
        "only the parent stops: {stop}"
    );
    assert_eq!(scry.ok("state.registers.rdi"), "1", "the parent's own call");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let out = scry.ok("output()");
    // A child that kept an inherited int3 would die of SIGTRAP (exit=-5).
    assert!(out.contains("fork child exit=11"), "{out}");
    assert!(out.contains("vfork child exit=0"), "{out}");
    assert_eq!(scry.ok("breakpoint.list()[0].hits"), "1");
}

#[test]
fn runs_give_the_target_its_cpu_mask_back() {
    let mut scry = Scry::spawn(&fixture("loop"), &["3"]);
    let pid = scry.target_pid();
    let before = common::proc_status_field(pid, "Cpus_allowed_list");
    let mine = std::fs::read_to_string(format!("/proc/{}/status", scry.pid())).unwrap();
    scry.ok("step(1000)");
    scry.ok("breakpoint.set('add'); cont()");
    assert_eq!(common::proc_status_field(pid, "Cpus_allowed_list"), before);
    let mine_after = std::fs::read_to_string(format!("/proc/{}/status", scry.pid())).unwrap();
    let field = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("Cpus_allowed_list"))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        field(&mine_after),
        field(&mine),
        "scry's own mask is restored too"
    );
}

#[test]
fn spawn_options_give_stdin_env_cwd_and_args() {
    let program = fixture("echo_env");
    let mut scry = Scry::start(&[]);
    let path = program.to_str().unwrap();
    let stop = scry.ok(&format!(
        "spawn({path:?}, 'one', 'two words', {{stdin: 'hello\\n', env: {{SCRY_TEST_VAR: 'x=1', HOME: null}}, cwd: '/tmp'}})"
    ));
    assert!(stop.starts_with("entry at "), "{stop}");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(
        scry.ok("output()"),
        "stdin=hello\nvar=x=1\nhome=<unset>\ncwd=/tmp\narg1=one\narg2=two words"
    );
    // Without options: empty stdin, scry's environment.
    scry.ok(&format!("spawn({path:?})"));
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert!(out.starts_with("stdin=<eof>\nvar=<unset>\n"), "{out}");
    assert!(scry
        .err("spawn('/no/such/program')")
        .contains("no such program"));
    assert!(scry
        .err(&format!("spawn({path:?}, {{cwd: '/no/such/dir'}})"))
        .contains("/no/such/dir"));
}

/// scry keeps what it read of a file across spawns while the file is unchanged; a program
/// rebuilt between two spawns is read anew, whether written over in place (the same inode,
/// which `cp` keeps) or replaced by a new file (what a linker writes).
#[test]
fn a_program_rebuilt_between_spawns_is_read_anew() {
    let dir = common::temp_path("rebuilt");
    std::fs::create_dir_all(&dir).unwrap();
    let build = |name: &str, func: &str, pad: usize| {
        let src = dir.join(format!("{name}.c"));
        let blank = "\n".repeat(pad);
        std::fs::write(
            &src,
            format!("{blank}__attribute__((noinline)) int {func}(int x) {{ return x * 3; }}\nint main(void) {{ return {func}(14) == 42 ? 0 : 1; }}\n"),
        )
        .unwrap();
        let out = dir.join(name);
        let ok = std::process::Command::new("cc")
            .args(["-g", "-O0", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        out
    };
    let one = build("one", "alpha", 0);
    let two = build("two", "beta", 6);
    let prog = dir.join("prog");
    std::fs::copy(&one, &prog).unwrap();
    let mut scry = Scry::spawn(&prog, &[]);
    let stop = scry.ok(
        "breakpoint.set('main'); cont(); breakpoint.remove(1); breakpoint.set('alpha'); cont()",
    );
    assert!(stop.contains("alpha") && stop.contains("one.c:1"), "{stop}");
    // Written over in place: same inode, new contents (a running program's file cannot be).
    scry.ok("kill()");
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(&prog).unwrap().ino();
    std::fs::copy(&two, &prog).unwrap();
    assert_eq!(std::fs::metadata(&prog).unwrap().ino(), inode);
    scry.ok(&format!("spawn({:?})", prog.to_str().unwrap()));
    assert_eq!(scry.ok("symbols('alpha', {exact: true}).length"), "0");
    let stop = scry.ok("breakpoint.set('beta'); cont()");
    assert!(stop.contains("beta") && stop.contains("two.c:7"), "{stop}");
    // Replaced by a new file.
    let fresh = dir.join("fresh");
    std::fs::copy(&one, &fresh).unwrap();
    std::fs::rename(&fresh, &prog).unwrap();
    scry.ok("kill()");
    scry.ok(&format!("spawn({:?})", prog.to_str().unwrap()));
    assert_eq!(scry.ok("symbols('beta', {exact: true}).length"), "0");
    let stop = scry.ok("cont()");
    assert!(stop.contains("alpha") && stop.contains("one.c:1"), "{stop}");
    // Unchanged: spawned again, the same answers.
    scry.ok("kill()");
    scry.ok(&format!("spawn({:?})", prog.to_str().unwrap()));
    let stop = scry.ok("cont()");
    assert!(stop.contains("alpha") && stop.contains("one.c:1"), "{stop}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A spawned program that scry detached from writes on after scry has exited: its stdout is
/// scry's capture pipe, which the keeper reads from then on (before, the write found no
/// reader and SIGPIPE killed the program silently).
#[test]
fn a_detached_program_writes_on_after_scry_exits() {
    let program = fixture("writes_after_detach");
    let result = common::temp_path("writes_after_detach.out");
    let _ = std::fs::remove_file(&result);
    let mut scry = Scry::spawn(&program, &[result.to_str().unwrap()]);
    scry.ok("breakpoint.set('here')");
    scry.ok("cont()");
    assert_eq!(scry.ok("detach()"), "detached");
    assert!(scry.finish().success());
    let text = common::wait_for_file(&result, std::time::Duration::from_secs(10));
    assert_eq!(text, "printf 13 fflush 0 errno Success\n");
    let _ = std::fs::remove_file(&result);
}
