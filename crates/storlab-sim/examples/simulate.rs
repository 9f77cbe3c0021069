//! Runs `storlab_sim::simulate` on scenario files without Python: prints
//! each record as JSON to stdout and the CPU time per file to stderr.
//! `cargo run --release -p storlab-sim --example simulate -- FILE...`

use std::path::{Path, PathBuf};
use std::time::Instant;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("python/storlab/catalog");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("catalog folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.sort();
    let cat = storlab_model::Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))).expect("catalog");
    for arg in std::env::args().skip(1) {
        let path = Path::new(&arg);
        let text = std::fs::read_to_string(path).expect("scenario file");
        let t0 = Instant::now();
        match storlab_sim::simulate(&cat, &arg, &text, path.parent().unwrap_or(Path::new(".")), None, &storlab_sim::Overrides::default(), &mut |_| true) {
            Ok(rec) => {
                let s = t0.elapsed().as_secs_f64();
                eprintln!("{arg}: {} I/Os in {s:.3} s ({:.0} I/Os per s)", rec.simulated_ios, rec.simulated_ios as f64 / s);
                println!("{}", serde_json::to_string(&rec).unwrap());
            }
            Err(e) => eprintln!("{arg}: error: {e}"),
        }
    }
}
