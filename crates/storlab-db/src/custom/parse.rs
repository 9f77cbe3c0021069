//! Reading a workload file: its fields, generators and statements, with
//! errors that name the file, the entry and the field, and the nearest
//! valid name.

use super::{Bound, Gen, LoadStep, Metric, SequenceAfter, Stmt, Transaction, Workload};
use crate::error::{DbError, Result};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicI64;
use std::sync::Arc;

/// Splits `:name` parameters out of SQL, leaving `::type` casts and quoted
/// text alone.
pub(crate) fn parse_stmt(sql: &str) -> Stmt {
    let b = sql.as_bytes();
    let (mut pg, mut lite, mut names) = (String::new(), String::new(), Vec::<String>::new());
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let ch = b[i];
        if let Some(q) = quote {
            if ch == q {
                quote = None;
            }
        } else if ch == b'\'' || ch == b'"' {
            quote = Some(ch);
        } else if ch == b':' && i + 1 < b.len() && b[i + 1] == b':' {
            pg.push_str("::");
            lite.push_str("::");
            i += 2;
            continue;
        } else if ch == b':' && i + 1 < b.len() && (b[i + 1].is_ascii_alphabetic() || b[i + 1] == b'_') {
            let mut j = i + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            let name = &sql[i + 1..j];
            let pos = match names.iter().position(|n| n == name) {
                Some(p) => p + 1,
                None => {
                    names.push(name.to_string());
                    names.len()
                }
            };
            pg.push_str(&format!("${pos}"));
            lite.push_str(&format!("?{pos}"));
            i = j;
            continue;
        }
        pg.push(ch as char);
        lite.push(ch as char);
        i += 1;
    }
    Stmt { sql: sql.to_string(), params: names, pg_sql: pg, sqlite_sql: lite }
}

fn err(file: &str, at: &str, msg: impl std::fmt::Display) -> DbError {
    DbError::Input(format!("{file}: {at}: {msg}"))
}

fn parse_bound(file: &str, at: &str, v: &toml::Value) -> Result<Bound> {
    match v {
        toml::Value::Integer(i) => Ok(Bound { value: *i, times_scale: false }),
        toml::Value::String(s) => {
            let t: String = s.split_whitespace().collect();
            let parsed = if t == "scale" {
                Some(1)
            } else if let Some(n) = t.strip_suffix("*scale") {
                n.parse().ok()
            } else if let Some(n) = t.strip_prefix("scale*") {
                n.parse().ok()
            } else {
                None
            };
            parsed.map(|value| Bound { value, times_scale: true }).ok_or_else(|| err(file, at, format!("'{s}' is not a bound — use an integer, \"scale\" or \"N * scale\"")))
        }
        other => Err(err(file, at, format!("expected an integer or \"N * scale\", got {}", other.type_str()))),
    }
}

/// The parameter generators, the workload file's fields, and those of its
/// `[[load]]` and `[[transaction]]` entries (docs/db.md lists each).
pub const GENERATORS: [&str; 6] = ["uniform", "nurand", "uuid", "string", "timestamp", "sequence"];
pub const FIELDS: [&str; 11] = ["name", "description", "scale", "tables", "schema", "load", "after_load", "params", "transaction", "commit_every", "metric"];
pub const METRIC_FIELDS: [&str; 3] = ["name", "transaction", "per"];
pub const LOAD_FIELDS: [&str; 3] = ["sql", "rows", "params"];
pub const TRANSACTION_FIELDS: [&str; 3] = ["name", "weight", "statements"];

fn parse_gen(file: &str, at: &str, v: &toml::Value) -> Result<Gen> {
    let t = v.as_table().ok_or_else(|| err(file, at, "expected a generator such as { uniform = [1, \"100000 * scale\"] }"))?;
    if t.len() != 1 {
        return Err(err(file, at, format!("give exactly one generator of {}", GENERATORS.join(", "))));
    }
    let (k, v) = t.iter().next().expect("one entry");
    let arr = |n: usize| -> Result<Vec<toml::Value>> {
        match v.as_array() {
            Some(a) if a.len() == n => Ok(a.clone()),
            _ => Err(err(file, &format!("{at}.{k}"), format!("expected a list of {n} values"))),
        }
    };
    let at_k = format!("{at}.{k}");
    let g = match k.as_str() {
        "uniform" => {
            let a = arr(2)?;
            let (lo, hi) = (parse_bound(file, &at_k, &a[0])?, parse_bound(file, &at_k, &a[1])?);
            Gen::Uniform(lo, hi)
        }
        "nurand" => {
            let a = arr(3)?;
            let aa = a[0].as_integer().filter(|x| *x > 0).ok_or_else(|| err(file, &at_k, "A must be a positive integer (255, 1023 or 8191 in TPC-C)"))?;
            Gen::NURand { a: aa, x: parse_bound(file, &at_k, &a[1])?, y: parse_bound(file, &at_k, &a[2])? }
        }
        "uuid" => Gen::Uuid,
        "timestamp" => Gen::Timestamp,
        "string" => {
            let a = arr(2)?;
            let lo = a[0].as_integer().filter(|x| *x >= 0);
            let hi = a[1].as_integer();
            match (lo, hi) {
                (Some(lo), Some(hi)) if hi >= lo => Gen::String(lo, hi),
                _ => return Err(err(file, &at_k, "expected [min_length, max_length] with 0 <= min <= max")),
            }
        }
        "sequence" => parse_sequence(file, &at_k, v)?,
        other => {
            let near = GENERATORS.iter().min_by_key(|g| strsim::levenshtein(g, other)).expect("generators");
            return Err(err(file, at, format!("unknown generator '{other}' — did you mean '{near}'?")));
        }
    };
    Ok(g)
}

/// `sequence = START` or `sequence = { after = "table.column", where = "SQL" }`.
fn parse_sequence(file: &str, at: &str, v: &toml::Value) -> Result<Gen> {
    let hint = "expected the first value, an integer, or { after = \"table.column\" } to go on after the column's highest value";
    if let Some(start) = v.as_integer() {
        return Ok(Gen::Sequence(start, Arc::new(AtomicI64::new(0)), None));
    }
    let t = v.as_table().ok_or_else(|| err(file, at, hint))?;
    check_keys(file, at, t, &["after", "where"])?;
    let after = t.get("after").and_then(|a| a.as_str()).ok_or_else(|| err(file, at, hint))?;
    let filter = match t.get("where") {
        None => None,
        Some(w) => Some(w.as_str().filter(|w| !w.trim().is_empty()).ok_or_else(|| err(file, &format!("{at}.where"), "expected a SQL condition on the table's rows, e.g. \"t_st_id = 'CMPT'\""))?),
    };
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match after.split_once('.') {
        Some((table, column)) if ident(table) && ident(column) => Ok(Gen::Sequence(
            0,
            Arc::new(AtomicI64::new(1)),
            Some(SequenceAfter { table: table.into(), column: column.into(), filter: filter.map(str::to_string) }),
        )),
        _ => Err(err(file, &format!("{at}.after"), format!("'{after}' is not table.column (letters, digits and _) — e.g. \"trade.t_id\""))),
    }
}

fn strings(file: &str, at: &str, v: Option<&toml::Value>) -> Result<Vec<String>> {
    match v {
        None => Ok(vec![]),
        Some(toml::Value::String(s)) => Ok(vec![s.clone()]),
        Some(toml::Value::Array(a)) => a.iter().map(|x| x.as_str().map(str::to_string).ok_or_else(|| err(file, at, "expected SQL text"))).collect(),
        Some(_) => Err(err(file, at, "expected SQL text or a list of it")),
    }
}

fn check_keys(file: &str, at: &str, t: &toml::Table, allowed: &[&str]) -> Result<()> {
    for k in t.keys() {
        if !allowed.contains(&k.as_str()) {
            let near = allowed.iter().min_by_key(|a| strsim::levenshtein(a, k)).expect("keys");
            return Err(err(file, at, format!("unknown field '{k}' — did you mean '{near}'?")));
        }
    }
    Ok(())
}

fn check_params(file: &str, at: &str, stmt: &Stmt, known: &BTreeMap<String, Gen>) -> Result<()> {
    for p in &stmt.params {
        if !known.contains_key(p) {
            let near = known.keys().min_by_key(|k| strsim::levenshtein(k, p));
            let hint = near.map(|n| format!(" — did you mean ':{n}'?")).unwrap_or_else(|| " — define it under [params]".into());
            return Err(err(file, at, format!("unknown parameter ':{p}'{hint}")));
        }
    }
    Ok(())
}

impl Workload {
    /// Parses a workload file; `file` names it in every error.
    pub fn parse(file: &str, text: &str) -> Result<Workload> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e.span().map(|s| text[..s.start].lines().count().max(1));
            DbError::Input(format!("{file}{}: {}", line.map(|l| format!(":{l}")).unwrap_or_default(), crate::error::one_line(e.message())))
        })?;
        check_keys(file, "top level", &doc, &FIELDS)?;
        let name = doc.get("name").and_then(|v| v.as_str()).ok_or_else(|| err(file, "top level", "missing field 'name'"))?.to_string();
        let scale = match doc.get("scale") {
            None => 1,
            Some(v) => v.as_integer().filter(|s| *s >= 1).ok_or_else(|| err(file, "scale", "expected an integer >= 1"))?,
        };
        let tables = strings(file, "tables", doc.get("tables"))?;
        if tables.is_empty() {
            return Err(err(file, "tables", "list the tables the schema creates, e.g. tables = [\"accounts\"], so a loaded database can be recognised and reused"));
        }
        let schema = strings(file, "schema", doc.get("schema"))?;
        let after_load = strings(file, "after_load", doc.get("after_load"))?;
        let mut params = BTreeMap::new();
        if let Some(p) = doc.get("params") {
            let t = p.as_table().ok_or_else(|| err(file, "params", "expected a table of name = { generator = ... }"))?;
            for (k, v) in t {
                params.insert(k.clone(), parse_gen(file, &format!("params.{k}"), v)?);
            }
        }
        let mut load = vec![];
        for (i, l) in doc.get("load").and_then(|v| v.as_array()).cloned().unwrap_or_default().iter().enumerate() {
            let at = format!("load[{i}]");
            let t = l.as_table().ok_or_else(|| err(file, &at, "expected a table with sql and rows"))?;
            check_keys(file, &at, t, &LOAD_FIELDS)?;
            let sql = t.get("sql").and_then(|v| v.as_str()).ok_or_else(|| err(file, &at, "missing field 'sql'"))?;
            let rows = parse_bound(file, &format!("{at}.rows"), t.get("rows").ok_or_else(|| err(file, &at, "missing field 'rows'"))?)?;
            let mut lp = params.clone();
            if let Some(p) = t.get("params").and_then(|v| v.as_table()) {
                for (k, v) in p {
                    lp.insert(k.clone(), parse_gen(file, &format!("{at}.params.{k}"), v)?);
                }
            }
            let stmt = parse_stmt(sql);
            check_params(file, &at, &stmt, &lp)?;
            load.push(LoadStep { stmt, rows, params: lp });
        }
        let mut transactions = vec![];
        for (i, tv) in doc.get("transaction").and_then(|v| v.as_array()).cloned().unwrap_or_default().iter().enumerate() {
            let t = tv.as_table().ok_or_else(|| err(file, &format!("transaction[{i}]"), "expected a table"))?;
            let tname = t.get("name").and_then(|v| v.as_str()).map(str::to_string).unwrap_or_else(|| format!("transaction{}", i + 1));
            let at = format!("transaction '{tname}'");
            check_keys(file, &at, t, &TRANSACTION_FIELDS)?;
            let weight = match t.get("weight") {
                None => 1,
                Some(v) => v.as_integer().filter(|w| (1..=1_000_000).contains(w)).ok_or_else(|| err(file, &format!("{at}.weight"), "expected an integer 1..1000000"))? as u32,
            };
            let stmts = strings(file, &format!("{at}.statements"), t.get("statements"))?;
            if stmts.is_empty() {
                return Err(err(file, &at, "missing field 'statements' (a list of SQL statements)"));
            }
            let mut statements = vec![];
            for (k, s) in stmts.iter().enumerate() {
                let st = parse_stmt(s);
                check_params(file, &format!("{at}, statement {}", k + 1), &st, &params)?;
                statements.push(st);
            }
            transactions.push(Transaction { name: tname, weight, statements });
        }
        if transactions.is_empty() {
            return Err(err(file, "top level", "no [[transaction]] — define at least one with name, weight and statements"));
        }
        let commit_every = match doc.get("commit_every") {
            None => 1,
            Some(v) => v.as_integer().filter(|c| *c >= 1).ok_or_else(|| err(file, "commit_every", "expected an integer >= 1"))? as u32,
        };
        let metric = match doc.get("metric") {
            None => None,
            Some(m) => Some(parse_metric(file, m, &transactions)?),
        };
        Ok(Workload { name, file: file.to_string(), scale, tables, schema, load, after_load, params, transactions, commit_every, metric })
    }
}

/// `[metric]`: name, the transaction it counts, and per second or minute.
fn parse_metric(file: &str, v: &toml::Value, transactions: &[Transaction]) -> Result<Metric> {
    let t = v.as_table().ok_or_else(|| err(file, "metric", "expected a table: name, transaction, per"))?;
    check_keys(file, "metric", t, &METRIC_FIELDS)?;
    let name = t.get("name").and_then(|v| v.as_str()).filter(|s| !s.trim().is_empty()).ok_or_else(|| err(file, "metric.name", "missing: the headline's name, e.g. \"tpsE\""))?;
    let names: Vec<&str> = transactions.iter().map(|t| t.name.as_str()).collect();
    let counted = t.get("transaction").and_then(|v| v.as_str()).ok_or_else(|| err(file, "metric.transaction", format!("missing: the transaction it counts, one of {}", names.join(", "))))?;
    if !names.contains(&counted) {
        let near = names.iter().min_by_key(|n| strsim::levenshtein(n, counted)).copied().unwrap_or_default();
        return Err(err(file, "metric.transaction", format!("unknown transaction '{counted}' — nearest valid value '{near}'")));
    }
    let per_s = match t.get("per").map(|v| v.as_str()) {
        None | Some(Some("minute")) => 60.0,
        Some(Some("second")) => 1.0,
        Some(other) => {
            let got = other.map(str::to_string).unwrap_or_else(|| "a non-string".into());
            return Err(err(file, "metric.per", format!("'{got}' is not \"second\" or \"minute\" — nearest valid value 'second'")));
        }
    };
    Ok(Metric { name: name.trim().to_string(), transaction: counted.to_string(), per_s })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_parameters_become_positional_and_casts_survive() {
        let s = parse_stmt("UPDATE a SET x = x + :delta WHERE id = :aid AND t = ':no' AND y = :delta::int");
        assert_eq!(s.params, vec!["delta", "aid"]);
        assert_eq!(s.pg_sql, "UPDATE a SET x = x + $1 WHERE id = $2 AND t = ':no' AND y = $1::int");
        assert_eq!(s.sqlite_sql, "UPDATE a SET x = x + ?1 WHERE id = ?2 AND t = ':no' AND y = ?1::int");
    }

    #[test]
    fn bounds_scale() {
        let b = parse_bound("f", "x", &toml::Value::String("100000 * scale".into())).unwrap();
        assert_eq!(b.at(3), 300_000);
        assert!(parse_bound("f", "x", &toml::Value::String("lots".into())).is_err());
    }

    #[test]
    fn unknown_parameter_is_named_with_the_nearest() {
        let text = "name = \"x\"\ntables = [\"t\"]\n[params]\naid = { uniform = [1, 10] }\n[[transaction]]\nname = \"t1\"\nstatements = [\"SELECT :aidx\"]\n";
        let e = Workload::parse("w.toml", text).unwrap_err().to_string();
        assert!(e.contains("w.toml") && e.contains("transaction 't1', statement 1") && e.contains("did you mean ':aid'"), "{e}");
    }

    const TWO: &str = "name = \"x\"\ntables = [\"t\"]\n[params]\nid = { sequence = { after = \"trade.t_id\" } }\n[[transaction]]\nname = \"order\"\nstatements = [\"SELECT :id\"]\n[[transaction]]\nname = \"result\"\nweight = 2\nstatements = [\"SELECT 1\"]\n";

    #[test]
    fn metric_counts_one_transaction_a_second_or_a_minute() {
        let w = Workload::parse("w.toml", &format!("{TWO}[metric]\nname = \"tpsE\"\ntransaction = \"result\"\nper = \"second\"\n")).unwrap();
        let m = w.metric.clone().unwrap();
        assert_eq!((m.name.as_str(), m.transaction.as_str(), m.per_s), ("tpsE", "result", 1.0));
        // 600 commits a minute are 10 a second.
        assert_eq!(m.of_per_min(600.0), 10.0);
        let per_min = Workload::parse("w.toml", &format!("{TWO}[metric]\nname = \"orders/min\"\ntransaction = \"order\"\n")).unwrap();
        assert_eq!(per_min.metric.unwrap().of_per_min(600.0), 600.0);
        assert!(Workload::parse("w.toml", TWO).unwrap().metric.is_none());
    }

    #[test]
    fn a_bad_metric_names_its_field_and_the_nearest_value() {
        let e = Workload::parse("w.toml", &format!("{TWO}[metric]\nname = \"tpsE\"\ntransaction = \"resul\"\n")).unwrap_err().to_string();
        assert!(e.contains("w.toml: metric.transaction") && e.contains("nearest valid value 'result'"), "{e}");
        let e = Workload::parse("w.toml", &format!("{TWO}[metric]\nname = \"tpsE\"\ntransaction = \"result\"\nper = \"hour\"\n")).unwrap_err().to_string();
        assert!(e.contains("metric.per") && e.contains("'second'"), "{e}");
        let e = Workload::parse("w.toml", &format!("{TWO}[metric]\ntransaction = \"result\"\n")).unwrap_err().to_string();
        assert!(e.contains("metric.name"), "{e}");
    }

    #[test]
    fn a_sequence_after_a_column_is_table_dot_column() {
        let w = Workload::parse("w.toml", TWO).unwrap();
        let Gen::Sequence(_, _, Some(a)) = &w.params["id"] else { panic!("{:?}", w.params["id"]) };
        assert_eq!((a.table.as_str(), a.column.as_str(), a.filter.as_deref()), ("trade", "t_id", None));
        assert_eq!(a.query(), "SELECT COALESCE(MAX(t_id), 0) FROM trade");
        let w = Workload::parse("w.toml", &TWO.replace("after = \"trade.t_id\"", "after = \"trade.t_id\", where = \"t_st_id = 'CMPT'\"")).unwrap();
        let Gen::Sequence(_, _, Some(a)) = &w.params["id"] else { panic!() };
        assert_eq!(a.query(), "SELECT COALESCE(MAX(t_id), 0) FROM trade WHERE t_st_id = 'CMPT'");
        let bad = TWO.replace("trade.t_id", "trade; DROP TABLE x");
        let e = Workload::parse("w.toml", &bad).unwrap_err().to_string();
        assert!(e.contains("params.id.sequence.after") && e.contains("not table.column"), "{e}");
    }

    #[test]
    fn malformed_toml_names_the_line() {
        let e = Workload::parse("w.toml", "name = \"x\"\ntables = [\n").unwrap_err().to_string();
        assert!(e.starts_with("w.toml:"), "{e}");
    }
}
