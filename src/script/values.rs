//! The numbers decision, in one place. A 64-bit value becomes a JS Number when the Number holds
//! it exactly (|v| <= 2^53) and a BigInt otherwise, so nothing is ever rounded; user-space
//! addresses (< 2^47) are therefore always Numbers. Inputs accept either.

use rquickjs::convert::Coerced;
use rquickjs::{BigInt, Ctx, FromJs, Value};

/// 2^53: the largest integer every smaller integer of which a Number holds exactly.
pub(crate) const MAX_EXACT: u64 = 1 << 53;

pub(crate) fn u64_to_js<'js>(ctx: &Ctx<'js>, v: u64) -> rquickjs::Result<Value<'js>> {
    if v <= MAX_EXACT {
        Ok(Value::new_number(ctx.clone(), v as f64))
    } else {
        Ok(BigInt::from_u64(ctx.clone(), v)?.into_value())
    }
}

/// A DWARF signed integer (up to 128 bits) as JavaScript has it: a Number, a BigInt past
/// 2^53 (exact past 64 bits too).
pub(crate) fn int_to_js<'js>(ctx: &Ctx<'js>, n: i128) -> rquickjs::Result<Value<'js>> {
    if let Ok(i) = i64::try_from(n) {
        i64_to_js(ctx, i)
    } else if let Ok(u) = u64::try_from(n) {
        u64_to_js(ctx, u)
    } else {
        wide_bigint(ctx, &n.to_string())
    }
}

/// A DWARF unsigned integer (up to 128 bits): `int_to_js`'s rule, never read as signed (a
/// u128 above 2^127 was a negative number).
pub(crate) fn uint_to_js<'js>(ctx: &Ctx<'js>, n: u128) -> rquickjs::Result<Value<'js>> {
    match u64::try_from(n) {
        Ok(u) => u64_to_js(ctx, u),
        Err(_) => wide_bigint(ctx, &n.to_string()),
    }
}

/// A BigInt past 64 bits, from its decimal digits: a literal is parsed, no script's global
/// is called (rquickjs makes BigInts from 64-bit values only).
fn wide_bigint<'js>(ctx: &Ctx<'js>, digits: &str) -> rquickjs::Result<Value<'js>> {
    debug_assert!(digits.bytes().all(|b| b.is_ascii_digit() || b == b'-'));
    ctx.eval::<Value, _>(format!("{digits}n"))
}

/// A float from the target as a Number, its sign kept: rquickjs stores a float equal to an
/// integer as that integer, so a `-0.0` became `0` (`Object.is(v.value, -0)` false,
/// `1 / v` Infinity).
pub(crate) fn float_to_js<'js>(ctx: &Ctx<'js>, f: f64) -> Value<'js> {
    if f == 0.0 && f.is_sign_negative() {
        Value::new_float(ctx.clone(), f)
    } else {
        Value::new_number(ctx.clone(), f)
    }
}

pub(crate) fn i64_to_js<'js>(ctx: &Ctx<'js>, v: i64) -> rquickjs::Result<Value<'js>> {
    if v.unsigned_abs() <= MAX_EXACT {
        Ok(Value::new_number(ctx.clone(), v as f64))
    } else {
        Ok(BigInt::from_i64(ctx.clone(), v)?.into_value())
    }
}

/// Error messages are one readable line: beyond this many bytes the middle is cut.
pub(crate) const MAX_MESSAGE: usize = 480;

/// `text` if it is short, else its start and end around `…[N bytes cut]…` (the end often
/// holds a hint such as `did you mean main?`).
pub(crate) fn clip_message(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_MESSAGE {
        return text.into();
    }
    let mut head = MAX_MESSAGE * 2 / 3;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (MAX_MESSAGE - head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}…[{} bytes cut]…{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
    .into()
}

/// A short description of a value for error messages: `-5`, `'main'`, `undefined`.
pub(crate) fn describe<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> String {
    if v.is_string() {
        let s: String = v.get().unwrap_or_default();
        return format!("'{}'", s.chars().take(60).collect::<String>());
    }
    if v.is_function() {
        return "a function".into();
    }
    if v.is_array() {
        return "an array".into();
    }
    if v.is_object() {
        return "an object".into();
    }
    let text = Coerced::<String>::from_js(ctx, v.clone())
        .map(|c| c.0)
        .unwrap_or_else(|_| "?".into());
    if v.is_big_int() {
        format!("{text}n")
    } else {
        text
    }
}

/// An integer argument (Number without fraction, or BigInt) widened for range checks.
pub(crate) fn to_integer<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Result<i128, String> {
    if let Some(n) = v.as_number() {
        if !n.is_finite() || n.fract() != 0.0 {
            return Err(format!("expected an integer, got {}", describe(ctx, v)));
        }
        if n.abs() > 1.9e38 {
            return Err(format!("{} is out of range", describe(ctx, v)));
        }
        return Ok(n as i128);
    }
    if v.is_big_int() {
        let text = Coerced::<String>::from_js(ctx, v.clone())
            .map_err(|e| e.to_string())?
            .0;
        return text
            .parse::<i128>()
            .map_err(|_| format!("{text}n is out of range"));
    }
    if let Some(n) = numeric_of(ctx, v)? {
        return to_integer(ctx, &n).map_err(|_| no_integer(ctx, v));
    }
    Err(format!(
        "expected a Number or BigInt, got {}",
        describe(ctx, v)
    ))
}

/// A value with no integer, named by its printed text: `{a: 1, b: 2}`, `<optimized out>`.
fn no_integer<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> String {
    let text = Coerced::<String>::from_js(ctx, v.clone())
        .map(|t| t.0)
        .unwrap_or_else(|_| describe(ctx, v));
    let head: String = text.chars().take(80).collect();
    let cut = if head.len() < text.len() { "…" } else { "" };
    format!("{head}{cut} has no integer value (a value's address is its .addr)")
}

/// The number an object stands for, by its own `Symbol.toPrimitive('number')`: a typed value
/// (`state.var('p')`) is its address or value wherever a number goes. `None` for an object
/// without one, or whose primitive is no Number or BigInt.
fn numeric_of<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Result<Option<Value<'js>>, String> {
    let Some(obj) = v.as_object() else {
        return Ok(None);
    };
    let key = rquickjs::Symbol::to_primitive(ctx.clone()).as_atom();
    let Ok(f) = obj.get::<_, Value>(key) else {
        let _ = ctx.catch();
        return Ok(None);
    };
    let Some(f) = f.as_function() else {
        return Ok(None);
    };
    match f.call::<_, Value>((rquickjs::function::This(obj.clone()), "number")) {
        Ok(p) if p.is_number() || p.is_big_int() => Ok(Some(p)),
        Ok(_) => Ok(None),
        Err(_) => {
            let thrown = ctx.catch();
            let message = thrown
                .as_object()
                .and_then(|o| o.get::<_, String>("message").ok())
                .unwrap_or_default();
            // An aggregate, which has no number: named by its text, as one whose primitive
            // is no number is.
            if message.contains(" is no number") {
                return Err(no_integer(ctx, v));
            }
            if !message.is_empty() {
                return Err(message);
            }
            Err(format!(
                "its Symbol.toPrimitive threw {}",
                describe(ctx, &thrown)
            ))
        }
    }
}

/// A 64-bit value to store: 0..2^64-1, or a negative down to -2^63 taken as two's complement.
pub(crate) fn to_u64_bits<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Result<u64, String> {
    let n = to_integer(ctx, v)?;
    if n < -(1i128 << 63) || n > u64::MAX as i128 {
        return Err(format!("{} does not fit in 64 bits", describe(ctx, v)));
    }
    Ok(n as u64)
}

/// A value that must fit `bits` bits, signed or unsigned (two's complement either way).
pub(crate) fn to_sized_bits<'js>(ctx: &Ctx<'js>, v: &Value<'js>, bits: u32) -> Result<u64, String> {
    let n = to_integer(ctx, v)?;
    let min = -(1i128 << (bits - 1));
    let max = (1i128 << bits) - 1;
    if n < min || n > max {
        return Err(format!("{} does not fit in {bits} bits", describe(ctx, v)));
    }
    Ok((n as u64)
        & if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        })
}

/// An address: a non-negative Number or BigInt below 2^64. Strings are symbol expressions and
/// are resolved by the caller.
pub(crate) fn to_address<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Result<u64, String> {
    let n = to_integer(ctx, v).map_err(|e| format!("bad address: {e}"))?;
    if n < 0 {
        return Err(format!("bad address {}: negative", describe(ctx, v)));
    }
    if n > u64::MAX as i128 {
        return Err(format!("bad address {}: beyond 64 bits", describe(ctx, v)));
    }
    Ok(n as u64)
}

/// A count such as `step(n)` or `bytes(n)`: a non-negative integer up to `max`.
pub(crate) fn to_count<'js>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
    max: u64,
    what: &str,
) -> Result<u64, String> {
    let n = to_integer(ctx, v).map_err(|e| format!("{what}: {e}"))?;
    if n < 0 || n > max as i128 {
        return Err(format!(
            "{what}: {} is not between 0 and {max}",
            describe(ctx, v)
        ));
    }
    Ok(n as u64)
}

/// Parses a hex byte string such as `"90 90cc"` or `"0x9090"`.
pub(crate) fn parse_hex_bytes(text: &str) -> Result<Vec<u8>, String> {
    let cleaned: String = text
        .trim()
        .trim_start_matches("0x")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if !cleaned.len().is_multiple_of(2) {
        return Err(format!("hex string has an odd number of digits: '{text}'"));
    }
    (0..cleaned.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&cleaned[i..i + 2], 16)
                .map_err(|_| format!("not a hex byte string: '{text}'"))
        })
        .collect()
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_bytes() {
        assert_eq!(parse_hex_bytes("90 cc").unwrap(), vec![0x90, 0xcc]);
        assert_eq!(parse_hex_bytes("0x0102").unwrap(), vec![1, 2]);
        assert!(parse_hex_bytes("123").is_err());
        assert!(parse_hex_bytes("zz").is_err());
        assert_eq!(to_hex(&[0, 0xab]), "00ab");
    }

    #[test]
    fn long_messages_are_cut_in_the_middle() {
        assert_eq!(clip_message("short"), "short");
        let long = format!(
            "unknown symbol '{}' (did you mean main?)",
            "é".repeat(100_000)
        );
        let cut = clip_message(&long);
        assert!(cut.len() < MAX_MESSAGE + 40, "{}", cut.len());
        assert!(cut.starts_with("unknown symbol 'éé"));
        assert!(cut.ends_with("éé' (did you mean main?)"));
        assert!(cut.contains(" bytes cut]"));
    }

    #[test]
    fn numbers_are_exact() {
        let rt = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&rt).unwrap();
        context.with(|ctx| {
            let small = u64_to_js(&ctx, MAX_EXACT).unwrap();
            assert!(small.is_number());
            let big = u64_to_js(&ctx, u64::MAX).unwrap();
            assert!(big.is_big_int());
            assert_eq!(to_u64_bits(&ctx, &big).unwrap(), u64::MAX);
            let neg: Value = ctx.eval("-1").unwrap();
            assert_eq!(to_u64_bits(&ctx, &neg).unwrap(), u64::MAX);
            assert!(to_address(&ctx, &neg).is_err());
            let frac: Value = ctx.eval("1.5").unwrap();
            assert!(to_address(&ctx, &frac).is_err());
            let too_big: Value = ctx.eval("2n ** 64n").unwrap();
            assert!(to_address(&ctx, &too_big).is_err());
            let v: Value = ctx.eval("300").unwrap();
            assert!(to_sized_bits(&ctx, &v, 8).is_err());
            let v: Value = ctx.eval("-128").unwrap();
            assert_eq!(to_sized_bits(&ctx, &v, 8).unwrap(), 0x80);
        });
    }
}
