//! The build identity: 16 hex digits of SHA-256 over every source the
//! binary is made of (`src/`, `sql/`, `data/`, `Cargo.toml`, `Cargo.lock`;
//! each file's path, length and bytes, in path order), as the compile-time
//! variable `NANOLOAD_BUILD_ID`. The cache keys its entries on it
//! (`src/cache.rs`): an entry written by another build — another scanner,
//! another record hash — is never reused.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut all = Vec::new();
    for d in ["src", "sql", "data"] {
        println!("cargo:rerun-if-changed={d}");
        files(&root.join(d), &mut all);
    }
    for f in ["Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={f}");
        all.push(root.join(f));
    }
    let mut rel: Vec<(String, PathBuf)> = all
        .into_iter()
        .map(|p| {
            let r = p
                .strip_prefix(&root)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            (r, p)
        })
        .collect();
    rel.sort();
    let mut h = Sha256::new();
    for (r, p) in rel {
        let bytes = std::fs::read(&p).unwrap_or_default();
        h.update((r.len() as u64).to_le_bytes());
        h.update(r.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let digest = h.finalize();
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=NANOLOAD_BUILD_ID={hex}");
}
