//! PostgreSQL connections the way libpq users expect them: a URL or a
//! key=value conninfo, with PGHOST/PGPORT/PGUSER/PGDATABASE defaults and the
//! password from PGPASSWORD or the password file (PGPASSFILE, ~/.pgpass).
//! The password is never part of any text this module returns.

use crate::error::{one_line, DbError, Result};
use std::str::FromStr;
use tokio_postgres::config::Host;
use tokio_postgres::{Client, Config, NoTls};

/// A parsed target with the defaults filled in.
#[derive(Clone)]
pub struct Target {
    pub config: Config,
    /// host:port/dbname as user@…, for messages and records; no password.
    pub display: String,
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

fn os_user() -> String {
    env("USER").unwrap_or_else(|| {
        // SAFETY: getpwuid returns a pointer into static storage or null.
        unsafe {
            let pw = libc::getpwuid(libc::geteuid());
            if pw.is_null() {
                return "postgres".into();
            }
            std::ffi::CStr::from_ptr((*pw).pw_name).to_string_lossy().into_owned()
        }
    })
}

/// The `.pgpass` line format: host:port:database:user:password, `*` matching
/// anything, `\:` and `\\` escaped (PostgreSQL docs, "The Password File").
fn pgpass_lookup(text: &str, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = vec![String::new()];
        let mut esc = false;
        for ch in line.chars() {
            match (esc, ch) {
                (true, c) => {
                    fields.last_mut().unwrap().push(c);
                    esc = false;
                }
                (false, '\\') => esc = true,
                (false, ':') if fields.len() < 5 => fields.push(String::new()),
                (false, c) => fields.last_mut().unwrap().push(c),
            }
        }
        if fields.len() != 5 {
            continue;
        }
        let want = [host.to_string(), port.to_string(), db.to_string(), user.to_string()];
        if fields[..4].iter().zip(want.iter()).all(|(f, w)| f == "*" || f == w) {
            return Some(fields[4].clone());
        }
    }
    None
}

/// Debug shows the display form only: the config holds the password.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display)
    }
}

impl Target {
    /// Parses `postgres://…`, `postgresql://…` or `key=value …`.
    pub fn parse(dsn: &str) -> Result<Target> {
        let mut config = Config::from_str(dsn).map_err(|e| {
            DbError::Input(format!(
                "--db: cannot parse the PostgreSQL connection string ({}) — use postgres://USER@HOST:PORT/DBNAME or 'host=… dbname=…'",
                one_line(&e.to_string())
            ))
        })?;
        if config.get_hosts().is_empty() {
            let h = env("PGHOST").unwrap_or_else(|| {
                if std::path::Path::new("/var/run/postgresql").is_dir() {
                    "/var/run/postgresql".into()
                } else {
                    "localhost".into()
                }
            });
            config.host(&h);
        }
        if config.get_ports().is_empty() {
            let p = env("PGPORT").and_then(|p| p.parse().ok()).unwrap_or(5432);
            config.port(p);
        }
        if config.get_user().is_none() {
            config.user(env("PGUSER").unwrap_or_else(os_user));
        }
        if config.get_dbname().is_none() {
            let d = env("PGDATABASE").unwrap_or_else(|| config.get_user().unwrap_or("postgres").to_string());
            config.dbname(d);
        }
        let host = match &config.get_hosts()[0] {
            Host::Tcp(h) => h.clone(),
            Host::Unix(p) => p.display().to_string(),
        };
        let port = config.get_ports()[0];
        let user = config.get_user().unwrap_or("").to_string();
        let db = config.get_dbname().unwrap_or("").to_string();
        if config.get_password().is_none() {
            let pw = env("PGPASSWORD").or_else(|| {
                let file = env("PGPASSFILE").map(std::path::PathBuf::from).or_else(|| env("HOME").map(|h| std::path::Path::new(&h).join(".pgpass")))?;
                let text = std::fs::read_to_string(file).ok()?;
                let lookup_host = if host.starts_with('/') { "localhost" } else { host.as_str() };
                pgpass_lookup(&text, lookup_host, port, &db, &user)
            });
            if let Some(pw) = pw {
                config.password(pw);
            }
        }
        config.application_name("storlab");
        config.connect_timeout(std::time::Duration::from_secs(10));
        let display = format!("postgres {user}@{host}:{port}/{db}");
        Ok(Target { config, display })
    }

    /// One connection; its driver task runs on the current runtime.
    pub async fn connect(&self) -> Result<Client> {
        let (client, conn) = self.config.connect(NoTls).await.map_err(|e| self.connect_error(&e))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(client)
    }

    fn connect_error(&self, e: &tokio_postgres::Error) -> DbError {
        let reason = match e.as_db_error() {
            Some(db) => one_line(db.message()),
            None => {
                let mut s = one_line(&e.to_string());
                let mut src = std::error::Error::source(e);
                while let Some(x) = src {
                    s = format!("{s}: {}", one_line(&x.to_string()));
                    src = x.source();
                }
                s
            }
        };
        self.connect_failed(reason)
    }

    /// A connection error naming the target (never its password) with the
    /// likely fix.
    pub fn connect_failed(&self, reason: String) -> DbError {
        let reason = one_line(&reason);
        let hint = if reason.contains("password") || reason.contains("authentication") {
            "set PGPASSWORD or add the server to ~/.pgpass"
        } else if reason.contains("TLS") {
            "storlab connects without TLS: use sslmode=prefer or disable in --db"
        } else if reason.contains("does not exist") {
            "create the database first, or name an existing one in --db"
        } else {
            "check that the server is running and the host, port and socket in --db are right, or use --db managed-postgres"
        };
        DbError::Connect { target: self.display.clone(), reason, hint: hint.into() }
    }
}

/// Runs a batch of SQL (several statements) and names it in errors.
pub async fn batch(c: &Client, what: &str, sql: &str) -> Result<()> {
    c.batch_execute(sql).await.map_err(|e| DbError::sql(what, pg_message(&e)))
}

/// The server's own message where there is one.
pub fn pg_message(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => one_line(db.message()),
        None => one_line(&e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_matches_fields_and_wildcards() {
        let text = "# comment\nother:5432:*:bob:nope\nlocalhost:5432:bench:alice:s3cr\\:et\n*:*:*:carol:any\n";
        assert_eq!(pgpass_lookup(text, "localhost", 5432, "bench", "alice").as_deref(), Some("s3cr:et"));
        assert_eq!(pgpass_lookup(text, "db1", 6000, "x", "carol").as_deref(), Some("any"));
        assert_eq!(pgpass_lookup(text, "localhost", 5433, "bench", "alice"), None);
    }

    #[test]
    fn display_never_holds_the_password() {
        let t = Target::parse("postgres://alice:hunter2@db.example:6432/bench").unwrap();
        assert_eq!(t.display, "postgres alice@db.example:6432/bench");
        assert!(!t.display.contains("hunter2"));
    }

    #[test]
    fn garbage_is_an_input_error() {
        assert!(Target::parse("postgres://a:b@host:notaport/db").unwrap_err().is_input());
    }
}
