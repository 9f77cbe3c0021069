//! The virtual users' PostgreSQL client: the frontend/backend protocol 3.0
//! spoken directly on the user's own socket, on the user's own task.
//!
//! A transaction step is one write (Bind, Execute, Sync) and the reads until
//! ReadyForQuery, as libpq does for pgbench's `-M prepared`: no connection
//! task, no channels, no per-request allocation. Parameters go as text, so
//! the server types each one as the statement infers. Loading, the monitor
//! and schema work keep tokio-postgres (`pg.rs`), where per-call overhead
//! does not count.
//!
//! Authentication: trust, cleartext password, md5 and SCRAM-SHA-256 (the
//! hashing from `postgres-protocol`). No TLS, as for the rest of storlab's
//! connections.

use crate::error::{one_line, DbError};
use crate::pg::Target;
use postgres_protocol::authentication::{md5_hash, sasl};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::config::Host;

/// Why a request failed: the server's error (the session goes on) or the
/// connection is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    Db { code: String, message: String },
    Closed(String),
}

impl WireError {
    pub fn message(&self) -> String {
        match self {
            WireError::Db { message, .. } => one_line(message),
            WireError::Closed(m) => one_line(m),
        }
    }
    pub fn is_closed(&self) -> bool {
        matches!(self, WireError::Closed(_))
    }
}

impl crate::session::ConnError for WireError {
    fn lost(&self) -> bool {
        self.is_closed()
    }
    fn text(&self) -> String {
        self.message()
    }
}

fn closed(e: io::Error) -> WireError {
    WireError::Closed(format!("connection lost: {e}"))
}

/// The socket, registered with the event loop for readability only.
///
/// tokio's own streams also register for writability, and on a Unix socket
/// the kernel signals write space again every time the server reads a
/// request: with edge-triggered epoll that is one more wake-up (and sleep)
/// of the event loop per round trip, for nothing. Requests are a few hundred
/// bytes against a send buffer of hundreds of KiB, so a write that would
/// block is retried after a short sleep instead.
struct Io {
    fd: AsyncFd<OwnedFd>,
}

impl Io {
    fn new(fd: OwnedFd) -> io::Result<Io> {
        // SAFETY: the OwnedFd stays open, the same descriptor, for as long
        // as the AsyncFd that owns it.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(|e| e.into_parts().1)?;
        Ok(Io { fd })
    }

    async fn write_all(&mut self, mut b: &[u8]) -> io::Result<()> {
        let fd = self.fd.get_ref().as_raw_fd();
        while !b.is_empty() {
            // SAFETY: `b` is a live slice; MSG_NOSIGNAL turns a closed peer
            // into EPIPE rather than a signal.
            let n = unsafe { libc::send(fd, b.as_ptr().cast(), b.len(), libc::MSG_NOSIGNAL) };
            if n >= 0 {
                b = &b[n as usize..];
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => tokio::time::sleep(std::time::Duration::from_micros(200)).await,
                _ => return Err(e),
            }
        }
        Ok(())
    }

    async fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.fd.readable().await?;
            let fd = ready.get_inner().as_raw_fd();
            // SAFETY: `b` is a live, writable slice.
            let n = unsafe { libc::recv(fd, b.as_mut_ptr().cast(), b.len(), 0) };
            if n >= 0 {
                // A short read drained the socket: wait for the next edge
                // rather than try again for EAGAIN (as tokio's streams do).
                if (n as usize) < b.len() {
                    ready.clear_ready();
                }
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => ready.clear_ready(),
                io::ErrorKind::Interrupted => {}
                _ => return Err(e),
            }
        }
    }
}

/// A prepared statement of this connection.
#[derive(Debug, Clone)]
pub struct Stmt {
    name: String,
}

/// The text-format parameters of one Bind, written straight into the
/// outgoing buffer.
pub struct Params<'a> {
    buf: &'a mut Vec<u8>,
    n: u16,
}

impl Params<'_> {
    fn value(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        let at = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        f(self.buf);
        let len = (self.buf.len() - at - 4) as u32;
        self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        self.n += 1;
        self
    }
    pub fn text(&mut self, s: &str) -> &mut Self {
        self.value(|b| b.extend_from_slice(s.as_bytes()))
    }
    pub fn int(&mut self, v: i64) -> &mut Self {
        self.value(|b| put_int(b, v))
    }
    pub fn bool(&mut self, v: bool) -> &mut Self {
        self.value(|b| b.push(if v { b't' } else { b'f' }))
    }
    /// An integer array in PostgreSQL's text form, `{1,2,3}`.
    pub fn int_array(&mut self, v: &[i32]) -> &mut Self {
        self.value(|b| {
            b.push(b'{');
            for (i, x) in v.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                put_int(b, i64::from(*x));
            }
            b.push(b'}');
        })
    }
    pub fn null(&mut self) -> &mut Self {
        self.buf.extend_from_slice(&(-1i32).to_be_bytes());
        self.n += 1;
        self
    }
}

fn put_int(b: &mut Vec<u8>, v: i64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut u = v.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    if v < 0 {
        b.push(b'-');
    }
    b.extend_from_slice(&digits[i..]);
}

/// Starts a frontend message: its type byte and a length to patch.
fn begin(b: &mut Vec<u8>, tag: u8) -> usize {
    b.push(tag);
    let at = b.len();
    b.extend_from_slice(&[0; 4]);
    at
}

fn end(b: &mut Vec<u8>, at: usize) {
    let len = (b.len() - at) as u32;
    b[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn cstr(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(s.as_bytes());
    b.push(0);
}

fn sync(b: &mut Vec<u8>) {
    b.extend_from_slice(&[b'S', 0, 0, 0, 4]);
}

/// The first column of a DataRow as text (`None` for NULL).
fn first_column(body: &[u8]) -> Option<String> {
    let n = u16::from_be_bytes(body.get(0..2)?.try_into().ok()?);
    if n == 0 {
        return None;
    }
    let len = i32::from_be_bytes(body.get(2..6)?.try_into().ok()?);
    if len < 0 {
        return None;
    }
    Some(String::from_utf8_lossy(body.get(6..6 + len as usize)?).into_owned())
}

/// The fields of an ErrorResponse: SQLSTATE and message.
fn parse_error(body: &[u8]) -> WireError {
    let (mut code, mut message, mut severity) = (String::new(), String::new(), String::new());
    let mut rest = body;
    while let Some((&field, tail)) = rest.split_first() {
        if field == 0 {
            break;
        }
        let end = tail.iter().position(|&c| c == 0).unwrap_or(tail.len());
        let v = String::from_utf8_lossy(&tail[..end]).into_owned();
        match field {
            b'C' => code = v,
            b'M' => message = v,
            b'V' => severity = v,
            _ => {}
        }
        rest = tail.get(end + 1..).unwrap_or(&[]);
    }
    if severity == "FATAL" || severity == "PANIC" {
        WireError::Closed(message)
    } else {
        WireError::Db { code, message }
    }
}

/// One virtual user's connection.
pub struct Conn {
    io: Io,
    rbuf: Vec<u8>,
    rpos: usize,
    rend: usize,
    wbuf: Vec<u8>,
    statements: u32,
}

impl Conn {
    /// Connects and authenticates to the target's first host.
    pub async fn connect(t: &Target) -> Result<Conn, DbError> {
        let limit = t.config.get_connect_timeout().copied().unwrap_or(std::time::Duration::from_secs(10));
        match tokio::time::timeout(limit, Conn::open(t)).await {
            Ok(Ok(c)) => Ok(c),
            Ok(Err(reason)) => Err(t.connect_failed(reason)),
            Err(_) => Err(t.connect_failed(format!("no answer within {} s", limit.as_secs()))),
        }
    }

    async fn open(t: &Target) -> Result<Conn, String> {
        let cfg = &t.config;
        let port = cfg.get_ports().first().copied().unwrap_or(5432);
        let io = match cfg.get_hosts().first() {
            Some(Host::Unix(dir)) => {
                let path = dir.join(format!(".s.PGSQL.{port}"));
                let s = UnixStream::connect(&path).await.map_err(|e| format!("{}: {e}", path.display()))?;
                Io::new(OwnedFd::from(s.into_std().map_err(|e| e.to_string())?)).map_err(|e| e.to_string())?
            }
            Some(Host::Tcp(h)) => {
                let s = TcpStream::connect((h.as_str(), port)).await.map_err(|e| format!("{h}:{port}: {e}"))?;
                s.set_nodelay(true).map_err(|e| e.to_string())?;
                Io::new(OwnedFd::from(s.into_std().map_err(|e| e.to_string())?)).map_err(|e| e.to_string())?
            }
            None => return Err("no host".into()),
        };
        let mut c = Conn { io, rbuf: vec![0; 16 << 10], rpos: 0, rend: 0, wbuf: Vec::with_capacity(4 << 10), statements: 0 };
        let user = cfg.get_user().unwrap_or("postgres");
        let mut params: Vec<(&str, &str)> = vec![("user", user), ("client_encoding", "UTF8")];
        if let Some(d) = cfg.get_dbname() {
            params.push(("database", d));
        }
        if let Some(a) = cfg.get_application_name() {
            params.push(("application_name", a));
        }
        if let Some(o) = cfg.get_options() {
            params.push(("options", o));
        }
        let mut startup = bytes::BytesMut::new();
        postgres_protocol::message::frontend::startup_message(params.iter().copied(), &mut startup).map_err(|e| e.to_string())?;
        c.wbuf.extend_from_slice(&startup);
        c.flush().await.map_err(|e| e.message())?;
        c.authenticate(user.as_bytes(), cfg.get_password()).await.map_err(|e| e.message())?;
        // Parameter status and the key data, up to the first ReadyForQuery.
        c.finish().await.map_err(|e| e.message())?;
        Ok(c)
    }

    async fn authenticate(&mut self, user: &[u8], password: Option<&[u8]>) -> Result<(), WireError> {
        let need = |what: &str| WireError::Closed(format!("the server asks for a {what} password and none was given"));
        let mut scram: Option<sasl::ScramSha256> = None;
        loop {
            let (tag, s, e) = self.next().await?;
            let body = &self.rbuf[s..e];
            match tag {
                b'E' => return Err(WireError::Closed(parse_error(body).message())),
                b'R' if body.len() >= 4 => {
                    let code = u32::from_be_bytes(body[..4].try_into().expect("4 bytes"));
                    let data = body[4..].to_vec();
                    let mut out = bytes::BytesMut::new();
                    match code {
                        0 => return Ok(()),
                        3 => {
                            let pw = password.ok_or_else(|| need("cleartext"))?;
                            postgres_protocol::message::frontend::password_message(pw, &mut out).map_err(closed)?;
                        }
                        5 if data.len() >= 4 => {
                            let pw = password.ok_or_else(|| need("md5"))?;
                            let salt: [u8; 4] = data[..4].try_into().expect("4 bytes");
                            postgres_protocol::message::frontend::password_message(md5_hash(user, pw, salt).as_bytes(), &mut out).map_err(closed)?;
                        }
                        10 => {
                            let offered = data.split(|&b| b == 0).any(|m| m == sasl::SCRAM_SHA_256.as_bytes());
                            if !offered {
                                return Err(WireError::Closed("the server offers no SASL mechanism storlab speaks (SCRAM-SHA-256)".into()));
                            }
                            let pw = password.ok_or_else(|| need("SCRAM-SHA-256"))?;
                            let s = sasl::ScramSha256::new(pw, sasl::ChannelBinding::unsupported());
                            postgres_protocol::message::frontend::sasl_initial_response(sasl::SCRAM_SHA_256, s.message(), &mut out).map_err(closed)?;
                            scram = Some(s);
                        }
                        11 => {
                            let s = scram.as_mut().ok_or_else(|| WireError::Closed("SASL continue before SASL start".into()))?;
                            s.update(&data).map_err(|e| WireError::Closed(format!("SCRAM: {e}")))?;
                            postgres_protocol::message::frontend::sasl_response(s.message(), &mut out).map_err(closed)?;
                        }
                        12 => {
                            let s = scram.as_mut().ok_or_else(|| WireError::Closed("SASL final before SASL start".into()))?;
                            s.finish(&data).map_err(|e| WireError::Closed(format!("SCRAM: {e}")))?;
                            continue;
                        }
                        other => {
                            return Err(WireError::Closed(format!(
                                "the server asks for authentication method {other}; storlab's client speaks trust, password, md5 and scram-sha-256"
                            )))
                        }
                    }
                    self.wbuf.extend_from_slice(&out);
                    self.flush().await?;
                }
                b'N' => {}
                _ => return Err(WireError::Closed(format!("unexpected message '{}' during authentication", tag as char))),
            }
        }
    }

    async fn flush(&mut self) -> Result<(), WireError> {
        let r = self.io.write_all(&self.wbuf).await;
        self.wbuf.clear();
        r.map_err(closed)
    }

    /// The next backend message: its type and the span of its body in
    /// `rbuf`, valid until the next call.
    async fn next(&mut self) -> Result<(u8, usize, usize), WireError> {
        self.fill(5).await?;
        let tag = self.rbuf[self.rpos];
        let len = u32::from_be_bytes(self.rbuf[self.rpos + 1..self.rpos + 5].try_into().expect("4 bytes")) as usize;
        if len < 4 {
            return Err(WireError::Closed(format!("malformed message '{}' from the server", tag as char)));
        }
        self.fill(1 + len).await?;
        let (s, e) = (self.rpos + 5, self.rpos + 1 + len);
        self.rpos = e;
        Ok((tag, s, e))
    }

    /// Reads until `need` bytes are buffered past `rpos`.
    async fn fill(&mut self, need: usize) -> Result<(), WireError> {
        while self.rend - self.rpos < need {
            if self.rpos > 0 {
                self.rbuf.copy_within(self.rpos..self.rend, 0);
                self.rend -= self.rpos;
                self.rpos = 0;
            }
            if self.rbuf.len() < need.max(self.rend + 4096) {
                self.rbuf.resize(need.max(self.rend + 4096).next_power_of_two(), 0);
            }
            let n = self.io.read(&mut self.rbuf[self.rend..]).await.map_err(closed)?;
            if n == 0 {
                return Err(WireError::Closed("the server closed the connection".into()));
            }
            self.rend += n;
        }
        Ok(())
    }

    /// Reads the replies up to ReadyForQuery: the rows returned, or the
    /// first error the server sent.
    async fn finish(&mut self) -> Result<u64, WireError> {
        self.finish_with(None).await
    }

    /// `finish`, keeping the first column of the first row in `first`.
    async fn finish_with(&mut self, mut first: Option<&mut Option<String>>) -> Result<u64, WireError> {
        let (mut rows, mut err) = (0u64, None);
        loop {
            let (tag, s, e) = match self.next().await {
                Ok(m) => m,
                // A FATAL error arrives just before the server hangs up.
                Err(WireError::Closed(m)) => return Err(WireError::Closed(err.map(|e: WireError| e.message()).unwrap_or(m))),
                Err(e) => return Err(e),
            };
            match tag {
                b'Z' => return err.map_or(Ok(rows), Err),
                b'D' => {
                    if rows == 0 {
                        if let Some(f) = first.as_deref_mut() {
                            *f = first_column(&self.rbuf[s..e]);
                        }
                    }
                    rows += 1
                }
                b'E' => {
                    let e = parse_error(&self.rbuf[s..e]);
                    if e.is_closed() {
                        return Err(e);
                    }
                    err.get_or_insert(e);
                }
                // ParseComplete, BindComplete, CloseComplete, CommandComplete,
                // RowDescription, NoData, ParameterDescription, EmptyQuery,
                // PortalSuspended, ParameterStatus, BackendKeyData, notices
                // and notifications.
                b'1' | b'2' | b'3' | b'C' | b'T' | b'n' | b't' | b'I' | b's' | b'S' | b'K' | b'N' | b'A' => {}
                other => return Err(WireError::Closed(format!("unexpected message '{}' from the server", other as char))),
            }
        }
    }

    /// Prepares `sql` ($1… placeholders) as a named statement.
    pub async fn prepare(&mut self, sql: &str) -> Result<Stmt, WireError> {
        self.statements += 1;
        let name = format!("storlab_{}", self.statements);
        let at = begin(&mut self.wbuf, b'P');
        cstr(&mut self.wbuf, &name);
        cstr(&mut self.wbuf, sql);
        self.wbuf.extend_from_slice(&0u16.to_be_bytes());
        end(&mut self.wbuf, at);
        sync(&mut self.wbuf);
        self.flush().await?;
        self.finish().await?;
        Ok(Stmt { name })
    }

    /// Runs a prepared statement with the parameters `fill` writes: one
    /// round trip. Returns the rows it returned.
    pub async fn execute(&mut self, st: &Stmt, fill: impl FnOnce(&mut Params)) -> Result<u64, WireError> {
        self.queue(st, fill);
        self.sync().await
    }

    /// `execute`, returning the first column of the first row as text
    /// (`None`: no row, or NULL).
    pub async fn execute_first(&mut self, st: &Stmt, fill: impl FnOnce(&mut Params)) -> Result<Option<String>, WireError> {
        self.queue(st, fill);
        sync(&mut self.wbuf);
        self.flush().await?;
        let mut first = None;
        self.finish_with(Some(&mut first)).await?;
        Ok(first)
    }

    /// Queues the Bind and Execute of a prepared statement without sending
    /// them: several queued statements go in one write with `sync`.
    pub fn queue(&mut self, st: &Stmt, fill: impl FnOnce(&mut Params)) {
        let at = begin(&mut self.wbuf, b'B');
        self.wbuf.push(0); // the unnamed portal
        cstr(&mut self.wbuf, &st.name);
        self.wbuf.extend_from_slice(&0u16.to_be_bytes()); // every parameter in text
        let count_at = self.wbuf.len();
        self.wbuf.extend_from_slice(&0u16.to_be_bytes());
        let mut p = Params { buf: &mut self.wbuf, n: 0 };
        fill(&mut p);
        let n = p.n;
        self.wbuf[count_at..count_at + 2].copy_from_slice(&n.to_be_bytes());
        self.wbuf.extend_from_slice(&0u16.to_be_bytes()); // results in text
        end(&mut self.wbuf, at);
        self.wbuf.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]); // Execute "", all rows
    }

    /// Sends the queued statements with a Sync and reads every reply: the
    /// rows returned, or the first error.
    pub async fn sync(&mut self) -> Result<u64, WireError> {
        sync(&mut self.wbuf);
        self.flush().await?;
        self.finish().await
    }

    /// Runs one query through the simple protocol and returns the first
    /// column of its first row as text (`None`: no row, or NULL).
    pub async fn query_text(&mut self, sql: &str) -> Result<Option<String>, WireError> {
        let at = begin(&mut self.wbuf, b'Q');
        cstr(&mut self.wbuf, sql);
        end(&mut self.wbuf, at);
        self.flush().await?;
        let mut first = None;
        self.finish_with(Some(&mut first)).await?;
        Ok(first)
    }

    /// Runs SQL through the simple query protocol (several statements allowed).
    pub async fn simple(&mut self, sql: &str) -> Result<u64, WireError> {
        let at = begin(&mut self.wbuf, b'Q');
        cstr(&mut self.wbuf, sql);
        end(&mut self.wbuf, at);
        self.flush().await?;
        self.finish().await
    }
}

impl Drop for Conn {
    /// Says goodbye (Terminate) so the server ends the session quietly, even
    /// with a transaction open, rather than logging an unexpected EOF.
    fn drop(&mut self) {
        let fd = self.io.fd.get_ref().as_raw_fd();
        let bye = [b'X', 0, 0, 0, 4];
        // SAFETY: the descriptor is open until `io` drops after this.
        unsafe { libc::send(fd, bye.as_ptr().cast(), bye.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_in_text() {
        let mut b = vec![];
        for v in [0i64, 7, -7, 1_000_000, i64::MIN, i64::MAX] {
            b.clear();
            put_int(&mut b, v);
            assert_eq!(String::from_utf8(b.clone()).unwrap(), v.to_string());
        }
    }

    #[test]
    fn bind_parameters_are_length_prefixed_text() {
        let mut buf = vec![];
        let mut p = Params { buf: &mut buf, n: 0 };
        p.int(42).int_array(&[1, -2, 30]).bool(true).null().text("O'Brien");
        assert_eq!(p.n, 5);
        let want: Vec<u8> = [
            &[0, 0, 0, 2][..],
            b"42",
            &[0, 0, 0, 9],
            b"{1,-2,30}",
            &[0, 0, 0, 1],
            b"t",
            &[0xff, 0xff, 0xff, 0xff],
            &[0, 0, 0, 7],
            b"O'Brien",
        ]
        .concat();
        assert_eq!(buf, want);
    }

    #[test]
    fn error_response_fields() {
        // Severity, SQLSTATE and message, as a server sends them.
        let body = b"SERROR\0VERROR\0C23505\0Mduplicate key value violates unique constraint \"k\"\0\0";
        assert_eq!(
            parse_error(body),
            WireError::Db { code: "23505".into(), message: "duplicate key value violates unique constraint \"k\"".into() }
        );
        assert!(parse_error(b"SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0").is_closed());
    }
}
