//! JS: `state.fpu` and `state.registers.xmm0`...: `xmm0`-`xmm15` and `ymm0`-`ymm15` as vector
//! values with lane views, `st0`-`st7` as Numbers, `mxcsr` as an integer.

use super::*;
use crate::session::vocabulary::{f64_to_f80, f80_to_f64, FpRegs};

/// The natives this file defines, by the names the prelude calls them.
pub(super) fn install(t: &Natives<'_, '_>) -> rquickjs::Result<()> {
    t.def("vreg_names", vreg_names)?; // the names state.fpu has
    t.def("vreg", vreg)?; // state.registers.xmm0
    t.def("set_vreg", set_vreg)?; // state.registers.xmm0 = v
    t.def("set_vlane", set_vlane)?; // state.registers.xmm0.f64[1] = v
    t.def("fpu_text", fpu_text)?; // String(state.fpu)
    Ok(())
}

fn vreg_names(_: &Host) -> Vec<&'static str> {
    VECTOR_NAMES.to_vec()
}

fn vreg<'js>(h: &Host, ctx: Ctx<'js>, name: String) -> R<'js> {
    let reg = parse(&name).ok_or_else(|| throw(&ctx, unknown(&name)))?;
    let regs = h.session_mut(&ctx)?.fp_regs(None).or_throw(&ctx)?;
    match reg {
        Reg::St(n) => Ok(Value::new_number(
            ctx.clone(),
            regs.st(n).map(f80_to_f64).unwrap_or(f64::NAN),
        )),
        Reg::Mxcsr => u64_to_js(&ctx, u64::from(regs.mxcsr())),
        _ => {
            let bytes = vector_bytes(&regs, reg).or_throw(&ctx)?;
            vector_value(&ctx, &bytes)
        }
    }
}

fn set_vreg<'js>(h: &Host, ctx: Ctx<'js>, name: String, v: Value<'js>) -> rquickjs::Result<()> {
    let reg = parse(&name).ok_or_else(|| throw(&ctx, unknown(&name)))?;
    let what = |e: String| throw(&ctx, format!("registers.{name}: {e}"));
    // The script's value is read before the session is borrowed.
    let value = match reg {
        Reg::Xmm(_) => Written::Vector(vector_from_js(&ctx, &v, 16).map_err(what)?),
        Reg::Ymm(_) => Written::Vector(vector_from_js(&ctx, &v, 32).map_err(what)?),
        Reg::St(_) => Written::Float(
            v.as_number()
                .ok_or_else(|| what("expected a Number".into()))?,
        ),
        Reg::Mxcsr => Written::Word(values::to_sized_bits(&ctx, &v, 32).map_err(what)? as u32),
    };
    let mut session = h.session_mut(&ctx)?;
    let mut regs = session.fp_regs(None).or_throw(&ctx)?;
    let ok = match (reg, value) {
        (Reg::St(n), Written::Float(f)) => regs.set_st(n, f64_to_f80(f)),
        (Reg::Mxcsr, Written::Word(w)) => {
            regs.set_mxcsr(w);
            true
        }
        (reg, Written::Vector(bytes)) => put_vector(&mut regs, reg, &bytes),
        _ => false,
    };
    if !ok {
        return Err(what("this CPU or kernel has no such register".into()));
    }
    session.set_fp_regs(&regs).or_throw(&ctx)
}

fn set_vlane<'js>(
    h: &Host,
    ctx: Ctx<'js>,
    name: String,
    view: String,
    lane: u32,
    v: Value<'js>,
) -> rquickjs::Result<()> {
    let reg = parse(&name).ok_or_else(|| throw(&ctx, unknown(&name)))?;
    let view = View::parse(&view).ok_or_else(|| throw(&ctx, format!("no lane view '{view}'")))?;
    let what = |e: String| throw(&ctx, format!("registers.{name}: {e}"));
    let bytes: Vec<u8> = match view {
        View::F64 => v
            .as_number()
            .ok_or_else(|| what("expected a Number".into()))?
            .to_le_bytes()
            .to_vec(),
        View::F32 => (v
            .as_number()
            .ok_or_else(|| what("expected a Number".into()))? as f32)
            .to_le_bytes()
            .to_vec(),
        View::U64 => values::to_u64_bits(&ctx, &v)
            .map_err(what)?
            .to_le_bytes()
            .to_vec(),
        View::U32 => (values::to_sized_bits(&ctx, &v, 32).map_err(what)? as u32)
            .to_le_bytes()
            .to_vec(),
    };
    let mut session = h.session_mut(&ctx)?;
    let mut regs = session.fp_regs(None).or_throw(&ctx)?;
    let mut whole = vector_bytes(&regs, reg).map_err(what)?;
    let at = lane as usize * view.width();
    let Some(slot) = whole.get_mut(at..at + view.width()) else {
        return Err(what(format!("no lane {lane}")));
    };
    slot.copy_from_slice(&bytes);
    if !put_vector(&mut regs, reg, &whole) {
        return Err(what("cannot be written".into()));
    }
    session.set_fp_regs(&regs).or_throw(&ctx)
}

fn fpu_text<'js>(h: &Host, ctx: Ctx<'js>) -> rquickjs::Result<String> {
    let regs = h.session_mut(&ctx)?.fp_regs(None).or_throw(&ctx)?;
    Ok(listing(&regs))
}

/// Every name, in listing order.
pub(super) const VECTOR_NAMES: [&str; 41] = [
    "mxcsr", "st0", "st1", "st2", "st3", "st4", "st5", "st6", "st7", "xmm0", "xmm1", "xmm2",
    "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
    "xmm14", "xmm15", "ymm0", "ymm1", "ymm2", "ymm3", "ymm4", "ymm5", "ymm6", "ymm7", "ymm8",
    "ymm9", "ymm10", "ymm11", "ymm12", "ymm13", "ymm14", "ymm15",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reg {
    Xmm(usize),
    Ymm(usize),
    St(usize),
    Mxcsr,
}

fn parse(name: &str) -> Option<Reg> {
    // `xmm7`, not `xmm07` or `xmm+7`: the number exactly as the register is named.
    let index = |prefix: &str, max: usize| -> Option<usize> {
        let digits = name.strip_prefix(prefix)?;
        let canonical = !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (digits == "0" || !digits.starts_with('0'));
        let n: usize = digits.parse().ok().filter(|_| canonical)?;
        (n < max).then_some(n)
    };
    if name == "mxcsr" {
        return Some(Reg::Mxcsr);
    }
    index("xmm", 16)
        .map(Reg::Xmm)
        .or_else(|| index("ymm", 16).map(Reg::Ymm))
        .or_else(|| index("st", 8).map(Reg::St))
}

/// Lane views of a vector register's bytes (little-endian lanes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    F64,
    F32,
    U64,
    U32,
}

impl View {
    fn parse(name: &str) -> Option<View> {
        Some(match name {
            "f64" => View::F64,
            "f32" => View::F32,
            "u64" => View::U64,
            "u32" => View::U32,
            _ => return None,
        })
    }

    fn width(self) -> usize {
        match self {
            View::F64 | View::U64 => 8,
            View::F32 | View::U32 => 4,
        }
    }
}

fn vector_bytes(regs: &FpRegs, reg: Reg) -> Result<Vec<u8>, String> {
    match reg {
        Reg::Xmm(n) => Ok(regs.xmm(n).map(|b| b.to_vec()).unwrap_or_default()),
        Reg::Ymm(n) => regs
            .ymm(n)
            .map(|b| b.to_vec())
            .ok_or_else(|| format!("no register ymm{n}: this CPU or kernel has no AVX")),
        _ => Err("not a vector register".into()),
    }
}

fn put_vector(regs: &mut FpRegs, reg: Reg, bytes: &[u8]) -> bool {
    match reg {
        Reg::Xmm(n) => bytes.try_into().is_ok_and(|b| regs.set_xmm(n, b)),
        Reg::Ymm(n) => bytes.try_into().is_ok_and(|b| regs.set_ymm(n, b)),
        _ => false,
    }
}

/// `0x` and the register's hex digits, most significant first.
fn hex_of(bytes: &[u8]) -> String {
    let mut s = String::from("0x");
    for b in bytes.iter().rev() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A float as JavaScript prints it for the usual values: `1.5`, `0`, `1e-300`.
fn float_text(v: f64) -> String {
    let s = format!("{v:?}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

fn lanes_f64(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

fn lane_value<'js>(ctx: &Ctx<'js>, view: View, lane: &[u8]) -> R<'js> {
    let mut raw = [0u8; 8];
    raw[..lane.len()].copy_from_slice(lane);
    let bits = u64::from_le_bytes(raw);
    match view {
        View::F64 => Ok(Value::new_number(ctx.clone(), f64::from_bits(bits))),
        View::F32 => Ok(Value::new_number(
            ctx.clone(),
            f64::from(f32::from_bits(bits as u32)),
        )),
        View::U64 | View::U32 => u64_to_js(ctx, bits),
    }
}

/// `{hex, f64, f32, u64, u32}` for a vector register's bytes.
fn vector_value<'js>(ctx: &Ctx<'js>, bytes: &[u8]) -> R<'js> {
    let o = Object::new(ctx.clone())?;
    o.put("hex", hex_of(bytes))?;
    for (name, view) in [
        ("f64", View::F64),
        ("f32", View::F32),
        ("u64", View::U64),
        ("u32", View::U32),
    ] {
        let lanes = Array::new(ctx.clone())?;
        for lane in bytes.chunks_exact(view.width()) {
            lanes.push(lane_value(ctx, view, lane)?)?;
        }
        o.put(name, lanes)?;
    }
    let f64s: Vec<String> = lanes_f64(bytes).into_iter().map(float_text).collect();
    o.put(
        "line",
        format!("{} f64 [{}]", hex_of(bytes), f64s.join(", ")),
    )?;
    Ok(o.into_value())
}

/// A whole vector register from a script: a hex string (`'0x…'`, most significant digit
/// first) or a non-negative Number or BigInt; it must fit the register.
fn vector_from_js<'js>(ctx: &Ctx<'js>, v: &Value<'js>, size: usize) -> Result<Vec<u8>, String> {
    let digits: String = if let Some(s) = v.as_string() {
        let text = s.to_string().map_err(|e| e.to_string())?;
        let hex = text.trim().strip_prefix("0x").ok_or_else(|| {
            format!("expected a hex string such as '0x3ff8000000000000', got '{text}'")
        })?;
        let mut out = vec![0u8; size];
        let hex: Vec<u8> = hex.bytes().filter(|c| *c != b'_').collect();
        if hex.is_empty() || hex.len() > size * 2 {
            return Err(format!("'{text}' does not fit in {} bits", size * 8));
        }
        for (i, c) in hex.iter().rev().enumerate() {
            let d = (*c as char)
                .to_digit(16)
                .ok_or_else(|| format!("not a hex number: '{text}'"))?;
            out[i / 2] |= (d as u8) << (4 * (i % 2));
        }
        return Ok(out);
    } else if let Some(n) = v.as_number() {
        if n < 0.0 || n.fract() != 0.0 || !n.is_finite() {
            return Err(format!(
                "{} is not a non-negative integer",
                values::describe(ctx, v)
            ));
        }
        format!("{n:.0}")
    } else if v.is_big_int() {
        let text =
            <rquickjs::convert::Coerced<String> as rquickjs::FromJs>::from_js(ctx, v.clone())
                .map_err(|e| e.to_string())?
                .0;
        if text.starts_with('-') {
            return Err("a register value cannot be negative".into());
        }
        text
    } else {
        return Err(format!(
            "expected a hex string, Number or BigInt, got {}",
            values::describe(ctx, v)
        ));
    };
    decimal_to_le(&digits, size).ok_or_else(|| {
        format!(
            "{} does not fit in {} bits",
            values::describe(ctx, v),
            size * 8
        )
    })
}

/// A non-negative decimal integer as `size` little-endian bytes; `None` if it does not fit.
fn decimal_to_le(digits: &str, size: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; size];
    if digits.is_empty() {
        return None;
    }
    for c in digits.chars() {
        let mut carry = c.to_digit(10)?;
        for byte in out.iter_mut() {
            let v = u32::from(*byte) * 10 + carry;
            *byte = v as u8;
            carry = v >> 8;
        }
        if carry != 0 {
            return None;
        }
    }
    Some(out)
}

fn unknown(name: &str) -> String {
    format!("no register '{name}' (xmm0-15, ymm0-15, st0-7, mxcsr)")
}

/// The listing `state.fpu` prints: mxcsr, the x87 stack, every xmm register with its f64
/// lanes, and the ymm registers whose upper half is not zero.
fn listing(regs: &FpRegs) -> String {
    let mut out = format!("mxcsr\t{:#x}", regs.mxcsr());
    let st: Vec<String> = (0..8)
        .filter_map(|n| regs.st(n))
        .map(|b| float_text(f80_to_f64(b)))
        .collect();
    out.push_str(&format!("\nst0-7\t{}", st.join(" ")));
    for n in 0..16 {
        let Some(x) = regs.xmm(n) else { continue };
        let f64s: Vec<String> = lanes_f64(&x).into_iter().map(float_text).collect();
        out.push_str(&format!("\nxmm{n}\t{}\tf64 {}", hex_of(&x), f64s.join(" ")));
    }
    for n in 0..16 {
        if let Some(y) = regs.ymm(n).filter(|y| y[16..].iter().any(|&b| b != 0)) {
            out.push_str(&format!("\nymm{n}\t{}", hex_of(&y)));
        }
    }
    if !regs.has_avx() {
        out.push_str("\n(no AVX: no ymm registers)");
    }
    out
}

enum Written {
    Vector(Vec<u8>),
    Float(f64),
    Word(u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_exactly() {
        assert_eq!(parse("xmm0"), Some(Reg::Xmm(0)));
        assert_eq!(parse("xmm15"), Some(Reg::Xmm(15)));
        assert_eq!(parse("ymm7"), Some(Reg::Ymm(7)));
        assert_eq!(parse("st7"), Some(Reg::St(7)));
        assert_eq!(parse("mxcsr"), Some(Reg::Mxcsr));
        for bad in ["xmm16", "xmm01", "st8", "xmm", "ymm-1", "xmm1a", "st"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert!(VECTOR_NAMES.iter().all(|n| parse(n).is_some()));
    }

    #[test]
    fn decimal_and_hex_forms() {
        assert_eq!(decimal_to_le("258", 2), Some(vec![2, 1]));
        assert_eq!(decimal_to_le("65536", 2), None);
        let max128 = "340282366920938463463374607431768211455";
        assert_eq!(decimal_to_le(max128, 16), Some(vec![0xff; 16]));
        assert_eq!(hex_of(&[0x01, 0x02]), "0x0201");
        assert_eq!(float_text(1.5), "1.5");
        assert_eq!(float_text(0.0), "0");
        assert_eq!(float_text(-2.0), "-2");
    }
}
