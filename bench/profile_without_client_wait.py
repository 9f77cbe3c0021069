"""A recorded profile as it would be without its `client_wait_us`: the
field taken out and the penalty found again from the same recorded
throughput, as the recorder finds it (`penalty_on_recording_machine`, on
this machine, with the durable write the recording timed). The two files
differ only in where the model puts the users' growing wait for their
client — a delay outside the server, or CPU in the penalty — so predicting
the same runs from both measures what that choice is worth.

    python bench/profile_without_client_wait.py PROFILE.toml OUT.toml

Run it on the machine the profile was recorded on (the penalty's model
runs on its vCPUs and memory)."""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from storlab.db import profile as dbprofile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    prof = tomllib.loads(args.profile.read_text())
    conc = prof["concurrency"]
    if "client_wait_us" not in conc or "penalty_durable_write_us" not in conc:
        sys.exit(f"{args.profile}: no client_wait_us or penalty_durable_write_us — nothing to take out")
    del conc["client_wait_us"]
    dbprofile.refit_penalty(prof, "without client_wait_us (bench/profile_without_client_wait.py)")
    prof["name"] = args.out.stem
    dbprofile.write(args.out, prof)
    print(f"{args.out}: penalty {conc['penalty']} (was with client_wait_us: "
          f"{tomllib.loads(args.profile.read_text())['concurrency']['penalty']})")


if __name__ == "__main__":
    main()
