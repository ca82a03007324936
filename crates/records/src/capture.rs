//! A capture file written as a run goes (a pcap of a link), held by the run's output until it is
//! given its name among the results; removed from disk when the last holder drops it, so a run
//! that is never written leaves nothing behind.

use std::path::{Path, PathBuf};

/// A capture file on disk, removed when dropped.
#[derive(Debug)]
pub struct CaptureFile {
    path: PathBuf,
}

impl CaptureFile {
    /// Takes charge of the file at `path`: it is removed when this is dropped.
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Gives it a second name at `to` (a hard link, or a copy across file systems); the file
    /// stays where it is until dropped.
    pub fn link_to(&self, to: &Path) -> std::io::Result<()> {
        std::fs::hard_link(&self.path, to).or_else(|_| std::fs::copy(&self.path, to).map(|_| ()))
    }
}

impl Drop for CaptureFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
