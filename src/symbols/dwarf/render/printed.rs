//! A value a printer claims, written from the printer's answer (`pretty`): its summary, then
//! its children as the shape says (`[a, b]`, `{k: v}`, `-> v`, `(v)`), each rendered like
//! any other value, nested printers included; and as plain data for scripts.

use crate::symbols::dwarf::pretty::{Child, PrintError, Printed, Shape};
use crate::symbols::dwarf::target::Target;
use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::types::Type;
use crate::symbols::dwarf::value::Value;

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
        Some(pretty.print(v, want))
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
        }
    }

    /// `v` as plain data through its printer: a list, an object for a map whose keys are
    /// text or numbers (else a list of `[key, value]` pairs), what a pointer or wrapper
    /// holds, or the summary. `None` when no printer claims the type.
    pub(super) fn plain_printed(
        &self,
        v: &Value,
        ty: &Type,
        t: &dyn Target,
        lim: &Limits,
        mut child: impl FnMut(&Value) -> Plain,
    ) -> Option<Plain> {
        let want = (lim.elements).saturating_mul(32);
        let p = match self.printed(v, ty, t, want)? {
            Ok(p) => p,
            Err(e) => return Some(Plain::Missing(e.to_string())),
        };
        let mut plain = |c: &Child| match c {
            Child::Value(v) => child(v),
            Child::Text(s) => Plain::Str(s.clone()),
        };
        let more = p.more.unwrap_or(0);
        Some(match p.shape {
            Shape::Summary => Plain::Str(p.text.unwrap_or(p.summary)),
            Shape::List => Plain::List(p.items.iter().map(|(_, v)| plain(v)).collect(), more),
            Shape::Pointer | Shape::Value => match p.items.first() {
                Some((_, v)) => plain(v),
                None => Plain::Null,
            },
            Shape::Map => {
                let pairs: Vec<(Plain, Plain)> = p
                    .items
                    .iter()
                    .map(|(k, v)| (k.as_ref().map_or(Plain::Null, &mut plain), plain(v)))
                    .collect();
                let keyed = pairs.iter().all(|(k, _)| {
                    matches!(
                        k,
                        Plain::Str(_) | Plain::Int(_) | Plain::UInt(_) | Plain::Bool(_)
                    )
                });
                if keyed {
                    Plain::Obj(pairs.into_iter().map(|(k, v)| (key_text(&k), v)).collect())
                } else {
                    Plain::List(
                        pairs
                            .into_iter()
                            .map(|(k, v)| Plain::List(vec![k, v], 0))
                            .collect(),
                        more,
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
