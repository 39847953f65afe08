//! A value a printer claims, written from the printer's answer (`pretty`): its summary, then
//! its children as the shape says (`[a, b]`, `{k: v}`, `-> v`, `(v)`), each rendered like
//! any other value, nested printers included; and as plain data for scripts.

use crate::symbols::dwarf::pretty::{Child, PrintError, Printed, Shape};
use crate::symbols::dwarf::target::Target;
use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::types::Type;
use crate::symbols::dwarf::value::Value;

use super::plain::Budget;
use super::{Limits, Out, Plain};

impl InfoTree {
    /// The printer's answer for `v` if its type is claimed.
    fn printed(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        want: usize,
    ) -> Option<Result<Printed, PrintError>> {
        let pretty = t.pretty()?;
        let name = self.qualified_type_name(ty.id);
        if !pretty.claims(ty, &name) {
            return None;
        }
        Some(pretty.print(v, want, false))
    }

    /// Writes `v` through its printer; false when no printer claims its type.
    pub(super) fn write_printed(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        lim: &Limits,
        depth: usize,
        out: &mut Out,
    ) -> bool {
        let want = if depth >= lim.depth { 0 } else { lim.elements };
        let p = match self.printed(v, ty, t, want) {
            None => return false,
            Some(Ok(p)) => p,
            Some(Err(e)) => {
                out.push(&e.bracketed());
                return true;
            }
        };
        out.push(&p.summary);
        let (open, close) = match p.shape {
            Shape::Summary => return true,
            Shape::List => (" [", "]"),
            Shape::Map => (" {", "}"),
            Shape::Pointer => (" -> ", ""),
            Shape::Value => ("(", ")"),
        };
        if depth >= lim.depth {
            // Too deep for the children (a sequence's summary says how many there are); a
            // printer whose child is the value itself ends here too, never recursing.
            match p.shape {
                Shape::Pointer => out.push(" -> …"),
                Shape::Value => out.push("(…)"),
                _ => {}
            }
            return true;
        }
        out.push(open);
        for (i, (key, value)) in p.items.iter().enumerate() {
            if i > 0 {
                out.push(", ");
            }
            if let Some(k) = key {
                self.write_child(k, t, lim, depth, out);
                out.push(": ");
            }
            self.write_child(value, t, lim, depth, out);
            if out.full() {
                break;
            }
        }
        match (p.more, p.truncated) {
            (Some(n), _) if n > 0 => out.push(&format!(", … {n} more")),
            (_, true) => out.push(", …"),
            _ => {}
        }
        out.push(close);
        true
    }

    fn write_child(&self, c: &Child, t: &dyn Target, lim: &Limits, depth: usize, out: &mut Out) {
        match c {
            Child::Value(v) => self.write(v, t, lim, depth + 1, out),
            Child::Text(s) => out.push(s),
            Child::Bool(b) => out.push(if *b { "true" } else { "false" }),
            Child::Number(n) => out.push(&number_text(*n)),
        }
    }

    /// `v` as plain data through its printer: a list, an object for a map whose keys are
    /// text or numbers (else a list of `[key, value]` pairs), what a pointer or wrapper
    /// holds, or the summary (a string's characters, whole). `None` when no printer claims
    /// the type. Children the printer leaves out refuse the value (`budget`).
    pub(super) fn plain_printed(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        depth: usize,
        budget: &mut Budget,
    ) -> Option<Plain> {
        // One more than there is room for: a printer that stops there has more.
        let want = budget.room().saturating_add(1);
        let pretty = t.pretty()?;
        let name = self.qualified_type_name(ty.id);
        if !pretty.claims(ty, &name) {
            return None;
        }
        let p = match pretty.print(v, want, true) {
            Ok(p) => p,
            // A part the printer found no value in (`<optimized out>`) has none here.
            Err(PrintError::Missing(said)) => return Some(Plain::Gone(said)),
            Err(e) => return Some(Plain::Missing(e.to_string())),
        };
        if p.empty {
            return Some(Plain::Null);
        }
        if let Some((first, n)) = &p.run {
            let stride = self.size_of(first.ty).unwrap_or(0);
            return Some(match first.address() {
                Some(start) if stride > 0 => self.plain_list(t, depth, budget, *n, |i| {
                    Ok(Value::at(first.ty, start.wrapping_add(stride * i as u64)))
                }),
                _ => Plain::Missing("the printer's elements are in no memory".into()),
            });
        }
        if p.more.is_some_and(|n| n > 0) || p.truncated || p.items.len() >= want {
            let n = p.more.map_or(String::new(), |m| {
                format!(" of {}", p.items.len() as u64 + m)
            });
            budget.refuse(format!("{}{n} elements", p.summary));
            return Some(Plain::Null);
        }
        let plain = |c: &Child, budget: &mut Budget| match c {
            Child::Value(c) => self.plain_at(&self.prefetch(c, t), t, depth + 1, budget),
            Child::Text(s) => Plain::Str(s.clone()),
            Child::Bool(b) => Plain::Bool(*b),
            Child::Number(n) if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 => {
                Plain::Int(*n as i128)
            }
            Child::Number(n) => Plain::Float(*n),
        };
        Some(match p.shape {
            Shape::Summary => Plain::Str(p.text.unwrap_or(p.summary)),
            Shape::List => Plain::List(p.items.iter().map(|(_, v)| plain(v, budget)).collect()),
            Shape::Pointer => match p.items.first() {
                Some((_, Child::Value(c))) if c.address().is_some() => {
                    let at = c.address().unwrap_or_default();
                    if budget.held.contains(&at) {
                        return Some(Plain::Missing(format!(
                            "<a link back to {at:#x}, which holds this value>"
                        )));
                    }
                    budget.held.push(at);
                    let p = plain(&Child::Value(c.clone()), budget);
                    budget.held.pop();
                    p
                }
                Some((_, v)) => plain(v, budget),
                None => Plain::Null,
            },
            Shape::Value => match p.items.first() {
                Some((_, v)) => plain(v, budget),
                None => Plain::Null,
            },
            Shape::Map => {
                let pairs: Vec<(Plain, Plain)> = p
                    .items
                    .iter()
                    .map(|(k, v)| {
                        let k = k.as_ref().map_or(Plain::Null, |k| plain(k, budget));
                        (k, plain(v, budget))
                    })
                    .collect();
                // An object only where every key is text or a number and no two are the same
                // (a multimap's repeated key would keep one entry of an object).
                let mut seen = std::collections::HashSet::new();
                let keyed = pairs.iter().all(|(k, _)| {
                    matches!(
                        k,
                        Plain::Str(_) | Plain::Int(_) | Plain::UInt(_) | Plain::Bool(_)
                    ) && seen.insert(key_text(k))
                });
                let texts: Vec<String> = pairs.iter().map(|(k, _)| key_text(k)).collect();
                if keyed && (!p.ordered || js_keeps_order(&texts)) {
                    Plain::Obj(pairs.into_iter().map(|(k, v)| (key_text(&k), v)).collect())
                } else {
                    Plain::List(
                        pairs
                            .into_iter()
                            .map(|(k, v)| Plain::List(vec![k, v]))
                            .collect(),
                    )
                }
            }
        })
    }
}

fn key_text(k: &Plain) -> String {
    match k {
        Plain::Str(s) => s.clone(),
        Plain::Int(n) => n.to_string(),
        Plain::UInt(n) => n.to_string(),
        Plain::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

/// A printer's number as text: an integer without a fraction, else the shortest text that
/// reads back (as `float_text` writes doubles).
fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        format!("{}", n as i64)
    } else {
        super::float_text(n, false)
    }
}

/// Whether a JavaScript object keeps keys in this order: it lists keys that are array
/// indices (`0`, `17`, not `-5` or `007`) first, ascending, then the rest as inserted; so an
/// ordered map with negative or text keys (`-15, -10, 0`) would come out reordered.
fn js_keeps_order(keys: &[String]) -> bool {
    let index = |k: &str| -> Option<u32> {
        let n: u32 = k.parse().ok()?;
        (n.to_string() == k && n != u32::MAX).then_some(n)
    };
    let mut indices: Vec<u32> = keys.iter().filter_map(|k| index(k)).collect();
    indices.sort_unstable();
    let others = keys.iter().filter(|k| index(k).is_none()).cloned();
    let js: Vec<String> = indices.iter().map(u32::to_string).chain(others).collect();
    js == keys
}

#[cfg(test)]
mod tests {
    use super::js_keeps_order;

    #[test]
    fn an_object_keeps_only_the_orders_javascript_keeps() {
        let keys = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(js_keeps_order(&keys(&["0", "5", "10"])));
        assert!(js_keeps_order(&keys(&["apple", "nuts"])));
        assert!(js_keeps_order(&keys(&["1", "2", "b", "a"])));
        assert!(!js_keeps_order(&keys(&["-15", "-10", "0"])));
        assert!(!js_keeps_order(&keys(&["10", "2"])));
        assert!(!js_keeps_order(&keys(&["a", "1"])));
    }
}
