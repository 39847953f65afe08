//! How numbers, characters, strings and enumerators are spelled in a value's text.

use crate::symbols::dwarf::target::Target;
use crate::symbols::dwarf::types::{Encoding, Kind, Type};

/// How a character string is spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Text {
    /// `char`: bytes, shown as UTF-8 where valid.
    Narrow,
    /// `wchar_t`: 4-byte code points, `L"…"`.
    Wide,
    /// `char16_t`: UTF-16, `u"…"`.
    Utf16,
    /// `char32_t`: code points, `U"…"`.
    Utf32,
}

impl Text {
    pub(super) fn unit(self) -> usize {
        match self {
            Text::Narrow => 1,
            Text::Utf16 => 2,
            Text::Wide | Text::Utf32 => 4,
        }
    }

    pub(super) fn prefix(self) -> &'static str {
        match self {
            Text::Narrow => "",
            Text::Wide => "L",
            Text::Utf16 => "u",
            Text::Utf32 => "U",
        }
    }
}

/// `[`, `(`), innermost first; brackets inside literals do not count.
pub(super) fn unclosed(text: &str) -> String {
    let mut open = Vec::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' => open.push('}'),
            '[' => open.push(']'),
            '(' => open.push(')'),
            '}' | ']' | ')' => {
                open.pop();
            }
            _ => {}
        }
    }
    // A cut inside a literal closes the literal first.
    quote
        .into_iter()
        .chain(open.iter().rev().copied())
        .collect()
}

/// Shortest text that reads back as the same number (`0.6666666666666666`, `1.5`, `0.1`
/// for a float that holds 0.1f), with an exponent far from 1 (`4.17767552971e-314`,
/// `1e300`): the garbage double of an uninitialized local would otherwise print as 300
/// digits.
pub fn float_text(f: f64, single: bool) -> String {
    if f.is_nan() {
        // gdb's spelling keeps the sign and the mantissa bits: x86's default NaN (0.0/0.0)
        // is `-nan(0x8000000000000)`, a payload-carrying one tells where it came from.
        let (negative, mantissa) = if single {
            let b = (f as f32).to_bits();
            (b >> 31 != 0, u64::from(b & 0x7f_ffff))
        } else {
            let b = f.to_bits();
            (b >> 63 != 0, b & ((1 << 52) - 1))
        };
        return format!("{}nan({mantissa:#x})", if negative { "-" } else { "" });
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    // Debug is the shortest round-trip text, switching to an exponent below 1e-5 and
    // above 1e16; its `.0` on integral values is dropped (`2`, as C programmers read it).
    let text = if single {
        format!("{:?}", f as f32)
    } else {
        format!("{f:?}")
    };
    match text.strip_suffix(".0") {
        Some(integral) => integral.to_string(),
        None => text,
    }
}

/// An enumerator's text: its name after `prefix` (`geo::Color::` for a C++ scoped enum).
pub(super) fn enum_text(ty: &Type, n: i128, prefix: &str) -> String {
    let Kind::Enum { enumerators, .. } = &ty.kind else {
        return n.to_string();
    };
    // An enum declared without enumerators is a distinct integer type, not a set of names:
    // `std::byte` is a byte (`0xa5`, as it is written), any other its number.
    if enumerators.is_empty() {
        return match ty.name.as_deref() {
            Some("byte") | Some("std::byte") if (0..=0xff).contains(&n) => format!("{n:#04x}"),
            _ => n.to_string(),
        };
    }
    if let Some((name, _)) = enumerators.iter().find(|(_, v)| *v == n) {
        return format!("{prefix}{name}");
    }
    // A flag enum (every enumerator a distinct bit): the value as an OR of flags.
    let flags = !enumerators.is_empty()
        && enumerators
            .iter()
            .all(|(_, v)| *v > 0 && (*v & (*v - 1)) == 0);
    if flags && n > 0 {
        let mut rest = n;
        let mut parts = Vec::new();
        for (name, v) in enumerators {
            if rest & v != 0 {
                parts.push(format!("{prefix}{name}"));
                rest &= !v;
            }
        }
        if !parts.is_empty() {
            if rest != 0 {
                parts.push(format!("{rest:#x}"));
            }
            return parts.join(" | ");
        }
    }
    format!("{n} (no enumerator)")
}

pub(super) fn char_literal(c: u32, enc: Encoding) -> String {
    let byte = if enc == Encoding::SignedChar {
        c & 0xff
    } else {
        c
    };
    match byte {
        0 => "'\\0'".into(),
        0x0a => "'\\n'".into(),
        0x09 => "'\\t'".into(),
        0x0d => "'\\r'".into(),
        0x27 => "'\\''".into(),
        0x5c => "'\\\\'".into(),
        0x20..=0x7e => format!("'{}'", char::from(byte as u8)),
        _ if byte > 0x7f && enc == Encoding::Utf => match char::from_u32(byte) {
            Some(ch) => format!("'{ch}'"),
            None => format!("'\\u{{{byte:x}}}'"),
        },
        _ if byte < 0x100 => format!("'\\x{byte:02x}'"),
        _ => match char::from_u32(byte) {
            Some(ch) => format!("'{ch}'"),
            None => format!("'\\u{{{byte:x}}}'"),
        },
    }
}

pub(super) fn code_pointer(addr: u64, t: &dyn Target) -> String {
    match t.symbolize(addr) {
        Some(s) => format!("{addr:#x} <{s}>"),
        None => format!("{addr:#x}"),
    }
}

pub(super) fn hex_bytes(b: &[u8]) -> String {
    let shown: String = b.iter().take(64).map(|x| format!("{x:02x}")).collect();
    if b.len() > 64 {
        format!("{shown}…")
    } else {
        shown
    }
}

/// `bytes` as code units of `unit` bytes (1: UTF-8 where valid, 2: UTF-16, 4: code points),
/// quoted, NULs shown escaped.
pub(crate) fn quoted_units(bytes: &[u8], unit: usize, max: usize, wide: bool) -> String {
    let kind = match unit {
        2 => Text::Utf16,
        4 if wide => Text::Wide,
        4 => Text::Utf32,
        _ => Text::Narrow,
    };
    string_literal(bytes, kind, max, false, false)
}

/// A quoted string from code units. `stop_at_nul`: the text ends at the first NUL when only
/// NULs follow (a C string in a buffer); otherwise everything is shown with NULs escaped.
pub(super) fn string_literal(
    bytes: &[u8],
    kind: Text,
    max: usize,
    stop_at_nul: bool,
    rust: bool,
) -> String {
    let unit = kind.unit();
    let units: Vec<u32> = bytes
        .chunks(unit)
        .filter(|c| c.len() == unit)
        .map(|c| {
            let mut raw = [0u8; 4];
            raw[..unit].copy_from_slice(c);
            u32::from_le_bytes(raw)
        })
        .collect();
    let mut end = units.len();
    if stop_at_nul {
        if let Some(first_nul) = units.iter().position(|&u| u == 0) {
            if units[first_nul..].iter().all(|&u| u == 0) {
                end = first_nul;
            }
        }
    }
    let units = &units[..end];
    let mut s = String::new();
    let mut shown = 0;
    let mut truncated = false;
    // A NUL right before an octal digit is written `\000`, as C reads it (`"\05"` would
    // be the one character 5 to a C reader; the bytes were 0 then '5').
    let nul_before = |s: &str| {
        s.ends_with("\\0")
            && s[..s.len() - 1]
                .bytes()
                .rev()
                .take_while(|&c| c == b'\\')
                .count()
                % 2
                == 1
    };
    let push = |s: &mut String, ch: Option<char>, raw: u32| match ch {
        Some('"') => s.push_str("\\\""),
        Some('\\') => s.push_str("\\\\"),
        Some('\n') => s.push_str("\\n"),
        Some('\t') => s.push_str("\\t"),
        Some('\r') => s.push_str("\\r"),
        Some('\0') => s.push_str("\\0"),
        Some(c @ '0'..='7') if nul_before(s) => {
            s.push_str("00");
            s.push(c);
        }
        Some(c) if !c.is_control() => s.push(c),
        _ if raw < 0x100 => s.push_str(&format!("\\x{raw:02x}")),
        _ => s.push_str(&format!("\\u{{{raw:x}}}")),
    };
    match kind {
        Text::Narrow => {
            let raw: Vec<u8> = units.iter().map(|&u| u as u8).collect();
            let mut rest: &[u8] = &raw;
            while !rest.is_empty() {
                if shown >= max {
                    truncated = true;
                    break;
                }
                match std::str::from_utf8(rest) {
                    Ok(text) => {
                        for ch in text.chars() {
                            if shown >= max {
                                truncated = true;
                                break;
                            }
                            push(&mut s, Some(ch), ch as u32);
                            shown += 1;
                        }
                        break;
                    }
                    Err(e) => {
                        let (good, bad) = rest.split_at(e.valid_up_to());
                        for ch in std::str::from_utf8(good).unwrap_or_default().chars() {
                            if shown >= max {
                                truncated = true;
                                break;
                            }
                            push(&mut s, Some(ch), ch as u32);
                            shown += 1;
                        }
                        if truncated {
                            break;
                        }
                        push(&mut s, None, u32::from(bad[0]));
                        shown += 1;
                        rest = &bad[1..];
                    }
                }
            }
        }
        Text::Utf16 => {
            for ch in char::decode_utf16(units.iter().map(|&u| u as u16)) {
                if shown >= max {
                    truncated = true;
                    break;
                }
                match ch {
                    Ok(c) => push(&mut s, Some(c), c as u32),
                    Err(e) => push(&mut s, None, u32::from(e.unpaired_surrogate())),
                }
                shown += 1;
            }
        }
        Text::Wide | Text::Utf32 => {
            for &u in units {
                if shown >= max {
                    truncated = true;
                    break;
                }
                push(&mut s, char::from_u32(u), u);
                shown += 1;
            }
        }
    }
    let _ = rust;
    let mut out = format!("{}\"{s}\"", kind.prefix());
    if truncated {
        out.push('…');
    }
    out
}

/// The content of a quoted literal from `string_literal`, unescaped for scripts.
pub(super) fn unquote(lit: &str) -> String {
    let wide = lit.starts_with(['L', 'u', 'U']);
    let body = lit
        .trim_end_matches('…')
        .trim_start_matches(['L', 'u', 'U'])
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(lit);
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => {
                out.push('\0');
                // `\000`: the NUL written before a digit.
                if chars.as_str().starts_with("00") {
                    chars.next();
                    chars.next();
                }
            }
            Some('x') => {
                let h: String = chars.by_ref().take(2).collect();
                // A byte past ASCII escaped is one that is no UTF-8 (valid text is shown as
                // itself): the replacement character, as a std::string's or a Rust String's
                // plain data has it, never the Latin-1 letter of that number, which reads as
                // text the program does not hold.
                match u8::from_str_radix(&h, 16) {
                    Ok(b) if b < 0x80 || wide => out.push(char::from(b)),
                    Ok(_) => out.push(char::REPLACEMENT_CHARACTER),
                    Err(_) => {}
                }
            }
            Some('u') => {
                let code: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                if let Some(ch) = u32::from_str_radix(&code, 16).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Typedefs that name a byte as a number: `uint8_t` and its spellings in libc, the kernel and
/// glib.
pub(super) fn is_byte_typedef(name: &str) -> bool {
    let name = name.strip_prefix("std::").unwrap_or(name);
    matches!(
        name,
        "uint8_t"
            | "int8_t"
            | "__uint8_t"
            | "__int8_t"
            | "u_int8_t"
            | "__u8"
            | "__s8"
            | "u8"
            | "s8"
            | "guint8"
            | "gint8"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::dwarf::types::TypeId;

    #[test]
    fn strings_stop_at_trailing_nuls_and_escape_the_rest() {
        assert_eq!(
            string_literal(b"abc\0\0\0", Text::Narrow, 100, true, false),
            "\"abc\""
        );
        assert_eq!(
            string_literal(b"\0\0\xc0?", Text::Narrow, 100, true, false),
            "\"\\0\\0\\xc0?\""
        );
        assert_eq!(
            string_literal(b"hello", Text::Narrow, 3, true, false),
            "\"hel\"…"
        );
        let wide: Vec<u8> = "wide ü"
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        assert_eq!(
            string_literal(&wide, Text::Wide, 100, true, false),
            "L\"wide ü\""
        );
        let utf16: Vec<u8> = "six".encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
        assert_eq!(
            string_literal(&utf16, Text::Utf16, 100, true, false),
            "u\"six\""
        );
        assert_eq!(unquote("\"a\\n\\\"b\\x41\""), "a\n\"bA");
        // A NUL before an octal digit is C's three-digit escape, and reads back.
        let lit = string_literal(b"\0\x005@\0x", Text::Narrow, 100, true, false);
        assert_eq!(lit, "\"\\0\\0005@\\0x\"");
        assert_eq!(unquote(&lit), "\0\u{0}5@\0x");
        // Bytes that are no UTF-8 are replaced, never read as Latin-1 letters.
        assert_eq!(unquote("\"\\xe9\\xc0z\""), "\u{fffd}\u{fffd}z");
    }

    #[test]
    fn floats_and_chars() {
        assert_eq!(float_text(2.0 / 3.0, false), "0.6666666666666666");
        assert_eq!(float_text(0.1f32 as f64, true), "0.1");
        assert_eq!(float_text(-1.5, false), "-1.5");
        assert_eq!(float_text(2.0, false), "2");
        assert_eq!(unclosed("{a: [1, 2], b: {c: \"x{\", d: …"), "}}");
        assert_eq!(unclosed("(5, '(', [\"]\\\"\", …"), "])");
        assert_eq!(unclosed("{a: 1}"), "");
        assert_eq!(unclosed("{s: \"ab…"), "\"}");
        assert_eq!(float_text(4.1776755297e-314, false), "4.1776755297e-314");
        assert_eq!(float_text(f64::from_bits(1), false), "5e-324");
        assert_eq!(float_text(1e300, false), "1e300");
        // NaNs as gdb prints them: sign and mantissa bits.
        assert_eq!(
            float_text(f64::from_bits(0xfff8_0000_0000_0000), false),
            "-nan(0x8000000000000)"
        );
        assert_eq!(
            float_text(f64::from_bits(0x7ff0_0000_0000_0001), false),
            "nan(0x1)"
        );
        assert_eq!(
            float_text(
                f64::from(std::hint::black_box(f32::from_bits(0xffc0_0000))),
                true
            ),
            "-nan(0x400000)"
        );
        assert_eq!(
            float_text(
                f64::from(std::hint::black_box(f32::from_bits(0x7fc0_0001))),
                true
            ),
            "nan(0x400001)"
        );
        assert_eq!(float_text(-f64::MAX, false), "-1.7976931348623157e308");
        assert_eq!(float_text(1.0e-40f32 as f64, true), "1e-40");
        assert_eq!(char_literal(b'q' as u32, Encoding::SignedChar), "'q'");
        assert_eq!(char_literal(0xfb, Encoding::SignedChar), "'\\xfb'");
        assert_eq!(char_literal(0xe9, Encoding::Utf), "'é'");
    }

    #[test]
    fn enums_by_name_flags_or_honest_number() {
        let t = |e: Vec<(&str, i128)>| Type {
            id: TypeId(1),
            name: None,
            size: Some(4),
            kind: Kind::Enum {
                enumerators: e.into_iter().map(|(n, v)| (n.to_string(), v)).collect(),
                signed: false,
                scoped: false,
            },
            rust: false,
            c: true,
        };
        let color = t(vec![("RED", 0), ("GREEN", 1), ("BLUE", 5)]);
        assert_eq!(enum_text(&color, 5, ""), "BLUE");
        assert_eq!(enum_text(&color, 6, ""), "6 (no enumerator)");
        assert_eq!(enum_text(&color, 1, "geo::Color::"), "geo::Color::GREEN");
        assert_eq!(enum_text(&color, 6, "geo::Color::"), "6 (no enumerator)");
        let perm = t(vec![("P_READ", 1), ("P_WRITE", 2), ("P_EXEC", 4)]);
        assert_eq!(enum_text(&perm, 5, ""), "P_READ | P_EXEC");
        assert_eq!(enum_text(&perm, 9, ""), "P_READ | 0x8");
        assert_eq!(enum_text(&perm, 0, ""), "0 (no enumerator)");
        assert_eq!(enum_text(&perm, 3, "io::"), "io::P_READ | io::P_WRITE");
    }
}

/// Significant digits a `long double` is shown with: enough to tell any two apart (its
/// 64-bit mantissa needs 20; gdb shows 21 too).
const F80_DIGITS: usize = 21;

/// An x87 80-bit extended value (a `long double`, the first 10 of its bytes) as text, exact
/// in its own range rather than rounded through f64 (where `3.6e-4951L` would be `0` and
/// `1 + 2^-60` would be `1`): at most 21 significant digits, trailing zeros dropped, in
/// `float_text`'s notation (an exponent below 1e-5 and from 1e16 up).
pub(super) fn f80_text(b: &[u8]) -> String {
    let mant = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { "-" } else { "" };
    let exp = i32::from(se & 0x7fff);
    if exp == 0x7fff {
        return match mant << 1 {
            0 => format!("{sign}inf"),
            _ => format!("{sign}nan({mant:#x})"),
        };
    }
    if mant == 0 {
        return format!("{sign}0");
    }
    // value = mant * 2^e2 (a denormal's exponent is that of the smallest normal).
    let e2 = exp.max(1) - 16383 - 63;
    let mut big = Big::from(mant);
    let mut dexp: i32 = 0;
    if e2 >= 0 {
        big.shl(e2 as u32);
    } else {
        // mant / 2^k = mant * 5^k / 10^k.
        let k = -e2;
        for _ in 0..k / 13 {
            big.mul_small(1_220_703_125); // 5^13
        }
        big.mul_small(5u32.pow((k % 13) as u32));
        dexp = -k;
    }
    let mut digits = big.decimal().into_bytes();
    // The value is 0.d1d2... * 10^point.
    let mut point = digits.len() as i32 + dexp;
    if digits.len() > F80_DIGITS {
        let rest = digits.split_off(F80_DIGITS);
        let half = rest[0] > b'5'
            || (rest[0] == b'5'
                && (rest[1..].iter().any(|&d| d != b'0') || digits[F80_DIGITS - 1] % 2 == 1));
        if half {
            let mut i = digits.len();
            loop {
                if i == 0 {
                    digits.insert(0, b'1');
                    digits.pop();
                    point += 1;
                    break;
                }
                i -= 1;
                if digits[i] == b'9' {
                    digits[i] = b'0';
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
    }
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    let d = String::from_utf8(digits).unwrap_or_default();
    let e10 = point - 1;
    let text = if !(-5..16).contains(&e10) {
        match d.split_at(1) {
            (first, "") => format!("{first}e{e10}"),
            (first, rest) => format!("{first}.{rest}e{e10}"),
        }
    } else if point <= 0 {
        format!("0.{}{d}", "0".repeat((-point) as usize))
    } else if point as usize >= d.len() {
        format!("{d}{}", "0".repeat(point as usize - d.len()))
    } else {
        let (int, frac) = d.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{text}")
}

/// An unsigned integer of any size, little-endian 32-bit limbs: only what `f80_text` needs.
struct Big(Vec<u32>);

impl Big {
    fn from(n: u64) -> Big {
        Big(vec![n as u32, (n >> 32) as u32])
    }

    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn shl(&mut self, bits: u32) {
        let (words, bits) = ((bits / 32) as usize, bits % 32);
        if bits > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let v = (*limb << bits) | carry;
                carry = *limb >> (32 - bits);
                *limb = v;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, words));
    }

    /// Its decimal digits, most significant first.
    fn decimal(mut self) -> String {
        let mut chunks = Vec::new();
        while self.0.iter().any(|&l| l != 0) {
            let mut rem = 0u64;
            for limb in self.0.iter_mut().rev() {
                let v = (rem << 32) | u64::from(*limb);
                *limb = (v / 1_000_000_000) as u32;
                rem = v % 1_000_000_000;
            }
            while self.0.last() == Some(&0) {
                self.0.pop();
            }
            chunks.push(rem as u32);
        }
        let mut s = chunks
            .pop()
            .map_or_else(|| "0".to_string(), |c| c.to_string());
        for c in chunks.iter().rev() {
            s.push_str(&format!("{c:09}"));
        }
        s
    }
}

#[cfg(test)]
mod f80_tests {
    use super::f80_text;

    fn f80(mant: u64, se: u16) -> [u8; 10] {
        let mut b = [0u8; 10];
        b[..8].copy_from_slice(&mant.to_le_bytes());
        b[8..].copy_from_slice(&se.to_le_bytes());
        b
    }

    #[test]
    fn long_doubles_print_exactly_in_their_own_range() {
        assert_eq!(f80_text(&f80(0xC000_0000_0000_0000, 16383)), "1.5");
        assert_eq!(f80_text(&f80(0x8000_0000_0000_0000, 16383 + 3)), "8");
        assert_eq!(
            f80_text(&f80(0xA000_0000_0000_0000, 0x8000 | 16382)),
            "-0.625"
        );
        // 1 + 2^-60: f64 would say 1.
        assert_eq!(
            f80_text(&f80(0x8000_0000_0000_0008, 16383)),
            "1.00000000000000000087"
        );
        // 0.1L as gdb prints it.
        assert_eq!(
            f80_text(&f80(0xCCCC_CCCC_CCCC_CCCD, 16379)),
            "0.100000000000000000001"
        );
        // The smallest denormal, far below f64's range (gdb: 3.64519953188247460253e-4951).
        assert_eq!(f80_text(&f80(1, 0)), "3.64519953188247460253e-4951");
        assert_eq!(
            f80_text(&f80(0x8000_0000_0000_0000, 16383 + 100)),
            "1.2676506002282294015e30"
        );
        assert_eq!(f80_text(&f80(0x8000_0000_0000_0000, 0x7fff)), "inf");
        assert_eq!(f80_text(&f80(0, 0x8000)), "-0");
    }
}
