//! Tests of `sanitize` (kept apart so that the file holds only its code).

use super::*;

#[test]
fn scripts_and_handlers_never_survive() {
    let cases = [
        ("<script>alert(1)</script>ok", "ok"),
        ("<SCRIPT src=x></SCRIPT>ok", "ok"),
        ("<img src=x onerror=alert(1)>", "<img>"),
        ("<b onclick='x()'>b</b>", "<b>b</b>"),
        ("<a href='javascript:alert(1)'>l</a>", "<a>l</a>"),
        ("<a href=' jav&#x09;ascript:alert(1)'>l</a>", "<a>l</a>"),
        ("<a href='&#106;avascript:alert(1)'>l</a>", "<a>l</a>"),
        (
            "<a href='https://example.com/?a=1&amp;b=2'>l</a>",
            "<a href=\"https://example.com/?a=1&amp;b=2\">l</a>",
        ),
        ("<iframe src=x>inner</iframe>t", "t"),
        ("<style>body{}</style>t", "t"),
        (
            "<svg><script>alert(1)</script><rect onload=x width=3 /></svg>",
            "<svg><rect width=\"3\"></rect></svg>",
        ),
        (
            "<svg><animate attributeName=href to=javascript:x /></svg>",
            "<svg></svg>",
        ),
        (
            "<div style='color: red; background: url(http://x/)'>d</div>",
            "<div style=\"color: red\">d</div>",
        ),
        (
            "<div style='width: expression(alert(1))'>d</div>",
            "<div>d</div>",
        ),
        ("<!-- <script>x</script> -->c", "c"),
        (
            "<img src='data:image/png;base64,AAAA'>",
            "<img src=\"data:image/png;base64,AAAA\">",
        ),
        ("<img src='data:text/html,<script>'>", "<img>"),
        ("<p>a < b & c > d</p>", "<p>a &lt; b &amp; c &gt; d</p>"),
        ("<b>unclosed <i>x", "<b>unclosed <i>x</i></b>"),
        ("</b>stray", "stray"),
        ("<b title=\"a&quot;b\">t</b>", "<b title=\"a&quot;b\">t</b>"),
        ("<scr<script>ipt>alert(1)</script>", "ipt&gt;alert(1)"),
        (
            "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>",
            "<img>\"&gt;",
        ),
        (
            "<svg><circle r=1 /><circle r='2'/></svg>",
            "<svg><circle r=\"1\"></circle><circle r=\"2\"></circle></svg>",
        ),
        ("<br/>x<p/>y", "<br>x<p>y</p>"),
        ("<math><mi xlink:href=javascript:x>m</mi></math>", "m"),
        (
            "<svg viewbox='0 0 10 10'><lineargradient id=g></lineargradient></svg>",
            "<svg viewBox=\"0 0 10 10\"><linearGradient id=\"g\"></linearGradient></svg>",
        ),
        (
            "<rect fill='url(#g)'></rect><rect fill='url(http://x)'></rect>",
            "<rect fill=\"url(#g)\"></rect><rect></rect>",
        ),
        ("<div", ""),
        (
            "x &unknown; &#0; &#x1F600; &lt",
            "x &amp;unknown; \u{fffd} \u{1F600} &lt;",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(sanitize_html(input), want, "input {input:?}");
    }
}

#[test]
fn sanitizing_is_stable() {
    // The output read back and written again is the same markup.
    for input in [
        "<table><tr><td colspan=2>x</td></tr></table>",
        "<p>1 &lt; 2</p><br><hr>",
        "<svg width=10><path d='M0 0 L 5 5' stroke=red /></svg>",
    ] {
        let once = sanitize_html(input);
        assert_eq!(sanitize_html(&once), once);
    }
}

#[test]
fn text_and_css() {
    assert_eq!(text_of_html("<b>a &amp; b</b><i>c</i>"), "a & bc");
    assert!(css_value_problem("red").is_none());
    assert!(css_value_problem("calc(100% - 3px)").is_none());
    assert!(css_value_problem("url(x)").is_some());
    assert!(css_value_problem("\\75rl(x)").is_some());
    assert!(css_property_ok("--bar-width"));
    assert!(!css_property_ok("Color"));
    assert_eq!(
        parse_style("color:red;;bad;Width: 3px; background:url(x)"),
        vec![
            ("color".into(), "red".into()),
            ("width".into(), "3px".into())
        ]
    );
    assert_eq!(allowed_attr("div", false, "onclick"), None);
    assert_eq!(
        allowed_attr("div", false, "aria-label").as_deref(),
        Some("aria-label")
    );
    assert_eq!(
        allowed_tag("LINEARGRADIENT"),
        Some(("linearGradient", true))
    );
    assert_eq!(allowed_tag("script"), None);
}

#[test]
fn hostile_input_is_bounded() {
    let deep = "<div>".repeat(10_000);
    let out = sanitize_html(&deep);
    assert_eq!(out.matches("<div>").count(), MAX_DEPTH);
    let garbage: String = (0..20_000u32)
        .map(|i| char::from_u32((i * 7919) % 0x250 + 0x20).unwrap_or('x'))
        .collect();
    let once = sanitize_html(&garbage);
    assert!(!once.contains("<script"));
    assert_eq!(sanitize_html(&once), once);
}
