//! `ferry events ...`: follow the Redis stream, list the catalogue, write its AsyncAPI
//! document.

use super::output::print_line;
use crate::domain::catalogue::Catalogue;
use anyhow::Context;
use clap::Subcommand;
use redis::streams::{StreamReadOptions, StreamReadReply};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum EventsAction {
    /// Follow the event stream, one event a line: time, type, version, subject, data.
    Tail {
        #[arg(
            long,
            env = "FERRY_REDIS_URL",
            default_value = "redis://127.0.0.1:6379"
        )]
        redis_url: String,
        #[arg(long, env = "FERRY_REDIS_STREAM", default_value = crate::config::DEFAULT_REDIS_STREAM)]
        stream: String,
        /// Read as this consumer group (created if missing), acknowledging what is printed.
        #[arg(long, requires = "consumer")]
        group: Option<String>,
        /// The consumer's name within the group.
        #[arg(long, requires = "group")]
        consumer: Option<String>,
        /// Start from the beginning of the stream (without a group: default is new events only).
        #[arg(long)]
        from_start: bool,
        /// Stop after this many events.
        #[arg(long)]
        count: Option<usize>,
    },
    /// List every event type and payload version of the catalogue: `<type> <version>`.
    Catalogue,
    /// Write the AsyncAPI 3 document of the catalogue (stdout, or --output FILE).
    Asyncapi {
        #[arg(long)]
        output: Option<PathBuf>,
    },
}

pub async fn run(action: EventsAction) -> anyhow::Result<()> {
    match action {
        EventsAction::Catalogue => {
            for entry in Catalogue::embedded().entries() {
                print_line(format_args!("{} {}", entry.event_type, entry.version))?;
            }
            Ok(())
        }
        EventsAction::Asyncapi { output } => {
            let document = serde_json::to_string_pretty(&Catalogue::embedded().asyncapi())?;
            match output {
                Some(path) => std::fs::write(&path, document)
                    .with_context(|| format!("cannot write {}", path.display())),
                None => {
                    print_line(document)?;
                    Ok(())
                }
            }
        }
        EventsAction::Tail {
            redis_url,
            stream,
            group,
            consumer,
            from_start,
            count,
        } => tail(&redis_url, &stream, group.zip(consumer), from_start, count).await,
    }
}

async fn tail(
    url: &str,
    stream: &str,
    group: Option<(String, String)>,
    from_start: bool,
    count: Option<usize>,
) -> anyhow::Result<()> {
    let client = redis::Client::open(url).context("invalid Redis URL")?;
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .with_context(|| format!("cannot reach Redis at {url}"))?;
    if let Some((group, _)) = &group {
        let start = if from_start { "0" } else { "$" };
        let created: redis::RedisResult<()> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(stream)
            .arg(group)
            .arg(start)
            .arg("MKSTREAM")
            .query_async(&mut con)
            .await;
        if let Err(error) = created
            && error.code() != Some("BUSYGROUP")
        {
            return Err(error).context("cannot create the consumer group");
        }
    }
    let mut last = if from_start {
        "0".to_owned()
    } else {
        "$".to_owned()
    };
    let mut printed = 0usize;
    loop {
        let mut options = StreamReadOptions::default().block(5000).count(100);
        let position = match &group {
            Some((group, consumer)) => {
                options = options.group(group, consumer);
                ">".to_owned()
            }
            None => last.clone(),
        };
        let command = if group.is_some() {
            "XREADGROUP"
        } else {
            "XREAD"
        };
        let reply: Option<StreamReadReply> = redis::cmd(command)
            .arg(&options)
            .arg("STREAMS")
            .arg(stream)
            .arg(&position)
            .query_async(&mut con)
            .await
            .context("cannot read the stream")?;
        let reply = match reply {
            Some(reply) => reply,
            None => continue,
        };
        for key in reply.keys {
            for entry in key.ids {
                let field = |name: &str| entry.get::<String>(name).unwrap_or_default();
                print_line(format_args!(
                    "{} {} {} {} {}",
                    field("time"),
                    field("type"),
                    field("dataversion"),
                    entry
                        .get::<String>("subject")
                        .unwrap_or_else(|| "-".to_owned()),
                    field("data")
                ))?;
                if let Some((group, _)) = &group {
                    let _: redis::RedisResult<()> = redis::cmd("XACK")
                        .arg(stream)
                        .arg(group)
                        .arg(&entry.id)
                        .query_async(&mut con)
                        .await;
                }
                last = entry.id.clone();
                printed += 1;
                if count.is_some_and(|count| printed >= count) {
                    return Ok(());
                }
            }
        }
    }
}
