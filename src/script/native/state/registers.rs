//! JS: `state.registers`, `state.flags`, `state.pc`, `state.sp`, and the same under `prev`.

use super::*;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("reg", reg)?; // state.registers.rax, state.pc, state.sp
    t.def("prev_reg", prev_reg)?; // prev.registers.rax, prev.pc
    t.def("set_reg", set_reg)?; // state.registers.rax = v
    t.def("reg_names", reg_names)?; // the names state.registers has
    t.def("regs_text", regs_text)?; // String(state.registers)
    t.def("flag", flag)?; // state.flags.z, prev.flags.z
    t.def("set_flag", set_flag)?; // state.flags.z = v
    Ok(())
}

fn reg<'js>(h: &Host, ctx: Ctx<'js>, name: String) -> R<'js> {
    let index =
        regs::register_index(&name).ok_or_else(|| throw(&ctx, format!("no register '{name}'")))?;
    let mut session = h.session_mut(&ctx)?;
    if let Some(unknown) = session.register_unknown(&name) {
        return Err(throw(&ctx, unknown));
    }
    let raw = session.regs().or_throw(&ctx)?;
    u64_to_js(&ctx, regs::get_register(&raw, index))
}

fn prev_reg<'js>(h: &Host, ctx: Ctx<'js>, name: String) -> R<'js> {
    let Some(index) = regs::register_index(&name) else {
        return Ok(undefined(&ctx));
    };
    let session = h.session_ref(&ctx)?;
    match session.prev_regs() {
        Some(raw) if session.register_unknown(&name).is_none() => {
            u64_to_js(&ctx, regs::get_register(raw, index))
        }
        _ => Ok(undefined(&ctx)),
    }
}

fn set_reg<'js>(h: &Host, ctx: Ctx<'js>, name: String, v: Value<'js>) -> rquickjs::Result<()> {
    let value =
        values::to_u64_bits(&ctx, &v).map_err(|e| throw(&ctx, format!("registers.{name}: {e}")))?;
    h.session_mut(&ctx)?
        .set_register(&name, value)
        .or_throw(&ctx)
}

fn reg_names(_: &Host) -> Vec<&'static str> {
    REGISTER_NAMES.to_vec()
}

fn regs_text<'js>(h: &Host, ctx: Ctx<'js>) -> rquickjs::Result<String> {
    let mut session = h.session_mut(&ctx)?;
    let raw = session.regs().or_throw(&ctx)?;
    let lines: Vec<String> = REGISTER_NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| match session.register_unknown(name) {
            Some(_) => format!("{name}\t<unavailable>"),
            None => format!("{name}\t{:#x}", regs::get_register(&raw, i)),
        })
        .collect();
    Ok(lines.join("\n"))
}

fn flag<'js>(h: &Host, ctx: Ctx<'js>, name: String, prev: Opt<bool>) -> R<'js> {
    let bit = regs::flag_bit(&name).ok_or_else(|| throw(&ctx, format!("no flag '{name}'")))?;
    let eflags = if prev.0.unwrap_or(false) {
        match h.session_ref(&ctx)?.prev_regs() {
            Some(r) => r.eflags,
            None => return Ok(undefined(&ctx)),
        }
    } else {
        h.session_mut(&ctx)?.regs().or_throw(&ctx)?.eflags
    };
    Ok(Value::new_bool(ctx.clone(), eflags & (1 << bit) != 0))
}

fn set_flag<'js>(h: &Host, ctx: Ctx<'js>, name: String, on: bool) -> rquickjs::Result<()> {
    let bit = regs::flag_bit(&name).ok_or_else(|| throw(&ctx, format!("no flag '{name}'")))?;
    let mut session = h.session_mut(&ctx)?;
    let eflags = session.regs().or_throw(&ctx)?.eflags;
    let new = if on {
        eflags | (1 << bit)
    } else {
        eflags & !(1 << bit)
    };
    session.set_register("eflags", new).or_throw(&ctx)
}
