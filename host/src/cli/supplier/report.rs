//! `ferry supplier report CODE [--accounts] [--format json|csv] [--output FILE]`: a supplier's
//! campaign report (JSON), or with `--accounts` every account's row of it, as one JSON array
//! (read page after page) or as the server's CSV, to stdout or to FILE.
//!
//! Rows are written as they arrive, never gathered first, so a supplier of a million accounts
//! takes no more memory than one of ten. A FILE is written under a name of its own beside it
//! and renamed to FILE once whole: a download that fails part-way leaves no FILE that looks
//! complete.

use crate::cli::admin_client::{AdminClient, failed};
use anyhow::Context;
use clap::{Args, ValueEnum};
use ferry_admin_api::AccountReportQuery;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Rows asked for per page when every row is read as JSON (the server's largest page).
const ROWS_PER_PAGE: u32 = 1000;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The supplier's code.
    pub code: String,
    /// Every account's row (external and platform numbers, state, reconciliation, declared,
    /// held, difference, error) instead of the summary.
    #[arg(long)]
    pub accounts: bool,
    /// json (the summary, or with --accounts one array of every row) or csv (--accounts only:
    /// every row after a header row).
    #[arg(long, value_enum, default_value_t = ReportFormat::Json)]
    pub format: ReportFormat,
    /// With --accounts: only the accounts in this import state (PENDING, IN_PROGRESS,
    /// PROCESSED, ERRORED, CANCELLED).
    #[arg(long, requires = "accounts")]
    pub state: Option<String>,
    /// With --accounts: only the migrated accounts of this reconciliation (RECONCILED,
    /// MISMATCH, NOT_DECLARED).
    #[arg(long, requires = "accounts")]
    pub reconciliation: Option<String>,
    /// With --accounts: only the ERRORED accounts whose failure has this code.
    #[arg(long, requires = "accounts")]
    pub error_code: Option<String>,
    /// Write to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Json,
    Csv,
}

/// Runs `ferry supplier report`.
pub async fn report(client: &AdminClient, args: ReportArgs) -> anyhow::Result<()> {
    if !args.accounts && args.format == ReportFormat::Csv {
        anyhow::bail!("the report is JSON; --format csv is for its rows (--accounts)");
    }
    let mut out = Output::open(args.output.as_deref())?;
    if args.accounts {
        rows(client, &args, &mut out).await?;
    } else {
        let report = client
            .campaign_report(&args.code)
            .await
            .map_err(|error| failed(client, error))?;
        serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::other)?;
        writeln!(out)?;
    }
    out.finish()
}

/// Writes every row the filters of `args` select to `out`, in `args.format`.
async fn rows(client: &AdminClient, args: &ReportArgs, out: &mut Output) -> anyhow::Result<()> {
    let code = args.code.as_str();
    let mut query = AccountReportQuery {
        state: args.state.clone(),
        reconciliation: args.reconciliation.clone(),
        error_code: args.error_code.clone(),
        after: None,
        limit: 0,
    };
    if args.format == ReportFormat::Csv {
        let mut answer = client
            .report_accounts_csv(code, &query)
            .await
            .map_err(|error| failed(client, error))?;
        while let Some(chunk) = answer
            .chunk()
            .await
            .map_err(|error| failed(client, error))?
        {
            out.write_all(&chunk)?;
        }
        return Ok(());
    }
    // One array, a row a line, page after page.
    query.limit = ROWS_PER_PAGE;
    out.write_all(b"[")?;
    let mut first = true;
    loop {
        let page = client
            .report_accounts(code, &query)
            .await
            .map_err(|error| failed(client, error))?;
        for row in &page.accounts {
            out.write_all(if first { b"\n" } else { b",\n" })?;
            serde_json::to_writer(&mut *out, row).map_err(io::Error::other)?;
            first = false;
        }
        match page.next_after {
            Some(after) => query.after = Some(after),
            None => break,
        }
    }
    out.write_all(b"\n]\n")?;
    Ok(())
}

/// Where the command writes: stdout, or a file written under its partial name
/// ([`partial_path`]) and renamed once [`Output::finish`]ed; dropped unfinished, the partial
/// file is removed.
enum Output {
    Stdout(BufWriter<io::Stdout>),
    File {
        path: PathBuf,
        partial: PathBuf,
        out: Option<BufWriter<File>>,
    },
}

impl Output {
    fn open(path: Option<&Path>) -> anyhow::Result<Output> {
        let Some(path) = path else {
            return Ok(Output::Stdout(BufWriter::new(io::stdout())));
        };
        let partial = partial_path(path);
        let file = File::create(&partial)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        Ok(Output::File {
            path: path.to_owned(),
            partial,
            out: Some(BufWriter::new(file)),
        })
    }

    /// Everything written is flushed; a file is on disk under its own name.
    fn finish(mut self) -> anyhow::Result<()> {
        match &mut self {
            Output::Stdout(out) => Ok(out.flush()?),
            Output::File { path, partial, out } => {
                if let Some(out) = out.take() {
                    out.into_inner()
                        .map_err(io::IntoInnerError::into_error)?
                        .sync_all()?;
                }
                std::fs::rename(&*partial, &*path)
                    .with_context(|| format!("cannot write {}", path.display()))
            }
        }
    }

    fn writer(&mut self) -> io::Result<&mut dyn Write> {
        match self {
            Output::Stdout(out) => Ok(out),
            Output::File { out: Some(out), .. } => Ok(out),
            Output::File { out: None, .. } => Err(io::Error::other("the file is closed")),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buffer)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Output::File { partial, .. } = self
            && partial.exists()
        {
            let _ = std::fs::remove_file(&*partial);
        }
    }
}

/// Where `path` is written until it is whole: beside it, `.NAME.partial`.
fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".to_owned());
    path.with_file_name(format!(".{name}.partial"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_written_beside_itself_and_left_out_when_unfinished() {
        assert_eq!(
            partial_path(Path::new("out/old_co.csv")),
            Path::new("out/.old_co.csv.partial")
        );
        let dir = std::env::temp_dir().join(format!("ferry-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("report.json");
        let mut out = Output::open(Some(&path)).expect("open");
        out.write_all(b"{\"half\":").expect("write");
        drop(out);
        assert!(!path.exists() && !partial_path(&path).exists());
        let mut out = Output::open(Some(&path)).expect("open");
        out.write_all(b"{}\n").expect("write");
        assert!(!path.exists());
        out.finish().expect("finished");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "{}\n");
        assert!(!partial_path(&path).exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
