//! Sizes and durations as a user writes them on the command line and in a
//! scenario: one grammar each, for every verb, read here and nowhere else
//! (Python asks the binding). fio job files keep fio's own rules (`fio`).

use std::time::Duration;

/// Sizes say what they mean, as everywhere in storlab outside fio job
/// files: `KB`, `MB`, `GB`, `TB` are powers of 10 (SI); `KiB`, `MiB`, `GiB`,
/// `TiB` powers of 2 (IEC 80000-13); the bare letters `k`, `m`, `g`, `t`
/// powers of 2, as in fio and dd. Case does not matter. `None` for anything
/// else, a fraction of a byte or a size beyond 1 EiB.
pub fn parse_size(v: &str) -> Option<u64> {
    let s = v.trim().to_ascii_lowercase();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult: f64 = match unit.trim() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024f64.powi(2),
        "g" | "gib" => 1024f64.powi(3),
        "t" | "tib" => 1024f64.powi(4),
        _ => return None,
    };
    let bytes = n * mult;
    (bytes.fract() == 0.0 && bytes.is_finite() && bytes <= MAX_SIZE_BYTES).then_some(bytes as u64)
}

/// The largest size storlab takes: 1 EiB, beyond any device and still exact
/// in a `u64`.
pub const MAX_SIZE_BYTES: f64 = (1u64 << 60) as f64;

/// The longest duration storlab takes: a year of simulated or measured time.
pub const MAX_DURATION_S: f64 = 365.0 * 86400.0;

/// A duration: seconds (`30`, `1.5`) or numbers with units, alone or in a
/// row (`90s`, `10m`, `2h`, `1d`, `2m30s`, `500ms`; `min` for minutes).
/// `None` for anything else, a negative, non-finite or zero-unit-less
/// value, or one beyond a year.
pub fn parse_duration(v: &str) -> Option<Duration> {
    let s = v.trim().to_ascii_lowercase();
    if s.is_empty() {
        return None;
    }
    let number = |t: &str| -> Option<f64> {
        // digits with at most one point: no signs, exponents, inf or nan
        (t.chars().all(|c| c.is_ascii_digit() || c == '.') && t.chars().filter(|&c| c == '.').count() <= 1 && t.chars().any(|c| c.is_ascii_digit()))
            .then(|| t.parse().ok())
            .flatten()
    };
    let mut secs = 0.0;
    if let Some(n) = number(&s) {
        secs = n;
    } else {
        let mut rest = s.as_str();
        while !rest.is_empty() {
            let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            let n = number(&rest[..digits])?;
            rest = &rest[digits..];
            let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
            let unit = match &rest[..unit_len] {
                "ms" => 1e-3,
                "s" => 1.0,
                "m" | "min" => 60.0,
                "h" => 3600.0,
                "d" => 86400.0,
                _ => return None,
            };
            rest = &rest[unit_len..];
            secs += n * unit;
        }
    }
    (secs.is_finite() && (0.0..=MAX_DURATION_S).contains(&secs)).then(|| Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    // 64MB = 64 × 10^6 bytes, 64MiB = 64 × 2^20 = 67,108,864, 4k = 4,096;
    // 2,000,000 TiB ≈ 2^60.9 bytes is past 1 EiB = 2^60.
    #[test]
    fn sizes_say_what_they_mean() {
        assert_eq!(parse_size("64MB"), Some(64_000_000));
        assert_eq!(parse_size("64MiB"), Some(67_108_864));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size(" 1GiB "), Some(1 << 30));
        assert_eq!(parse_size("1.5k"), Some(1536));
        for bad in ["", "lots", "4q", "0.5", "-1k", "nan", "inf", "2EiB", "2000000TiB"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    // 2m30s = 120 + 30 = 150 s; 1d = 86,400 s; 500ms = 0.5 s.
    #[test]
    fn durations_in_one_grammar() {
        for (text, s) in [("30", 30.0), ("1.5", 1.5), ("90s", 90.0), ("5m", 300.0), ("10min", 600.0), ("1h", 3600.0),
                          ("2m30s", 150.0), ("1d", 86400.0), ("500ms", 0.5), (" 2H ", 7200.0)] {
            assert_eq!(parse_duration(text), Some(Duration::from_secs_f64(s)), "{text}");
        }
        for bad in ["", "abc", "5x", "m5", "nan", "inf", "-5", "1e3", "1..2s", "366d", "s", "5m x"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
