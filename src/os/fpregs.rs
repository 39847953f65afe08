//! Floating-point and vector registers: the thread's XSAVE area (PTRACE_GETREGSET with
//! NT_X86_XSTATE), or the 512-byte FXSAVE area (PTRACE_GETFPREGS) where the kernel offers no
//! XSAVE state. `FpRegs` reads and edits the area by the architecture's fixed layout, so a
//! write changes exactly the bytes of one register and goes back in one SETREGSET.

use super::{OsError, Tid};

/// ELF note types of the register sets (linux/elf.h).
const NT_X86_XSTATE: usize = 0x202;
/// Big enough for every XSAVE component the kernel may hand out (AMX tiles included).
const XSTATE_BUFFER: usize = 16 * 1024;

/// The legacy (FXSAVE) region: where each register lives in it.
const LEGACY_SIZE: usize = 512;
const FSW: usize = 2;
const FTW: usize = 4;
const MXCSR: usize = 24;
const ST0: usize = 32;
const XMM0: usize = 160;
/// In the first bytes of `sw_reserved` the kernel's ptrace copy stores XCR0: the components
/// this CPU and kernel enable (gdb reads it from the same place).
const XCR0: usize = 464;
/// The XSAVE header's XSTATE_BV: which components hold other than their initial state.
const XSTATE_BV: usize = 512;
/// The upper halves of ymm0-15 in the standard (uncompacted) format ptrace uses: component
/// 2's offset, 576 on every CPU that has AVX (CPUID 0xD.2 EBX; gdb assumes it too).
const YMM_HI: usize = 576;

const X87: u64 = 1;
const SSE: u64 = 1 << 1;
const AVX: u64 = 1 << 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Xsave,
    Fxsave,
}

/// One thread's floating-point and vector state, as read from the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FpRegs {
    area: Vec<u8>,
    format: Format,
}

impl FpRegs {
    /// An XSAVE area as PTRACE_GETREGSET gave it; `None` when shorter than its header.
    pub fn from_xsave(area: Vec<u8>) -> Option<FpRegs> {
        (area.len() >= YMM_HI).then_some(FpRegs {
            area,
            format: Format::Xsave,
        })
    }

    /// A 512-byte FXSAVE area.
    pub fn from_fxsave(area: Vec<u8>) -> Option<FpRegs> {
        (area.len() >= LEGACY_SIZE).then_some(FpRegs {
            area,
            format: Format::Fxsave,
        })
    }

    /// The bytes to write back.
    pub fn area(&self) -> &[u8] {
        &self.area
    }

    /// Overwrites the area's bytes at `at` (the recorder takes back what a step changed,
    /// piece by piece); bytes past the area's end are left out.
    pub fn patch(&mut self, at: usize, bytes: &[u8]) {
        let end = (at + bytes.len()).min(self.area.len());
        if at < end {
            self.area[at..end].copy_from_slice(&bytes[..end - at]);
        }
    }

    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.area[at..at + 4].try_into().unwrap_or([0; 4]))
    }

    fn u64_at(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.area[at..at + 8].try_into().unwrap_or([0; 8]))
    }

    /// The components enabled in XCR0 (an XSAVE area only).
    fn xcr0(&self) -> Option<u64> {
        (self.format == Format::Xsave).then(|| self.u64_at(XCR0))
    }

    /// Whether ymm registers exist: the CPU has AVX and the kernel enabled it.
    pub fn has_avx(&self) -> bool {
        self.xcr0().is_some_and(|x| x & AVX != 0) && self.area.len() >= YMM_HI + 16 * 16
    }

    /// A component in its initial state reads as zeros whatever the area's bytes say.
    fn in_use(&self, component: u64) -> bool {
        self.format == Format::Fxsave || self.u64_at(XSTATE_BV) & component != 0
    }

    fn mark_in_use(&mut self, component: u64) {
        if self.format == Format::Xsave {
            let bv = self.u64_at(XSTATE_BV) | component;
            self.area[XSTATE_BV..XSTATE_BV + 8].copy_from_slice(&bv.to_le_bytes());
        }
    }

    /// xmm`n` (0-15), little-endian.
    pub fn xmm(&self, n: usize) -> Option<[u8; 16]> {
        if n >= 16 {
            return None;
        }
        if !self.in_use(SSE) {
            return Some([0; 16]);
        }
        self.area[XMM0 + 16 * n..XMM0 + 16 * (n + 1)]
            .try_into()
            .ok()
    }

    pub fn set_xmm(&mut self, n: usize, value: [u8; 16]) -> bool {
        if n >= 16 {
            return false;
        }
        self.materialize(SSE);
        self.area[XMM0 + 16 * n..XMM0 + 16 * (n + 1)].copy_from_slice(&value);
        true
    }

    /// ymm`n` (0-15): xmm`n` below its upper half; `None` without AVX.
    pub fn ymm(&self, n: usize) -> Option<[u8; 32]> {
        if !self.has_avx() || n >= 16 {
            return None;
        }
        let mut out = [0u8; 32];
        out[..16].copy_from_slice(&self.xmm(n)?);
        if self.in_use(AVX) {
            out[16..].copy_from_slice(&self.area[YMM_HI + 16 * n..YMM_HI + 16 * (n + 1)]);
        }
        Some(out)
    }

    pub fn set_ymm(&mut self, n: usize, value: [u8; 32]) -> bool {
        if !self.has_avx() || n >= 16 {
            return false;
        }
        let (low, high) = value.split_at(16);
        self.set_xmm(n, low.try_into().unwrap_or([0; 16]));
        self.materialize(AVX);
        self.area[YMM_HI + 16 * n..YMM_HI + 16 * (n + 1)].copy_from_slice(high);
        true
    }

    /// st`n` (0-7, relative to the stack top as the instructions name them): the 80-bit
    /// register, little-endian.
    pub fn st(&self, n: usize) -> Option<[u8; 10]> {
        if n >= 8 {
            return None;
        }
        self.area[ST0 + 16 * n..ST0 + 16 * n + 10].try_into().ok()
    }

    /// Writes st`n` and tags it valid (FXSAVE's abridged tag word has one bit per physical
    /// register; st`n` is physical register (TOP + n) mod 8).
    pub fn set_st(&mut self, n: usize, value: [u8; 10]) -> bool {
        if n >= 8 {
            return false;
        }
        self.mark_in_use(X87);
        self.area[ST0 + 16 * n..ST0 + 16 * n + 10].copy_from_slice(&value);
        let top = (self.u32_at(FSW) >> 11) as usize & 7;
        self.area[FTW] |= 1 << ((top + n) % 8);
        true
    }

    pub fn mxcsr(&self) -> u32 {
        self.u32_at(MXCSR)
    }

    pub fn set_mxcsr(&mut self, value: u32) {
        self.materialize(SSE);
        self.area[MXCSR..MXCSR + 4].copy_from_slice(&value.to_le_bytes());
    }

    /// Before writing part of a component in its initial state: its bytes in the area may be
    /// stale, so they are set to the initial state (zeros) and the component marked in use.
    fn materialize(&mut self, component: u64) {
        if self.in_use(component) {
            return;
        }
        match component {
            SSE => self.area[XMM0..XMM0 + 256].fill(0),
            AVX => self.area[YMM_HI..YMM_HI + 256].fill(0),
            _ => {}
        }
        self.mark_in_use(component);
    }
}

/// The 80-bit extended value of st registers, as the nearest f64 (what JavaScript can hold;
/// the extra 11 bits of precision and exponents beyond f64's range round or saturate).
pub(crate) fn f80_to_f64(b: [u8; 10]) -> f64 {
    let mantissa = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(se & 0x7fff);
    if exp == 0x7fff {
        return if mantissa << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    // value = mantissa * 2^(exp - 16383 - 63); split the power so neither factor overflows.
    let scale = exp - 16383 - 63;
    sign * (mantissa as f64) * 2f64.powi(scale / 2) * 2f64.powi(scale - scale / 2)
}

/// The 80-bit extended encoding of an f64 (exact: every f64 is representable).
pub(crate) fn f64_to_f80(v: f64) -> [u8; 10] {
    let bits = v.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (e80, m80): (u16, u64) = if exp == 0x7ff {
        // Infinity keeps only the explicit integer bit; a NaN stays quiet.
        let m = if frac == 0 {
            1 << 63
        } else {
            (1 << 63) | (1 << 62) | (frac << 11)
        };
        (0x7fff, m)
    } else if exp == 0 && frac == 0 {
        (0, 0)
    } else if exp == 0 {
        // A subnormal f64 is a normal extended value: shift its leading one into place.
        let shift = frac.leading_zeros() - 11;
        let m = frac << (11 + shift);
        ((16383 - 1022 - shift as i32) as u16, m)
    } else {
        ((exp - 1023 + 16383) as u16, (1 << 63) | (frac << 11))
    };
    let mut out = [0u8; 10];
    out[..8].copy_from_slice(&m80.to_le_bytes());
    out[8..].copy_from_slice(&(sign | e80).to_le_bytes());
    out
}

/// The thread's floating-point and vector registers: the XSAVE area where the kernel has one
/// (every CPU since 2008), else the FXSAVE area.
pub(crate) fn get(tid: Tid) -> Result<FpRegs, OsError> {
    let mut buf = vec![0u8; XSTATE_BUFFER];
    match regset(libc::PTRACE_GETREGSET, tid, &mut buf) {
        Ok(n) => {
            buf.truncate(n);
            FpRegs::from_xsave(buf).ok_or(OsError::Ptrace {
                what: "getregset(xstate)",
                tid,
                errno: nix::Error::EIO,
            })
        }
        Err(nix::Error::EINVAL) | Err(nix::Error::ENODEV) => {
            let mut area = vec![0u8; LEGACY_SIZE];
            fpregs(libc::PTRACE_GETFPREGS, tid, &mut area).map_err(|errno| OsError::Ptrace {
                what: "getfpregs",
                tid,
                errno,
            })?;
            Ok(FpRegs::from_fxsave(area).expect("512 bytes"))
        }
        Err(errno) => Err(OsError::Ptrace {
            what: "getregset(xstate)",
            tid,
            errno,
        }),
    }
}

/// Writes back an area read by `get` (and edited).
pub(crate) fn set(tid: Tid, regs: &FpRegs) -> Result<(), OsError> {
    let mut area = regs.area.clone();
    let result = match regs.format {
        Format::Xsave => regset(libc::PTRACE_SETREGSET, tid, &mut area).map(|_| ()),
        Format::Fxsave => fpregs(libc::PTRACE_SETFPREGS, tid, &mut area),
    };
    result.map_err(|errno| OsError::Ptrace {
        what: "setregset(fp)",
        tid,
        errno,
    })
}

/// PTRACE_GETREGSET / SETREGSET of NT_X86_XSTATE on `buf`; the byte count transferred.
fn regset(request: libc::c_uint, tid: Tid, buf: &mut [u8]) -> Result<usize, nix::Error> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: the kernel reads or writes at most `iov_len` bytes at `iov_base`, a buffer we
    // own for the duration of the call, and updates `iov_len` in the iovec we own.
    let rc = unsafe {
        libc::ptrace(
            request,
            tid,
            NT_X86_XSTATE as *mut libc::c_void,
            &mut iov as *mut libc::iovec,
        )
    };
    if rc == -1 {
        Err(nix::Error::last())
    } else {
        Ok(iov.iov_len.min(buf.len()))
    }
}

/// PTRACE_GETFPREGS / SETFPREGS on a 512-byte FXSAVE area.
fn fpregs(request: libc::c_uint, tid: Tid, area: &mut [u8]) -> Result<(), nix::Error> {
    assert!(area.len() >= LEGACY_SIZE);
    // SAFETY: the kernel reads or writes exactly 512 bytes (user_fpregs_struct) at `data`,
    // and `area` holds at least that many.
    let rc = unsafe {
        libc::ptrace(
            request,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            area.as_mut_ptr().cast::<libc::c_void>(),
        )
    };
    if rc == -1 {
        Err(nix::Error::last())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An XSAVE area as the kernel would hand it over, with AVX enabled.
    fn xsave(bv: u64) -> FpRegs {
        let mut area = vec![0u8; 1024];
        area[XCR0..XCR0 + 8].copy_from_slice(&(X87 | SSE | AVX).to_le_bytes());
        area[XSTATE_BV..XSTATE_BV + 8].copy_from_slice(&bv.to_le_bytes());
        for (i, b) in area[XMM0..XMM0 + 256].iter_mut().enumerate() {
            *b = i as u8;
        }
        for (i, b) in area[YMM_HI..YMM_HI + 256].iter_mut().enumerate() {
            *b = 0x80 | i as u8;
        }
        area[MXCSR..MXCSR + 4].copy_from_slice(&0x1f80u32.to_le_bytes());
        FpRegs::from_xsave(area).unwrap()
    }

    #[test]
    fn registers_sit_at_the_architectural_offsets() {
        let r = xsave(X87 | SSE | AVX);
        assert!(r.has_avx());
        let x1 = r.xmm(1).unwrap();
        assert_eq!((x1[0], x1[15]), (16, 31));
        let y1 = r.ymm(1).unwrap();
        assert_eq!(&y1[..16], &x1);
        assert_eq!((y1[16], y1[31]), (0x80 | 16, 0x80 | 31));
        assert_eq!(r.mxcsr(), 0x1f80);
        assert_eq!(r.xmm(16), None);
        assert_eq!(r.ymm(16), None);
    }

    #[test]
    fn components_in_their_initial_state_read_as_zero() {
        let r = xsave(X87 | SSE);
        assert_eq!(&r.ymm(2).unwrap()[16..], &[0u8; 16], "AVX not in use");
        let mut r = xsave(X87);
        assert_eq!(r.xmm(0), Some([0; 16]));
        // Writing one register of a component in its initial state zeroes the stale rest.
        r.set_xmm(3, [7; 16]);
        assert_eq!(r.xmm(3), Some([7; 16]));
        assert_eq!(r.xmm(4), Some([0; 16]));
        assert_ne!(r.area[XSTATE_BV] & SSE as u8, 0);
        r.set_ymm(5, [9; 32]);
        assert_eq!(r.ymm(5), Some([9; 32]));
        assert_eq!(&r.ymm(6).unwrap()[16..], &[0u8; 16]);
    }

    #[test]
    fn without_avx_there_is_no_ymm() {
        let mut area = vec![0u8; LEGACY_SIZE];
        area[XMM0] = 1;
        let mut r = FpRegs::from_fxsave(area).unwrap();
        assert!(!r.has_avx());
        assert_eq!(r.ymm(0), None);
        assert!(!r.set_ymm(0, [0; 32]));
        assert_eq!(r.xmm(0).unwrap()[0], 1);
    }

    #[test]
    fn st_writes_tag_the_physical_register() {
        let mut r = xsave(X87 | SSE);
        // TOP = 6: st1 is physical register 7.
        r.area[FSW..FSW + 2].copy_from_slice(&(6u16 << 11).to_le_bytes());
        r.set_st(1, f64_to_f80(2.5));
        assert_eq!(r.area[FTW], 1 << 7);
        assert_eq!(f80_to_f64(r.st(1).unwrap()), 2.5);
    }

    #[test]
    fn extended_precision_round_trips_every_kind_of_f64() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -2.5,
            0.1,
            std::f64::consts::PI,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            1e-310,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let back = f80_to_f64(f64_to_f80(v));
            assert_eq!(back.to_bits(), v.to_bits(), "{v:e}");
        }
        assert!(f80_to_f64(f64_to_f80(f64::NAN)).is_nan());
        // 1.0 in the x87 format: integer bit set, biased exponent 16383.
        assert_eq!(f64_to_f80(1.0), [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f]);
    }
}
