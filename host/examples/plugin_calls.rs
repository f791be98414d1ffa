//! Makes N calls of the example plugin's `validate-account`, as the `plugin_hook` benchmark
//! does, and nothing else: for counting the instructions a call costs, which, unlike times,
//! do not depend on what else the machine is doing.
//!
//! ```text
//! cargo build --release -p ferry-host --example plugin_calls
//! valgrind --tool=callgrind target/release/examples/plugin_calls 200
//! valgrind --tool=callgrind target/release/examples/plugin_calls 1200
//! ```
//!
//! The difference of the two totals divided by 1 000 is the cost of one call (loading and
//! compiling the component, the same in both runs, cancels out).

use anyhow::Context;
use ferry_host::domain::ports::Hook;
use ferry_host::plugins::runtime::block_on;
use ferry_host::plugins::{PluginLimits, Runtime, dev};

fn main() -> anyhow::Result<()> {
    let calls: usize = match std::env::args().nth(1) {
        Some(calls) => calls.parse().context("the number of calls")?,
        None => 1000,
    };
    let dir = dev::build_plugins().map_err(anyhow::Error::msg)?;
    let bytes = std::fs::read(dir.join("example_plugin.wasm")).context("the example plugin")?;
    let runtime = Runtime::new(PluginLimits::default(), None)?;
    let loaded = runtime.load(&bytes)?;
    let config = dev::sample_config();
    let inputs = vec![dev::sample_account(); calls];
    let started = std::time::Instant::now();
    let mut answers = Vec::with_capacity(calls);
    for input in inputs {
        answers.push(block_on(runtime.call(
            &loaded,
            Hook::ValidateAccount,
            &config,
            None,
            input,
        ))?);
    }
    let per_call = started.elapsed() / calls.max(1) as u32;
    println!("{calls} calls, {per_call:?} a call");
    std::hint::black_box(answers);
    Ok(())
}
