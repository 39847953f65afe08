//! The help table and the live JavaScript environment agree: every path `help()` documents
//! exists, so the reference cannot drift from the API.

mod common;

use common::{fixture, Scry};
use scry::entry::api;

#[test]
fn every_documented_path_exists() {
    let mut scry = Scry::spawn(&fixture("loop"), &[]);
    // Walks a path such as `state.memory().u32()`: intermediate calls are made (with a dummy
    // address), the last segment is only looked up.
    scry.ok(
        "globalThis.__exists = (path) => { let o = globalThis; const parts = path.split('.'); \
         for (let i = 0; i < parts.length; i++) { const call = parts[i].endsWith('()'); \
         const name = call ? parts[i].slice(0, -2) : parts[i]; \
         if (o === null || o === undefined || !(name in Object(o))) return false; \
         if (i < parts.length - 1) o = call ? o[name](0x1000) : o[name]; } return true; }",
    );
    let mut checked = 0;
    for entry in api::API {
        for path in api::paths(entry) {
            let answer = scry.ok(&format!("__exists({path:?})"));
            assert_eq!(
                answer, "true",
                "help() documents {path} but it does not exist"
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} paths checked");
}

#[test]
fn help_fits_in_3kb_and_names_topics() {
    let mut scry = Scry::start(&[]);
    let all = scry.ok("help()");
    assert!(all.len() < 3072, "help() is {} bytes", all.len());
    assert!(all.contains("breakpoint.set"));
    let state = scry.ok("help('state')");
    assert!(state.contains("state.registers.rax"));
    assert!(!state.contains("breakpoint.set"));
    // help('all'): every topic's entries and notes, the extra topics too, in one answer.
    let everything = scry.ok("help('all')");
    for topic in [
        "[run]",
        "[state]",
        "[break]",
        "[events]",
        "[core]",
        "[syscalls]",
        "[fork]",
    ] {
        assert!(everything.contains(topic), "help('all') lacks {topic}");
    }
    assert!(
        everything.contains(&state),
        "help('all') holds help('state') whole"
    );
    assert!(everything.len() > all.len());
}
