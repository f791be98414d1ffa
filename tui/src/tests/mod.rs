//! Tests of the console without a terminal or a host: a recording fake of the admin API with
//! realistic data, snapshot tests of every screen and dialog, and key-handling tests.

mod fake;
mod fixtures;
mod keys;
mod snapshots;
