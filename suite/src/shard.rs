//! `--shard`: a deterministic 1/N of a suite's cases, so that batch engines
//! can spread one suite over N machines. os2trace schedules nothing itself;
//! it only picks its part.
//!
//! The cases of all suites on the command line, sorted by full name, are
//! dealt round-robin: case k (from 0) goes to shard `k mod N` (shards are
//! numbered 1..=N on the command line). The parts are disjoint, cover the
//! suite, and differ in size by at most one.
//!
//! Spellings:
//! - `--shard I/N`: shard I of N, 1-based (a GitHub Actions matrix passes
//!   `${{ matrix.shard }}/4`);
//! - `--shard auto`: from the environment: GitLab's `CI_NODE_INDEX`
//!   (1-based) and `CI_NODE_TOTAL`, or Slurm's `SLURM_ARRAY_TASK_ID`,
//!   `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_COUNT`;
//! - `--shard auto/N`: the index from Kubernetes' `JOB_COMPLETION_INDEX`
//!   (0-based; an Indexed Job does not tell its pods the completion count,
//!   so N is given), or from the variables above.

/// One shard: `index` in `0..count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// The shard, from 0.
    pub index: usize,
    /// How many shards there are.
    pub count: usize,
}

/// Why a shard spec could not be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    /// Not `I/N`, `auto` or `auto/N`.
    #[error("--shard wants I/N (1 <= I <= N), auto or auto/N, got {0:?}")]
    Syntax(String),
    /// `auto` found no batch engine's variables.
    #[error(
        "--shard {0}: no shard in the environment (CI_NODE_INDEX/CI_NODE_TOTAL, SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX with auto/N)"
    )]
    NoEnvironment(String),
    /// A variable is not a number, or the index is out of range.
    #[error("--shard {spec}: {message}")]
    Value {
        /// The spec as given.
        spec: String,
        /// What is wrong.
        message: String,
    },
}

impl Shard {
    /// Parses a spec, reading the environment through `env` for `auto`.
    ///
    /// # Errors
    /// [`ShardError`] for a malformed spec or environment.
    pub fn parse(spec: &str, env: impl Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(spec.to_string());
        let value = |message: String| ShardError::Value {
            spec: spec.to_string(),
            message,
        };
        let number = |name: &str, text: &str| {
            text.trim()
                .parse::<usize>()
                .map_err(|_| value(format!("{name}={text:?} is not a number")))
        };
        let (index, count) = match spec.split_once('/') {
            Some(("auto", n)) => {
                let count = n.parse::<usize>().map_err(|_| syntax())?;
                if let Some(i) = env("JOB_COMPLETION_INDEX") {
                    (number("JOB_COMPLETION_INDEX", &i)?, count)
                } else {
                    let (i, total) = from_engines(spec, &env, &number)?;
                    if total != count {
                        return Err(value(format!(
                            "the environment says {total} shards, the command line {count}"
                        )));
                    }
                    (i, count)
                }
            }
            Some((i, n)) => {
                let i = i.parse::<usize>().map_err(|_| syntax())?;
                let n = n.parse::<usize>().map_err(|_| syntax())?;
                if i == 0 {
                    return Err(syntax());
                }
                (i - 1, n)
            }
            None if spec == "auto" => from_engines(spec, &env, &number)?,
            None => return Err(syntax()),
        };
        if count == 0 || index >= count {
            return Err(value(format!(
                "shard {} of {count} does not exist",
                index + 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// Whether the case at `position` (in full-name order) is this shard's.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index
    }
}

/// (index from 0, count) from GitLab's or Slurm's variables.
fn from_engines(
    spec: &str,
    env: &impl Fn(&str) -> Option<String>,
    number: &impl Fn(&str, &str) -> Result<usize, ShardError>,
) -> Result<(usize, usize), ShardError> {
    if let (Some(i), Some(n)) = (env("CI_NODE_INDEX"), env("CI_NODE_TOTAL")) {
        let i = number("CI_NODE_INDEX", &i)?;
        let n = number("CI_NODE_TOTAL", &n)?;
        return Ok((i.checked_sub(1).unwrap_or(usize::MAX), n));
    }
    if let (Some(i), Some(n)) = (env("SLURM_ARRAY_TASK_ID"), env("SLURM_ARRAY_TASK_COUNT")) {
        let i = number("SLURM_ARRAY_TASK_ID", &i)?;
        let n = number("SLURM_ARRAY_TASK_COUNT", &n)?;
        let min = match env("SLURM_ARRAY_TASK_MIN") {
            Some(m) => number("SLURM_ARRAY_TASK_MIN", &m)?,
            None => 0,
        };
        return Ok((i.checked_sub(min).unwrap_or(usize::MAX), n));
    }
    Err(ShardError::NoEnvironment(spec.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn spellings() {
        let none = env(&[]);
        assert_eq!(Shard::parse("2/3", &none), Ok(Shard { index: 1, count: 3 }));
        assert!(matches!(
            Shard::parse("0/3", &none),
            Err(ShardError::Syntax(_))
        ));
        assert!(matches!(
            Shard::parse("4/3", &none),
            Err(ShardError::Value { .. })
        ));
        assert!(matches!(
            Shard::parse("x", &none),
            Err(ShardError::Syntax(_))
        ));
        assert!(matches!(
            Shard::parse("auto", &none),
            Err(ShardError::NoEnvironment(_))
        ));
        let gitlab = env(&[("CI_NODE_INDEX", "3"), ("CI_NODE_TOTAL", "5")]);
        assert_eq!(
            Shard::parse("auto", &gitlab),
            Ok(Shard { index: 2, count: 5 })
        );
        assert!(Shard::parse("auto/4", &gitlab).is_err());
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "11"),
            ("SLURM_ARRAY_TASK_MIN", "10"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            Shard::parse("auto", &slurm),
            Ok(Shard { index: 1, count: 4 })
        );
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0")]);
        assert_eq!(
            Shard::parse("auto/2", &k8s),
            Ok(Shard { index: 0, count: 2 })
        );
        assert!(Shard::parse("auto/2", env(&[("JOB_COMPLETION_INDEX", "2")])).is_err());
    }

    #[test]
    fn shards_are_disjoint_and_cover_every_case() {
        for count in 1..=7 {
            let mut owners = vec![0; 50];
            for index in 0..count {
                let shard = Shard { index, count };
                for (k, owner) in owners.iter_mut().enumerate() {
                    if shard.takes(k) {
                        *owner += 1;
                    }
                }
            }
            assert!(owners.iter().all(|&o| o == 1), "{count}: {owners:?}");
        }
    }
}
