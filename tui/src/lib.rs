//! Ferry's operator console: a terminal interface over the admin API for suppliers, imports,
//! events, plugins and each supplier's campaign report.
//!
//! The parts: [`api`] (answers and the `AdminApi` trait), [`http`] (the real client),
//! [`calls`] (admin calls as values), [`app`] (state), [`keys`] (input to actions), [`ui`]
//! (drawing), [`runner`] (the event loop) and [`terminal`] (entering and restoring the
//! terminal).

pub mod api;
pub mod app;
pub mod calls;
pub mod http;
pub mod keys;
pub mod runner;
pub mod terminal;
pub mod ui;

#[cfg(test)]
mod tests;
