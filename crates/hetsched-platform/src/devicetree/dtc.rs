//! Compiling a `.dts` as the kernel build does: the C preprocessor with the kernel's
//! include directories, then `dtc`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{one_line, PlatformError};

/// Directories to search for `#include`s and `/include/`s of `dts`: the extra ones given,
/// the file's own directory, and, inside a kernel source tree, `scripts/dtc/include-prefixes`
/// and `include` (found by walking up from the file).
pub fn default_includes(dts: &Path, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = extra.to_vec();
    let dir = dts.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    dirs.push(dir.clone());
    let mut anc = Some(dir.as_path());
    while let Some(a) = anc {
        let prefixes = a.join("scripts/dtc/include-prefixes");
        if prefixes.is_dir() {
            dirs.push(prefixes);
            dirs.push(a.join("include"));
            break;
        }
        anc = a.parent();
    }
    dirs
}

/// Compile a `.dts` to a blob as the kernel build does (scripts/Makefile.lib, v6.11):
/// `cpp -nostdinc -I<dirs> -undef -D__DTS__ -x assembler-with-cpp`, then
/// `dtc -O dtb -b 0 -i <dirs>`.
pub fn compile_dts(dts: &Path, includes: &[PathBuf]) -> Result<Vec<u8>, PlatformError> {
    let origin = dts.display().to_string();
    let io = |m: String| PlatformError::Io {
        path: origin.clone(),
        message: one_line(&m),
    };
    if !dts.is_file() {
        return Err(io("no such file".into()));
    }
    let mut cpp = Command::new("cpp");
    cpp.arg("-nostdinc");
    for d in includes {
        cpp.arg("-I").arg(d);
    }
    // Line markers kept: dtc reads them, so its errors name the source file and line.
    cpp.args(["-undef", "-D__DTS__", "-x", "assembler-with-cpp"]);
    cpp.arg(dts);
    let pre = cpp.output().map_err(|e| {
        io(format!(
            "cannot run cpp ({e}): install it (Debian: apt-get install cpp) or give a .dtb"
        ))
    })?;
    if !pre.status.success() {
        return Err(io(format!(
            "cpp failed: {}",
            first_line(&String::from_utf8_lossy(&pre.stderr))
        )));
    }
    let mut dtc = Command::new("dtc");
    dtc.args(["-q", "-I", "dts", "-O", "dtb", "-b", "0"]);
    for d in includes {
        dtc.arg("-i").arg(d);
    }
    dtc.arg("-");
    dtc.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = dtc.spawn().map_err(|e| {
        io(format!(
            "cannot run dtc ({e}): install it (Debian: apt-get install device-tree-compiler) or give a .dtb"
        ))
    })?;
    let input = pre.stdout;
    let mut stdin = child.stdin.take();
    let writer = std::thread::spawn(move || {
        use std::io::Write as _;
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
        drop(stdin);
    });
    let out = child
        .wait_with_output()
        .map_err(|e| io(format!("dtc failed: {e}")))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(io(format!(
            "dtc failed: {}",
            first_line(&String::from_utf8_lossy(&out.stderr))
        )));
    }
    Ok(out.stdout)
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| l.contains("rror"))
        .or_else(|| s.lines().next())
        .unwrap_or("")
        .trim()
        .to_string()
}
