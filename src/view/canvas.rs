//! A canvas of the script area: RGBA pixels kept on the engine's thread, written by
//! `putImageData` from script bytes or target memory in one of a few pixel formats. The pixels
//! are shared copy-on-write with the publisher, and the region written since the last publish
//! is remembered so a page that saw the previous state gets only that region.

use std::sync::Arc;

/// The longest side of a canvas.
pub(crate) const MAX_SIDE: u32 = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelFormat {
    /// Bytes R, G, B, A.
    Rgba,
    /// R, G, B and a byte ignored (shown opaque).
    Rgbx,
    /// B, G, R, A: a little-endian `0xAARRGGBB` word.
    Bgra,
    /// B, G, R and a byte ignored: the usual 32-bit framebuffer.
    Bgrx,
    Rgb,
    /// One byte of brightness.
    Gray,
}

impl PixelFormat {
    pub const NAMES: &'static str = "rgba rgbx bgra bgrx rgb gray";

    pub fn parse(name: &str) -> Option<PixelFormat> {
        Some(match name {
            "rgba" => PixelFormat::Rgba,
            "rgbx" => PixelFormat::Rgbx,
            "bgra" => PixelFormat::Bgra,
            "bgrx" => PixelFormat::Bgrx,
            "rgb" => PixelFormat::Rgb,
            "gray" | "grey" => PixelFormat::Gray,
            _ => return None,
        })
    }

    pub fn bytes_per_pixel(self) -> usize {
        match self {
            PixelFormat::Rgb => 3,
            PixelFormat::Gray => 1,
            _ => 4,
        }
    }

    fn rgba(self, p: &[u8]) -> [u8; 4] {
        match self {
            PixelFormat::Rgba => [p[0], p[1], p[2], p[3]],
            PixelFormat::Rgbx => [p[0], p[1], p[2], 255],
            PixelFormat::Bgra => [p[2], p[1], p[0], p[3]],
            PixelFormat::Bgrx => [p[2], p[1], p[0], 255],
            PixelFormat::Rgb => [p[0], p[1], p[2], 255],
            PixelFormat::Gray => [p[0], p[0], p[0], 255],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub w: u32,
    pub h: u32,
}

impl Rect {
    fn union(self, o: Rect) -> Rect {
        let x = self.x.min(o.x);
        let y = self.y.min(o.y);
        let right = (self.x + self.w).max(o.x + o.w);
        let bottom = (self.y + self.h).max(o.y + o.h);
        Rect {
            x,
            y,
            w: right - x,
            h: bottom - y,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Canvas {
    pub width: u32,
    pub height: u32,
    /// RGBA, row after row.
    pub data: Arc<Vec<u8>>,
    /// The region written since the last publish (all of it for a new canvas).
    pub dirty: Option<Rect>,
}

impl Canvas {
    /// The pixel count of a canvas of this size, or why it cannot be made.
    pub fn check_size(w: u32, h: u32) -> Result<u64, String> {
        if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
            return Err(format!(
                "dom: a canvas is 1 to {MAX_SIDE} pixels on a side, got {w}x{h}"
            ));
        }
        Ok(u64::from(w) * u64::from(h))
    }

    /// A transparent black canvas (as a browser makes one).
    pub fn new(width: u32, height: u32) -> Canvas {
        Canvas {
            width,
            height,
            data: Arc::new(vec![0; width as usize * height as usize * 4]),
            dirty: Some(Rect {
                x: 0,
                y: 0,
                w: width,
                h: height,
            }),
        }
    }

    pub fn pixels(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// See [`region`].
    pub fn region(
        &self,
        dx: u32,
        dy: u32,
        w: Option<u32>,
        h: Option<u32>,
        format: PixelFormat,
        available: Option<usize>,
    ) -> Result<(u32, u32), String> {
        region((self.width, self.height), dx, dy, w, h, format, available)
    }

    /// Writes a `w` x `h` block of `src` pixels at (dx, dy); what falls outside the canvas is
    /// clipped.
    pub fn put(
        &mut self,
        src: &[u8],
        dx: u32,
        dy: u32,
        w: Option<u32>,
        h: Option<u32>,
        format: PixelFormat,
    ) -> Result<(), String> {
        let (w, h) = self.region(dx, dy, w, h, format, Some(src.len()))?;
        let bpp = format.bytes_per_pixel();
        let need = w as usize * h as usize * bpp;
        if src.len() < need {
            return Err(format!(
                "putImageData: {w}x{h} pixels of {format:?} need {need} bytes, got {}",
                src.len()
            ));
        }
        let cols = w.min(self.width - dx) as usize;
        let rows = h.min(self.height - dy) as usize;
        let stride = self.width as usize * 4;
        let data = Arc::make_mut(&mut self.data);
        for row in 0..rows {
            let from = &src[row * w as usize * bpp..][..cols * bpp];
            let to = &mut data[(dy as usize + row) * stride + dx as usize * 4..][..cols * 4];
            if format == PixelFormat::Rgba {
                to.copy_from_slice(from);
            } else {
                for (px, out) in from.chunks_exact(bpp).zip(to.chunks_exact_mut(4)) {
                    out.copy_from_slice(&format.rgba(px));
                }
            }
        }
        let rect = Rect {
            x: dx,
            y: dy,
            w: cols as u32,
            h: rows as u32,
        };
        self.dirty = Some(self.dirty.map_or(rect, |d| d.union(rect)));
        Ok(())
    }

    /// The RGBA bytes of a region.
    pub fn crop(&self, r: Rect) -> Vec<u8> {
        let stride = self.width as usize * 4;
        let mut out = Vec::with_capacity(r.w as usize * r.h as usize * 4);
        for row in r.y..r.y + r.h {
            out.extend_from_slice(
                &self.data[row as usize * stride + r.x as usize * 4..][..r.w as usize * 4],
            );
        }
        out
    }
}

/// The size of a `putImageData` region at (dx, dy) of a canvas of `size`: `w` defaults to the
/// rest of the row, `h` to the rest of the canvas, or as many rows as `available` bytes hold.
pub(crate) fn region(
    (width, height): (u32, u32),
    dx: u32,
    dy: u32,
    w: Option<u32>,
    h: Option<u32>,
    format: PixelFormat,
    available: Option<usize>,
) -> Result<(u32, u32), String> {
    if dx >= width || dy >= height {
        return Err(format!(
            "putImageData: ({dx}, {dy}) is outside the {width}x{height} canvas"
        ));
    }
    let w = w.unwrap_or(width - dx);
    if w == 0 || w > MAX_SIDE {
        return Err(format!("putImageData: width {w} is not 1 to {MAX_SIDE}"));
    }
    let rest = height - dy;
    let h = match (h, available) {
        (Some(h), _) => h,
        (None, Some(n)) => {
            let rows = n / (w as usize * format.bytes_per_pixel());
            (rows as u32).min(rest)
        }
        (None, None) => rest,
    };
    if h == 0 || h > MAX_SIDE {
        return Err(format!(
            "putImageData: height {h} is not 1 to {MAX_SIDE} (too few bytes for one row?)"
        ));
    }
    Ok((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_convert_and_regions_clip() {
        let mut c = Canvas::new(4, 2);
        c.dirty = None;
        // One BGRX row of two pixels at (3, 1): the second pixel falls off the right edge.
        c.put(
            &[1, 2, 3, 9, 4, 5, 6, 9],
            3,
            1,
            Some(2),
            Some(1),
            PixelFormat::Bgrx,
        )
        .unwrap();
        assert_eq!(&c.data[(4 + 3) * 4..(4 + 3) * 4 + 4], &[3, 2, 1, 255]);
        assert_eq!(
            c.dirty,
            Some(Rect {
                x: 3,
                y: 1,
                w: 1,
                h: 1
            })
        );
        assert_eq!(
            c.crop(Rect {
                x: 3,
                y: 1,
                w: 1,
                h: 1
            }),
            vec![3, 2, 1, 255]
        );
        c.put(&[7; 8], 0, 0, None, None, PixelFormat::Gray).unwrap();
        assert_eq!(&c.data[0..4], &[7, 7, 7, 255]);
        assert_eq!(
            c.dirty,
            Some(Rect {
                x: 0,
                y: 0,
                w: 4,
                h: 2
            })
        );
        assert!(c
            .put(&[0; 3], 0, 0, Some(2), Some(2), PixelFormat::Rgb)
            .is_err());
        assert!(c.put(&[0; 4], 4, 0, None, None, PixelFormat::Rgba).is_err());
        // A byte array of fewer rows than the canvas fills only those rows.
        let (w, h) = c
            .region(0, 0, None, None, PixelFormat::Rgba, Some(16))
            .unwrap();
        assert_eq!((w, h), (4, 1));
        assert!(Canvas::check_size(0, 5).is_err());
        assert!(Canvas::check_size(MAX_SIDE + 1, 1).is_err());
    }
}
