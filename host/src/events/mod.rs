//! Events on their way out: the stream encoding of each event, the relay that carries the
//! transactional outbox to the Redis stream, and the retention that takes published events out
//! of the log once they are old. (The catalogue every payload is checked against, and the
//! outbox port the relay reads, belong to the domain: `domain::catalogue`,
//! `domain::storage`.)

pub mod relay;
pub mod retention;
pub mod stream_record;
