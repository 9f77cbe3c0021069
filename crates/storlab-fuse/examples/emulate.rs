//! `cargo run -p storlab-fuse --example emulate -- SCENARIO CONFIG BACKING MOUNT SECONDS [unpaced]`:
//! the emulator without Python, for trying it by hand.

use std::sync::atomic::AtomicBool;
use storlab_fuse::{emulate, Options, Target};

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/storlab/catalog");
    let files: Vec<(String, String)> = std::fs::read_dir(dir)?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .map(|e| (e.path().display().to_string(), std::fs::read_to_string(e.path()).unwrap()))
        .collect();
    let cat = storlab_model::Catalog::from_sources(files.iter().map(|(a, b)| (a.as_str(), b.as_str())))?;
    let text = std::fs::read_to_string(&a[1])?;
    let secs: f64 = a[5].parse()?;
    let opts = Options { unpaced: a.get(6).is_some_and(|x| x == "unpaced"), period_s: 1.0, ..Options::default() };
    let stop = AtomicBool::new(false);
    let t0 = std::time::Instant::now();
    let targets = [Target { role: None, backing: a[3].clone().into(), mount: a[4].clone().into() }];
    let s = emulate(&cat, &a[1], &text, &a[2], &targets, &opts, &stop, &mut |st| {
        eprintln!("{}", serde_json::to_string(st).unwrap());
        if t0.elapsed().as_secs_f64() > secs {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    })?;
    println!("{}", serde_json::to_string(&s)?);
    Ok(())
}
