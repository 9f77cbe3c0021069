//! Random valid deployments from the shipped catalog, for property tests:
//! a device, a host of the same vendor, a size in the device's range, a
//! count and a layout; what the resolver rejects (a device the host cannot
//! take, a file system without its throughput) is skipped, so every
//! deployment a test sees is one a user could write.
#![allow(dead_code)]

use storlab_model::Catalog;

/// splitmix64: a seeded stream, enough for test inputs.
pub struct Gen(pub u64);

impl Gen {
    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.u64() % n as u64) as usize
    }
    pub fn f64(&mut self) -> f64 {
        (self.u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// One `[configs.NAME]` table with one pool, or `None` when the device has
/// no host of its vendor.
pub fn config(cat: &Catalog, g: &mut Gen, name: &str) -> Option<String> {
    let devices: Vec<_> = cat.devices.values().collect();
    let d = *g.pick(&devices);
    let vendor = d.id.split('/').next()?;
    let hosts: Vec<_> = cat.hosts.values().filter(|h| h.id.split('/').next() == Some(vendor)).collect();
    if hosts.is_empty() {
        return None;
    }
    let h = *g.pick(&hosts);
    let mut pool = format!("device = \"{}\"\n", d.id);
    let rule = &d.size_gib;
    if rule.fixed.is_none() {
        let lo = rule.min.as_ref().map_or(1.0, |n| n.value).max(1.0);
        let hi = rule.max.as_ref().map_or(lo * 100.0, |n| n.value).max(lo);
        // Log-uniform, so small volumes (the bursting ones) come up often.
        let size = (lo * (hi / lo).powf(g.f64())).round().clamp(lo, hi);
        let key = if d.kind == storlab_model::catalog::DeviceKind::FileSystem { "storage_gib" } else { "size_gib" };
        pool += &format!("{key} = {size}\n");
    }
    if !d.levels.is_empty() {
        let l = g.pick(&d.levels).throughput_mb_s.value;
        pool += &format!("throughput_mib_s = {l}\n");
    }
    let count = 1 + g.below(4) as u32;
    if count > 1 {
        let layout = if d.kind == storlab_model::catalog::DeviceKind::FileSystem { "spread" } else { "stripe" };
        pool += &format!("count = {count}\nlayout = \"{layout}\"\n");
    }
    Some(format!("[configs.{name}]\nhost = \"{}\"\n[[configs.{name}.pools]]\n{pool}", h.id))
}

/// A scenario of `n` random configs that all resolve, with the text of
/// each; configs the resolver rejects are replaced by new draws.
pub fn scenario(cat: &Catalog, g: &mut Gen, n: usize) -> String {
    let mut out = String::new();
    let mut tries = 0;
    let mut have = 0;
    while have < n {
        tries += 1;
        assert!(tries < 200 * n, "only {have} of {n} random configs resolved in {tries} draws");
        let name = format!("c{have}");
        let Some(c) = config(cat, g, &name) else { continue };
        if storlab_model::limits(cat, "gen.toml", &c).is_ok() {
            out += &c;
            out.push('\n');
            have += 1;
        }
    }
    out
}
