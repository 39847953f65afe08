//! Unwinding: call chains with and without frame pointers, through a signal handler, into
//! inlined calls, across a coroutine's stack switch, and in a Rust binary.

mod common;

use common::{fixture, fixture_with, Scry};

/// Names of the listed frames, innermost first (`main+0x15` -> `main`).
fn names(scry: &mut Scry) -> Vec<String> {
    let text = scry.ok("state.unwind({all: true}).map(f => (f.inlined ? 'inlined:' : '') + (f.symbol || '??').split('+')[0]).join('|')");
    text.split('|').map(str::to_string).collect()
}

fn chain_at_leaf(binary: &std::path::Path) -> Scry {
    let mut scry = Scry::spawn(binary, &[]);
    scry.ok("breakpoint.set('leaf')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    scry
}

#[test]
fn known_chain_at_o0() {
    let mut scry = chain_at_leaf(&fixture("chain"));
    let names = names(&mut scry);
    // `helper` is always inlined, even at -O0, and shows as a frame of its own.
    assert_eq!(
        &names[..6],
        &["leaf", "inlined:helper", "inner", "middle", "outer", "main"]
    );
    assert_eq!(names.last().unwrap(), "_start");
    let listing = scry.ok("state.unwind()");
    // A breakpoint on a function stops after its prologue, on its first body line; the
    // row shows the argument main's call chain passed (1 + 3, * 2, + 1, + 100).
    let first = listing.lines().next().unwrap();
    assert!(
        first.contains(" leaf+0x") && first.ends_with("(x=109) chain.c:9"),
        "{listing}"
    );
    assert!(!listing.contains("unwinding stopped"), "{listing}");
}

#[test]
fn known_chain_at_o2_without_frame_pointers() {
    let mut scry = chain_at_leaf(&fixture_with(
        "chain",
        &["-g", "-O2", "-fomit-frame-pointer"],
    ));
    let names = names(&mut scry);
    // `helper` is inlined into `inner` and shows as its own frame.
    assert_eq!(
        &names[..6],
        &["leaf", "inlined:helper", "inner", "middle", "outer", "main"]
    );
    assert_eq!(names.last().unwrap(), "_start");
    // Caller frames carry their call's line, and callee-saved registers are recovered.
    let inner = scry.ok("const f = state.unwind()[2]; f.file.split('/').pop() + ':' + f.line");
    assert_eq!(
        inner, "chain.c:17",
        "the line of the (inlined) call in inner"
    );
    assert_eq!(scry.ok("typeof state.frame(3).registers.rbx"), "number");
    assert_eq!(scry.ok("state.frame(3).symbol.split('+')[0]"), "middle");
    assert!(scry.err("state.frame(500)").contains("no frame 500"));
}

#[test]
fn through_a_signal_handler() {
    let mut scry = chain_at_leaf(&fixture_with(
        "chain",
        &["-g", "-O2", "-fomit-frame-pointer"],
    ));
    assert!(scry.ok("cont()").starts_with("signal SIGUSR1"));
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    let names = names(&mut scry);
    let outer = names.iter().position(|n| n == "outer").expect("outer");
    let main = names
        .iter()
        .position(|n| n == "main")
        .expect("main is reached through the signal frame");
    assert!(outer < main, "{names:?}");
    assert_eq!(
        scry.ok("state.unwind().filter(f => f.source === 'signal').length"),
        "1"
    );
    assert!(scry
        .ok("state.unwind()")
        .contains("<signal handler called>"));
}

#[test]
fn coroutine_stack_ends_cleanly() {
    let mut scry = Scry::spawn(&fixture("coro"), &[]);
    scry.ok("breakpoint.set('task_ok')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1"));
    let listing = scry.ok("state.unwind()");
    assert!(
        listing.lines().next().unwrap().contains(" task_ok"),
        "{listing}"
    );
    if scry.ok("modules().find(m => m.name.startsWith('libc.so')).debug") != "separate" {
        eprintln!("no debug file for libc (libc6-dbg): __start_context has no name; skipped");
        return;
    }
    // The task's stack begins at makecontext's trampoline, named, and ends there cleanly:
    // what lies past it is the task's unused stack, not callers.
    let frames = scry.num("state.unwind({all: true}).length");
    assert_eq!(frames, 2, "{listing}");
    assert_eq!(scry.ok("state.unwind()[1].symbol"), "__start_context");
    assert!(!listing.contains("unwinding stopped"), "{listing}");
    let pcs = scry.ok("state.unwind().map(f => f.pc + ':' + f.sp).join(' ')");
    let unique: std::collections::HashSet<&str> = pcs.split(' ').collect();
    assert_eq!(unique.len() as u64, frames, "no frame repeats: {listing}");
}

#[test]
fn rust_binary_names_are_demangled() {
    let mut scry = Scry::spawn(&common::rust_fixture("chain", "1"), &[]);
    scry.ok("breakpoint.set('chain::deep::inner')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at"));
    let names: Vec<String> = names(&mut scry)
        .into_iter()
        .filter(|n| !n.starts_with("inlined:"))
        .collect();
    assert_eq!(
        &names[..3],
        &["chain::deep::inner", "chain::deep::middle", "chain::outer"],
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "chain::main"), "{names:?}");
    let file = scry.ok("state.unwind().find(f => !f.inlined).file.split('/').pop()");
    assert_eq!(file, "chain.rs");
}

#[test]
fn the_listing_ends_at_main_unless_asked_for_more() {
    let mut scry = chain_at_leaf(&fixture("chain"));
    let listing = scry.ok("state.unwind()");
    assert!(
        listing.lines().last().unwrap().contains(" main+"),
        "{listing}"
    );
    assert!(!listing.contains("_start"), "{listing}");
    assert!(scry.num("state.unwind({all: true}).length") > scry.num("state.unwind().length"));
    // `max` counts the rows printed, inlined ones included: the first rows of the full walk.
    let all = scry.ok("state.unwind({all: true}).slice(0, 2).map(f => f.symbol).join('|')");
    assert_eq!(
        scry.ok("state.unwind({max: 2, all: true}).map(f => f.symbol).join('|')"),
        all
    );
    assert_eq!(scry.num("state.unwind({max: 2, all: true}).length"), 2);
}

#[test]
fn stops_name_their_source_line_and_source_shows_it() {
    let mut scry = chain_at_leaf(&fixture("chain"));
    let stop = scry.ok("cont()");
    // A second hit: through the signal handler this time; the line names the source position.
    assert!(
        stop.starts_with("signal SIGUSR1") || stop.contains(" chain.c:9"),
        "{stop}"
    );
    let mut again = chain_at_leaf(&fixture("chain"));
    assert_eq!(
        again.ok("ctx.s = state.source(1); ctx.s.split('\\n')[0].split('/').pop()"),
        "chain.c:9"
    );
    let lines = again.ok("ctx.s.split('\\n').slice(1).join('|')");
    assert_eq!(
        lines,
        " 8\t__attribute__((noinline)) void leaf(int x) {|>9\t    sink = x;| 10\t}"
    );
    assert!(again.err("state.source(2000)").contains("source(n)"));
}

#[test]
fn breakpoints_by_file_and_line() {
    let program = fixture("chain");
    let mut scry = Scry::spawn(&program, &[]);
    // `sink = x;` inside leaf() is line 9 of fixtures/chain.c.
    scry.ok("breakpoint.set('chain.c:9')");
    let stop = scry.ok("cont()");
    assert!(
        stop.starts_with("breakpoint 1 at ")
            && stop.contains(" leaf+")
            && stop.ends_with(" chain.c:9"),
        "{stop}"
    );
    // The address is inside leaf, after its prologue, and a longer path suffix works too.
    let leaf = scry.num("symbol('leaf')");
    let at = scry.num("symbol('fixtures/chain.c:9')");
    assert!(at > leaf && at < leaf + 64, "{at:#x} vs leaf {leaf:#x}");
    assert_eq!(scry.num("state.pc"), at);
    let missing = scry.err("breakpoint.set('chain.c:2')");
    assert!(missing.contains("no code for chain.c:2"), "{missing}");
    // A file no loaded module has: pending by default (a library may bring it), an error
    // when asked.
    assert!(scry.ok("breakpoint.set('other.c:9')").contains("pending"));
    assert!(scry
        .err("breakpoint.set('other.c:9', {pending: false})")
        .contains("no loaded module has code from other.c"));
}

#[test]
fn a_callers_register_is_written_where_its_callee_saved_it() {
    let bin = fixture_with("frame_regs", &["-g", "-O1"]);
    let mut scry = Scry::spawn(&bin, &["2"]);
    assert!(scry
        .ok("breakpoint.set('leaf'); cont()")
        .starts_with("breakpoint 1"));
    // outer keeps `kept` (2 * 7 + 1) in rbx; middle saved it before using rbx itself.
    assert_eq!(scry.ok("state.frame(2).registers.rbx"), "15");
    assert_eq!(
        scry.ok("state.frame(2).registers.rbx = 1000; state.frame(2).registers.rbx"),
        "1000"
    );
    // middle's own rbx (the live register: leaf did not save it) is untouched.
    assert_eq!(scry.ok("state.frame(1).registers.rbx"), "2");
    assert!(scry
        .err("state.frame(2).registers.rsp = 5")
        .contains("frame 2's rsp is computed, not kept anywhere"));
    assert!(scry
        .err("state.frame(1).registers.rax = 5")
        .contains("frame 1's rax is not known"));
    assert_eq!(scry.ok("String(state.frame(1).registers.rax)"), "undefined");
    // Frame 0's registers are the thread's.
    scry.ok("state.frame(0).registers.rdi = 4");
    assert_eq!(scry.ok("state.registers.rdi"), "4");
    scry.ok("state.registers.rdi = 2; breakpoint.remove(1)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    // The program itself says what it kept.
    assert_eq!(scry.ok("output()"), "kept=1000 r=128");
}

/// A thread stopped inside glibc's clone3 as the parent (caught making a thread) unwinds to
/// main: glibc's tables leave the parent's way back from the system call uncovered, and the
/// walk ended silently at `#0 clone3`, as a new thread's bottom frame does.
#[test]
fn a_thread_making_a_thread_unwinds_through_clone3() {
    let exe = fixture_with("spawn_unwind", &["-g", "-O0", "-pthread"]);
    let mut scry = Scry::spawn(&exe, &[]);
    let stop = scry.ok("syscall.catch('clone3'); cont()");
    if !stop.contains("clone3") {
        eprintln!("this glibc makes threads without clone3: skipping ({stop})");
        return;
    }
    let frames = scry.ok("state.unwind().map(r => r.symbol.split('+')[0]).join(' ')");
    assert!(
        frames.starts_with("clone3 ") && frames.ends_with(" pthread_create start_one main"),
        "{frames}"
    );
    assert!(!scry
        .ok("String(state.unwind())")
        .contains("unwinding stopped"));
}
