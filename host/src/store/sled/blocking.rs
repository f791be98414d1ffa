//! Running the sled store's synchronous work from async code (the commit of a large unit of
//! work) without stalling the runtime. Encoding a 1000-item change for the journal takes
//! milliseconds; a Tokio worker busy with it holds up every task queued on it (other
//! requests, the event relay, whose Redis calls would time out under load).

/// Runs `work` (a store call that may block) on the current thread after handing the
/// worker's queued tasks to another thread (`block_in_place`). On a current-thread runtime
/// (unit tests) or outside any runtime it simply runs `work`.
pub fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::blocking;

    #[test]
    fn runs_outside_a_runtime() {
        assert_eq!(blocking(|| 1 + 1), 2);
    }

    #[tokio::test]
    async fn runs_on_a_current_thread_runtime() {
        assert_eq!(blocking(|| 2 + 2), 4);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_on_a_multi_thread_runtime() {
        assert_eq!(blocking(|| 3 + 3), 6);
    }
}
