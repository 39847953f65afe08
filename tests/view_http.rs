//! The live view over HTTP: the token, the loopback binding, the event stream a page reads,
//! and pages that disconnect or stop reading. Real sockets against the real binary.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fixture, load_bias, nm_address, proc_mem, process_is_dead, Scry, SCRY};
use serde_json::Value;

/// What a GET (or another method) got back.
#[derive(Debug)]
struct Http {
    status: u16,
    head: String,
    body: String,
}

impl Http {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

fn request(port: u16, method: &str, path: &str) -> Http {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the view");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("a whole response");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    Http {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

fn get(port: u16, path: &str) -> Http {
    request(port, "GET", path)
}

/// `http://127.0.0.1:PORT/TOKEN/` split into its parts.
struct Url {
    host: String,
    port: u16,
    token: String,
    text: String,
}

fn parse_url(url: &str) -> Url {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_once('/').expect("a path");
    let (host, port) = authority.rsplit_once(':').expect("a port");
    let token = path.trim_end_matches('/').to_string();
    assert!(
        token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "token of 128 random bits in hex: {url}"
    );
    assert!(path.ends_with('/'));
    Url {
        host: host.to_string(),
        port: port.parse().unwrap(),
        token,
        text: url.to_string(),
    }
}

fn view_url(scry: &mut Scry) -> Url {
    parse_url(&scry.ok("view()"))
}

/// An open event stream, read event by event.
struct Events {
    reader: BufReader<TcpStream>,
}

impl Events {
    fn open(port: u16, token: &str) -> Events {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "GET /{token}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        )
        .unwrap();
        let mut reader = BufReader::new(s);
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if line.to_ascii_lowercase().starts_with("content-type:") {
                assert!(line.contains("text/event-stream"), "{line}");
            }
        }
        Events { reader }
    }

    /// The next event: its name and JSON data (`None` when the stream ends or nothing but
    /// keep-alive comments came for 20 s).
    fn next(&mut self) -> Option<(String, Value)> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let (mut name, mut data) = (String::new(), String::new());
        loop {
            if Instant::now() > deadline {
                return None;
            }
            let mut line = String::new();
            match self.reader.read_line(&mut line) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => {
                    eprintln!("event stream: {e}");
                    return None;
                }
            }
            let line = line.trim_end_matches('\n');
            if line.is_empty() {
                if !name.is_empty() {
                    let v = serde_json::from_str(&data).expect("event data is JSON");
                    return Some((name, v));
                }
                continue;
            }
            if let Some(n) = line.strip_prefix("event: ") {
                name = n.to_string();
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            }
        }
    }

    /// Reads events until `want` returns something, within `timeout`.
    #[track_caller]
    fn until<T>(
        &mut self,
        timeout: Duration,
        mut want: impl FnMut(&str, &Value) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            let Some((name, data)) = self.next() else {
                break;
            };
            if let Some(found) = want(&name, &data) {
                return found;
            }
            seen.push(name);
        }
        panic!("the stream never had what was wanted; events seen: {seen:?}");
    }
}

/// The element of a `dom` event with this id.
fn element<'a>(data: &'a Value, id: &str) -> Option<&'a Value> {
    data["set"].as_array()?.iter().find(|e| e["id"] == id)
}

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

#[test]
fn the_page_needs_its_token_and_listens_on_loopback_only() {
    let mut scry = Scry::start(&["--view", "0", "--", fixture("loop").to_str().unwrap()]);
    let url = view_url(&mut scry);
    assert_eq!(url.host, "127.0.0.1");
    let stderr = scry.wait_stderr("view at", Duration::from_secs(10));
    assert_eq!(
        stderr
            .matches(&format!("scry: view at {}\n", url.text))
            .count(),
        1,
        "the URL is printed once: {stderr}"
    );
    let port = url.port;
    assert_eq!(get(port, "/").status, 403);
    assert_eq!(get(port, "/events").status, 403);
    let mut wrong = url.token.clone();
    wrong.replace_range(31.., if wrong.ends_with('0') { "1" } else { "0" });
    assert_eq!(get(port, &format!("/{wrong}/")).status, 403);
    assert_eq!(get(port, &format!("/{wrong}/events")).status, 403);
    assert_eq!(get(port, &format!("/{}/", &url.token[..31])).status, 403);

    let redirect = get(port, &format!("/{}", url.token));
    assert_eq!(redirect.status, 302);
    assert_eq!(
        redirect.header("location").as_deref(),
        Some(format!("/{}/", url.token).as_str())
    );
    let page = get(port, &format!("/{}/", url.token));
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert_eq!(page.header("cache-control").as_deref(), Some("no-store"));
    assert!(page.body.contains("<script src=\"view.js\"></script>"));
    let js = get(port, &format!("/{}/view.js", url.token));
    assert_eq!(js.status, 200);
    assert!(js.body.contains("new EventSource('events')"));
    assert_eq!(get(port, &format!("/{}/view.css", url.token)).status, 200);

    // View-only: no other method, no endpoint that would run code or touch the target.
    let pid = scry.target_pid();
    assert_eq!(
        request(port, "POST", &format!("/{}/", url.token)).status,
        405
    );
    assert_eq!(
        request(port, "PUT", &format!("/{}/events", url.token)).status,
        405
    );
    for path in ["eval?code=kill()", "kill", "step", "api"] {
        assert_eq!(
            get(port, &format!("/{}/{path}", url.token)).status,
            404,
            "{path}"
        );
    }
    assert!(!process_is_dead(pid));
    assert_eq!(scry.ok("status().live"), "true");

    // Garbage and oversized heads are refused; the server goes on.
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"\x16\x03\x01 not http\r\n\r\n").unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = s.write_all(format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(20_000)).as_bytes());
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert_eq!(get(port, &format!("/{}/", url.token)).status, 200);

    // The kernel's table of listening TCP sockets: this port is bound to 127.0.0.1 only.
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let listening: Vec<&str> = tcp
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 3 && f[3] == "0A" && f[1].ends_with(&format!(":{port:04X}"))).then_some(f[1])
        })
        .collect();
    assert_eq!(listening, vec![format!("0100007F:{port:04X}")]);
}

#[test]
fn the_stream_shows_stops_chunks_output_and_dom_and_a_late_page_catches_up() {
    let bin = fixture("loop");
    let mut scry = Scry::start(&["--view", "0", "--", bin.to_str().unwrap(), "5"]);
    let url = view_url(&mut scry);
    // At add's first byte (nm's address): a name would put it after the prologue.
    let pid = scry.target_pid();
    let pc = load_bias(pid, &bin) + nm_address(&bin, "add");
    scry.ok(&format!("breakpoint.set({pc:#x}, 'adder')"));
    let stop = scry.ok("cont()");
    assert!(stop.contains(&hex(pc)), "{stop}");

    // A page opened now gets the current state at once.
    let mut events = Events::open(url.port, &url.token);
    let (first, _) = events.next().unwrap();
    assert_eq!(first, "reset");
    let panels = events.until(Duration::from_secs(10), |name, data| {
        (name == "panels").then(|| data.clone())
    });
    assert_eq!(panels["stop"], stop.as_str());
    assert_eq!(panels["pid"], pid);
    let rip = panels["registers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[0] == "rip")
        .unwrap();
    assert_eq!(rip[1], hex(pc));
    let current: Vec<&Value> = panels["disasm"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["current"] == true)
        .collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0]["addr"], hex(pc));
    assert_eq!(current[0]["breakpoint"], true);
    assert_eq!(panels["source"]["line"], 7, "add's opening line in loop.c");
    assert_eq!(
        panels["frames"][1]["symbol"]
            .as_str()
            .unwrap()
            .split('+')
            .next(),
        Some("main")
    );
    assert_eq!(panels["points"][0]["name"], "adder");
    assert_eq!(panels["points"][0]["hits"], 1);
    let stack = &panels["stack"];
    let sp =
        u64::from_str_radix(stack["sp"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    let top =
        u64::from_str_radix(stack["top"].as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    assert_eq!(stack["used"], top - sp);
    let chunks = events.until(Duration::from_secs(10), |name, data| {
        (name == "chunks").then(|| data.clone())
    });
    let cont = chunks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "cont()\n")
        .expect("the cont() chunk");
    assert_eq!(cont["answer"], format!("{stop}\n"));
    assert_eq!(cont["ok"], true);

    // What a script writes with dom arrives, and an error answer is shown as one.
    scry.ok("dom.id('msg').textContent = 'at ' + hex(state.pc)");
    let msg = events.until(Duration::from_secs(10), |name, data| {
        (name == "dom")
            .then(|| element(data, "msg").cloned())
            .flatten()
    });
    assert_eq!(msg["text"], format!("at {}", hex(pc)));
    scry.err("throw new Error('nope')");
    let failed = events.until(Duration::from_secs(10), |name, data| {
        (name == "chunks").then(|| data[0].clone())
    });
    assert_eq!(failed["ok"], false);
    assert!(failed["answer"]
        .as_str()
        .unwrap()
        .starts_with("error: Error: nope"));

    // Registers a step changed are marked; rip always changes.
    scry.ok("step()");
    let panels = events.until(Duration::from_secs(10), |name, data| {
        (name == "panels").then(|| data.clone())
    });
    let changed: Vec<&str> = panels["registers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r[2] == true)
        .map(|r| r[0].as_str().unwrap())
        .collect();
    assert!(
        changed.contains(&"rip") && changed.contains(&"rsp"),
        "{changed:?}"
    );
    assert!(!changed.contains(&"cs"));

    // The program's output, as it prints it (5 calls, total 0+1+2+3+4).
    scry.ok("breakpoint.remove('adder')");
    let end = scry.ok("cont()");
    assert!(end.starts_with("exited with code 3"), "{end}");
    // Both arrive, in whichever update the page is sent them.
    let (mut output, mut status) = (None, None);
    events.until(Duration::from_secs(10), |name, data| {
        match name {
            "output" => output = Some(data["text"].as_str().unwrap().to_string()),
            "status" if data["running"] == false => status = Some(data.clone()),
            _ => {}
        }
        (output.is_some() && status.is_some()).then_some(())
    });
    let (output, status) = (output.unwrap(), status.unwrap());
    assert_eq!(output, "total=10 calls=5\n");
    assert_eq!(status["label"], "exited with code 3");
}

#[test]
fn a_page_that_disconnects_or_stops_reading_never_stalls_scry() {
    let mut scry = Scry::start(&[
        "--view",
        "0",
        "--",
        fixture("loop").to_str().unwrap(),
        "100000",
    ]);
    let url = view_url(&mut scry);
    // One page goes away in the middle of its stream, another never reads a byte.
    let mut gone = Events::open(url.port, &url.token);
    assert_eq!(gone.next().unwrap().0, "reset");
    gone.reader.get_ref().shutdown(Shutdown::Both).unwrap();
    drop(gone);
    let stalled = Events::open(url.port, &url.token);

    // 100 KiB of text at every one of 3000 steps: far more than the stalled socket's
    // buffers hold, coalesced into the latest state for the pages.
    scry.ok("const id = breakpoint.set('add'); cont(); breakpoint.remove(id)");
    scry.ok("config.script_timeout = 120; const pad = 'x'.repeat(100000)");
    scry.ok("addEventListener('step', e => { dom.id('big').textContent = hex(e.state.pc) + ' ' + pad })");
    let started = Instant::now();
    let stop = scry.ok("step(3000)");
    assert!(stop.contains("[3000 of 3000 steps]"), "{stop}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "3000 steps took {:?}",
        started.elapsed()
    );
    let pc = scry.num("state.pc");

    // scry goes on answering, and a new page sees the state after the last step.
    assert_eq!(scry.ok("1 + 1"), "2");
    let mut fresh = Events::open(url.port, &url.token);
    let big = fresh.until(Duration::from_secs(10), |name, data| {
        (name == "dom")
            .then(|| element(data, "big").cloned())
            .flatten()
    });
    let text = big["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("{} x", hex(pc))),
        "{}",
        &text[..40]
    );
    assert_eq!(text.len(), hex(pc).len() + 1 + 100_000);
    drop(stalled);
}

#[test]
fn leaving_loopback_takes_an_explicit_address_and_a_warning() {
    let mut scry = Scry::start(&[
        "--view",
        "0.0.0.0:0",
        "--",
        fixture("loop").to_str().unwrap(),
    ]);
    let url = view_url(&mut scry);
    assert_eq!(url.host, "0.0.0.0");
    let stderr = scry.wait_stderr("view at", Duration::from_secs(10));
    assert!(
        stderr.contains(&format!(
            "scry: warning: the view listens on 0.0.0.0:{}",
            url.port
        )),
        "{stderr}"
    );
    // Reached here over loopback only.
    assert_eq!(get(url.port, &format!("/{}/", url.token)).status, 200);

    let quiet = Scry::start(&["--view", "0", "--", fixture("loop").to_str().unwrap()]);
    let text = quiet.wait_stderr("view at", Duration::from_secs(10));
    assert!(!text.contains("warning"), "{text}");
}

#[test]
fn a_bad_or_taken_address_is_a_start_up_error() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let program = fixture("loop");
    for (spec, message) in [
        (port.as_str(), format!("cannot listen on 127.0.0.1:{port}")),
        ("nonsense", "expected PORT or ADDR:PORT".to_string()),
        ("70000", "expected PORT or ADDR:PORT".to_string()),
    ] {
        let out = Command::new(SCRY)
            .args(["--view", spec, "--", program.to_str().unwrap()])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--view {spec}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("scry: ") && err.contains(&message), "{err}");
    }
}

/// A 16x8 framebuffer of BGRX words in target memory, as the page gets it (RGBA).
#[test]
fn canvas_pixels_come_from_target_memory() {
    let bin = fixture("pixels");
    let mut scry = Scry::start(&["--view", "0", "--", bin.to_str().unwrap()]);
    let url = view_url(&mut scry);
    scry.ok("breakpoint.set('frame_done'); cont()");
    let pid = scry.target_pid();
    let fb = load_bias(pid, &bin) + nm_address(&bin, "fb");
    let expect = |pid| -> Vec<u8> {
        proc_mem(pid, fb, 16 * 8 * 4)
            .chunks(4)
            .flat_map(|p| [p[2], p[1], p[0], 255])
            .collect()
    };
    let draw = "dom.canvas('fb', 16, 8).putImageData(state.memory('fb'), 0, 0, {format: 'bgrx'})";
    scry.ok(draw);
    let mut events = Events::open(url.port, &url.token);
    let canvas = |name: &str, data: &Value| -> Option<(Vec<u8>, Value)> {
        let c = (name == "dom").then(|| element(data, "fb"))??;
        let px = &c["canvas"]["px"];
        px.is_object().then(|| {
            (
                common::decode_base64(px["data"].as_str().unwrap()),
                px.clone(),
            )
        })
    };
    let (first, px) = events.until(Duration::from_secs(10), canvas);
    assert_eq!((px["w"].clone(), px["h"].clone()), (16.into(), 8.into()));
    assert_eq!(first, expect(pid), "frame 0");
    // The next frame: the same canvas, new pixels.
    scry.ok("cont()");
    scry.ok(draw);
    let (second, _) = events.until(Duration::from_secs(10), canvas);
    assert_eq!(second, expect(pid), "frame 1");
    assert_ne!(first, second);
    // A region, from bytes a script made: 2x1 RGB at (3, 4).
    scry.ok("dom.canvas('fb', 16, 8).putImageData([1, 2, 3, 4, 5, 6], 3, 4, {w: 2, h: 1, format: 'rgb'})");
    let (region, px) = events.until(Duration::from_secs(10), canvas);
    assert_eq!(
        (px["x"].clone(), px["y"].clone(), px["w"].clone()),
        (3.into(), 4.into(), 2.into())
    );
    assert_eq!(region, vec![1, 2, 3, 255, 4, 5, 6, 255]);
}

#[test]
fn dom_refuses_what_could_act_and_works_without_a_view() {
    let mut scry = Scry::spawn(&fixture("loop"), &[]);
    assert_eq!(scry.ok("String(view())"), "null");
    assert_eq!(
        scry.ok("dom.id('pc').textContent = hex(state.pc); dom.id('pc').textContent"),
        scry.ok("hex(state.pc)")
    );
    assert_eq!(
        scry.ok("dom.id('pc')"),
        format!("<div id=\"pc\">{}</div>", scry.ok("hex(state.pc)"))
    );
    assert_eq!(
        scry.ok("dom.id('x').innerHTML = '<b onclick=\"k()\">b</b><script>kill()</script><a href=\"javascript:kill()\">a</a><i style=\"color: red; background: url(http://x/)\">i</i>'; dom.id('x').innerHTML"),
        "<b>b</b><a>a</a><i style=\"color: red\">i</i>"
    );
    assert_eq!(scry.ok("dom.id('x').textContent"), "bai");
    for (code, message) in [
        (
            "dom.id('x').setAttribute('onclick', 'kill()')",
            "event handler attributes ('onclick') are not allowed",
        ),
        (
            "dom.id('x').setAttribute('OnMouseOver', 'kill()')",
            "event handler attributes",
        ),
        (
            "const a = dom.create('a'); a.setAttribute('href', ' javascript:kill()')",
            "only http:, https: and #anchor links",
        ),
        (
            "dom.id('x').style.background = 'url(http://example.com/)'",
            "url() other than url(#id)",
        ),
        ("dom.create('script')", "no element 'script'"),
        ("dom.create('iframe')", "no element 'iframe'"),
        ("dom.id('x').textcontent = 1", "did you mean textContent?"),
        ("dom.idd('x')", "did you mean dom.id?"),
        ("dom.id('x').colour = 1", "element has no property 'colour'"),
        ("dom.id('x').innerHtml", "did you mean innerHTML?"),
        (
            "dom.id('has space')",
            "an id is 1 to 256 characters without spaces",
        ),
        (
            "dom.id('x').textContent = 'y'.repeat(300000)",
            "at most 262144 bytes",
        ),
        ("dom.canvas('c', 5000, 10)", "1 to 4096 pixels on a side"),
        ("dom.canvas('x', 4, 4)", "'x' is a div, not a canvas"),
        (
            "dom.canvas('c', 4, 4).putImageData([1, 2, 3], 0, 0, {w: 2, h: 2})",
            "need 16 bytes, got 3",
        ),
        (
            "dom.canvas('c', 4, 4).putImageData([], 9, 0)",
            "outside the 4x4 canvas",
        ),
        (
            "dom.canvas('c', 4, 4).putImageData([0, 0, 0, 0], 0, 0, {format: 'yuv'})",
            "not one of rgba rgbx bgra bgrx rgb gray",
        ),
        (
            "dom.canvas('c', 4, 4).putImageData(state.memory(0), 0, 0)",
            "address not mapped",
        ),
        (
            "dom.id('x').appendChild(dom.id('x'))",
            "cannot go inside itself",
        ),
    ] {
        let err = scry.err(code);
        assert!(
            err.starts_with("error: ") && err.contains(message),
            "{code}: {err}"
        );
    }
    // Removal frees ids and kills handles; many elements hit a clear limit.
    assert_eq!(
        scry.ok("const gone = dom.id('gone'); gone.remove(); String(dom.id('gone') !== undefined)"),
        "true"
    );
    assert!(scry
        .err("gone.textContent = 1")
        .contains("dom: this element was removed"));
    let err = scry.err("for (let i = 0; i < 20000; i++) dom.create('span')");
    assert!(err.contains("at most 10000 elements"), "{err}");
    assert_eq!(
        scry.ok("dom.clear(); dom.id('after').textContent = 'ok'; dom.id('after').outerHTML"),
        "<div id=\"after\">ok</div>"
    );
    assert_eq!(scry.ok("dom.canvas('c', 2, 1).width"), "2");
    assert_eq!(
        scry.ok("dom.canvas('c', 2, 1)"),
        "<canvas id=\"c\" width=\"2\" height=\"1\"></canvas>"
    );
}

/// Runs `scry ARGS` in the runtime directory `dir`, bounded by a minute.
fn run_scry(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let child = Command::new(SCRY)
        .args(args)
        .env("XDG_RUNTIME_DIR", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut guard = common::ChildGuard(child);
    let status = guard.wait_timeout(Duration::from_secs(60));
    let mut out = String::new();
    let mut err = String::new();
    guard
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    guard
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.code(), out, err)
}

/// Waits until nothing listens on `port` any more.
fn wait_closed(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            Instant::now() < deadline,
            "the view on {port} outlived its session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn named_sessions_and_mcp_sessions_have_views_too() {
    let dir = common::temp_path("view-sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let bin = fixture("loop");
    let (code, out, err) = run_scry(
        &dir,
        &[
            "session",
            "start",
            "watched",
            "--view",
            "0",
            "--",
            bin.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.starts_with("entry at "), "{out}");
    let url = err
        .lines()
        .find_map(|l| l.strip_prefix("scry: view at "))
        .unwrap_or_else(|| panic!("no URL on stderr: {err}"))
        .to_string();
    let (_, answer, _) = run_scry(&dir, &["session", "eval", "watched", "-e", "view()"]);
    assert_eq!(answer, format!("{url}\n"));
    let url = parse_url(&url);
    assert_eq!(get(url.port, &format!("/{}/", url.token)).status, 200);
    let mut events = Events::open(url.port, &url.token);
    let panels = events.until(Duration::from_secs(10), |name, data| {
        (name == "panels").then(|| data.clone())
    });
    assert_eq!(Some(panels["stop"].as_str().unwrap()), out.lines().next());
    let (code, _, _) = run_scry(&dir, &["session", "stop", "watched"]);
    assert_eq!(code, Some(0));
    // The page hears that the session ended, and the port is let go.
    events.until(Duration::from_secs(10), |name, _| {
        (name == "closed").then_some(())
    });
    wait_closed(url.port);

    // MCP: the `view` argument of scry_start.
    let mut server = common::ChildGuard(
        Command::new(SCRY)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut to = server.0.stdin.take().unwrap();
    let lines = common::line_reader(server.0.stdout.take().unwrap());
    let mut call = |id: u64, tool: &str, args: Value| -> String {
        let message = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        writeln!(to, "{message}").unwrap();
        let reply: Value =
            serde_json::from_str(&lines.recv_timeout(Duration::from_secs(60)).unwrap()).unwrap();
        assert_eq!(reply["result"]["isError"], false, "{reply}");
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let started = call(
        1,
        "scry_start",
        serde_json::json!({"program": bin.to_str().unwrap(), "view": 0}),
    );
    let url = started
        .lines()
        .find_map(|l| l.strip_prefix("view "))
        .unwrap_or_else(|| panic!("no view line: {started}"))
        .to_string();
    assert_eq!(
        call(2, "scry_eval", serde_json::json!({"code": "view()"})),
        format!("{url}\n")
    );
    let url = parse_url(&url);
    assert_eq!(get(url.port, &format!("/{}/", url.token)).status, 200);
    call(3, "scry_stop", serde_json::json!({}));
    wait_closed(url.port);
}

#[test]
fn silent_connections_without_the_token_never_keep_the_page_out() {
    let mut scry = Scry::start(&["--view", "0", "--", fixture("loop").to_str().unwrap()]);
    let url = view_url(&mut scry);
    // 40 connections opened and left silent, and 8 that trickle a byte now and then: the
    // page still loads at once, every time.
    let mut idle: Vec<TcpStream> = (0..40)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", url.port)).ok())
        .collect();
    let mut trickle: Vec<TcpStream> = (0..8)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", url.port)).ok())
        .collect();
    for round in 0..5 {
        for s in &mut trickle {
            let _ = s.write_all(b"G");
        }
        let started = Instant::now();
        let page = get(url.port, &format!("/{}/", url.token));
        assert_eq!(page.status, 200, "round {round}: {}", page.head);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "round {round}: {:?}",
            started.elapsed()
        );
        idle.extend(TcpStream::connect(("127.0.0.1", url.port)).ok());
        std::thread::sleep(Duration::from_millis(300));
    }
    // A head that trickles in for longer than its deadline is dropped.
    let mut slow = TcpStream::connect(("127.0.0.1", url.port)).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 64];
    let mut closed = false;
    while started.elapsed() < Duration::from_secs(8) {
        if slow.write_all(b"G").is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        slow.set_nonblocking(true).unwrap();
        let r = slow.read(&mut buf);
        slow.set_nonblocking(false).unwrap();
        if matches!(r, Ok(0)) {
            closed = true;
            break;
        }
    }
    assert!(closed, "the trickling connection was never closed");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(idle);
}
