//! The test harness: builds C fixtures with the system `cc`, drives the real `scry` binary over
//! its pipe protocol, and bounds every exchange with a timeout.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const SCRY: &str = env!("CARGO_BIN_EXE_scry");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");

/// How long one response may take before the test fails (not hangs).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);

/// Builds `fixtures/<name>.c` with `flags` once per test run; returns the binary's path.
pub fn fixture_with(name: &str, flags: &[&str]) -> PathBuf {
    let suffix: String = flags
        .iter()
        .map(|f| f.trim_start_matches('-').replace(['=', '/'], "_"))
        .collect::<Vec<_>>()
        .join("_");
    let out = if suffix.is_empty() {
        name.to_string()
    } else {
        format!("{name}_{suffix}")
    };
    built_once(&out, |partial| {
        let src = Path::new(FIXTURES).join(format!("{name}.c"));
        let status = Command::new("cc")
            .args(flags)
            .arg("-o")
            .arg(partial)
            .arg(&src)
            .arg("-lpthread")
            .status()
            .expect("cc runs");
        assert!(status.success(), "building fixture {name} failed");
    })
}

/// Builds `fixtures/rust/<name>.rs` with `rustc -g -C opt-level=<opt>` once per test run.
pub fn rust_fixture(name: &str, opt: &str) -> PathBuf {
    built_once(&format!("rust_{name}_o{opt}"), |partial| {
        let src = Path::new(FIXTURES).join("rust").join(format!("{name}.rs"));
        let status = Command::new("rustc")
            .args(["-g", "-C", &format!("opt-level={opt}"), "-o"])
            .arg(partial)
            .arg(&src)
            .status()
            .expect("rustc runs");
        assert!(status.success(), "building fixture rust/{name}.rs failed");
    })
}

/// Builds `sources` (files under fixtures/) with `compiler` and `flags` into one binary
/// `out`, once per test run: programs of several units, C++, or a chosen DWARF version.
pub fn fixture_from(out: &str, compiler: &str, flags: &[&str], sources: &[&str]) -> PathBuf {
    built_once(out, |partial| {
        let status = Command::new(compiler)
            .args(flags)
            .arg("-o")
            .arg(partial)
            .args(sources.iter().map(|s| Path::new(FIXTURES).join(s)))
            .status()
            .expect("the compiler runs");
        assert!(status.success(), "building {out} failed");
    })
}

/// The `name=value` pairs of the lines a fixture printed as `truth name=value ...`: the
/// program's own account of its values, to check scry's against.
pub fn truth(scry: &mut Scry) -> HashMap<String, String> {
    scry.ok("output()")
        .lines()
        .filter_map(|l| l.strip_prefix("truth "))
        .flat_map(|l| l.split(' '))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The binary `fixtures/<out>` under the target's temporary directory, made by `build` (given
/// the path to write) the first time this test binary asks for it.
fn built_once(out: &str, build: impl FnOnce(&Path)) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(|| Mutex::new(HashMap::new()));
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = built.get(out) {
        return path.clone();
    }
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixtures");
    std::fs::create_dir_all(&out_dir).unwrap();
    let path = out_dir.join(out);
    // Other test binaries may build the same fixture at the same time while tests run it: build
    // under a private name and rename into place, so the path never names a half-written file.
    let partial = path.with_extension(format!("partial{}", std::process::id()));
    build(&partial);
    std::fs::rename(&partial, &path).unwrap();
    built.insert(out.to_string(), path.clone());
    path
}

/// The 1-based number of the first line of `source` containing `needle`.
pub fn line_of(source: &str, needle: &str) -> usize {
    source
        .lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no line with {needle:?}"))
}

/// gdb's `print` of each expression at a breakpoint on `stop` (`None` without gdb).
pub fn gdb_prints(exe: &Path, stop: &str, exprs: &[&str]) -> Option<Vec<String>> {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", &format!("break {stop}"), "-ex", "run"]);
    for e in exprs {
        cmd.args(["-ex", &format!("print {e}")]);
    }
    let out = cmd.arg(exe).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let values: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with('$'))
        .filter_map(|l| l.split_once(" = ").map(|(_, v)| v.to_string()))
        .collect();
    assert_eq!(values.len(), exprs.len(), "{text}");
    Some(values)
}

/// The default build: debug info, no optimisation.
pub fn fixture(name: &str) -> PathBuf {
    fixture_with(name, &["-g", "-O0"])
}

pub struct Response {
    pub body: String,
    pub ok: bool,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}",
            self.body,
            if self.ok { ";; ok" } else { ";; error" }
        )
    }
}

/// The lines a child writes, read on a helper thread so waits on them can time out.
pub fn line_reader(stdout: std::process::ChildStdout) -> Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// One scry process driven over stdin/stdout.
pub struct Scry {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Everything scry wrote on stderr so far (drained on a helper thread).
    stderr: std::sync::Arc<Mutex<String>>,
}

impl Scry {
    pub fn start(args: &[&str]) -> Scry {
        let mut command = Command::new(SCRY);
        command.args(args);
        Scry::start_command(command)
    }

    /// scry started by `command` (a `Command::new(SCRY)` with arguments and whatever else the
    /// test sets on it: dispositions, environment).
    pub fn start_command(mut command: Command) -> Scry {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("scry starts");
        let lines = line_reader(child.stdout.take().unwrap());
        let stdin = child.stdin.take();
        let stderr = std::sync::Arc::new(Mutex::new(String::new()));
        let (pipe, sink) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let mut text = sink.lock().unwrap_or_else(|e| e.into_inner());
                text.push_str(&line);
                text.push('\n');
            }
        });
        Scry {
            child,
            stdin,
            lines,
            stderr,
        }
    }

    /// What scry wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Waits until stderr holds `needle`; returns all of stderr.
    pub fn wait_stderr(&self, needle: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let text = self.stderr();
            if text.contains(needle) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "stderr never showed {needle:?}; it has:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// scry debugging `program` with `args`.
    pub fn spawn(program: &Path, args: &[&str]) -> Scry {
        let mut all = vec!["--", program.to_str().unwrap()];
        all.extend_from_slice(args);
        Scry::start(&all)
    }

    /// scry debugging `program` with `args`, fork children kept and held
    /// (`--follow-fork both --schedule selected`: only the selected process runs).
    pub fn spawn_holding_children(program: &Path, args: &[&str]) -> Scry {
        let mut all = vec![
            "--follow-fork",
            "both",
            "--schedule",
            "selected",
            "--",
            program.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        Scry::start(&all)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends raw text without waiting (for tests of the framing itself).
    pub fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(text.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Reads one framed response.
    pub fn read_response(&mut self) -> Response {
        let deadline = Instant::now() + RESPONSE_TIMEOUT;
        let mut body = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(status) = line.strip_prefix(";; ") {
                        return Response {
                            body,
                            ok: status == "ok",
                        };
                    }
                    body.push_str(&line);
                    body.push('\n');
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no response within {RESPONSE_TIMEOUT:?}; got so far:\n{body}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("scry closed stdout; got so far:\n{body}")
                }
            }
        }
    }

    /// Reads one line of output, whatever it is.
    pub fn read_line(&mut self) -> String {
        self.lines
            .recv_timeout(RESPONSE_TIMEOUT)
            .expect("a line of output")
    }

    pub fn eval(&mut self, code: &str) -> Response {
        self.send_raw(&format!("{code}\n;;\n"));
        self.read_response()
    }

    /// Evaluates and asserts success; returns the body without its final newline.
    pub fn ok(&mut self, code: &str) -> String {
        let r = self.eval(code);
        assert!(r.ok, "expected ok for {code:?}, got:\n{r:?}");
        r.body.trim_end_matches('\n').to_string()
    }

    /// Evaluates and asserts failure; returns the body.
    pub fn err(&mut self, code: &str) -> String {
        let r = self.eval(code);
        assert!(!r.ok, "expected an error for {code:?}, got:\n{r:?}");
        r.body.trim_end_matches('\n').to_string()
    }

    /// A numeric completion value (`print` it to get plain decimal).
    pub fn num(&mut self, code: &str) -> u64 {
        let text = self.ok(&format!("print(String({code}))"));
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{code} gave {text:?}"))
    }

    /// Closes stdin and waits for scry to exit.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "scry did not exit after end of input"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes stdin, waits for scry to exit, and returns its status with everything it wrote
    /// to stdout after the last response read.
    pub fn finish_with_output(mut self) -> (std::process::ExitStatus, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut text = String::new();
        loop {
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    text.push_str(&line);
                    text.push('\n');
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
            assert!(
                Instant::now() < deadline,
                "scry did not exit after end of input"
            );
        }
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "scry did not exit after end of input"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        (status, text)
    }

    /// The target's pid, as scry reports it.
    pub fn target_pid(&mut self) -> i32 {
        self.num("status().pid") as i32
    }
}

impl Drop for Scry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Address of `symbol` in `binary` as `nm` reports it (a file address).
pub fn nm_address(binary: &Path, symbol: &str) -> u64 {
    let out = Command::new("nm").arg(binary).output().expect("nm runs");
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.len() == 3 && parts[2] == symbol {
            return u64::from_str_radix(parts[0], 16).unwrap();
        }
    }
    panic!("nm: no {symbol} in {}", binary.display());
}

/// Parses `0x...` or decimal.
pub fn parse_num(text: &str) -> u64 {
    let t = text.trim();
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or_else(|_| panic!("not hex: {t}")),
        None => t.parse().unwrap_or_else(|_| panic!("not a number: {t}")),
    }
}

/// Waits until `path` holds text (the fixture writes its pid or values there).
pub fn wait_for_file(path: &Path, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} did not appear",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A unique temporary path for this test.
pub fn temp_path(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("scry-test-{}-{tag}-{n}", std::process::id()))
}

// ---- ground truth from the binary and from /proc, computed independently of scry ----

/// Output of a tool run on `binary`, asserting it succeeded.
fn tool_output(tool: &str, args: &[&str], binary: &Path) -> String {
    let out = Command::new(tool)
        .args(args)
        .arg(binary)
        .output()
        .unwrap_or_else(|e| panic!("{tool} runs: {e}"));
    assert!(
        out.status.success(),
        "{tool} {args:?} {} failed",
        binary.display()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lowest PT_LOAD virtual address of `binary`, rounded down to its page (`readelf -lW`).
pub fn lowest_load_vaddr(binary: &Path) -> u64 {
    tool_output("readelf", &["-lW"], binary)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("LOAD")).then(|| parse_num(words.nth(1).expect("LOAD vaddr")))
        })
        .min()
        .expect("a PT_LOAD segment")
        & !0xfff
}

/// A section's `(addr, file offset, size)` as `readelf -SW` reports it.
pub fn section(binary: &Path, name: &str) -> (u64, u64, u64) {
    for line in tool_output("readelf", &["-SW"], binary).lines() {
        let Some((_, rest)) = line.split_once(']') else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.len() >= 5 && words[0] == name {
            let hex = |w: &str| {
                u64::from_str_radix(w, 16).unwrap_or_else(|_| panic!("readelf field {w:?}"))
            };
            return (hex(words[2]), hex(words[3]), hex(words[4]));
        }
    }
    panic!("readelf: no section {name} in {}", binary.display());
}

/// The file offset of the file address `addr`, which must lie in `.text`.
pub fn text_file_offset(binary: &Path, addr: u64) -> u64 {
    let (text_addr, text_off, text_size) = section(binary, ".text");
    assert!(
        addr >= text_addr && addr < text_addr + text_size,
        "{addr:#x} is not in .text"
    );
    addr - text_addr + text_off
}

/// `len` bytes of `binary` at file offset `offset`.
pub fn file_bytes(binary: &Path, offset: u64, len: usize) -> Vec<u8> {
    let data = std::fs::read(binary).unwrap();
    data[offset as usize..offset as usize + len].to_vec()
}

/// `len` bytes of process `pid`'s memory at `addr`, read through `/proc/PID/mem`.
pub fn proc_mem(pid: i32, addr: u64, len: usize) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(format!("/proc/{pid}/mem")).expect("open /proc/PID/mem");
    file.seek(SeekFrom::Start(addr)).unwrap();
    let mut buf = vec![0u8; len];
    file.read_exact(&mut buf)
        .unwrap_or_else(|e| panic!("read {len} bytes at {addr:#x} of {pid}: {e}"));
    buf
}

/// Whether `binary`'s `.text` in process `pid` is byte for byte the file's (none of a
/// debugger's int3s or jumps left in it).
pub fn text_is_the_file_s(binary: &Path, pid: i32) -> bool {
    let (text_addr, text_off, text_size) = section(binary, ".text");
    let file = file_bytes(binary, text_off, text_size as usize);
    proc_mem(pid, text_addr + load_bias(pid, binary), text_size as usize) == file
}

/// The load bias of `binary` in process `pid`: the start of its first mapping (file offset 0)
/// in `/proc/PID/maps`, minus its lowest PT_LOAD address.
pub fn load_bias(pid: i32, binary: &Path) -> u64 {
    let exe = std::fs::canonicalize(binary).unwrap();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("read maps");
    for line in maps.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() >= 6
            && Path::new(words[5]) == exe
            && u64::from_str_radix(words[2], 16) == Ok(0)
        {
            let start = u64::from_str_radix(words[0].split('-').next().unwrap(), 16).unwrap();
            return start - lowest_load_vaddr(binary);
        }
    }
    panic!(
        "no mapping of {} in /proc/{pid}/maps:\n{maps}",
        exe.display()
    );
}

/// The instructions of `function` as `objdump -d -M intel` lists them: `(file addr, mnemonic)`.
pub fn objdump_function(binary: &Path, function: &str) -> Vec<(u64, String)> {
    let text = tool_output(
        "objdump",
        &["-d", "--no-show-raw-insn", "-M", "intel"],
        binary,
    );
    let header = format!("<{function}>:");
    let mut lines = text.lines().skip_while(|l| !l.ends_with(&header));
    assert!(
        lines.next().is_some(),
        "objdump: no {function} in {}",
        binary.display()
    );
    let mut insns = Vec::new();
    for line in lines {
        let Some((addr, insn)) = line.split_once(":\t") else {
            break;
        };
        let mnemonic = insn.split_whitespace().next().unwrap_or("").to_string();
        insns.push((u64::from_str_radix(addr.trim(), 16).unwrap(), mnemonic));
    }
    assert!(
        !insns.is_empty(),
        "objdump listed no instructions for {function}"
    );
    insns
}

/// A field of `/proc/PID/status` (`State`, `TracerPid`, ...), trimmed.
pub fn proc_status_field(pid: i32, field: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    status
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!("{field}:"))
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Whether `pid` is gone or a zombie (dead, waiting only to be reaped).
pub fn process_is_dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name, which may itself contain ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// A child process killed and reaped when dropped (so a failing test leaves nothing behind).
pub struct ChildGuard(pub Child);

impl ChildGuard {
    /// Waits for the child to exit within `timeout`; returns its status.
    pub fn wait_timeout(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "child {} did not exit within {timeout:?}",
                self.0.id()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The rows of a printed table (a header line of keys, then tab-separated rows), as key -> cell.
pub fn table(text: &str) -> Vec<HashMap<String, String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header line").split('\t').collect();
    lines
        .map(|line| {
            header
                .iter()
                .map(|k| k.to_string())
                .zip(line.split('\t').map(str::to_string))
                .collect()
        })
        .collect()
}

/// Standard base64 (with padding) to bytes.
pub fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let mut out = Vec::new();
    for quad in text.as_bytes().chunks(4) {
        let digits: Vec<u32> = quad
            .iter()
            .filter(|c| **c != b'=')
            .map(|c| value(*c))
            .collect();
        let n = digits
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | d << (18 - 6 * i));
        for i in 0..digits.len().saturating_sub(1) {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

/// The number right after `prefix` in the first line of `out` that starts with it (`forked
/// worker 0 pid 123` with prefix `forked worker 0 pid ` -> 123): what a fixture says of itself.
pub fn number_after(out: &str, prefix: &str) -> i64 {
    out.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{out}"))
        .parse()
        .unwrap_or_else(|e| panic!("not a number after {prefix:?} in:\n{out}: {e}"))
}
