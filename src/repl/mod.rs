//! The read-eval-print loop: the framed pipe protocol for harnesses, and a prompt for people.

mod cap;
mod escape;
pub(crate) mod framing;

use std::io::{BufRead, IsTerminal, Write};

use crate::script::{ChunkResult, Engine};
use framing::ChunkReader;

pub struct Repl {
    engine: Engine,
    marker: String,
    /// What `:more` shows next: the part of the last response that was cut.
    more: String,
    /// Whether any framed response so far ended in `error` (the pipe-mode exit status).
    failed: bool,
}

/// A response: its body and whether it succeeded.
struct Response {
    body: String,
    ok: bool,
    /// Where the chunk's value begins in `body` (see `ChunkResult::value_at`).
    value_at: Option<usize>,
}

const META_HELP: &str = "\
:help     this list (help() is the JavaScript API reference)
:more     the next part of a response that was cut
:status   the target at a glance (program, where it stopped, threads, modules, debug info)
:quit     end the session (a spawned target is killed, an attached one detached)";

impl Repl {
    pub fn new(engine: Engine, marker: &str) -> Self {
        Repl {
            engine,
            marker: marker.to_string(),
            more: String::new(),
            failed: false,
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Whether any framed response so far was an error.
    pub fn any_failed(&self) -> bool {
        self.failed
    }

    /// Runs a script file (`-x`): split at marker lines exactly like stdin, each chunk its own
    /// framed response (an error does not lose the chunks after it). `false` when a chunk
    /// was `:quit`.
    pub fn run_file(&mut self, path: &str, out: &mut impl Write) -> std::io::Result<bool> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                let response = Response {
                    body: format!("error: cannot read script {path}: {e}"),
                    ok: false,
                    value_at: None,
                };
                self.write_framed(response, out)?;
                return Ok(true);
            }
        };
        let mut reader = ChunkReader::new(&bytes[..], &self.marker);
        while let Some(chunk) = reader.next_chunk() {
            let Some((body, ok)) = self.respond_as(&chunk, path) else {
                return Ok(false);
            };
            self.write_status(&body, ok, out)?;
            if crate::session::termination().is_some() {
                break;
            }
        }
        Ok(true)
    }

    /// The pipe protocol: chunks in, framed responses out, until end of input or `:quit`.
    pub fn run_pipe(&mut self, input: impl BufRead, out: &mut impl Write) -> std::io::Result<()> {
        let mut reader = ChunkReader::new(input, &self.marker);
        while let Some(chunk) = reader.next_chunk() {
            if crate::session::termination().is_some() {
                break;
            }
            let Some((body, ok)) = self.respond(&chunk) else {
                break;
            };
            self.write_status(&body, ok, out)?;
            // A SIGTERM during the chunk: answer it, then end (and release the target).
            if crate::session::termination().is_some() {
                break;
            }
        }
        Ok(())
    }

    /// The interactive prompt: no markers, continuation lines while input is incomplete.
    pub fn run_tty(&mut self, input: impl BufRead, out: &mut impl Write) -> std::io::Result<()> {
        let mut lines = input.lines();
        let mut pending = String::new();
        loop {
            write!(
                out,
                "{}",
                if pending.is_empty() {
                    "scry> "
                } else {
                    "...   "
                }
            )?;
            out.flush()?;
            let Some(line) = lines.next() else { break };
            if crate::session::termination().is_some() {
                break;
            }
            let line = line?;
            pending.push_str(&line);
            pending.push('\n');
            if !pending.trim_start().starts_with(':') && self.engine.is_incomplete(&pending) {
                continue;
            }
            let chunk = std::mem::take(&mut pending);
            if chunk.trim().is_empty() {
                continue;
            }
            let Some(response) = self.handle(&chunk, "<input>") else {
                break;
            };
            // A Ctrl-C ended this command; the next one starts clean.
            crate::session::take_interrupt();
            if crate::session::termination().is_some() {
                break;
            }
            let body = escape::neutralize_controls(&self.capped(
                response.body,
                response.ok,
                response.value_at,
            ));
            if !body.is_empty() {
                writeln!(out, "{}", body.trim_end_matches('\n'))?;
            }
        }
        writeln!(out)?;
        Ok(())
    }

    /// One chunk exactly as the pipe protocol answers it: a `:command` or JavaScript, the
    /// response cap applied (the rest kept for `:more`), the body ending in a newline unless
    /// empty. Returns the body without its status line, and whether it succeeded; `None` for
    /// `:quit`. Named sessions and the MCP server answer through this, so their bytes are the
    /// pipe protocol's by construction.
    pub fn respond(&mut self, chunk: &str) -> Option<(String, bool)> {
        self.respond_as(chunk, "<input>")
    }

    /// [`respond`](Self::respond) with `file` naming the chunk in stack traces.
    fn respond_as(&mut self, chunk: &str, file: &str) -> Option<(String, bool)> {
        let response = self.handle(chunk, file)?;
        let ok = response.ok;
        Some((self.finished_body(response.body, ok, response.value_at), ok))
    }

    /// One chunk: a `:command` or JavaScript. `None` means quit.
    fn handle(&mut self, chunk: &str, file: &str) -> Option<Response> {
        let trimmed = chunk.trim();
        if trimmed.starts_with(':') && !trimmed.contains('\n') {
            return self.meta(trimmed);
        }
        Some(self.eval(chunk, file))
    }

    fn eval(&mut self, source: &str, file: &str) -> Response {
        let ChunkResult {
            mut text,
            ok,
            dropped,
            value_at,
        } = self.engine.eval(source, file);
        if dropped > 0 {
            text.push_str(&format!(
                "[scry: {dropped} further bytes of output were discarded: a response holds at most 8 MiB]\n"
            ));
        }
        Response {
            body: text,
            ok,
            value_at,
        }
    }

    fn meta(&mut self, command: &str) -> Option<Response> {
        let ok = |body: String| {
            Some(Response {
                body,
                ok: true,
                value_at: None,
            })
        };
        match command.split_whitespace().next().unwrap_or("") {
            ":quit" | ":q" | ":exit" => None,
            ":help" | ":h" => ok(format!("{META_HELP}\n")),
            ":more" => {
                if self.more.is_empty() {
                    ok("[scry: nothing more: the last response was complete]\n".into())
                } else {
                    ok(std::mem::take(&mut self.more))
                }
            }
            ":status" => ok(format!("{}\n", self.engine.orientation(None))),
            other => Some(Response {
                body: format!(
                    "error: unknown command '{other}'; commands: :help :more :status :quit\n"
                ),
                ok: false,
                value_at: None,
            }),
        }
    }

    /// Applies the response cap, keeping the rest for `:more`. The whole answer, the note
    /// saying it was cut included, stays within the limit; the error that ended a failed
    /// chunk is never the part cut away.
    fn capped(&mut self, body: String, ok: bool, value_at: Option<usize>) -> String {
        let limit = self.engine.with_session(|s| s.config.output_limit);
        if body.len() <= limit {
            return body;
        }
        let (main, tail) = if ok {
            // The chunk's value (the stop line that says how a `cont()` ended) after the
            // note, like a failed chunk's error: what it printed before is what is cut.
            cap::value_tail(&body, value_at, limit / 2)
        } else {
            cap::error_tail(&body, limit / 2)
        };
        // The note's numbers are at most the body's length: its room is known before the cut.
        let note_room = cap::cut_note(body.len(), body.len(), &self.marker).len() + 2;
        let budget = limit.saturating_sub(note_room + tail.len() + 1).max(1);
        let (shown, rest) = cap::split(main, budget);
        let mut text = shown.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&cap::cut_note(shown.len(), rest.len(), &self.marker));
        text.push('\n');
        text.push_str(tail);
        self.more = rest.to_string();
        text
    }

    /// A response body as it is sent: capped (the rest kept for `:more`, which is sent
    /// through here again), no line that passes for a status line, and ending in a newline
    /// unless empty.
    fn finished_body(&mut self, body: String, ok: bool, value_at: Option<usize>) -> String {
        let body = self.capped(body, ok, value_at);
        let mut body = escape::guard_status_lines(&body, &self.marker);
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        body
    }

    fn write_framed(&mut self, response: Response, out: &mut impl Write) -> std::io::Result<()> {
        let body = self.finished_body(response.body, response.ok, response.value_at);
        self.write_status(&body, response.ok, out)
    }

    fn write_status(&mut self, body: &str, ok: bool, out: &mut impl Write) -> std::io::Result<()> {
        self.failed |= !ok;
        let status = if ok { "ok" } else { "error" };
        writeln!(out, "{body}{} {status}", self.marker)?;
        out.flush()
    }

    /// Lets go of the target the way its origin asks.
    pub fn finish(&mut self) {
        self.engine.with_session(|s| s.release());
    }

    /// `finish` for a process that exits right after: the symbol tables are not freed.
    pub fn finish_for_exit(&mut self) {
        self.engine.with_session(|s| {
            s.release();
            s.abandon_symbols_at_exit();
        });
    }
}

/// Text from the target made safe to show on a terminal (see `escape`).
pub fn for_terminal(text: &str) -> String {
    escape::neutralize_controls(text)
}

/// scry's stdin, readable past signals (see `os::stdin`).
pub use crate::os::stdin::Stdin;

pub fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}
