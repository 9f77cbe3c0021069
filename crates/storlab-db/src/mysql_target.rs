//! Where a MySQL or MariaDB server is: a URL `mysql://USER@HOST:PORT/DB`
//! with the password from the URL, `MYSQL_PWD` or the `[client]` group of
//! `~/.my.cnf`, as the mysql client reads them. A leaf, so the crate's shared
//! vocabulary (`session`) can name a target without the driver (`mysql`).

use crate::error::{DbError, Result};

/// A parsed target with the defaults filled in.
#[derive(Clone)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub db: String,
    pub(crate) password: Option<String>,
    /// `mysql user@host:port/db`, for messages and records; no password.
    pub display: String,
    /// Transactions the connections to this target ran in autocommit (one
    /// statement, no BEGIN/COMMIT): MySQL counts them in no `Com_commit`,
    /// so a run with any reports the client's TPM.
    pub autocommitted: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// Debug shows the display form only: the target holds the password.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display)
    }
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// `%XX` escapes of a URL component.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The password of an option file's `[client]` group (MySQL manual, "Using
/// Option Files"): `password=…`, optionally quoted; later lines win.
pub fn my_cnf_password(text: &str) -> Option<String> {
    let mut in_client = false;
    let mut found = None;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_client = l.trim_start_matches('[').trim_end_matches(']').trim().eq_ignore_ascii_case("client");
            continue;
        }
        if !in_client || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        let Some((k, v)) = l.split_once('=') else { continue };
        if k.trim().replace('-', "_") != "password" {
            continue;
        }
        let v = v.trim();
        let v = if v.len() >= 2 && (v.starts_with('"') && v.ends_with('"') || v.starts_with('\'') && v.ends_with('\'')) { &v[1..v.len() - 1] } else { v };
        found = Some(v.to_string());
    }
    found
}

impl Target {
    /// Parses `mysql://USER[:PASSWORD]@HOST[:PORT][/DB]`.
    pub fn parse(dsn: &str) -> Result<Target> {
        let bad = |why: &str| DbError::Input(format!("--dsn: {why} — use mysql://USER@HOST:PORT/DB (the password from MYSQL_PWD or ~/.my.cnf)"));
        let rest = dsn.strip_prefix("mysql://").or_else(|| dsn.strip_prefix("mariadb://")).ok_or_else(|| bad("not a mysql:// URL"))?;
        let rest = rest.split(['?', '#']).next().unwrap_or("");
        let (auth_host, db) = rest.split_once('/').unwrap_or((rest, ""));
        let (auth, hostport) = match auth_host.rsplit_once('@') {
            Some((a, h)) => (Some(a), h),
            None => (None, auth_host),
        };
        let (user, url_pw) = match auth {
            Some(a) => match a.split_once(':') {
                Some((u, p)) => (unescape(u), Some(unescape(p))),
                None => (unescape(a), None),
            },
            None => (env("USER").unwrap_or_else(|| "root".into()), None),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || hostport.starts_with('[') => {
                (h.trim_matches(['[', ']']).to_string(), p.parse::<u16>().map_err(|_| bad(&format!("port '{p}' is not a number from 1 to 65535")))?)
            }
            _ => (hostport.trim_matches(['[', ']']).to_string(), 3306),
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        if user.is_empty() {
            return Err(bad("no user"));
        }
        let db = unescape(db);
        let password = url_pw.or_else(|| env("MYSQL_PWD")).or_else(|| {
            let home = env("HOME")?;
            my_cnf_password(&std::fs::read_to_string(std::path::Path::new(&home).join(".my.cnf")).ok()?)
        });
        let display = format!("mysql {user}@{host}:{port}/{db}");
        Ok(Target { host, port, user, db, password, display, autocommitted: Default::default() })
    }
}
