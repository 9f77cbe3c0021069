//! MySQL and MariaDB connections the way their clients expect them: a URL
//! `mysql://USER@HOST:PORT/DB`, the password from the URL, `MYSQL_PWD` or
//! the `[client]` group of `~/.my.cnf` (as the mysql client reads them),
//! and a `Backend` on mysql_async's binary protocol, one connection per
//! virtual user. The password is never part of any text this module
//! returns.

use crate::backend::{Backend, Begin, Dialect, Sql, Stmt, Txn};
use crate::error::{one_line, DbError, Result};
use crate::session::{settle, BoxFuture, ConnError, Outcome, Value};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Params, Statement};
use std::time::Duration;

pub use crate::mysql_target::{my_cnf_password, Target};

impl Target {
    fn opts(&self) -> Opts {
        OptsBuilder::default()
            .ip_or_hostname(self.host.clone())
            .tcp_port(self.port)
            .user(Some(self.user.clone()))
            .pass(self.password.clone())
            .db_name((!self.db.is_empty()).then(|| self.db.clone()))
            // Stay on TCP: the target is what the user named, not a local socket.
            .prefer_socket(false)
            .stmt_cache_size(64)
            .into()
    }

    /// One connection.
    pub async fn connect(&self) -> Result<Conn> {
        match tokio::time::timeout(Duration::from_secs(10), Conn::new(self.opts())).await {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(e)) => Err(self.connect_failed(&e)),
            Err(_) => Err(DbError::Connect {
                target: self.display.clone(),
                reason: "no answer within 10 s".into(),
                hint: "check that the server is running and the host and port in --dsn are right".into(),
            }),
        }
    }

    fn connect_failed(&self, e: &mysql_async::Error) -> DbError {
        let reason = message(e);
        let hint = match e {
            mysql_async::Error::Server(s) if s.code == 1045 => "set MYSQL_PWD or put the password in the [client] group of ~/.my.cnf",
            mysql_async::Error::Server(s) if s.code == 1049 => "create the database first (CREATE DATABASE …), or name an existing one in --dsn",
            mysql_async::Error::Server(s) if s.code == 1044 => "grant the user privileges on that database, or name another one in --dsn",
            // ER_SECURE_TRANSPORT_REQUIRED (MySQL 5.7+).
            mysql_async::Error::Server(s) if s.code == 3159 => "storlab connects without TLS: turn require_secure_transport off for this test user's server",
            _ => "check that the server is running and the host and port in --dsn are right, or use --db managed-mariadb",
        };
        DbError::Connect { target: self.display.clone(), reason, hint: hint.into() }
    }
}

/// The server's own message where there is one, on one line.
impl ConnError for mysql_async::Error {
    fn lost(&self) -> bool {
        self.is_fatal()
    }
    fn text(&self) -> String {
        message(self)
    }
}

pub fn message(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => one_line(&s.message),
        other => {
            let mut s = one_line(&other.to_string());
            let mut src = std::error::Error::source(other);
            while let Some(x) = src {
                let m = one_line(&x.to_string());
                if !s.contains(&m) {
                    s = format!("{s}: {m}");
                }
                src = x.source();
            }
            s
        }
    }
}

/// A value as text (a query's first column).
pub fn text(v: &mysql_async::Value) -> Option<String> {
    use mysql_async::Value as V;
    match v {
        V::NULL => None,
        V::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        V::Int(i) => Some(i.to_string()),
        V::UInt(u) => Some(u.to_string()),
        V::Float(f) => Some(f.to_string()),
        V::Double(f) => Some(f.to_string()),
        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
    }
}

fn bind(v: &Value) -> mysql_async::Value {
    use mysql_async::Value as V;
    match v {
        Value::Int(i) => V::Int(*i),
        Value::Real(r) => V::Double(*r),
        Value::Text(s) => V::Bytes(s.clone().into_bytes()),
        Value::Bool(b) => V::Int(i64::from(*b)),
        // A list for a stored procedure to split (TPC-C's New-Order lines).
        Value::IntArray(a) => V::Bytes(a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",").into_bytes()),
        Value::Null => V::NULL,
    }
}

/// `$n` placeholders (outside quotes) turned into MySQL's `?`, with the
/// parameter each `?` takes; `None` when the text has none (`?` already, or
/// no parameters).
pub fn positional(sql: &str) -> (String, Option<Vec<usize>>) {
    let b = sql.as_bytes();
    let (mut out, mut order) = (String::with_capacity(sql.len()), vec![]);
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                out.push(c as char);
                i += 1;
            }
            None if c == b'\'' || c == b'"' || c == b'`' => {
                quote = Some(c);
                out.push(c as char);
                i += 1;
            }
            None if c == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let n: usize = sql[i + 1..j].parse().unwrap_or(1);
                order.push(n.saturating_sub(1));
                out.push('?');
                i = j;
            }
            None => {
                // Multi-byte UTF-8 passes through unchanged.
                let ch = sql[i..].chars().next().unwrap_or(' ');
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    (out, (!order.is_empty()).then_some(order))
}

struct MyStmt {
    st: Statement,
    order: Option<Vec<usize>>,
    rollback: Option<&'static str>,
}

pub struct MyBackend {
    c: Conn,
    stmts: Vec<MyStmt>,
    /// A transaction is open on the server.
    open: bool,
    autocommitted: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl MyBackend {
    pub async fn connect(t: &Target) -> Result<MyBackend> {
        Ok(MyBackend { c: t.connect().await?, stmts: vec![], open: false, autocommitted: t.autocommitted.clone() })
    }

    fn params(&self, st: Stmt, vals: &[Value]) -> Params {
        let s = &self.stmts[st.0];
        let v: Vec<mysql_async::Value> = match &s.order {
            None => vals.iter().map(bind).collect(),
            Some(o) => o.iter().map(|i| vals.get(*i).map_or(mysql_async::Value::NULL, bind)).collect(),
        };
        if v.is_empty() {
            Params::Empty
        } else {
            Params::Positional(v)
        }
    }

    async fn run(&mut self, tx: &Txn) -> std::result::Result<Option<String>, mysql_async::Error> {
        // A transaction of one statement runs alone in autocommit: one
        // round trip, as sysbench and the mysql client run it (a routine
        // opens and commits its own transaction inside). MySQL counts a
        // plain statement in autocommit in no Com_commit, the engine's TPM
        // as HammerDB reads it, so the run is told (`autocommitted`) and
        // reports the client's count.
        let single = tx.begin != Begin::Continue && tx.commit && tx.steps.len() == 1 && !self.open;
        if single && self.stmts[tx.steps[0].0 .0].rollback.is_none() {
            self.autocommitted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        if !single && tx.begin != Begin::Continue && !self.open {
            self.open = true;
            self.c.query_drop("BEGIN").await?;
        }
        let mut value = None;
        for (i, (st, vals)) in tx.steps.iter().enumerate() {
            let p = self.params(*st, vals);
            let stmt = self.stmts[st.0].st.clone();
            if i + 1 == tx.steps.len() && !tx.pipelined {
                let row: Option<mysql_async::Row> = self.c.exec_first(&stmt, p).await?;
                value = row.and_then(|r| r.as_ref(0).and_then(text));
            } else {
                self.c.exec_drop(&stmt, p).await?;
            }
        }
        if tx.commit && self.open {
            self.open = false;
            self.c.query_drop("COMMIT").await?;
        }
        Ok(value)
    }
}

impl Backend for MyBackend {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn prepare<'a>(&'a mut self, sql: &'a Sql) -> BoxFuture<'a, std::result::Result<Stmt, String>> {
        Box::pin(async move {
            let (text, rollback) = match sql {
                Sql::Text { mysql, .. } => (mysql.as_str(), None),
                Sql::Routine { mysql, rollback, .. } => (*mysql, Some(*rollback)),
            };
            let (text, order) = positional(text);
            let st = self.c.prep(text).await.map_err(|e| message(&e))?;
            self.stmts.push(MyStmt { st, order, rollback });
            Ok(Stmt(self.stmts.len() - 1))
        })
    }

    fn transaction_value(&mut self, tx: Txn) -> BoxFuture<'_, (Outcome, Option<String>)> {
        Box::pin(async move {
            let ran = self.run(&tx).await;
            let rollbacks = tx.steps.iter().map(|(st, _)| self.stmts[st.0].rollback);
            settle(ran, &mut self.open, self.c.query_drop("ROLLBACK"), rollbacks).await
        })
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> BoxFuture<'a, std::result::Result<(), String>> {
        Box::pin(async move { self.c.query_drop(sql).await.map_err(|e| message(&e)) })
    }

    fn query_text<'a>(&'a mut self, sql: &'a str) -> BoxFuture<'a, std::result::Result<Option<String>, String>> {
        Box::pin(async move {
            let row: Option<mysql_async::Row> = self.c.query_first(sql).await.map_err(|e| message(&e))?;
            Ok(row.and_then(|r| r.as_ref(0).and_then(text)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsn_parts_and_defaults() {
        let t = Target::parse("mysql://alice:s3cr%40t@db.example:3307/bench").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.user.as_str(), t.db.as_str()), ("db.example", 3307, "alice", "bench"));
        assert_eq!(t.password.as_deref(), Some("s3cr@t"));
        assert_eq!(t.display, "mysql alice@db.example:3307/bench");
        assert!(!format!("{t:?}").contains("s3cr"));
        // MySQL's default port (MySQL manual, "Connecting to the Server").
        assert_eq!(Target::parse("mysql://bob@h/d").unwrap().port, 3306);
    }

    #[test]
    fn bad_dsns_are_input_errors() {
        for d in ["postgres://a@b/c", "mysql://a@h:notaport/d", "mysql://a@/d"] {
            assert!(Target::parse(d).unwrap_err().is_input(), "{d}");
        }
    }

    #[test]
    fn my_cnf_reads_the_client_group_only() {
        let text = "[mysqld]\npassword=server\n[client]\nuser = me\npassword = \"two words\"\n[mysql]\npassword=other\n";
        assert_eq!(my_cnf_password(text).as_deref(), Some("two words"));
        assert_eq!(my_cnf_password("[mysqld]\npassword=x\n"), None);
    }

    #[test]
    fn dollar_placeholders_become_question_marks_in_order() {
        let (s, o) = positional("UPDATE t SET a = $2, b = '$1' WHERE id = $1 AND x = $2");
        assert_eq!(s, "UPDATE t SET a = ?, b = '$1' WHERE id = ? AND x = ?");
        assert_eq!(o, Some(vec![1, 0, 1]));
        assert_eq!(positional("INSERT INTO t VALUES (?, ?)"), ("INSERT INTO t VALUES (?, ?)".to_string(), None));
    }
}
