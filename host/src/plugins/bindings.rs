//! Host bindings generated from `wit/` (world `plugin`): the WIT records as Rust types and
//! the `host` interface that plugins import.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
});
