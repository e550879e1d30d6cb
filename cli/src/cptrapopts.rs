//! The CPTRAP options of `os2trace run`: VM/SP's trace table recording
//! facility for the length of one program run (see `kernel_sim::systable`).
//!
//! * `--cptrap FILE`: record into FILE (written when the run ends, also
//!   after Ctrl-C or a limit; nothing is written if the run cannot start);
//! * `--cptrap-select "TYPE 02 3E CODE 1 2 PROCESS 1 TIME a b"`: what is
//!   recorded, in TRAPRED's selection language (default: everything);
//! * `--cptrap-buffer N`: blocks of the transfer buffer (default 16);
//! * `--cptrap-rate N`: 4 KB blocks the spool takes per emulated second
//!   (default 1000); records that come faster are lost, counted and marked;
//! * `--cptrap-zap MODULE:OBJ:OFFSET,CODE,REG+DISP,LEN`: a CP interface
//!   zap (repeatable): at that place, LEN bytes at REG+DISP go to the file
//!   as an X'3F' record with CODE, and the original instruction runs.

use std::path::PathBuf;

use anyhow::{Context, Result};
use kernel_sim::Process;
use kernel_sim::systable::{CptrapConfig, Zap};

/// The CPTRAP options given to `run`.
#[derive(clap::Args, Debug, Default)]
pub struct CptrapOptions {
    /// CPTRAP: record the trace table and interface records into FILE.
    #[arg(long, value_name = "FILE")]
    cptrap: Option<PathBuf>,
    /// What CPTRAP records (TRAPRED's selection: TYPE, CODE, PROCess, TIME).
    #[arg(long, value_name = "SELECTION", requires = "cptrap")]
    cptrap_select: Option<String>,
    /// Blocks of CPTRAP's transfer buffer.
    #[arg(long, value_name = "N", requires = "cptrap", default_value_t = cptrap::recorder::DEFAULT_TRANSFER_BLOCKS)]
    cptrap_buffer: usize,
    /// 4 KB blocks the spool takes per emulated second.
    #[arg(long, value_name = "N", requires = "cptrap", default_value_t = 1000)]
    cptrap_rate: u64,
    /// A CP interface zap: MODULE:OBJ:OFFSET,CODE,REG+DISP,LEN (repeatable).
    #[arg(long, value_name = "ZAP", requires = "cptrap", value_parser = Zap::parse)]
    cptrap_zap: Vec<Zap>,
}

impl CptrapOptions {
    /// Starts CPTRAP in a loaded process, if asked for.
    ///
    /// # Errors
    /// A bad selection or a zap that cannot be placed.
    pub fn start(&self, p: &mut Process) -> Result<()> {
        if self.cptrap.is_none() {
            return Ok(());
        }
        let words: Vec<&str> = self
            .cptrap_select
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let selection = cptrap::Selection::parse(&words).context("--cptrap-select")?;
        let mut cfg = CptrapConfig::new(selection);
        cfg.transfer_blocks = self.cptrap_buffer;
        cfg.blocks_per_second = self.cptrap_rate;
        cfg.zaps = self.cptrap_zap.clone();
        p.cptrap_start(&cfg).map_err(anyhow::Error::msg)
    }

    /// Writes the CPTRAP file after the run and says what was lost.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn finish(&self, p: &mut Process) -> Result<()> {
        let Some(path) = &self.cptrap else {
            return Ok(());
        };
        let Some(result) = p.cptrap_finish() else {
            return Ok(());
        };
        outfile::write_atomic(path, &result.file)
            .with_context(|| format!("writing {}", path.display()))?;
        let s = result.stats;
        eprintln!(
            "cptrap: {} records in {} blocks to {}{}{}",
            s.records,
            result.file.len() / cptrap::file::BLOCK_SIZE,
            path.display(),
            if s.lost_records > 0 {
                format!(
                    "; {} records ({} bytes) lost, {} data-lost marks",
                    s.lost_records, s.lost_bytes, s.loss_marks
                )
            } else {
                String::new()
            },
            if result.truncated_blocks > 0 {
                format!(
                    "; {} blocks past the file size cap dropped",
                    result.truncated_blocks
                )
            } else {
                String::new()
            }
        );
        Ok(())
    }
}
