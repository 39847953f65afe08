//! Which values are text (a `char` array, a `wchar_t *`, a `uint8_t` that is a number
//! though a `char` underneath) and reading text out of memory up to its terminator.

use super::literals::{is_byte_typedef, string_literal, Text};
use crate::symbols::dwarf::target::Target;
use crate::symbols::dwarf::tree::InfoTree;
use crate::symbols::dwarf::types::{Encoding, Kind, TypeId};

impl InfoTree {
    /// Whether `ty` is reached through a typedef that names a byte as a number (`uint8_t`).
    pub(super) fn byte_typedef(&self, ty: Option<TypeId>) -> bool {
        let mut cur = ty;
        for _ in 0..16 {
            let Some(t) = cur.and_then(|id| self.type_of(id)) else {
                return false;
            };
            match &t.kind {
                Kind::Typedef(_) if t.name.as_deref().is_some_and(is_byte_typedef) => return true,
                Kind::Typedef(next) | Kind::Qualified(_, next) => cur = *next,
                _ => return false,
            }
        }
        false
    }

    /// What kind of text an element or pointee type is, if it is a character type.
    /// Whether `ty` is an array of characters (plain data makes it a string).
    pub(crate) fn is_char_array(&self, ty: Option<TypeId>) -> bool {
        let Some(t) = self.strip(ty) else {
            return false;
        };
        matches!(&t.kind, Kind::Array { elem, .. } if self.text_kind(*elem).is_some())
    }

    pub(super) fn text_kind(&self, elem: Option<TypeId>) -> Option<Text> {
        // `wchar_t` is a typedef of int: recognized by its name before qualifiers go.
        let mut cur = elem;
        for _ in 0..16 {
            let t = self.type_of(cur?)?;
            match &t.kind {
                Kind::Typedef(next) => {
                    match t.name.as_deref() {
                        Some("wchar_t") => return Some(Text::Wide),
                        Some("char16_t") => return Some(Text::Utf16),
                        Some("char32_t") => return Some(Text::Utf32),
                        // A byte type by name is numbers, not characters: `uint8_t key[4]` is
                        // `[222, 173, 190, 239]` (a program that meant text says `char`).
                        Some(name) if is_byte_typedef(name) => return None,
                        _ => {}
                    }
                    cur = *next;
                }
                Kind::Qualified(_, next) => cur = *next,
                Kind::Base(enc) => {
                    return match (enc, t.size) {
                        // Rust's u8 is unsigned char too, but a `*const u8` is not text.
                        (Encoding::SignedChar | Encoding::UnsignedChar, Some(1)) if !t.rust => {
                            Some(Text::Narrow)
                        }
                        (Encoding::Utf, Some(2)) if !t.rust => Some(Text::Utf16),
                        (Encoding::Utf, Some(4)) if !t.rust => Some(Text::Utf32),
                        (Encoding::Utf, Some(1)) if !t.rust => Some(Text::Narrow),
                        _ => None,
                    };
                }
                _ => return None,
            }
        }
        None
    }

    /// A NUL-terminated string at `addr`, quoted, at most `max` characters.
    pub(super) fn read_string(
        &self,
        addr: u64,
        kind: Text,
        max: usize,
        t: &dyn Target,
    ) -> Option<String> {
        let (units, _) = self.read_units(addr, kind, max + 1, t)?;
        Some(string_literal(&units, kind, max, true, false))
    }

    /// The code units of the text at `addr` up to its terminator (not included) or `max`
    /// units, and whether the terminator was found; `None` when nothing there is readable.
    /// The end of a mapping ends the text as a terminator would.
    pub(super) fn read_units(
        &self,
        addr: u64,
        kind: Text,
        max: usize,
        t: &dyn Target,
    ) -> Option<(Vec<u8>, bool)> {
        let unit = kind.unit();
        let mut bytes = Vec::new();
        let chunk = 64 * unit;
        let mut at = addr;
        while bytes.len() < max * unit {
            let mut buf = vec![0u8; chunk];
            if !t.read(at, &mut buf) {
                // The end of a mapping may cut the last chunk: read unit by unit.
                for c in buf.chunks_mut(unit) {
                    if !t.read(at, c) {
                        break;
                    }
                    if c.iter().all(|&b| b == 0) {
                        return Some((bytes, true));
                    }
                    bytes.extend_from_slice(c);
                    at += unit as u64;
                }
                return (!bytes.is_empty()).then_some((bytes, true));
            }
            match buf.chunks(unit).position(|c| c.iter().all(|&b| b == 0)) {
                Some(i) => {
                    bytes.extend_from_slice(&buf[..i * unit]);
                    return Some((bytes, true));
                }
                None => bytes.extend_from_slice(&buf),
            }
            at += chunk as u64;
        }
        bytes.truncate(max * unit);
        Some((bytes, false))
    }
}
