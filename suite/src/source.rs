//! Where a case's files come from: host files beside the suite, and the
//! built-in sample modules of `testprogs` (`testprogs:GLOB`: what
//! `testprogs build` writes, plus TNF16/TNF32, CPTRAP32 and
//! SYSTRC16/SYSTRC32), built once per run and shared by every case.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The prefix that names the built-in sample files.
pub const TESTPROGS: &str = "testprogs:";

/// Why a source could not be found or copied.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A glob pattern is malformed.
    #[error("bad glob {pattern:?}: {message}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// glob's message.
        message: String,
    },
    /// A pattern matched no file.
    #[error("{0:?} matches no file")]
    NoMatch(String),
    /// The sample modules could not be built.
    #[error("building the testprogs sample modules: {0}")]
    Testprogs(String),
    /// A host file could not be read or the sandbox written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
}

/// Files by name, with their bytes.
type NamedFiles = Vec<(String, Vec<u8>)>;

/// The source sets of a run.
#[derive(Debug, Default)]
pub struct Sources {
    testprogs: OnceLock<Result<NamedFiles, String>>,
}

impl Sources {
    /// Sources with the sample modules not built yet.
    pub fn new() -> Sources {
        Sources::default()
    }

    /// Every file `testprogs build` writes, by name (built on first use).
    fn testprogs(&self) -> Result<&[(String, Vec<u8>)], SourceError> {
        self.testprogs
            .get_or_init(|| {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                testprogs::build_all(dir.path()).map_err(|e| e.to_string())?;
                // And the programs `testprogs build` leaves out (they are
                // not in the demo's set): the TNF, CPTRAP and DosSysTrace
                // samples.
                let extra = [
                    testprogs::tnf16(),
                    testprogs::tnf32(),
                    testprogs::cptrap32(),
                    testprogs::systrc16(),
                    testprogs::systrc32(),
                ];
                for program in extra {
                    let program = program.map_err(|e| e.to_string())?;
                    program.write_to(dir.path()).map_err(|e| e.to_string())?;
                }
                let mut files = Vec::new();
                let entries = std::fs::read_dir(dir.path()).map_err(|e| e.to_string())?;
                for entry in entries {
                    let entry = entry.map_err(|e| e.to_string())?;
                    let name = entry.file_name().to_string_lossy().into_owned();
                    let bytes = std::fs::read(entry.path()).map_err(|e| e.to_string())?;
                    files.push((name, bytes));
                }
                files.sort();
                Ok(files)
            })
            .as_deref()
            .map_err(|e| SourceError::Testprogs(e.clone()))
    }

    /// The file names a pattern matches, sorted (for templates).
    ///
    /// # Errors
    /// A malformed pattern.
    pub fn glob_names(&self, dir: &Path, pattern: &str) -> Result<Vec<String>, SourceError> {
        Ok(self
            .resolve(dir, pattern)?
            .into_iter()
            .map(|f| f.name)
            .collect())
    }

    /// Copies every file the patterns match into `sandbox`.
    ///
    /// # Errors
    /// A pattern that matches nothing, or a file that cannot be copied.
    pub fn materialize(
        &self,
        dir: &Path,
        patterns: &[String],
        sandbox: &Path,
    ) -> Result<(), SourceError> {
        for pattern in patterns {
            let files = self.resolve(dir, pattern)?;
            if files.is_empty() {
                return Err(SourceError::NoMatch(pattern.clone()));
            }
            for file in files {
                let bytes = match file.origin {
                    Origin::Bytes(b) => b,
                    Origin::Host(path) => std::fs::read(&path).map_err(|e| SourceError::Io {
                        path: path.display().to_string(),
                        message: e.to_string(),
                    })?,
                };
                let target = sandbox.join(&file.name);
                std::fs::write(&target, bytes).map_err(|e| SourceError::Io {
                    path: file.name.clone(),
                    message: e.to_string(),
                })?;
            }
        }
        Ok(())
    }

    fn resolve(&self, dir: &Path, pattern: &str) -> Result<Vec<SourceFile>, SourceError> {
        let bad = |e: glob::PatternError| SourceError::Pattern {
            pattern: pattern.to_string(),
            message: e.to_string(),
        };
        if let Some(glob) = pattern.strip_prefix(TESTPROGS) {
            let matcher = glob::Pattern::new(glob).map_err(bad)?;
            return Ok(self
                .testprogs()?
                .iter()
                .filter(|(name, _)| matcher.matches(name))
                .map(|(name, bytes)| SourceFile {
                    name: name.clone(),
                    origin: Origin::Bytes(bytes.clone()),
                })
                .collect());
        }
        let full = dir.join(pattern);
        let mut files: Vec<SourceFile> = glob::glob(&full.to_string_lossy())
            .map_err(bad)?
            .filter_map(Result::ok)
            .filter(|p| p.is_file())
            .filter_map(|path| {
                let name = path.file_name()?.to_string_lossy().into_owned();
                Some(SourceFile {
                    name,
                    origin: Origin::Host(path),
                })
            })
            .collect();
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(files)
    }
}

struct SourceFile {
    name: String,
    origin: Origin,
}

enum Origin {
    Bytes(Vec<u8>),
    Host(PathBuf),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testprogs_and_host_globs_resolve_to_sorted_names() {
        let sources = Sources::new();
        let names = sources
            .glob_names(Path::new("."), "testprogs:LOOP32.*")
            .unwrap();
        assert_eq!(
            names,
            ["LOOP32.EXE", "LOOP32.MAP", "LOOP32.RPN", "LOOP32.TSF"]
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.tsf"), "x").unwrap();
        std::fs::write(dir.path().join("a.tsf"), "y").unwrap();
        assert_eq!(
            sources.glob_names(dir.path(), "*.tsf").unwrap(),
            ["a.tsf", "b.tsf"]
        );
        let sandbox = tempfile::tempdir().unwrap();
        let err = sources
            .materialize(dir.path(), &["*.none".to_string()], sandbox.path())
            .unwrap_err();
        assert!(err.to_string().contains("matches no file"));
        sources
            .materialize(
                dir.path(),
                &["*.tsf".into(), "testprogs:HELLO16.EXE".into()],
                sandbox.path(),
            )
            .unwrap();
        assert_eq!(std::fs::read(sandbox.path().join("a.tsf")).unwrap(), b"y");
        assert!(sandbox.path().join("HELLO16.EXE").is_file());
    }
}
