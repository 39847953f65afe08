//! An [`Update`] as Server-Sent Events: one event per kind of change, each a single `data:`
//! line of JSON (JSON escapes newlines, so a line never splits).

use serde_json::{json, Value};

use super::base64;
use super::board::{Pixels, Update};
use super::canvas::Rect;
use super::dom::{Content, Element};

fn event(out: &mut String, name: &str, data: &Value) {
    out.push_str("event: ");
    out.push_str(name);
    out.push_str("\ndata: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

/// The events for one update, in the order the page applies them.
pub(super) fn render(u: &Update) -> String {
    let mut out = String::new();
    if u.reset {
        event(&mut out, "reset", &json!({}));
    }
    if let Some(s) = &u.status {
        event(&mut out, "status", &s.to_json());
    }
    if let Some(p) = &u.panels {
        event(&mut out, "panels", &p.to_json());
    }
    if !u.chunks.is_empty() {
        let chunks: Vec<Value> = u.chunks.iter().map(|c| c.to_json()).collect();
        event(&mut out, "chunks", &Value::Array(chunks));
    }
    if let Some((reset, bytes)) = &u.output {
        let text = String::from_utf8_lossy(bytes);
        event(&mut out, "output", &json!({"reset": reset, "text": text}));
    }
    if u.root.is_some() || !u.elements.is_empty() || !u.removed.is_empty() {
        let set: Vec<Value> = u
            .elements
            .iter()
            .map(|(e, px)| element_json(e, *px))
            .collect();
        event(
            &mut out,
            "dom",
            &json!({
                "root": u.root.as_deref(),
                "set": set,
                "drop": u.removed,
            }),
        );
    }
    if u.closed {
        event(&mut out, "closed", &json!({}));
    }
    out
}

fn pairs(p: &[(String, String)]) -> Value {
    Value::Array(p.iter().map(|(k, v)| json!([k, v])).collect())
}

fn element_json(e: &Element, pixels: Pixels) -> Value {
    let mut o = json!({
        "k": e.key,
        "tag": e.tag,
        "svg": e.svg,
        "id": e.id,
        "attrs": pairs(&e.attrs),
        "style": pairs(&e.style),
    });
    match &e.content {
        Content::Kids(kids) => o["kids"] = json!(kids),
        Content::Text(t) => o["text"] = json!(t),
        Content::Html(h) => o["html"] = json!(h),
    }
    if let Some(c) = &e.canvas {
        let mut canvas = json!({"w": c.width, "h": c.height});
        let region = match pixels {
            Pixels::None => None,
            Pixels::Region => c.dirty,
            Pixels::All => Some(Rect {
                x: 0,
                y: 0,
                w: c.width,
                h: c.height,
            }),
        };
        if let Some(r) = region {
            canvas["px"] = json!({
                "x": r.x, "y": r.y, "w": r.w, "h": r.h,
                "data": base64::encode(&c.crop(r)),
            });
        }
        o["canvas"] = canvas;
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::board::{Cursor, Publication, Publisher, Shared};
    use crate::view::dom::DomModel;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn events_are_single_lines_of_json() {
        let shared = Arc::new(Shared::default());
        let mut publisher = Publisher::new(shared.clone());
        let mut dom = DomModel::default();
        dom.track();
        let k = dom.by_id("msg").unwrap();
        dom.set_text(k, "two\nlines </script>").unwrap();
        dom.canvas("c", 1, 1).unwrap();
        publisher.publish(Publication {
            dom: Some(dom.take_changes()),
            ..Default::default()
        });
        let mut cursor = Cursor::default();
        let u = shared.changes(&mut cursor, Duration::ZERO).unwrap();
        let text = render(&u);
        let mut names = Vec::new();
        for block in text.split_terminator("\n\n") {
            let mut lines = block.lines();
            let name = lines.next().unwrap().strip_prefix("event: ").unwrap();
            let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
            assert!(lines.next().is_none());
            let v: Value = serde_json::from_str(data).unwrap();
            if name == "dom" {
                assert_eq!(v["set"].as_array().unwrap().len(), 2);
                let msg = v["set"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["k"] == k)
                    .unwrap();
                assert_eq!(msg["text"], "two\nlines </script>");
                let c = v["set"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| e["tag"] == "canvas")
                    .unwrap();
                assert_eq!(c["canvas"]["px"]["data"], "AAAAAA==");
            }
            names.push(name.to_string());
        }
        assert_eq!(names, ["reset", "status", "dom"]);
    }
}
