#![allow(dead_code)]
use std::path::{Path, PathBuf};
use storlab_model::Catalog;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn catalog() -> Catalog {
    let dir = root().join("python/storlab/catalog");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.sort();
    Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))).unwrap()
}

pub fn simulate(cat: &Catalog, text: &str) -> storlab_sim::SimRecord {
    storlab_sim::simulate(cat, "s.toml", text, Path::new("."), None, &storlab_sim::Overrides::default(), &mut |_| true).unwrap_or_else(|e| panic!("{e}"))
}

/// A scenario with its workload replaced by a CrystalDiskMark preset.
pub fn with_profile(text: &str, profile: &str) -> String {
    let mut out = String::new();
    let mut skip = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            skip = t == "[workload]" || t.starts_with("[[workload.") || t.starts_with("[workload.");
        }
        if !skip {
            out.push_str(line);
            out.push('\n');
        }
    }
    out + &format!("\n[workload]\nprofile = \"{profile}\"\n")
}
