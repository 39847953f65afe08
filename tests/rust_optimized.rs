//! Optimized Rust (fixtures/rust/ledger.rs, -C opt-level=2) read as gdb reads it: a function
//! breakpoint stops in the function, not in a call inlined at its first instruction, and a
//! return address whose line-table row says "line 0" reads as the line of its call.

mod common;

use std::process::Command;

use common::Scry;

const SOURCE: &str = include_str!("../fixtures/rust/ledger.rs");

fn line_of(needle: &str) -> usize {
    common::line_of(SOURCE, needle)
}

#[test]
fn a_function_breakpoint_and_finish_in_optimized_rust() {
    let exe = common::rust_fixture("ledger", "2");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('ledger::audit')");
    let stop = scry.ok("cont()");
    let body = line_of("let bal = acc.balance");
    assert!(stop.contains(&format!("ledger.rs:{body}")), "{stop}");
    let first = scry.ok("state.unwind(1)");
    assert!(
        first.starts_with("#0 ")
            && first.contains(" ledger::audit")
            && !first.contains("[inlined]"),
        "frame #0 is audit, as gdb's: {first}"
    );
    let id = scry.num("Number(state.value('acc.id'))");
    let owner = scry.ok("String(state.value('acc.owner'))");
    let limit = scry.num("Number(state.var('limit'))");
    assert_eq!(limit, 10_000, "the literal the call passes");

    let call = line_of("// the call");
    let back = scry.ok("finish()");
    assert!(
        back.contains(&format!("ledger.rs:{call} ")),
        "the return address reads as the call's line: {back}"
    );
    assert!(scry
        .ok("state.unwind(1)")
        .contains(&format!("ledger.rs:{call}")));
    scry.ok("breakpoint.remove(1)");
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert!(
        out.contains(&format!("id={id} owner={}", owner.trim_matches('"'))),
        "{out}"
    );

    // gdb's frame #0 and its line after finish, where gdb is installed.
    let Ok(gdb) = Command::new("gdb")
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args([
            "-ex",
            "break ledger::audit",
            "-ex",
            "run",
            "-ex",
            "bt 1",
            "-ex",
            "finish",
        ])
        .arg(&exe)
        .output()
    else {
        return;
    };
    let text = String::from_utf8_lossy(&gdb.stdout);
    if let Some(frame0) = text.lines().find(|l| l.starts_with("#0")) {
        assert!(frame0.contains("ledger::audit ("), "{text}");
    }
    if let Some(ret) = text.lines().find(|l| l.contains(" in ledger::main ")) {
        assert!(ret.ends_with(&format!("ledger.rs:{call}")), "{text}");
    }
}

/// rustc -O2 gives a local `&[u8]` the type `*const [u8]` (the same fat pair): it prints its
/// elements and indexes, as gdb's `*const [u8] [76, 84, 0, 127]` and `bytes[3]`.
#[test]
fn a_raw_slice_pointer_reads_as_its_elements() {
    let exe = common::rust_fixture("optslice", "2");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('optslice.rs:24'); cont()");
    let locals = scry.ok("state.locals()");
    assert!(
        locals.contains("bytes\t*const [u8]\t[76, 84, 0, 127]"),
        "{locals}"
    );
    assert_eq!(scry.ok("state.value('bytes[3]')"), "127");
    assert_eq!(scry.ok("state.var('bytes').length"), "4");
    // A slice parameter whose pointer -O2 let go after its last use keeps its length: said,
    // with what is missing (gdb: `<error reading variable: value has been optimized out>`).
    scry.ok("breakpoint.set('optslice.rs:37'); cont()");
    assert_eq!(
        scry.ok("String(state.var('bytes'))"),
        "<optimized out: length 4, the elements' address>"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("checksum len=4"));
}

/// A function rustc -O2 marks `DW_CC_nocall` (LLVM changed how it returns: bump's unused
/// result dropped, tail's slice pointer kept by the caller) returns no value `finish()` can
/// read: it says so, as gdb does, where it read rax as the value (`returned 93824992568888`,
/// `returned []` for `[20, 30, 40]`).
#[test]
fn finish_of_a_function_that_breaks_the_calling_convention_says_so() {
    let exe = common::rust_fixture("nocall", "2");
    let info = Command::new("objdump")
        .args(["--dwarf=info"])
        .arg(&exe)
        .output()
        .expect("objdump runs");
    if !String::from_utf8_lossy(&info.stdout).contains("(nocall)") {
        eprintln!("this rustc marks no function nocall: skipping");
        return;
    }
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('nocall::bump'); breakpoint.set('nocall::tail')");
    scry.ok("cont()");
    for _ in 0..2 {
        let back = scry.ok("ctx.r = finish(); ctx.r");
        assert!(
            back.contains(
                "returned <unavailable: the function does not follow the calling convention"
            ),
            "{back}"
        );
        assert_eq!(scry.ok("String(ctx.r.returned)"), "undefined");
        scry.ok("cont()");
    }
    assert!(scry.ok("output()").contains("c=42 t=[20, 30, 40]"));
}

/// rustc -O2's codegen units: work() inlined in one unit, its abstract instance in another
/// (a cross-unit reference), a discarded out-of-line copy at address 0 in a third. The
/// breakpoint on the name stops at each call (it stayed pending and the program ran to its
/// end) and the one on its line is in code (it was refused: its rows put it in the ELF header).
#[test]
fn breakpoints_on_a_function_rustc_inlined_across_codegen_units() {
    let exe = common::rust_fixture("cgu_inline", "2");
    let line = common::line_of(include_str!("../fixtures/rust/cgu_inline.rs"), "// the sum");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('cgu_inline::work')");
    let stop = scry.ok("cont()");
    assert!(stop.starts_with("breakpoint 1 at "), "{stop}");
    assert!(
        scry.ok("state.unwind(1)")
            .contains("[inlined] cgu_inline::work"),
        "{}",
        scry.ok("state.unwind(3)")
    );
    // In code, where gdb puts it (its rows at 0x40.. of the discarded copy are no code).
    scry.ok(&format!(
        "breakpoint.remove(1); breakpoint.set('cgu_inline.rs:{line}')"
    ));
    assert_eq!(
        scry.ok("const b = breakpoint.list()[0]; [b.pending, b.site !== undefined, b.addr > 0x1000000].join(' ')"),
        " true true"
    );
    scry.ok("breakpoint.remove(2)");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert_eq!(scry.ok("output()").trim(), "11");
}
