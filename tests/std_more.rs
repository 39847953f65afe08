//! Less common standard-library types print as what they hold and read as plain data that
//! is the program's own (fixtures/rust/std_more.rs, which prints each with `{:?}`): fat
//! `Rc`/`Arc` pointers, a `Weak` that points at nothing (null, never its summary's words),
//! an exhausted range, borrows and lock guards, atomics, `BinaryHeap` and `LinkedList`.

mod common;

use common::Scry;

/// Each variable's text, and its plain data as JSON.
const RUST: &[(&str, &str, &str)] = &[
    (
        "rc_str",
        r#"Rc(strong 1, weak 0) "rc-str ü""#,
        r#""rc-str ü""#,
    ),
    (
        "arc_sl",
        "Arc(strong 1, weak 0) [3] [11, 22, 33]",
        "[11,22,33]",
    ),
    ("rc_dyn", "Rc(strong 1, weak 0) u16 -> 42", "42"),
    ("dead", "Weak(dropped, weak 1)", "null"),
    ("dangling", "Weak(dangling)", "null"),
    ("ri", "5..=5 (exhausted)", r#""5..=5 (exhausted)""#),
    ("from", "5..", r#""5..""#),
    ("b1", "Ref -> [9, 8, 7]", "[9,8,7]"),
    ("bm", r#"RefMut -> "mut-borrowed!""#, r#""mut-borrowed!""#),
    ("rg", "RwLockReadGuard -> 17", "17"),
    ("guard", "MutexGuard -> 99", "99"),
    ("at", "AtomicUsize(124)", "124"),
    ("flag", "AtomicBool(true)", "true"),
    ("heap", "BinaryHeap(6) [9, 8, 2, 3, 5, 1]", "[9,8,2,3,5,1]"),
    (
        "list",
        r#"LinkedList(3) ["zero", "one", "two"]"#,
        r#"["zero","one","two"]"#,
    ),
];

#[test]
fn rust_fat_pointers_guards_atomics_and_lists_print_what_they_hold() {
    for opt in ["0", "2"] {
        let exe = common::rust_fixture("std_more", opt);
        let mut scry = Scry::spawn(&exe, &[]);
        scry.ok("breakpoint.set('std_more::inspect')");
        scry.ok("cont()");
        for (name, text, plain) in RUST {
            let v = format!("state.var('{name}', 1)");
            assert_eq!(scry.ok(&format!("String({v})")), *text, "-O{opt} {name}");
            assert_eq!(
                scry.ok(&format!("JSON.stringify({v}.$value)")),
                *plain,
                "-O{opt} {name}"
            );
        }
        // Indexing and lengths go through the fat pointers and the list.
        assert_eq!(scry.ok("String(state.var('arc_sl', 1)[2])"), "33");
        assert_eq!(scry.num("state.var('rc_str', 1).length"), 9);
        assert_eq!(scry.ok("String(state.var('list', 1)[1])"), r#""one""#);
        assert_eq!(scry.num("state.var('b1', 1)[0]"), 9);
        scry.ok("cont()");
        let out = scry.ok("output()");
        for said in [
            r#"rc_str="rc-str ü" arc_sl=[11, 22, 33] rc_dyn=42 dead=None ri_empty=true from=5.."#,
            r#"b1=[9, 8, 7] bm="mut-borrowed!" rg=17 guard=99 at=124 flag=true"#,
            r#"heap=[9, 8, 2, 3, 5, 1] list=["zero", "one", "two"]"#,
        ] {
            assert!(out.contains(said), "-O{opt}: the program says\n{out}");
        }
    }
}

/// A printer the chunk's time budget stops has no answer: the chunk ends with the budget's
/// error, and no value is ever the printer's failure as data (`.value` was the string
/// "printer error: interrupted" and the chunk ended `ok`).
#[test]
fn a_printer_stopped_by_the_time_budget_gives_no_value() {
    let exe = common::rust_fixture("collections", "0");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('collections::inspect')");
    scry.ok("cont()");
    scry.ok("config.script_timeout = 0.5");
    for _ in 0..3 {
        let r = scry.eval(
            "for (;;) { for (const n of ['squares', 'words', 'stock']) { \
               const v = state.var(n, 1).value; \
               if (typeof v === 'string') { print('as data: ' + v); throw new Error('leak') } } }",
        );
        assert!(!r.ok, "{}", r.body);
        assert!(
            r.body.contains("script stopped after running"),
            "{}",
            r.body
        );
    }
    // The session goes on.
    assert_eq!(scry.ok("state.var('words', 1).value.length"), "3");
}
