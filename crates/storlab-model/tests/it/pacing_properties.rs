//! Properties of pacing over random deployments from the shipped catalog:
//! a bucket conserves tokens, and no pacer admits work faster than its cap.

use crate::common;
#[path = "../common/gen.rs"]
mod gen;

use storlab_model::deployment::resolve_all;
use storlab_model::pacing::{PacerSet, Secs};
use storlab_model::resources::PoolPlan;
use storlab_model::scenario::ScenarioFile;

/// Every bucketed resource of 40 random deployments, driven on its own at
/// saturation (every I/O arrives at 0 and waits its turn), from a random
/// starting balance. While work waits the bucket never sits full, so no
/// refill is lost to the cap, and tokens are conserved:
///   spent = initial + refill × T − final balance,
/// T the last admission. And admissions never outrun the peak rate: the
/// work before the last admission needs at least Σcost / peak seconds.
#[test]
fn buckets_conserve_tokens_and_pacers_keep_to_their_caps() {
    let cat = common::catalog();
    let mut g = gen::Gen(7);
    let text = gen::scenario(&cat, &mut g, 40);
    let sc = ScenarioFile::from_toml("gen.toml", &text).unwrap();
    let deps = resolve_all(&cat, "gen.toml", &sc).unwrap();
    let mut checked = 0;
    for dep in &deps {
        let pool = &dep.pools[0];
        let size = *g.pick(&[4096.0, 16384.0, 1048576.0]);
        let plan = PoolPlan::new(dep, pool, size, g.below(2) == 0);
        let costs = plan.mean_costs([0.0, 1.0, 0.0]);
        for (i, r) in plan.resources.iter().enumerate() {
            let (Some(b), true) = (&r.bucket, costs[i] > 0.0) else { continue };
            if b.refill_per_s <= 0.0 || b.capacity <= 0.0 {
                continue;
            }
            let mut set = PacerSet::new();
            let ids = set.register(0, &plan);
            let id = ids[i];
            let pct = 100.0 * g.f64();
            set.set_balance_percent(pct, Secs::ZERO);
            let initial = b.capacity * pct / 100.0;
            // Enough work to drain the bucket and run a while on the refill.
            let cost = costs[i];
            let n = ((1.5 * initial / cost) as usize + 2000).min(400_000);
            let mut last = Secs::ZERO;
            for _ in 0..n {
                last = set.pass(&[(id, cost)], Secs::ZERO);
            }
            let spent = cost * n as f64;
            let fin = set.get(id).bucket().unwrap().at(last);
            let want = initial + b.refill_per_s * last.0 - fin;
            let name = format!("{} {}: {}", dep.name, r.label(true), pool.device.id);
            assert!((spent - want).abs() <= 1e-6 * spent.max(b.capacity), "{name}: spent {spent}, initial + refill × T − final = {want}");
            assert!(fin >= 0.0 && fin <= b.capacity, "{name}: balance {fin}");
            let peak = r.cap.peak;
            assert!(last.0 * (1.0 + 1e-9) >= cost * (n - 1) as f64 / peak, "{name}: {n} admissions by {} s, above the peak {peak}", last.0);
            // And once empty it runs at the refill: the last stretch.
            assert!(set.get(id).balance_percent(last).unwrap() < 100.0);
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} bucketed resources among the random deployments");
}

/// The same resource has the same identity in every plan of a pool,
/// whatever the I/O size, and registering again returns the same pacers;
/// the host's resources are shared by two pools, their members are not.
#[test]
fn resources_keep_their_identity_across_plans_and_pools() {
    let cat = common::catalog();
    let text = "[configs.a]\nhost = \"aws/ec2/t3.medium\"\n[[configs.a.pools]]\nrole = \"data\"\ndevice = \"aws/ebs/gp2\"\nsize_gib = 20\ncount = 2\nlayout = \"stripe\"\n[[configs.a.pools]]\nrole = \"log\"\ndevice = \"aws/ebs/gp2\"\nsize_gib = 20\n";
    let sc = ScenarioFile::from_toml("s.toml", text).unwrap();
    let dep = &resolve_all(&cat, "s.toml", &sc).unwrap()[0];
    let small = PoolPlan::new(dep, &dep.pools[0], 4096.0, false);
    let large = PoolPlan::new(dep, &dep.pools[0], 1048576.0, true);
    assert_eq!(small.resources.iter().map(|r| r.id).collect::<Vec<_>>(), large.resources.iter().map(|r| r.id).collect::<Vec<_>>());
    let log = PoolPlan::new(dep, &dep.pools[1], 4096.0, false);
    let mut set = PacerSet::new();
    let a = set.register(0, &small);
    assert_eq!(set.register(0, &large), a);
    let b = set.register(1, &log);
    // Data: 2 members × (IOPS, throughput) + the host's EBS IOPS and
    // throughput (t3.medium has an EBS burst); log: 1 member × 2 + the same
    // host pair.
    assert_eq!((a.len(), b.len()), (6, 4));
    let host = |plan: &PoolPlan, ids: &[storlab_model::pacing::PacerId]| -> Vec<_> {
        plan.resources.iter().zip(ids).filter(|(r, _)| r.id.pool().is_none()).map(|(_, &i)| i).collect()
    };
    assert_eq!(host(&small, &a), host(&log, &b));
    assert_eq!(set.len(), 4 + 2 + 2);
}
