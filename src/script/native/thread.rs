//! JS: `thread.list`, `thread.select`, `state.tid`.

use super::*;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("threads", list)?; // thread.list()
    t.def("thread_select", select)?; // thread.select(tid)
    t.def("tid", tid)?; // state.tid
    Ok(())
}

fn list<'js>(h: &Host, ctx: Ctx<'js>) -> R<'js> {
    let list = h.session_mut(&ctx)?.thread_list().or_throw(&ctx)?;
    let rows = Array::new(ctx.clone())?;
    for t in &list {
        let o = Object::new(ctx.clone())?;
        o.put("tid", t.tid)?;
        o.put("name", t.name.as_str())?;
        o.put("state", t.state.as_str())?;
        o.put("pc", u64_to_js(&ctx, t.pc)?)?;
        o.put("symbol", t.symbol.clone())?;
        if t.selected {
            o.put("selected", true)?;
        }
        rows.push(o)?;
    }
    Ok(rows.into_value())
}

fn select<'js>(h: &Host, ctx: Ctx<'js>, tid: Value<'js>) -> rquickjs::Result<()> {
    let tid = values::to_count(&ctx, &tid, i32::MAX as u64, "thread.select(tid)").or_throw(&ctx)?;
    h.session_mut(&ctx)?
        .select_thread(tid as i32)
        .or_throw(&ctx)
}

fn tid<'js>(h: &Host, ctx: Ctx<'js>) -> rquickjs::Result<i32> {
    h.session_mut(&ctx)?.selected_tid().or_throw(&ctx)
}
