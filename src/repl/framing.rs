//! The pipe protocol's input side: a chunk is every line up to one that is exactly the marker
//! (`;;`), or up to end of input.

use std::io::BufRead;

pub(crate) struct ChunkReader<R> {
    input: R,
    marker: String,
    done: bool,
}

impl<R: BufRead> ChunkReader<R> {
    pub(crate) fn new(input: R, marker: &str) -> Self {
        ChunkReader {
            input,
            marker: marker.to_string(),
            done: false,
        }
    }

    /// The next chunk, or `None` at end of input. A final chunk without a marker still counts
    /// if it holds anything but white space.
    pub(crate) fn next_chunk(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        let mut chunk = String::new();
        let mut raw = Vec::new();
        loop {
            raw.clear();
            match self.input.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => {
                    self.done = true;
                    return (!chunk.trim().is_empty()).then_some(chunk);
                }
                Ok(_) => {
                    let line = String::from_utf8_lossy(&raw);
                    let bare = line.trim_end_matches(['\n', '\r']);
                    if bare == self.marker {
                        return Some(chunk);
                    }
                    chunk.push_str(bare);
                    chunk.push('\n');
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_marker_lines() {
        let input = "a\nb\n;;\n;;\nc ;;\n;;  \nlast";
        let mut r = ChunkReader::new(input.as_bytes(), ";;");
        assert_eq!(r.next_chunk().as_deref(), Some("a\nb\n"));
        assert_eq!(r.next_chunk().as_deref(), Some(""));
        assert_eq!(r.next_chunk().as_deref(), Some("c ;;\n;;  \nlast\n"));
        assert_eq!(r.next_chunk(), None);
    }

    #[test]
    fn blank_tail_is_not_a_chunk() {
        let mut r = ChunkReader::new("x\n;;\n\n".as_bytes(), ";;");
        assert_eq!(r.next_chunk().as_deref(), Some("x\n"));
        assert_eq!(r.next_chunk(), None);
    }
}
