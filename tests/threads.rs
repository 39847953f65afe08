//! Threads, thread-locals and stack bounds.

mod common;

use common::{fixture, parse_num, Scry};

/// `key=value` pairs of the fixture lines that start with `prefix`.
fn fields(out: &str, prefix: &str) -> Vec<std::collections::HashMap<String, String>> {
    out.lines()
        .filter(|l| l.starts_with(prefix))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn thread_list_matches_proc_task() {
    let mut scry = Scry::spawn(&fixture("threads"), &[]);
    let pid = scry.target_pid();
    scry.ok("breakpoint.set('all_started')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at"));
    let mut from_proc: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().parse().unwrap())
        .collect();
    from_proc.sort();
    let listed = scry.ok("thread.list().map(t => t.tid).sort((a, b) => a - b).join(' ')");
    let listed: Vec<i32> = listed.split(' ').map(|t| t.parse().unwrap()).collect();
    assert_eq!(listed, from_proc);
    assert_eq!(listed.len(), 5);
    let names = scry.ok("thread.list().map(t => t.name).sort().join(' ')");
    // The main thread's name is the program's file name, cut to 15 bytes by the kernel.
    let program = fixture("threads")
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .chars()
        .take(15)
        .collect::<String>();
    assert_eq!(names, format!("{program} worker0 worker1 worker2 worker3"));
    // The workers wait on the gate mutex: stopped inside futex.
    assert_eq!(
        scry.ok("thread.list().filter(t => t.state === 'in futex').length"),
        "4"
    );
    assert_eq!(
        scry.ok("thread.list().find(t => t.selected).tid"),
        pid.to_string()
    );
    // Selecting another thread changes what state shows.
    let worker = scry.ok("thread.list().find(t => t.name === 'worker2').tid");
    let selected = scry.ok(&format!("thread.select({worker})"));
    assert!(
        selected.starts_with(&format!("thread {worker} at 0x")),
        "{selected}"
    );
    assert_eq!(scry.ok("state.tid"), worker);
    assert_ne!(
        scry.ok("hex(state.pc)"),
        scry.ok("hex(symbol('all_started'))")
    );
    assert!(scry.err("thread.select(1)").contains("no thread 1"));
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
}

#[test]
fn thread_listeners_see_starts_and_exits() {
    let mut scry = Scry::spawn(&fixture("threads"), &[]);
    scry.ok("ctx.ev = []; addEventListener('thread', e => { ctx.ev.push(e.kind) })");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("ctx.ev.filter(k => k === 'start').length"), "4");
    assert_eq!(scry.ok("ctx.ev.filter(k => k === 'exit').length"), "4");
}

#[test]
fn thread_locals_differ_per_thread() {
    let mut scry = Scry::spawn(&fixture("tls"), &[]);
    scry.ok("breakpoint.set('report')");
    let mut seen = Vec::new();
    for _ in 0..3 {
        assert!(scry.ok("cont()").starts_with("breakpoint 1"));
        // Each thread's stack: the main one grows under RLIMIT_STACK, a pthread's is a mapping
        // with a guard page below it.
        let tid = scry.ok("state.tid");
        let kind = scry.ok("state.stack.kind");
        assert_eq!(
            kind,
            if tid == scry.target_pid().to_string() {
                "main"
            } else {
                "mapped"
            }
        );
        if kind == "mapped" {
            assert_eq!(scry.ok("state.stack.guard_size"), "4096");
            assert_eq!(
                scry.ok("state.stack.usable_base < state.sp && state.sp < state.stack.top"),
                "true"
            );
        }
        seen.push((
            scry.ok("hex(state.thread_local_addr('tval'))"),
            scry.ok("state.thread_local('tval')"),
            scry.ok("String(state.memory(state.thread_local_addr('tcount')).i64())"),
            scry.ok("state.thread_local('errno')"),
        ));
        // Let report() print, so the fixture's own line is there to compare with.
        scry.ok("step(200)");
    }
    scry.ok("cont()");
    let out = scry.ok("output()");
    let truth = fields(&out, "tid-report");
    assert_eq!(truth.len(), 3, "{out}");
    for ((addr, tval, tcount, errno), t) in seen.iter().zip(&truth) {
        assert_eq!(parse_num(addr), parse_num(&t["&tval"]));
        assert_eq!(tval, &t["tval"]);
        assert_eq!(tcount, &t["tcount"]);
        assert_eq!(errno, &t["errno"]);
    }
    assert!(scry
        .err("state.thread_local('nope')")
        .contains("no thread-local variable 'nope'"));
}

#[test]
fn coroutine_overflow_faults_in_the_reported_guard() {
    let mut scry = Scry::spawn(&fixture("coro"), &[]);
    let stop = scry.ok("ctx.s = cont(); ctx.s");
    assert!(stop.starts_with("signal SIGSEGV"), "{stop}");
    let fault = scry.num("ctx.s.fault_addr");
    let top = scry.num("state.stack.top");
    let base = scry.num("state.stack.usable_base");
    let guard = scry.num("state.stack.guard_size");
    assert_eq!(scry.ok("state.stack.kind"), "mapped");
    assert_eq!(guard, 4096);
    assert!(
        fault >= base - guard && fault < base,
        "fault {fault:#x} not in guard [{:#x}, {base:#x})",
        base - guard
    );
    // The fixture printed the task's stack and the scheduler's sp.
    let out = scry.ok("output()");
    let task2 = out
        .lines()
        .find(|l| l.starts_with("task 2"))
        .expect("task 2 line");
    let range = task2.split_whitespace().nth(3).unwrap();
    let (lo, hi) = range.split_once('-').unwrap();
    assert_eq!((parse_num(lo), parse_num(hi)), (base, top));
    let sched = out
        .lines()
        .rfind(|l| l.starts_with("SCHEDULER_SP="))
        .unwrap();
    assert_eq!(
        // A `void *` thread-local: a typed pointer, its address by Number().
        scry.num("Number(state.thread_local('SCHEDULER_SP'))"),
        parse_num(&sched["SCHEDULER_SP=".len()..])
    );
}

#[test]
fn main_thread_stack_uses_rlimit() {
    let mut scry = Scry::spawn(&fixture("loop"), &[]);
    let pid = scry.target_pid();
    assert_eq!(scry.ok("state.stack.kind"), "main");
    let top = scry.num("state.stack.top");
    let base = scry.num("state.stack.usable_base");
    let sp = scry.num("state.sp");
    assert!(base < sp && sp < top);
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max stack size"))
        .unwrap();
    let soft: u64 = line.split_whitespace().nth(3).unwrap().parse().unwrap();
    assert_eq!(top - base, soft);
}

#[test]
fn a_leader_that_called_pthread_exit_does_not_stall_the_stops() {
    let mut scry = Scry::spawn(&fixture("leader_exits"), &[]);
    scry.ok("breakpoint.set('work')");
    let started = std::time::Instant::now();
    for _ in 0..5 {
        let stop = scry.ok("cont({timeout: 10})");
        assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    }
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        scry.ok("thread.list().length"),
        "1",
        "the zombie leader is not listed"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()"), "worker done 5");
}
