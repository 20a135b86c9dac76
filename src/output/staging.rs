//! The staging folder a run writes into, beside its target `<root>/<name>`, moved into place
//! whole when the run ends, so a reader never sees a half-written experiment.
//!
//! Hidden names beside the target belong to runs of the same name:
//! `.<name>.partial-<pid>` while a run writes, `.<name>.old-<pid>-<k>` for an output being
//! replaced. Each run removes its own; a run also removes those of runs whose process is gone
//! (killed, or stopped by a second Ctrl-C). Two runs of one name at once both finish, and the
//! one that commits last is the output: always one whole run.
//!
//! A folder at the target is replaced only if retrysim wrote it: it holds the [`Mark`] file of
//! its kind (an output's `manifest.toml`, a shard's `shard.toml`, a calibration's marker), or
//! nothing at all. Anything else there is the user's, and is refused, never replaced.

use std::fs;
use std::io;

use crate::error::{Error, InTheWay};
use std::path::{Path, PathBuf};

/// The file whose presence says retrysim wrote a folder of this kind, so it may replace it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// An output folder (`run`, `merge`, an interrupted run's): its `manifest.toml`.
    Output,
    /// A shard folder: its `shard.toml`.
    Shard,
    /// A calibration's data folder, which has no manifest: a marker file of its own.
    Calibration,
}

impl Mark {
    /// The marker file's name in the folder.
    pub fn file(self) -> &'static str {
        match self {
            Mark::Output => "manifest.toml",
            Mark::Shard => crate::shard::HEADER,
            Mark::Calibration => CALIBRATION_MARK,
        }
    }
}

/// The file `calibrate` leaves in each data folder it writes, so a rerun may replace it.
pub const CALIBRATION_MARK: &str = ".written-by-retrysim";

/// A folder being filled, which becomes `<root>/<name>` on [`Staging::commit`] and is removed if
/// dropped before that.
pub struct Staging {
    path: PathBuf,
    target: PathBuf,
    root: PathBuf,
    name: String,
    mark: Mark,
    /// The folders above the staging folder that it made, deepest first: removed again, if
    /// still empty, when the staging folder is dropped uncommitted.
    made: Vec<PathBuf>,
    committed: bool,
}

/// How often a commit retries when another run of the same name moves its output in between.
const COMMIT_TRIES: usize = 100;

impl Staging {
    /// A fresh staging folder for `<root>/<name>`, after removing what dead runs of the same
    /// name left. Fails if something retrysim did not write is at `<root>/<name>`: it is not
    /// ours to replace.
    pub fn new(root: &Path, name: &str, mark: Mark) -> Result<Staging, Error> {
        let target = root.join(name);
        refuse_foreign(&target, mark)?;
        let making = || Error::io(format!("cannot write under {}", root.display()));
        let made = missing_folders(root);
        fs::create_dir_all(root).map_err(making())?;
        remove_leftovers(root, name);
        let path = root.join(format!(".{name}.partial-{}", std::process::id()));
        if path.exists() {
            fs::remove_dir_all(&path).map_err(making())?;
        }
        fs::create_dir(&path).map_err(making())?;
        Ok(Staging {
            path,
            target,
            root: root.to_path_buf(),
            name: name.to_string(),
            mark,
            made,
            committed: false,
        })
    }

    /// Whether `<root>/<name>` may be written: an error if something retrysim did not write
    /// is there.
    pub fn check_target(root: &Path, name: &str, mark: Mark) -> Result<(), Error> {
        refuse_foreign(&root.join(name), mark)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Keeps the staged folder at `<root>/<name>.interrupted`, replacing an older one there, and
    /// leaves `<root>/<name>` as it was.
    pub fn keep_interrupted(mut self) -> Result<PathBuf, Error> {
        let kept = self.root.join(format!("{}.interrupted", self.name));
        let keeping = || Error::io("cannot keep the finished points");
        refuse_foreign(&kept, self.mark)?;
        if kept.is_dir() {
            fs::remove_dir_all(&kept).map_err(keeping())?;
        }
        fs::rename(&self.path, &kept).map_err(keeping())?;
        self.committed = true;
        Ok(kept)
    }

    /// Replaces `<root>/<name>` with the staged folder. An output already there is moved aside
    /// first and removed after; if another run moves its own output in between, that one is
    /// moved aside too and the rename tried again.
    pub fn commit(mut self) -> Result<PathBuf, Error> {
        let moving = || Error::io("cannot move the output into place");
        let mut aside = Vec::new();
        let mut result = Err(io::Error::other("never tried"));
        for k in 0..COMMIT_TRIES {
            match fs::rename(&self.path, &self.target) {
                Ok(()) => {
                    result = Ok(());
                    break;
                }
                Err(e) => result = Err(e),
            }
            refuse_foreign(&self.target, self.mark)?;
            let old = self
                .root
                .join(format!(".{}.old-{}-{k}", self.name, std::process::id()));
            // Gone already if another run moved it aside first: then just try again.
            if fs::rename(&self.target, &old).is_ok() {
                aside.push(old);
            }
        }
        for old in aside {
            fs::remove_dir_all(old).map_err(moving())?;
        }
        result.map_err(moving())?;
        self.committed = true;
        Ok(self.target.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.path);
            // Only folders still empty: another run may have written into them meanwhile.
            for dir in &self.made {
                let _ = fs::remove_dir(dir);
            }
        }
    }
}

/// An error if something retrysim did not write is at `target`: anything but a folder, or a
/// folder that holds files but not the mark of its kind. Another run of the same name may move
/// its output aside and put its own in place while this looks, so a folder that seems to lack
/// the mark is looked at again: what retrysim did not write stays as it is, and is refused on
/// every look.
fn refuse_foreign(target: &Path, mark: Mark) -> Result<(), Error> {
    let in_the_way = |why| Err(Error::OutputInTheWay(target.to_path_buf(), why));
    for _ in 0..FOREIGN_LOOKS {
        match fs::symlink_metadata(target) {
            Ok(meta) if !meta.is_dir() => return in_the_way(InTheWay::NotAFolder),
            Ok(_) => {
                let ours =
                    fs::symlink_metadata(target.join(mark.file())).is_ok_and(|m| m.is_file());
                match fs::read_dir(target).map(|mut entries| entries.next().is_none()) {
                    Ok(empty) if ours || empty => return Ok(()),
                    // Moved aside while this looked: nothing is in the way.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                    _ => {}
                }
            }
            Err(_) => return Ok(()),
        }
    }
    in_the_way(InTheWay::NotWritten(mark.file()))
}

/// How many times a folder that seems not to be retrysim's is looked at before it is refused.
const FOREIGN_LOOKS: usize = 3;

/// The folders `fs::create_dir_all(dir)` would make, deepest first.
fn missing_folders(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && fs::symlink_metadata(d).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// Removes the staging and set-aside folders of earlier runs named `name` whose process has
/// ended. A process that still runs keeps its own; where the system cannot tell (no `/proc`),
/// nothing is removed.
fn remove_leftovers(root: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = leftover_pid(&file.to_string_lossy(), name) else {
            continue;
        };
        if pid != std::process::id() && process_gone(pid) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// The process id in a staging or set-aside folder name of a run named `name`.
fn leftover_pid(file: &str, name: &str) -> Option<u32> {
    let rest = file.strip_prefix('.')?.strip_prefix(name)?;
    let pid = rest
        .strip_prefix(".partial-")
        .or_else(|| rest.strip_prefix(".old-"))?;
    pid.split('-').next()?.parse().ok()
}

fn process_gone(pid: u32) -> bool {
    let proc = Path::new("/proc");
    proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_are_recognised_by_name_and_process() {
        assert_eq!(
            leftover_pid(".lost-reply.partial-42", "lost-reply"),
            Some(42)
        );
        assert_eq!(leftover_pid(".lost-reply.old-42-3", "lost-reply"), Some(42));
        assert_eq!(
            leftover_pid(".lost-reply-1m.partial-42", "lost-reply"),
            None
        );
        assert_eq!(leftover_pid("lost-reply", "lost-reply"), None);
        assert!(!process_gone(std::process::id()));
    }

    #[test]
    fn a_folder_is_replaced_only_with_its_mark_or_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("x");
        assert!(refuse_foreign(&dir, Mark::Output).is_ok(), "nothing there");
        fs::create_dir(&dir).unwrap();
        assert!(
            refuse_foreign(&dir, Mark::Output).is_ok(),
            "an empty folder"
        );
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        for mark in [Mark::Output, Mark::Shard, Mark::Calibration] {
            assert!(refuse_foreign(&dir, mark).is_err(), "{mark:?}");
        }
        fs::write(dir.join("shard.toml"), "").unwrap();
        assert!(refuse_foreign(&dir, Mark::Shard).is_ok());
        assert!(refuse_foreign(&dir, Mark::Output).is_err());
        let file = tmp.path().join("f");
        fs::write(&file, "").unwrap();
        assert!(refuse_foreign(&file, Mark::Output).is_err());
    }

    #[test]
    fn a_dropped_staging_folder_removes_the_folders_it_made() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("a/b");
        drop(Staging::new(&root, "x", Mark::Output).unwrap());
        assert!(!tmp.path().join("a").exists());
    }
}
