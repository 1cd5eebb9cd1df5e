//! A file written beside its place and moved there when whole (`gen`,
//! `packets -w`): until then a file of that name is as it was, and a run
//! that fails or is stopped leaves nothing half written in its place.
//! What a run killed outright leaves is a hidden file named for its
//! process, which the next run in that folder removes.

use std::path::{Path, PathBuf};

use super::RunError;
use super::stop::remove_left;
use crate::output::text::terminal_safe;

/// A capture written beside its place and moved there when whole.
pub struct Beside {
    /// `.NAME.roce-dissect-PID.partial`, in the folder of `target`.
    pub partial: PathBuf,
    /// What the rename replaces: `output`, or the file a link names (the
    /// link stays).
    pub target: PathBuf,
}

/// Where a capture for `output` is written before it is whole; `None` when
/// `output` is there and is no regular file (a named pipe, `/dev/null`) or
/// a link to nothing, which is written as it is.
pub fn beside(output: &Path) -> Option<Beside> {
    let target = match std::fs::metadata(output) {
        Ok(m) if !m.is_file() => return None,
        Ok(_) => std::fs::canonicalize(output).ok()?,
        // A link to nothing yet: the file is made where it points.
        Err(_) if std::fs::symlink_metadata(output).is_ok() => return None,
        Err(_) => output.to_path_buf(),
    };
    let name = target.file_name()?.to_string_lossy();
    let partial = target.with_file_name(format!(
        ".{name}.roce-dissect-{}.partial",
        std::process::id()
    ));
    Some(Beside { partial, target })
}

/// Creates the file `gen` writes: the partial one beside `output`, with
/// the permissions of the file it will replace; or, where that folder
/// cannot be written but the file can, `output` itself (`None` then).
pub fn create_output(
    output: &Path,
    beside: Option<Beside>,
) -> Result<(std::fs::File, Option<Beside>), RunError> {
    if let Some(b) = beside {
        remove_left(b.partial.parent().unwrap_or(Path::new(".")), partial_pid);
        if let Ok(file) = std::fs::File::create(&b.partial) {
            if let Ok(m) = std::fs::metadata(&b.target) {
                let _ = file.set_permissions(m.permissions());
            }
            return Ok((file, Some(b)));
        }
    }
    let file = std::fs::File::create(output).map_err(|e| {
        RunError::Usage(format!(
            "{}: {e}",
            terminal_safe(&output.display().to_string())
        ))
    })?;
    Ok((file, None))
}

/// The process that writes a file of [`beside`]'s, from its name.
fn partial_pid(name: &str) -> Option<u32> {
    let (head, pid) = name
        .strip_suffix(".partial")?
        .rsplit_once(".roce-dissect-")?;
    head.starts_with('.').then_some(())?;
    pid.parse().ok()
}
