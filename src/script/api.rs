//! The API table: one row per global, property and method scripts can use. `help()` is
//! rendered from it, and a test checks every row against the live JS environment, so the
//! reference cannot drift from what exists.

pub struct Entry {
    pub topic: &'static str,
    /// The path as written in JS; `()` marks a call, `(...)` its arguments.
    pub path: &'static str,
    pub doc: &'static str,
}

const fn e(topic: &'static str, path: &'static str, doc: &'static str) -> Entry {
    Entry { topic, path, doc }
}

pub const TOPICS: &[(&str, &str)] = &[
    ("run", "drive the target"),
    ("state", "the stopped target"),
    ("break", "breakpoints, watchpoints"),
    ("events", "listeners run at each stop"),
    ("util", "print, numbers, settings"),
    ("stop", "what runs return"),
    ("signals", "which signals stop and reach listeners"),
    ("values", "DWARF types (-g)"),
    ("view", "view(), dom"),
    ("time", "record, go back"),
    ("trace", "probes, no stops"),
];

/// Topics `help(topic)` answers that `help()` leaves out (their row lives in another topic).
const EXTRA_TOPICS: &[(&str, &str)] = &[
    ("core", "core files: read one, write one"),
    ("syscalls", "system calls as events and stops"),
    ("fork", "fork children: parent, child or both"),
    ("remote", "a gdbserver's or gdbstub's process"),
];

/// What `help(topic)` adds to the topic's rows: what the one-line summaries leave out.
/// `help()` (everything) shows only the rows, so it stays small.
const NOTES: &[(&str, &str)] = &[
    (
        "remote",
        "\
remote('host:port', {program}?) or `scry --remote HOST:PORT [PROGRAM]` debugs the process of a
  GDB-remote stub (gdbserver HOST:PORT PROG, gdbserver --attach, QEMU -g PORT): the same
  state, breakpoints, watchpoints, cont/step/next/finish, threads and values as locally.
  A program the stub started stops at its entry point. program: a local copy for symbols;
  config.sysroot (--sysroot) finds its libraries. syscall.catch and gcore() work through
  gdbserver. Not yet: fork children, writing FP registers; the program's output is the
  stub's. detach() leaves it running",
    ),
    (
        "fork",
        "\
config.follow_fork (--follow-fork): what a fork does
  'parent' (default) the child runs untraced, without scry's int3 bytes
  'child'  the child is debugged, the parent runs untraced
  'both'   both stay traced (the stop's note names the children kept)
config.schedule (--schedule), with 'both':
  'all' (default) cont() runs every process; the first stop in any stops them all and
        selects it (the line says 'process N'); another process's end is a note, not a
        stop; a timeout says what each one waits in. step()/next()/finish() run the
        selected process alone
  'selected' only the selected process runs; the others are held until selected
config.max_processes (512): at most this many under control; a fork child beyond is let go
  untraced (as with 'parent'), said in a note
process.list() -> [{pid, state, threads, program}]; state: selected, stopped (all), held
  (selected), gone, or how it ended (listed until the next cont())
process.select(pid): state, cont(), step(), thread.list() are about that process now.
  Breakpoints and watchpoints apply to every process (hits count in all:
  breakpoint.list()[i].by_process[pid]); events carry e.pid
when the selected process ends, the stop names the ones that remain
kill() kills every process; detach() lets every one go (code restored, they run on); the
  end of the session lets each go as it came (spawned: killed, attached: detached)
vfork children are never held (they borrow the parent's memory)",
    ),
    (
        "values",
        "\
var: a parameter or local of unwind row frame (inner blocks first), else a global or static
value paths: 'r->target->port' 'nodes[1].next->name' 'm[2][3]' 'a[n->key]' '*p' '&x' 'mod::G'
  \"'other.c'::counter\" (one file's static), 'f::calls' (a static in function f)
locals(frame), thread_local(name) give the same values. One line each:
  {key: 20, name: \"other\", next: 0x5555555592d0, w: 0.5}; arrays: 32 elements, then a count;
  enums BLUE, geo::Color::Green (C++ scope), 6 (no enumerator), P_READ | P_EXEC;
  pointers never followed (char * shows text)
navigate: v.member v[3] v.at(i) v.deref() v.ref() (&v); a member of a pointer follows it
helpers: v.addr v.type v.size v.length v.kind v.value (plain JS data) v.keys() v.text();
  a member named like a helper wins: v.$addr v.$type v.$size v.$value always mean helpers
numbers: Number(v), v * 2, v > 3 (a pointer is its address); text: String(v), v == 'BLUE',
  s == 'abc'; === compares objects (use v.value)
no value: <optimized out>, <not yet stored: at function entry>, <unavailable: why>
printers: C++ std and Rust std containers print as what they hold (vector(5) [7, -3],
  map(2) {\"a\": 1}, shared_ptr(use 1, weak 0) -> {x: 1}, Rc(strong 1, weak 0) -> 5) and read
  through it: v[2] v.length m.get('a') [...v] m.entries() sp.x (what it points at);
  v.$raw: the layout (no printers); corrupt: <invalid: why>; a printer's throw:
  <printer error: why> for that value only. printers.add('Point', p => `(${p.x}, ${p.y})`)
  or a RegExp over the qualified type name; a script's printers win over scry's
types by name: state.typed(addr, 'struct foo *' | 'PyObject' | 'char [16]'); casts in
  paths: '*(struct foo *)p', '((Point *)0x5555555592a0)->y', '(unsigned char [4])x'
a breakpoint on a function stops after its prologue (arguments in place); 'f+0': first byte",
    ),
    (
        "time",
        "\
record.start(): cont() then runs every thread one instruction at a time (turns of 256;
  step(n) the selected one) at the single-step rate; a limit stop or {ring: true} bounds it
history.writes('x') -> [{step, tid, pc, insn, at, old, new}]: the whole variable before/after
reverse_cont() stops at a breakpoint's address, before a watched write, or history_end (the
  start, or a call whose writes are unknown: named); state then shows that moment
in the past: stops say [past: step K of N], e.replay / e.direction; writes are refused;
  record.stop() makes the present there; detach() returns to the present first",
    ),
    (
        "trace",
        "\
tracepoint.set('malloc', {collect: ['rdi', {mem: 'rsi', len: 16}, {mem: 'rdi', str: 64}]})
  puts a 5-byte jump at the function's first instruction (or a file:line, an address) to a
  probe that copies the registers and memory asked into a ring scry reads while the program
  runs: a cont() runs on and 'trace' listeners get each record (every 5 ms, and at stops).
  Where a jump is not safe (a branch into its bytes, a call, a short function) it is a trap
  (mode 'trap', said at set): each hit stops its thread for a moment, the records the same.
collect: rax..r15 rip rsp eflags xmm0..xmm15 'all'; {mem: 'rsi+8', len: n} {mem, str: n}
  (n <= 4096); a bad pointer is e.chunks[i].error 'unreadable', never a crash
full: 'wait' (default: the program waits for room, nothing lost) or 'drop' (counted in lost)
{if: e => bool} filters records before listeners (after the hit: the program ran on)
e.memory(a) reads only what was collected; a listener's throw is reported once, counted
tracepoint.list() -> [{id, where, mode, hits, delivered, lost}]; hits exact in every mode
  mode 'pending': its function is in a library not loaded yet, or exec / dlclose took its
  code; it is set (a note says so) when a module that has it loads, its counts going on
remove(id), detach() and exit restore the code bytes; a fork child runs the original code",
    ),
    (
        "core",
        "\
core(path, program?) or `scry --core CORE [PROGRAM]` reads a core file: its first stop is
  the crash ('signal SIGSEGV fault_addr=0x1c at ...', from NT_SIGINFO); state, registers,
  memory, disasm, unwind, frame, locals, thread_local, stack, thread.list/select and
  modules() answer as for a stopped process. Nothing runs: cont step next finish, writes and
  breakpoints are errors naming the core; spawn() the program to run it.
mapped files (symbols, and code the kernel left out of the core) come from PROGRAM and the
  paths the process had, or config.sysroot / config.solib_dirs (--sysroot, --solib-dir),
  checked against the core's build ids; status().problems says what is missing
gcore(path = 'core.PID', {overwrite, timeout}?) writes a core of the stopped process
  (every thread, the last stop's signal, its mappings' bytes; gdb reads it) -> {path, size,
  threads}; an existing file is replaced only with {overwrite: true}",
    ),
    (
        "state",
        "\
instructions (state.instruction, disasm rows, a watchpoint's e.insn, a step's e.executed) are
  {addr, bytes (hex), mnemonic, operands, text, symbol}: '0x401136 <add+0x4><TAB>mov [rbp-4],edi'
memory(a).bytes(n) is a hex string '554889e5'; .array('u32', n) an Array of values;
  .u8array(n) a Uint8Array; .str(max) text to the NUL, invalid bytes as \\xNN
results print as text, and String(x) / `${x}` is that text; listings (disasm, symbols,
  unwind, thread.list, breakpoint.list...) are arrays of row objects: x.map(r => r.addr),
  x.split('\\n') for lines of the text; JSON.stringify(x) works (BigInt -> '0x...')",
    ),
    (
        "events",
        "\
every event: reason (= stop_reason) pc tid symbol source ('loop.c:15') line (15)
  text (the stop's line) state prev; by type:
  step        each instruction of step(n) (not cont()); e.executed = the instruction just
              run, state.instruction = the next one
  breakpoint  breakpoint_id breakpoint_name
  watchpoint  watchpoint_id watchpoint_name access_type ('read'|'write') addr old new,
              insn (the instruction that accessed, an object) insn_addr
  signal      signal ('SIGSEGV') fault_addr; set e.deliver = false to drop it; see help('signals')
  thread      kind ('start'|'exit') tid; never stops a run unless a listener returns 'stop'
  library     kind ('load'|'unload') path base: likewise
  syscall     phase nr name args call ret errno catch_id, arguments by name: help('syscalls')
  exit        reason 'exited' with code, or 'killed' with signal
no verdict: a breakpoint, watchpoint, signal or syscall ends the run, a step goes on; listeners
may not call step() cont() next() finish() spawn() attach() detach() kill()",
    ),
    (
        "syscalls",
        "\
syscall.catch(what, {phase}?) -> id; syscall.uncatch(id); syscall.list() (and how they stop)
what: a name 'openat', a number 257, an array ['read', 'write'], 'all', or a group:
  %file (takes a path) %desc (takes or returns an fd) %net %process %signal %memory %ipc
  %creds %clock; {phase}: 'exit' (default: the completed call), 'entry' or 'both'
a caught call is a 'syscall' stop, one line like strace:
  syscall openat(AT_FDCWD, \"/etc/x.conf\", O_RDONLY) = -1 ENOENT at 0x... thread 4321
event fields: phase ('entry'|'exit') nr name args (6 raw values) call (the text) ret errno
  ('ENOENT' on failure) catch_id, and each argument by name: path flags mode fd count ...;
  strings are read from memory (paths in full, buffers 32 bytes), flags and signals are
  names, fds and sizes Numbers
a syscall listener returning 'continue' lets the run go on; meanwhile only its thread stops
cost: a spawned program gets a seccomp filter, so only caught calls stop; an attached one is
  traced with PTRACE_SYSCALL: every system call stops twice. syscall.list() says which
config.syscall_filter: 'auto' (default: a filter unless the program is unprivileged, where
  it would need no_new_privs set for life), 'seccomp' (a filter, setting it), 'ptrace' (never)
a filter stays in the program for life: after detach() a keeper process lets its calls run
  (never ENOSYS) as long as the program lives; detach()'s line says so",
    ),
    (
        "break",
        "\
a hit is a 'breakpoint' stop (e.breakpoint_id); several breakpoints may share an address.
{if: e => bool} lets a hit go when false; {log: e => value} prints it and goes on.
during cont(), a stop listeners decide on stops only its thread: the others run (thread.list()
shows them 'running') until a listener says 'stop' or gives no verdict.
watchpoint hits carry access_type addr old new insn insn_addr (help('events'));
x86 has 4 debug registers; 'r' reports only accesses that leave the value unchanged",
    ),
];

/// Topics `help()` names in one line; `help('view')` lists them.
const BRIEF_TOPICS: &[&str] = &["view", "time", "trace"];

#[rustfmt::skip] // one row per line: the table is read as a table
pub const API: &[Entry] = &[
    e("run", "spawn(path, ...args, {env,cwd,stdin}?)", "-> the entry stop"),
    e("run", "attach(pid) / detach() / kill()", "detach leaves it running"),
    e("run", "step(n=1, {timeout}?)", "n instructions, selected thread -> stop"),
    e("run", "cont({timeout}?)", "run all threads to a stop; continue()"),
    e("run", "finish({timeout}?)", "to the caller -> stop, .returned"),
    e("run", "next({timeout}?)", "to the next line over calls -> stop"),
    e("run", "output()", "program output since last call"),
    e("run", "thread.list() / thread.select(tid)", "[{tid, name, state, pc}]"),
    e("run", "process.list() / process.select(pid)", "help('fork')"),
    e("run", "handle_signal(sig, 'stop'|'pass')", "signal policy"),
    e("run", "status()", "{live, pid, program}"),
    e("run", "core(f,p?) / gcore(f?)", "help('core')"),
    e("time", "record.start({limit, ring}?) / record.stop() / record.status()", "record every instruction from here"),
    e("time", "history.writes(where, len?) / history.steps(from, to) / history.find(fn, {last}?)", "recorded stores [{step, pc, insn, at, old, new}]; steps [{step, tid, pc}]"),
    e("time", "reverse_step(n=1) / reverse_cont() / reverse_finish()", "back to a breakpoint, a watched write, the call, the start"),
    e("time", "goto(step)", "the program as before that step; cont()/step() replay, then go live"),
    e("trace", "tracepoint.set(where, {collect, if, full}?) / tracepoint.remove(id) / tracepoint.list()", "a probe in the program: records, no stop -> id"),
    e("trace", "addEventListener('trace', e => ...)", "e.id tid time pc registers.rdi memory(a).str() symbol line"),
    e("trace", "stop()", "in a trace listener (or return 'stop'): stop the program soon"),
    e("state", "state.pc / state.sp / state.tid", "Numbers"),
    e("state", "state.registers.rax / state.fpu", "rax..r15 rip eflags fs_base xmm0.f64[0] st0; writable"),
    e("state", "state.flags.z", "c p a z s t i d o (n=s v=o); assignable"),
    e("state", "state.instruction", "{addr, bytes, mnemonic, operands, text}"),
    e("state", "state.memory(addr).u32()", "u8..u64 i8..f64 u64n array(t,n) bytes(n) str(); write_u32(v).. write_bytes(hex)"),
    e("state", "state.disasm(n=10, addr=pc)", "listing; disasm('fn'): the whole function"),
    e("state", "state.source(n=5)", "lines around pc, '>' marks it"),
    e("state", "state.locals(frame=0)", "[{name, type, value, kind}] of a frame"),
    e("values", "state.var(name, frame=0) / state.value(path, frame=0)", "'r->port'; printers.add()"),
    e("state", "state.symbol_at(addr)", "'main+0x4' or null"),
    e("state", "state.stack", "{top, usable_base, guard_size, kind} of sp's stack"),
    e("state", "state.thread_local(name)", "typed; thread_local_addr(name)"),
    e("state", "state.unwind(max=64) / state.frame(n)", "[{frame, pc, sp, symbol, file, line}], .registers"),
    e("state", "prev", "previous stop's reads, same shape"),
    e("state", "symbol(expr) / symbols(filter?, {module, limit}?)", "address of 'main+0x10'; listing"),
    e("state", "modules()", "[{name, base, end, build_id, symbols, debug, ...}]"),
    e("state", "lines('f.c:15') / line_at(addr)", "its addresses / 'f.c:15'"),
    e("break", "breakpoint.set(where, name? | {name, if, log})", "addr 'sym+off' 'f.c:9' -> id; if/log: e => ..; remove(id|name); list()"),
    e("break", "watchpoint.set(where, 'w'|'rw'|'r', name?, {len}?)", "4 hw slots; remove(id|name); list()"),
    e("break", "syscall.catch(what, {phase}?)", "-> id; uncatch(id) list(); help('syscalls')"),
    e("events", "addEventListener(type, fn)", "step breakpoint watchpoint signal syscall thread library exit; removeEventListener; listeners()"),
    e("events", "fn(e)", "e: reason pc tid state prev ...: help('events')"),
    e("events", "return 'continue' / 'stop'", "go on past a hit (logpoint) / end step(n)"),
    e("events", "e.deliver = false", "signal listener: drop it"),
    e("util", "print(...v) / hex(n)", "output line / '0x..'"),
    e("util", "ctx", "persistent object; ctx.reset()"),
    e("util", "config.timeout", "also script_timeout output_limit aslr debug_dirs"),
    e("util", "help(topic?)", "[topics] + core remote syscalls fork all"),
    e("view", "view()", "URL of the live page (scry --view [ADDR:]PORT), or null"),
    e("view", "dom.canvas(id, w, h).putImageData(src, dx=0, dy=0, {w,h,format}?)", "pixels; src: bytes, Uint8Array, hex or state.memory(addr)"),
    e("view", "format", "rgba (default) rgbx bgra bgrx rgb gray; state.memory() reads w*h pixels"),
    e("view", "dom.id(id)", "element by id; a new <div> in the page's script area if none has it"),
    e("view", "dom.id(id).textContent = v", "also innerHTML (sanitized: no scripts, no on* handlers), className"),
    e("view", "dom.id(id).style.color = 'red'", "style properties; setAttribute(n, v) / getAttribute(n)"),
    e("view", "dom.create(tag) / dom.id(id).appendChild(el)", "build trees; el.append('text', el2); el.remove(); dom.clear()"),
    e("view", "the page", "updated at most ~30x a second, last state wins; listeners stay fast"),
];

pub const OVERVIEW: &str = "\
scry: JS against a stopped process; a chunk's last value is printed.
Chunks share globals (const/let may be redeclared). Past 2^53: BigInt.
Addresses: Number, BigInt, 'sym+off', a typed value. First: :status (what, where).";

/// The stop reasons and the signals that stop, for `help('stop')` and `help('signals')`
/// (from the code that decides them, so the text cannot drift).
fn generated_notes(topic: &str) -> Option<String> {
    use crate::session::vocabulary::signals;
    match topic {
        "stop" => {
            let reasons: Vec<&str> = crate::session::Reason::ALL
                .iter()
                .map(|r| r.as_str())
                .collect();
            Some(format!(
                "\
fields: reason ({}), pc symbol source line tid; by reason:
  breakpoint_id breakpoint_name | watchpoint fields (help('events')) | signal fault_addr |
  code (exited) | signal (killed) | returned (finish: rax) | steps (step(n))
prints as one line, and String(stop) is that line: 'breakpoint 1 at 0x401136 add loop.c:7'
timeout: the run's deadline (config.timeout, or {{timeout: s}}) passed; every thread is stopped",
                reasons.join(" ")
            ))
        }
        "signals" => {
            let passed: Vec<String> = (1..=64)
                .filter(|s| signals::passes_silently(*s))
                .map(signals::signal_name)
                .collect();
            Some(format!(
                "\
a signal that stops is a 'signal' stop: signal listeners run and may set e.deliver = false;
  otherwise it is delivered when the run goes on
passed to the program without a stop (listeners never see them): {}
handle_signal(sig, 'stop') makes one of these stop (and reach listeners); 'pass' the reverse
names: SIGSEGV or 11; SIGRTMIN+n for real-time signals",
                passed.join(" ")
            ))
        }
        _ => None,
    }
}

/// `help()` is the reference in brief (it fits in 3 KB); `help('state')` one topic, with its
/// notes; `help('all')` every topic with its notes, the extra topics included, in one answer.
pub fn help(topic: Option<&str>) -> String {
    let everything = topic == Some("all");
    let wanted: Vec<&str> = match topic {
        None | Some("") => TOPICS.iter().map(|(t, _)| *t).collect(),
        Some("all") => TOPICS.iter().chain(EXTRA_TOPICS).map(|(t, _)| *t).collect(),
        Some(t) if TOPICS.iter().any(|(name, _)| *name == t) => vec![t],
        Some(t) if EXTRA_TOPICS.iter().any(|(name, _)| *name == t) => vec![t],
        Some(t) => {
            let names: Vec<&str> = TOPICS.iter().chain(EXTRA_TOPICS).map(|(n, _)| *n).collect();
            return format!("no help topic '{t}'; topics: {} all", names.join(" "));
        }
    };
    // One topic, or all of them: every entry and the notes.
    let detailed = wanted.len() == 1 || everything;
    let mut out = String::new();
    if wanted.len() > 1 {
        out.push_str(OVERVIEW);
        out.push('\n');
    }
    let listed = TOPICS
        .iter()
        .chain(if detailed { EXTRA_TOPICS } else { &[] });
    for (name, about) in listed.filter(|(n, _)| wanted.contains(n)) {
        out.push_str(&format!("[{name}] {about}\n"));
        if !detailed && BRIEF_TOPICS.contains(name) {
            continue;
        }
        for entry in API.iter().filter(|e| e.topic == *name) {
            out.push_str(&format!("  {}\t{}\n", entry.path, entry.doc));
        }
        if detailed {
            let notes = NOTES
                .iter()
                .find(|(t, _)| t == name)
                .map(|(_, n)| n.to_string())
                .or_else(|| generated_notes(name));
            if let Some(notes) = notes {
                out.push_str(&notes);
                out.push('\n');
            }
        }
    }
    out.pop();
    out
}

/// The JS paths a row names: `"attach(pid) / detach()"` gives `["attach()", "detach()"]`
/// (arguments dropped, calls kept). Rows that are not paths (`return ...`, `fn(e)`) give none.
pub fn paths(entry: &Entry) -> Vec<String> {
    entry
        .path
        .split(" / ")
        .filter(|p| {
            !p.starts_with("return")
                && !p.starts_with("fn(")
                && !p.starts_with("e.")
                && !p.starts_with('\'')
                && !matches!(*p, "format" | "the page")
        })
        .map(|p| {
            let mut out = String::new();
            let mut depth = 0;
            for c in p.chars() {
                match c {
                    '(' => {
                        if depth == 0 {
                            out.push_str("()");
                        }
                        depth += 1;
                    }
                    ')' => depth -= 1,
                    _ if depth == 0 => out.push(c),
                    _ => {}
                }
            }
            out.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// The names reachable from the global scope, for "did you mean".
pub fn global_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = API
        .iter()
        .flat_map(|e| e.path.split(" / "))
        .filter_map(|p| {
            let head = p.split(['.', '(', ' ']).next()?;
            let ident =
                !head.is_empty() && head.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            (ident && !matches!(head, "return" | "fn" | "e" | "format" | "the")).then_some(head)
        })
        .collect();
    names.extend([
        "continue",
        "printers",
        "removeEventListener",
        "thread_local",
    ]);
    names.sort_unstable();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_is_small_and_complete() {
        let all = help(None);
        assert!(all.len() < 3072, "help() is {} bytes", all.len());
        for entry in API.iter().filter(|e| !BRIEF_TOPICS.contains(&e.topic)) {
            assert!(all.contains(entry.path));
        }
        let view = help(Some("view"));
        assert!(view.contains("dom.canvas(id, w, h)"));
        assert!(
            !all.contains("dom.canvas"),
            "view details only in help('view')"
        );
        assert!(help(Some("state")).contains("state.pc"));
        // Topics add what the summary leaves out.
        assert!(!all.contains("e.executed"));
        assert!(help(Some("events")).contains("e.executed = the instruction just"));
        assert!(help(Some("stop")).contains("thread_start"));
        assert!(help(Some("signals")).contains("SIGALRM"));
        for (topic, _) in TOPICS {
            assert!(help(Some(topic)).len() < 2048, "help('{topic}') is long");
        }
        assert!(help(Some("values")).contains("v.deref()"));
        assert!(help(Some("nope")).starts_with("no help topic"));
    }

    #[test]
    fn rows_name_paths() {
        let row = Entry {
            topic: "run",
            path: "attach(pid) / detach() / state.memory(addr).u32()",
            doc: "",
        };
        assert_eq!(
            paths(&row),
            vec!["attach()", "detach()", "state.memory().u32()"]
        );
        assert!(global_names().contains(&"spawn"));
        assert!(!global_names().contains(&"fn"));
    }
}
