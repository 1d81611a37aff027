//! TEMPORARY development shim; replaced by the real constraint language before commit.
#![allow(missing_docs, dead_code, unused_variables)]
use std::sync::Arc;
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Real(f64),
    Bool(bool),
    Str(u32),
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprType {
    Int,
    Real,
    Bool,
    Str,
    Permutation,
}
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub ty: ExprType,
}
#[derive(Clone, Debug, Default)]
pub struct Interner {
    map: rustc_hash::FxHashMap<String, u32>,
    strings: Vec<String>,
}
impl Interner {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.map.insert(s.to_string(), i);
        i
    }
    pub fn get(&self, s: &str) -> Option<u32> {
        self.map.get(s).copied()
    }
    pub fn resolve(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }
}
#[derive(Clone)]
pub struct Constraint {
    source: String,
    params: Vec<usize>,
    f: Arc<dyn Fn(&[Scalar]) -> bool + Send + Sync>,
}
impl std::fmt::Debug for Constraint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.source)
    }
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("division by zero")]
    DivisionByZero,
    #[error("overflow")]
    Overflow,
}
impl Constraint {
    pub fn compile(
        source: &str,
        symbols: &[Symbol],
        interner: &mut Interner,
    ) -> Result<Constraint, ExprError> {
        Err(ExprError {
            kind: ExprErrorKind::Unsupported,
            span: 0..source.len(),
            message: "shim".into(),
            help: None,
        })
    }
    pub fn from_fn(
        description: &str,
        mut params: Vec<usize>,
        f: impl Fn(&[Scalar]) -> bool + Send + Sync + 'static,
    ) -> Constraint {
        params.sort();
        params.dedup();
        Constraint {
            source: description.into(),
            params,
            f: Arc::new(f),
        }
    }
    pub fn source(&self) -> &str {
        &self.source
    }
    pub fn params(&self) -> &[usize] {
        &self.params
    }
    pub fn evaluate(&self, values: &[Scalar]) -> Result<bool, EvalError> {
        Ok((self.f)(values))
    }
    pub fn is_satisfied(&self, values: &[Scalar]) -> bool {
        (self.f)(values)
    }
}
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Int(i64),
    Real(f64),
    Bool(bool),
    Str(String),
}
pub fn eval_list(source: &str) -> Result<Vec<Literal>, ExprError> {
    Err(ExprError {
        kind: ExprErrorKind::Unsupported,
        span: 0..source.len(),
        message: "shim".into(),
        help: None,
    })
}
pub fn eval_const(source: &str) -> Result<Literal, ExprError> {
    Err(ExprError {
        kind: ExprErrorKind::Unsupported,
        span: 0..source.len(),
        message: "shim".into(),
        help: None,
    })
}
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    pub kind: ExprErrorKind,
    pub span: std::ops::Range<usize>,
    pub message: String,
    pub help: Option<String>,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExprErrorKind {
    Lex,
    Parse,
    UnknownName,
    Type,
    Unsupported,
    Eval,
}
impl ExprError {
    pub fn render(&self, source: &str) -> String {
        format!("{}\n  {}\n", self.message, source)
    }
}
