//! Replays every input of the fuzz targets on stable, as part of `make test`: the seed
//! corpus (`fuzz/corpus/<target>/`) and every crash or timeout kept
//! (`fuzz/artifacts/<target>/`), each through the same entry point the fuzzer calls
//! ([`hetsched::fuzz::TARGETS`]). A failure names the file.

// Test helpers panic on unexpected failures by design.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file());
    v.sort();
    v
}

#[test]
fn fuzz_corpus_and_artifacts_replay_without_failure() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut failed = Vec::new();
    for (name, entry) in hetsched::fuzz::TARGETS {
        let corpus = files(&fuzz.join("corpus").join(name));
        assert!(
            corpus.len() >= 3,
            "fuzz/corpus/{name}/ has {} seed inputs",
            corpus.len()
        );
        let artifacts = files(&fuzz.join("artifacts").join(name));
        for f in corpus.iter().chain(&artifacts) {
            let data = std::fs::read(f).unwrap();
            if let Err(e) = std::panic::catch_unwind(|| entry(&data)) {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failed.push(format!("{}: {msg}", f.display()));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
