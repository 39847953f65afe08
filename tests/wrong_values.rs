//! Values that once read wrong with no warning: each fixture names its pitfall, and the test
//! checks scry's answer against what the program itself prints.

mod common;

use common::Scry;

#[test]
fn copy_relocated_library_globals_read_the_executables_copy() {
    let exe = common::fixture("copy_relocated");
    let mut scry = Scry::spawn(&exe, &["-a", "-b", "rest"]);
    scry.ok("breakpoint.set('parsed')");
    scry.ok("cont()");
    let truth = common::truth(&mut scry);
    assert_eq!(truth["optind"], "3");
    assert_eq!(scry.ok("Number(state.var('optind'))"), truth["optind"]);
    let name = scry.ok("String(state.var('__progname'))");
    assert!(
        name.ends_with(&format!("\"{}\"", truth["progname"])),
        "{name} vs {}",
        truth["progname"]
    );
    // The copy is where the executable's symbol says.
    let addr = scry.num("state.var('optind').$addr");
    assert_eq!(addr, scry.num("symbols('optind')[0].addr"));
}

#[test]
fn a_lambdas_parameters_are_its_own_never_another_modules_static() {
    let exe = common::fixture_from(
        "lambda_params",
        "g++",
        &["-g", "-O0"],
        &["lambda_params.cpp"],
    );
    let source = include_str!("../fixtures/lambda_params.cpp");
    let line = common::line_of(source, "[&calls](int a, int b)");
    let mut scry = Scry::spawn(&exe, &[]);
    // The line is main's (the call) and the lambda's (its body): both are locations, the
    // lambda's past its prologue, where its arguments are in place.
    scry.ok(&format!("breakpoint.set('lambda_params.cpp:{line}')"));
    let list = scry.ok("breakpoint.list()");
    assert!(list.contains("operator()"), "{list}");
    let mut seen_lambda = false;
    for _ in 0..4 {
        let stop = scry.ok("cont()");
        if !stop.contains("operator()") {
            continue;
        }
        seen_lambda = true;
        let a = scry.num("Number(state.var('a'))");
        let b = scry.num("Number(state.var('b'))");
        assert!(
            [1, 3, 5, 9].contains(&a) && [1, 3, 5, 9].contains(&b),
            "{a} {b}"
        );
        let locals = scry.ok("state.locals()");
        for name in ["__closure", "a\t", "b\t", "calls"] {
            assert!(locals.contains(name), "{locals}");
        }
        assert!(!locals.contains("not yet stored"), "{locals}");
        break;
    }
    assert!(seen_lambda, "the lambda's location was hit");
    // In main, `a` names nothing: libm's file-local static is not an answer.
    let e = scry.err("state.var('a', 2)");
    assert!(e.contains("no variable 'a'"), "{e}");
}

#[test]
fn a_global_of_an_lto_program_is_found_by_its_abstract_origin() {
    let exe = common::fixture_from(
        "lto_global",
        "cc",
        &["-g", "-O2", "-flto"],
        &["lto_global_main.c", "lto_global_bump.c"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('bump')");
    scry.ok("cont()");
    assert_eq!(
        scry.ok("String(state.var('Runtime'))"),
        r#"{ready: 1, counter: 42, name: "rt"}"#
    );
    scry.ok("cont()");
    assert_eq!(scry.num("Number(state.var('Runtime').counter)"), 43);
    scry.ok("breakpoint.remove(1)");
    scry.ok("cont()");
    assert!(scry.ok("output()").contains("truth counter=44"));
}

#[test]
fn a_pointer_to_an_object_in_registers_dereferences() {
    let exe = common::fixture_with("synthetic_pointer", &["-g", "-O2"]);
    let line = common::line_of(
        include_str!("../fixtures/synthetic_pointer.c"),
        "/* in sum */",
    );
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!("breakpoint.set('synthetic_pointer.c:{line}')"));
    scry.ok("cont()");
    // As gdb: the pointer has no value of its own; what it points at does.
    assert_eq!(scry.ok("String(state.var('p'))"), "<synthetic pointer>");
    assert_eq!(scry.ok("String(state.value('*p'))"), "{x: 3, y: 4}");
    assert_eq!(scry.ok("state.value('p->y')"), "4");
    assert_eq!(scry.ok("state.var('p').x + state.var('p').y"), "7");
    // It has no number either: arithmetic and comparisons with it are errors marked
    // noValue, never a NaN that makes `p == 0` silently false (a condition that never
    // fired).
    let err = scry.err("Number(state.var('p'))");
    assert!(err.contains("<synthetic pointer>"), "{err}");
    assert_eq!(
        scry.ok("try { state.var('p') == 0; 'no error' } catch (e) { String(e.noValue) }"),
        "true"
    );
    scry.ok("breakpoint.remove(1)");
    scry.ok("cont()");
    assert!(scry.ok("output()").contains("truth f=14"));
}

#[test]
fn arrays_whose_bound_fills_its_constant_keep_every_element() {
    let exe = common::fixture("array_bounds");
    let mut scry = Scry::spawn(&exe, &[]);
    let line = common::line_of(include_str!("../fixtures/array_bounds.c"), "return z.n");
    scry.ok(&format!("breakpoint.set('array_bounds.c:{line}')"));
    scry.ok("cont()");
    let truth = common::truth(&mut scry);
    assert_eq!(scry.ok("state.var('t256').$type"), "int [256]");
    assert_eq!(scry.ok("state.var('t256').length"), truth["t256"]);
    assert_eq!(scry.ok("String(state.var('t256')[255])"), truth["last"]);
    assert_eq!(scry.ok("state.var('t255').$type"), "char [255]");
    assert_eq!(scry.ok("state.var('t255').$size"), truth["t255"]);
    assert_eq!(scry.ok("state.var('t65536').$type"), "short int [65536]");
    assert_eq!(scry.ok("String(state.value('t65536[65535]'))"), "-3");
    assert_eq!(scry.ok("state.var('z').none.$type"), "int [0]");
    assert_eq!(scry.ok("state.var('f').rest.$type"), "int []");
}

/// A program that maps its own executable as data (read-only and shared, as Rust's backtrace
/// code maps its files): those mappings are no modules, so each function has one address,
/// the one the program prints for it.
#[test]
fn a_file_the_program_maps_as_data_is_no_module() {
    let exe = common::fixture("maps_itself");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('stop_here'); cont()");
    let name = exe.file_name().unwrap().to_str().unwrap();
    let modules = scry.ok("modules()");
    assert_eq!(
        modules
            .lines()
            .filter(|l| l.contains(&format!("\t{name}\t")))
            .count(),
        1,
        "{modules}"
    );
    let rows = scry.ok("symbols('stop_here').length");
    assert_eq!(rows, "1");
    let addr = scry.num("symbol('stop_here')");
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert!(
        out.contains(&format!("stop_here={addr:#x}")),
        "{out} vs {addr:#x}"
    );
}

#[test]
fn plain_data_is_the_whole_value_or_an_error_never_a_part() {
    let exe = common::fixture_from("whole_values", "g++", &["-g", "-O0"], &["whole_values.cpp"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('inspect')");
    scry.ok("cont()");
    let truth = common::truth(&mut scry);
    scry.ok("finish()");
    // A sum over `.value` is the program's own, not one over the first 1,024 elements.
    let sum = scry.ok("String(state.var('numbers').value.reduce((a, b) => a + b, 0))");
    assert_eq!(sum, truth["sum"]);
    assert_eq!(
        scry.ok("String(JSON.parse(JSON.stringify(state.var('numbers'))).at(-1))"),
        truth["last"]
    );
    let text = scry.ok("const t = state.var('text').value; [t.length, t.at(-1)].join(' ')");
    assert_eq!(text, format!("{} y", truth["text"]));
    // A std::string compares as its whole text.
    assert_eq!(
        scry.ok("state.var('text') == 'x'.repeat(4999) + 'y'"),
        "true"
    );
    let squares =
        scry.ok("String(Object.values(state.var('squares').value).reduce((a, b) => a + b, 0))");
    assert_eq!(squares, truth["squares"]);
    let table = scry.ok("String(state.var('table').value.reduce((a, b) => a + b, 0))");
    assert_eq!(table, truth["table"]);
    assert_eq!(
        scry.ok("String(state.var('cstr').value.length)"),
        truth["cstr"]
    );
    // Past plain data's bounds: refused, saying how to read it in parts; its length and
    // elements still answer.
    let e = scry.err("state.var('huge').value");
    assert!(
        e.contains(&format!("{} elements", truth["huge"])) && e.contains("read it in parts"),
        "{e}"
    );
    assert_eq!(scry.ok("String(state.var('huge').length)"), truth["huge"]);
    assert_eq!(scry.ok("Number(state.var('huge')[1499999])"), "1");
    // The printed text stays one bounded line that says what it left out.
    let line = scry.ok("String(state.var('numbers'))");
    assert!(line.len() < 600 && line.contains("more"), "{line}");
}

#[test]
fn long_doubles_read_in_their_own_precision_and_range() {
    let mut scry = Scry::spawn(&common::fixture("long_double"), &[]);
    scry.ok("breakpoint.set('third'); cont()");
    let back = scry.ok("finish()");
    scry.ok("breakpoint.set('inspect'); cont()");
    let truth = common::truth(&mut scry);
    // A long double return in its own precision (it was read through a double).
    assert!(
        back.ends_with(&format!("returned {}", truth["third"])),
        "{back}"
    );
    for name in ["tiny", "tenth", "one_plus"] {
        assert_eq!(
            scry.ok(&format!("String(state.var('{name}'))")),
            truth[name],
            "{name}"
        );
    }
    // A denormal double as a plain number: JavaScript's spelling, not every digit.
    assert_eq!(scry.ok("state.var('denormal').value"), "5e-324");
    // A negative zero keeps its sign in scripts.
    assert_eq!(
        scry.ok("const z = state.var('negative_zero'); [String(z), Object.is(z.value, -0), Object.is(Number(z), -0)].join(' ')"),
        "-0 true true"
    );
}

#[test]
fn wide_integers_and_their_options_read_exactly() {
    let mut scry = Scry::spawn(&common::rust_fixture("wide_ints", "0"), &[]);
    scry.ok("breakpoint.set('wide_ints::inspect'); cont()");
    let truth = common::truth(&mut scry);
    assert_eq!(scry.ok("String(state.var('some', 1))"), truth["some"]);
    assert_eq!(scry.ok("String(state.var('none', 1))"), "None");
    assert_eq!(
        scry.ok("String(state.var('negative', 1))"),
        truth["negative"]
    );
    assert_eq!(scry.ok("String(state.var('big_u', 1))"), truth["big_u"]);
    // As numbers: exact BigInts, unsigned never read as signed.
    assert_eq!(
        scry.ok("String(state.var('big_u', 1).value)"),
        truth["big_u"]
    );
    assert_eq!(scry.ok("Number(state.var('big_u', 1)) > 0"), "true");
    assert_eq!(scry.ok("String(state.var('done', 1))"), truth["done"]);
    // `*` of an enum is what its variant holds: Some(5) is 5; None holds nothing.
    assert_eq!(scry.ok("String(state.var('some', 1).$deref())"), "5");
    let e = scry.err("state.var('none', 1).$deref()");
    assert!(e.contains("None holds nothing to dereference"), "{e}");
    assert_eq!(
        scry.ok("String(state.var('big_i', 1).value)"),
        truth["big_i"]
    );
}
