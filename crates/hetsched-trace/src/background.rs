//! Where the trace sinks' full buffers go: [`BlockWrite`], and [`BackgroundWriter`], which
//! writes them on a thread of its own.
//!
//! A 100-second `periodic` run writes about 500 MB of ftrace text. The kernel's side of
//! those `write(2)` calls (copying into the page cache, the file system's block
//! reservations) costs a third of the run's time when it is done on the thread that
//! simulates. The trace sinks ([`crate::FtraceTextSink`], [`crate::PerfettoSink`]) gather
//! their output in buffers of about 256 KiB and hand each full one over as a [`Block`]
//! ([`BlockWrite::write_block`]). Any [`Write`] takes a block by writing its bytes and
//! leaving it to the sink, which fills it again; [`BackgroundWriter`] sends it whole (its
//! buffers moved, not copied) to a second thread that writes it, and gives the sink an
//! emptied block back to fill, so the simulation goes on while the bytes are written:
//! the CLI and the trace benchmarks write their trace files so. This is what
//! `trace-cmd record` does with its per-CPU recorder processes, for the same reason.
//!
//! The bytes reach the inner writer in the order they were handed over; nothing else
//! about the output changes. At most [`IN_FLIGHT`] blocks wait for the thread: a disk
//! slower than the simulation makes `write_block` wait, so memory stays bounded.
//!
//! Errors: the first error of the inner writer stops the output (the blocks after it are
//! dropped). It is returned by the next `write_block` after the thread reported it, or
//! else by [`flush_blocks`](BlockWrite::flush_blocks) or [`BackgroundWriter::into_inner`].
//! A block that could not be sent because the thread ended is left to the caller; a
//! panic of the thread is reported with its message.

use std::io::{self, IoSlice, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SendError, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Blocks that may wait for the writing thread before `write_block` waits too.
pub const IN_FLIGHT: usize = 4;

/// A piece of output handed over whole: the first `len` bytes of `bytes`, with the first
/// `len` bytes of each insert's `bytes` placed after the first `at` bytes of it (inserts in
/// order of `at`). The bytes of a vector past its `len` are not output: a sink may keep
/// its buffer's whole length as scratch.
///
/// The [`PerfettoSink`](crate::PerfettoSink) hands its CPU bundles over as inserts,
/// between its packets' heads, without copying them into one buffer.
#[derive(Debug, Default)]
pub struct Block {
    /// The bytes around the inserts.
    pub bytes: Vec<u8>,
    /// Bytes of `bytes` output.
    pub len: usize,
    /// Pieces placed inside `bytes[..len]`.
    pub inserts: Vec<Insert>,
}

/// A piece of a [`Block`]: `bytes[..len]`, output after the first `at` bytes of the
/// block's own.
#[derive(Debug)]
pub struct Insert {
    /// Where it goes in the block's bytes.
    pub at: usize,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Bytes of `bytes` output.
    pub len: usize,
}

impl Block {
    /// A block of all of `bytes`.
    pub fn of(bytes: Vec<u8>) -> Block {
        Block {
            len: bytes.len(),
            bytes,
            inserts: Vec::new(),
        }
    }

    /// Whether it outputs nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0 && self.inserts.iter().all(|i| i.len == 0)
    }

    /// Writes the block's output to `out`: one `write_all` when it has no inserts, else
    /// `write_vectored` calls of up to [`MAX_SLICES`] pieces.
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        if self.inserts.is_empty() {
            return out.write_all(&self.bytes[..self.len]);
        }
        let mut g = Gather {
            out,
            slices: [IoSlice::new(&[]); MAX_SLICES],
            n: 0,
            result: Ok(()),
        };
        let mut start = 0;
        for ins in &self.inserts {
            g.push(&self.bytes[start..ins.at]);
            g.push(&ins.bytes[..ins.len]);
            start = ins.at;
        }
        g.push(&self.bytes[start..self.len]);
        g.finish()
    }
}

/// Where a trace sink's full buffers go (module docs).
pub trait BlockWrite {
    /// Outputs `block`; on return `block` is one for the caller to fill again: the same
    /// one (a [`Write`]: its bytes written), or another whose vectors' contents and
    /// lengths are any (a [`BackgroundWriter`]: an emptied block back from its thread, or
    /// a new one). On an error the block may or may not have been output.
    fn write_block(&mut self, block: &mut Block) -> io::Result<()>;

    /// Completes the output of the blocks given so far (every byte written, the
    /// destination flushed); the first error met, if any.
    fn flush_blocks(&mut self) -> io::Result<()>;
}

/// Writes each block as it comes; the block is left unchanged.
impl<W: Write> BlockWrite for W {
    fn write_block(&mut self, block: &mut Block) -> io::Result<()> {
        block.write_to(self)
    }

    fn flush_blocks(&mut self) -> io::Result<()> {
        self.flush()
    }
}

/// Pieces of output given to one `write_vectored` call: below Linux's `IOV_MAX` (1024).
pub const MAX_SLICES: usize = 64;

/// Pieces of output gathered for `write_vectored` calls of up to [`MAX_SLICES`] each.
struct Gather<'a, W: Write + ?Sized> {
    out: &'a mut W,
    slices: [IoSlice<'a>; MAX_SLICES],
    n: usize,
    /// The first error; later pieces are dropped.
    result: io::Result<()>,
}

impl<'a, W: Write + ?Sized> Gather<'a, W> {
    /// Adds `piece`, writing the pieces gathered first if there is no room for it.
    fn push(&mut self, piece: &'a [u8]) {
        if piece.is_empty() || self.result.is_err() {
            return;
        }
        if self.n == MAX_SLICES {
            self.result = write_all_vectored(self.out, &mut self.slices[..self.n]);
            self.n = 0;
        }
        self.slices[self.n] = IoSlice::new(piece);
        self.n += 1;
    }

    /// Writes the pieces left; returns the first error.
    fn finish(mut self) -> io::Result<()> {
        if self.result.is_ok() && self.n > 0 {
            self.result = write_all_vectored(self.out, &mut self.slices[..self.n]);
        }
        self.result
    }
}

/// Writes all of `slices`, as `Write::write_all` does for one (a write of 0 bytes is an
/// error, an interrupted one is retried).
fn write_all_vectored<W: Write + ?Sized>(
    out: &mut W,
    mut slices: &mut [IoSlice<'_>],
) -> io::Result<()> {
    while !slices.is_empty() {
        match out.write_vectored(slices) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "failed to write whole buffer",
                ))
            }
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What the front sends to the writing thread.
enum Job {
    /// Write this block's output.
    Write(Block),
    /// Flush the inner writer and answer with the first error, if any.
    Flush(SyncSender<io::Result<()>>),
}

/// A [`BlockWrite`] that writes its blocks to `W` on a thread of its own (module docs).
///
/// ```
/// use hetsched_trace::background::{Block, BlockWrite};
/// use hetsched_trace::BackgroundWriter;
///
/// let mut w = BackgroundWriter::new(Vec::new());
/// let mut block = Block::of(b"sched_switch: ".to_vec());
/// w.write_block(&mut block).unwrap();
/// // `block` is now one to fill again
/// block.bytes.clear();
/// block.bytes.extend_from_slice(b"prev_comm=a");
/// block.len = block.bytes.len();
/// block.inserts.clear();
/// w.write_block(&mut block).unwrap();
/// assert_eq!(w.into_inner().unwrap(), b"sched_switch: prev_comm=a");
/// ```
pub struct BackgroundWriter<W: Write + Send + 'static> {
    /// To the thread; `None` once it was told to end (or it ended).
    jobs: Option<SyncSender<Job>>,
    /// Blocks coming back from the thread, written, for reuse.
    free: Receiver<Block>,
    /// Blocks back from the thread and not given out again, the last one back on top:
    /// `write_block` gives it first, so the same few blocks go round (their buffers, the
    /// ones the sink filled last, the most likely still in the caches of the core that
    /// fills them); the others, made while the thread lagged, wait below.
    pool: Vec<Block>,
    /// Set by the thread at its first error.
    failed: Arc<AtomicBool>,
    /// The thread; it gives the writer back when it ends.
    thread: Option<JoinHandle<W>>,
    /// The message of the thread's panic, once it was joined after one.
    panic: Option<String>,
}

impl<W: Write + Send + 'static> std::fmt::Debug for BackgroundWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundWriter")
            .field("failed", &self.failed.load(Ordering::Relaxed))
            .field("panic", &self.panic)
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
            jobs: Some(jobs),
            free,
            pool: Vec::new(),
            failed,
            thread: Some(thread),
            panic: None,
        }
    }

    /// Writes out everything, ends the thread and gives the inner writer back (flushed);
    /// or the first error of the inner writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush_blocks()?;
        self.finish()
    }

    /// Asks the thread for its first error (after everything sent so far is written).
    fn sync(&mut self) -> io::Result<()> {
        let (tx, rx) = mpsc::sync_channel(1);
        match &self.jobs {
            Some(jobs) if jobs.send(Job::Flush(tx)).is_ok() => {}
            _ => return Err(self.ended()),
        }
        match rx.recv() {
            Ok(result) => result,
            Err(_) => Err(self.ended()),
        }
    }

    /// Ends the thread and takes the writer back.
    fn finish(&mut self) -> io::Result<W> {
        self.jobs = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(out)) => Ok(out),
            Some(Err(payload)) => {
                self.panic = Some(panic_message(&*payload));
                Err(self.ended())
            }
            None => Err(self.ended()),
        }
    }

    /// The error of a thread that is gone: joined (a panic's message kept) if not yet.
    fn ended(&mut self) -> io::Error {
        if self.thread.is_some() {
            // it ended on its own (a panic): take its message
            let _ = self.finish();
        }
        match &self.panic {
            Some(m) => io::Error::other(format!("the trace writing thread panicked: {m}")),
            None => io::Error::other("the trace writing thread ended"),
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

impl<W: Write + Send + 'static> BlockWrite for BackgroundWriter<W> {
    /// Sends `block` to the thread and puts in its place the one the thread gave back
    /// last (written: `pool`), or a new empty one. If the thread has ended, `block`
    /// stays as it was.
    fn write_block(&mut self, block: &mut Block) -> io::Result<()> {
        self.check()?;
        if block.is_empty() {
            return Ok(());
        }
        let Some(jobs) = &self.jobs else {
            return Err(self.ended());
        };
        // The last block back on top of the pool, and given.
        while let Ok(back) = self.free.try_recv() {
            self.pool.push(back);
        }
        let next = self.pool.pop().unwrap_or_default();
        let full = std::mem::replace(block, next);
        match jobs.send(Job::Write(full)) {
            Ok(()) => Ok(()),
            Err(SendError(job)) => {
                if let Job::Write(full) = job {
                    *block = full;
                }
                Err(self.ended())
            }
        }
    }

    fn flush_blocks(&mut self) -> io::Result<()> {
        self.sync()
    }
}

impl<W: Write + Send + 'static> Drop for BackgroundWriter<W> {
    /// Waits for the thread to write what it was given; errors are ignored (use
    /// `flush_blocks` or `into_inner` to see them), as [`std::io::BufWriter`] does.
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.finish();
        }
    }
}

/// The text of a panic's payload (a `&str` or `String`, as `panic!` makes).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// The writing thread: writes each block, sends it back, answers flushes.
fn write_blocks<W: Write>(
    mut out: W,
    jobs: Receiver<Job>,
    free: Sender<Block>,
    failed: Arc<AtomicBool>,
) -> W {
    let mut error: Option<io::Error> = None;
    for job in jobs {
        match job {
            Job::Write(block) => {
                if error.is_none() && !failed.load(Ordering::Relaxed) {
                    if let Err(e) = block.write_to(&mut out) {
                        error = Some(e);
                        failed.store(true, Ordering::Release);
                    }
                }
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

fn stopped() -> io::Error {
    io::Error::other("trace output stopped at an earlier write error")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of the blocks in these tests.
    const BLOCK: usize = 256 * 1024;

    /// Writes succeed until `left` bytes were taken, then fail (or panic).
    struct Failing {
        left: usize,
        panic: bool,
        got: Arc<std::sync::Mutex<Vec<u8>>>,
    }

    impl Write for Failing {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                assert!(!self.panic, "disk on fire");
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

    fn failing(left: usize, panic: bool) -> (Failing, Arc<std::sync::Mutex<Vec<u8>>>) {
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let w = Failing {
            left,
            panic,
            got: Arc::clone(&got),
        };
        (w, got)
    }

    /// Fills `block` (whatever it holds) with `text`, split around inserts of the pieces
    /// of `text` at the positions `cut` (sorted), as the `PerfettoSink` does, and some
    /// scratch bytes past each piece's length.
    fn fill(block: &mut Block, text: &[u8], cut: &[usize]) {
        let mut spare: Vec<Vec<u8>> = block.inserts.drain(..).map(|i| i.bytes).collect();
        block.bytes.clear();
        let mut start = 0;
        for pair in cut.chunks(2) {
            let (a, b) = (pair[0], *pair.get(1).unwrap_or(&text.len()));
            block.bytes.extend_from_slice(&text[start..a]);
            let mut piece = spare.pop().unwrap_or_default();
            piece.clear();
            piece.extend_from_slice(&text[a..b]);
            let len = piece.len();
            piece.extend_from_slice(b"scratch");
            block.inserts.push(Insert {
                at: block.bytes.len(),
                bytes: piece,
                len,
            });
            start = b;
        }
        block.bytes.extend_from_slice(&text[start..]);
        block.len = block.bytes.len();
        block.bytes.extend_from_slice(b"scratch");
    }

    #[test]
    fn bytes_arrive_in_order_across_blocks() {
        let mut w = BackgroundWriter::new(Vec::new());
        let mut plain = Vec::new();
        let mut want = Vec::new();
        let mut block = Block::default();
        let mut text = Vec::new();
        for i in 0..3_000u32 {
            text.clear();
            for j in 0..(i % 80) {
                text.extend_from_slice(
                    format!("line {i} {j} {}\n", "x".repeat(j as usize)).as_bytes(),
                );
            }
            let cut: Vec<usize> = (0..(i % 200) as usize)
                .map(|k| k * 7 % (text.len() + 1))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            fill(&mut block, &text, &cut);
            plain.write_block(&mut block).unwrap();
            w.write_block(&mut block).unwrap();
            want.extend_from_slice(&text);
            if i % 500 == 0 {
                w.flush_blocks().unwrap();
            }
        }
        assert!(want.len() > 10 * BLOCK);
        assert_eq!(plain, want);
        assert_eq!(w.into_inner().unwrap(), want);
    }

    #[test]
    fn drop_writes_everything() {
        let (out, got) = failing(usize::MAX, false);
        {
            let mut w = BackgroundWriter::new(out);
            for _ in 0..3 {
                w.write_block(&mut Block::of(vec![7u8; BLOCK])).unwrap();
            }
            w.write_block(&mut Block::of(vec![7u8; 5])).unwrap();
        }
        assert_eq!(got.lock().unwrap().len(), 3 * BLOCK + 5);
    }

    #[test]
    fn the_first_error_is_reported_and_output_stops() {
        let (out, got) = failing(BLOCK + 10, false);
        let mut w = BackgroundWriter::new(out);
        let mut first = None;
        for _ in 0..64 {
            if let Err(e) = w.write_block(&mut Block::of(vec![1u8; BLOCK / 2])) {
                first = Some(e);
                break;
            }
        }
        let err = match first {
            Some(e) => e,
            None => w.flush_blocks().unwrap_err(),
        };
        assert_eq!(err.to_string(), "disk full");
        // later calls say output stopped; nothing more reaches the writer
        assert!(w.flush_blocks().is_err());
        assert_eq!(got.lock().unwrap().len(), BLOCK + 10);
        assert!(w.into_inner().is_err());
    }

    #[test]
    fn a_panic_is_reported_with_its_message_and_a_block_not_sent_stays() {
        let (out, got) = failing(10, true);
        let mut w = BackgroundWriter::new(out);
        let mut first = None;
        for _ in 0..64 {
            if let Err(e) = w.write_block(&mut Block::of(vec![1u8; 100])) {
                first = Some(e);
                break;
            }
        }
        let err = match first {
            Some(e) => e,
            None => w.flush_blocks().unwrap_err(),
        };
        assert!(err.to_string().contains("disk on fire"), "{err}");
        assert_eq!(got.lock().unwrap().len(), 10);
        // the thread is gone: a block is not taken
        let mut block = Block::of(b"kept".to_vec());
        let err = w.write_block(&mut block).unwrap_err();
        assert!(err.to_string().contains("disk on fire"), "{err}");
        assert_eq!(&block.bytes[..block.len], b"kept");
        assert!(w.into_inner().is_err());
    }
}
