//! A process tree run as one (`--follow-fork both` with `config.schedule = 'all'`): one
//! `cont()` from the start reaches a worker's crash although the parent waits in `read`/
//! `wait4` for its workers, and the program's own result is what it is alone.

mod common;

use common::{fixture, Scry};

/// The pre-forking server: three workers over pipes, the one given job 7 crashes. With the
/// tree scheduled as one, `cont()` stops at the SIGSEGV in `handle` (before, it
/// ended at its deadline in the parent's `wait4`, the workers held); continuing lets the
/// worker die and the parent reap it and print what it prints alone.
#[test]
fn one_cont_reaches_the_crashing_worker_of_a_preforking_server() {
    let mut scry = Scry::spawn(&fixture("prefork"), &[]);
    scry.ok("config.follow_fork = 'both'");
    scry.ok("config.schedule = 'all'");
    // A worker that ends first is a stop of its own (every end stops the tree): at most one
    // per other worker before the crash.
    let mut stop = scry.ok("cont()");
    for _ in 0..2 {
        if !stop.starts_with("exited with code 0") {
            break;
        }
        stop = scry.ok("cont()");
    }
    assert!(
        stop.starts_with("signal SIGSEGV fault_addr=0x0") && stop.contains("handle"),
        "{stop}"
    );
    assert_eq!(scry.ok("state.var('job')"), "7", "{stop}");
    // The crash is in a worker, not the parent (the first of the list is the selected one).
    let parent = scry.ok("process.list().map(p => p.pid).sort((a, b) => a - b)[0]");
    assert_ne!(scry.ok("process.list()[0].pid"), parent);
    let mut end = String::new();
    for _ in 0..6 {
        let r = scry.eval("cont()");
        end = scry.ok("output()");
        if end.contains("crashed") || !r.ok {
            break;
        }
    }
    assert!(
        end.contains("worker 1 killed by signal 11") && end.contains("crashed 1"),
        "{end}"
    );
}

/// The setting: 'selected' (today's default) and 'all', anything else a one-line error.
#[test]
fn config_schedule_takes_all_or_selected() {
    let mut scry = Scry::spawn(&fixture("prefork"), &[]);
    scry.ok("config.follow_fork = 'both'");
    assert_eq!(scry.ok("config.schedule"), "selected");
    scry.ok("config.schedule = 'all'");
    assert_eq!(scry.ok("config.schedule"), "all");
    let err = scry.err("config.schedule = 'some'");
    assert!(
        err.contains("config.schedule must be 'all' or 'selected'"),
        "{err}"
    );
}
