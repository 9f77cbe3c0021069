//! Monthly cost: each priced component of a deployment at the catalog's list
//! prices for its region, with where each price comes from. A component the
//! catalog has no price for is listed with `usd: null`, never guessed.

use crate::catalog::{Catalog, DeviceKind, HostKind, PriceSpec, PriceUnit};
use crate::deployment::Deployment;
use serde::Serialize;

/// AWS and Azure price a month of on-demand time as 730 hours (8,760 h / 12),
/// the convention of both vendors' pricing calculators.
pub const HOURS_PER_MONTH: f64 = 730.0;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CostItem {
    pub item: String,
    pub usd: Option<f64>,
    pub quantity: f64,
    pub unit: String,
    pub unit_usd: Option<f64>,
    /// `vendor`, `secondary` or `unverified`: the status of the price's source.
    pub source_status: Option<String>,
    pub source: Option<String>,
    pub verified: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cost {
    pub region: String,
    pub monthly_cost_usd: f64,
    /// False when some component has no price in the catalog.
    pub complete: bool,
    pub breakdown: Vec<CostItem>,
}

/// The default region of a deployment: the scenario's, else the vendor's
/// region that the catalog prices (aws/us-east-1, azure/eastus).
pub fn region_for(dep: &Deployment) -> String {
    if let Some(r) = &dep.region {
        return r.clone();
    }
    match dep.host.id.split('/').next() {
        Some("aws") => "aws/us-east-1".into(),
        Some("azure") => "azure/eastus".into(),
        _ => "local".into(),
    }
}

fn round_cents(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// The quantity of a tiered price row that a figure `x` falls into.
fn tier_qty(p: &PriceSpec, x: f64) -> f64 {
    let lo = p.above.unwrap_or(0.0);
    let hi = p.upto.unwrap_or(f64::INFINITY);
    (x.min(hi) - lo).max(0.0)
}

/// The engine an RDS instance price is listed under: SQL Server by its
/// licence-included edition (`sqlserver-se`, `sqlserver-ee`), taken from
/// the config's `license`; others by name.
fn rds_price_engine(dep: &Deployment) -> Option<String> {
    match dep.engine.as_deref()? {
        "sqlserver" => match dep.license.as_str() {
            "windows-sql-standard" => Some("sqlserver-se".into()),
            "windows-sql-enterprise" => Some("sqlserver-ee".into()),
            _ => None,
        },
        e => Some(e.to_string()),
    }
}

/// Where a price comes from: its source's status, the source, verified.
type Described = (Option<String>, Option<String>, bool);

/// The host's line: on-demand hours with the config's licence; an RDS
/// instance class at RDS's price for its engine (Single-AZ); none for a
/// local machine.
fn host_items(cat: &Catalog, dep: &Deployment, region: &str, describe: &dyn Fn(&PriceSpec) -> Described) -> Vec<CostItem> {
    let mut items = Vec::new();
    let rds = dep.host.kind == HostKind::Rds;
    let rds_engine = rds_price_engine(dep);
    let what = if rds {
        match (&rds_engine, dep.engine.as_deref()) {
            (Some(e), _) => format!("engine {e}"),
            (None, Some("sqlserver")) => "engine sqlserver: set license = \"windows-sql-standard\" or \"windows-sql-enterprise\" for its licence-included price".into(),
            (None, _) => "engine not given".into(),
        }
    } else {
        dep.license.clone()
    };
    let host_rows: Vec<&PriceSpec> = cat
        .prices
        .iter()
        .filter(|p| p.region == region && p.item == dep.host.id && p.unit == PriceUnit::Hour)
        .filter(|p| {
            if rds {
                rds_engine.is_some() && p.engine == rds_engine && p.deployment.as_deref().unwrap_or("single-az") == "single-az"
            } else {
                p.license.as_deref().unwrap_or("linux") == dep.license
            }
        })
        .collect();
    if dep.host.kind != HostKind::Local {
        if host_rows.is_empty() {
            items.push(unpriced(format!("{} ({what}) — no price in the catalog for {region}", dep.host.id), HOURS_PER_MONTH, "hour"));
        }
        for p in host_rows {
            let (status, source, verified) = describe(p);
            items.push(CostItem {
                item: format!("{} ({what}) on-demand", dep.host.id),
                usd: Some(p.usd.value * HOURS_PER_MONTH),
                quantity: HOURS_PER_MONTH,
                unit: "hour".into(),
                unit_usd: Some(p.usd.value),
                source_status: status,
                source,
                verified,
            });
        }
    }
    items
}

/// A line the catalog has no price for: counted, and the total incomplete.
fn unpriced(item: String, quantity: f64, unit: &str) -> CostItem {
    CostItem { item, usd: None, quantity, unit: unit.into(), unit_usd: None, source_status: None, source: None, verified: false }
}

pub fn monthly_cost(cat: &Catalog, dep: &Deployment) -> Cost {
    let region = region_for(dep);
    let mut items = Vec::new();
    let describe = |p: &PriceSpec| {
        let prov = cat.provenance(&p.usd, p.src.as_deref());
        (
            prov.as_ref().map(|s| s.status.clone()),
            prov.as_ref().map(|s| format!("{} ({})", s.url, s.date)),
            prov.map_or(p.usd.verified, |s| s.verified && s.status == "vendor"),
        )
    };

    items.extend(host_items(cat, dep, &region, &describe));

    for pool in &dep.pools {
        let d = &pool.device;
        if d.kind == DeviceKind::Local {
            continue; // inside the host's price, or owned hardware
        }
        // RDS bills storage at its own rates: look for aws/rds/<type> first.
        let rds_item = format!("aws/rds/{}", d.id.rsplit('/').next().unwrap_or(""));
        let item_id = if dep.host.kind == HostKind::Rds && cat.prices.iter().any(|p| p.item == rds_item) { rds_item } else { d.id.clone() };
        let fs_dep = pool.fs_deployment.clone().unwrap_or_else(|| "multi-az".into());
        let rows: Vec<&PriceSpec> = cat
            .prices
            .iter()
            .filter(|p| p.region == region && p.item == item_id)
            .filter(|p| d.kind != DeviceKind::FileSystem || p.deployment.as_deref().unwrap_or("multi-az") == fs_dep)
            .collect();
        let n = f64::from(pool.count);
        let label = format!("pool {}: {}", pool.role.name(), if item_id == d.id { d.id.clone() } else { format!("{item_id} (RDS storage)") });
        if rows.is_empty() {
            items.push(unpriced(format!("{label} — no price in the catalog for {region}"), n, "device"));
            continue;
        }
        // Provisioned SSD IOPS above a file system's default with no price.
        if let (Some(inc), Some(prov)) = (d.iops_included, d.provisioned_iops) {
            if prov > inc && !rows.iter().any(|p| p.unit == PriceUnit::IopsMonth) {
                items.push(unpriced(format!("{label}: provisioned SSD IOPS above the included {} — no price in the catalog for {region}", inc.floor()), (prov - inc) * n, "IOPS-month"));
            }
        }
        for p in rows {
            let per_device = match p.unit {
                PriceUnit::GibMonth => tier_qty(p, d.size_gib),
                // File systems bill SSD IOPS above the default they include.
                PriceUnit::IopsMonth => match d.iops_included {
                    Some(inc) => tier_qty(p, (d.provisioned_iops.unwrap_or(inc) - inc).max(0.0)),
                    None => tier_qty(p, d.provisioned_iops.unwrap_or(0.0)),
                },
                PriceUnit::MibSMonth => tier_qty(p, d.provisioned_mib_s.unwrap_or(0.0)),
                PriceUnit::MbSMonth => tier_qty(p, d.throughput_capacity_mb_s.or(d.provisioned_mb_s).unwrap_or(0.0)),
                PriceUnit::DiskMonth => 1.0,
                PriceUnit::Hour => HOURS_PER_MONTH,
            };
            let qty = per_device * n;
            if qty <= 0.0 {
                continue;
            }
            let (status, source, verified) = describe(p);
            let range = match (p.above, p.upto) {
                (Some(a), Some(u)) => format!(" ({a}–{u})"),
                (Some(a), None) => format!(" (above {a})"),
                (None, Some(u)) => format!(" (up to {u})"),
                _ => String::new(),
            };
            items.push(CostItem {
                item: format!("{label}: {}{range}", p.unit.name()),
                usd: Some(p.usd.value * qty),
                quantity: qty,
                unit: p.unit.name().into(),
                unit_usd: Some(p.usd.value),
                source_status: status,
                source,
                verified,
            });
        }
    }
    let complete = items.iter().all(|i| i.usd.is_some());
    // `+ 0.0`: an empty f64 sum is −0.0.
    let total = items.iter().filter_map(|i| i.usd).sum::<f64>() + 0.0;
    for i in &mut items {
        i.usd = i.usd.map(round_cents);
    }
    Cost { region, monthly_cost_usd: round_cents(total), complete, breakdown: items }
}
