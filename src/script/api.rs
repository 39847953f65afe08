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
    ("run", "start, stop and drive the target"),
    ("state", "registers, memory, code of the stopped target"),
    ("break", "breakpoints"),
    ("events", "listeners that run inside scry at every stop"),
    ("util", "printing, numbers, settings"),
];

pub const API: &[Entry] = &[
    e("run", "spawn(path, ...args, {env,cwd,stdin}?)", "start a program, stopped at its entry point -> stop"),
    e("run", "attach(pid)", "trace a running process (all threads stop) -> stop"),
    e("run", "detach()", "restore breakpoint bytes, let the process run on"),
    e("run", "kill()", "SIGKILL the process -> stop"),
    e("run", "step(n=1, {timeout}?)", "execute n instructions on the selected thread -> stop"),
    e("run", "cont({timeout}?)", "resume all threads until a stop -> stop; continue() is an alias"),
    e("run", "output()", "target stdout+stderr captured since the last call"),
    e("run", "handle_signal(sig, 'stop'|'pass')", "stop on a signal, or deliver it silently"),
    e("run", "status()", "{live, pid, program}"),
    e("state", "state.pc", "instruction pointer (Number)"),
    e("state", "state.sp", "stack pointer"),
    e("state", "state.registers.rax", "any of rax..r15 rip rsp rbp eflags cs ss ds es fs gs fs_base gs_base orig_rax; assignable"),
    e("state", "state.flags.z", "c p a z s t i d o (n=s, v=o) as booleans; assignable"),
    e("state", "state.instruction", "{addr, bytes, mnemonic, operands, text} at pc"),
    e("state", "state.memory(addr).u32()", "u8 u16 u32 u64 i8 i16 i32 i64 f32 f64; addr may be 'symbol+off'"),
    e("state", "state.memory(addr).bytes(n)", "n bytes as a hex string"),
    e("state", "state.memory(addr).str(max=4096)", "NUL-terminated string"),
    e("state", "state.memory(addr).write_u32(v)", "typed writes: write_u8 .. write_f64, write_bytes(hex)"),
    e("state", "state.disasm(n=10, addr=pc)", "instructions from addr"),
    e("state", "state.symbol_at(addr)", "'main+0x4' or null"),
    e("state", "state.tid", "selected thread id"),
    e("state", "prev", "what scripts read at the previous stop, same shape as state (undefined if unread)"),
    e("state", "symbol(expr)", "address of 'main', 'main+0x10', 'libc.so.6:puts'"),
    e("state", "symbols(filter?, limit=200)", "[{addr, size, type, name, module}]"),
    e("break", "breakpoint.set(addr|'sym+off', name?)", "-> id"),
    e("break", "breakpoint.remove(id|name)", "restore the original byte"),
    e("break", "breakpoint.list()", "[{id, addr, name, symbol, hits}]"),
    e("events", "addEventListener(type, fn)", "type: step breakpoint signal exit; fn(e) with e.state, e.prev, e.stop_reason, e.pc, e.breakpoint_id, e.signal, e.fault_addr"),
    e("events", "removeEventListener(type, fn)", "unregister"),
    e("events", "return 'continue'", "from a listener: keep running (a breakpoint hit becomes a logpoint)"),
    e("events", "return 'stop'", "from a step listener: end step(n) here"),
    e("events", "e.deliver = false", "in a signal listener: do not pass the signal on"),
    e("util", "print(...values)", "write a line of the response"),
    e("util", "hex(n)", "'0x...' for a Number or BigInt"),
    e("util", "ctx", "persistent object for your state; ctx.reset() empties it"),
    e("util", "config.timeout", "seconds a cont()/step() may run (also script_timeout, output_limit, aslr)"),
    e("util", "help(topic?)", "this reference; topics: run state break events util"),
];

pub const OVERVIEW: &str = "\
scry: JavaScript against a stopped process. A chunk's last value is printed.
Numbers: exact; 64-bit values above 2^53 are BigInt. Addresses accept Number, BigInt or 'sym+off'.
Stops print as one line: reason, pc, symbol.";

/// `help()` is everything (it fits in 3 KB); `help('state')` one topic.
pub fn help(topic: Option<&str>) -> String {
    let wanted: Vec<&str> = match topic {
        None | Some("") | Some("all") => TOPICS.iter().map(|(t, _)| *t).collect(),
        Some(t) if TOPICS.iter().any(|(name, _)| *name == t) => vec![t],
        Some(t) => {
            let names: Vec<&str> = TOPICS.iter().map(|(n, _)| *n).collect();
            return format!("no help topic '{t}'; topics: {}", names.join(" "));
        }
    };
    let mut out = String::new();
    if wanted.len() > 1 {
        out.push_str(OVERVIEW);
        out.push('\n');
    }
    for (name, about) in TOPICS.iter().filter(|(n, _)| wanted.contains(n)) {
        out.push_str(&format!("[{name}] {about}\n"));
        for entry in API.iter().filter(|e| e.topic == *name) {
            out.push_str(&format!("  {}\t{}\n", entry.path, entry.doc));
        }
    }
    out.pop();
    out
}

/// The names reachable from the global scope, for "did you mean".
pub fn global_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = API
        .iter()
        .filter_map(|e| {
            let head = e.path.split(['.', '(', ' ']).next()?;
            (!head.is_empty() && head != "return" && head != "e").then_some(head)
        })
        .collect();
    names.extend(["continue", "watchpoint", "thread"]);
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
        for entry in API {
            assert!(all.contains(entry.path));
        }
        assert!(help(Some("state")).contains("state.pc"));
        assert!(help(Some("nope")).starts_with("no help topic"));
    }
}
