//! Priors from earlier measurements, wherever they were kept: a ktune study (an SQLite file,
//! or a study in a storage given by URL), a Kernel Tuner cache file (`.json`, `.json.gz`,
//! brute-forced or cut off while being written) or a T4 results file.
//!
//! A [`PriorSource`] says where; [`PriorSource::load`] reads it into a [`Prior`] and the
//! [`PriorFact`] a study records about it (its absolute source and a fingerprint of what it
//! held), whatever the format, so that a resumed study finds the same priors again and can
//! tell when one changed.
//!
//! A file's format is told by its content, not its name: SQLite's header, else gzip's, else
//! JSON with a T4 `results` list, else a Kernel Tuner cache.

use std::path::{Path, PathBuf};

use ktune_core::{Direction, Prior, PriorFact};
use ktune_space::Value;
use ktune_store::{Location, StudyDump, stored_value};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

/// Where a prior is read from.
#[derive(Clone, Debug, PartialEq)]
pub enum PriorSource {
    /// A file: a ktune study (SQLite), a Kernel Tuner cache or a T4 file.
    File {
        /// The file, absolute.
        path: PathBuf,
        /// For a ktune study file holding several studies: which one (`file.db#study`).
        study: Option<String>,
    },
    /// A study in a storage (`postgresql://…#study`, `sqlite:///…#study`).
    Stored {
        /// The storage.
        location: Location,
        /// The study's name (`None`: the storage's only study).
        study: Option<String>,
    },
}

/// A prior could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PriorLoadError {
    /// The file cannot be read.
    #[error("prior `{}`: cannot read it: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is none of the formats a prior can come from.
    #[error(
        "prior `{source_name}` is not a ktune study, a Kernel Tuner cache or a T4 results file: {reason}"
    )]
    Format {
        /// The file.
        source_name: String,
        /// What was wrong with it.
        reason: String,
    },
    /// The study cannot be read from its storage.
    #[error("prior `{source_name}`: {source}")]
    Store {
        /// The study, as named.
        source_name: String,
        /// What the storage said.
        source: Box<ktune_store::StoreError>,
    },
    /// It holds no measurement that can be used.
    #[error("prior `{source_name}` holds no measurements{why}")]
    Empty {
        /// The source.
        source_name: String,
        /// Why, where known.
        why: String,
    },
    /// A prior the study recorded cannot be read now (its file moved or went, its storage
    /// refuses): resuming needs the priors named again.
    #[error(
        "the study was tuned with the prior `{source_name}`, which cannot be read now: name the priors to go on with (--prior, or priors= in Python)"
    )]
    Recorded {
        /// The source, as recorded.
        source_name: String,
        /// Why it cannot be read.
        source: Box<PriorLoadError>,
    },
    /// The prior's fingerprint is not the one the study recorded: the file changed since.
    #[error(
        "prior `{source_name}` changed since the study recorded it (fingerprint {recorded}, now {now}): \
         name the priors to use again (--prior, or priors= in Python) to go on with it as it is now"
    )]
    Changed {
        /// The source.
        source_name: String,
        /// The recorded fingerprint.
        recorded: String,
        /// The fingerprint now.
        now: String,
    },
}

/// A prior as read, with what a study records about it.
#[derive(Clone, Debug)]
pub struct LoadedPrior {
    /// The measurements.
    pub prior: Prior,
    /// Where it came from and its fingerprint.
    pub fact: PriorFact,
}

impl PriorSource {
    /// Reads how a prior was named: a storage URL (`postgresql://…`, `sqlite:///…`) or a file
    /// path relative to `base` (the spec's folder, or the working directory), either with
    /// `#study` to pick one study of several.
    pub fn parse(text: &str, base: &Path) -> Result<PriorSource, PriorLoadError> {
        let (head, study) = match text.rsplit_once('#') {
            Some((head, study)) if !study.is_empty() && !study.contains('/') => {
                (head, Some(study.to_string()))
            }
            _ => (text, None),
        };
        if head.contains("://") {
            let location = Location::parse(head).map_err(|e| PriorLoadError::Store {
                source_name: ktune_store::redact(text),
                source: Box::new(e),
            })?;
            return Ok(match location {
                Location::Sqlite(path) => PriorSource::File {
                    path: absolute(&base.join(path)),
                    study,
                },
                location => PriorSource::Stored { location, study },
            });
        }
        // A file name may itself hold `#`: take the whole text when that is a file.
        let whole = base.join(text);
        if text.contains('=') && text.contains(' ') && !whole.exists() {
            return Err(PriorLoadError::Format {
                source_name: ktune_store::redact(text),
                reason: "this looks like a connection string; name a study in PostgreSQL by URL (postgresql://user@host/database#study)".into(),
            });
        }
        if study.is_some() && whole.exists() {
            return Ok(PriorSource::File {
                path: absolute(&whole),
                study: None,
            });
        }
        Ok(PriorSource::File {
            path: absolute(&base.join(head)),
            study,
        })
    }

    /// How messages and the study's record name it (never with a password).
    pub fn name(&self) -> String {
        let with = |s: String, study: &Option<String>| match study {
            Some(study) => format!("{s}#{study}"),
            None => s,
        };
        match self {
            PriorSource::File { path, study } => with(path.display().to_string(), study),
            PriorSource::Stored { location, study } => with(location.display(), study),
        }
    }

    /// Reads the prior, for a study of the objective `objective` (the metric a Kernel Tuner
    /// cache is read for, where it records it; else its `time`).
    pub fn load(&self, objective: &str) -> Result<LoadedPrior, PriorLoadError> {
        self.load_from(&self.contents()?, objective)
    }

    /// What the source holds, read once: a ktune study, or the text of a cache or T4 file
    /// (decompressed). [`load_from`](Self::load_from) makes the prior of it; `ktune export`
    /// also reads what the source says of itself from it.
    pub fn contents(&self) -> Result<Contents, PriorLoadError> {
        let name = self.name();
        match self {
            PriorSource::Stored { location, study } => location
                .dump_study(study.as_deref())
                .map(Contents::Study)
                .map_err(|e| store_error(&name, e)),
            PriorSource::File { path, study } => read_file(&name, path, study),
        }
    }

    /// The prior of what [`contents`](Self::contents) read.
    pub fn load_from(
        &self,
        contents: &Contents,
        objective: &str,
    ) -> Result<LoadedPrior, PriorLoadError> {
        let name = self.name();
        let prior = match contents {
            Contents::Study(dump) => from_study(&name, dump, objective)?,
            Contents::Text(text) => from_text(&name, text, objective)?,
        };
        if prior.measurements.is_empty() {
            return Err(PriorLoadError::Empty {
                source_name: name,
                why: String::new(),
            });
        }
        let fact = PriorFact {
            source: name,
            fingerprint: fingerprint(&prior),
            measurements: prior.measurements.len(),
        };
        Ok(LoadedPrior { prior, fact })
    }
}

/// What a prior's source holds ([`PriorSource::contents`]).
#[derive(Clone, Debug)]
pub enum Contents {
    /// A ktune study.
    Study(StudyDump),
    /// The JSON text of a Kernel Tuner cache or a T4 file.
    Text(String),
}

/// Loads the priors `texts` name (relative to `base`), for a study of `objective`.
pub fn load_priors(
    texts: &[String],
    base: &Path,
    objective: &str,
) -> Result<Vec<LoadedPrior>, PriorLoadError> {
    texts
        .iter()
        .map(|t| PriorSource::parse(t, base)?.load(objective))
        .collect()
}

/// Loads the priors a study recorded, checking that each still holds what it held then.
pub fn reload_priors(
    facts: &[PriorFact],
    objective: &str,
) -> Result<Vec<LoadedPrior>, PriorLoadError> {
    facts
        .iter()
        .map(|fact| {
            let loaded = PriorSource::parse(&fact.source, Path::new("/"))
                .and_then(|p| p.load(objective))
                .map_err(|e| PriorLoadError::Recorded {
                    source_name: fact.source.clone(),
                    source: Box::new(e),
                })?;
            if loaded.fact.fingerprint != fact.fingerprint {
                return Err(PriorLoadError::Changed {
                    source_name: fact.source.clone(),
                    recorded: fact.fingerprint.clone(),
                    now: loaded.fact.fingerprint,
                });
            }
            Ok(loaded)
        })
        .collect()
}

/// Matches `priors` (the ones `facts` describe, in order) onto the session's space and tells
/// its strategy; returns each one's fact with how much of it mapped.
pub fn tell_priors(
    session: &mut ktune_core::Session<'_>,
    priors: &[Prior],
    facts: &[PriorFact],
) -> Result<Vec<(PriorFact, ktune_core::MatchReport)>, ktune_core::PriorError> {
    let matched = priors
        .iter()
        .map(|p| p.match_onto(session.space(), session.direction()))
        .collect::<Result<Vec<_>, _>>()?;
    session.set_priors(&matched);
    Ok(facts
        .iter()
        .cloned()
        .zip(matched.into_iter().map(|m| m.report))
        .collect())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn store_error(name: &str, e: ktune_store::StoreError) -> PriorLoadError {
    PriorLoadError::Store {
        source_name: name.to_string(),
        source: Box::new(e),
    }
}

/// A digest of the prior's parameters and measurements: the same for the same content in
/// any format, file name or place.
fn fingerprint(prior: &Prior) -> String {
    let mut h = Sha256::new();
    h.update(prior.direction.name().as_bytes());
    for p in &prior.parameters {
        h.update(p.as_bytes());
        h.update([0]);
    }
    // Only where named, so that the fingerprints of priors without permutations stay as
    // they were.
    for (p, items) in &prior.items {
        h.update(p.as_bytes());
        h.update(items.join("\0").as_bytes());
        h.update([1]);
    }
    for m in &prior.measurements {
        for v in &m.values {
            h.update(v.to_json().to_string().as_bytes());
            h.update([0]);
        }
        match m.objective {
            Some(x) => h.update(x.to_le_bytes()),
            None => h.update(b"failed"),
        }
    }
    let digest = h.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

fn read_file(name: &str, path: &Path, study: &Option<String>) -> Result<Contents, PriorLoadError> {
    let bytes = std::fs::read(path).map_err(|source| PriorLoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let format = |reason: String| PriorLoadError::Format {
        source_name: name.to_string(),
        reason,
    };
    if bytes.starts_with(SQLITE_HEADER) {
        return Location::Sqlite(path.to_path_buf())
            .dump_study(study.as_deref())
            .map(Contents::Study)
            .map_err(|e| store_error(name, e));
    }
    if let Some(study) = study {
        return Err(format(format!(
            "`#{study}` picks a study, and this is not a ktune study file"
        )));
    }
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
            .map_err(|e| format(format!("a gzip file that cannot be read ({e})")))?;
        text
    } else {
        String::from_utf8(bytes).map_err(|_| format("binary, not JSON text".into()))?
    };
    Ok(Contents::Text(text))
}

/// A Kernel Tuner cache or T4 file's measurements.
fn from_text(name: &str, text: &str, objective: &str) -> Result<Prior, PriorLoadError> {
    let format = |reason: String| PriorLoadError::Format {
        source_name: name.to_string(),
        reason,
    };
    if let Ok(doc) = serde_json::from_str::<Json>(text)
        && doc.get("results").is_some_and(Json::is_array)
        && doc.get("cache").is_none()
    {
        return from_t4(name, &doc, objective);
    }
    let data = ktune_space::spec::read_cache(text, name).map_err(|e| format(e.to_string()))?;
    // The target's objective where the cache records it, else its time.
    let key = if data.records.iter().any(|r| r.contains_key(objective)) {
        objective
    } else {
        "time"
    };
    let simulation = ktune_runners::Simulation::from_cache(data, name, name, Some(key), None)
        .map_err(|e| match e {
            // A cache whose every configuration failed is a cache: it holds no usable
            // measurement, which is another message.
            ktune_runners::SimulationError::NoValidValue { .. } => PriorLoadError::Empty {
                source_name: name.to_string(),
                why: format!(" that succeeded (every configuration failed; no valid `{key}`)"),
            },
            e => format(e.to_string()),
        })?;
    let mut prior = simulation.prior();
    prior.source = name.to_string();
    Ok(prior)
}

/// A ktune study's evaluations: failures as such, proposals its constraints refused left out.
/// The values are the study's objective, or in a study of several objectives the one named
/// `objective` where it is one of them.
fn from_study(name: &str, dump: &StudyDump, objective: &str) -> Result<Prior, PriorLoadError> {
    let meta = |key: &str| {
        dump.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let objectives: Vec<ktune_core::Metric> = meta(ktune_core::OBJECTIVES_KEY)
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default();
    // The position of `objective` among the stored metric values, when it is not the first.
    let column = objectives
        .iter()
        .position(|m| m.name == objective)
        .filter(|&j| j > 0);
    let direction = match (column, meta(ktune_core::DIRECTION_KEY)) {
        (Some(j), _) => objectives[j].direction,
        (None, Some("maximize")) => Direction::Maximize,
        (None, Some("minimize")) => Direction::Minimize,
        _ => Direction::guess(meta(ktune_core::OBJECTIVE_KEY).unwrap_or("time")),
    };
    let value_of = |e: &ktune_store::EvaluationRow| match column {
        None => e.objective,
        Some(j) => serde_json::from_str::<Vec<Json>>(&e.values_json)
            .ok()
            .and_then(|v| v.get(j).and_then(Json::as_f64)),
    };
    let mut prior: Option<Prior> = None;
    for e in &dump.evaluations {
        if e.status == "invalid" {
            continue;
        }
        let Ok(pairs) = serde_json::from_str::<Vec<(String, Json)>>(&e.params_json) else {
            continue;
        };
        let Some(values) = pairs.iter().map(|(_, v)| stored_value(v)).collect() else {
            continue;
        };
        let p = prior.get_or_insert_with(|| {
            Prior::new(
                name,
                pairs.iter().map(|(n, _)| n.clone()).collect(),
                direction,
            )
        });
        if p.parameters.len() == pairs.len() {
            let ok = e.status == "ok";
            p.push(values, value_of(e).filter(|_| ok));
        }
    }
    // A permutation is stored as positions in the study's item list, which its fingerprint
    // names: without the names a target that declares the items in another order would
    // read another loop order.
    let items = serde_json::from_str::<ktune_store::Fingerprint>(&dump.fingerprint)
        .map(|f| f.items)
        .unwrap_or_default();
    prior
        .map(|p| p.with_items(items))
        .ok_or_else(|| PriorLoadError::Empty {
            source_name: name.to_string(),
            why: format!(" (study `{}` has no evaluations)", dump.name),
        })
}

/// A T4 results file: each result's configuration, and its first objective's measurement
/// (a number; anything else, or an invalidity other than `correct`, a failure). Results the
/// constraints refused are left out.
fn from_t4(name: &str, doc: &Json, objective: &str) -> Result<Prior, PriorLoadError> {
    let results = doc["results"].as_array().expect("checked by the caller");
    let mut prior: Option<Prior> = None;
    for r in results {
        let Some(conf) = r.get("configuration").and_then(Json::as_object) else {
            continue;
        };
        if r.get("invalidity").and_then(Json::as_str) == Some("constraints") {
            continue;
        }
        let Some(values) = conf
            .values()
            .map(stored_value)
            .collect::<Option<Vec<Value>>>()
        else {
            continue;
        };
        let wanted = r
            .get("objectives")
            .and_then(Json::as_array)
            .and_then(|o| o.first())
            .and_then(Json::as_str)
            .unwrap_or(objective)
            .to_string();
        let p = prior.get_or_insert_with(|| {
            Prior::new(
                name,
                conf.keys().cloned().collect(),
                Direction::guess(&wanted),
            )
        });
        if p.parameters.len() != values.len()
            || !conf.keys().zip(&p.parameters).all(|(a, b)| a == b)
        {
            continue;
        }
        let value = r
            .get("measurements")
            .and_then(Json::as_array)
            .and_then(|ms| {
                ms.iter()
                    .find(|m| m.get("name").and_then(Json::as_str) == Some(wanted.as_str()))
            })
            .and_then(|m| m.get("value"))
            .and_then(Json::as_f64)
            .filter(|v| v.is_finite());
        p.push(values, value);
    }
    prior.ok_or_else(|| PriorLoadError::Empty {
        source_name: name.to_string(),
        why: " (its `results` list is empty)".into(),
    })
}

#[cfg(test)]
mod tests;
