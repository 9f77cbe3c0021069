//! The one place that knows every backend: a `Db` in, a connected
//! `Backend` out. Kept apart from `backend` (the trait and the PostgreSQL and
//! SQLite backends) so the MySQL backend can use that trait without a circle.

use crate::backend::{Backend, PgBackend, SqliteBackend};
use crate::error::Result;
use crate::mysql::MyBackend;
use crate::session::Db;

/// Connects to `db`: a wire connection, a MySQL connection or a SQLite connection.
pub async fn connect(db: &Db) -> Result<Box<dyn Backend>> {
    match db {
        Db::Postgres(t) => Ok(Box::new(PgBackend::connect(t).await?)),
        Db::Mysql(t) => Ok(Box::new(MyBackend::connect(t).await?)),
        Db::Sqlite { path } => Ok(Box::new(SqliteBackend::open(path).await?)),
    }
}
