//! Names the commit the binary was built from, for `--version`:
//! `ROCE_DISSECT_VERSION` is `0.1.0 (commit 0123456789ab 2026-11-25)`, or
//! the bare version outside a git checkout (a published crate). Setting
//! `ROCE_DISSECT_COMMIT` names the commit instead (a build from a tarball).
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    println!("cargo:rerun-if-env-changed=ROCE_DISSECT_COMMIT");
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        // A new commit moves HEAD or the branch it names.
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head}");
        }
        println!("cargo:rerun-if-changed={dir}/packed-refs");
    }
    let commit = std::env::var("ROCE_DISSECT_COMMIT").ok().or_else(|| {
        let hash = git(&["rev-parse", "--short=12", "HEAD"])?;
        let date = git(&["show", "-s", "--format=%cs", "HEAD"]).unwrap_or_default();
        Some(format!("{hash} {date}").trim().to_string())
    });
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let full = match commit {
        Some(c) => format!("{version} (commit {c})"),
        None => version,
    };
    println!("cargo:rustc-env=ROCE_DISSECT_VERSION={full}");
}
