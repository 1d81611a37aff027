//! A straightforward tree-walking interpreter with dynamic Python values.
//!
//! It evaluates constant list expressions (T1 `Values`, see [`eval_list`](super::eval_list))
//! and serves as the reference semantics the compiled closures are tested against.

use std::cmp::Ordering;

use super::ast::{BinOp, BoolOp, Clause, CmpOp, Expr, ExprKind, Span, UnaryOp};
use super::error::{EvalError, ExprError, ExprErrorKind, suggest};
use super::ops::{self, Num};

/// Longest list the interpreter builds.
pub(crate) const MAX_LIST_LEN: usize = 10_000_000;
/// Most comprehension iterations one evaluation may run.
const MAX_STEPS: u64 = 100_000_000;

/// A dynamic Python value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Int(i64),
    Real(f64),
    Bool(bool),
    Str(String),
    /// A list (tuples are lists too).
    List(Vec<Value>),
    /// `range(start, stop, step)`, step never 0.
    Range(i64, i64, i64),
}

/// An interpreter failure: a run-time error with its location, or any other error.
#[derive(Debug)]
pub(crate) enum IErr {
    Eval(EvalError, Span),
    Expr(ExprError),
}

impl IErr {
    /// As an [`ExprError`] (run-time errors get kind [`ExprErrorKind::Eval`]).
    pub(crate) fn into_expr_error(self) -> ExprError {
        match self {
            IErr::Eval(e, span) => ExprError::new(ExprErrorKind::Eval, span, e.to_string()),
            IErr::Expr(e) => e,
        }
    }
}

impl From<ExprError> for IErr {
    fn from(e: ExprError) -> Self {
        IErr::Expr(e)
    }
}

fn err(kind: ExprErrorKind, span: &Span, msg: impl Into<String>) -> IErr {
    IErr::Expr(ExprError::new(kind, span.clone(), msg))
}

fn type_err(span: &Span, msg: impl Into<String>) -> IErr {
    err(ExprErrorKind::Type, span, msg)
}

fn eval_err(span: &Span, msg: impl Into<String>) -> IErr {
    err(ExprErrorKind::Eval, span, msg)
}

fn too_long(span: &Span) -> IErr {
    eval_err(
        span,
        format!("list is too long (more than {MAX_LIST_LEN} elements)"),
    )
}

impl Value {
    fn from_num(n: Num) -> Value {
        match n {
            Num::Int(i) => Value::Int(i),
            Num::Real(r) => Value::Real(r),
        }
    }

    /// The numeric view (bools are ints).
    pub(crate) fn num(&self) -> Option<Num> {
        match self {
            Value::Int(i) => Some(Num::Int(*i)),
            Value::Bool(b) => Some(Num::Int(i64::from(*b))),
            Value::Real(r) => Some(Num::Real(*r)),
            _ => None,
        }
    }

    /// Python type name, for messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Real(_) => "float",
            Value::Bool(_) => "bool",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Range(..) => "range",
        }
    }

    /// Python truthiness.
    pub(crate) fn truthy(&self) -> bool {
        match self {
            Value::Int(i) => *i != 0,
            Value::Real(r) => *r != 0.0,
            Value::Bool(b) => *b,
            Value::Str(s) => !s.is_empty(),
            Value::List(v) => !v.is_empty(),
            Value::Range(a, b, s) => range_len(*a, *b, *s) > 0,
        }
    }
}

/// Number of elements of `range(a, b, s)`.
pub(crate) fn range_len(a: i64, b: i64, s: i64) -> u128 {
    let (a, b, s) = (i128::from(a), i128::from(b), i128::from(s));
    if s > 0 && a < b {
        ((b - a - 1) / s + 1) as u128
    } else if s < 0 && a > b {
        ((a - b - 1) / -s + 1) as u128
    } else {
        0
    }
}

fn range_contains(a: i64, b: i64, s: i64, x: i64) -> bool {
    let in_bounds = if s > 0 {
        a <= x && x < b
    } else {
        b < x && x <= a
    };
    in_bounds && (i128::from(x) - i128::from(a)) % i128::from(s) == 0
}

/// Python `==`.
fn py_eq(l: &Value, r: &Value) -> bool {
    if let (Some(a), Some(b)) = (l.num(), r.num()) {
        return ops::num_cmp(a, b) == Some(Ordering::Equal);
    }
    match (l, r) {
        (Value::Str(a), Value::Str(b)) => a == b,
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| py_eq(x, y))
        }
        (&Value::Range(a0, a1, a2), &Value::Range(b0, b1, b2)) => {
            let n = range_len(a0, a1, a2);
            n == range_len(b0, b1, b2) && (n == 0 || (a0 == b0 && (n == 1 || a2 == b2)))
        }
        _ => false,
    }
}

/// Iterator over the elements of an iterable value.
enum Items {
    List(std::vec::IntoIter<Value>),
    Range { next: i128, stop: i128, step: i128 },
    Chars(std::vec::IntoIter<char>),
}

impl Iterator for Items {
    type Item = Value;
    fn next(&mut self) -> Option<Value> {
        match self {
            Items::List(it) => it.next(),
            Items::Range { next, stop, step } => {
                let more = if *step > 0 {
                    *next < *stop
                } else {
                    *next > *stop
                };
                if !more {
                    return None;
                }
                let v = i64::try_from(*next).ok()?;
                *next += *step;
                Some(Value::Int(v))
            }
            Items::Chars(it) => it.next().map(|c| Value::Str(c.to_string())),
        }
    }
}

/// The tree-walking interpreter; `env` holds parameter and comprehension variables
/// (looked up from the end, so inner bindings shadow outer ones).
pub(crate) struct Interp {
    env: Vec<(String, Value)>,
    steps: u64,
    /// Most comprehension iterations allowed (default [`MAX_STEPS`]).
    pub max_steps: u64,
}

impl Interp {
    pub(crate) fn new(env: Vec<(String, Value)>) -> Self {
        Interp {
            env,
            steps: 0,
            max_steps: MAX_STEPS,
        }
    }

    fn items(&self, v: Value, span: &Span) -> Result<Items, IErr> {
        Ok(match v {
            Value::List(items) => Items::List(items.into_iter()),
            Value::Range(a, b, s) => Items::Range {
                next: a.into(),
                stop: b.into(),
                step: s.into(),
            },
            Value::Str(s) => Items::Chars(s.chars().collect::<Vec<_>>().into_iter()),
            other => {
                return Err(type_err(
                    span,
                    format!("`{}` object is not iterable", other.type_name()),
                ));
            }
        })
    }

    /// Materialises an iterable as a list (bounded by [`MAX_LIST_LEN`]).
    pub(crate) fn to_list(&self, v: Value, span: &Span) -> Result<Vec<Value>, IErr> {
        if let Value::Range(a, b, s) = v
            && range_len(a, b, s) > MAX_LIST_LEN as u128
        {
            return Err(too_long(span));
        }
        Ok(self.items(v, span)?.collect())
    }

    /// Evaluates `e`. Node kinds with locals are handled by non-inlined methods, which keeps
    /// this recursive function's stack frame small.
    pub(crate) fn eval(&mut self, e: &Expr) -> Result<Value, IErr> {
        let span = &e.span;
        match &e.kind {
            ExprKind::Int(v) => Ok(Value::Int(*v)),
            ExprKind::Real(v) => Ok(Value::Real(*v)),
            ExprKind::Bool(v) => Ok(Value::Bool(*v)),
            ExprKind::Str(s) => Ok(Value::Str(s.clone())),
            ExprKind::Name(n) => self.name(n, span),
            ExprKind::Unary(op, a) => self.unary(*op, a, span),
            ExprKind::Binary(op, l, r) => self.binary_expr(*op, l, r, span),
            ExprKind::BoolOp(op, l, r) => self.bool_op(*op, l, r),
            ExprKind::Compare(first, rest) => self.compare_chain(first, rest, span),
            ExprKind::IfElse(body, cond, orelse) => self.if_else(body, cond, orelse),
            ExprKind::Call(name, name_span, args) => self.call_expr(name, name_span, args, span),
            ExprKind::List(items) | ExprKind::Tuple(items) => self.list(items),
            ExprKind::Subscript(target, index) => self.subscript(target, index, span),
            ExprKind::Method(target, method, method_span, args) => {
                self.method(target, method, method_span, args, span)
            }
            ExprKind::ListComp(elt, clauses) => {
                let mut out = Vec::new();
                self.comprehension(elt, clauses, &mut out, span)?;
                Ok(Value::List(out))
            }
        }
    }

    #[inline(never)]
    fn name(&mut self, n: &str, span: &Span) -> Result<Value, IErr> {
        if let Some((_, v)) = self.env.iter().rev().find(|(k, _)| k == n) {
            return Ok(v.clone());
        }
        if n == "None" {
            return Err(err(
                ExprErrorKind::Unsupported,
                span,
                "`None` is not supported",
            ));
        }
        let mut e = ExprError::new(
            ExprErrorKind::UnknownName,
            span.clone(),
            format!("unknown name `{n}`"),
        );
        let names = self
            .env
            .iter()
            .map(|(k, _)| k.as_str())
            .chain(["True", "False"]);
        if let Some(s) = suggest(n, names) {
            e = e.with_help(format!("did you mean `{s}`?"));
        }
        Err(IErr::Expr(e))
    }

    #[inline(never)]
    fn unary(&mut self, op: UnaryOp, a: &Expr, span: &Span) -> Result<Value, IErr> {
        let v = self.eval(a)?;
        if op == UnaryOp::Not {
            return Ok(Value::Bool(!v.truthy()));
        }
        let Some(n) = v.num() else {
            return Err(type_err(
                span,
                format!("bad operand type for unary operator: `{}`", v.type_name()),
            ));
        };
        if op == UnaryOp::Pos {
            Ok(Value::from_num(n))
        } else {
            ops::num_neg(n)
                .map(Value::from_num)
                .map_err(|e| IErr::Eval(e, span.clone()))
        }
    }

    #[inline(never)]
    fn binary_expr(&mut self, op: BinOp, l: &Expr, r: &Expr, span: &Span) -> Result<Value, IErr> {
        let lv = self.eval(l)?;
        let rv = self.eval(r)?;
        self.binary(op, lv, rv, span)
    }

    #[inline(never)]
    fn bool_op(&mut self, op: BoolOp, l: &Expr, r: &Expr) -> Result<Value, IErr> {
        // Python: the operand that decides (the left when it settles it, else the right).
        let lv = self.eval(l)?;
        Ok(match (op, lv.truthy()) {
            (BoolOp::And, false) | (BoolOp::Or, true) => lv,
            _ => self.eval(r)?,
        })
    }

    #[inline(never)]
    fn compare_chain(
        &mut self,
        first: &Expr,
        rest: &[(CmpOp, Expr)],
        span: &Span,
    ) -> Result<Value, IErr> {
        let mut l = self.eval(first)?;
        for (op, e) in rest {
            let r = self.eval(e)?;
            if !self.compare(*op, &l, &r, span)? {
                return Ok(Value::Bool(false));
            }
            l = r;
        }
        Ok(Value::Bool(true))
    }

    #[inline(never)]
    fn if_else(&mut self, body: &Expr, cond: &Expr, orelse: &Expr) -> Result<Value, IErr> {
        if self.eval(cond)?.truthy() {
            self.eval(body)
        } else {
            self.eval(orelse)
        }
    }

    #[inline(never)]
    fn call_expr(
        &mut self,
        name: &str,
        name_span: &Span,
        args: &[Expr],
        span: &Span,
    ) -> Result<Value, IErr> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.eval(a)?);
        }
        self.call(name, name_span, vals, span)
    }

    /// `target[index]` on a list or range, Python's negative indices included.
    #[inline(never)]
    fn subscript(&mut self, target: &Expr, index: &Expr, span: &Span) -> Result<Value, IErr> {
        let t = self.eval(target)?;
        let i = match self.eval(index)? {
            Value::Int(i) => i,
            Value::Bool(b) => i64::from(b),
            other => {
                return Err(type_err(
                    &index.span,
                    format!("indices must be integers, not `{}`", other.type_name()),
                ));
            }
        };
        let items: Vec<Value> = match t {
            Value::List(items) => items,
            r @ Value::Range(..) => self.to_list(r, span)?,
            other => {
                return Err(type_err(
                    &target.span,
                    format!("`{}` cannot be indexed", other.type_name()),
                ));
            }
        };
        let n = items.len() as i64;
        let k = if i < 0 { i + n } else { i };
        if !(0..n).contains(&k) {
            return Err(eval_err(span, format!("index {i} is out of range")));
        }
        Ok(items[k as usize].clone())
    }

    /// `target.index(x)`: the position of the first element equal to `x`.
    #[inline(never)]
    fn method(
        &mut self,
        target: &Expr,
        method: &str,
        method_span: &Span,
        args: &[Expr],
        span: &Span,
    ) -> Result<Value, IErr> {
        if method != "index" {
            return Err(err(
                ExprErrorKind::Unsupported,
                method_span,
                format!("method `{method}` is not supported"),
            ));
        }
        let [arg] = args else {
            return Err(type_err(span, "`index` takes exactly one argument"));
        };
        let items = match self.eval(target)? {
            Value::List(items) => items,
            other => {
                return Err(type_err(
                    &target.span,
                    format!("`{}` has no method `index`", other.type_name()),
                ));
            }
        };
        let x = self.eval(arg)?;
        items
            .iter()
            .position(|v| *v == x)
            .map(|p| Value::Int(p as i64))
            .ok_or_else(|| eval_err(span, "the value is not in the list"))
    }

    #[inline(never)]
    fn list(&mut self, items: &[Expr]) -> Result<Value, IErr> {
        let mut out = Vec::with_capacity(items.len());
        for x in items {
            out.push(self.eval(x)?);
        }
        Ok(Value::List(out))
    }

    #[inline(never)]
    fn comprehension(
        &mut self,
        elt: &Expr,
        clauses: &[Clause],
        out: &mut Vec<Value>,
        span: &Span,
    ) -> Result<(), IErr> {
        match clauses.split_first() {
            None => {
                if out.len() >= MAX_LIST_LEN {
                    return Err(too_long(span));
                }
                let v = self.eval(elt)?;
                out.push(v);
            }
            Some((Clause::For(var, _, iter), rest)) => {
                let it = self.eval(iter)?;
                for item in self.items(it, &iter.span)? {
                    self.steps += 1;
                    if self.steps > self.max_steps {
                        return Err(eval_err(
                            span,
                            format!("comprehension runs more than {} iterations", self.max_steps),
                        ));
                    }
                    self.env.push((var.clone(), item));
                    let r = self.comprehension(elt, rest, out, span);
                    self.env.pop();
                    r?;
                }
            }
            Some((Clause::If(cond), rest)) => {
                if self.eval(cond)?.truthy() {
                    self.comprehension(elt, rest, out, span)?;
                }
            }
        }
        Ok(())
    }

    fn binary(&mut self, op: BinOp, l: Value, r: Value, span: &Span) -> Result<Value, IErr> {
        if let (Some(a), Some(b)) = (l.num(), r.num()) {
            return ops::num_arith(op, a, b)
                .map(Value::from_num)
                .map_err(|e| IErr::Eval(e, span.clone()));
        }
        match (op, l, r) {
            (BinOp::Add, Value::List(mut a), Value::List(b)) => {
                if a.len() + b.len() > MAX_LIST_LEN {
                    return Err(too_long(span));
                }
                a.extend(b);
                Ok(Value::List(a))
            }
            (BinOp::Add, Value::Str(a), Value::Str(b)) => Ok(Value::Str(a + &b)),
            (BinOp::Mul, Value::List(a), n) | (BinOp::Mul, n, Value::List(a))
                if matches!(n, Value::Int(_) | Value::Bool(_)) =>
            {
                let times = match n.num() {
                    Some(Num::Int(t)) => usize::try_from(t.max(0)).unwrap_or(usize::MAX),
                    _ => 0,
                };
                if !a.is_empty() && times > MAX_LIST_LEN / a.len() {
                    return Err(too_long(span));
                }
                let mut out = Vec::with_capacity(a.len() * times);
                for _ in 0..times {
                    out.extend(a.iter().cloned());
                }
                Ok(Value::List(out))
            }
            (op, l, r) => Err(type_err(
                span,
                format!(
                    "unsupported operand types for `{}`: `{}` and `{}`",
                    op.symbol(),
                    l.type_name(),
                    r.type_name()
                ),
            )),
        }
    }

    fn compare(&mut self, op: CmpOp, l: &Value, r: &Value, span: &Span) -> Result<bool, IErr> {
        match op {
            CmpOp::Eq => Ok(py_eq(l, r)),
            CmpOp::Ne => Ok(!py_eq(l, r)),
            CmpOp::In | CmpOp::NotIn => {
                let found = match r {
                    Value::List(items) => items.iter().any(|x| py_eq(l, x)),
                    &Value::Range(a, b, s) => match l.num() {
                        Some(Num::Int(i)) => range_contains(a, b, s, i),
                        Some(Num::Real(f)) => {
                            f.fract() == 0.0
                                && ops::real_to_int(f).is_ok_and(|i| range_contains(a, b, s, i))
                        }
                        None => false,
                    },
                    Value::Str(hay) => match l {
                        Value::Str(needle) => hay.contains(needle.as_str()),
                        _ => {
                            return Err(type_err(
                                span,
                                format!("`in <string>` requires a string, not `{}`", l.type_name()),
                            ));
                        }
                    },
                    _ => {
                        return Err(type_err(
                            span,
                            format!("argument of type `{}` is not iterable", r.type_name()),
                        ));
                    }
                };
                Ok(found != (op == CmpOp::NotIn))
            }
            _ => {
                if let (Some(a), Some(b)) = (l.num(), r.num()) {
                    return Ok(op.test(ops::num_cmp(a, b)));
                }
                match (l, r) {
                    (Value::Str(a), Value::Str(b)) => Ok(op.test(Some(a.cmp(b)))),
                    _ => Err(type_err(
                        span,
                        format!(
                            "`{}` is not supported between `{}` and `{}`",
                            op.symbol(),
                            l.type_name(),
                            r.type_name()
                        ),
                    )),
                }
            }
        }
    }

    fn call(
        &mut self,
        name: &str,
        name_span: &Span,
        mut args: Vec<Value>,
        span: &Span,
    ) -> Result<Value, IErr> {
        let ev = |e: EvalError| IErr::Eval(e, span.clone());
        let one = |args: &mut Vec<Value>| -> Result<Value, IErr> {
            if args.len() != 1 {
                if name == "round" && args.len() == 2 {
                    return Err(err(
                        ExprErrorKind::Unsupported,
                        span,
                        "`round` with a number of digits is not supported",
                    ));
                }
                return Err(type_err(
                    span,
                    format!("`{name}` takes exactly one argument ({} given)", args.len()),
                ));
            }
            args.pop().ok_or_else(|| type_err(span, "missing argument"))
        };
        match name {
            "min" | "max" => {
                let items = if args.len() == 1 {
                    let v = one(&mut args)?;
                    self.to_list(v, span)?
                } else {
                    args
                };
                let want = if name == "max" { CmpOp::Gt } else { CmpOp::Lt };
                let mut it = items.into_iter();
                let Some(mut best) = it.next() else {
                    return Err(eval_err(span, format!("`{name}` of an empty sequence")));
                };
                for item in it {
                    if self.compare(want, &item, &best, span)? {
                        best = item;
                    }
                }
                Ok(best)
            }
            "abs" | "int" | "float" | "round" => {
                let v = one(&mut args)?;
                let n = match (&v, name) {
                    (Value::Str(s), "int") => {
                        return s.trim().parse::<i64>().map(Value::Int).map_err(|_| {
                            eval_err(span, format!("invalid literal for int(): {s:?}"))
                        });
                    }
                    (Value::Str(s), "float") => {
                        return s.trim().parse::<f64>().map(Value::Real).map_err(|_| {
                            eval_err(span, format!("could not convert string to float: {s:?}"))
                        });
                    }
                    _ => v.num().ok_or_else(|| {
                        type_err(
                            span,
                            format!("bad argument type for `{name}`: `{}`", v.type_name()),
                        )
                    })?,
                };
                Ok(match name {
                    "abs" => Value::from_num(ops::num_abs(n).map_err(ev)?),
                    "int" => Value::Int(ops::num_to_int(n).map_err(ev)?),
                    "float" => Value::Real(n.to_f64()),
                    _ => Value::Int(ops::num_round(n).map_err(ev)?),
                })
            }
            "range" => {
                if args.is_empty() || args.len() > 3 {
                    return Err(type_err(
                        span,
                        format!("`range` takes 1 to 3 arguments ({} given)", args.len()),
                    ));
                }
                let mut ints = Vec::with_capacity(3);
                for a in &args {
                    match (a, a.num()) {
                        (Value::Int(_) | Value::Bool(_), Some(Num::Int(i))) => ints.push(i),
                        _ => {
                            return Err(type_err(
                                span,
                                format!(
                                    "`range` arguments must be integers, not `{}`",
                                    a.type_name()
                                ),
                            ));
                        }
                    }
                }
                let (a, b, s) = match ints[..] {
                    [b] => (0, b, 1),
                    [a, b] => (a, b, 1),
                    [a, b, s] => (a, b, s),
                    _ => return Err(type_err(span, "bad `range` arguments")),
                };
                if s == 0 {
                    return Err(eval_err(span, "`range` step must not be zero"));
                }
                Ok(Value::Range(a, b, s))
            }
            "list" => match args.len() {
                0 => Ok(Value::List(Vec::new())),
                1 => {
                    let v = one(&mut args)?;
                    Ok(Value::List(self.to_list(v, span)?))
                }
                n => Err(type_err(
                    span,
                    format!("`list` takes at most one argument ({n} given)"),
                )),
            },
            _ => Err(IErr::Expr(
                ExprError::new(
                    ExprErrorKind::Unsupported,
                    name_span.clone(),
                    format!("function `{name}` is not supported"),
                )
                .with_help("supported functions: min, max, abs, int, float, round, range, list"),
            )),
        }
    }
}
