//! scry's own stdin, read so that SIGTERM/SIGHUP (and SIGINT in pipe mode) end the session
//! even while it waits for input: std's readers retry EINTR forever.

use std::io::Read;

use super::interrupt;

pub struct Stdin;

impl Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            // SAFETY: reads into a buffer we own, at most its length.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                return Err(err);
            }
            if interrupt::termination().is_some() {
                return Ok(0);
            }
            // A Ctrl-C at the prompt has nothing to interrupt.
            interrupt::take_interrupt();
        }
    }
}
