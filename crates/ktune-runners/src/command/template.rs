//! Command templates: a spec's command split into words of literal text and placeholders
//! (`{param}`, `{build_dir}`, `{config_id}`; `{{` and `}}` for braces), and how the objective
//! is read from a program's output.

use std::path::Path;

use super::{CommandError, CommandTemplate, ObjectiveSpec};

/// One word of a command template, split into literal text and placeholders.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Piece {
    Text(String),
    Param(usize),
    BuildDir,
    ConfigId,
}

pub(crate) type Word = Vec<Piece>;

/// How an objective is read from a run: its wall time, the last match of a regular
/// expression's `value` group, or a key of the last JSON object line that has it.
pub(super) enum Parser {
    WallTime,
    Regex(regex::Regex),
    JsonKey(String),
}

impl Parser {
    /// How `spec` reads its objective.
    pub(super) fn of(spec: &ObjectiveSpec) -> Result<Parser, CommandError> {
        Ok(match (&spec.regex, &spec.json_key) {
            (Some(_), Some(_)) => {
                return Err(CommandError::Invalid {
                    option: "objective",
                    message: format!(
                        "`{}`: give either `regex` or `json_key`, not both",
                        spec.name
                    ),
                });
            }
            (Some(r), None) => {
                let re = regex::Regex::new(r).map_err(|e| CommandError::Regex(e.to_string()))?;
                if !re.capture_names().any(|n| n == Some("value")) {
                    return Err(CommandError::Regex(format!(
                        "`{r}` has no named group `value`: write e.g. `time: (?P<value>[0-9.]+)`"
                    )));
                }
                Parser::Regex(re)
            }
            (None, Some(k)) => Parser::JsonKey(k.clone()),
            (None, None) => Parser::WallTime,
        })
    }

    /// The value in a run's `stdout` (the last match), or its `wall` time.
    pub(super) fn read(&self, stdout: &str, wall: f64) -> Option<f64> {
        let v = match self {
            Parser::WallTime => Some(wall),
            Parser::Regex(re) => re
                .captures_iter(stdout)
                .last()
                .and_then(|c| c.name("value"))
                .and_then(|m| m.as_str().trim().parse().ok()),
            Parser::JsonKey(k) => stdout
                .lines()
                .rev()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
                .find_map(|j| j.get(k).and_then(serde_json::Value::as_f64)),
        };
        v.filter(|x| x.is_finite())
    }
}

/// The placeholders the runner fills in itself, which no parameter may be named.
pub(super) const RESERVED: [&str; 2] = ["build_dir", "config_id"];

pub(super) fn parse_template(
    t: &CommandTemplate,
    shell: bool,
    step: &'static str,
    names: &[String],
) -> Result<Vec<Word>, CommandError> {
    let words: Vec<String> = match t {
        CommandTemplate::Argv(v) => v.clone(),
        CommandTemplate::Line(s) if shell => vec!["sh".into(), "-c".into(), s.clone()],
        CommandTemplate::Line(s) => shlex::split(s).ok_or_else(|| CommandError::Template {
            step,
            message: format!("unbalanced quotes in `{s}`"),
        })?,
    };
    if words.is_empty() || words[0].is_empty() {
        return Err(CommandError::Template {
            step,
            message: "the command is empty".into(),
        });
    }
    words.iter().map(|w| parse_word(w, step, names)).collect()
}

pub(crate) fn parse_word(
    w: &str,
    step: &'static str,
    names: &[String],
) -> Result<Word, CommandError> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = w.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(match name.as_str() {
                    "build_dir" => Piece::BuildDir,
                    "config_id" => Piece::ConfigId,
                    n => Piece::Param(names.iter().position(|p| p == n).ok_or_else(|| {
                        CommandError::UnknownPlaceholder {
                            name: n.to_string(),
                            step,
                            known: names.join(", "),
                        }
                    })?),
                });
            }
            '}' => {
                return Err(CommandError::Template {
                    step,
                    message: format!("unmatched `}}` in `{w}` (write `}}}}` for a literal brace)"),
                });
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// Whether `program` can be executed: a path that exists, or a name found on PATH.
pub(super) fn program_exists(program: &str, workdir: &Path) -> bool {
    if program.contains('/') {
        let p = Path::new(program);
        return if p.is_absolute() {
            p.exists()
        } else {
            workdir.join(p).exists()
        };
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}
