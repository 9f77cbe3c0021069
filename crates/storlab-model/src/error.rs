//! The model's one error type. Every variant names where the problem is (file,
//! entry, field) so the CLI can print one line a user can act on.

use std::fmt;

/// Where in the user's input a problem sits: `file`, then a dotted `entry`
/// path such as `configs.none.pools[0]`, then the `field`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    pub file: String,
    pub entry: String,
    pub field: String,
}

impl Location {
    pub fn new(file: &str, entry: &str, field: &str) -> Self {
        Location { file: file.to_string(), entry: entry.to_string(), field: field.to_string() }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        let path = match (self.entry.is_empty(), self.field.is_empty()) {
            (true, true) => String::new(),
            (false, true) => self.entry.clone(),
            (true, false) => self.field.clone(),
            (false, false) => format!("{}.{}", self.entry, self.field),
        };
        if !path.is_empty() {
            write!(f, ": {path}")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelError {
    /// TOML that does not parse, or a field of the wrong type or name.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax { file: String, line: usize, column: usize, message: String, catalog: bool },

    /// A catalog id that is not in the catalog.
    #[error("{at}: unknown {what} '{id}'{}", suggestion_text(.suggestion))]
    UnknownId { at: Location, what: &'static str, id: String, suggestion: Option<String>, catalog: bool },

    /// A required field that is absent.
    #[error("{at}: missing field — {hint}")]
    Missing { at: Location, hint: String, catalog: bool },

    /// A value outside what the vendor allows, or inconsistent with others.
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String, catalog: bool },
}

fn suggestion_text(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" — did you mean '{s}'?"),
        None => String::new(),
    }
}

impl ModelError {
    /// True when the problem is in a catalog file rather than a scenario.
    pub fn is_catalog(&self) -> bool {
        match self {
            ModelError::Syntax { catalog, .. }
            | ModelError::UnknownId { catalog, .. }
            | ModelError::Missing { catalog, .. }
            | ModelError::Invalid { catalog, .. } => *catalog,
        }
    }

    pub fn invalid(at: Location, message: impl Into<String>) -> Self {
        ModelError::Invalid { at, message: message.into(), catalog: false }
    }

    pub fn invalid_catalog(at: Location, message: impl Into<String>) -> Self {
        ModelError::Invalid { at, message: message.into(), catalog: true }
    }
}

pub type Result<T> = std::result::Result<T, ModelError>;

/// The candidate nearest to `wanted`, if any is close enough to be a likely
/// typo. Jaro-Winkler favours shared prefixes, which suits ids like
/// `aws/ebs/gp4` against `aws/ebs/gp3`.
pub fn nearest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let wanted_l = wanted.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&wanted_l, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.75)
        .max_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then_with(|| char_distance(&wanted_l, b.1).cmp(&char_distance(&wanted_l, a.1)))
        })
        .map(|(_, c)| c.to_string())
}

/// Tie-break between equally similar candidates: the summed code-point
/// distance of differing characters, so 'gp4' is nearer 'gp3' than 'gp2'.
fn char_distance(a: &str, b: &str) -> u32 {
    let b = b.to_ascii_lowercase();
    let mut d: u32 = a.chars().zip(b.chars()).map(|(x, y)| (x as i64 - y as i64).unsigned_abs() as u32).sum();
    d += 64 * (a.chars().count() as i64 - b.chars().count() as i64).unsigned_abs() as u32;
    d
}

/// Line and column (1-based) of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
    (line, col)
}

/// Turns a toml/serde error (with its path) into one line with file, line,
/// column and the dotted field path.
pub fn from_toml_error(
    file: &str,
    text: &str,
    err: serde_path_to_error::Error<toml::de::Error>,
    catalog: bool,
) -> ModelError {
    let path = err.path().to_string();
    let inner = err.into_inner();
    let (line, column) = inner.span().map_or((0, 0), |s| line_col(text, s.start));
    let mut message = friendlier(&inner.message().trim().replace('\n', ", "));
    if message.is_empty() {
        // toml says nothing where the text ends inside an entry (`region =`).
        message = "the entry ends without a value — give one (e.g. a \"string\" or a number) or remove the line".into();
    }
    if path != "." && !path.is_empty() && !message.contains(&path) {
        message = format!("{path}: {message}");
    }
    ModelError::Syntax { file: file.to_string(), line, column, message, catalog }
}

/// serde's wording, in the user's terms: "expected f64" is "a number", and an
/// unknown field gets the nearest known one.
fn friendlier(msg: &str) -> String {
    let mut m = msg
        .replace("expected f64", "expected a number")
        .replace("expected u32", "expected a whole number")
        .replace("expected i64", "expected a whole number");
    if let Some(rest) = m.strip_prefix("unknown field `") {
        if let Some((field, tail)) = rest.split_once('`') {
            let known: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
            if let Some(s) = nearest(field, known.iter().copied()) {
                m = format!("unknown field `{field}` — did you mean `{s}`?");
            } else if !known.is_empty() {
                m = format!("unknown field `{field}` — valid fields: {}", known.join(", "));
            }
        }
    } else if let Some(rest) = m.strip_prefix("unknown variant `") {
        if let Some((value, tail)) = rest.split_once('`') {
            let known: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
            let near = nearest(value, known.iter().copied()).or_else(|| known.first().map(|k| k.to_string()));
            if let Some(n) = near {
                m = format!("'{value}' — one of {}; nearest valid value '{n}'", known.join(", "));
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_finds_typo() {
        let ids = ["aws/ebs/gp2", "aws/ebs/gp3", "aws/ebs/io1"];
        assert_eq!(nearest("aws/ebs/gp4", ids).as_deref(), Some("aws/ebs/gp3"));
        assert_eq!(nearest("zzzz", ids), None);
    }

    #[test]
    fn unknown_variant_gets_the_nearest_value() {
        let m = friendlier("unknown variant `read-only`, expected one of `none`, `readonly`, `readwrite`");
        assert_eq!(m, "'read-only' — one of none, readonly, readwrite; nearest valid value 'readonly'");
    }

    #[test]
    fn unknown_field_gets_the_nearest() {
        let m = friendlier("unknown field `sise_gib`, expected one of `role`, `device`, `size_gib`");
        assert_eq!(m, "unknown field `sise_gib` — did you mean `size_gib`?");
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
