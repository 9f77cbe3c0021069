//! The mutation fuzzer storlab's format tests share (included by path from
//! each crate's tests/fuzz.rs, so it needs no crate of its own): valid
//! files mutated at random — numbers swapped for extreme ones, spans cut,
//! lines doubled, junk inserted, the text cut short. A bounded number of
//! cases under `cargo test`; `STORLAB_FUZZ_CASES=N` runs N per target and
//! `STORLAB_FUZZ_SEED` picks other cases.
#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};

/// xorshift64*: a few lines, no dependency, the same cases on every run of
/// one seed (`STORLAB_FUZZ_SEED`).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const EXTREMES: &[&str] = &[
    "0", "-0", "-1", "1", "0.5", "-5", "inf", "-inf", "nan", "1e308", "1e26", "4294967296", "18446744073709551616",
    "99999999999999999999999999", "1e-300", "2147483648", "\"x\"", "[]", "true", "", "=", "\"\"", "1k", "0k", "9999999999999p",
];
const JUNK: &[&str] = &["\n", "[", "]", "=", "\"", "#", ";", "[[", "\u{0}", "\u{ff}", "é", " = ", "\n[a]\n", ",", "{", "}"];

/// One mutation of `seed`.
pub fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut s = seed.to_string();
    for _ in 0..1 + rng.below(4) {
        let b = s.as_bytes();
        match rng.below(6) {
            // a number swapped for an extreme value
            0 | 1 => {
                let starts: Vec<usize> = (0..b.len()).filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric())).collect();
                if starts.is_empty() {
                    continue;
                }
                let i = starts[rng.below(starts.len())];
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'.' || b[j] == b'-' || b[j] == b'+') {
                    j += 1;
                }
                s.replace_range(i..j, EXTREMES[rng.below(EXTREMES.len())]);
            }
            // a span cut out
            2 => {
                let i = rng.below(s.len());
                let j = (i + rng.below(40)).min(s.len());
                if s.is_char_boundary(i) && s.is_char_boundary(j) {
                    s.replace_range(i..j, "");
                }
            }
            // a line doubled
            3 => {
                let lines: Vec<&str> = s.lines().collect();
                if !lines.is_empty() {
                    let k = rng.below(lines.len());
                    let mut out: Vec<&str> = lines.clone();
                    out.insert(k, lines[k]);
                    s = out.join("\n");
                }
            }
            // junk inserted
            4 => {
                let i = rng.below(s.len() + 1);
                if s.is_char_boundary(i) {
                    s.insert_str(i, JUNK[rng.below(JUNK.len())]);
                }
            }
            // cut short
            _ => {
                let i = rng.below(s.len() + 1);
                if s.is_char_boundary(i) {
                    s.truncate(i);
                }
            }
        }
    }
    s
}

pub fn cases(default: usize) -> usize {
    std::env::var("STORLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

pub fn seed() -> u64 {
    std::env::var("STORLAB_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5EED_1234_ABCD_0001)
}

/// Runs `check` on `n` mutations of the seeds; panics naming the first
/// input that panicked or broke a rule. Prints the count (for `make fuzz`).
pub fn fuzz(name: &str, seeds: &[&str], default: usize, check: impl Fn(&str) -> Result<(), String>) {
    fuzz_n(name, seeds, cases(default), check)
}

/// `fuzz` with the number of cases given (a slow target takes a share of
/// `STORLAB_FUZZ_CASES`).
pub fn fuzz_n(name: &str, seeds: &[&str], n: usize, check: impl Fn(&str) -> Result<(), String>) {
    let mut rng = Rng(seed() ^ (name.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let (mut read, mut refused) = (0u64, 0u64);
    for i in 0..n {
        let input = mutate(&mut rng, seeds[i % seeds.len()]);
        if let Some(trace) = std::env::var_os("STORLAB_FUZZ_TRACE") {
            // The input about to run, for an abort no panic catches (memory).
            let _ = std::fs::write(trace, &input);
        }
        match catch_unwind(AssertUnwindSafe(|| check(&input))) {
            Ok(Ok(())) => read += 1,
            Ok(Err(e)) if e.is_empty() => refused += 1,
            Ok(Err(e)) => panic!("{name}: case {i}: {e}\n--- input ---\n{input}"),
            Err(_) => panic!("{name}: case {i} panicked\n--- input ---\n{input}"),
        }
    }
    eprintln!("fuzz {name}: {n} inputs, {read} read, {refused} refused, 0 panics");
}

/// A refusal must be one non-empty line: Err("") when it is.
pub fn one_line(e: impl std::fmt::Display) -> Result<(), String> {
    let m = e.to_string();
    if m.trim().is_empty() || m.contains('\n') || m.ends_with(": ") {
        return Err(format!("a refusal that is not one clear line: {m:?}"));
    }
    Err(String::new())
}

