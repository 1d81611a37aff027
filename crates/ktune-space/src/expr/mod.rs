//! The constraint language: a Python-like expression language for Kernel Tuner
//! restrictions and the `Conditions` of T1 problem files, plus an evaluator for constant
//! Python list expressions (T1 `Values`).
//!
//! A constraint is compiled once with [`Constraint::compile`] against the parameters it may
//! mention ([`Symbol`]s) and then evaluated many times on full assignments
//! (`&[Scalar]`, indexed by parameter index). Compilation lexes, parses, resolves names,
//! type-checks and turns the tree into type-specialised closures with constant
//! sub-expressions folded, so evaluation does no allocation, no string handling and no
//! hashing.
//!
//! Semantics follow Python 3 (true division, floor division and modulo towards -inf, exact
//! int/float comparison, chained comparisons, `bool` as int, banker's rounding), with
//! 64-bit integers: a result outside `i64` is [`EvalError::Overflow`].
//!
//! All [`ExprError`] spans are byte offsets into the source string that was compiled or
//! evaluated; [`ExprError::render`] draws them.
#![deny(missing_docs)]

mod ast;
mod bind;
pub(crate) mod bounds;
mod compile;
mod error;
mod interp;
mod lexer;
mod list;
mod ops;
mod parser;

#[cfg(test)]
pub(crate) mod fuzz;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;

pub use bind::bind_names;
pub use error::{EvalError, ExprError, ExprErrorKind};
pub use list::{eval_const, eval_list};

/// Run-time value of a parameter or sub-expression. Strings are interned ids
/// (see [`Interner`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A 64-bit integer.
    Int(i64),
    /// A float.
    Real(f64),
    /// A boolean.
    Bool(bool),
    /// An interned string id.
    Str(u32),
}

impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::Int(v)
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Real(v)
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}

/// Static type of a parameter as seen by the checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprType {
    /// Integer parameter; its values are [`Scalar::Int`] (a [`Scalar::Bool`] is accepted as 0/1).
    Int,
    /// Float parameter; its values are [`Scalar::Real`] (a [`Scalar::Int`] is accepted and converted).
    Real,
    /// Boolean parameter; its values are [`Scalar::Bool`].
    Bool,
    /// Categorical string parameter; its values are [`Scalar::Str`] ids from the same [`Interner`].
    Str,
    /// Permutation parameter: constraints use `p.index('item')` (an item's position) and
    /// `p[k]` (the item at a position); its values are [`Scalar::Int`]s packing the item at
    /// each position `k` into bits `4k..4k + 4`.
    Permutation,
}

/// One parameter visible to a constraint; its index in the slice is its parameter index.
#[derive(Clone, Debug)]
pub struct Symbol {
    /// The name constraints use.
    pub name: String,
    /// Its type.
    pub ty: ExprType,
    /// A permutation's items, in their declared order (empty otherwise).
    pub items: Vec<String>,
}

impl Symbol {
    /// A symbol named `name` of type `ty`.
    pub fn new(name: impl Into<String>, ty: ExprType) -> Self {
        Symbol {
            name: name.into(),
            ty,
            items: Vec::new(),
        }
    }

    /// A permutation parameter of `items`.
    pub fn permutation(name: impl Into<String>, items: Vec<String>) -> Self {
        Symbol {
            name: name.into(),
            ty: ExprType::Permutation,
            items,
        }
    }

    /// The run-time value of an ordering (`order[k]` is the item at position `k`), as
    /// constraints read it.
    pub fn pack_permutation(order: &[u32]) -> Scalar {
        Scalar::Int(
            order
                .iter()
                .enumerate()
                .fold(0i64, |acc, (k, &item)| acc | (i64::from(item) << (4 * k))),
        )
    }
}

/// String interner shared by a search space (categorical values and string literals).
///
/// Ids are dense, starting at 0, in order of first interning.
#[derive(Clone, Debug, Default)]
pub struct Interner {
    map: FxHashMap<Box<str>, u32>,
    strings: Vec<Box<str>>,
}

impl Interner {
    /// An empty interner.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `s`, adding it if it is new.
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        // More than u32::MAX distinct strings cannot fit in memory alongside a search space;
        // saturate rather than wrap.
        let id = u32::try_from(self.strings.len()).unwrap_or(u32::MAX);
        self.strings.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    /// The id of `s` if it was interned.
    pub fn get(&self, s: &str) -> Option<u32> {
        self.map.get(s).copied()
    }

    /// The string with id `id`; the empty string for an id this interner never returned.
    pub fn resolve(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", |s| s)
    }

    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether no string was interned.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

type EvalFn = Arc<dyn Fn(&[Scalar]) -> Result<bool, EvalError> + Send + Sync>;

/// A compiled constraint: cheap to clone (shared closures), `Send + Sync`.
#[derive(Clone)]
pub struct Constraint {
    source: Arc<str>,
    params: Arc<[usize]>,
    eval: EvalFn,
    /// What interval arithmetic can say about it on partial assignments.
    bounds: Option<Arc<bounds::Cond>>,
}

impl fmt::Debug for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Constraint")
            .field("source", &&*self.source)
            .field("params", &&*self.params)
            .finish()
    }
}

impl Constraint {
    /// Lex, parse, resolve every name against `symbols`, type-check and compile `source`.
    ///
    /// String literals are interned into `interner`; categorical parameter values must be
    /// interned into the same interner by the caller (a literal that is not among a
    /// parameter's values simply never compares equal). Error spans are byte offsets into
    /// `source`.
    pub fn compile(
        source: &str,
        symbols: &[Symbol],
        interner: &mut Interner,
    ) -> Result<Constraint, ExprError> {
        let tree = parser::parse(source)?;
        let mut compiler = compile::Compiler::new(symbols, interner);
        let value = compiler.expr(&tree)?;
        if let compile::Compiled::Str(_) = value {
            return Err(ExprError::new(
                ExprErrorKind::Type,
                tree.span,
                "a constraint must be a condition, but this evaluates to a string",
            )
            .with_help("compare it with `==`, e.g. `x == 'value'`"));
        }
        let eval = value.truthy(&tree.span)?.into_fn();
        let mut params = compiler.used;
        params.sort_unstable();
        params.dedup();
        Ok(Constraint {
            source: source.into(),
            params: params.into(),
            eval,
            bounds: bounds::Cond::of(&tree, symbols).map(Arc::new),
        })
    }

    /// A constraint given as a Rust closure. `description` is what [`source`](Self::source)
    /// returns; `params` are the parameter indices the closure reads (sorted and deduplicated
    /// here).
    pub fn from_fn(
        description: &str,
        params: Vec<usize>,
        f: impl Fn(&[Scalar]) -> bool + Send + Sync + 'static,
    ) -> Constraint {
        let mut params = params;
        params.sort_unstable();
        params.dedup();
        Constraint {
            source: description.into(),
            params: params.into(),
            eval: Arc::new(move |v| Ok(f(v))),
            bounds: None,
        }
    }

    /// Its interval bounds, when it has a numeric core (see `bounds`).
    pub(crate) fn bounds(&self) -> Option<&bounds::Cond> {
        self.bounds.as_deref()
    }

    /// The source text (or the description given to [`from_fn`](Self::from_fn)).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Sorted, deduplicated indices of the parameters it mentions (empty for a constant).
    pub fn params(&self) -> &[usize] {
        &self.params
    }

    /// Evaluates on a full assignment, `values[param_index]` (only the entries in
    /// [`params`](Self::params) are read). A numeric result is converted with Python
    /// truthiness.
    #[inline]
    pub fn evaluate(&self, values: &[Scalar]) -> Result<bool, EvalError> {
        (self.eval)(values)
    }

    /// [`evaluate`](Self::evaluate) where an evaluation error (division/modulo by zero,
    /// overflow, ...) means false: the configuration is infeasible.
    #[inline]
    pub fn is_satisfied(&self, values: &[Scalar]) -> bool {
        (self.eval)(values).unwrap_or(false)
    }
}

type ValueFn = Arc<dyn Fn(&[Scalar]) -> Result<Scalar, EvalError> + Send + Sync>;

/// A compiled expression of parameters that yields a value rather than a condition: a grid
/// divisor (`block_size_x * tile_size_x`), a shared-memory size, a FLOP count. Same language
/// and semantics as [`Constraint`].
///
/// ```
/// use ktune_space::expr::{Expression, Interner, Scalar, Symbol, ExprType};
/// let symbols = [Symbol::new("bx", ExprType::Int), Symbol::new("tx", ExprType::Int)];
/// let e = Expression::compile("bx * tx", &symbols, &mut Interner::new()).unwrap();
/// assert_eq!(e.evaluate(&[Scalar::Int(32), Scalar::Int(4)]), Ok(Scalar::Int(128)));
/// assert_eq!(e.params(), &[0, 1]);
/// ```
#[derive(Clone)]
pub struct Expression {
    source: Arc<str>,
    params: Arc<[usize]>,
    eval: ValueFn,
}

impl fmt::Debug for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Expression")
            .field("source", &&*self.source)
            .field("params", &&*self.params)
            .finish()
    }
}

impl Expression {
    /// Lex, parse, resolve every name against `symbols`, type-check and compile `source`
    /// (error spans are byte offsets into `source`).
    pub fn compile(
        source: &str,
        symbols: &[Symbol],
        interner: &mut Interner,
    ) -> Result<Expression, ExprError> {
        let tree = parser::parse(source)?;
        let mut compiler = compile::Compiler::new(symbols, interner);
        let eval = compiler.expr(&tree)?.into_scalar_fn();
        let mut params = compiler.used;
        params.sort_unstable();
        params.dedup();
        Ok(Expression {
            source: source.into(),
            params: params.into(),
            eval,
        })
    }

    /// The source text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Sorted, deduplicated indices of the parameters it mentions.
    pub fn params(&self) -> &[usize] {
        &self.params
    }

    /// Evaluates on a full assignment, `values[param_index]`.
    pub fn evaluate(&self, values: &[Scalar]) -> Result<Scalar, EvalError> {
        (self.eval)(values)
    }
}

/// A constant value produced by [`eval_list`] / [`eval_const`].
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// An integer.
    Int(i64),
    /// A float.
    Real(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
}
