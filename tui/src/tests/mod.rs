//! Tests of the console without a terminal or a host: a recording fake of the admin API with
//! realistic data, snapshot tests of every screen and dialog, key-handling tests, and tests of
//! how the state takes in answers (host status, messages and their lifetimes).

mod answers;
mod campaign;
mod fake;
mod fixtures;
mod keys;
mod snapshots;
