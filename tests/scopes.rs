//! Names that depend on scope, as gdb spells them: C++ enumerators qualified by their enum
//! class or enclosing namespace, and `'file.c'::var` for a file's own static.

mod common;

use common::{fixture_from, gdb_prints, truth, Scry};

#[test]
fn cpp_enumerators_are_qualified_as_gdb_prints_them() {
    let exe = fixture_from("enums_cpp", "c++", &["-g", "-O0"], &["enums.cpp"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('paint')");
    assert!(scry.ok("cont()").starts_with("breakpoint 1 at "));
    let t = truth(&mut scry);
    // The numbers behind the names are the ones the program holds.
    for (var, n) in [("color", "color"), ("shade", "shade"), ("plain", "plain")] {
        assert_eq!(scry.ok(&format!("+state.var('{var}')")), t[n], "{var}");
    }
    let ours: Vec<String> = ["color", "shade", "box", "plain", "top"]
        .iter()
        .map(|v| scry.ok(&format!("state.var('{v}')")))
        .collect();
    assert_eq!(
        ours,
        [
            "geo::Color::Green",
            "geo::DARK",
            "{kind: geo::Box::BIG, side: geo::Box::Side::Right}",
            "TWO",
            "Top::B",
        ]
    );
    // A value no enumerator has stays an honest number.
    assert_eq!(
        scry.ok("state.var('stray')"),
        format!("{} (no enumerator)", t["stray"])
    );
    // Arguments in the unwind listing read the same way.
    let top = scry.ok("state.unwind()");
    assert!(
        top.lines()
            .next()
            .unwrap()
            .contains("(c=geo::Color::Blue, p=ONE) enums.cpp:"),
        "{top}"
    );
    if let Some(gdb) = gdb_prints(&exe, "paint", &["color", "shade", "box", "plain", "top"]) {
        // gdb writes `{kind = geo::Box::BIG, side = ...}`: the same names.
        let gdb: Vec<String> = gdb.iter().map(|v| v.replace(" = ", ": ")).collect();
        assert_eq!(ours, gdb);
    }
}

#[test]
fn a_file_names_which_static_a_path_means() {
    let exe = fixture_from(
        "file_statics",
        "cc",
        &["-g", "-O0"],
        &["file_statics.c", "file_statics_other.c"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    // `tick` alone is both files' (a breakpoint on a name stops in every function of it).
    scry.ok("breakpoint.set(\"'file_statics.c'::tick\")");
    scry.ok("cont()");
    scry.ok("cont()");
    let t = truth(&mut scry);
    let addr = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    // Each file's own `counter`, by value and by address, through both entry points.
    for (file, key) in [
        ("file_statics_other.c", "other"),
        ("file_statics.c", "here"),
    ] {
        let path = format!("'{file}'::counter");
        assert_eq!(
            scry.ok(&format!("state.value(\"{path}\")")),
            t[&format!("{key}_v")]
        );
        assert_eq!(
            scry.num(&format!("state.var(\"{path}\").$addr")),
            addr(&t[key]),
            "{path}"
        );
        assert_eq!(
            scry.num(&format!("state.value(\"&{path}\").value")),
            addr(&t[key])
        );
    }
    // A directory part names the same file; a suffix that is no whole component does not.
    assert_eq!(
        scry.num("state.var(\"'fixtures/file_statics_other.c'::counter\").$addr"),
        addr(&t["other"])
    );
    let e = scry.err("state.value(\"'statics_other.c'::counter\")");
    assert!(
        e.contains("'statics_other.c'") && e.lines().count() == 1,
        "{e}"
    );
    // An unknown file and an unknown name in a known file: one line naming what is missing.
    let e = scry.err("state.var(\"'nowhere.c'::counter\")");
    assert!(e.contains("no source file 'nowhere.c'"), "{e}");
    let e = scry.err("state.value(\"'file_statics.c'::nothing\")");
    assert!(
        e.contains("'nothing'") && e.contains("'file_statics.c'"),
        "{e}"
    );
    // A quoted file with no name after it, and a path where state.var takes a name.
    let e = scry.err("state.value(\"'file_statics.c'::\")");
    assert!(e.contains("expected a name after '::'"), "{e}");
    let e = scry.err("state.var(\"'file_statics.c'::counter.x\")");
    assert!(e.contains("state.value()"), "{e}");
    // function::static_local still reads the function's own static; with a file in front,
    // the static local of that file's function, where both files have a `tick`.
    assert_eq!(scry.ok("state.value('tick::calls')"), "1");
    assert_eq!(
        scry.ok("state.value(\"'file_statics.c'::tick::calls\")"),
        "1"
    );
    assert_eq!(
        scry.ok("state.value(\"'file_statics_other.c'::tick::calls\")"),
        t["other_calls"]
    );
    let e = scry.err("state.value(\"'file_statics_other.c'::tick::nothing\")");
    assert!(e.contains("'tick::nothing'"), "{e}");
    // The session goes on.
    assert_eq!(scry.ok("1 + 1"), "2");
    if let Some(gdb) = gdb_prints(
        &exe,
        "tick",
        &[
            "'file_statics_other.c'::counter",
            "'file_statics.c'::counter",
            "&'file_statics_other.c'::counter",
            "'file_statics_other.c'::tick::calls",
        ],
    ) {
        assert_eq!(gdb[0], t["other_v"]);
        assert_eq!(gdb[1], t["here_v"]);
        assert!(gdb[2].contains(&t["other"]), "{gdb:?}");
        // gdb stops at the first `tick`, before main called into the other file: the
        // static still holds its initializer.
        assert_eq!(gdb[3], "40");
    }
}
