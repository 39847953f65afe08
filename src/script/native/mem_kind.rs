//! Typed memory accesses (`u8` ... `f64`) as scripts name them: their sizes and how bytes
//! become JS values and back. Shared by `state.memory()` and the printers' reads.

use super::*;

/// A typed memory access: its size and how the bytes become a JS value.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    U(u32),
    I(u32),
    F32,
    F64,
}

pub(super) fn kind(ctx: &Ctx<'_>, name: &str) -> rquickjs::Result<Kind> {
    Ok(match name {
        "u8" => Kind::U(8),
        "u16" => Kind::U(16),
        "u32" => Kind::U(32),
        "u64" => Kind::U(64),
        "i8" => Kind::I(8),
        "i16" => Kind::I(16),
        "i32" => Kind::I(32),
        "i64" => Kind::I(64),
        "f32" => Kind::F32,
        "f64" => Kind::F64,
        other => return Err(throw(ctx, format!("unknown memory type '{other}'"))),
    })
}

impl Kind {
    pub(super) fn size(self) -> usize {
        match self {
            Kind::U(b) | Kind::I(b) => (b / 8) as usize,
            Kind::F32 => 4,
            Kind::F64 => 8,
        }
    }

    pub(super) fn decode<'js>(self, ctx: &Ctx<'js>, bytes: &[u8]) -> R<'js> {
        let mut raw = [0u8; 8];
        raw[..bytes.len()].copy_from_slice(bytes);
        let bits = u64::from_le_bytes(raw);
        match self {
            Kind::U(_) => u64_to_js(ctx, bits),
            Kind::I(b) => {
                let shift = 64 - b;
                values::i64_to_js(ctx, ((bits << shift) as i64) >> shift)
            }
            Kind::F32 => Ok(Value::new_number(
                ctx.clone(),
                f32::from_bits(bits as u32) as f64,
            )),
            Kind::F64 => Ok(Value::new_number(ctx.clone(), f64::from_bits(bits))),
        }
    }

    pub(super) fn encode<'js>(self, ctx: &Ctx<'js>, v: &Value<'js>) -> Result<Vec<u8>, String> {
        let bytes = match self {
            Kind::U(b) | Kind::I(b) => values::to_sized_bits(ctx, v, b)?.to_le_bytes().to_vec(),
            Kind::F32 => (v.as_number().ok_or("expected a Number")? as f32)
                .to_le_bytes()
                .to_vec(),
            Kind::F64 => v
                .as_number()
                .ok_or("expected a Number")?
                .to_le_bytes()
                .to_vec(),
        };
        Ok(bytes[..self.size()].to_vec())
    }
}
