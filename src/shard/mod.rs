//! Sweeps split over machines. `retrysim run CONFIG --shard I/N` runs every N-th job of the
//! sweep from job I and keeps each run's totals (and its trace parts) in a shard folder;
//! `retrysim merge` checks that the shards are one whole set of one run, then folds their runs
//! in job order, as one process would have, into the same output folder, byte for byte.

mod runs;

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::{Change, Origin, Source};
use crate::error::Error;
use crate::run::Share;

pub use runs::{RunsReader, RunsWriter};

/// `I/N`: shard I (from 0) of N, as `--shard` takes it.
pub fn parse(text: &str) -> Result<Share, String> {
    let wrong = || {
        format!(
            "`{text}` is not a shard: write I/N, shard I of N, with N from 1 and I from 0 to N − 1 \
             (such as 0/4 … 3/4; a Slurm array task id or a Kubernetes completion index)"
        )
    };
    let (i, n) = text.split_once('/').ok_or_else(wrong)?;
    let (index, count) = (
        i.trim().parse::<u64>().map_err(|_| wrong())?,
        n.trim().parse::<u64>().map_err(|_| wrong())?,
    );
    if count == 0 || index >= count {
        return Err(wrong());
    }
    Ok(Share { index, count })
}

/// What a merge needs to know of the run a shard came from: the config and the command line's
/// changes (to rebuild the sweep), and a fingerprint shared by every shard of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub retrysim: String,
    /// The experiment's name, changes included: the merged folder's name.
    pub experiment: String,
    pub shard: u64,
    pub shards: u64,
    /// How many runs this shard holds.
    pub runs: u64,
    /// SHA-256 of everything the shards of one run must share.
    pub fingerprint: String,
    /// The config as the run named it, and the folder its files are read from.
    pub config: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_dir: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    pub intents: bool,
    pub attempts: bool,
    /// SHA-256 of every other file in the shard folder, by name: a shard crosses machines and
    /// shared volumes, and a merge refuses any file that changed on the way.
    pub files: BTreeMap<String, String>,
}

/// The header's file, beside `config.toml` (the config's text) and `runs.bin`.
pub const HEADER: &str = "shard.toml";
pub const CONFIG: &str = "config.toml";

/// How a run is asked for, which every shard of it shares.
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub source: &'a Source,
    pub changes: &'a [Change],
    pub intents: bool,
    pub attempts: bool,
}

impl Request<'_> {
    /// The header of shard `share` of this run, which holds `runs` runs whose files have the
    /// digests `files`.
    pub fn header(
        &self,
        experiment: &str,
        share: Share,
        runs: u64,
        files: BTreeMap<String, String>,
    ) -> Header {
        Header {
            retrysim: env!("CARGO_PKG_VERSION").into(),
            experiment: experiment.into(),
            shard: share.index,
            shards: share.count,
            runs,
            fingerprint: self.fingerprint(share.count),
            config: self.source.name.clone(),
            config_dir: self.source.origin.folder().map(absolute),
            changes: self.changes.to_vec(),
            intents: self.intents,
            attempts: self.attempts,
            files,
        }
    }

    /// Everything that makes two shards parts of one run: the version, the config's name and
    /// text, the changes, the traces kept and the number of shards.
    pub fn fingerprint(&self, shards: u64) -> String {
        let mut h = Sha256::new();
        let changes: Vec<String> = self.changes.iter().map(ToString::to_string).collect();
        for part in [
            env!("CARGO_PKG_VERSION"),
            &self.source.name,
            &self.source.text,
            &changes.join("\n"),
            &format!("{} {} {shards}", self.intents, self.attempts),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        hex(&h.finalize())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of every file in the shard folder `dir` but its header, by name.
pub fn digests(dir: &Path) -> io::Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != HEADER {
            files.insert(name, digest(&entry.path())?);
        }
    }
    Ok(files)
}

/// The SHA-256 of one file, read a block at a time.
fn digest(path: &Path) -> io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut block = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut block)? {
            0 => return Ok(hex(&h.finalize())),
            n => h.update(&block[..n]),
        }
    }
}

/// The folder name of shard `share` of experiment `name`.
pub fn folder_name(name: &str, share: Share) -> String {
    format!("{name}.shard-{}-of-{}", share.index, share.count)
}

/// An absolute form of `dir`, so a merge run from another working folder finds the config's
/// files; as given if the working folder is unknown.
fn absolute(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// One shard folder as a merge reads it.
pub struct Shard {
    pub dir: PathBuf,
    pub header: Header,
}

impl Shard {
    /// Reads the header of the shard folder `dir`.
    pub fn open(dir: &Path) -> Result<Shard, Error> {
        let file = dir.join(HEADER);
        let text = std::fs::read_to_string(&file).map_err(|e| {
            Error::BadOutput(format!(
                "{}: not a shard folder ({}: {e}); `retrysim run CONFIG --shard I/N` writes one",
                dir.display(),
                HEADER
            ))
        })?;
        let header: Header = toml::from_str(&text)
            .map_err(|e| Error::BadOutput(format!("{}: {e}", file.display())))?;
        let shard = Shard {
            dir: dir.to_path_buf(),
            header,
        };
        shard.verify()?;
        Ok(shard)
    }

    /// Checks every file of the folder against the digests its header recorded: each there,
    /// each the same bytes, and nothing else beside them.
    fn verify(&self) -> Result<(), Error> {
        let h = &self.header;
        let run = format!(
            "shard {}/{} of {} recorded",
            h.shard, h.shards, h.experiment
        );
        let found =
            digests(&self.dir).map_err(Error::io(format!("cannot read {}", self.dir.display())))?;
        for (name, want) in &h.files {
            let path = self.dir.join(name);
            match found.get(name) {
                None => {
                    return Err(Error::BadOutput(format!(
                        "{}: missing, though {run} it",
                        path.display()
                    )));
                }
                Some(got) if got != want => {
                    return Err(Error::BadOutput(format!(
                        "{}: its SHA-256 is not the one {run}: the file changed after the shard \
                         was written; run `--shard {}/{}` again",
                        path.display(),
                        h.shard,
                        h.shards
                    )));
                }
                Some(_) => {}
            }
        }
        if let Some(extra) = found.keys().find(|name| !h.files.contains_key(*name)) {
            return Err(Error::BadOutput(format!(
                "{}: not a file {run}; a shard folder holds only what its run wrote",
                self.dir.join(extra).display()
            )));
        }
        Ok(())
    }

    /// The config the shard's run read, as it read it.
    pub fn source(&self) -> Result<Source, Error> {
        let path = self.dir.join(CONFIG);
        let text = std::fs::read_to_string(&path)
            .map_err(Error::io(format!("cannot read {}", path.display())))?;
        Ok(Source {
            name: self.header.config.clone(),
            text,
            origin: self
                .header
                .config_dir
                .clone()
                .map_or(Origin::Text, Origin::Folder),
        })
    }
}

/// Checks that `shards` are the whole set of one run, each once, and returns them in shard
/// order.
pub fn whole_set(mut shards: Vec<Shard>) -> Result<Vec<Shard>, Error> {
    let Some(first) = shards.first() else {
        return Err(Error::BadOutput(
            "merge needs at least one shard folder".into(),
        ));
    };
    let (fingerprint, count) = (first.header.fingerprint.clone(), first.header.shards);
    let first_dir = first.dir.clone();
    for s in &shards {
        if s.header.shard >= s.header.shards {
            return Err(Error::BadOutput(format!(
                "{}: shard {} of {} cannot be: a shard is numbered from 0 to its count − 1",
                s.dir.join(HEADER).display(),
                s.header.shard,
                s.header.shards
            )));
        }
    }
    for s in &shards {
        if s.header.fingerprint != fingerprint || s.header.shards != count {
            return Err(Error::BadOutput(format!(
                "{} and {} are shards of different runs (another config, change, trace, \
                 retrysim version or shard count): merge the shards of one run",
                first_dir.display(),
                s.dir.display()
            )));
        }
    }
    shards.sort_by_key(|s| s.header.shard);
    for pair in shards.windows(2) {
        if pair[0].header.shard == pair[1].header.shard {
            return Err(Error::BadOutput(format!(
                "shard {} of {count} is given twice: {} and {}",
                pair[0].header.shard,
                pair[0].dir.display(),
                pair[1].dir.display()
            )));
        }
    }
    // Walked by the shards given, not by the count: a header may claim any count.
    let mut missing: Vec<String> = Vec::new();
    let mut next = 0;
    for s in &shards {
        while next < s.header.shard && missing.len() < MAX_NAMED {
            missing.push(next.to_string());
            next += 1;
        }
        next = s.header.shard + 1;
    }
    while next < count && missing.len() < MAX_NAMED {
        missing.push(next.to_string());
        next += 1;
    }
    let absent = count - shards.len() as u64;
    match missing.as_slice() {
        [] => Ok(shards),
        [one] if absent == 1 => Err(Error::BadOutput(format!(
            "shard {one} of {count} is missing: run `--shard {one}/{count}` and merge again"
        ))),
        named => Err(Error::BadOutput(format!(
            "{absent} shards of {count} are missing ({}{}): run `--shard I/{count}` for each and \
             merge again",
            named.join(", "),
            if absent > named.len() as u64 {
                ", …"
            } else {
                ""
            }
        ))),
    }
}

/// The most missing shards an error names.
const MAX_NAMED: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_are_i_of_n_from_zero() {
        assert_eq!(parse("0/1"), Ok(Share::ALL));
        assert_eq!(parse("3/5"), Ok(Share { index: 3, count: 5 }));
        for bad in ["5/5", "1/0", "1", "a/2", "-1/2", "1/2/3", ""] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains("I from 0 to N − 1"), "{bad}: {e}");
        }
    }
}
