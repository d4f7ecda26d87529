//! A [`Write`] whose writes happen on a thread of their own.
//!
//! A 100-second `periodic` run writes about 500 MB of ftrace text. The kernel's side of
//! those `write(2)` calls (copying into the page cache, the file system's block
//! reservations) costs a third of the run's time when it is done on the thread that
//! simulates. [`BackgroundWriter`] hands the bytes to a second thread in blocks of
//! [`BLOCK`] bytes, so the simulation goes on while they are written: the trace sinks
//! ([`crate::FtraceTextSink`], [`crate::PerfettoSink`]) take it as their writer, as the
//! CLI and the trace benchmarks do. This is what `trace-cmd record` does with its
//! per-CPU recorder processes, for the same reason.
//!
//! The bytes reach the inner writer in the order they were written, in blocks; nothing
//! else about the output changes. At most [`IN_FLIGHT`] blocks wait for the thread: a
//! disk slower than the simulation makes `write` wait, so memory stays bounded.
//!
//! Errors: the first error of the inner writer stops the output (the blocks after it
//! are dropped). It is returned by the next `write` after the thread reported it, or
//! else by [`flush`](Write::flush) or [`BackgroundWriter::into_inner`].

use std::io::{self, IoSlice, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Bytes gathered before a block goes to the writing thread.
pub const BLOCK: usize = 256 * 1024;

/// Blocks that may wait for the writing thread before `write` waits too.
pub const IN_FLIGHT: usize = 4;

/// What the front sends to the writing thread.
enum Job {
    /// Write these bytes.
    Write(Vec<u8>),
    /// Flush the inner writer and answer with the first error, if any.
    Flush(SyncSender<io::Result<()>>),
}

/// A writer that passes its bytes to `W` on a thread of its own (module docs).
///
/// ```
/// use std::io::Write;
/// use hetsched_trace::BackgroundWriter;
///
/// let mut w = BackgroundWriter::new(Vec::new());
/// w.write_all(b"sched_switch: ").unwrap();
/// w.write_all(b"prev_comm=a").unwrap();
/// assert_eq!(w.into_inner().unwrap(), b"sched_switch: prev_comm=a");
/// ```
pub struct BackgroundWriter<W: Write + Send + 'static> {
    /// Bytes not yet sent (fewer than [`BLOCK`] after each `write`).
    buf: Vec<u8>,
    /// To the thread; `None` once it was told to end.
    jobs: Option<SyncSender<Job>>,
    /// Emptied blocks coming back from the thread, for reuse.
    free: Receiver<Vec<u8>>,
    /// Set by the thread at its first error.
    failed: Arc<AtomicBool>,
    /// The thread; it gives the writer back when it ends.
    thread: Option<JoinHandle<W>>,
}

impl<W: Write + Send + 'static> std::fmt::Debug for BackgroundWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundWriter")
            .field("pending", &self.buf.len())
            .field("failed", &self.failed.load(Ordering::Relaxed))
            .finish()
    }
}

impl<W: Write + Send + 'static> BackgroundWriter<W> {
    /// Starts the writing thread (named `hetsched-trace-io`) around `out`.
    ///
    /// # Panics
    /// If the operating system cannot start a thread (as [`std::thread::spawn`]).
    pub fn new(out: W) -> Self {
        let (jobs, jobs_rx) = mpsc::sync_channel(IN_FLIGHT);
        let (free_tx, free) = mpsc::channel();
        let failed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&failed);
        let thread = std::thread::Builder::new()
            .name("hetsched-trace-io".into())
            .spawn(move || write_blocks(out, jobs_rx, free_tx, flag))
            .expect("the trace writing thread starts");
        BackgroundWriter {
            buf: Vec::with_capacity(BLOCK),
            jobs: Some(jobs),
            free,
            failed,
            thread: Some(thread),
        }
    }

    /// Writes out everything, ends the thread and gives the inner writer back (flushed);
    /// or the first error of the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        self.finish()
    }

    /// Sends the pending bytes to the thread.
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = self
            .free
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BLOCK));
        let block = std::mem::replace(&mut self.buf, next);
        self.job(Job::Write(block))
    }

    fn job(&mut self, job: Job) -> io::Result<()> {
        match &self.jobs {
            Some(jobs) if jobs.send(job).is_ok() => Ok(()),
            _ => Err(ended()),
        }
    }

    /// Asks the thread for its first error (after everything sent so far is written).
    fn sync(&mut self) -> io::Result<()> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.job(Job::Flush(tx))?;
        rx.recv().unwrap_or_else(|_| Err(ended()))
    }

    /// Ends the thread and takes the writer back.
    fn finish(&mut self) -> io::Result<W> {
        self.jobs = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(out)) => Ok(out),
            _ => Err(ended()),
        }
    }

    /// The thread's error, if it reported one.
    fn check(&mut self) -> io::Result<()> {
        if self.failed.load(Ordering::Acquire) {
            self.sync()
        } else {
            Ok(())
        }
    }
}

impl<W: Write + Send + 'static> Write for BackgroundWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.check()?;
        self.buf.extend_from_slice(data);
        if self.buf.len() >= BLOCK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.check()?;
        let mut n = 0;
        for b in bufs {
            self.buf.extend_from_slice(b);
            n += b.len();
        }
        if self.buf.len() >= BLOCK {
            self.send()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()?;
        self.sync()
    }
}

impl<W: Write + Send + 'static> Drop for BackgroundWriter<W> {
    /// Writes out what is pending and waits for the thread; errors are ignored (use
    /// `flush` or `into_inner` to see them), as [`std::io::BufWriter`] does.
    fn drop(&mut self) {
        let _ = self.send();
        let _ = self.finish();
    }
}

/// The writing thread: writes each block, sends it back emptied, answers flushes.
fn write_blocks<W: Write>(
    mut out: W,
    jobs: Receiver<Job>,
    free: Sender<Vec<u8>>,
    failed: Arc<AtomicBool>,
) -> W {
    let mut error: Option<io::Error> = None;
    for job in jobs {
        match job {
            Job::Write(mut block) => {
                if error.is_none() && !failed.load(Ordering::Relaxed) {
                    if let Err(e) = out.write_all(&block) {
                        error = Some(e);
                        failed.store(true, Ordering::Release);
                    }
                }
                block.clear();
                let _ = free.send(block);
            }
            Job::Flush(answer) => {
                let result = match error.take() {
                    Some(e) => Err(e),
                    // output stopped at an error already reported
                    None if failed.load(Ordering::Relaxed) => Err(stopped()),
                    None => out.flush(),
                };
                let _ = answer.send(result);
            }
        }
    }
    out
}

fn ended() -> io::Error {
    io::Error::other("the trace writing thread ended")
}

fn stopped() -> io::Error {
    io::Error::other("trace output stopped at an earlier write error")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes succeed until `left` bytes were taken, then fail.
    struct Failing {
        left: usize,
        got: Arc<std::sync::Mutex<Vec<u8>>>,
    }

    impl Write for Failing {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::other("disk full"));
            }
            let n = data.len().min(self.left);
            self.left -= n;
            self.got.lock().unwrap().extend_from_slice(&data[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn bytes_arrive_in_order_across_blocks() {
        let mut w = BackgroundWriter::new(Vec::new());
        let mut want = Vec::new();
        for i in 0..100_000u32 {
            let line = format!("line {i} {}\n", "x".repeat((i % 97) as usize));
            if i % 3 == 0 {
                let n = w
                    .write_vectored(&[IoSlice::new(line.as_bytes()), IoSlice::new(b"")])
                    .unwrap();
                assert_eq!(n, line.len());
            } else {
                w.write_all(line.as_bytes()).unwrap();
            }
            want.extend_from_slice(line.as_bytes());
            if i % 25_000 == 0 {
                w.flush().unwrap();
            }
        }
        assert!(want.len() > 10 * BLOCK);
        assert_eq!(w.into_inner().unwrap(), want);
    }

    #[test]
    fn drop_writes_everything() {
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        {
            let mut w = BackgroundWriter::new(Failing {
                left: usize::MAX,
                got: Arc::clone(&got),
            });
            w.write_all(&[7u8; 3 * BLOCK + 5]).unwrap();
        }
        assert_eq!(got.lock().unwrap().len(), 3 * BLOCK + 5);
    }

    #[test]
    fn the_first_error_is_reported_and_output_stops() {
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut w = BackgroundWriter::new(Failing {
            left: BLOCK + 10,
            got: Arc::clone(&got),
        });
        let mut first = None;
        for _ in 0..64 {
            if let Err(e) = w.write_all(&[1u8; BLOCK / 2]) {
                first = Some(e);
                break;
            }
        }
        let err = match first {
            Some(e) => e,
            None => w.flush().unwrap_err(),
        };
        assert_eq!(err.to_string(), "disk full");
        // later calls say output stopped; nothing more reaches the writer
        assert!(w.flush().is_err());
        assert_eq!(got.lock().unwrap().len(), BLOCK + 10);
        assert!(w.into_inner().is_err());
    }
}
