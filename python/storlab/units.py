"""Units as a user writes them: sizes and durations, read by the one Rust
grammar each (`storlab-workload::units`), with the message a flag gets when
its value is not one. fio job files keep fio's own rules."""

from __future__ import annotations

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
