//! The GDB remote serial protocol's framing: `$payload#cs`, with `}` escapes and `*`
//! run-length encoding in replies, and the hex and binary encodings payloads use. Pure bytes
//! in, bytes out: the connection owns the socket.

use std::fmt::Write as _;

/// The largest reply scry accepts (a hostile stub could send an endless one).
pub(crate) const MAX_REPLY: usize = 16 << 20;

/// One packet ready for the wire.
pub(crate) fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 4);
    out.push(b'$');
    let mut sum: u8 = 0;
    for &b in payload {
        // `$`, `#`, `}` and `*` inside a payload are escaped (binary writes carry any byte).
        if matches!(b, b'$' | b'#' | b'}' | b'*') {
            out.push(b'}');
            out.push(b ^ 0x20);
            sum = sum.wrapping_add(b'}').wrapping_add(b ^ 0x20);
        } else {
            out.push(b);
            sum = sum.wrapping_add(b);
        }
    }
    out.push(b'#');
    let _ = write!(HexSink(&mut out), "{sum:02x}");
    out
}

struct HexSink<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for HexSink<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// What one scan of the bytes received so far found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// A whole packet: its decoded payload, whether its checksum held, and how many bytes of
    /// the input it used.
    Packet {
        payload: Vec<u8>,
        sum_ok: bool,
        used: usize,
    },
    /// An acknowledgement (`+` or `-`) or noise before a packet: that many bytes to drop.
    Skip { used: usize, nak: bool },
    /// A packet has not arrived whole yet.
    Incomplete,
    /// More than [`MAX_REPLY`] bytes without an end.
    TooLong,
}

/// Finds the first packet (or acknowledgement) at the start of `input`.
pub(crate) fn scan(input: &[u8]) -> Scan {
    let Some(&first) = input.first() else {
        return Scan::Incomplete;
    };
    // Anything before a `$` is an acknowledgement or noise (a `%` notification comes only in
    // non-stop mode, which scry does not ask for: its bytes are skipped too).
    if first != b'$' {
        let nak = first == b'-';
        let used = input.iter().position(|&b| b == b'$').unwrap_or(input.len());
        return Scan::Skip { used, nak };
    }
    let Some(hash) = input.iter().position(|&b| b == b'#') else {
        return if input.len() > MAX_REPLY {
            Scan::TooLong
        } else {
            Scan::Incomplete
        };
    };
    if input.len() < hash + 3 {
        return Scan::Incomplete;
    }
    let body = &input[1..hash];
    let sum = body.iter().fold(0u8, |s, &b| s.wrapping_add(b));
    let sent = std::str::from_utf8(&input[hash + 1..hash + 3])
        .ok()
        .and_then(|h| u8::from_str_radix(h, 16).ok());
    Scan::Packet {
        payload: decode(body),
        sum_ok: sent == Some(sum),
        used: hash + 3,
    }
}

/// Undoes `}` escapes and `X*n` run-length encoding (`n` = repeat count + 29).
fn decode(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'}' if i + 1 < body.len() => {
                out.push(body[i + 1] ^ 0x20);
                i += 2;
            }
            b'*' if i + 1 < body.len() && !out.is_empty() => {
                let repeat = body[i + 1].saturating_sub(29) as usize;
                let last = *out.last().unwrap_or(&0);
                out.extend(std::iter::repeat_n(last, repeat.min(MAX_REPLY)));
                i += 2;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Bytes as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Hex to bytes; `x` digits (a register the stub cannot read) give `None` for that byte.
pub(crate) fn unhex(text: &[u8]) -> Option<Vec<Option<u8>>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks(2)
        .map(|pair| match pair {
            [b'x', b'x'] => Some(None),
            _ => {
                let s = std::str::from_utf8(pair).ok()?;
                u8::from_str_radix(s, 16).ok().map(Some)
            }
        })
        .collect()
}

/// Hex to bytes where every digit must be one.
pub(crate) fn unhex_all(text: &[u8]) -> Option<Vec<u8>> {
    unhex(text)?.into_iter().collect()
}

/// A hex number (`1f`), as stop replies and thread ids write them.
pub(crate) fn number(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 16 {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(text).ok()?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_has_its_checksum_and_escapes() {
        assert_eq!(frame(b"g"), b"$g#67");
        assert_eq!(frame(b"X0,1:#"), b"$X0,1:}\x03#9f".to_vec());
    }

    #[test]
    fn run_lengths_and_escapes_decode() {
        // "0* " is '0' then 32-29 = 3 more.
        let Scan::Packet {
            payload,
            sum_ok,
            used,
        } = scan(b"$0* #7a+")
        else {
            panic!("no packet");
        };
        assert_eq!(payload, b"0000");
        assert!(sum_ok);
        assert_eq!(used, 7);
        let Scan::Packet { payload, .. } = scan(b"$a}\x03b#00") else {
            panic!("no packet");
        };
        assert_eq!(payload, b"a#b");
    }

    #[test]
    fn acks_noise_and_short_input() {
        assert_eq!(
            scan(b"+$OK#9a"),
            Scan::Skip {
                used: 1,
                nak: false
            }
        );
        assert_eq!(scan(b"-"), Scan::Skip { used: 1, nak: true });
        assert_eq!(scan(b"$OK#9"), Scan::Incomplete);
        let Scan::Packet { sum_ok, .. } = scan(b"$OK#00") else {
            panic!()
        };
        assert!(!sum_ok);
    }

    #[test]
    fn hex_round_trips_and_unavailable_bytes() {
        assert_eq!(hex(&[0, 0xab]), "00ab");
        assert_eq!(unhex(b"00xxff"), Some(vec![Some(0), None, Some(0xff)]));
        assert_eq!(unhex(b"0"), None);
        assert_eq!(number(b"1f"), Some(31));
        assert_eq!(number(b""), None);
    }
}
