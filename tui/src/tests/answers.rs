//! How [`App::apply`] takes in answers and [`App::tick`] moves time on: the host's status, and
//! when a message goes (once the host answers again, or after its lifetime). Time comes only
//! from the instants passed to `tick`, so nothing here sleeps.

use super::fixtures;
use crate::api::{ClientError, SupplierStatus};
use crate::app::{App, ERROR_LIFETIME, HostStatus, INFO_LIFETIME, MessageKind};
use crate::calls::{ApiCall, ApiReply, Completed};
use std::time::Duration;

fn pause(code: &str) -> ApiCall {
    ApiCall::SetStatus {
        code: code.to_owned(),
        status: SupplierStatus::Paused,
    }
}

fn unreachable(call: ApiCall) -> Completed {
    Completed {
        call,
        result: Err(ClientError::Unreachable("connection refused".to_owned())),
    }
}

fn suppliers_answer() -> Completed {
    Completed {
        call: ApiCall::Suppliers,
        result: Ok(ApiReply::Suppliers(fixtures::suppliers())),
    }
}

fn refused(call: ApiCall, status: u16, code: &str) -> Completed {
    Completed {
        call,
        result: Err(ClientError::Refused {
            status,
            code: code.to_owned(),
            detail: "Refused.".to_owned(),
            errors: Vec::new(),
        }),
    }
}

fn message_kind(app: &App) -> Option<MessageKind> {
    app.message.as_ref().map(|message| message.kind)
}

/// A console that has loaded the suppliers, then tried to pause OLD_CO while the host was down.
fn paused_while_the_host_was_down() -> App {
    let mut app = App::new("http://127.0.0.1:8080", 3);
    app.apply(suppliers_answer());
    app.apply(unreachable(pause("OLD_CO")));
    app
}

#[test]
fn a_request_without_answer_says_so_and_marks_the_host_unreachable() {
    let app = paused_while_the_host_was_down();
    assert_eq!(
        app.host,
        HostStatus::Unreachable("connection refused".to_owned())
    );
    let message = app.message.as_ref().expect("a message");
    assert_eq!(message.kind, MessageKind::HostUnreachable);
    assert!(message.is_error());
    assert!(
        message.text.starts_with(
            "Could not set OLD_CO to PAUSED: no answer from the host (connection refused)"
        ),
        "{message:?}"
    );
}

#[test]
fn the_unreachable_message_stays_while_the_host_is_away() {
    let mut app = paused_while_the_host_was_down();
    app.apply(unreachable(ApiCall::Suppliers));
    let much_later = app.now + Duration::from_secs(3600);
    app.tick(much_later);
    assert_eq!(message_kind(&app), Some(MessageKind::HostUnreachable));
}

#[test]
fn the_unreachable_message_goes_once_an_answer_shows_the_host_is_back() {
    let mut app = paused_while_the_host_was_down();
    app.apply(suppliers_answer());
    assert_eq!(app.host, HostStatus::Connected);
    assert_eq!(app.message, None);
}

#[test]
fn an_error_answer_also_shows_the_host_is_back() {
    let mut app = paused_while_the_host_was_down();
    let plugin = ApiCall::Plugin {
        code: "BRIGHT".to_owned(),
    };
    app.apply(refused(plugin, 404, "plugin_not_found"));
    assert_eq!(app.host, HostStatus::Connected);
    assert_eq!(app.message, None);

    let mut app = paused_while_the_host_was_down();
    app.apply(refused(ApiCall::Suppliers, 401, "unauthorized"));
    assert!(matches!(app.host, HostStatus::Unauthorized(_)));
    assert_eq!(app.message, None);
}

#[test]
fn other_errors_stay_when_the_host_answers_and_age_out() {
    let mut app = App::new("http://127.0.0.1:8080", 3);
    app.apply(suppliers_answer());
    app.apply(refused(pause("OLD_CO"), 409, "supplier_complete"));
    assert_eq!(message_kind(&app), Some(MessageKind::Error));
    let shown_at = app.now;

    app.apply(suppliers_answer());
    app.tick(shown_at + ERROR_LIFETIME - Duration::from_secs(1));
    assert_eq!(message_kind(&app), Some(MessageKind::Error));
    app.tick(shown_at + ERROR_LIFETIME);
    assert_eq!(app.message, None);
}

#[test]
fn information_ages_out_sooner_than_errors() {
    let mut app = App::new("http://127.0.0.1:8080", 3);
    app.apply(suppliers_answer());
    let mut paused = fixtures::suppliers().remove(0);
    paused.status = SupplierStatus::Paused;
    app.apply(Completed {
        call: pause("OLD_CO"),
        result: Ok(ApiReply::Supplier(paused)),
    });
    assert_eq!(message_kind(&app), Some(MessageKind::Info));
    let shown_at = app.now;

    app.tick(shown_at + INFO_LIFETIME - Duration::from_secs(1));
    assert_eq!(message_kind(&app), Some(MessageKind::Info));
    app.tick(shown_at + INFO_LIFETIME);
    assert_eq!(app.message, None);
}

#[test]
fn a_message_ages_from_when_it_was_shown_not_from_the_start() {
    let mut app = App::new("http://127.0.0.1:8080", 3);
    let start = app.now;
    app.tick(start + Duration::from_secs(60));
    app.say_info("OLD_CO is now PAUSED.");
    app.tick(start + Duration::from_secs(61));
    assert_eq!(message_kind(&app), Some(MessageKind::Info));
}
