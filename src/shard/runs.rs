//! `runs.bin`: a shard's runs, each as its job number, its length and its totals in postcard's
//! compact binary form, which keeps every float bit for bit, so a merge folds exactly the
//! numbers the runs produced.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::sim::RunResult;

pub const FILE: &str = "runs.bin";

/// Appends runs to a shard's `runs.bin` as they come.
pub struct RunsWriter(BufWriter<File>);

impl RunsWriter {
    pub fn create(dir: &Path) -> io::Result<RunsWriter> {
        Ok(RunsWriter(BufWriter::new(File::create(dir.join(FILE))?)))
    }

    pub fn write(&mut self, index: u64, run: &RunResult) -> io::Result<()> {
        let bytes = postcard::to_stdvec(run).map_err(io::Error::other)?;
        self.0.write_all(&index.to_le_bytes())?;
        self.0.write_all(&(bytes.len() as u64).to_le_bytes())?;
        self.0.write_all(&bytes)
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Reads a shard's runs back, one at a time, in the order they were written: from the shard's
/// file, or from any reader (the fuzz target's bytes).
pub struct RunsReader<R = BufReader<File>> {
    path: PathBuf,
    file: R,
    buffer: Vec<u8>,
}

impl RunsReader {
    pub fn open(dir: &Path) -> Result<RunsReader, Error> {
        let path = dir.join(FILE);
        let file =
            File::open(&path).map_err(Error::io(format!("cannot read {}", path.display())))?;
        Ok(RunsReader::new(path, BufReader::new(file)))
    }
}

impl<R: Read> RunsReader<R> {
    /// Reads runs from `file`, named `path` in errors.
    pub(crate) fn new(path: PathBuf, file: R) -> RunsReader<R> {
        RunsReader {
            path,
            file,
            buffer: Vec::new(),
        }
    }

    /// The next run, which must be job `index`'s.
    pub fn next(&mut self, index: u64) -> Result<RunResult, Error> {
        let bad = |why: String| Error::BadOutput(format!("{}: {why}", self.path.display()));
        let mut word = [0u8; 8];
        self.file.read_exact(&mut word).map_err(|_| {
            bad(format!(
                "ends before job {index}'s run; the shard is cut short"
            ))
        })?;
        let found = u64::from_le_bytes(word);
        if found != index {
            return Err(bad(format!(
                "job {found}'s run where job {index}'s should be"
            )));
        }
        let cut = |_| bad(format!("job {index}'s run is cut short"));
        self.file.read_exact(&mut word).map_err(cut)?;
        let len = u64::from_le_bytes(word);
        self.buffer.clear();
        (&mut self.file)
            .take(len)
            .read_to_end(&mut self.buffer)
            .map_err(cut)?;
        if self.buffer.len() as u64 != len {
            return Err(bad(format!("job {index}'s run is cut short")));
        }
        postcard::from_bytes(&self.buffer)
            .map_err(|e| bad(format!("job {index}'s run cannot be read: {e}")))
    }

    /// Checks that nothing follows the last run.
    pub fn end(mut self) -> Result<(), Error> {
        let mut byte = [0u8; 1];
        match self.file.read(&mut byte) {
            Ok(0) => Ok(()),
            _ => Err(Error::BadOutput(format!(
                "{}: more runs than its shard.toml says",
                self.path.display()
            ))),
        }
    }
}
