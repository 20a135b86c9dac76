//! Writing one file to a path the user named (`trace --output FILE`), the way `cp` and `tee`
//! treat what is already there: a symbolic link is followed and stays a link; a FIFO or a
//! device is written through and stays what it was; a regular file (or nothing) is replaced
//! whole or not at all, by a rename from a temporary file beside it; a folder is refused.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How many links a path may pass through before it is taken for a loop, as Linux's `ELOOP`.
const MAX_LINKS: usize = 40;

/// Writes `bytes` to `path` by the convention above.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = follow_links(path)?;
    match fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a folder: name a file in it",
        )),
        Ok(meta) if !meta.is_file() => {
            let mut through = OpenOptions::new().write(true).open(&target)?;
            through.write_all(bytes)?;
            through.flush()
        }
        _ => replace(&target, bytes),
    }
}

/// Checks, before any work, that `path` can be written as [`write()`] would: not a folder, in a
/// folder that is there (or in `made`, the folder the command itself makes), and none of
/// `inputs`, the files the command reads — an export never writes over its own input, as `cp`
/// refuses to copy a file onto itself.
pub fn check(path: &Path, inputs: &[PathBuf], made: Option<&Path>) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let target = follow_links(path)?;
    let folder = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let ours = made.is_some_and(|m| folder.starts_with(m) || folder == m);
    if !ours && !fs::metadata(&folder).is_ok_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("there is no folder {}", folder.display()),
        ));
    }
    let Ok(meta) = fs::metadata(&target) else {
        return Ok(());
    };
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a folder: name a file in it",
        ));
    }
    let same = |input: &PathBuf| {
        fs::metadata(input).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
    };
    match inputs.iter().find(|i| same(i)) {
        Some(input) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "it is {}, which this command reads: an export never writes over its own input",
                input.display()
            ),
        )),
        None => Ok(()),
    }
}

/// The path `path` names once every link on its last component is followed (the links may
/// dangle: the last one's target is where a new file goes).
fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let to = fs::read_link(&at)?;
                at = match at.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a row"
    )))
}

/// Writes `bytes` beside `target` and renames them onto it, so `target` is whole or as it was.
pub(crate) fn replace(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let partial = target.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let written = fs::write(&partial, bytes).and_then(|()| fs::rename(&partial, target));
    if written.is_err() {
        let _ = fs::remove_file(&partial);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_followed_and_stays_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("real.txt");
        fs::write(&file, "old").unwrap();
        let link = tmp.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        write(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), "new");
        let dangling = tmp.path().join("dangling");
        std::os::unix::fs::symlink("made.txt", &dangling).unwrap();
        write(&dangling, b"made").unwrap();
        assert_eq!(
            fs::read_to_string(tmp.path().join("made.txt")).unwrap(),
            "made"
        );
        assert_eq!(
            fs::read_dir(tmp.path()).unwrap().count(),
            4,
            "no temporary file left"
        );
    }

    #[test]
    fn a_folder_is_refused_and_a_loop_ends() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(write(tmp.path(), b"x").is_err());
        let a = tmp.path().join("a");
        std::os::unix::fs::symlink("a", &a).unwrap();
        assert!(write(&a, b"x").is_err());
    }
}
