//! A typed value: a type and where its bytes are, and what a scalar's bytes mean. Members,
//! elements and pointees are resolved only when asked for (`access`, reading target memory
//! through `Target`); the same value serves printing (`render`) and navigation from scripts.

use super::location::Place;
use super::types::{Encoding, Kind, Type, TypeId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    /// `None` is `void`.
    pub ty: Option<TypeId>,
    pub place: Place,
    /// A bit-field: (bit offset from the place, width).
    pub bits: Option<(u64, u64)>,
}

/// A value reduced to a number, a flag or a pointer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Signed(i128),
    Unsigned(u128),
    Float(f64),
    Bool(bool),
    /// A character of the given encoding (`char`, `wchar_t`, `char32_t`, Rust `char`): its
    /// code, negative for a negative `signed char`.
    Char(i64, Encoding),
    Pointer(u64),
    Enum(i128),
    /// A `_Complex` number: real and imaginary parts.
    Complex(f64, f64),
}

impl Value {
    pub fn at(ty: Option<TypeId>, addr: u64) -> Value {
        Value {
            ty,
            place: Place::Memory(addr),
            bits: None,
        }
    }

    /// Where the value is in memory (also when printing works on a copy of it).
    pub fn address(&self) -> Option<u64> {
        match self.place {
            Place::Memory(a) if self.bits.is_none() => Some(a),
            Place::Bytes {
                origin: Some(a), ..
            } if self.bits.is_none() => Some(a),
            _ => None,
        }
    }
}

/// A place `offset` bytes further.
pub fn shift(place: &Place, offset: u64) -> Place {
    match place {
        Place::Memory(a) => Place::Memory(a.wrapping_add(offset)),
        Place::Bytes {
            bytes,
            unknown,
            origin,
        } => {
            let start = (offset as usize).min(bytes.len());
            Place::Bytes {
                origin: origin.map(|a| a.wrapping_add(offset)),
                bytes: bytes[start..].to_vec(),
                unknown: unknown
                    .iter()
                    .filter(|(_, b)| *b > offset)
                    .map(|(a, b)| (a.saturating_sub(offset), b - offset))
                    .collect(),
            }
        }
        Place::Gone(g) => Place::Gone(g.clone()),
    }
}

/// Decodes the bytes of a scalar type.
pub fn decode(ty: &Type, bytes: &[u8], bits: Option<(u64, u64)>) -> Scalar {
    if ty.kind == Kind::Base(Encoding::ComplexFloat) {
        return complex(bytes);
    }
    let mut raw = [0u8; 16];
    let n = bytes.len().min(16);
    raw[..n].copy_from_slice(&bytes[..n]);
    let mut word = u128::from_le_bytes(raw);
    let mut width = (n * 8) as u32;
    if let Some((off, w)) = bits {
        word >>= off % 8;
        width = (w as u32).min(128);
        if width < 128 {
            word &= (1u128 << width) - 1;
        }
    }
    let signed = |w: u128| -> i128 {
        if width == 0 || width >= 128 {
            return w as i128;
        }
        let shift = 128 - width;
        ((w << shift) as i128) >> shift
    };
    match &ty.kind {
        Kind::Pointer(_) | Kind::Reference { .. } => Scalar::Pointer(word as u64),
        Kind::Enum { signed: s, .. } => Scalar::Enum(if *s { signed(word) } else { word as i128 }),
        // C++'s wchar_t is a signed base type and char8_t an unsigned one, by their DWARF
        // encodings: characters by their names (a code point, a UTF-8 code unit).
        Kind::Base(Encoding::Signed) if ty.name.as_deref() == Some("wchar_t") => {
            Scalar::Char(signed(word) as i64, Encoding::Utf)
        }
        Kind::Base(Encoding::Unsigned) if ty.name.as_deref() == Some("char8_t") => {
            Scalar::Char(word as i64, Encoding::UnsignedChar)
        }
        Kind::Base(enc) => match enc {
            Encoding::Signed => Scalar::Signed(signed(word)),
            Encoding::Float => match n {
                4 => Scalar::Float(f32::from_bits(word as u32) as f64),
                8 => Scalar::Float(f64::from_bits(word as u64)),
                // x87 80-bit extended (long double), in 16 bytes.
                10 | 16 => Scalar::Float(f80_to_f64(&raw[..10])),
                _ => Scalar::Unsigned(word),
            },
            Encoding::Bool => Scalar::Bool(word != 0),
            Encoding::SignedChar => Scalar::Char(signed(word) as i64, *enc),
            Encoding::UnsignedChar | Encoding::Utf => Scalar::Char(word as i64, *enc),
            Encoding::Unsigned | Encoding::Other | Encoding::ComplexFloat => Scalar::Unsigned(word),
        },
        _ => Scalar::Unsigned(word),
    }
}

/// A `_Complex` value's two halves by its size: two floats (8 bytes), two doubles (16), two
/// x87 long doubles (32, each in 16 bytes).
fn complex(bytes: &[u8]) -> Scalar {
    let half = bytes.len() / 2;
    let part = |b: &[u8]| match half {
        4 => f64::from(f32::from_le_bytes(b[..4].try_into().unwrap_or([0; 4]))),
        8 => f64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])),
        16 => f80_to_f64(&b[..10]),
        _ => f64::NAN,
    };
    Scalar::Complex(part(&bytes[..half]), part(&bytes[half..]))
}

/// The nearest f64 to an x87 80-bit extended value.
fn f80_to_f64(b: &[u8]) -> f64 {
    let mant = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(se & 0x7fff);
    if exp == 0 && mant == 0 {
        return 0.0 * sign;
    }
    if exp == 0x7fff {
        return if mant << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    // Split the power: 2^(exp - 16446) alone underflows to 0 for values f64 still holds
    // (a denormal long double's exponent of -16445 is out of reach either way).
    let scale = exp.max(1) - 16383 - 63;
    sign * (mant as f64) * 2f64.powi(scale / 2) * 2f64.powi(scale - scale / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(enc: Encoding, size: u64) -> Type {
        Type {
            id: TypeId(1),
            name: None,
            size: Some(size),
            kind: Kind::Base(enc),
            rust: false,
            c: true,
        }
    }

    #[test]
    fn scalars_decode_by_encoding_and_width() {
        let i = base(Encoding::Signed, 4);
        assert_eq!(decode(&i, &(-6i32).to_le_bytes(), None), Scalar::Signed(-6));
        let u = base(Encoding::Unsigned, 8);
        assert_eq!(
            decode(&u, &u64::MAX.to_le_bytes(), None),
            Scalar::Unsigned(u64::MAX as u128)
        );
        let f = base(Encoding::Float, 8);
        assert_eq!(
            decode(&f, &0.25f64.to_le_bytes(), None),
            Scalar::Float(0.25)
        );
        let f4 = base(Encoding::Float, 4);
        assert_eq!(decode(&f4, &1.5f32.to_le_bytes(), None), Scalar::Float(1.5));
        // 1.5 as x87 extended: exponent 16383, mantissa 0xC000...
        let mut ld = [0u8; 16];
        ld[..8].copy_from_slice(&0xC000_0000_0000_0000u64.to_le_bytes());
        ld[8..10].copy_from_slice(&16383u16.to_le_bytes());
        assert_eq!(
            decode(&base(Encoding::Float, 16), &ld, None),
            Scalar::Float(1.5)
        );
    }

    #[test]
    fn bit_fields_are_extracted_and_sign_extended() {
        // level : 4 at bit 4 of the byte, holding -3 (0b1101).
        let i = base(Encoding::Signed, 4);
        let bytes = [0b1101_0000u8];
        assert_eq!(decode(&i, &bytes, Some((4, 4))), Scalar::Signed(-3));
        let u = base(Encoding::Unsigned, 4);
        assert_eq!(decode(&u, &bytes, Some((4, 4))), Scalar::Unsigned(13));
        // A 40-bit field across five bytes, starting at bit 3.
        let v: u64 = 0x12_3456_789a;
        let word = (v << 3).to_le_bytes();
        let u8b = base(Encoding::Unsigned, 8);
        assert_eq!(
            decode(&u8b, &word[..6], Some((3, 40))),
            Scalar::Unsigned(v as u128)
        );
    }

    #[test]
    fn shifting_bytes_keeps_unknown_ranges_aligned() {
        let p = Place::Bytes {
            bytes: vec![1, 2, 3, 4],
            unknown: vec![(2, 4)],
            origin: Some(100),
        };
        assert_eq!(
            shift(&p, 1),
            Place::Bytes {
                bytes: vec![2, 3, 4],
                unknown: vec![(1, 3)],
                origin: Some(101),
            }
        );
        assert_eq!(shift(&Place::Memory(10), 6), Place::Memory(16));
    }
}
