"""Units as a user writes and reads them: sizes and durations, read by the
one Rust grammar each (`storlab-workload::units`) with the message a flag
gets when its value is not one (fio job files keep fio's own rules); and
the units every table prints latencies and throughputs in."""

from __future__ import annotations

import re

from storlab import _native
from storlab.errors import StorlabError


def parse_size(text: str, flag: str = "--size", min_bytes: int = 1 << 20) -> int:
    """Size flags: `64MB` = 64 × 10^6 bytes, `64MiB` = 64 × 2^20, `64m` =
    64 × 2^20 (fio's and dd's letters)."""
    n = _native.parse_size_bytes(str(text))
    if n is None:
        raise StorlabError(f"{flag} '{text}' is not a size — e.g. 1GiB, 512MiB, 500MB")
    if n < min_bytes:
        raise StorlabError(f"{flag} '{text}' is below 1 MiB — nearest valid value 1MiB")
    return n


def parse_duration(text: str, flag: str = "--duration", positive: bool = True) -> float:
    """Duration flags: seconds (`30`, `1.5`) or with units (`90s`, `10m`,
    `2h`, `1d`, `2m30s`), up to a year."""
    s = _native.parse_duration_s(str(text))
    if s is None:
        raise StorlabError(f"{flag} '{text}' is not a duration — e.g. 30s, 90s, 5m, 1h, 2m30s (at most a year)")
    if positive and s <= 0:
        raise StorlabError(f"{flag} '{text}' must be positive — e.g. 30s")
    return s


# Formatting: the units every table prints in.


def latency(us: float | None) -> str:
    """A latency in the unit its size reads best in: µs below 1 ms, ms below
    10 s, seconds from 10 s up (so 882,615.78 ms prints as 882.6 s)."""
    if us is None:
        return "—"
    if us < 1_000:
        return f"{us:,.1f} µs" if us < 100 else f"{us:,.0f} µs"
    if us < 10_000_000:
        return f"{us / 1_000:,.2f} ms"
    return f"{us / 1e6:,.1f} s"


def mb_s(bytes_s: float) -> str:
    """Throughput in MB/s, MB = 10^6 bytes: the one family every table uses."""
    return f"{bytes_s / 1e6:,.1f} MB/s"


def with_mb_s(text: str) -> str:
    """A binding quotes the vendor's cap in the vendor's unit ("128
    MiB/s"); in a table of MB/s the MB/s figure follows it, so the table
    reads in one family: "128 MiB/s = 134.2 MB/s"."""
    return re.sub(r"(\d[\d,]*(?:\.\d+)?) MiB/s",
                  lambda m: f"{m.group(0)} = {mb_s(float(m.group(1).replace(',', '')) * 2**20)}", text)
