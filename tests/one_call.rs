//! Answers usable in one call: typed values are numbers wherever numbers go, 64-bit reads
//! that are always BigInts, logs that return nothing print nothing.

mod common;

use common::{fixture, temp_path, Scry, SCRY};

/// The addresses the program prints of its own pointer and buffer.
fn printed(output: &str, key: &str) -> u64 {
    let word = output
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=0x")))
        .unwrap_or_else(|| panic!("no {key}= in {output}"));
    u64::from_str_radix(word, 16).unwrap()
}

#[test]
fn typed_values_are_numbers_wherever_numbers_go() {
    let exe = fixture("numbers_in_one_call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('stop_here'); cont()");
    assert_eq!(scry.ok("hex(state.var('total'))"), "0x4d2");
    // A pointer is its address: arithmetic is on the address, memory() reads where it points.
    let ptr = scry.num("Number(state.var('ptr'))");
    assert_eq!(scry.num("state.var('ptr') + 8"), ptr + 8);
    assert_eq!(scry.ok("hex(state.var('ptr'))"), format!("{ptr:#x}"));
    assert_eq!(scry.ok("state.memory(state.var('ptr')).u32()"), "7");
    assert_eq!(
        scry.ok("state.var('ptr') > 0 && state.var('ptr') == state.var('counter').addr"),
        "true"
    );
    // Text stays text where JavaScript asks for either; a template literal is the printed text.
    assert_eq!(scry.ok("'c=' + state.var('col')"), "c=BLUE");
    assert!(scry.ok("`${state.var('ptr')}`").contains("<counter>"));
    // An array as a number is its address (C's decay).
    let buf = scry.num("Number(state.var('buf'))");
    assert_eq!(scry.ok("state.memory(state.var('buf')).str()"), "hello");
    // A watchpoint on a pointer's target catches the program's write through it (on the
    // pointer itself it would watch the pointer, as gdb's `watch ptr`).
    scry.ok("watchpoint.set(state.var('ptr').$deref(), 'w')");
    assert_eq!(
        scry.num("watchpoint.list()[0].addr"),
        ptr,
        "the pointee's storage"
    );
    let hit = scry.ok("cont()");
    assert!(
        hit.starts_with("watchpoint 1 write") && hit.contains("7 -> 8"),
        "{hit}"
    );
    // What has no number says so in one line, and names itself.
    let err = scry.err("state.memory(state.var('pr'))");
    assert!(
        err.contains("no integer value") && err.contains("a: 1"),
        "{err}"
    );
    // 64-bit reads that are always BigInts: bit arithmetic works on small values too.
    assert_eq!(
        scry.ok("hex(state.memory('tagged').u64n() & ~7n)"),
        "0x1000"
    );
    assert_eq!(scry.ok("typeof state.memory('tagged').i64n()"), "bigint");
    scry.ok("watchpoint.remove(1)");
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert_eq!(printed(&out, "ptr"), ptr);
    assert_eq!(printed(&out, "buf"), buf);
}

#[test]
fn a_log_that_returns_null_prints_nothing() {
    let exe = fixture("numbers_in_one_call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("let hits = 0; breakpoint.set('stop_here', {log: e => { hits++; return null }})");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 0"), "{end}");
    assert!(!end.contains("null"), "{end}");
    assert_eq!(scry.num("hits"), 1);
}

/// Rows of a line listing (frames, instructions) print, stringify and join as their lines:
/// `state.unwind().join('\n')` is the listing itself, not a record per row.
#[test]
fn listing_rows_join_as_their_lines() {
    let mut scry = Scry::spawn(&fixture("chain"), &[]);
    scry.ok("breakpoint.set('leaf'); cont()");
    let listing = scry.ok("state.unwind()");
    assert!(listing.lines().count() >= 3, "{listing}");
    assert_eq!(scry.ok("state.unwind().join('\\n')"), listing);
    assert_eq!(scry.ok("state.unwind().map(String).join('\\n')"), listing);
    let second = listing.lines().nth(1).unwrap();
    assert!(second.starts_with("#1 0x"), "{second}");
    assert_eq!(scry.ok("state.unwind()[1]"), second);
    assert_eq!(scry.ok("`${state.unwind()[1]}`"), second);
    // The row's fields are all there to use; a frame of its own stays a record.
    assert_eq!(scry.ok("state.unwind()[1].frame"), "1");
    assert!(scry.ok("state.frame(1)").starts_with("frame\t1\n"));
    // A disassembly row is one line too (with its address in full: alone it has no header).
    assert_eq!(
        scry.ok("state.disasm(3).join('\\n').split('\\n').length"),
        "3"
    );
}

/// A line without code names the nearest lines that have some, so the next call can be right.
#[test]
fn a_line_without_code_names_its_neighbours_with_code() {
    let mut scry = Scry::spawn(&fixture("loop"), &[]);
    let e = scry.err("breakpoint.set('loop.c:11')");
    assert!(
        e.contains("no code for loop.c:11 in the line tables; the nearest lines with code: loop.c:10, loop.c:12"),
        "{e}"
    );
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    // Nothing above line 4 has code: only the line after is named.
    let e = scry.err("breakpoint.set('loop.c:4')");
    assert!(e.contains("the nearest lines with code: loop.c:7"), "{e}");
}

/// Chunk after chunk may declare the same names again; values persist between chunks; block
/// scopes and closures inside a chunk are untouched.
#[test]
fn chunks_may_declare_the_same_names_again() {
    let mut scry = Scry::start(&[]);
    scry.ok("const out = 1; let n = 2");
    assert_eq!(scry.ok("const out = 10; let n = 20; out + n"), "30");
    assert_eq!(scry.ok("out"), "10");
    // Closures over loop-scoped declarations keep one binding per turn.
    assert_eq!(
        scry.ok("const fns = []; for (let i = 0; i < 3; i++) { const j = i; fns.push(() => j) } fns.map(f => f()).join(',')"),
        "0,1,2"
    );
    assert_eq!(scry.ok("const fns = 'again'; fns"), "again");
}

/// A source file that is gone is a note after the location, not an exception: the chunk's
/// other work stands.
#[test]
fn a_missing_source_file_is_a_note() {
    let dir = temp_path("gone-source");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("gone.c");
    std::fs::copy("fixtures/run_loops.c", &src).unwrap();
    let exe = dir.join("gone");
    let built = std::process::Command::new("cc")
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(built.success());
    std::fs::remove_file(&src).unwrap();
    let mut scry = Scry::spawn(&exe, &["3"]);
    let answer = scry.ok("breakpoint.set('add'); cont(); const s = state.source(); [s, state.var('a') + state.var('b')].join(' | ')");
    assert!(
        answer.starts_with(&format!("{}:6 (source not available: ", src.display()))
            && answer.ends_with(" | 5"),
        "{answer}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// listeners() lists what runs at each event and how often it ran; a later spawn() says the
/// listeners carried over; removeEventListener(type) clears a type.
#[test]
fn listeners_are_listed_and_carried_over_visibly() {
    let exe = fixture("numbers_in_one_call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("addEventListener('breakpoint', function counted(e) { return 'continue' }); addEventListener('exit', e => null); breakpoint.set('stop_here')");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let rows = scry.ok("listeners()");
    assert!(rows.starts_with("type\tfn\tcalls\n"), "{rows}");
    assert!(rows.contains("breakpoint\tcounted\t1"), "{rows}");
    assert!(rows.contains("exit\te => null\t1"), "{rows}");
    let again = scry.ok(&format!("spawn('{}')", exe.display()));
    assert!(
        again.contains("[2 listeners carried over: listeners()]"),
        "{again}"
    );
    assert_eq!(scry.ok("removeEventListener('breakpoint')"), "1");
    assert_eq!(scry.ok("listeners().length"), "1");
}

/// `scry --core core prog -x a.js`: the program is a plain name in the working directory, as
/// gdb takes it, and words after it are scry's own options (nothing runs under --core).
#[test]
fn core_takes_a_plain_program_name_and_options_after_it() {
    let dir = temp_path("core-args");
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("prog");
    std::fs::copy(fixture("numbers_in_one_call"), &prog).unwrap();
    let mut live = Scry::spawn(&prog, &[]);
    live.ok("breakpoint.set('stop_here'); cont()");
    live.ok(&format!("gcore({:?})", dir.join("core").to_str().unwrap()));
    drop(live);
    std::fs::write(dir.join("a.js"), "state.var('total') + 1").unwrap();
    let mut command = std::process::Command::new(SCRY);
    command
        .current_dir(&dir)
        .args(["--core", "core", "prog", "-x", "a.js"]);
    let mut scry = Scry::start_command(command);
    let answer = scry.read_response();
    assert!(answer.ok && answer.body.trim() == "1235", "{answer:?}");
    assert!(scry.ok("status().core").contains("core"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// symbols(name, {exact: true}): the name itself, not every name containing it.
#[test]
fn symbols_exact_is_the_name_itself() {
    let exe = fixture("numbers_in_one_call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('main'); cont()");
    assert!(scry.num("symbols('stop', {limit: 1000}).length") > 1);
    let rows =
        scry.ok("symbols('stop_here', {exact: true}).map(r => r.name + ' ' + r.module).join(',')");
    assert!(
        rows.starts_with("stop_here numbers_in_one_call") && !rows.contains(','),
        "{rows}"
    );
    assert_eq!(scry.ok("symbols('stop_her', {exact: true}).length"), "0");
}

/// A system call's event at exit carries its result in `call` and `errno` null on success.
#[test]
fn a_syscall_event_says_its_result() {
    let exe = fixture("numbers_in_one_call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("syscall.catch('write'); addEventListener('syscall', e => { ctx.call = e.call; ctx.errno = e.errno; return 'continue' })");
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let call = scry.ok("ctx.call");
    let written = scry.num("output().length");
    assert!(
        call.starts_with("write(1, \"ptr=0x") && call.ends_with(&format!(") = {written}")),
        "{call}: the program wrote {written} bytes"
    );
    assert_eq!(scry.ok("ctx.errno === null"), "true");
}

/// state.disasm('fn') is the whole function, ending at its last instruction; a call's
/// operand names its target as the text does, and `target` is the address.
#[test]
fn a_function_disassembles_whole_with_named_targets() {
    let exe = fixture("numbers_in_one_call");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('main'); cont()");
    let objdump = common::objdump_function(&exe, "main");
    let ours = scry.num("state.disasm('main').length");
    assert_eq!(ours as usize, objdump.len(), "{objdump:?}");
    assert_eq!(
        scry.ok("state.disasm({function: true}).at(-1).mnemonic"),
        "ret"
    );
    let call = scry.ok("state.disasm('main').find(i => i.mnemonic === 'call').operands[0]");
    assert!(call.ends_with(" <stop_here>"), "{call}");
    assert_eq!(
        scry.num("state.disasm('main').find(i => i.mnemonic === 'call').target"),
        scry.num("symbol('stop_here')")
    );
    assert!(scry
        .err("state.disasm({})")
        .contains("state.disasm('function')"));
}

/// Byte arrays by their type's name: `uint8_t`/`int8_t` are numbers, `char` text.
#[test]
fn byte_arrays_print_as_numbers_and_char_arrays_as_text() {
    let exe = fixture("byte_arrays");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('main'); cont()");
    assert_eq!(scry.ok("String(state.var('key'))"), "[222, 173, 190, 239]");
    assert_eq!(scry.ok("String(state.var('deltas'))"), "[-1, 0, 7]");
    assert_eq!(scry.ok("String(state.var('name'))"), "\"bytes\"");
    assert_eq!(scry.ok("String(state.var('raw'))"), "\"ok\"");
    scry.ok("cont()");
    // The numbers are the program's own.
    assert!(scry
        .ok("output()")
        .contains("key=222,173,190,239 deltas=-1,0,7 name=bytes"));
}

/// Two plugins with a static `publish` each: names read with their module where the bare name
/// is ambiguous (stop lines, unwind rows, symbol_at), and `libpub_b.so!publish` is taken
/// wherever a name is.
#[test]
fn same_named_functions_in_two_modules_are_named_by_module() {
    let dir = temp_path("publishers");
    std::fs::create_dir_all(&dir).unwrap();
    let cc = |args: &[&str]| {
        let ok = std::process::Command::new("cc")
            .args(args)
            .current_dir(&dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "cc {args:?}");
    };
    let src = std::fs::canonicalize("fixtures").unwrap();
    let publisher = src.join("publisher.c");
    let publisher = publisher.to_str().unwrap();
    for (who, offset) in [("a", "100"), ("b", "200")] {
        let lib = format!("libpub_{who}.so");
        let (w, o) = (format!("-DWHO={who}"), format!("-DOFFSET={offset}"));
        cc(&[
            "-g", "-O0", "-shared", "-fPIC", &w, &o, "-o", &lib, publisher,
        ]);
    }
    let host = src.join("publish_host.c");
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    cc(&[
        "-g",
        "-O0",
        "-o",
        "host",
        host.to_str().unwrap(),
        "-L.",
        "-lpub_a",
        "-lpub_b",
        &rpath,
    ]);
    let mut scry = Scry::spawn(&dir.join("host"), &[]);
    scry.ok("breakpoint.set('main'); cont()");
    // Events carry their module: a listener tells the two apart without parsing names.
    scry.ok("ctx.mods = []; addEventListener('breakpoint', e => { ctx.mods.push(e.module) })");
    scry.ok("breakpoint.set('libpub_a.so!publish'); breakpoint.set('libpub_b.so!publish')");
    assert!(scry.ok("cont()").contains(" libpub_a.so!publish+0x"));
    let stop = scry.ok("cont()");
    assert!(stop.contains(" libpub_b.so!publish+0x"), "{stop}");
    assert_eq!(scry.ok("String(state.var('x'))"), "2", "run_b(2)'s publish");
    let rows = scry.ok("state.unwind().map(f => f.symbol.split('+')[0]).join(' ')");
    assert_eq!(rows, "libpub_b.so!publish run_b main", "{rows}");
    assert!(scry
        .ok("state.symbol_at(state.pc)")
        .starts_with("libpub_b.so!publish+0x"));
    assert_eq!(scry.ok("ctx.mods.join(' ')"), "libpub_a.so libpub_b.so");
    assert_ne!(
        scry.num("symbol('libpub_a.so!publish')"),
        scry.num("symbol('libpub_b.so!publish')")
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("a=101 b=202"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A C++ reference reads as what it refers to: its number is the referent's value (it was
/// the address the reference holds), its `.addr` the referent's address, its kind the
/// referent's; the addresses are the ones the program prints.
#[test]
fn references_are_their_referents() {
    let exe = common::fixture_from("references", "g++", &["-g", "-O0"], &["references.cpp"]);
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('use'); cont()");
    assert_eq!(scry.ok("Number(state.var('r'))"), "5");
    assert_eq!(scry.ok("state.var('r') + 1"), "6");
    assert_eq!(scry.ok("state.var('r').kind"), "int");
    assert_eq!(scry.ok("state.var('p').kind"), "struct");
    let (p, r) = (
        scry.num("state.var('p').addr"),
        scry.num("state.var('r').addr"),
    );
    scry.ok("cont()");
    let out = scry.ok("output()");
    assert!(
        out.starts_with(&format!("{p:#x} {r:#x} ")),
        "{out} vs {p:#x} {r:#x}"
    );
}

/// `'net.c'::publish` names the function of one source file where two files each have a
/// static `publish`, wherever a function name is taken (breakpoints here; values already).
#[test]
fn a_function_of_one_source_file_by_gdb_spelling() {
    let dir = temp_path("file_funcs");
    std::fs::create_dir_all(&dir).unwrap();
    for (file, body) in [
        ("disk.c", "__attribute__((noinline)) static int publish(int x) { return x + 1; }\nint disk(int x) { return publish(x); }\n"),
        ("net.c", "__attribute__((noinline)) static int publish(int x) { return x + 2; }\nint net(int x) { return publish(x); }\n"),
        ("main.c", "int disk(int); int net(int);\nint main(void) { return disk(1) + net(2) == 6 ? 0 : 1; }\n"),
    ] {
        std::fs::write(dir.join(file), body).unwrap();
    }
    let ok = std::process::Command::new("cc")
        .args(["-g", "-O0", "-o", "prog", "main.c", "disk.c", "net.c"])
        .current_dir(&dir)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let mut scry = Scry::spawn(&dir.join("prog"), &[]);
    scry.ok("breakpoint.set(\"'net.c'::publish\")");
    let stop = scry.ok("cont()");
    assert!(
        stop.contains(" publish+") && stop.contains(" net.c:1"),
        "{stop}"
    );
    // The caller is net(), never disk(): the other file's publish was not taken.
    assert_eq!(scry.ok("state.unwind()[1].symbol.split('+')[0]"), "net");
    assert_eq!(scry.ok("String(state.var('x'))"), "2");
    // The other file's, set now, is another address.
    scry.ok("breakpoint.set(\"'disk.c'::publish\")");
    assert_ne!(
        scry.num("breakpoint.list()[0].addr"),
        scry.num("breakpoint.list()[1].addr")
    );
    // A file no unit compiles waits as pending, said without doubled quotes.
    let r = scry.eval("breakpoint.set(\"'nope.c'::publish\")");
    assert!(
        r.body
            .contains("no loaded module has 'nope.c'::publish yet"),
        "{r:?}"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a first-time user tries and gets wrong is an error that teaches the call that works:
/// an option no call takes, a JavaScript method asked of a typed value, a walk of a list into
/// its NULL; a fault in the first page says what C calls it.
#[test]
fn wrong_first_tries_are_errors_that_teach() {
    let mut scry = Scry::spawn(&fixture("loop"), &["2"]);
    let e = scry.err("breakpoint.set('add', {condition: e => true})");
    assert!(
        e.contains("no option 'condition' (a condition is {if: e => ...})"),
        "{e}"
    );
    let e = scry.err("watchpoint.set('counter', 'w', {len: 4, if: e => true})");
    assert!(
        e.contains("no option 'if'") && e.contains("addEventListener('watchpoint'"),
        "{e}"
    );
    // Options may come second.
    assert_eq!(scry.ok("watchpoint.set('counter', {len: 4})"), "1");
    assert!(scry.ok("watchpoint.list()").contains("\t4\tw\t"));
    assert_eq!(scry.ok("breakpoint.list().length"), "0");
    // A JavaScript method asked of a typed value points at its plain data.
    scry.ok("watchpoint.remove(1); breakpoint.set('add'); cont()");
    let e = scry.err("state.var('a').padStart(3)");
    assert!(
        e.contains("'padStart' is a JavaScript method: use v.value"),
        "{e}"
    );
    drop(scry);
    let mut scry = Scry::spawn(&fixture("crash"), &[]);
    let stop = scry.ok("cont()");
    assert!(
        stop.contains("[0x1c is NULL + 28: a member or element of a NULL pointer]"),
        "{stop}"
    );
    let e = scry.err("state.var('it').pad");
    assert!(
        e.contains("is NULL (reading .pad)") && e.contains("while (+p)"),
        "{e}"
    );
}

/// A member of the whole object reads through a base pointer in one call, as its vtable
/// says (gdb's `set print object on`): `shapes[1]->w` of a Rect held as a Shape, through a
/// second base at an offset too, and through a shared_ptr or a typedef of the base (by the
/// typedef's name no base matched); a plain struct whose first word points at a vtable is no
/// such object; a member neither has names the whole object's.
#[test]
fn a_member_of_the_whole_object_reads_through_its_base() {
    let exe = common::fixture_from(
        "dynamic_member",
        "g++",
        &["-g", "-O0"],
        &["dynamic_member.cpp"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    let line = common::line_of(
        include_str!("../fixtures/dynamic_member.cpp"),
        "// stop here",
    );
    scry.ok(&format!(
        "breakpoint.set('dynamic_member.cpp:{line}'); cont()"
    ));
    assert_eq!(
        scry.ok("state.value('shapes[1]->w') + state.value('shapes[1]->h')"),
        "7"
    );
    assert_eq!(scry.ok("state.value('shapes[0]->r')"), "2");
    assert_eq!(scry.ok("state.value('named->tag')"), "77");
    assert_eq!(scry.ok("state.var('named').w"), "5");
    assert_eq!(scry.ok("state.value('named->label')"), "\"named\"");
    // Through a shared_ptr (its pointer is an `element_type *`) and a typedef of the base.
    assert_eq!(
        scry.ok(
            "[state.value('shared->w'), state.var('shared').h, state.value('typed->w')].join(' ')"
        ),
        "5 6 5"
    );
    let e = scry.err("state.value('holder.w')");
    assert!(
        e.contains("Holder has no member 'w'") && !e.contains("vtable"),
        "{e}"
    );
    let e = scry.err("state.value('named->zz')");
    assert!(
        e.contains("the whole object is a Tagged") && e.contains(" tag"),
        "{e}"
    );
    scry.ok("cont()");
    assert!(scry
        .ok("output()")
        .contains("truth total=24 tag=77 q=9 shared=30"));
    scry.finish();
}

/// A variable whose symbol carries an ABI tag (`g_title[abi:cxx11]`, a std::string) is found
/// by the name the source gives it: its address, its memory, its thread-local instance (they
/// were "unknown symbol 'g_title'" and "no thread-local variable 'tl_name'").
#[test]
fn variables_with_abi_tags_are_found_by_their_names() {
    let exe = common::fixture_from("abi_tags", "g++", &["-g", "-O0"], &["abi_tags.cpp"]);
    let line = common::line_of(include_str!("../fixtures/abi_tags.cpp"), "// stop here");
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok(&format!("breakpoint.set('abi_tags.cpp:{line}'); cont()"));
    assert_eq!(
        scry.ok("Number(symbol('g_title')) == Number(state.var('g_title').$addr)"),
        "true"
    );
    assert_eq!(
        scry.ok("state.thread_local('tl_name').value"),
        "main-thread"
    );
    assert_eq!(
        scry.ok("Number(state.thread_local_addr('tl_name')) == Number(state.value('&tl_name'))"),
        "true"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("title main-thread"));
    scry.finish();
}

/// A name the program's methods have and the C library's data too (`timezone`): a
/// breakpoint on it stops in the methods, as gdb's `break timezone` does; it was refused as
/// data, not code.
#[test]
fn a_breakpoint_on_a_name_libc_has_as_data_stops_in_the_methods() {
    let exe = common::fixture_from(
        "method_like_data",
        "g++",
        &["-g", "-O0"],
        &["method_like_data.cpp"],
    );
    let mut scry = Scry::spawn(&exe, &[]);
    scry.ok("breakpoint.set('main'); cont()");
    scry.ok("breakpoint.set('timezone')");
    // In either order (g++ evaluates printf's arguments right to left).
    let both = format!("{} {}", scry.ok("cont()"), scry.ok("cont()"));
    assert!(
        both.contains("Clock::timezone") && both.contains("Place::timezone"),
        "{both}"
    );
    assert!(scry.ok("cont()").starts_with("exited with code 0"));
    assert!(scry.ok("output()").contains("120 6"));
}
