//! `scry mcp`: the Model Context Protocol over stdio.
//!
//! Messages are JSON-RPC 2.0, one per line, in both directions. The JSON-RPC is written here
//! rather than with the official SDK: the SDK is async (tokio) and moves handlers across
//! threads, while scry's engine is not `Send` and every ptrace call must come from the one
//! thread that attached. Here the main thread owns every session's engine and answers one
//! message at a time; a reader thread only forwards stdin lines over a channel.

mod tools;

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use clap::{CommandFactory, Parser};
use serde_json::{json, Map, Value};

use crate::launch::TargetOptions;
use crate::repl::Repl;
use crate::session::Config;

/// Protocol revisions this server speaks, newest first. Their differences do not touch the
/// tools this server offers (`tools/list`, `tools/call` with text content and `isError`).
pub(crate) const PROTOCOL_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// How often the idle main thread looks for a termination signal.
const POLL: Duration = Duration::from_millis(200);

// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error: code and message.
pub(crate) type RpcError = (i64, String);

/// `scry mcp [OPTIONS]`: a Model Context Protocol server on stdin/stdout.
#[derive(Parser, Debug)]
#[command(name = "scry mcp")]
struct McpCli {
    #[command(flatten)]
    options: TargetOptions,
}

/// `scry mcp ARGS...` (`args` are the words after `mcp`).
pub fn main(args: &[String]) -> ExitCode {
    let cli = match McpCli::try_parse_from(
        std::iter::once("scry mcp".to_string()).chain(args.iter().cloned()),
    ) {
        Ok(cli) => cli,
        Err(e) => {
            let (text, code) = crate::cli::parse_failure(&McpCli::command(), &e);
            if code == 0 {
                print!("{text}");
            } else {
                eprint!("{text}");
            }
            return ExitCode::from(code);
        }
    };
    let config = match cli.options.config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("scry: {e}");
            return ExitCode::from(2);
        }
    };
    crate::session::install_signal_handling(false);
    let (lines, inbox) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        crate::os::timer::block_signals_in_helper_thread();
        let mut stdin = std::io::stdin().lock();
        let mut raw = Vec::new();
        loop {
            raw.clear();
            match stdin.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if lines
                        .send(String::from_utf8_lossy(&raw).into_owned())
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    });
    let mut server = Server::new(config);
    server.view = cli.options.view.clone();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    loop {
        if crate::session::termination().is_some() {
            break;
        }
        match inbox.recv_timeout(POLL) {
            Ok(line) => {
                if let Some(reply) = server.handle_line(&line) {
                    if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
                        break; // the client went away
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    server.release_all();
    match crate::session::termination() {
        Some(sig) => ExitCode::from(128 + sig as u8),
        None => ExitCode::SUCCESS,
    }
}

/// The protocol state: every named session, each a REPL owned by this (the ptrace) thread.
pub(crate) struct Server {
    config: Config,
    /// `--view`: the live view every started session gets unless `scry_start` says otherwise.
    pub view: Option<String>,
    sessions: BTreeMap<String, Repl>,
}

impl Server {
    pub(crate) fn new(config: Config) -> Self {
        Server {
            config,
            view: None,
            sessions: BTreeMap::new(),
        }
    }

    /// Answers one line of input: the serialized response, or `None` (a notification, a
    /// blank line, a response from the client).
    pub(crate) fn handle_line(&mut self, line: &str) -> Option<String> {
        if line.trim().is_empty() {
            return None;
        }
        let reply = match serde_json::from_str::<Value>(line) {
            Err(e) => Some(error_reply(
                Value::Null,
                (PARSE_ERROR, format!("parse error: {e}")),
            )),
            Ok(Value::Array(batch)) if batch.is_empty() => Some(error_reply(
                Value::Null,
                (INVALID_REQUEST, "empty batch".into()),
            )),
            Ok(Value::Array(batch)) => {
                let replies: Vec<Value> = batch
                    .into_iter()
                    .filter_map(|m| self.handle_message(m))
                    .collect();
                (!replies.is_empty()).then_some(Value::Array(replies))
            }
            Ok(message) => self.handle_message(message),
        };
        reply.map(|r| r.to_string())
    }

    fn handle_message(&mut self, message: Value) -> Option<Value> {
        let Value::Object(message) = message else {
            return Some(error_reply(
                Value::Null,
                (INVALID_REQUEST, "a message must be a JSON object".into()),
            ));
        };
        let id = message.get("id").cloned();
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            // A response to a request of ours (there are none), or garbage without an id.
            return id
                .filter(|_| !message.contains_key("result") && !message.contains_key("error"))
                .map(|id| error_reply(id, (INVALID_REQUEST, "no method".into())));
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let outcome = self.dispatch(method, &params);
        // Notifications get no answer, not even an error.
        let id = id?;
        Some(match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => error_reply(id, e),
        })
    }

    fn dispatch(&mut self, method: &str, params: &Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => Ok(initialize(params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": tools::definitions() })),
            "tools/call" => {
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or((INVALID_PARAMS, "tools/call needs a tool name".to_string()))?;
                let empty = Map::new();
                let arguments = match params.get("arguments") {
                    None | Some(Value::Null) => &empty,
                    Some(Value::Object(args)) => args,
                    Some(_) => return Err((INVALID_PARAMS, "arguments must be an object".into())),
                };
                tools::call(self, name, arguments)
            }
            m if m.starts_with("notifications/") => Ok(Value::Null),
            other => Err((METHOD_NOT_FOUND, format!("method not found: {other}"))),
        }
    }

    /// Ends every session (spawned targets killed, attached ones detached).
    pub(crate) fn release_all(&mut self) {
        for (_, mut repl) in std::mem::take(&mut self.sessions) {
            crate::launch::release(&mut repl);
        }
    }
}

fn error_reply(id: Value, (code, message): RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

const INSTRUCTIONS: &str = "\
scry debugs native Linux x86-64 programs. scry_start spawns a program (stopped at its entry \
point, before any of its code ran) or attaches to a pid; scry_eval runs JavaScript against the \
stopped target and returns what it printed plus its last value; scry_stop ends the session. \
Breakpoints, listeners and `ctx` persist between scry_eval calls. Call help() inside for the \
reference.";

fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "scry", "version": env!("CARGO_PKG_VERSION")},
        "instructions": INSTRUCTIONS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> Server {
        Server::new(Config::default())
    }

    fn ask(server: &mut Server, line: &str) -> Value {
        serde_json::from_str(&server.handle_line(line).expect("a reply")).unwrap()
    }

    #[test]
    fn initialize_negotiates_the_version() {
        let mut s = server();
        let r = ask(
            &mut s,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        );
        assert_eq!(r["result"]["protocolVersion"], "2024-11-05");
        assert_eq!(r["result"]["serverInfo"]["name"], "scry");
        let r = ask(
            &mut s,
            r#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"1999-01-01"}}"#,
        );
        assert_eq!(r["id"], "x");
        assert_eq!(r["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
    }

    #[test]
    fn errors_and_notifications() {
        let mut s = server();
        assert_eq!(ask(&mut s, "{nope")["error"]["code"], PARSE_ERROR);
        assert_eq!(
            ask(&mut s, r#"{"jsonrpc":"2.0","id":2,"method":"bogus"}"#)["error"]["code"],
            METHOD_NOT_FOUND
        );
        assert_eq!(
            s.handle_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
        assert_eq!(s.handle_line(r#"{"jsonrpc":"2.0","method":"bogus"}"#), None);
        assert_eq!(s.handle_line("   "), None);
        let r = ask(&mut s, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
        assert_eq!(r["result"], json!({}));
        let r = ask(
            &mut s,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
        );
        assert_eq!(r["error"]["code"], INVALID_PARAMS);
        let batch = ask(
            &mut s,
            r#"[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]"#,
        );
        assert_eq!(batch.as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn tool_errors_are_results() {
        let mut s = server();
        let r = ask(
            &mut s,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"scry_eval","arguments":{"code":"1"}}}"#,
        );
        assert_eq!(r["result"]["isError"], true);
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("no session 'default'"), "{text}");
        let r = ask(
            &mut s,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"scry_start","arguments":{}}}"#,
        );
        assert_eq!(r["result"]["isError"], true);
    }
}
