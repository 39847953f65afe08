//! `scry mcp`: a real Model Context Protocol exchange over stdio, as a client does it.

mod common;

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use common::{fixture, process_is_dead, ChildGuard, RESPONSE_TIMEOUT, SCRY};
use serde_json::{json, Value};

/// An MCP client on the server's stdin and stdout.
struct Client {
    server: ChildGuard,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    fn start() -> Client {
        let mut child: Child = Command::new(SCRY)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("scry mcp starts");
        let lines = common::line_reader(child.stdout.take().unwrap());
        Client {
            stdin: child.stdin.take(),
            server: ChildGuard(child),
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its response (every line on stdout must be JSON).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self
            .lines
            .recv_timeout(RESPONSE_TIMEOUT)
            .unwrap_or_else(|e| panic!("no response to {method}: {e}"));
        let response: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
        assert_eq!(response["jsonrpc"], "2.0", "{response}");
        assert_eq!(response["id"], id, "{response}");
        response
    }

    /// Calls a tool; returns its text and isError.
    fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &response["result"];
        assert!(result.is_object(), "{response}");
        assert_eq!(result["content"][0]["type"], "text", "{response}");
        (
            result["content"][0]["text"].as_str().unwrap().to_string(),
            result["isError"].as_bool().unwrap_or(false),
        )
    }
}

#[test]
fn a_client_starts_evaluates_and_stops_a_session() {
    let program = fixture("loop");
    let mut client = Client::start();

    let init = client.request(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "scry-test", "version": "1.0"},
        }),
    );
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "scry");
    assert!(result["capabilities"]["tools"].is_object(), "{init}");
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(client.request("ping", json!({}))["result"], json!({}));

    let listed = client.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("a tool list");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["scry_start", "scry_eval", "scry_stop"]);
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    let eval_about = tools[1]["description"].as_str().unwrap();
    assert!(eval_about.contains("breakpoint.set"), "{eval_about}");
    assert!(eval_about.contains("'continue'"), "{eval_about}");

    let (text, is_error) = client.call(
        "scry_start",
        json!({"program": program.to_str().unwrap(), "args": ["3"]}),
    );
    assert!(!is_error, "{text}");
    assert!(text.starts_with("entry at 0x"), "{text}");
    assert!(text.contains("default"), "{text}");

    let (text, is_error) = client.call(
        "scry_eval",
        json!({"code": "breakpoint.set('add'); cont()"}),
    );
    assert!(!is_error, "{text}");
    assert!(text.starts_with("breakpoint 1 at"), "{text}");
    let (text, _) = client.call(
        "scry_eval",
        json!({"code": "ctx.seen = state.registers.rdi; ctx.seen"}),
    );
    assert_eq!(text, "0\n");
    let (pid, _) = client.call("scry_eval", json!({"code": "String(status().pid)"}));
    let pid: i32 = pid.trim().parse().unwrap();

    let (text, is_error) = client.call("scry_eval", json!({"code": "throw new Error('boom')"}));
    assert!(is_error, "{text}");
    assert!(text.starts_with("error: Error: boom"), "{text}");

    // A second session by name, beside the first; a live name cannot be started twice.
    let (text, is_error) = client.call(
        "scry_start",
        json!({"program": program.to_str().unwrap(), "name": "two"}),
    );
    assert!(!is_error && text.contains("two"), "{text}");
    let (text, is_error) = client.call("scry_start", json!({"program": program.to_str().unwrap()}));
    assert!(is_error, "{text}");
    let (text, _) = client.call("scry_eval", json!({"code": "ctx.seen", "name": "two"}));
    assert_eq!(text, "", "ctx is per session");
    let (text, is_error) = client.call("scry_eval", json!({"code": "ctx.seen"}));
    assert_eq!((text.as_str(), is_error), ("0\n", false));

    let (text, is_error) = client.call("scry_stop", json!({}));
    assert!(!is_error && text.starts_with("killed by SIGKILL"), "{text}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !process_is_dead(pid) {
        assert!(Instant::now() < deadline, "the target outlived scry_stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (text, is_error) = client.call("scry_eval", json!({"code": "1"}));
    assert!(is_error && text.contains("no session 'default'"), "{text}");

    // An unknown tool is a protocol error, not a tool result.
    let unknown = client.request("tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    // End of input ends the server (and the session still open in it).
    drop(client.stdin.take());
    let status = client.server.wait_timeout(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0));
}

/// A script's setters on Object.prototype once took the whole server down (a RefCell panic)
/// with every session in it. Now they run nowhere inside scry, and the other session lives.
#[test]
fn hostile_setters_take_down_no_session() {
    let program = fixture("loop");
    let mut client = Client::start();
    client.request("initialize", json!({"protocolVersion": "2025-06-18"}));
    for name in ["victim", "bystander"] {
        let (text, is_error) = client.call(
            "scry_start",
            json!({"program": program.to_str().unwrap(), "name": name}),
        );
        assert!(!is_error, "{text}");
    }
    let (text, is_error) = client.call(
        "scry_eval",
        json!({"name": "victim", "code": "for (const k of ['pid', 'live', 'program', 'hits', 'id', 'addr', 'module', 'insn', 'insn_addr', 'reason', 'line']) Object.defineProperty(Object.prototype, k, {set(v) { state.pc; breakpoint.list() }, get() { return state.pc }, configurable: true}); breakpoint.set('add'); [status().live, breakpoint.list().length, symbols('add', 1).length].join(' ')"}),
    );
    assert_eq!((text.as_str(), is_error), ("true 1 1\n", false));
    let (text, is_error) = client.call("scry_eval", json!({"name": "bystander", "code": "1 + 1"}));
    assert_eq!((text.as_str(), is_error), ("2\n", false));
    let (text, is_error) = client.call("scry_eval", json!({"name": "victim", "code": "cont()"}));
    assert!(!is_error && text.starts_with("breakpoint 1 at "), "{text}");
}

/// `scry_start {remote}` connects to a GDB-remote stub (tests/remote.rs drives real ones);
/// a stub nobody runs and a remote with a pid are one-line errors.
#[test]
fn scry_start_takes_a_remote_stub() {
    let mut client = Client::start();
    let (text, is_error) = client.call("scry_start", json!({"remote": "127.0.0.1:1"}));
    assert!(
        is_error && text.contains("cannot connect to 127.0.0.1:1"),
        "{text}"
    );
    let (text, is_error) = client.call("scry_start", json!({"remote": "127.0.0.1:1", "pid": 5}));
    assert!(
        is_error && text.contains("remote takes only program"),
        "{text}"
    );
    drop(client.stdin.take());
    client.server.wait_timeout(Duration::from_secs(20));
}
