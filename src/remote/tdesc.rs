//! The stub's register layout: its target description (`target.xml`, with the files it
//! includes) read into registers by number, and the `g` packet's bytes turned into the
//! register sets the rest of scry reads (the general registers as ptrace lays them out, the
//! floating-point and vector state as an XSAVE area).

use crate::os::fpregs::FpRegs;
use crate::os::regs::{self, RawRegs, REGISTER_NAMES};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reg {
    pub(crate) name: String,
    pub(crate) bits: usize,
    pub(crate) num: usize,
    /// Where its bytes start in the `g` packet.
    pub(crate) offset: usize,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    regs: Vec<Reg>,
}

/// How deep `xi:include`s may nest (a description that includes itself must end).
const MAX_INCLUDE_DEPTH: usize = 4;

/// The furthest a register's given offset may lie in `g` (a hostile description must not
/// make every read index far past any reply).
const MAX_OFFSET: usize = 64 << 10;

/// Names lldb-server gives registers gdb names otherwise.
const ALIASES: [(&str, &str); 1] = [("eflags", "rflags")];

/// One `<reg>` of a description.
struct Found {
    name: String,
    bits: usize,
    num: Option<usize>,
    /// lldb's `offset`: where its bytes start in `g`.
    offset: Option<usize>,
    /// lldb's `value_regnums`: a part of another register (`eax` of `rax`).
    view: bool,
}

impl Layout {
    /// Reads a description; `include(name)` fetches a file it includes.
    pub(crate) fn parse(
        xml: &str,
        include: &mut dyn FnMut(&str) -> Option<String>,
    ) -> Result<Layout, String> {
        let mut found = Vec::new();
        collect(xml, include, 0, &mut found)?;
        let mut next = 0;
        let mut regs: Vec<Reg> = Vec::new();
        // Whether every register says where its bytes are (see below).
        let mut all_placed = true;
        for found in found {
            let num = found.num.unwrap_or(next);
            next = num + 1;
            let (name, bits) = (found.name, found.bits);
            if bits == 0 || bits % 8 != 0 || bits > 4096 {
                return Err(format!("register {name} has {bits} bits"));
            }
            if found.view {
                // lldb-server's `eax` is bytes of `rax`: no storage of its own in `g`.
                continue;
            }
            if found.offset.is_some_and(|o| o > MAX_OFFSET) {
                return Err(format!("register {name} lies past {MAX_OFFSET} bytes"));
            }
            all_placed &= found.offset.is_some();
            regs.push(Reg {
                name,
                bits,
                num,
                offset: found.offset.unwrap_or(0),
            });
        }
        if regs.is_empty() {
            return Err("the target description names no register".into());
        }
        // lldb-server says where each register's bytes are (its `g` is the kernel's register
        // sets laid end to end, not the registers in number order); gdbserver does not.
        if all_placed {
            regs.sort_by_key(|r| r.num);
            regs.dedup_by_key(|r| r.num);
            return Ok(Layout { regs });
        }
        Ok(Layout::numbered(regs))
    }

    /// The layout gdb assumes for x86-64 when a stub sends no description: the general,
    /// x87 and SSE registers (no fs_base, so no thread-local storage).
    pub(crate) fn fallback() -> Layout {
        let mut regs = Vec::new();
        let mut add = |name: &str, bits: usize| {
            let num = regs.len();
            regs.push(Reg {
                name: name.to_string(),
                bits,
                num,
                offset: 0,
            })
        };
        for name in &REGISTER_NAMES[..17] {
            add(name, 64);
        }
        for name in ["eflags", "cs", "ss", "ds", "es", "fs", "gs"] {
            add(name, 32);
        }
        for n in 0..8 {
            add(&format!("st{n}"), 80);
        }
        for name in [
            "fctrl", "fstat", "ftag", "fiseg", "fioff", "foseg", "fooff", "fop",
        ] {
            add(name, 32);
        }
        for n in 0..16 {
            add(&format!("xmm{n}"), 128);
        }
        add("mxcsr", 32);
        Layout::numbered(regs)
    }

    /// Orders by number and lays the registers out one after another, as `g` sends them.
    fn numbered(mut regs: Vec<Reg>) -> Layout {
        regs.sort_by_key(|r| r.num);
        regs.dedup_by_key(|r| r.num);
        let mut offset = 0;
        for r in &mut regs {
            r.offset = offset;
            offset += r.bits / 8;
        }
        Layout { regs }
    }

    pub(crate) fn find(&self, name: &str) -> Option<&Reg> {
        let named = |n: &str| self.regs.iter().find(|r| r.name == n);
        named(name).or_else(|| {
            let (_, other) = ALIASES.iter().find(|(ours, _)| *ours == name)?;
            named(other)
        })
    }

    /// The bytes of a register in a `g` reply, if the reply has them all.
    fn bytes<'a>(&self, blob: &'a [Option<u8>], name: &str) -> Option<Vec<u8>> {
        let reg = self.find(name)?;
        let slice: &'a [Option<u8>] = blob.get(reg.offset..reg.offset + reg.bits / 8)?;
        slice.iter().copied().collect()
    }

    fn uint(&self, blob: &[Option<u8>], name: &str) -> Option<u64> {
        let bytes = self.bytes(blob, name)?;
        let mut word = [0u8; 8];
        let n = bytes.len().min(8);
        word[..n].copy_from_slice(&bytes[..n]);
        Some(u64::from_le_bytes(word))
    }

    /// The general registers (of [`REGISTER_NAMES`]) this description has no place for.
    pub(crate) fn lacking(&self) -> Vec<&'static str> {
        REGISTER_NAMES
            .iter()
            .copied()
            .filter(|n| self.find(n).is_none())
            .collect()
    }

    /// The general registers from a `g` reply, and the names of those it lacks (the stub
    /// did not send them, or marked them unavailable): those read as 0 in the set.
    pub(crate) fn raw_regs(&self, blob: &[Option<u8>]) -> (RawRegs, Vec<&'static str>) {
        let mut out = regs::zeroed();
        let mut missing = Vec::new();
        for (i, name) in REGISTER_NAMES.iter().enumerate() {
            match self.uint(blob, name) {
                Some(v) => regs::set_register(&mut out, i, v),
                None => missing.push(*name),
            }
        }
        (out, missing)
    }

    /// The floating-point and vector registers from a `g` reply, as an XSAVE area (with the
    /// upper ymm halves when the stub sends them), or `None` without the x87/SSE state.
    pub(crate) fn fp_regs(&self, blob: &[Option<u8>]) -> Option<FpRegs> {
        const XCR0_AT: usize = 464;
        const XSTATE_BV_AT: usize = 512;
        const YMM_HI_AT: usize = 576;
        let mut area = vec![0u8; YMM_HI_AT + 16 * 16];
        let put = |area: &mut Vec<u8>, at: usize, bytes: &[u8]| {
            area[at..at + bytes.len()].copy_from_slice(bytes)
        };
        let word = |name: &str| self.uint(blob, name);
        put(&mut area, 0, &(word("fctrl")? as u16).to_le_bytes());
        put(&mut area, 2, &(word("fstat")? as u16).to_le_bytes());
        // gdb sends the full tag word (2 bits a register, 3 = empty); FXSAVE keeps one bit
        // a register (1 = not empty).
        let tags = word("ftag")?;
        let abridged = (0..8).fold(0u8, |acc, i| {
            acc | (u8::from((tags >> (2 * i)) & 3 != 3) << i)
        });
        area[4] = abridged;
        put(&mut area, 6, &(word("fop")? as u16).to_le_bytes());
        // gdb splits the last instruction's and operand's pointers (offset, segment);
        // lldb-server sends each whole.
        let pointer = |whole: &str, offset: &str, segment: &str| {
            word(whole).or_else(|| Some(word(offset)? | (word(segment)? << 32)))
        };
        let fip = pointer("fip", "fioff", "fiseg")?;
        let fdp = pointer("fdp", "fooff", "foseg")?;
        put(&mut area, 8, &fip.to_le_bytes());
        put(&mut area, 16, &fdp.to_le_bytes());
        put(&mut area, 24, &(word("mxcsr")? as u32).to_le_bytes());
        for n in 0..8 {
            put(
                &mut area,
                32 + 16 * n,
                &self.bytes(blob, &format!("st{n}"))?,
            );
        }
        for n in 0..16 {
            put(
                &mut area,
                160 + 16 * n,
                &self.bytes(blob, &format!("xmm{n}"))?,
            );
        }
        let mut components: u64 = 0b11;
        // gdb sends the upper halves (`ymm0h`), lldb-server each whole register (`ymm0`).
        let high = |n: usize| {
            self.bytes(blob, &format!("ymm{n}h")).or_else(|| {
                let whole = self.bytes(blob, &format!("ymm{n}"))?;
                (whole.len() == 32).then(|| whole[16..].to_vec())
            })
        };
        let highs: Option<Vec<Vec<u8>>> = (0..16).map(high).collect();
        if let Some(highs) = highs {
            components |= 0b100;
            for (n, high) in highs.iter().enumerate() {
                put(&mut area, YMM_HI_AT + 16 * n, high);
            }
        }
        put(&mut area, XCR0_AT, &components.to_le_bytes());
        put(&mut area, XSTATE_BV_AT, &components.to_le_bytes());
        FpRegs::from_xsave(area)
    }

    /// Writes general register `index` (of [`REGISTER_NAMES`]) into a `g` blob; false when
    /// the layout has no such register or the blob is too short for it.
    pub(crate) fn patch(&self, blob: &mut [Option<u8>], index: usize, value: u64) -> bool {
        let Some(reg) = REGISTER_NAMES.get(index).and_then(|n| self.find(n)) else {
            return false;
        };
        let len = (reg.bits / 8).min(8);
        let Some(slot) = blob.get_mut(reg.offset..reg.offset + len) else {
            return false;
        };
        for (byte, new) in slot.iter_mut().zip(value.to_le_bytes()) {
            *byte = Some(new);
        }
        true
    }

    /// The `P` packet that sets general register `index` (of [`REGISTER_NAMES`]) to `value`.
    pub(crate) fn set_packet(&self, index: usize, value: u64) -> Option<String> {
        let reg = self.find(REGISTER_NAMES.get(index)?)?;
        let bytes = value.to_le_bytes();
        let len = (reg.bits / 8).min(8);
        Some(format!(
            "P{:x}={}",
            reg.num,
            super::packet::hex(&bytes[..len])
        ))
    }
}

/// Collects every `<reg>` in document order, includes expanded.
fn collect(
    xml: &str,
    include: &mut dyn FnMut(&str) -> Option<String>,
    depth: usize,
    out: &mut Vec<Found>,
) -> Result<(), String> {
    let mut rest = xml;
    while let Some(start) = rest.find('<') {
        // A comment holds no registers, even ones written as tags (QEMU 7.2 comments out
        // `cs_base` to `es_base` so: read, every register after `gs` was 24 bytes off and
        // `fs_base` showed cr0).
        if rest[start..].starts_with("<!--") {
            let end = rest[start + 4..]
                .find("-->")
                .ok_or("the target description ends inside a comment")?;
            rest = &rest[start + 4 + end + 3..];
            continue;
        }
        let tag_end = rest[start..]
            .find('>')
            .map(|e| start + e)
            .ok_or("the target description ends inside a tag")?;
        let tag = &rest[start + 1..tag_end];
        if let Some(attrs) = tag.strip_prefix("reg ") {
            let name = attr(attrs, "name").ok_or("a register without a name")?;
            let bits = attr(attrs, "bitsize")
                .and_then(|b| b.parse().ok())
                .ok_or_else(|| format!("register {name} has no bitsize"))?;
            out.push(Found {
                name: name.to_string(),
                bits,
                num: attr(attrs, "regnum").and_then(|n| n.parse().ok()),
                offset: attr(attrs, "offset").and_then(|n| n.parse().ok()),
                view: attr(attrs, "value_regnums").is_some(),
            });
        } else if let Some(attrs) = tag.strip_prefix("xi:include ") {
            let href = attr(attrs, "href").ok_or("an include without href")?;
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(format!(
                    "includes nest deeper than {MAX_INCLUDE_DEPTH} at {href}"
                ));
            }
            let text = include(href).ok_or_else(|| format!("cannot read the included {href}"))?;
            collect(&text, include, depth + 1, out)?;
        }
        rest = &rest[tag_end + 1..];
    }
    Ok(())
}

/// The value of `key="..."` (or `'...'`) in a tag's attributes.
fn attr<'a>(attrs: &'a str, key: &str) -> Option<&'a str> {
    let mut rest = attrs;
    loop {
        let at = rest.find(key)?;
        let before_ok = at == 0 || rest.as_bytes()[at - 1].is_ascii_whitespace();
        let after = rest[at + key.len()..].trim_start();
        if before_ok {
            if let Some(value) = after.strip_prefix('=') {
                let value = value.trim_start();
                let quote = value.chars().next()?;
                if quote == '"' || quote == '\'' {
                    let inner = &value[1..];
                    return inner.find(quote).map(|e| &inner[..e]);
                }
            }
        }
        rest = &rest[at + key.len()..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_on_and_includes_expand() {
        let main =
            r#"<target><xi:include href="core.xml"/><reg name="extra" bitsize="32"/></target>"#;
        let mut include = |name: &str| {
            (name == "core.xml").then(|| {
                r#"<feature><reg name="rax" bitsize="64" regnum="0"/><reg name='rbx' bitsize='64'/></feature>"#
                    .to_string()
            })
        };
        let layout = Layout::parse(main, &mut include).unwrap();
        let rbx = layout.find("rbx").unwrap();
        assert_eq!((rbx.num, rbx.offset), (1, 8));
        assert_eq!(layout.find("extra").unwrap().offset, 16);
    }

    #[test]
    fn offsets_place_registers_and_views_have_no_storage() {
        // lldb-server's form: rax after rbx in `g`, eax a view of rax, rflags for eflags.
        let xml = r#"<target><reg name="rax" bitsize="64" regnum="0" offset="8"/>
            <reg name="rbx" bitsize="64" regnum="1" offset="0"/>
            <reg name="rflags" bitsize="64" regnum="2" offset="16"/>
            <reg name="eax" bitsize="32" regnum="3" offset="8" value_regnums="0"/></target>"#;
        let layout = Layout::parse(xml, &mut |_| None).unwrap();
        assert_eq!(layout.find("rax").unwrap().offset, 8);
        assert_eq!(layout.find("rbx").unwrap().offset, 0);
        assert_eq!(layout.find("eflags").unwrap().name, "rflags");
        assert!(layout.find("eax").is_none());
        assert!(layout.lacking().contains(&"fs_base"));
        assert!(!layout.lacking().contains(&"eflags"));
    }

    #[test]
    fn a_comment_holds_no_registers() {
        // QEMU 7.2's i386-64bit.xml, in part.
        let xml = r#"<feature><reg name="gs" bitsize="32"/>
  <!--reg name="cs_base" bitsize="64" type="int64"/>
  <reg name="ss_base" bitsize="64" type="int64"/>
  <reg name="es_base" bitsize="64" type="int64"/-->
  <reg name="fs_base" bitsize="64" type="int64"/></feature>"#;
        let mut out = Vec::new();
        collect(xml, &mut |_| None, 0, &mut out).unwrap();
        let names: Vec<&str> = out.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["gs", "fs_base"]);
        let mut out = Vec::new();
        assert!(collect("<x><!-- open", &mut |_| None, 0, &mut out).is_err());
    }

    #[test]
    fn an_include_loop_ends_with_an_error() {
        let mut include = |_: &str| Some(r#"<xi:include href="self.xml"/>"#.to_string());
        let err = Layout::parse(r#"<xi:include href="self.xml"/>"#, &mut include).unwrap_err();
        assert!(err.contains("deeper"), "{err}");
    }

    #[test]
    fn general_registers_come_from_the_blob_and_missing_ones_are_named() {
        let layout = Layout::fallback();
        let mut blob = vec![Some(0u8); layout.find("rip").unwrap().offset + 8];
        blob[layout.find("rip").unwrap().offset] = Some(0x34);
        blob[0] = None; // rax unavailable
        let (regs, missing) = layout.raw_regs(&blob);
        assert_eq!(regs.rip, 0x34);
        assert!(missing.contains(&"rax"));
        assert!(missing.contains(&"fs_base"), "the fallback has no fs_base");
        assert_eq!(
            layout.set_packet(16, 0x1234).unwrap(),
            "P10=3412000000000000"
        );
    }
}
