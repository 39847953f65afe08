//! Tests of `dom` (kept apart so that the file holds only its code).

use super::*;

#[test]
fn ids_find_or_create_and_changes_coalesce() {
    let mut dom = DomModel::default();
    dom.track();
    let pc = dom.by_id("pc").unwrap();
    assert_eq!(dom.by_id("pc").unwrap(), pc);
    for i in 0..1000 {
        dom.set_text(pc, &format!("{i:#x}")).unwrap();
    }
    let changes = dom.take_changes();
    assert_eq!(changes.elements.len(), 1, "one element, last state");
    assert_eq!(changes.elements[0].content, Content::Text("0x3e7".into()));
    assert_eq!(changes.root, Some(vec![pc]));
    assert!(!dom.is_dirty());
    dom.set_text(pc, "0x3e7").unwrap();
    assert!(!dom.is_dirty(), "writing the same text is no change");
}

#[test]
fn trees_and_markup() {
    let mut dom = DomModel::default();
    let list = dom.by_id("list").unwrap();
    let item = dom.create("li").unwrap();
    dom.set_text(item, "a < b").unwrap();
    dom.set_attr(item, "class", "hot").unwrap();
    dom.set_style(item, "color", "red").unwrap();
    let ul = dom.create("UL").unwrap();
    dom.append(ul, item).unwrap();
    dom.append(list, ul).unwrap();
    assert_eq!(
        dom.outer_html(list).unwrap(),
        "<div id=\"list\"><ul><li class=\"hot\" style=\"color: red\">a &lt; b</li></ul></div>"
    );
    assert_eq!(dom.text(list).unwrap(), "a < b");
    assert!(dom.append(item, list).is_err(), "no cycles");
    assert!(dom.set_attr(item, "onclick", "x()").is_err());
    assert!(dom.set_attr(item, "ONCLICK", "x()").is_err());
    assert!(dom.set_style(item, "background", "url(http://x)").is_err());
    dom.set_html(list, "<b onclick=x>bold</b><script>x</script>")
        .unwrap();
    assert_eq!(dom.inner_html(list).unwrap(), "<b>bold</b>");
    assert!(dom.text(item).is_err(), "children went with the markup");
    assert_eq!(dom.len(), 1);
    let a = dom.create("a").unwrap();
    assert!(dom.set_attr(a, "href", "javascript:alert(1)").is_err());
    dom.set_attr(a, "href", "https://example.com").unwrap();
}

#[test]
fn ids_are_unique_and_removal_frees_them() {
    let mut dom = DomModel::default();
    dom.track();
    let a = dom.by_id("a").unwrap();
    let b = dom.create("span").unwrap();
    assert!(dom.set_attr(b, "id", "a").is_err());
    dom.append(a, b).unwrap();
    dom.set_attr(b, "id", "b").unwrap();
    assert_eq!(dom.find("b"), Some(b));
    dom.take_changes();
    dom.remove(a).unwrap();
    assert_eq!(dom.find("a"), None);
    assert_eq!(dom.find("b"), None);
    let changes = dom.take_changes();
    assert_eq!(changes.removed.len(), 2);
    assert_eq!(changes.root, Some(vec![]));
    assert!(dom.set_text(a, "x").is_err());
    assert!(dom.by_id("has space").is_err());
}

#[test]
fn untracked_changes_cost_nothing() {
    let mut dom = DomModel::default();
    let k = dom.by_id("x").unwrap();
    for _ in 0..100 {
        let s = dom.create("span").unwrap();
        dom.append(k, s).unwrap();
        dom.remove(s).unwrap();
    }
    assert!(!dom.is_dirty());
    dom.track();
    let changes = dom.take_changes();
    assert_eq!(changes.elements.len(), 1);
    assert!(changes.removed.is_empty());
    assert_eq!(changes.root, Some(vec![k]));
}

#[test]
fn limits_hold() {
    let mut dom = DomModel::default();
    for _ in 0..MAX_ELEMENTS {
        dom.create("span").unwrap();
    }
    assert!(dom.create("span").unwrap_err().contains("at most"));
    dom.clear();
    assert_eq!(dom.len(), 0);
    let k = dom.by_id("t").unwrap();
    assert!(dom.set_text(k, &"x".repeat(MAX_CONTENT + 1)).is_err());
    assert!(
        dom.canvas("big", 4096, 2048).is_err(),
        "over the pixel budget"
    );
    dom.canvas("c1", 2048, 1024).unwrap();
    dom.canvas("c2", 2048, 1024).unwrap();
    assert!(dom.canvas("c3", 1, 1).is_err());
    assert!(dom.canvas("t", 4, 4).is_err(), "a div is no canvas");
    let c1 = dom.find("c1").unwrap();
    dom.remove(c1).unwrap();
    dom.canvas("c3", 16, 16).unwrap();
}
