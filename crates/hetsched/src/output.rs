//! Output files that never lie: every file hetsched writes (traces, result JSON, reports,
//! sweep tables and points, generated workloads) is written under a temporary name
//! beside its final one, `.NAME.PID.N.tmp`, and renamed over the final name only when
//! complete. A run that fails or is interrupted ([`hetsched_core::interrupt`]) removes
//! its temporary files and leaves whatever was at the final name untouched.
//!
//! The temporary files alive in the process are registered, so that a signal handler that
//! has to leave at once can remove them ([`remove_pending`]).

use crate::Error;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Temporary files not yet renamed or removed.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |err| Error::Io {
        path: path.display().to_string(),
        err,
    }
}

/// The temporary name for `dest`: `.NAME.PID.N.tmp` in the same directory (so the rename
/// stays on one file system and is atomic).
pub fn temp_path(dest: &Path) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir_of(dest).join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A file being written under its temporary name. [`Pending::commit`] renames it to the
/// final name; dropping it uncommitted removes it.
#[derive(Debug)]
pub struct Pending {
    tmp: PathBuf,
    dest: PathBuf,
}

impl Pending {
    /// Creates the temporary file for `dest` and returns it with the handle to write.
    pub fn create(dest: &Path) -> Result<(Pending, File), Error> {
        let tmp = temp_path(dest);
        // errors name the file the user asked for, not the temporary one
        let f = File::create(&tmp).map_err(io(dest))?;
        if let Ok(mut p) = PENDING.lock() {
            p.push(tmp.clone());
        }
        Ok((
            Pending {
                tmp,
                dest: dest.to_path_buf(),
            },
            f,
        ))
    }

    /// Renames the complete file to its final name, unless a stop was requested: then the
    /// temporary file is removed and the error is [`hetsched_core::RunError::Interrupted`].
    pub fn commit(self) -> Result<(), Error> {
        if let Some(signal) = hetsched_core::interrupt::requested() {
            return Err(hetsched_core::RunError::Interrupted(signal).into());
        }
        std::fs::rename(&self.tmp, &self.dest).map_err(io(&self.dest))?;
        unregister(&self.tmp);
        std::mem::forget(self);
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
        unregister(&self.tmp);
    }
}

fn unregister(tmp: &Path) {
    if let Ok(mut p) = PENDING.lock() {
        p.retain(|q| q != tmp);
    }
}

/// Removes every temporary file still pending (for a handler about to exit the process
/// without unwinding). Uses `try_lock`: a holder of the lock is the thread being left.
pub fn remove_pending() {
    if let Ok(p) = PENDING.try_lock() {
        for tmp in p.iter() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes `bytes` as `path` by renaming a complete temporary file over it (see
/// [`Pending::commit`]), with no fsync: a process killed at any point leaves either the
/// old file or the new one, never part of it. After an operating-system crash or a power
/// loss the file may be missing, empty, cut short or hold stale blocks; use it for files
/// whose readers check them and can make them again (a sweep's point result files, see
/// [`crate::sweep::write_point`]).
pub fn write_renamed(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), Error> {
    let (pending, mut f) = Pending::create(path)?;
    f.write_all(bytes.as_ref()).map_err(io(path))?;
    drop(f);
    pending.commit()
}

/// Writes `bytes` as `path` atomically and durably: the temporary file, fsync, rename over
/// `path` (see [`Pending::commit`]), fsync of the directory.
pub fn write_atomic(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), Error> {
    let (pending, mut f) = Pending::create(path)?;
    f.write_all(bytes.as_ref()).map_err(io(path))?;
    f.sync_all().map_err(io(path))?;
    drop(f);
    pending.commit()?;
    File::open(dir_of(path))
        .and_then(|d| d.sync_all())
        .map_err(io(dir_of(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_pending_file_leaves_nothing_and_commit_renames() {
        let dir = std::env::temp_dir().join(format!("hetsched-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let dest = dir.join("a.txt");
        let (p, mut f) = Pending::create(&dest).unwrap_or_else(|e| panic!("{e}"));
        f.write_all(b"half").unwrap_or_default();
        let tmp = p.tmp.clone();
        assert!(tmp.exists());
        drop(p);
        assert!(!tmp.exists() && !dest.exists());
        write_atomic(&dest, "whole").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&dest).unwrap_or_default(), "whole");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(left.len(), 1, "{left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
