//! The live view in a real browser: headless Chromium loads the page, runs its script and
//! follows the event stream; the test reads the page's DOM (and a canvas's pixels) through the
//! DevTools protocol over a pipe (`--remote-debugging-pipe`: JSON messages ended by NUL on fds
//! 3 and 4, no websocket, no npm), while scry stops, steps and draws. A screenshot is kept at
//! target/view-screenshot.png for people to look at.
//!
//! Chromium comes from the Debian package (`.ci/run` installs it). Without it the test prints
//! that it was skipped; under CI (`CI` set) a missing browser is a failure instead.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use common::{
    decode_base64, fixture, load_bias, nm_address, proc_mem, temp_path, ChildGuard, Scry,
};
use serde_json::{json, Value};

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .ok()?;
        found
            .status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&found.stdout).trim()))
    })
}

/// Headless Chromium on one page, driven over the DevTools protocol.
struct Browser {
    to: std::fs::File,
    replies: Receiver<Value>,
    next: u64,
    session: String,
    dir: PathBuf,
    _child: ChildGuard,
}

impl Browser {
    fn open(chromium: &Path, url: &str) -> Browser {
        let dir = temp_path("chromium");
        std::fs::create_dir_all(&dir).unwrap();
        let (input, output) = (dir.join("in"), dir.join("out"));
        for fifo in [&input, &output] {
            assert!(Command::new("mkfifo").arg(fifo).status().unwrap().success());
        }
        let script = format!(
            "exec '{}' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
             --disable-background-networking --disable-component-update --disable-sync \
             --hide-scrollbars --window-size=1400,1150 --user-data-dir='{}' \
             --remote-debugging-pipe '{url}' 3<'{}' 4>'{}'",
            chromium.display(),
            dir.join("profile").display(),
            input.display(),
            output.display()
        );
        let child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        let child = ChildGuard(child);
        // The shell opens fd 3 first, then fd 4; each open waits for this end.
        let to = std::fs::OpenOptions::new()
            .write(true)
            .open(&input)
            .unwrap();
        let from = std::fs::File::open(&output).unwrap();
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from);
            loop {
                let mut message = Vec::new();
                match reader.read_until(0, &mut message) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                message.pop();
                let Ok(v) = serde_json::from_slice::<Value>(&message) else {
                    continue;
                };
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut browser = Browser {
            to,
            replies,
            next: 0,
            session: String::new(),
            dir,
            _child: child,
        };
        let targets = browser.call("Target.getTargets", json!({}));
        let page = targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .expect("a page target")["targetId"]
            .clone();
        let attached = browser.call(
            "Target.attachToTarget",
            json!({"targetId": page, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser
    }

    /// One DevTools command; its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut message = json!({"id": self.next, "method": method, "params": params});
        if !self.session.is_empty() {
            message["sessionId"] = json!(self.session);
        }
        self.to.write_all(message.to_string().as_bytes()).unwrap();
        self.to.write_all(b"\0").unwrap();
        self.to.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = self
                .replies
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            if reply["id"] == self.next {
                assert!(reply["error"].is_null(), "{method}: {reply}");
                return reply["result"].clone();
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        r["result"]["value"].clone()
    }

    /// Polls `expression` until it equals `want`.
    #[track_caller]
    fn wait_for(&mut self, expression: &str, want: &Value) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let got = self.eval(expression);
            if got == *want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the page never had {expression} == {want}; it has {got}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        std::fs::write(path, decode_base64(shot["data"].as_str().unwrap())).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self
            .to
            .write_all(b"{\"id\":999999,\"method\":\"Browser.close\"}\0");
        std::thread::sleep(Duration::from_millis(200));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const CANVAS_PIXELS: &str =
    "Array.from(document.getElementById('fb').getContext('2d').getImageData(0, 0, 16, 8).data)";

#[test]
fn chromium_shows_the_session_live_with_what_scripts_draw() {
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is missing under CI: .ci/run installs it (apt-get install chromium)"
        );
        eprintln!("SKIPPED chromium_shows_the_session_live_with_what_scripts_draw: no chromium here (apt-get install chromium)");
        return;
    };
    let bin = fixture("pixels");
    let mut scry = Scry::start(&["--view", "0", "--", bin.to_str().unwrap()]);
    let url = scry.ok("view()");
    // At frame_done's first byte (nm's address): a name would put it after the prologue.
    let pid = scry.target_pid();
    let pc = format!(
        "{:#x}",
        load_bias(pid, &bin) + nm_address(&bin, "frame_done")
    );
    scry.ok(&format!("breakpoint.set({pc}, 'frame')"));
    let stop = scry.ok("cont()");
    let fb = load_bias(pid, &bin) + nm_address(&bin, "fb");
    assert!(stop.contains(&pc), "{stop}");
    // What the page must show of the framebuffer: its BGRX words as RGBA, read from /proc.
    let pixels = |pid| -> Value {
        let rgba: Vec<u8> = proc_mem(pid, fb, 16 * 8 * 4)
            .chunks(4)
            .flat_map(|p| [p[2], p[1], p[0], 255])
            .collect();
        json!(rgba)
    };
    let draw =
        "{ dom.id('msg').textContent = 'frame ' + state.registers.rdi + ' at ' + hex(state.pc); \
                const c = dom.canvas('fb', 16, 8); c.style.width = '256px'; \
                c.putImageData(state.memory('fb'), 0, 0, {format: 'bgrx'}) }";
    scry.ok(draw);
    scry.ok("dom.id('note').innerHTML = '<b>bold</b><img src=x onerror=\"document.title=1\"><script>document.title=2</script>'");

    // The page opened late shows the current state.
    let mut page = Browser::open(&chromium, &url);
    page.wait_for(
        "document.querySelector('#scry-stop .pc')?.textContent",
        &json!(pc),
    );
    page.wait_for(
        "document.getElementById('scry-conn').textContent",
        &json!("live"),
    );
    assert_eq!(
        page.eval("document.getElementById('scry-stop').textContent"),
        json!(stop)
    );
    assert_eq!(page.eval("document.title"), json!(format!("scry · {stop}")));
    assert_eq!(
        page.eval("document.querySelector('#scry-disasm .current .addr').textContent"),
        json!(pc)
    );
    assert_eq!(
        page.eval("[...document.querySelectorAll('#scry-regs .reg')].find(r => r.firstChild.textContent === 'rip').lastChild.textContent"),
        json!(pc)
    );
    assert_eq!(
        page.eval("document.getElementById('msg').textContent"),
        json!(format!("frame 0 at {pc}"))
    );
    assert_eq!(
        page.eval("document.getElementById('note').innerHTML"),
        json!("<b>bold</b><img>")
    );
    assert_eq!(
        page.eval("document.querySelectorAll('[onerror]').length"),
        json!(0)
    );
    assert_eq!(
        page.eval("document.scripts.length"),
        json!(1),
        "only the page's own"
    );
    page.wait_for(CANVAS_PIXELS, &pixels(pid));

    // Live: the next frame's stop, text and pixels reach the open page.
    let stop = scry.ok("cont()");
    scry.ok(draw);
    page.wait_for(
        "document.getElementById('msg').textContent",
        &json!(format!("frame 1 at {pc}")),
    );
    page.wait_for(
        "document.getElementById('scry-stop').textContent",
        &json!(stop),
    );
    page.wait_for(CANVAS_PIXELS, &pixels(pid));
    assert_eq!(
        page.eval("document.querySelector('#scry-points td.hits').textContent"),
        json!("2")
    );
    let sent =
        page.eval("[...document.querySelectorAll('#scry-chunks .sent')].map(e => e.textContent)");
    assert!(
        sent.as_array().unwrap().iter().any(|c| c == "cont()"),
        "the agent's chunks: {sent}"
    );

    // A picture for people, and for checking the page by eye.
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("view-screenshot.png");
    page.screenshot(&shot);
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    eprintln!("screenshot of the view: {}", shot.display());
    assert_eq!(scry.ok("status().live"), "true");
}
