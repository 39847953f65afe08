//! A process tree run as one (`--follow-fork both`, `config.schedule = 'all'`, the default in
//! that mode; issue 22): one `cont()` from the start reaches a worker's crash although the
//! parent waits in `read`/`wait4` for its workers, logpoints count every call in every
//! process, a blocked tree's timeout says who waits in what, and the programs end as they
//! do alone. Ground truth is what the fixtures print about themselves, `/proc`, and the
//! binary's `.text`.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

/// What a fixture prints run alone (no debugger), and its exit code.
fn alone(program: &std::path::Path, args: &[&str]) -> (String, Option<i32>) {
    let out = Command::new(program).args(args).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code(),
    )
}

/// The pid after `prefix` in the fixture's output (`child 123` -> 123).
fn pid_after(out: &str, prefix: &str) -> i32 {
    number_after(out, prefix) as i32
}

/// scry on `program` with every fork child kept (the tree run as one, the default).
fn tree(program: &std::path::Path, args: &[&str]) -> Scry {
    let mut argv = vec!["--follow-fork", "both", "--", program.to_str().unwrap()];
    argv.extend_from_slice(args);
    Scry::start(&argv)
}

/// The pre-forking server: three workers over pipes, the one given job 7 crashes. One
/// `cont()` from the start stops at the SIGSEGV in `handle` in the worker (the other
/// workers' ends are notes, not stops); continuing lets it die, and the parent reaps
/// every worker and prints what it prints alone.
#[test]
fn one_cont_reaches_the_crashing_worker_of_a_preforking_server() {
    let program = fixture("prefork");
    let (truth, code) = alone(&program, &[]);
    assert_eq!(code, Some(0));
    let mut scry = tree(&program, &[]);
    assert_eq!(scry.ok("config.schedule"), "all");
    let parent = scry.num("status().pid") as i32;
    let stop = scry.ok("ctx.stop = cont()");
    assert!(
        stop.starts_with("signal SIGSEGV fault_addr=0x0") && stop.contains("handle"),
        "{stop}"
    );
    assert_eq!(scry.ok("state.var('job')"), "7", "{stop}");
    // The crash is a worker's, named in the line and in the stop object.
    let worker = scry.num("ctx.stop.pid") as i32;
    assert_ne!(worker, parent);
    assert!(stop.contains(&format!(" process {worker} ")), "{stop}");
    assert!(
        stop.contains(&format!(
            "3 fork children of {parent} kept (they run with cont())"
        )),
        "{stop}"
    );
    let rows = table(&scry.ok("process.list()"));
    assert_eq!(rows[0]["pid"], worker.to_string());
    assert_eq!(rows[0]["state"], "selected");
    assert!(rows
        .iter()
        .any(|r| r["pid"] == parent.to_string() && r["state"] == "stopped"));

    let died = scry.ok("cont()");
    assert!(
        died.starts_with(&format!("killed by SIGSEGV process {worker} ")),
        "{died}"
    );
    assert!(died.contains("processes remain: "), "{died}");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    // Every other worker's end was said on the way, as a note, never as a stop.
    let notes = format!("{stop}\n{died}\n{end}");
    assert_eq!(notes.matches("exited with code 0]").count(), 2, "{notes}");
    assert_eq!(scry.ok("output()").trim_end(), truth.trim_end());
    assert!(truth.contains("worker 1 killed by signal 11") && truth.contains("crashed 1"));
}

/// A logpoint in a function the parent and both workers call: one `cont()` runs the whole
/// server, every call is counted once (the listener sees `e.pid`), and `breakpoint.list()`
/// counts by process. Two workers running at once interrupt each other at every hit: a hit
/// undone by one stop and interrupted again before it ran must still happen (it was lost,
/// stepped over as if the user had moved the thread onto the breakpoint).
/// A watchpoint set in the parent before it forks watches every worker's copy: each
/// worker's writes of `done_jobs` are hits with that worker's own old and new values
/// (worker 1 of 3 gets jobs 1, 4, 7 and crashes on 7; worker 0 jobs 3, 6, 9; worker 2
/// jobs 2, 5, 8), the parent, which never writes it, none. Hits come in any order across
/// workers, and one worker's write may be booked while the tree stops for another's (or for
/// the crashed worker's death, which is the stop of the run that began in it).
#[test]
fn a_watchpoint_watches_every_process_of_the_tree() {
    let program = fixture("prefork");
    let mut scry = tree(&program, &[]);
    let parent = scry.num("status().pid");
    scry.ok(
        "watchpoint.set('done_jobs'); ctx.seen = {};\
         addEventListener('watchpoint', e => {\
           (ctx.seen[e.pid] = ctx.seen[e.pid] || []).push(e.old + '>' + e.new); return 'continue' })",
    );
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("signal SIGSEGV"), "{stop}");
    // The other workers may not have had all their jobs yet: to the end. The crashed
    // worker's death is the next stop, also when another worker's hit came as it died.
    let died = scry.ok("cont()");
    assert!(died.starts_with("killed by SIGSEGV"), "{died}");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    let seen = scry.ok(
        "Object.keys(ctx.seen).map(p => (Number(p) === ctx.parent ? 'parent ' : '') + ctx.seen[p].join(' ')).sort().join('; ')"
            .replace("ctx.parent", &parent.to_string())
            .as_str(),
    );
    assert_eq!(
        seen, "0>1 1>5; 0>2 2>7 7>15; 0>3 3>9 9>18",
        "{stop}\n{died}\n{end}"
    );
    assert_eq!(scry.num("watchpoint.list()[0].hits"), 8);
}

#[test]
fn a_logpoint_counts_every_call_in_every_process() {
    let requests = 1500;
    let program = fixture("fork_server");
    let n = requests.to_string();
    let mut scry = tree(&program, &["2", &n, "-1", "reap"]);
    let parent = scry.num("status().pid") as i32;
    scry.ok("ctx.by = {}; breakpoint.set('handle', {log: e => { ctx.by[e.pid] = (ctx.by[e.pid] || 0) + 1 }})");
    let end = scry.ok("cont({timeout: 120})");
    assert!(
        end.starts_with(&format!("exited with code 0 process {parent}")),
        "{end}"
    );
    let out = scry.ok("output()");
    let workers = [
        pid_after(&out, "forked worker 0 pid "),
        pid_after(&out, "forked worker 1 pid "),
    ];
    for (i, w) in workers.iter().enumerate() {
        assert!(
            out.contains(&format!("worker {i} pid {w} handled {requests}")),
            "{out}"
        );
        assert!(
            out.contains(&format!("reaped {w} exited with {}", 10 + i)),
            "{out}"
        );
        assert!(
            end.contains(&format!("process {w} exited with code {}", 10 + i)),
            "{end}"
        );
        assert_eq!(scry.num(&format!("ctx.by[{w}]")), requests);
        assert_eq!(
            scry.num(&format!("breakpoint.list()[0].by_process[{w}]")),
            requests
        );
    }
    assert_eq!(scry.num(&format!("ctx.by[{parent}]")), 2);
    assert_eq!(scry.num("breakpoint.list()[0].hits"), 2 + 2 * requests);
    // The ended processes are listed with their ends until the next cont().
    let rows = table(&scry.ok("process.list()"));
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows
        .iter()
        .all(|r| r["state"].starts_with("exited with code ")));
}

/// A tree that waits for itself: the timeout says what each process was doing (the parent in
/// wait4 for its child, the child in read of a pipe nobody writes), not a bare timeout at
/// the parent's wait4. detach() then lets both go with the file's code and no tracer.
#[test]
fn a_blocked_tree_s_timeout_says_what_each_process_waits_in() {
    let program = fixture("stuck_tree");
    let mut scry = tree(&program, &[]);
    let parent = scry.num("status().pid") as i32;
    // Its int3 goes into both processes while they run.
    scry.ok("breakpoint.set('never_called', {hardware: false})");
    let stop = scry.ok("cont({timeout: 1})");
    let child = pid_after(&scry.ok("output()"), "child ");
    assert!(stop.starts_with("timeout at "), "{stop}");
    assert!(
        stop.contains(&format!(
            "[at the deadline: {parent} in wait4 (selected), {child} in read]"
        )),
        "{stop}"
    );
    assert!(stop.contains(&format!("process {parent}")), "{stop}");
    assert_eq!(scry.ok("detach().reason"), "detached");
    for pid in [parent, child] {
        assert_eq!(proc_status_field(pid, "TracerPid"), "0", "{pid}");
        assert!(
            text_is_the_file_s(&program, pid),
            ".text of {pid} differs from the file"
        );
    }
    scry.finish();
    // Still blocked as alone: the child in read, the parent waiting for it.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !proc_status_field(child, "State").starts_with('S') {
        assert!(Instant::now() < deadline, "child {child} not sleeping");
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in [child, parent] {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
}

/// The setting: 'all' (the default) and 'selected', anything else a one-line error.
#[test]
fn config_schedule_takes_all_or_selected() {
    let mut scry = Scry::spawn(&fixture("prefork"), &[]);
    scry.ok("config.follow_fork = 'both'");
    assert_eq!(scry.ok("config.schedule"), "all");
    scry.ok("config.schedule = 'selected'");
    assert_eq!(scry.ok("config.schedule"), "selected");
    let err = scry.err("config.schedule = 'some'");
    assert!(
        err.contains("config.schedule must be 'all' or 'selected'"),
        "{err}"
    );
}

/// A launcher execs an engine that forks and execs itself as stage 2: a breakpoint by name
/// stops in each image it is armed in again after every exec, the stage-2 process's with its
/// own argv, and hits count per process across the execs.
#[test]
fn a_breakpoint_by_name_follows_a_launcher_s_execs_into_stage_two() {
    let program = fixture("launcher");
    let (truth, code) = alone(&program, &[]);
    assert_eq!(code, Some(0));
    let mut scry = tree(&program, &[]);
    let pid = scry.num("status().pid") as i32;
    scry.ok("breakpoint.set('work')");
    assert!(scry.ok("cont()").starts_with("exec "));
    let engine = scry.ok("cont()");
    assert!(engine.starts_with("breakpoint 1 at "), "{engine}");
    assert_eq!(scry.num("state.registers.rdi"), 1);
    // The child's exec is a stop of its own, in the child.
    let exec = scry.ok("ctx.exec = cont()");
    assert!(exec.starts_with("exec "), "{exec}");
    let stage2 = scry.num("ctx.exec.pid") as i32;
    assert_ne!(stage2, pid);
    assert!(exec.contains(&format!("process {stage2}")), "{exec}");
    for _ in 0..3 {
        let hit = scry.ok("cont()");
        assert!(
            hit.starts_with("breakpoint 1 at ") && hit.contains(&format!("process {stage2}")),
            "{hit}"
        );
        assert_eq!(scry.num("state.registers.rdi"), 2);
        // Its own argv: `launcher stage2 3`.
        assert_eq!(scry.num("state.var('argc', 1)"), 3);
    }
    let by = "breakpoint.list()[0].by_process";
    assert_eq!(scry.num(&format!("{by}[{pid}]")), 1);
    assert_eq!(scry.num(&format!("{by}[{stage2}]")), 3);
    assert!(scry
        .ok("cont()")
        .starts_with(&format!("exited with code 3 process {stage2}")));
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let out = scry.ok("output()");
    assert!(out.contains(&format!("stage2 {stage2} of {pid}")), "{out}");
    assert!(
        out.contains(&format!("engine {pid}: stage2 {stage2} exited 3")),
        "{out}"
    );
    assert_eq!(out.lines().count(), truth.lines().count(), "{out}");
}

/// Every process's end is counted, also one that ends while the tree is being stopped for
/// another's logpoint hit: 6 fork children each hit `work` once and exit; every one of them
/// is listed with its own exit code (before, the end of a child that had just been selected
/// for its hit was dropped: 4 of 6 listed).
#[test]
fn every_fork_child_s_end_is_listed_after_a_run_of_logpoints() {
    let program = fixture("fork_bomb");
    let (truth, code) = alone(&program, &["6"]);
    assert_eq!((truth.as_str(), code), ("reaped 6 sum 15\n", Some(0)));
    let mut scry = tree(&program, &["6"]);
    scry.ok("ctx.n = 0; breakpoint.set('work', {log: e => { ctx.n++; return null; }})");
    let stop = scry.ok("cont({timeout: 60})");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    assert_eq!(scry.num("ctx.n"), 6, "{stop}");
    let ends = scry
        .ok("process.list().filter(r => r.pid != status().pid).map(r => r.state).sort().join(',')");
    let codes: Vec<String> = (0..6)
        .map(|i| format!("exited with code {}", i % 7))
        .collect();
    assert_eq!(ends, codes.join(","), "{stop}");
    assert_eq!(scry.ok("output()").trim(), truth.trim());
    // Selecting one that ended says how it ended.
    let child = scry.num("process.list()[1].pid");
    let err = scry.err(&format!("process.select({child})"));
    assert!(
        err.contains(&format!("process {child} exited with code"))
            && err.contains("no process is under control"),
        "{err}"
    );
}

/// A fork bomb is bounded: with `config.max_processes = 20`, 60 children alive at once give
/// 19 kept (with the parent, 20 under control) and 41 let go untraced with a note saying
/// why; the program reaps all 60 with their exit codes as alone, the logpoint counts the
/// kept ones' calls exactly, and the stop line stays short.
#[test]
fn a_fork_bomb_is_bounded_by_config_max_processes() {
    let program = fixture("fork_bomb");
    let (truth, code) = alone(&program, &["60", "together"]);
    assert_eq!(code, Some(0));
    let mut scry = tree(&program, &["60", "together"]);
    assert_eq!(scry.num("config.max_processes"), 512);
    assert!(scry
        .err("config.max_processes = 0")
        .contains("config.max_processes must be a whole number"));
    scry.ok("config.max_processes = 20; ctx.n = 0");
    scry.ok("breakpoint.set('work', {log: e => { ctx.n++; return null; }})");
    let parent = scry.num("status().pid");
    let stop = scry.ok("cont({timeout: 60})");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    assert!(
        stop.contains(&format!(
            "41 fork children of {parent} let go untraced: 20 processes under control (config.max_processes)"
        )),
        "{stop}"
    );
    assert!(
        stop.contains(&format!("19 fork children of {parent} kept")),
        "{stop}"
    );
    // Seven exit codes, four shown: the rest summed.
    assert!(stop.contains("more in 3 other ends"), "{stop}");
    assert!(stop.len() < 1_200, "{} bytes: {stop}", stop.len());
    assert_eq!(scry.num("ctx.n"), 19, "{stop}");
    assert_eq!(scry.num("process.list().length"), 20, "{stop}");
    assert_eq!(scry.ok("output()").trim(), truth.trim());
}

/// A logpoint on `work` counting its hits by pid in `ctx.n`.
const COUNT_WORK_BY_PROCESS: &str =
    "ctx.n = {}; breakpoint.set('work', {log: e => { ctx.n[e.pid] = (ctx.n[e.pid] || 0) + 1; return null; }})";

/// Counts a logpoint's hits by process over a whole run of `exec_other`, one `cont()` after
/// another until no process is left; the last stop line.
fn count_by_process(scry: &mut Scry) -> String {
    scry.ok(COUNT_WORK_BY_PROCESS);
    let mut last = String::new();
    for _ in 0..6 {
        let r = scry.eval("cont({timeout: 20})");
        if !r.ok {
            assert!(r.body.contains("no live process"), "{}", r.body);
            break;
        }
        last = r.body.trim_end().to_string();
    }
    last
}

/// A fork child execs another program: from then on each process runs its own image, and a
/// breakpoint by name stops in both, each at its own address. The parent's three calls made
/// while the child's program is selected were missed (the parent ran without breakpoints:
/// counts 1 and 3 for 4 and 3).
#[test]
fn a_breakpoint_by_name_stops_in_a_parent_and_the_other_program_its_child_execs() {
    let program = fixture("exec_other");
    let tick = fixture("exec_other_tick");
    let tick_arg = tick.to_str().unwrap();
    let (truth, code) = alone(&program, &[tick_arg]);
    assert_eq!(code, Some(0));
    let mut scry = tree(&program, &[tick_arg]);
    let parent = scry.num("status().pid") as i64;
    let last = count_by_process(&mut scry);
    assert!(last.starts_with("exited with code 0"), "{last}");
    let counts = scry.ok("Object.entries(ctx.n).map(([p, n]) => p + ':' + n).sort().join(' ')");
    let child = scry.num(&format!("+Object.keys(ctx.n).find(p => p != {parent})"));
    let mut want = [format!("{parent}:4"), format!("{child}:3")];
    want.sort();
    assert_eq!(counts, want.join(" "));
    // The program's own counts: nothing it ran was changed by the other image's int3s.
    assert_eq!(scry.ok("output()").trim(), truth.trim());
    // With nothing alive, running says which process ended last, and how.
    let err = scry.err("step()");
    assert!(
        err.contains(&format!(
            "no live process (process {parent} exited with code 0)"
        )),
        "{err}"
    );
}

/// The same with the address space randomized (an attached program): the child execs the
/// same program, loaded at another address. The parent, held while the child is selected,
/// gets its own addresses, not the child's (which are not code in it, or are other code).
#[test]
fn an_attached_parent_keeps_its_own_breakpoints_when_its_child_execs_the_program_elsewhere() {
    use std::io::BufRead;
    let program = fixture("exec_other");
    let dir = temp_path("exec-other-attach");
    std::fs::create_dir_all(&dir).unwrap();
    let mut target = ChildGuard(
        Command::new(&program)
            .arg("self")
            .arg(&dir)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdout = std::io::BufReader::new(target.0.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let parent = pid_after(&line, "parent ");
    let mut scry = Scry::start(&["--follow-fork", "both", "-p", &parent.to_string()]);
    scry.ok(COUNT_WORK_BY_PROCESS);
    std::fs::write(dir.join("go"), "").unwrap();
    let exec = scry.ok("cont({timeout: 20})");
    assert!(exec.starts_with("exec "), "{exec}");
    let child = scry.num("status().pid") as i32;
    assert_ne!(child, parent);
    // The child's image is elsewhere than the parent's (randomized).
    let bases = |pid: i32| load_bias(pid, &program);
    let (parent_base, child_base) = (bases(parent), bases(child));
    let end = scry.ok("cont({timeout: 20})");
    assert!(
        end.starts_with(&format!("exited with code 3 process {child}")),
        "{end}"
    );
    assert_eq!(scry.num(&format!("ctx.n[{parent}]")), 4);
    assert_eq!(scry.num(&format!("ctx.n[{child}]")), 3);
    assert!(
        text_is_the_file_s(&program, parent),
        ".text of {parent} differs from the file"
    );
    assert_eq!(scry.ok("detach().reason"), "detached");
    scry.finish();
    let status = target.wait_timeout(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(rest.contains("tick: total 6"), "{rest}");
    assert!(rest.contains("parent: child exited 3, done 31"), "{rest}");
    if parent_base == child_base {
        eprintln!("note: the address space was not randomized here; the test proves less");
    }
}

/// A logpoint hit in one process of the tree stops that process alone: while its listener
/// runs the others run on (`process.list()` says `running`), every hit is still counted, and
/// a run that ends at a hit ends with every process stopped and none of scry's bytes in the
/// held ones. Before, every hit stopped every process (6,002 hits in fork_server took 3.7-4.0
/// s, now 0.6-0.7 s).
#[test]
fn a_logpoint_hit_stops_only_its_own_process() {
    let program = fixture("fork_server");
    let mut scry = tree(&program, &["2", "300", "-1", "reap"]);
    let parent = scry.num("status().pid") as i32;
    scry.ok(
        "ctx.n = 0; ctx.others = null; breakpoint.set('handle', {log: e => { \
           if (++ctx.n == 100) ctx.others = process.list().filter(r => r.pid != e.pid).map(r => r.state).join(','); \
           return null; }})",
    );
    let end = scry.ok("cont({timeout: 120})");
    assert!(
        end.starts_with(&format!("exited with code 0 process {parent}")),
        "{end}"
    );
    assert_eq!(scry.num("ctx.n"), 602);
    let others = scry.ok("ctx.others");
    assert!(
        !others.is_empty() && others.split(',').all(|s| s == "running"),
        "{others}"
    );

    // A hit the listener stops at: the run ends with everyone stopped and cleaned.
    let mut scry = tree(&program, &["2", "300", "-1", "reap"]);
    let parent = scry.num("status().pid") as i32;
    scry.ok("ctx.n = 0; breakpoint.set('handle', {if: e => ++ctx.n == 150})");
    let stop = scry.ok("cont({timeout: 120})");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    let rows = table(&scry.ok("process.list()"));
    assert_eq!(rows.len(), 3, "{rows:?}");
    for r in &rows {
        let pid: i32 = r["pid"].parse().unwrap();
        assert!(
            r["state"] == "selected" || r["state"] == "stopped",
            "{rows:?}"
        );
        assert_eq!(
            proc_status_field(pid, "State").chars().next(),
            Some('t'),
            "{pid}"
        );
        if r["state"] == "stopped" {
            assert!(text_is_the_file_s(&program, pid), ".text of {pid}");
        }
    }
    // And goes on to the end (the selected worker's end is a stop of its own) with the
    // program's own account unchanged.
    scry.ok("breakpoint.remove(1)");
    let mut ended = false;
    for _ in 0..5 {
        let r = scry.eval("cont({timeout: 120})");
        if !r.ok {
            let want = format!("no live process (process {parent} exited with code 0)");
            assert!(r.body.contains(&want), "{}", r.body);
            ended = true;
            break;
        }
    }
    assert!(ended);
    assert_eq!(scry.num("ctx.n"), 150);
    let out = scry.ok("output()");
    assert!(out.contains("handled 300"), "{out}");
}

/// Tracepoints probe the selected process only; in a tree run the other processes run
/// unprobed, and the stop says so instead of counts that read as the whole tree's (`hits 2`
/// with the workers' 600 calls silently missing).
#[test]
fn a_tree_run_says_its_tracepoints_miss_the_other_processes() {
    let program = fixture("fork_server");
    let mut scry = tree(&program, &["2", "300", "-1", "reap"]);
    let parent = scry.num("status().pid");
    scry.ok("tracepoint.set('handle', {collect: ['rdi']})");
    let end = scry.ok("cont({timeout: 60})");
    assert!(
        end.contains(&format!(
            "tracepoints probe the selected process {parent} only: the tree's other processes ran unprobed"
        )),
        "{end}"
    );
    assert_eq!(scry.num("tracepoint.list()[0].hits"), 2);
    // The workers the parent reaped before its end ended: they are not "remaining" (1 run
    // in 6 listed them so, their ends taken but not yet noted).
    assert!(!end.contains("remain"), "{end}");
    assert!(end.contains("exited with code 10]"), "{end}");
    assert!(end.contains("exited with code 11]"), "{end}");
}
