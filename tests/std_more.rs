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
    // Not iterated to its end: no "(exhausted)" (every one said it, its false read as true).
    ("live", "1..=4", r#""1..=4""#),
    ("cnt", "Cell(3)", "3"),
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
    // Tuples and tuple structs are positional, a variant of one value is that value, as
    // serde writes them (were objects of `__0`, `__1`).
    ("pair", r#"(5, "five")"#, r#"[5,"five"]"#),
    ("point", "(3, -4)", "[3,-4]"),
    ("res", "Ok(443)", r#"{"Ok":443}"#),
    ("both", "Some((1, 2))", r#"{"Some":[1,2]}"#),
    // A trait object with more bounds (`Box<(dyn Debug + Send)>`) by its vtable too (it was
    // its raw pointer and vtable words).
    ("sendable", "Box<u16> -> 42", "42"),
    // A fn item boxed as a trait object has no bytes (its data pointer is 0x1): the
    // vtable's size says so, where the DWARF names the 8-byte fn pointer type (it read 8
    // bytes at 0x1: `<cannot read 8 bytes at 0x1>`, a box that looked corrupt).
    (
        "doubler",
        "Box<fn(i32) -> i32> (a fn item: no data)",
        "null",
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
        // `.value` of a wrapper whose own member is named `value` (Cell, RefCell, Ref) is its
        // plain data, as a member of a struct shows it (it was that member: `{"value":3}`,
        // `{"pointer":...}`); the member is `$raw.value`.
        for (name, plain) in [
            ("cnt", "3"),
            ("b1", "[9,8,7]"),
            ("bm", r#""mut-borrowed!""#),
        ] {
            let v = format!("state.var('{name}', 1)");
            assert_eq!(
                scry.ok(&format!("JSON.stringify({v}.value)")),
                plain,
                "{name}"
            );
        }
        assert_eq!(
            scry.ok("JSON.stringify(state.var('cnt', 1).$raw.value.value)"),
            "3"
        );
        // A Weak back to the parent is a link, not followed around the cycle (the value was
        // refused as "more than 32 aggregates nested").
        let root = scry.ok("JSON.stringify(state.var('root', 1).value)");
        assert!(
            root.starts_with(
                r#"{"name":"root","kids":[{"name":"kid","kids":[],"up":"<a link back to 0x"#
            ) && root.ends_with(r#", which holds this value>"}],"up":null}"#),
            "{root}"
        );
        let kid = scry.ok("JSON.stringify(state.var('kid', 1).value)");
        assert!(
            kid.starts_with(r#"{"name":"kid","kids":[],"up":{"name":"root","kids":["<a link back"#),
            "{kid}"
        );
        // Indexing and lengths go through the fat pointers and the list.
        assert_eq!(scry.ok("String(state.var('arc_sl', 1)[2])"), "33");
        assert_eq!(scry.num("state.var('rc_str', 1).length"), 9);
        assert_eq!(scry.ok("String(state.var('list', 1)[1])"), r#""one""#);
        assert_eq!(scry.num("state.var('b1', 1)[0]"), 9);
        // A Vec whose fields cannot be a live one says so (it printed `[… 140737219919873
        // elements]`), and has no plain data.
        let bogus = scry.ok("String(state.var('bogus', 1))");
        assert!(
            bogus.contains("cannot be (a stale or corrupt value)"),
            "{bogus}"
        );
        scry.err("state.var('bogus', 1).value");
        // An Option lends the members of what it holds (it was "no member 'x'; members:
        // __0"), its variant's fields still there; state.var takes names, and says where
        // paths go.
        assert_eq!(scry.num("state.value('opt_pt.x', 1)"), 9);
        assert_eq!(scry.num("state.value('opt_pt.__0.x', 1)"), 9);
        let err = scry.err("state.var('opt_pt.x', 1)");
        assert!(err.contains("a path is state.value('opt_pt.x')"), "{err}");
        scry.ok("cont()");
        let out = scry.ok("output()");
        for said in [
            r#"rc_str="rc-str ü" arc_sl=[11, 22, 33] rc_dyn=42 dead=None ri_empty=true from=5.."#,
            r#"b1=[9, 8, 7] bm="mut-borrowed!" rg=17 guard=99 at=124 flag=true"#,
            r#"heap=[9, 8, 2, 3, 5, 1] list=["zero", "one", "two"]"#,
            r#"pair=(5, "five") point=Point(3, -4) res=Ok(443) both=Some((1, 2)) opt_pt=Some(Pt { x: 9 }) doubled=8"#,
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

/// Each C++ variable's text, and its plain data as JSON.
const CXX: &[(&str, &str, &str)] = &[
    ("a_int", "any(1234)", "1234"),
    (
        "a_str",
        r#"any("held in the heap, longer than the small buffer")"#,
        r#""held in the heap, longer than the small buffer""#,
    ),
    ("a_pt", "any({x: -3, y: 9.75})", r#"{"x":-3,"y":9.75}"#),
    ("a_empty", "any(empty)", "null"),
    (
        "path",
        r#"path("/usr/local/lib/libfoo.so")"#,
        r#""/usr/local/lib/libfoo.so""#,
    ),
    (
        "il",
        "initializer_list(4) [11, 22, 33, 44]",
        "[11,22,33,44]",
    ),
    ("it0", r#"iterator -> "v0""#, r#""v0""#),
    ("iti", "iterator -> 100", "100"),
    ("at_d", "atomic(-1.75)", "-1.75"),
    ("wc", "223 'ß'", "223"),
    ("c8", "97 'a'", "97"),
    ("by", "0xa5", "165"),
    // Bytes that are no UTF-8 are replaced in plain data, never Latin-1 letters ("aéÀ").
    ("bad", r#""a\xe9\xc0""#, "\"a\u{fffd}\u{fffd}\""),
    ("dl", "list(2) [7, 8]", "[7,8]"),
    ("dd", "deque(3) [9, 10, 11]", "[9,10,11]"),
    ("dm", "map(2) {1: 10, 2: 20}", r#"{"1":10,"2":20}"#),
    // An anonymous union's members are the struct's own keys, as C reads them (`tg.d`).
    (
        "tg",
        "{tag: 2, {l: -4629700416936869888, d: -0.125}}",
        r#"{"tag":2,"l":"-0x4040000000000000","d":-0.125}"#,
    ),
];

/// std::any by what its manager names, filesystem::path as its text, initializer_list, a
/// vector's iterator indexed as the pointer it is (`it0[1]` was a character of `*it0`),
/// shared_ptr<T[]> indexed (was its first element as the pointee), atomic<double> (was
/// `<invalid>`, and `.value` that text), wchar_t/char8_t as characters, std::byte as a byte;
/// the same with -D_GLIBCXX_DEBUG's checked containers and iterators (were their
/// bookkeeping). Against the program's own account.
#[test]
fn cxx_any_path_iterators_atomics_and_debug_containers_print_what_they_hold() {
    for (out, flags) in [
        ("std_more-O0", &["-g", "-O0", "-std=c++20"][..]),
        ("std_more-O2", &["-g", "-O2", "-std=c++20"][..]),
        (
            "std_more-debug",
            &["-g", "-O0", "-std=c++20", "-D_GLIBCXX_DEBUG"][..],
        ),
    ] {
        let exe = common::fixture_from(out, "g++", flags, &["std_more.cpp"]);
        let mut scry = Scry::spawn(&exe, &[]);
        scry.ok("breakpoint.set('inspect')");
        scry.ok("cont()");
        for (name, text, plain) in CXX {
            let v = format!("state.var('{name}', 1)");
            assert_eq!(scry.ok(&format!("String({v})")), *text, "{out} {name}");
            assert_eq!(
                scry.ok(&format!("JSON.stringify({v}.$value)")),
                *plain,
                "{out} {name}"
            );
        }
        // Indexing goes through the iterators, the owned array and the list, as C++ does.
        let indexed: Vec<(String, &str)> = [
            ("String(state.var('it0', 1)[1])", "it0_1"),
            ("String(state.var('iti', 1)[2])", "iti_2"),
            ("String(state.var('sp_arr', 1)[3])", "sp_arr3"),
            ("String(state.var('il', 1)[3])", "il3"),
            ("String(state.var('dd', 1)[2])", "dd2"),
        ]
        .into_iter()
        .map(|(path, key)| (scry.ok(path), key))
        .collect();
        assert_eq!(scry.ok("state.var('tg', 1).value.d"), "-0.125");
        // A map's keys() are its keys (they were its members: `_M_t`).
        assert_eq!(
            scry.ok("state.var('dm', 1).keys().map(Number).join(',')"),
            "1,2"
        );
        // gdb's register syntax in a path says where registers are.
        let err = scry.err("state.value('(Pt*)$rdi')");
        assert!(err.contains("read it with state.registers.rdi"), "{err}");
        let err = scry.err("state.value('$rdi')");
        assert!(err.contains("read it with state.registers.rdi"), "{err}");
        // A frame past the stack's end says so (it said "no variable").
        let err = scry.err("state.var('a_int', 99)");
        assert!(err.contains("no frame 99: the stack has"), "{err}");
        // A cast of a reference casts its referent: a smart pointer is no pointer (it gave
        // the unique_ptr's own address, and the fields of whatever lay there).
        let err = scry.err("state.value('(Pt*)upr', 1)");
        assert!(
            err.contains("only a pointer or an integer becomes a pointer"),
            "{err}"
        );
        assert_eq!(scry.num("state.value('((Pt*)&*upr)->x', 1)"), 5);
        // A smart pointer lends the members of what it holds, those named like helpers too
        // (`ub.size` was the unique_ptr's own 8 bytes).
        assert_eq!(
            scry.ok("const u = state.var('ub', 1); `${u.size} ${u.kind} ${u.value} ${u.$size}`"),
            "7 3 11 8"
        );
        // In a path too, and a member it lacks is named as the pointee's (it was "the
        // printer gave no typed value here").
        assert_eq!(scry.num("state.value('ub->kind', 1)"), 3);
        let err = scry.err("state.value('up->type', 1)");
        assert!(
            err.contains("Pt has no member 'type'; members: x y"),
            "{err}"
        );
        let err = scry.err("state.var('dm', 1).at('alpha')");
        assert!(
            err.contains("map(2) is a map: read an entry with get(key)"),
            "{err}"
        );
        scry.ok("cont()");
        let truth = common::truth(&mut scry);
        for (got, key) in indexed {
            assert_eq!(got.trim_matches('"'), truth[key], "{out} {key}");
        }
        assert_eq!(truth["at_d"], "-1.75");
    }
}

/// A std::array that -O2 keeps in registers has plain data, read element by element (it
/// was "the printer's elements are in no memory", though it printed).
#[test]
fn a_std_array_in_registers_has_plain_data() {
    let exe = common::fixture_from(
        "array_in_registers-O2",
        "g++",
        &["-g", "-O2"],
        &["array_in_registers.cpp"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('array_in_registers.cpp:10'); cont()");
    assert_eq!(
        scry.ok("String(state.var('w').addr)"),
        "undefined",
        "in registers"
    );
    assert_eq!(
        scry.ok("JSON.stringify(state.var('w').value)"),
        "[0.5,1.25,-3,1e-7]"
    );
    scry.ok("breakpoint.remove(1); cont()");
    assert_eq!(common::truth(&mut scry)["w"], "0.5,1.25,-3,1e-07");
}
