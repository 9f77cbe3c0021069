//! The integration tests, one binary: each test binary links the whole
//! crate again, so one binary builds in a fraction of the time of many.

mod common;

mod concurrent;
mod consistency;
mod db;
mod open_loop;
mod overrides;
mod properties;
mod time_behaviour;
