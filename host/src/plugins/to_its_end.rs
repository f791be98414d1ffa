//! A hook call that runs in the task of the request that made it, and to its end even if that
//! request is dropped.
//!
//! A call holds one of its supplier's slots until it ends, deadline at most
//! ([`super::registry`]): a plugin that loops cannot escape the bulkhead by having its callers
//! give up. The call used to be a Tokio task of its own for that, which the request awaited:
//! a task to make, schedule and join for every call, and the wake-up of the request's task
//! when the call's ended (often of a parked worker, through a system call). A few per cent of
//! a note's CPU (BENCHMARKS.md).
//!
//! [`ToItsEnd`] polls the call where the request is polled. Only if the request is dropped
//! before the call has ended does what is left of it become a task of its own, which runs it
//! to its end and drops its answer. A call that panics (a bug of the host's, not a trap of the
//! plugin's) fails its request, as a task's panic did, rather than unwinding through it.

use futures_util::future::BoxFuture;
use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A call polled by its caller, handed to a task of its own if the caller lets it go early.
pub(super) struct ToItsEnd<T: Send + 'static> {
    /// `None` once it has ended.
    call: Option<BoxFuture<'static, T>>,
}

impl<T: Send + 'static> ToItsEnd<T> {
    pub(super) fn new(call: impl Future<Output = T> + Send + 'static) -> Self {
        Self {
            call: Some(Box::pin(call)),
        }
    }
}

impl<T: Send + 'static> Future for ToItsEnd<T> {
    /// The call's answer, or what its panic said.
    type Output = Result<T, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(call) = self.call.as_mut() else {
            // A future is not polled again once it has answered.
            return Poll::Pending;
        };
        let answer = match catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(answer)) => Ok(answer),
            Err(panic) => Err(format!("the call panicked: {}", panic_message(&*panic))),
        };
        self.call = None;
        Poll::Ready(answer)
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message")
}

impl<T: Send + 'static> Drop for ToItsEnd<T> {
    fn drop(&mut self) {
        let Some(call) = self.call.take() else {
            return;
        };
        // Outside a runtime (the runtime itself shutting down) there is nothing to run it on,
        // and nothing left to hold a slot against.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                call.await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ToItsEnd;
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Waker};
    use std::time::Duration;
    use tokio::sync::oneshot;

    #[tokio::test]
    async fn a_call_answers_its_caller_in_the_callers_task() {
        let polls = Arc::new(AtomicUsize::new(0));
        let counted = polls.clone();
        let answer = ToItsEnd::new(async move {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::task::yield_now().await;
            counted.fetch_add(1, Ordering::SeqCst);
            42
        })
        .await;
        assert_eq!(answer, Ok(42));
        assert_eq!(polls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_call_that_panics_fails_with_its_message() {
        let answer: Result<(), String> = ToItsEnd::new(async {
            tokio::task::yield_now().await;
            panic!("a bug");
        })
        .await;
        assert_eq!(answer, Err("the call panicked: a bug".to_owned()));
    }

    #[tokio::test]
    async fn a_call_its_caller_drops_runs_to_its_end() {
        let (release, released) = oneshot::channel::<()>();
        let (ended, end) = oneshot::channel();
        {
            let mut call = pin!(ToItsEnd::new(async move {
                let _ = released.await;
                let _ = ended.send("ended");
            }));
            let mut context = Context::from_waker(Waker::noop());
            assert!(call.as_mut().poll(&mut context).is_pending(), "started");
        }
        // The caller is gone; the call waits for its release, then ends.
        release
            .send(())
            .expect("the call is still there to be released");
        let ended = tokio::time::timeout(Duration::from_secs(10), end)
            .await
            .expect("the call ran to its end")
            .expect("the call ended, not dropped");
        assert_eq!(ended, "ended");
    }

    #[tokio::test]
    async fn a_call_that_has_ended_is_not_run_again_when_dropped() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let mut call = Box::pin(ToItsEnd::new(async move {
            counted.fetch_add(1, Ordering::SeqCst);
        }));
        let mut context = Context::from_waker(Waker::noop());
        assert_eq!(call.as_mut().poll(&mut context), Poll::Ready(Ok(())));
        drop(call);
        tokio::task::yield_now().await;
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_call_dropped_outside_a_runtime_is_dropped_with_it() {
        let (ended, end) = oneshot::channel::<()>();
        let call = ToItsEnd::new(async move {
            let _ = ended.send(());
        });
        drop(call);
        assert!(end.blocking_recv().is_err(), "never run, so never ended");
    }
}
