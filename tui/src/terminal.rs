//! Taking over the terminal (raw mode, alternate screen, mouse capture) and giving it back,
//! on a normal exit and on a panic: the panic hook restores the terminal before the panic
//! message is printed, so the message is readable and the shell usable.

use ratatui::DefaultTerminal;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use std::io::{self, stdout};

/// Switches the terminal to full-screen mode; [`restore`] undoes it.
pub fn enter() -> io::Result<DefaultTerminal> {
    install_panic_hook();
    let entered = enable_raw_mode()
        .and_then(|()| execute!(stdout(), EnterAlternateScreen, EnableMouseCapture))
        .and_then(|()| Terminal::new(CrosstermBackend::new(stdout())));
    if entered.is_err() {
        // Half-entered: leave nothing behind.
        let _ = restore();
    }
    entered
}

/// Leaves full-screen mode. Safe to call more than once.
pub fn restore() -> io::Result<()> {
    let raw = disable_raw_mode();
    execute!(stdout(), DisableMouseCapture, LeaveAlternateScreen, Show)?;
    raw
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = restore();
        previous(info);
    }));
}
