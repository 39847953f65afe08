//! `config.follow_fork = 'both'` (issue 13): both sides of a fork stay under control; the
//! child is held until `process.select()` picks it, breakpoints apply to every process, and
//! the end of the session (kill, detach, closed stdin) handles each of them. Ground truth is
//! what `fixtures/fork_server.c` prints about itself, `/proc`, and the binary's `.text`.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn server() -> std::path::PathBuf {
    fixture("fork_server")
}

/// `forked worker N pid P` lines of the fixture's output: the pids of workers 0, 1, ...
fn worker_pids(out: &str) -> Vec<i32> {
    let mut rows: Vec<(usize, i32)> = out
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5 && w[0] == "forked" && w[1] == "worker")
                .then(|| (w[2].parse().unwrap(), w[4].parse().unwrap()))
        })
        .collect();
    rows.sort();
    rows.into_iter().map(|(_, pid)| pid).collect()
}

fn wait_dead(pids: &[i32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pids.iter().all(|&p| process_is_dead(p)) {
        assert!(Instant::now() < deadline, "still running: {pids:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_breakpoint_set_before_the_fork_counts_hits_in_parent_and_children() {
    let mut scry = Scry::spawn_holding_children(&server(), &["2", "3", "-1", "exit"]);
    assert_eq!(scry.ok("config.follow_fork"), "both");
    scry.ok("breakpoint.set('handle')");
    let parent = scry.num("status().pid") as i32;
    // handle(100) in the parent, before any fork.
    let first = scry.ok("cont()");
    assert!(first.starts_with("breakpoint 1 at "), "{first}");
    assert_eq!(scry.num("state.registers.rdi"), 100);
    // handle(101) after both forks: the stop names the held children.
    let second = scry.ok("cont()");
    assert!(second.starts_with("breakpoint 1 at "), "{second}");
    assert_eq!(scry.num("state.registers.rdi"), 101);
    let out = scry.ok("output()");
    let workers = worker_pids(&out);
    assert_eq!(workers.len(), 2, "{out}");
    // One note for a parent's children; the line names the process now that there are more.
    assert!(
        second.contains(&format!(
            "[2 fork children of {parent} held: {}, {} (process.select(pid) debugs one)]",
            workers[0], workers[1]
        )),
        "{second}"
    );
    assert!(second.contains(&format!(" process {parent} ")), "{second}");
    // Held children do not run: none has printed anything.
    assert!(!out.contains("handled 3"), "{out}");
    let ended = scry.ok("cont()");
    assert!(ended.starts_with("exited with code 0"), "{ended}");
    assert!(
        ended.contains(&format!(
            "held processes remain: {}, {}",
            workers[0], workers[1]
        )),
        "{ended}"
    );
    let rows = table(&scry.ok("process.list()"));
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0]["pid"], parent.to_string());
    assert_eq!(rows[0]["state"], "exited with code 0");
    for (row, w) in rows[1..].iter().zip(&workers) {
        assert_eq!(row["pid"], w.to_string());
        assert_eq!(row["state"], "held");
        assert_eq!(row["threads"], "1");
        assert_eq!(row["program"], rows[0]["program"], "{row:?}");
        // Held means stopped under scry (ptrace stop), with scry as its tracer.
        assert_eq!(proc_status_field(*w, "State").chars().next(), Some('t'));
        assert_eq!(proc_status_field(*w, "TracerPid"), scry.pid().to_string());
    }
    assert_eq!(scry.ok("process.list().length"), "3");
    let err = scry.err("cont()");
    assert!(
        err.contains(&format!("held: {}, {}", workers[0], workers[1])),
        "{err}"
    );

    let mut hits_in_workers = 0;
    for (index, w) in workers.iter().enumerate() {
        let selected = scry.ok(&format!("process.select({w})"));
        assert!(
            selected.starts_with(&format!("process {w} thread {w} at ")),
            "{selected}"
        );
        assert_eq!(scry.num("status().pid"), *w as u64);
        let mut requests = Vec::new();
        loop {
            let stop = scry.ok("cont()");
            if stop.starts_with("exited") {
                assert!(
                    stop.starts_with(&format!("exited with code {}", 10 + index)),
                    "{stop}"
                );
                break;
            }
            assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
            requests.push(scry.num("state.registers.rdi"));
            hits_in_workers += 1;
        }
        assert_eq!(requests, vec![0, 1, 2]);
        let out = scry.ok("output()");
        let printed = number_after(&out, &format!("worker {index} pid {w} handled "));
        assert_eq!(requests.len() as i64, printed);
    }
    // One count over every process: the parent's two and each worker's own.
    let hits = scry.num("breakpoint.list()[0].hits");
    assert_eq!(hits, 2 + hits_in_workers);
    assert_eq!(hits_in_workers, 6);
    assert_eq!(scry.ok("process.list().length"), "1");
    scry.finish();
}

#[test]
fn a_crashing_worker_is_caught_with_its_stack_and_closing_stdin_kills_everyone() {
    let mut scry = Scry::spawn_holding_children(&server(), &["2", "2", "1", "reap"]);
    let parent = scry.num("status().pid") as i32;
    // The parent waits for workers that are held: the run ends at its deadline.
    let stop = scry.ok("cont({timeout: 1})");
    assert!(stop.starts_with("timeout"), "{stop}");
    let out = scry.ok("output()");
    let workers = worker_pids(&out);
    assert_eq!(workers.len(), 2, "{out}");
    assert!(
        stop.contains(&format!("fork children of {parent} held: {}", workers[0])),
        "{stop}"
    );
    let rows = table(&scry.ok("process.list()"));
    let states: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["pid"].as_str(), r["state"].as_str()))
        .collect();
    let (p, w0, w1) = (
        parent.to_string(),
        workers[0].to_string(),
        workers[1].to_string(),
    );
    assert_eq!(
        states,
        vec![
            (p.as_str(), "selected"),
            (w0.as_str(), "held"),
            (w1.as_str(), "held")
        ]
    );

    scry.ok(&format!("process.select({})", workers[1]));
    let crash = scry.ok("cont()");
    assert!(
        crash.starts_with("signal SIGSEGV fault_addr=0x0"),
        "{crash}"
    );
    assert!(crash.contains("crash_now"), "{crash}");
    let stack = scry.ok("state.unwind()");
    let names: Vec<&str> = stack
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(names[0].starts_with("crash_now"), "{stack}");
    assert!(names[1].starts_with("worker_main"), "{stack}");
    assert!(names[2].starts_with("main"), "{stack}");
    // The crashing worker's own view: worker_main's index is 1, its count 2.
    assert_eq!(scry.num("state.var('index', 1)"), 1);
    assert_eq!(scry.num("state.var('mine', 1)"), 2);
    let rows = table(&scry.ok("process.list()"));
    assert_eq!(rows[0]["pid"], w1);
    assert_eq!(rows[0]["state"], "selected");
    assert!(rows.iter().any(|r| r["pid"] == p && r["state"] == "held"));

    // Closing stdin ends the session: every process (spawned) is killed.
    let mut all = workers.clone();
    all.push(parent);
    scry.finish();
    wait_dead(&all);
}

#[test]
fn kill_ends_every_process() {
    let mut scry = Scry::spawn(&server(), &["2", "1", "-1", "reap"]);
    let err = scry.err("config.follow_fork = 'sideways'");
    assert!(err.contains("'parent', 'child' or 'both'"), "{err}");
    scry.ok("config.follow_fork = 'both'; config.schedule = 'selected'");
    let parent = scry.num("status().pid") as i32;
    assert!(scry.ok("cont({timeout: 1})").starts_with("timeout"));
    let workers = worker_pids(&scry.ok("output()"));
    assert_eq!(workers.len(), 2);
    let err = scry.err("process.select(1)");
    assert!(
        err.contains(&format!(
            "no process 1; processes: {parent}, {}, {}",
            workers[0], workers[1]
        )),
        "{err}"
    );
    // Selecting the selected process changes nothing.
    assert!(scry
        .ok(&format!("process.select({parent})"))
        .starts_with(&format!("process {parent} thread {parent} at ")));
    assert!(scry.ok("kill()").starts_with("killed by SIGKILL"));
    let mut all = workers.clone();
    all.push(parent);
    wait_dead(&all);
    let rows = table(&scry.ok("process.list()"));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["state"], "killed by SIGKILL");
    // Nothing is held any more: a new program can be spawned.
    scry.ok(&format!("spawn('{}', '0')", server().display()));
    scry.ok("kill()");
}

#[test]
fn attach_both_then_detach_leaves_parent_and_child_running_with_the_file_s_code() {
    let binary = server();
    let dir = temp_path("fork-attach");
    std::fs::create_dir_all(&dir).unwrap();
    let mut target = ChildGuard(
        Command::new(&binary)
            .args(["1", "3", "-1", "attach"])
            .arg(&dir)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdout = BufReader::new(target.0.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let parent: i32 = line
        .trim()
        .strip_prefix("parent ")
        .unwrap()
        .parse()
        .unwrap();

    let mut scry = Scry::start(&[
        "--follow-fork",
        "both",
        "--schedule",
        "selected",
        "-p",
        &parent.to_string(),
    ]);
    scry.ok("breakpoint.set('handle')");
    std::fs::write(dir.join("go"), "").unwrap();
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    assert_eq!(scry.num("state.registers.rdi"), 100);
    let stop = scry.ok("cont()");
    assert_eq!(scry.num("state.registers.rdi"), 101);
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let worker = worker_pids(&line)[0];
    assert!(
        stop.contains(&format!("fork child {worker} of {parent} held")),
        "{stop}"
    );
    // The parent waits for go2; the worker is held, at its fork.
    assert!(scry.ok("cont({timeout: 0.5})").starts_with("timeout"));
    scry.ok(&format!("process.select({worker})"));
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    assert_eq!(scry.num("state.registers.rdi"), 0);
    assert_eq!(scry.num("breakpoint.list()[0].hits"), 3);
    assert_eq!(scry.ok("detach().reason"), "detached");
    let err = scry.err("cont()");
    assert!(
        err.contains(&format!("no live process (process {worker} detached)")),
        "{err}"
    );

    // Both run untraced, and their code is the file's code again.
    for pid in [parent, worker] {
        assert_eq!(proc_status_field(pid, "TracerPid"), "0", "{pid}");
        let state = proc_status_field(pid, "State");
        assert!(!state.starts_with(['t', 'T']), "{pid}: {state}");
        assert!(
            text_is_the_file_s(&binary, pid),
            ".text of {pid} differs from the file"
        );
    }
    scry.finish();
    // They go on as without scry: the worker handles its requests (through the breakpoint's
    // address), the parent reaps it.
    std::fs::write(dir.join("go2"), "").unwrap();
    let status = target.wait_timeout(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(
        number_after(&rest, &format!("worker 0 pid {worker} handled ")),
        3
    );
    assert!(
        rest.contains(&format!("reaped {worker} exited with 10")),
        "{rest}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_watchpoint_applies_to_the_selected_child_with_its_own_values() {
    let mut scry = Scry::spawn(&server(), &["1", "2", "-1", "exit"]);
    scry.ok("config.follow_fork = 'both'; config.schedule = 'selected'");
    scry.ok("watchpoint.set('served')");
    // The parent's two requests: served 0 -> 1 before the fork, 1 -> 2 after it.
    assert!(scry.ok("cont()").contains(" 0 -> 1 "));
    let second = scry.ok("cont()");
    assert!(second.contains(" 1 -> 2 "), "{second}");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let worker = worker_pids(&scry.ok("output()"))[0];
    scry.ok(&format!("process.select({worker})"));
    // The worker's copy of served was 1 at the fork; it counts its own two requests.
    assert!(scry.ok("cont()").contains(" 1 -> 2 "));
    assert!(scry.ok("cont()").contains(" 2 -> 3 "));
    assert!(scry.ok("cont()").starts_with("exited with code 10"));
    assert_eq!(
        number_after(
            &scry.ok("output()"),
            &format!("worker 0 pid {worker} handled ")
        ),
        2
    );
    assert_eq!(scry.num("watchpoint.list()[0].hits"), 4);
}

#[test]
fn a_held_child_s_own_fork_is_held_the_same_way() {
    let mut scry = Scry::spawn_holding_children(&fixture("fork_nested"), &[]);
    scry.ok("breakpoint.set('work')");
    let parent = scry.num("status().pid") as i32;
    let mut generations = Vec::new();
    let mut selected = parent;
    for generation in 0..3 {
        let stop = scry.ok("cont()");
        assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
        generations.push(scry.num("state.registers.rdi"));
        let end = scry.ok("cont()");
        assert!(
            end.starts_with(&format!("exited with code {generation}")),
            "{end}"
        );
        if generation == 2 {
            assert!(!end.contains("held"), "{end}");
            break;
        }
        // The process that just ended forked the next generation, which is held.
        let rows = table(&scry.ok("process.list()"));
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(rows[0]["pid"], selected.to_string());
        assert_eq!(rows[1]["state"], "held");
        let next: i32 = rows[1]["pid"].parse().unwrap();
        assert!(
            end.contains(&format!("fork child {next} of {selected} held")),
            "{end}"
        );
        scry.ok(&format!("process.select({next})"));
        selected = next;
    }
    assert_eq!(generations, vec![0, 1, 2]);
    assert_eq!(scry.num("breakpoint.list()[0].hits"), 3);
    let out = scry.ok("output()");
    assert!(out.contains(&format!("grandchild {selected}")), "{out}");
    assert!(out.contains(&format!("parent {parent} forked ")), "{out}");
}

#[test]
fn the_held_notes_survive_stops_that_listeners_let_go() {
    let mut scry = Scry::spawn_holding_children(&server(), &["2", "3", "-1", "exit"]);
    let parent = scry.num("status().pid") as i32;
    // Every hit in the parent is let go, the one after the forks too: the notes must wait
    // for the stop cont() returns (the parent's exit).
    scry.ok("ctx.n = 0; breakpoint.set('handle', {log: e => { ctx.n++ }})");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("exited with code 0"), "{stop}");
    assert_eq!(
        scry.num("ctx.n"),
        2,
        "handle(100) and handle(101) in the parent: {stop}"
    );
    let out = scry.ok("output()");
    let workers = worker_pids(&out);
    assert_eq!(workers.len(), 2, "{out}");
    assert!(
        stop.contains(&format!(
            "[2 fork children of {parent} held: {}, {} (process.select(pid) debugs one)]",
            workers[0], workers[1]
        )),
        "{stop}"
    );
    assert!(scry.ok("kill()").contains("kill"));
}
