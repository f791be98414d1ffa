//! The event loop: draws the state, turns keys into actions, runs admin calls on a background
//! runtime and feeds their answers back, and refreshes the current screen every few seconds.
//!
//! The loop never waits on the network: calls are spawned on the tokio runtime and their
//! answers come back over a channel that is drained between frames.

use crate::api::AdminApi;
use crate::app::{Action, App};
use crate::calls::{ApiCall, Completed, perform};
use crate::{keys, ui};
use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event};
use std::collections::HashSet;
use std::io;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};
use tokio::runtime::Handle;

/// How long to wait for input before looking at answers and redrawing.
const FRAME: Duration = Duration::from_millis(100);

/// Admin calls under way, so that the same call is not made twice at once (a slow host would
/// otherwise collect a pile of identical refreshes).
struct Calls<A> {
    api: Arc<A>,
    runtime: Handle,
    answers: Sender<Completed>,
    in_flight: HashSet<ApiCall>,
}

impl<A: AdminApi> Calls<A> {
    fn start(&mut self, call: ApiCall) {
        if !self.in_flight.insert(call.clone()) {
            return;
        }
        let api = Arc::clone(&self.api);
        let answers = self.answers.clone();
        self.runtime.spawn(async move {
            let done = perform(api.as_ref(), call).await;
            // The loop has ended if nobody listens: the answer is not needed.
            let _ = answers.send(done);
        });
    }

    fn start_all(&mut self, calls: Vec<ApiCall>) {
        for call in calls {
            self.start(call);
        }
    }

    fn finished(&mut self, call: &ApiCall) {
        self.in_flight.remove(call);
    }
}

/// Runs the console until the operator quits.
pub fn run<A: AdminApi>(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    api: Arc<A>,
    runtime: Handle,
    refresh_every: Duration,
) -> io::Result<()> {
    let (answers, receiver): (Sender<Completed>, Receiver<Completed>) = channel();
    let mut calls = Calls {
        api,
        runtime,
        answers,
        in_flight: HashSet::new(),
    };
    calls.start_all(app.refresh_calls());
    let mut refreshed_at = Instant::now();
    loop {
        app.tick(Instant::now());
        terminal.draw(|frame| ui::render(frame, app))?;

        if event::poll(FRAME)? {
            let action = match event::read()? {
                Event::Key(key) => keys::handle_key(app, key),
                Event::Mouse(mouse) => keys::handle_mouse(app, mouse),
                _ => None,
            };
            match action {
                Some(Action::Quit) => return Ok(()),
                Some(Action::Call(call)) => calls.start(call),
                Some(Action::Refresh) => {
                    calls.start_all(app.refresh_calls());
                    refreshed_at = Instant::now();
                }
                None => {}
            }
        }

        while let Ok(done) = receiver.try_recv() {
            calls.finished(&done.call);
            let next = app.apply(done);
            calls.start_all(next);
        }

        if refreshed_at.elapsed() >= refresh_every {
            calls.start_all(app.refresh_calls());
            refreshed_at = Instant::now();
        }
    }
}
