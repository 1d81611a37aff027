//! Type checking and compilation of a constraint's syntax tree into closures.
//!
//! Checking and compiling happen in one pass: every sub-expression is compiled to a
//! [`Compiled`] value whose variant is its static type (bool, int, float, a number whose
//! int/float type is only known at run time, or an interned string) and whose payload is a
//! [`Src`]: a constant (constant folding), a parameter read, or a closure returning the
//! unboxed value. Operators are generic over the [`Src`] shapes of their operands, so e.g.
//! `tile % 2` becomes one closure that reads `tile` and computes the modulo with no further
//! indirection.
//!
//! Why one file of over 800 lines: type checking and code generation are one pass over one
//! enum of compiled values; every operator's rules (its types, its folding of constants, its
//! closure) sit together, one `match` arm each, and would be split by the same enum anyway.

use std::cmp::Ordering;
use std::sync::Arc;

use super::ast::{BinOp, BoolOp, CmpOp, Expr, ExprKind, Span, UnaryOp};
use super::error::{EvalError, ExprError, ExprErrorKind, suggest};
use super::ops::{self, Num};
use super::{ExprType, Interner, Scalar, Symbol};

/// A compiled closure returning an unboxed value.
pub(crate) type DynFn<T> = Arc<dyn Fn(&[Scalar]) -> Result<T, EvalError> + Send + Sync>;

/// Unboxed value types a closure can return, and how to read them from a parameter slot.
pub(crate) trait Val: Copy + Send + Sync + 'static {
    /// Reads parameter `i` as this type.
    fn read(values: &[Scalar], i: usize) -> Result<Self, EvalError>;
}

impl Val for i64 {
    #[inline(always)]
    fn read(values: &[Scalar], i: usize) -> Result<i64, EvalError> {
        match values.get(i) {
            Some(Scalar::Int(x)) => Ok(*x),
            Some(Scalar::Bool(b)) => Ok(i64::from(*b)),
            Some(_) => Err(EvalError::TypeMismatch),
            None => Err(EvalError::MissingValue),
        }
    }
}

impl Val for f64 {
    #[inline(always)]
    fn read(values: &[Scalar], i: usize) -> Result<f64, EvalError> {
        match values.get(i) {
            Some(Scalar::Real(x)) => Ok(*x),
            Some(Scalar::Int(x)) => Ok(*x as f64),
            Some(Scalar::Bool(b)) => Ok(f64::from(u8::from(*b))),
            Some(_) => Err(EvalError::TypeMismatch),
            None => Err(EvalError::MissingValue),
        }
    }
}

impl Val for bool {
    #[inline(always)]
    fn read(values: &[Scalar], i: usize) -> Result<bool, EvalError> {
        match values.get(i) {
            Some(Scalar::Bool(b)) => Ok(*b),
            Some(_) => Err(EvalError::TypeMismatch),
            None => Err(EvalError::MissingValue),
        }
    }
}

impl Val for u32 {
    #[inline(always)]
    fn read(values: &[Scalar], i: usize) -> Result<u32, EvalError> {
        match values.get(i) {
            Some(Scalar::Str(s)) => Ok(*s),
            Some(_) => Err(EvalError::TypeMismatch),
            None => Err(EvalError::MissingValue),
        }
    }
}

impl Val for Num {
    #[inline(always)]
    fn read(values: &[Scalar], i: usize) -> Result<Num, EvalError> {
        match values.get(i) {
            Some(Scalar::Int(x)) => Ok(Num::Int(*x)),
            Some(Scalar::Bool(b)) => Ok(Num::Int(i64::from(*b))),
            Some(Scalar::Real(x)) => Ok(Num::Real(*x)),
            Some(_) => Err(EvalError::TypeMismatch),
            None => Err(EvalError::MissingValue),
        }
    }
}

/// Where a value comes from.
pub(crate) enum Src<T> {
    /// A constant (literal or folded sub-expression).
    Const(T),
    /// A parameter, read with [`Val::read`].
    Param(usize),
    /// A computed value.
    Dyn(DynFn<T>),
}

impl<T: Val> Src<T> {
    #[inline(always)]
    fn get(&self, v: &[Scalar]) -> Result<T, EvalError> {
        match self {
            Src::Const(c) => Ok(*c),
            Src::Param(i) => T::read(v, *i),
            Src::Dyn(f) => f(v),
        }
    }

    fn as_const(&self) -> Option<T> {
        match self {
            Src::Const(c) => Some(*c),
            _ => None,
        }
    }

    /// A closure computing the value.
    pub(crate) fn into_fn(self) -> DynFn<T> {
        match self {
            Src::Const(c) => Arc::new(move |_| Ok(c)),
            Src::Param(i) => Arc::new(move |v| T::read(v, i)),
            Src::Dyn(f) => f,
        }
    }
}

/// Folds a constant result; a constant error stays an error raised at evaluation time.
fn fold<R: Val>(r: Result<R, EvalError>) -> Src<R> {
    match r {
        Ok(x) => Src::Const(x),
        Err(e) => Src::Dyn(Arc::new(move |_| Err(e))),
    }
}

fn map1<A, R, F>(a: Src<A>, f: F) -> Src<R>
where
    A: Val,
    R: Val,
    F: Fn(A) -> Result<R, EvalError> + Send + Sync + 'static,
{
    match a {
        Src::Const(x) => fold(f(x)),
        Src::Param(i) => Src::Dyn(Arc::new(move |v| f(A::read(v, i)?))),
        Src::Dyn(g) => Src::Dyn(Arc::new(move |v| f(g(v)?))),
    }
}

/// Applies a binary function; operands are evaluated left to right.
fn map2<A, B, R, F>(a: Src<A>, b: Src<B>, f: F) -> Src<R>
where
    A: Val,
    B: Val,
    R: Val,
    F: Fn(A, B) -> Result<R, EvalError> + Send + Sync + 'static,
{
    use Src::{Const, Dyn, Param};
    match (a, b) {
        (Const(x), Const(y)) => fold(f(x, y)),
        (Const(x), Param(j)) => Dyn(Arc::new(move |v| f(x, B::read(v, j)?))),
        (Const(x), Dyn(h)) => Dyn(Arc::new(move |v| f(x, h(v)?))),
        (Param(i), Const(y)) => Dyn(Arc::new(move |v| f(A::read(v, i)?, y))),
        (Param(i), Param(j)) => Dyn(Arc::new(move |v| f(A::read(v, i)?, B::read(v, j)?))),
        (Param(i), Dyn(h)) => Dyn(Arc::new(move |v| f(A::read(v, i)?, h(v)?))),
        (Dyn(g), Const(y)) => Dyn(Arc::new(move |v| f(g(v)?, y))),
        (Dyn(g), Param(j)) => Dyn(Arc::new(move |v| f(g(v)?, B::read(v, j)?))),
        (Dyn(g), Dyn(h)) => Dyn(Arc::new(move |v| f(g(v)?, h(v)?))),
    }
}

/// A compiled sub-expression, tagged with its static type.
pub(crate) enum Compiled {
    Bool(Src<bool>),
    Int(Src<i64>),
    Real(Src<f64>),
    /// A number that is an int or a float depending on run-time values
    /// (`x ** y` on ints, `a if c else 1.5`, `max(i, 2.5)`).
    Num(Src<Num>),
    /// An interned string.
    Str(Src<u32>),
}

/// A compiled numeric sub-expression (bools already widened to int).
enum NumC {
    Int(Src<i64>),
    Real(Src<f64>),
    Num(Src<Num>),
}

fn bool_to_int(s: Src<bool>) -> Src<i64> {
    match s {
        // `i64::read` widens a bool slot.
        Src::Param(i) => Src::Param(i),
        s => map1(s, |b| Ok(i64::from(b))),
    }
}

impl NumC {
    fn into_real(self) -> Src<f64> {
        match self {
            // `f64::read` converts an int slot.
            NumC::Int(Src::Param(i)) => Src::Param(i),
            NumC::Int(s) => map1(s, |x| Ok(x as f64)),
            NumC::Real(s) => s,
            NumC::Num(s) => map1(s, |x| Ok(x.to_f64())),
        }
    }

    fn into_num(self) -> Src<Num> {
        match self {
            NumC::Int(Src::Param(i)) => Src::Param(i),
            NumC::Int(s) => map1(s, |x| Ok(Num::Int(x))),
            NumC::Real(s) => map1(s, |x| Ok(Num::Real(x))),
            NumC::Num(s) => s,
        }
    }

    fn into_compiled(self) -> Compiled {
        match self {
            NumC::Int(s) => Compiled::Int(s),
            NumC::Real(s) => Compiled::Real(s),
            NumC::Num(s) => Compiled::Num(s),
        }
    }
}

impl Compiled {
    fn is_str(&self) -> bool {
        matches!(self, Compiled::Str(_))
    }

    /// The numeric view, or `err()` for a string.
    fn numeric(self, err: impl FnOnce() -> ExprError) -> Result<NumC, ExprError> {
        Ok(match self {
            Compiled::Bool(s) => NumC::Int(bool_to_int(s)),
            Compiled::Int(s) => NumC::Int(s),
            Compiled::Real(s) => NumC::Real(s),
            Compiled::Num(s) => NumC::Num(s),
            Compiled::Str(_) => return Err(err()),
        })
    }

    fn string(self) -> Option<Src<u32>> {
        match self {
            Compiled::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python truthiness (a type error for strings).
    pub(crate) fn truthy(self, span: &Span) -> Result<Src<bool>, ExprError> {
        Ok(match self {
            Compiled::Bool(s) => s,
            Compiled::Int(s) => map1(s, |x| Ok(x != 0)),
            Compiled::Real(s) => map1(s, |x| Ok(x != 0.0)),
            Compiled::Num(s) => map1(s, |x| Ok(ops::num_truthy(x))),
            Compiled::Str(_) => {
                return Err(
                    type_err(span.clone(), "a string cannot be used as a condition")
                        .with_help("compare it with `==` or `!=`"),
                );
            }
        })
    }

    /// A closure returning the value as a [`Scalar`].
    pub(crate) fn into_scalar_fn(self) -> DynFn<Scalar> {
        match self {
            Compiled::Bool(s) => {
                let f = s.into_fn();
                Arc::new(move |v| f(v).map(Scalar::Bool))
            }
            Compiled::Int(s) => {
                let f = s.into_fn();
                Arc::new(move |v| f(v).map(Scalar::Int))
            }
            Compiled::Real(s) => {
                let f = s.into_fn();
                Arc::new(move |v| f(v).map(Scalar::Real))
            }
            Compiled::Num(s) => {
                let f = s.into_fn();
                Arc::new(move |v| {
                    f(v).map(|n| match n {
                        Num::Int(i) => Scalar::Int(i),
                        Num::Real(r) => Scalar::Real(r),
                    })
                })
            }
            Compiled::Str(s) => {
                let f = s.into_fn();
                Arc::new(move |v| f(v).map(Scalar::Str))
            }
        }
    }
}

fn type_err(span: Span, msg: impl Into<String>) -> ExprError {
    ExprError::new(ExprErrorKind::Type, span, msg)
}

fn unsupported(span: Span, msg: impl Into<String>) -> ExprError {
    ExprError::new(ExprErrorKind::Unsupported, span, msg)
}

fn str_num_compare(span: Span) -> ExprError {
    type_err(span, "cannot compare a string with a number")
}

fn and(l: Src<bool>, r: Src<bool>) -> Src<bool> {
    match (l, r) {
        (Src::Const(false), _) => Src::Const(false),
        (Src::Const(true), r) => r,
        (l, r) => Src::Dyn(Arc::new(move |v| Ok(l.get(v)? && r.get(v)?))),
    }
}

fn or(l: Src<bool>, r: Src<bool>) -> Src<bool> {
    match (l, r) {
        (Src::Const(true), _) => Src::Const(true),
        (Src::Const(false), r) => r,
        (l, r) => Src::Dyn(Arc::new(move |v| Ok(l.get(v)? || r.get(v)?))),
    }
}

fn select<T: Val>(c: Src<bool>, a: Src<T>, b: Src<T>) -> Src<T> {
    Src::Dyn(Arc::new(
        move |v| if c.get(v)? { a.get(v) } else { b.get(v) },
    ))
}

/// One comparison `a op b` under the ordering `cmp`.
fn compare2<T, C>(op: CmpOp, a: Src<T>, b: Src<T>, cmp: C) -> Src<bool>
where
    T: Val,
    C: Fn(T, T) -> Option<Ordering> + Copy + Send + Sync + 'static,
{
    use Ordering::{Equal, Greater, Less};
    match op {
        CmpOp::Lt => map2(a, b, move |x, y| Ok(cmp(x, y) == Some(Less))),
        CmpOp::Le => map2(a, b, move |x, y| {
            Ok(matches!(cmp(x, y), Some(Less | Equal)))
        }),
        CmpOp::Gt => map2(a, b, move |x, y| Ok(cmp(x, y) == Some(Greater))),
        CmpOp::Ge => map2(a, b, move |x, y| {
            Ok(matches!(cmp(x, y), Some(Greater | Equal)))
        }),
        CmpOp::Eq | CmpOp::In => map2(a, b, move |x, y| Ok(cmp(x, y) == Some(Equal))),
        CmpOp::Ne | CmpOp::NotIn => map2(a, b, move |x, y| Ok(cmp(x, y) != Some(Equal))),
    }
}

/// A comparison chain `items[0] ops[0] items[1] ops[1] ...`: each middle operand is
/// evaluated once, evaluation stops at the first false link.
fn chain<T, C>(items: Vec<Src<T>>, ops: Vec<CmpOp>, cmp: C) -> Src<bool>
where
    T: Val,
    C: Fn(T, T) -> Option<Ordering> + Copy + Send + Sync + 'static,
{
    let mut it = items.into_iter();
    let Some(first) = it.next() else {
        return Src::Const(true);
    };
    let mut rest: Vec<(CmpOp, Src<T>)> = ops.into_iter().zip(it).collect();
    if rest.len() == 1
        && let Some((op, second)) = rest.pop()
    {
        return compare2(op, first, second, cmp);
    }
    let rest: Box<[(CmpOp, Src<T>)]> = rest.into();
    if let Some(mut l) = first.as_const()
        && rest.iter().all(|(_, s)| s.as_const().is_some())
    {
        for (op, s) in rest.iter() {
            let Some(r) = s.as_const() else { break };
            if !op.test(cmp(l, r)) {
                return Src::Const(false);
            }
            l = r;
        }
        return Src::Const(true);
    }
    Src::Dyn(Arc::new(move |v| {
        let mut l = first.get(v)?;
        for (op, s) in rest.iter() {
            let r = s.get(v)?;
            if !op.test(cmp(l, r)) {
                return Ok(false);
            }
            l = r;
        }
        Ok(true)
    }))
}

/// `x in elems` under the equality `eq`; all elements are evaluated (as Python builds the
/// list before testing membership).
fn member<T, E>(x: Src<T>, elems: Vec<Src<T>>, eq: E) -> Src<bool>
where
    T: Val,
    E: Fn(T, T) -> bool + Copy + Send + Sync + 'static,
{
    let consts: Option<Box<[T]>> = elems.iter().map(Src::as_const).collect();
    if let Some(consts) = consts {
        return map1(x, move |xv| Ok(consts.iter().any(|&c| eq(xv, c))));
    }
    let elems: Box<[Src<T>]> = elems.into();
    Src::Dyn(Arc::new(move |v| {
        let xv = x.get(v)?;
        let mut found = false;
        for e in elems.iter() {
            found |= eq(xv, e.get(v)?);
        }
        Ok(found)
    }))
}

fn int_cmp(a: i64, b: i64) -> Option<Ordering> {
    Some(a.cmp(&b))
}

fn real_cmp(a: f64, b: f64) -> Option<Ordering> {
    a.partial_cmp(&b)
}

fn int_arith(op: BinOp, a: Src<i64>, b: Src<i64>) -> Compiled {
    match op {
        BinOp::Add => Compiled::Int(map2(a, b, ops::int_add)),
        BinOp::Sub => Compiled::Int(map2(a, b, ops::int_sub)),
        BinOp::Mul => Compiled::Int(map2(a, b, ops::int_mul)),
        BinOp::FloorDiv => Compiled::Int(map2(a, b, ops::int_floordiv)),
        BinOp::Mod => Compiled::Int(map2(a, b, ops::int_mod)),
        BinOp::Div => Compiled::Real(map2(a, b, ops::int_truediv)),
        BinOp::Pow => match b.as_const() {
            Some(k) if k >= 0 => Compiled::Int(map2(a, b, ops::int_pow_nonneg)),
            Some(_) => Compiled::Real(map2(a, b, |x, y| ops::real_pow(x as f64, y as f64))),
            None => Compiled::Num(map2(a, b, ops::int_pow)),
        },
    }
}

fn real_arith(op: BinOp, a: Src<f64>, b: Src<f64>) -> Compiled {
    Compiled::Real(match op {
        BinOp::Add => map2(a, b, |x, y| Ok(x + y)),
        BinOp::Sub => map2(a, b, |x, y| Ok(x - y)),
        BinOp::Mul => map2(a, b, |x, y| Ok(x * y)),
        BinOp::Div => map2(a, b, ops::real_div),
        BinOp::FloorDiv => map2(a, b, ops::real_floordiv),
        BinOp::Mod => map2(a, b, ops::real_mod),
        BinOp::Pow => map2(a, b, ops::real_pow),
    })
}

fn num_arith(op: BinOp, a: Src<Num>, b: Src<Num>) -> Compiled {
    if op == BinOp::Div {
        return Compiled::Real(map2(a, b, |x, y| {
            ops::num_arith(BinOp::Div, x, y).map(Num::to_f64)
        }));
    }
    Compiled::Num(map2(a, b, move |x, y| ops::num_arith(op, x, y)))
}

const FUNCTIONS_HELP: &str = "supported functions: min, max, abs, int, float, round";

/// The single-pass type checker and compiler.
pub(crate) struct Compiler<'a> {
    symbols: &'a [Symbol],
    interner: &'a mut Interner,
    /// Parameter indices mentioned so far (unsorted, with repeats).
    pub used: Vec<usize>,
}

impl<'a> Compiler<'a> {
    pub(crate) fn new(symbols: &'a [Symbol], interner: &'a mut Interner) -> Self {
        Compiler {
            symbols,
            interner,
            used: Vec::new(),
        }
    }

    /// Type-checks and compiles `e`.
    ///
    /// Each node kind is handled by its own (non-inlined) method, which keeps this
    /// recursive function's stack frame small.
    pub(crate) fn expr(&mut self, e: &Expr) -> Result<Compiled, ExprError> {
        let span = &e.span;
        match &e.kind {
            ExprKind::Int(v) => Ok(Compiled::Int(Src::Const(*v))),
            ExprKind::Real(v) => Ok(Compiled::Real(Src::Const(*v))),
            ExprKind::Bool(v) => Ok(Compiled::Bool(Src::Const(*v))),
            ExprKind::Str(s) => Ok(Compiled::Str(Src::Const(self.interner.intern(s)))),
            ExprKind::Name(n) => self.name(n, span),
            ExprKind::Unary(op, a) => self.unary(*op, a, span),
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r),
            ExprKind::BoolOp(op, l, r) => self.bool_op(*op, l, r, &e.span),
            ExprKind::Compare(first, rest) => self.compare(first, rest, span),
            ExprKind::IfElse(body, cond, orelse) => self.if_else(body, cond, orelse, span),
            ExprKind::Call(name, name_span, args) => self.call(name, name_span, args, span),
            ExprKind::List(_) | ExprKind::Tuple(_) => Err(unsupported(
                span.clone(),
                "a list can only appear on the right of `in`/`not in` or as the argument of `min`/`max`",
            )),
            ExprKind::ListComp(..) => Err(unsupported(
                span.clone(),
                "list comprehensions are not supported in constraints",
            )),
            ExprKind::Subscript(target, index) => self.subscript(target, index),
            ExprKind::Method(target, method, method_span, args) => {
                self.method(target, method, method_span, args, span)
            }
        }
    }

    /// The permutation parameter that `target` names: its index and items. A permutation's
    /// run-time value packs the item at each position `k` into bits `4k..4k + 4` (at most
    /// ten items).
    fn permutation(
        &mut self,
        target: &Expr,
        what: &str,
    ) -> Result<(usize, Vec<String>), ExprError> {
        let not_one = || {
            unsupported(
                target.span.clone(),
                format!("{what} is only supported on permutation parameters"),
            )
            .with_help("e.g. `order[0] == 'i'` or `order.index('i') < order.index('k')`")
        };
        let ExprKind::Name(name) = &target.kind else {
            return Err(not_one());
        };
        let Some(i) = self.symbols.iter().position(|s| &s.name == name) else {
            // Reports the unknown name with its suggestion.
            self.name(name, &target.span)?;
            return Err(not_one());
        };
        if self.symbols[i].ty != ExprType::Permutation {
            return Err(not_one());
        }
        self.used.push(i);
        Ok((i, self.symbols[i].items.clone()))
    }

    /// The items of the permutation `e` takes an item of (`order[k]`), if it does.
    fn items_at(&self, e: &Expr) -> Option<&[String]> {
        let ExprKind::Subscript(target, _) = &e.kind else {
            return None;
        };
        let ExprKind::Name(name) = &target.kind else {
            return None;
        };
        self.symbols
            .iter()
            .find(|s| &s.name == name && s.ty == ExprType::Permutation)
            .map(|s| s.items.as_slice())
    }

    /// A string literal compared with an item of a permutation (`order[0] == 'q'`, `order[0]
    /// in ['i', 'q']`) must name one of its items: otherwise the comparison is decided before
    /// any configuration is seen, which is a misspelling, as `order.index('q')` reports it.
    fn check_item_literals(&self, item: &Expr, literals: &[&Expr]) -> Result<(), ExprError> {
        let Some(items) = self.items_at(item) else {
            return Ok(());
        };
        for lit in literals {
            if let ExprKind::Str(text) = &lit.kind
                && !items.contains(text)
            {
                return Err(unknown_item(text, items, &lit.span));
            }
        }
        Ok(())
    }

    /// `order[k]`: the item at position `k` (a literal; negative counts from the end).
    #[inline(never)]
    fn subscript(&mut self, target: &Expr, index: &Expr) -> Result<Compiled, ExprError> {
        let (p, items) = self.permutation(target, "indexing")?;
        let literal = match &index.kind {
            ExprKind::Int(k) => Some(*k),
            ExprKind::Unary(UnaryOp::Neg, a) => match a.kind {
                ExprKind::Int(k) => Some(-k),
                _ => None,
            },
            _ => None,
        };
        let Some(k) = literal else {
            return Err(unsupported(
                index.span.clone(),
                "a position in a permutation must be an integer literal",
            ));
        };
        let n = items.len() as i64;
        let position = if k < 0 { k + n } else { k };
        if !(0..n).contains(&position) {
            return Err(type_err(
                index.span.clone(),
                format!(
                    "position {k} is out of range: the permutation has {n} items (positions 0 to {})",
                    n - 1
                ),
            ));
        }
        let ids: Vec<u32> = items.iter().map(|it| self.interner.intern(it)).collect();
        let shift = 4 * position as u32;
        Ok(Compiled::Str(Src::Dyn(Arc::new(move |v| {
            let packed = i64::read(v, p)?;
            ids.get(((packed >> shift) & 0xF) as usize)
                .copied()
                .ok_or(EvalError::TypeMismatch)
        }))))
    }

    /// `order.index('item')`: the position of an item (0 for the first).
    #[inline(never)]
    fn method(
        &mut self,
        target: &Expr,
        method: &str,
        method_span: &Span,
        args: &[Expr],
        span: &Span,
    ) -> Result<Compiled, ExprError> {
        if method != "index" {
            return Err(unsupported(
                method_span.clone(),
                format!("method `{method}` is not supported"),
            )
            .with_help("the only method is a permutation's `.index('item')`"));
        }
        let (p, items) = self.permutation(target, "`.index(...)`")?;
        let [arg] = args else {
            return Err(type_err(
                span.clone(),
                format!("`index` takes exactly one argument ({} given)", args.len()),
            ));
        };
        // Numbered items (`items = [0, 1, 2]`) are named by their decimal text, so
        // `order.index(2)` is `order.index('2')`.
        let numbered;
        let item = match &arg.kind {
            ExprKind::Str(item) => item,
            ExprKind::Int(k) => {
                numbered = k.to_string();
                &numbered
            }
            _ => {
                return Err(unsupported(
                    arg.span.clone(),
                    "`index` needs a literal naming an item (a string, or the number of a numbered item)",
                ));
            }
        };
        let Some(wanted) = items.iter().position(|it| it == item) else {
            return Err(unknown_item(item, &items, &arg.span));
        };
        let n = items.len();
        Ok(Compiled::Int(Src::Dyn(Arc::new(move |v| {
            let packed = i64::read(v, p)?;
            (0..n)
                .find(|&k| ((packed >> (4 * k)) & 0xF) as usize == wanted)
                .map(|k| k as i64)
                .ok_or(EvalError::TypeMismatch)
        }))))
    }

    #[inline(never)]
    fn unary(&mut self, op: UnaryOp, a: &Expr, span: &Span) -> Result<Compiled, ExprError> {
        let c = self.expr(a)?;
        Ok(match op {
            UnaryOp::Not => Compiled::Bool(map1(c.truthy(&a.span)?, |b| Ok(!b))),
            UnaryOp::Neg | UnaryOp::Pos => {
                let sym = if op == UnaryOp::Neg { '-' } else { '+' };
                let n = c.numeric(|| {
                    type_err(
                        span.clone(),
                        format!("unary `{sym}` cannot be applied to a string"),
                    )
                })?;
                if op == UnaryOp::Pos {
                    n.into_compiled()
                } else {
                    match n {
                        NumC::Int(s) => Compiled::Int(map1(s, ops::int_neg)),
                        NumC::Real(s) => Compiled::Real(map1(s, |x| Ok(-x))),
                        NumC::Num(s) => Compiled::Num(map1(s, ops::num_neg)),
                    }
                }
            }
        })
    }

    #[inline(never)]
    fn binary(&mut self, op: BinOp, l: &Expr, r: &Expr) -> Result<Compiled, ExprError> {
        let lc = self.expr(l)?;
        let rc = self.expr(r)?;
        let err = |s: Span| {
            move || {
                type_err(
                    s,
                    format!(
                        "arithmetic on strings is not supported (operator `{}`)",
                        op.symbol()
                    ),
                )
            }
        };
        let ln = lc.numeric(err(l.span.clone()))?;
        let rn = rc.numeric(err(r.span.clone()))?;
        Ok(match (ln, rn) {
            (NumC::Int(a), NumC::Int(b)) => int_arith(op, a, b),
            (NumC::Num(a), b) => num_arith(op, a, b.into_num()),
            (a, NumC::Num(b)) => num_arith(op, a.into_num(), b),
            (a, b) => real_arith(op, a.into_real(), b.into_real()),
        })
    }

    #[inline(never)]
    fn bool_op(
        &mut self,
        op: BoolOp,
        l: &Expr,
        r: &Expr,
        span: &Span,
    ) -> Result<Compiled, ExprError> {
        match (self.expr(l)?, self.expr(r)?) {
            (Compiled::Bool(lb), Compiled::Bool(rb)) => Ok(Compiled::Bool(match op {
                BoolOp::And => and(lb, rb),
                BoolOp::Or => or(lb, rb),
            })),
            // Python's `and`/`or` give the operand that decides, not a bool: `a or b` is
            // `a if a else b`, `a and b` is `b if a else a` (so `(x or 0) == x` holds).
            _ => match op {
                BoolOp::Or => self.if_else(l, l, r, span),
                BoolOp::And => self.if_else(r, l, l, span),
            },
        }
    }

    #[inline(never)]
    fn if_else(
        &mut self,
        body: &Expr,
        cond: &Expr,
        orelse: &Expr,
        span: &Span,
    ) -> Result<Compiled, ExprError> {
        let a = self.expr(body)?;
        let c = self.expr(cond)?.truthy(&cond.span)?;
        let b = self.expr(orelse)?;
        if let Some(k) = c.as_const() {
            return Ok(if k { a } else { b });
        }
        if a.is_str() != b.is_str() {
            return Err(type_err(
                span.clone(),
                "the branches of this conditional expression mix a string and a number",
            ));
        }
        Ok(match (a, b) {
            (Compiled::Bool(x), Compiled::Bool(y)) => Compiled::Bool(select(c, x, y)),
            (Compiled::Str(x), Compiled::Str(y)) => Compiled::Str(select(c, x, y)),
            (a, b) => {
                let err = || type_err(span.clone(), "internal error: string branch");
                match (a.numeric(err)?, b.numeric(err)?) {
                    (NumC::Int(x), NumC::Int(y)) => Compiled::Int(select(c, x, y)),
                    (NumC::Real(x), NumC::Real(y)) => Compiled::Real(select(c, x, y)),
                    (x, y) => Compiled::Num(select(c, x.into_num(), y.into_num())),
                }
            }
        })
    }

    #[inline(never)]
    fn name(&mut self, n: &str, span: &Span) -> Result<Compiled, ExprError> {
        let Some(i) = self.symbols.iter().position(|s| s.name == n) else {
            if n == "None" {
                return Err(unsupported(span.clone(), "`None` is not supported"));
            }
            let mut err = ExprError::new(
                ExprErrorKind::UnknownName,
                span.clone(),
                format!("unknown name `{n}`"),
            );
            let candidates = self
                .symbols
                .iter()
                .map(|s| s.name.as_str())
                .chain(["True", "False"]);
            if let Some(s) = suggest(n, candidates) {
                err = err.with_help(format!("did you mean `{s}`?"));
            }
            return Err(err);
        };
        self.used.push(i);
        Ok(match self.symbols[i].ty {
            ExprType::Int => Compiled::Int(Src::Param(i)),
            ExprType::Real => Compiled::Real(Src::Param(i)),
            ExprType::Bool => Compiled::Bool(Src::Param(i)),
            ExprType::Str => Compiled::Str(Src::Param(i)),
            ExprType::Permutation => {
                return Err(type_err(
                    span.clone(),
                    format!(
                        "`{n}` is a permutation: use an item's position or the item at a position"
                    ),
                )
                .with_help(format!(
                    "e.g. `{n}.index('{item}') < 2` or `{n}[0] == '{item}'`",
                    item = self.symbols[i].items.first().map_or("item", String::as_str)
                )));
            }
        })
    }

    #[inline(never)]
    fn compare(
        &mut self,
        first: &Expr,
        rest: &[(CmpOp, Expr)],
        span: &Span,
    ) -> Result<Compiled, ExprError> {
        if rest
            .iter()
            .any(|(op, _)| matches!(op, CmpOp::In | CmpOp::NotIn))
        {
            if let [(op, list)] = rest {
                return self.membership(first, *op, list).map(Compiled::Bool);
            }
            return Err(unsupported(
                span.clone(),
                "chained comparisons involving `in` or `not in` are not supported",
            )
            .with_help("add parentheses"));
        }
        let operands: Vec<&Expr> = std::iter::once(first)
            .chain(rest.iter().map(|(_, e)| e))
            .collect();
        for pair in operands.windows(2) {
            self.check_item_literals(pair[0], &[pair[1]])?;
            self.check_item_literals(pair[1], &[pair[0]])?;
        }
        let mut items = Vec::with_capacity(rest.len() + 1);
        let mut spans = Vec::with_capacity(rest.len() + 1);
        items.push(self.expr(first)?);
        spans.push(first.span.clone());
        for (_, e) in rest {
            items.push(self.expr(e)?);
            spans.push(e.span.clone());
        }
        let ops: Vec<CmpOp> = rest.iter().map(|(op, _)| *op).collect();
        for (k, op) in ops.iter().enumerate() {
            let pair = spans[k].start..spans[k + 1].end;
            let (l, r) = (items[k].is_str(), items[k + 1].is_str());
            if l != r {
                return Err(str_num_compare(pair));
            }
            if l && !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                return Err(type_err(
                    pair,
                    format!("strings cannot be compared with `{}`", op.symbol()),
                )
                .with_help("strings support only `==`, `!=`, `in` and `not in`"));
            }
        }
        if items[0].is_str() {
            let strs: Option<Vec<Src<u32>>> = items.into_iter().map(Compiled::string).collect();
            let strs = strs.ok_or_else(|| type_err(span.clone(), "internal error: mixed chain"))?;
            return Ok(Compiled::Bool(chain(strs, ops, |a: u32, b: u32| {
                Some(a.cmp(&b))
            })));
        }
        let err = || type_err(span.clone(), "internal error: string in a numeric chain");
        let nums = items
            .into_iter()
            .map(|c| c.numeric(err))
            .collect::<Result<Vec<_>, _>>()?;
        if nums.iter().all(|n| matches!(n, NumC::Int(_))) {
            let v = nums
                .into_iter()
                .filter_map(|n| match n {
                    NumC::Int(s) => Some(s),
                    _ => None,
                })
                .collect();
            return Ok(Compiled::Bool(chain(v, ops, int_cmp)));
        }
        if nums.iter().all(|n| matches!(n, NumC::Real(_))) {
            let v = nums
                .into_iter()
                .filter_map(|n| match n {
                    NumC::Real(s) => Some(s),
                    _ => None,
                })
                .collect();
            return Ok(Compiled::Bool(chain(v, ops, real_cmp)));
        }
        if let ([a, b], [op]) = (&nums[..], &ops[..]) {
            let op = *op;
            match (a, b) {
                (NumC::Int(_), NumC::Real(_)) | (NumC::Real(_), NumC::Int(_)) => {
                    let mut it = nums.into_iter();
                    return Ok(Compiled::Bool(match (it.next(), it.next()) {
                        (Some(NumC::Int(x)), Some(NumC::Real(y))) => {
                            mixed_compare(op, x, y, ops::cmp_int_real)
                        }
                        (Some(NumC::Real(x)), Some(NumC::Int(y))) => {
                            mixed_compare(op, x, y, |a, b| {
                                ops::cmp_int_real(b, a).map(Ordering::reverse)
                            })
                        }
                        _ => return Err(type_err(span.clone(), "internal error: mixed compare")),
                    }));
                }
                _ => {}
            }
        }
        let v = nums.into_iter().map(NumC::into_num).collect();
        Ok(Compiled::Bool(chain(v, ops, ops::num_cmp)))
    }

    fn membership(&mut self, x: &Expr, op: CmpOp, list: &Expr) -> Result<Src<bool>, ExprError> {
        let xc = self.expr(x)?;
        let (ExprKind::List(elems) | ExprKind::Tuple(elems)) = &list.kind else {
            return Err(unsupported(
                list.span.clone(),
                format!(
                    "`{}` needs a list or tuple literal on its right",
                    op.symbol()
                ),
            )
            .with_help("write the allowed values out, e.g. `x in [1, 2, 4]`"));
        };
        self.check_item_literals(x, &elems.iter().collect::<Vec<_>>())?;
        let mut cs = Vec::with_capacity(elems.len());
        for e in elems {
            let c = self.expr(e)?;
            if c.is_str() != xc.is_str() {
                return Err(str_num_compare(e.span.clone()));
            }
            cs.push(c);
        }
        let found = if let Compiled::Str(xs) = xc {
            let es = cs.into_iter().filter_map(Compiled::string).collect();
            member(xs, es, |a: u32, b: u32| a == b)
        } else {
            let err = || {
                type_err(
                    list.span.clone(),
                    "internal error: string in a numeric list",
                )
            };
            let xn = xc.numeric(err)?;
            let en = cs
                .into_iter()
                .map(|c| c.numeric(err))
                .collect::<Result<Vec<_>, _>>()?;
            match xn {
                NumC::Int(xi) if en.iter().all(|n| matches!(n, NumC::Int(_))) => {
                    let es = en
                        .into_iter()
                        .filter_map(|n| match n {
                            NumC::Int(s) => Some(s),
                            _ => None,
                        })
                        .collect();
                    member(xi, es, |a: i64, b: i64| a == b)
                }
                xn => {
                    let es = en.into_iter().map(NumC::into_num).collect();
                    member(xn.into_num(), es, |a, b| {
                        ops::num_cmp(a, b) == Some(Ordering::Equal)
                    })
                }
            }
        };
        Ok(if op == CmpOp::NotIn {
            map1(found, |b| Ok(!b))
        } else {
            found
        })
    }

    #[inline(never)]
    fn call(
        &mut self,
        name: &str,
        name_span: &Span,
        args: &[Expr],
        span: &Span,
    ) -> Result<Compiled, ExprError> {
        match name {
            "min" | "max" => self.min_max(name == "max", args, span),
            "abs" | "int" | "float" | "round" => {
                let [arg] = args else {
                    if name == "round" && args.len() == 2 {
                        return Err(unsupported(
                            span.clone(),
                            "`round` with a number of digits is not supported",
                        ));
                    }
                    return Err(type_err(
                        span.clone(),
                        format!("`{name}` takes exactly one argument ({} given)", args.len()),
                    ));
                };
                let c = self.expr(arg)?;
                let n = c.numeric(|| {
                    type_err(
                        arg.span.clone(),
                        format!("`{name}` of a string is not supported"),
                    )
                })?;
                Ok(match name {
                    "abs" => match n {
                        NumC::Int(s) => Compiled::Int(map1(s, ops::int_abs)),
                        NumC::Real(s) => Compiled::Real(map1(s, |x| Ok(x.abs()))),
                        NumC::Num(s) => Compiled::Num(map1(s, ops::num_abs)),
                    },
                    "int" => Compiled::Int(match n {
                        NumC::Int(s) => s,
                        NumC::Real(s) => map1(s, ops::real_to_int),
                        NumC::Num(s) => map1(s, ops::num_to_int),
                    }),
                    "float" => Compiled::Real(n.into_real()),
                    _ => Compiled::Int(match n {
                        NumC::Int(s) => s,
                        NumC::Real(s) => map1(s, ops::real_round),
                        NumC::Num(s) => map1(s, ops::num_round),
                    }),
                })
            }
            _ => {
                let names = ["min", "max", "abs", "int", "float", "round"];
                let help = match suggest(name, names.into_iter()) {
                    Some(s) => format!("did you mean `{s}`? ({FUNCTIONS_HELP})"),
                    None => FUNCTIONS_HELP.to_string(),
                };
                Err(unsupported(
                    name_span.clone(),
                    format!("function `{name}` is not supported in constraints"),
                )
                .with_help(help))
            }
        }
    }

    fn min_max(&mut self, is_max: bool, args: &[Expr], span: &Span) -> Result<Compiled, ExprError> {
        let name = if is_max { "max" } else { "min" };
        let items: &[Expr] = match args {
            [one] => match &one.kind {
                ExprKind::List(v) | ExprKind::Tuple(v) => v,
                _ => {
                    return Err(type_err(
                        span.clone(),
                        format!("`{name}` needs at least two arguments or a list literal"),
                    ));
                }
            },
            _ => args,
        };
        if items.is_empty() {
            return Err(type_err(
                span.clone(),
                format!("`{name}` of an empty sequence"),
            ));
        }
        let mut nums = Vec::with_capacity(items.len());
        for e in items {
            let c = self.expr(e)?;
            nums.push(c.numeric(|| {
                type_err(
                    e.span.clone(),
                    format!("`{name}` of strings is not supported"),
                )
            })?);
        }
        // Python keeps the current best and replaces it when `item > best` (max) or
        // `item < best` (min).
        let want = if is_max {
            Ordering::Greater
        } else {
            Ordering::Less
        };
        let all_int = nums.iter().all(|n| matches!(n, NumC::Int(_)));
        let all_real = nums.iter().all(|n| matches!(n, NumC::Real(_)));
        if all_int {
            let mut ints = nums.into_iter().filter_map(|n| match n {
                NumC::Int(s) => Some(s),
                _ => None,
            });
            let Some(mut acc) = ints.next() else {
                return Err(type_err(
                    span.clone(),
                    format!("`{name}` of an empty sequence"),
                ));
            };
            for s in ints {
                acc = map2(acc, s, move |a, b| {
                    Ok(if b.cmp(&a) == want { b } else { a })
                });
            }
            return Ok(Compiled::Int(acc));
        }
        let mut it = nums.into_iter();
        let Some(first) = it.next() else {
            return Err(type_err(
                span.clone(),
                format!("`{name}` of an empty sequence"),
            ));
        };
        Ok(if all_real {
            let mut acc = first.into_real();
            for n in it {
                acc = map2(acc, n.into_real(), move |a, b| {
                    Ok(if b.partial_cmp(&a) == Some(want) {
                        b
                    } else {
                        a
                    })
                });
            }
            Compiled::Real(acc)
        } else {
            let mut acc = first.into_num();
            for n in it {
                acc = map2(acc, n.into_num(), move |a, b| {
                    Ok(if ops::num_cmp(b, a) == Some(want) {
                        b
                    } else {
                        a
                    })
                });
            }
            Compiled::Num(acc)
        })
    }
}

/// A single int/float comparison.
fn mixed_compare<A, B, C>(op: CmpOp, a: Src<A>, b: Src<B>, cmp: C) -> Src<bool>
where
    A: Val,
    B: Val,
    C: Fn(A, B) -> Option<Ordering> + Copy + Send + Sync + 'static,
{
    map2(a, b, move |x, y| Ok(op.test(cmp(x, y))))
}

/// `item` named where a permutation of `items` has none of that name.
fn unknown_item(item: &str, items: &[String], span: &Span) -> ExprError {
    let mut e = type_err(
        span.clone(),
        format!(
            "`{item}` is not an item of this permutation; its items are {}",
            items.join(", ")
        ),
    );
    if let Some(s) = suggest(item, items.iter().map(String::as_str)) {
        e = e.with_help(format!("did you mean `{s}`?"));
    }
    e
}
