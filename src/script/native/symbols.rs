//! JS: `symbol`, `symbols`, `modules`, `lines`, `line_at`, an event's `module`: the program's
//! files as the debugger read them, answered from the symbol store without running anything.

use super::*;
use crate::symbols::store::{DwarfSource, SymbolSource};

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("resolve", resolve)?; // symbol(expr)
    t.def("symbols", symbols)?; // symbols(filter, {module, limit, exact})
    t.def("modules", modules)?; // modules()
    t.def("module_at", module_at)?; // e.module
    t.def("lines", lines)?; // lines('file.c:LINE')
    t.def("line_at", line_at)?; // line_at(addr)
    Ok(())
}

fn resolve<'js>(h: &Host, ctx: Ctx<'js>, expr: Value<'js>) -> R<'js> {
    let addr = address(&ctx, h, &expr)?;
    u64_to_js(&ctx, addr)
}

fn symbols<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    filter: Opt<Value<'js>>,
    limit: Opt<Value<'js>>,
    module: Opt<Value<'js>>,
    exact: Opt<bool>,
) -> R<'js> {
    let exact = exact.0.unwrap_or(false);
    let limit = match limit.0.filter(|v| !v.is_undefined() && !v.is_null()) {
        Some(v) => values::to_count(&ctx, &v, 10_000_000, "symbols(filter, limit)")
            .or_throw(&ctx)? as usize,
        // Enough to find a name, small enough for an agent's context: the rest is
        // counted in the listing's last line and one `limit` away.
        None => DEFAULT_LIMIT,
    };
    let text = |v: Opt<Value<'js>>| -> rquickjs::Result<Option<String>> {
        match v.0.filter(|v| !v.is_undefined() && !v.is_null()) {
            Some(v) => Ok(Some(v.get()?)),
            None => Ok(None),
        }
    };
    let (filter, module) = (text(filter)?, text(module)?);
    let mut session = h.session_mut(&ctx)?;
    let store = session.fresh_symbols();
    let all = store
        .symbols(filter.as_deref(), module.as_deref())
        .or_throw(&ctx)?;
    // A module can list a symbol twice (its .dynsym and a .symtab, its own or a debug
    // file's): one row each.
    let mut seen = std::collections::HashSet::new();
    let mut found: Vec<_> = all
        .filter_map(|(module, sym, addr)| {
            let name = sym.display_name().into_owned();
            seen.insert((module.name.as_str(), addr.0, name.clone()))
                .then_some((module, sym, addr, name))
        })
        .collect();
    // What was typed in full comes first, then names starting with it, then the rest;
    // modules keep their order (the program before its libraries) inside each group, so
    // `symbols('add')` leads with the program's `add`, not libc's `__mpn_add_n`.
    if let Some(f) = filter.as_deref().filter(|_| exact) {
        // `{exact: true}`: the name itself, as the symbol table or a demangler spells it.
        found.retain(|(_, sym, _, name)| &*sym.name == f || name == f);
    }
    if let Some(f) = filter.as_deref().filter(|f| !f.is_empty()) {
        found.sort_by_key(|(_, sym, _, name)| {
            if &*sym.name == f || name == f {
                0
            } else if name.starts_with(f) || sym.name.starts_with(f) {
                1
            } else {
                2
            }
        });
    }
    let total = found.len();
    let rows = Array::new(ctx.clone())?;
    for (module, sym, addr, name) in found.into_iter().take(limit) {
        let o = Object::new(ctx.clone())?;
        o.put("addr", u64_to_js(&ctx, addr.0)?)?;
        o.put("size", sym.size as f64)?;
        o.put(
            "type",
            match sym.kind {
                SymKind::Func => "func",
                SymKind::Object => "object",
                SymKind::Tls => "tls",
                SymKind::Other => "other",
            },
        )?;
        o.put("name", name.as_str())?;
        o.put("module", module.name.as_str())?;
        rows.push(o)?;
    }
    let o = Object::new(ctx.clone())?;
    o.put("rows", rows)?;
    o.put("more", total.saturating_sub(limit) as f64)?;
    Ok(o.into_value())
}

fn modules<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let mut session = h.session_mut(&ctx)?;
    let store = session.fresh_symbols();
    let rows = Array::new(ctx.clone())?;
    let mut text = String::from("base\tend\tname\tsymbols\tdebug");
    for m in store.modules() {
        let symbols = match m.file.symbol_source() {
            SymbolSource::Symtab => "symtab",
            SymbolSource::Dynsym => "dynsym",
            SymbolSource::Separate => "separate",
            SymbolSource::None => "none",
        };
        let debug = match m.file.dwarf_source() {
            Some(DwarfSource::Own) => "own",
            Some(DwarfSource::Separate) => "separate",
            None => "none",
        };
        let debug_file = m
            .file
            .debug_file()
            .map(|d| d.image.path.to_string_lossy().into_owned());
        let o = Object::new(ctx.clone())?;
        o.put("name", m.name.as_str())?;
        o.put("path", m.path.as_str())?;
        o.put("base", u64_to_js(&ctx, m.bias.0)?)?;
        o.put("start", u64_to_js(&ctx, m.start.0)?)?;
        o.put("end", u64_to_js(&ctx, m.end.0)?)?;
        o.put(
            "build_id",
            m.image().build_id.as_deref().map(values::to_hex),
        )?;
        o.put("symbols", symbols)?;
        o.put("debug", debug)?;
        o.put("debug_file", debug_file.clone())?;
        rows.push(o)?;
        text.push_str(&format!(
            "\n{:#x}\t{:#x}\t{}\t{symbols}\t{debug}",
            m.bias.0, m.end.0, m.name
        ));
        if let Some(path) = debug_file {
            text.push('\t');
            text.push_str(&path);
        }
    }
    let o = Object::new(ctx.clone())?;
    o.put("rows", rows)?;
    o.put("text", text)?;
    Ok(o.into_value())
}

/// The name of the module holding an address, or null.
fn module_at<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>) -> R<'js> {
    let addr = address(&ctx, h, &at)?;
    let session = h.session_ref(&ctx)?;
    match session.symbol_store().module_at(RuntimeAddr(addr)) {
        Some(m) => m.name.as_str().into_js(&ctx),
        None => Ok(Value::new_null(ctx.clone())),
    }
}

fn lines<'js>(h: &Host, ctx: Ctx<'js>, where_: String) -> R<'js> {
    let (file, line) = crate::session::source_line_expr(&where_).ok_or_else(|| {
        throw(
            &ctx,
            format!("lines('{where_}'): expected 'file.c:LINE', e.g. lines('loop.c:15')"),
        )
    })?;
    let mut session = h.session_mut(&ctx)?;
    let store = session.fresh_symbols();
    let sites = store.line_sites(file, line);
    let rows = Array::new(ctx.clone())?;
    let mut text = Vec::with_capacity(sites.len());
    for a in &sites {
        rows.push(u64_to_js(&ctx, a.0)?)?;
        let name = store.symbolize(*a).unwrap_or_default();
        text.push(format!("{:#x}\t{name}", a.0));
    }
    let o = Object::new(ctx.clone())?;
    o.put("rows", rows)?;
    o.put(
        "text",
        if text.is_empty() {
            format!("(no code for {file}:{line} in the line tables)")
        } else {
            text.join("\n")
        },
    )?;
    Ok(o.into_value())
}

fn line_at<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>) -> R<'js> {
    let addr = address(&ctx, h, &at)?;
    let mut session = h.session_mut(&ctx)?;
    session.fresh_symbols();
    match session.source_position(addr) {
        Some(pos) => pos.into_js(&ctx),
        None => Ok(Value::new_null(ctx.clone())),
    }
}

/// Rows `symbols()` returns when no limit is given.
const DEFAULT_LIMIT: usize = 50;
