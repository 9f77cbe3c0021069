//! Loads the shipped catalog (python/storlab/catalog/*.toml) for tests.
#![allow(dead_code)]

use std::path::PathBuf;
use storlab_model::Catalog;

pub fn catalog_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/storlab/catalog")
}

pub fn catalog() -> Catalog {
    let mut files: Vec<(String, String)> = std::fs::read_dir(catalog_dir())
        .expect("catalog dir")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.sort();
    Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))).unwrap_or_else(|e| panic!("{e}"))
}

pub fn limits(scenario: &str) -> storlab_model::LimitsReport {
    storlab_model::limits(&catalog(), "test.toml", scenario).unwrap_or_else(|e| panic!("{e}"))
}
