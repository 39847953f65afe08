//! JS: `state.memory(addr)`'s reads and writes (`.u8()` ... `.f64()`, `.bytes`, `.array`,
//! `.u8array`, `.str`, `.write_*`) and `prev.memory(addr)`.

use super::*;
use crate::script::native::mem_kind::kind;
use crate::session::capture::escape_invalid_utf8;

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("mem_read", read)?; // state.memory(a).u32()
    t.def("prev_mem", prev_mem)?; // prev.memory(a).u32()
    t.def("mem_bytes", bytes)?; // state.memory(a).bytes(n)
    t.def("mem_array", array)?; // state.memory(a).array(type, n)
    t.def("mem_u8array", u8array)?; // state.memory(a).u8array(n)
    t.def("mem_str", str)?; // state.memory(a).str(max)
    t.def("mem_write", write)?; // state.memory(a).write_u32(v)
    t.def("mem_write_bytes", write_bytes)?; // state.memory(a).write_bytes(hex)
    Ok(())
}

fn read<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, k: String) -> R<'js> {
    let k = kind(&ctx, &k)?;
    let addr = address(&ctx, h, &at)?;
    let bytes = h
        .session_mut(&ctx)?
        .read_memory(addr, k.size())
        .or_throw(&ctx)?;
    k.decode(&ctx, &bytes)
}

fn prev_mem<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, k: String) -> R<'js> {
    let k = kind(&ctx, &k)?;
    let addr = address(&ctx, h, &at)?;
    match h.session_ref(&ctx)?.prev_memory(addr, k.size()) {
        Some(bytes) => k.decode(&ctx, &bytes),
        None => Ok(undefined(&ctx)),
    }
}

fn bytes<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    at: Value<'js>,
    len: Value<'js>,
) -> rquickjs::Result<String> {
    Ok(values::to_hex(&read_counted(
        h, &ctx, &at, &len, "bytes(n)",
    )?))
}

/// `len` bytes (at most 1 MiB, `what` names the call in the error) at `at`.
fn read_counted<'js>(
    h: &Host,
    ctx: &Ctx<'js>,
    at: &Value<'js>,
    len: &Value<'js>,
    what: &str,
) -> rquickjs::Result<Vec<u8>> {
    let addr = address(ctx, h, at)?;
    let len = values::to_count(ctx, len, 1 << 20, what).or_throw(ctx)?;
    h.session_mut(ctx)?
        .read_memory(addr, len as usize)
        .or_throw(ctx)
}

/// `memory(a).array(type, n)`: n values of one type, read at once.
fn array<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, k: String, count: Value<'js>) -> R<'js> {
    let k = kind(&ctx, &k)?;
    let addr = address(&ctx, h, &at)?;
    let max = (1u64 << 20) / k.size() as u64;
    let count = values::to_count(&ctx, &count, max, "array(type, n)").or_throw(&ctx)?;
    let bytes = h
        .session_mut(&ctx)?
        .read_memory(addr, count as usize * k.size())
        .or_throw(&ctx)?;
    let items = Array::new(ctx.clone())?;
    for chunk in bytes.chunks_exact(k.size()) {
        items.push(k.decode(&ctx, chunk)?)?;
    }
    Ok(items.into_value())
}

/// `memory(a).u8array(n)`: the bytes as a Uint8Array.
fn u8array<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, len: Value<'js>) -> R<'js> {
    let bytes = read_counted(h, &ctx, &at, &len, "u8array(n)")?;
    Ok(rquickjs::TypedArray::<u8>::new(ctx.clone(), bytes)?.into_value())
}

fn str<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, max: Value<'js>) -> rquickjs::Result<String> {
    let addr = address(&ctx, h, &at)?;
    let max = values::to_count(&ctx, &max, 1 << 20, "str(max)").or_throw(&ctx)?;
    let bytes = h
        .session_mut(&ctx)?
        .read_memory_partial(addr, max as usize)
        .or_throw(&ctx)?;
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Ok(escape_invalid_utf8(&bytes[..end]))
}

fn write<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    at: Value<'js>,
    k: String,
    v: Value<'js>,
) -> rquickjs::Result<()> {
    let k = kind(&ctx, &k)?;
    let addr = address(&ctx, h, &at)?;
    let bytes = k
        .encode(&ctx, &v)
        .map_err(|e| throw(&ctx, format!("write: {e}")))?;
    h.session_mut(&ctx)?
        .write_memory(addr, &bytes)
        .or_throw(&ctx)
}

fn write_bytes<'js>(h: &Host, ctx: Ctx<'js>, at: Value<'js>, hex: String) -> rquickjs::Result<()> {
    let addr = address(&ctx, h, &at)?;
    let bytes = values::parse_hex_bytes(&hex).or_throw(&ctx)?;
    h.session_mut(&ctx)?
        .write_memory(addr, &bytes)
        .or_throw(&ctx)
}
