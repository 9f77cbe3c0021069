#!/bin/bash
set -e
cd "$(dirname "$0")/../../../.."
# Predicts rounds 20 and 23-25 from the 16-warehouse profile, refitted each way
# (bench/refit_penalty.py --flush-wait), into a scratch folder:
#   bash bench/runs/2026-11-27/flush_wait-16wh/eval.sh [PROFILE] [SCRATCH]
P=$(realpath ${1:-bench/runs/2026-11-27/flush_wait-16wh/profile-16wh.toml})
S=${2:-/tmp/w16}
for m in none sync-growth joint measured-cpu; do
  D=$S/$m; rm -rf $D; mkdir -p $D
  .venv/bin/python bench/refit_penalty.py $P --why "16 wh ($m)" --flush-wait $m --out-dir $D | sed 's|^|  |'
  cp -r bench/runs/2026-11-26/db_accuracy-20 $D/r20; cp $D/profile-16wh.toml $D/r20/profile-w16.toml
  .venv/bin/python bench/db_accuracy.py --predict-only --record --tags=-w16 --rampup 3 --duration 12 --warehouses 4,8 --vus 1,2,3,4,6,8,11,16,23 --out $D/r20 > $D/local.txt 2>&1
  echo "## $m"; grep -E "points within|within one step|^\| [48] +\| [0-9]+ +\| [0-9]+ " $D/local.txt | head -4
  grep -E "^\| [48] wh" $D/local.txt | awk -F'|' '{printf "%s:%s ", $2, $6}'; echo
  for r in 2026-11-26/db_accuracy-23 2026-11-27/db_accuracy-24 2026-11-27/db_accuracy-25; do n=$(basename $r); cp -r bench/runs/$r $D/$n
    .venv/bin/python bench/db_accuracy.py --emulated --no-local --predict-only --rampup 30 --duration 60 --emu-setting shared_buffers=320MB --emu-profile $D/profile-16wh.toml --out $D/$n > $D/$n.txt 2>&1
    echo "$n: $(grep -E 'points within' $D/$n.txt)  io1/4: $(grep -E '^\| io1, 4' $D/$n.txt | awk -F'|' '{print $6}')"
  done
done
