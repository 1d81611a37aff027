//! Untyped syntax tree, produced by the parser, and its printer back to Python source.

use std::fmt;
use std::ops::Range;

/// Byte range in the source.
pub(crate) type Span = Range<usize>;

/// Maximum height of a syntax tree; deeper input is rejected by the parser so that the
/// recursive passes (type checking, compiling, interpreting, printing, dropping) cannot
/// overflow the stack. Chains of `and`/`or` are balanced (height log2 n); a flat sum or
/// product of n terms is n tall, so sums of up to about a thousand terms are accepted. The
/// passes use at most about 3 KiB of stack per level in a debug build: 1000 levels fit in a
/// main thread's 8 MiB and in the 16 MiB threads that enumerate large groups.
pub(crate) const MAX_HEIGHT: u32 = 1000;

/// An expression node with its source span.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// 1 for a leaf, 1 + the tallest child otherwise.
    pub height: u32,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnaryOp {
    Neg,
    Pos,
    Not,
}

/// Arithmetic binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
}

/// Short-circuit boolean operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoolOp {
    And,
    Or,
}

/// Comparison operators (the links of a comparison chain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    In,
    NotIn,
}

/// Node kinds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ExprKind {
    Int(i64),
    Real(f64),
    Bool(bool),
    Str(String),
    Name(String),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    BoolOp(BoolOp, Box<Expr>, Box<Expr>),
    /// `first op1 e1 op2 e2 ...` (Python comparison chain).
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    /// `body if cond else orelse`.
    IfElse(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `name(args)` with the span of the name.
    Call(String, Span, Vec<Expr>),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    /// `[elt clauses...]`.
    ListComp(Box<Expr>, Vec<Clause>),
    /// `target[index]` (a permutation's item at a position).
    Subscript(Box<Expr>, Box<Expr>),
    /// `target.method(args)` with the span of the method's name (a permutation's
    /// `.index(item)`).
    Method(Box<Expr>, String, Span, Vec<Expr>),
}

/// A clause of a list comprehension.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Clause {
    /// `for var in iter` (with the span of `var`).
    For(String, Span, Expr),
    /// `if cond`.
    If(Expr),
}

impl Expr {
    /// Builds a node, computing its height.
    pub(crate) fn new(kind: ExprKind, span: Span) -> Expr {
        let mut h = 0;
        kind.for_each_child(|c| h = h.max(c.height));
        Expr {
            kind,
            span,
            height: h + 1,
        }
    }

    /// The same tree with every span (and call-name span) set to `0..0`.
    #[cfg(test)]
    pub(crate) fn without_spans(&self) -> Expr {
        let s = |e: &Expr| e.without_spans();
        let b = |e: &Expr| Box::new(e.without_spans());
        let kind = match &self.kind {
            ExprKind::Unary(op, a) => ExprKind::Unary(*op, b(a)),
            ExprKind::Binary(op, l, r) => ExprKind::Binary(*op, b(l), b(r)),
            ExprKind::BoolOp(op, l, r) => ExprKind::BoolOp(*op, b(l), b(r)),
            ExprKind::Compare(f, rest) => {
                ExprKind::Compare(b(f), rest.iter().map(|(o, e)| (*o, s(e))).collect())
            }
            ExprKind::IfElse(x, c, y) => ExprKind::IfElse(b(x), b(c), b(y)),
            ExprKind::Call(n, _, args) => {
                ExprKind::Call(n.clone(), 0..0, args.iter().map(s).collect())
            }
            ExprKind::Subscript(t, i) => ExprKind::Subscript(b(t), b(i)),
            ExprKind::Method(t, m, _, args) => {
                ExprKind::Method(b(t), m.clone(), 0..0, args.iter().map(s).collect())
            }
            ExprKind::List(v) => ExprKind::List(v.iter().map(s).collect()),
            ExprKind::Tuple(v) => ExprKind::Tuple(v.iter().map(s).collect()),
            ExprKind::ListComp(e, cl) => ExprKind::ListComp(
                b(e),
                cl.iter()
                    .map(|c| match c {
                        Clause::For(v, _, it) => Clause::For(v.clone(), 0..0, s(it)),
                        Clause::If(c) => Clause::If(s(c)),
                    })
                    .collect(),
            ),
            k => k.clone(),
        };
        Expr::new(kind, 0..0)
    }
}

impl ExprKind {
    /// Calls `f` on each direct child, left to right.
    pub(crate) fn for_each_child(&self, mut f: impl FnMut(&Expr)) {
        match self {
            ExprKind::Int(_)
            | ExprKind::Real(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Name(_) => {}
            ExprKind::Unary(_, a) => f(a),
            ExprKind::Binary(_, l, r) | ExprKind::BoolOp(_, l, r) => {
                f(l);
                f(r)
            }
            ExprKind::Compare(first, rest) => {
                f(first);
                rest.iter().for_each(|(_, e)| f(e));
            }
            ExprKind::IfElse(a, c, b) => {
                f(a);
                f(c);
                f(b)
            }
            ExprKind::Call(_, _, v) | ExprKind::List(v) | ExprKind::Tuple(v) => {
                v.iter().for_each(f)
            }
            ExprKind::Subscript(t, i) => {
                f(t);
                f(i)
            }
            ExprKind::Method(t, _, _, args) => {
                f(t);
                args.iter().for_each(f)
            }
            ExprKind::ListComp(e, clauses) => {
                f(e);
                for c in clauses {
                    match c {
                        Clause::For(_, _, it) => f(it),
                        Clause::If(c) => f(c),
                    }
                }
            }
        }
    }

    /// Binding strength: 0 conditional, 1 `or`, 2 `and`, 3 `not`, 4 comparison,
    /// 5 `+ -`, 6 `* / // %`, 7 unary `- +`, 8 `**`, 9 atoms.
    fn precedence(&self) -> u8 {
        match self {
            ExprKind::IfElse(..) => 0,
            ExprKind::BoolOp(BoolOp::Or, ..) => 1,
            ExprKind::BoolOp(BoolOp::And, ..) => 2,
            ExprKind::Unary(UnaryOp::Not, _) => 3,
            ExprKind::Compare(..) => 4,
            ExprKind::Binary(BinOp::Add | BinOp::Sub, ..) => 5,
            ExprKind::Binary(BinOp::Pow, ..) => 8,
            ExprKind::Binary(..) => 6,
            ExprKind::Unary(..) => 7,
            _ => 9,
        }
    }
}

impl BinOp {
    /// Python spelling.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Pow => "**",
        }
    }
}

impl CmpOp {
    /// Python spelling.
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::In => "in",
            CmpOp::NotIn => "not in",
        }
    }

    /// Whether an ordering outcome (`None`: unordered, i.e. NaN) satisfies this operator.
    /// Not meaningful for `in` / `not in`.
    #[inline(always)]
    pub(crate) fn test(self, ord: Option<std::cmp::Ordering>) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Lt => ord == Some(Less),
            CmpOp::Le => matches!(ord, Some(Less | Equal)),
            CmpOp::Gt => ord == Some(Greater),
            CmpOp::Ge => matches!(ord, Some(Greater | Equal)),
            CmpOp::Eq => ord == Some(Equal),
            CmpOp::Ne | CmpOp::NotIn => ord != Some(Equal),
            CmpOp::In => ord == Some(Equal),
        }
    }
}

/// Writes a Python string literal (single-quoted).
fn write_str(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("'")?;
    for c in s.chars() {
        match c {
            '\\' => f.write_str("\\\\")?,
            '\'' => f.write_str("\\'")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            '\0' => f.write_str("\\0")?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("'")
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_expr(f, e, 0)?;
    }
    Ok(())
}

/// Writes `e`, parenthesised when it binds less tightly than `min`.
fn write_expr(f: &mut fmt::Formatter<'_>, e: &Expr, min: u8) -> fmt::Result {
    let prec = e.kind.precedence();
    if prec < min {
        f.write_str("(")?;
    }
    match &e.kind {
        ExprKind::Int(v) => write!(f, "{v}")?,
        // Literals are never negative or NaN; an overflowing literal such as `1e999` is inf.
        ExprKind::Real(v) if v.is_infinite() => f.write_str("1e999")?,
        ExprKind::Real(v) => write!(f, "{v:?}")?,
        ExprKind::Bool(b) => f.write_str(if *b { "True" } else { "False" })?,
        ExprKind::Str(s) => write_str(f, s)?,
        ExprKind::Name(n) => f.write_str(n)?,
        ExprKind::Unary(op, a) => {
            let (sym, m) = match op {
                UnaryOp::Neg => ("-", 7),
                UnaryOp::Pos => ("+", 7),
                UnaryOp::Not => ("not ", 3),
            };
            f.write_str(sym)?;
            write_expr(f, a, m)?;
        }
        ExprKind::Binary(op, l, r) => {
            let (lm, rm) = match op {
                BinOp::Add | BinOp::Sub => (5, 6),
                BinOp::Pow => (9, 7),
                _ => (6, 7),
            };
            write_expr(f, l, lm)?;
            write!(f, " {} ", op.symbol())?;
            write_expr(f, r, rm)?;
        }
        ExprKind::BoolOp(op, l, r) => {
            // A nested chain of the same operator is parenthesised on either side: the
            // parser balances chains, so parentheses are what keeps a tree's shape through
            // printing and parsing again.
            let (sym, lm, rm) = match op {
                BoolOp::Or => ("or", 2, 2),
                BoolOp::And => ("and", 3, 3),
            };
            write_expr(f, l, lm)?;
            write!(f, " {sym} ")?;
            write_expr(f, r, rm)?;
        }
        ExprKind::Compare(first, rest) => {
            write_expr(f, first, 5)?;
            for (op, e) in rest {
                write!(f, " {} ", op.symbol())?;
                write_expr(f, e, 5)?;
            }
        }
        ExprKind::IfElse(body, cond, orelse) => {
            write_expr(f, body, 1)?;
            f.write_str(" if ")?;
            write_expr(f, cond, 1)?;
            f.write_str(" else ")?;
            write_expr(f, orelse, 0)?;
        }
        ExprKind::Call(name, _, args) => {
            write!(f, "{name}(")?;
            write_list(f, args)?;
            f.write_str(")")?;
        }
        ExprKind::List(items) => {
            f.write_str("[")?;
            write_list(f, items)?;
            f.write_str("]")?;
        }
        ExprKind::Subscript(target, index) => {
            write_expr(f, target, 9)?;
            f.write_str("[")?;
            write_expr(f, index, 0)?;
            f.write_str("]")?;
        }
        ExprKind::Method(target, method, _, args) => {
            write_expr(f, target, 9)?;
            write!(f, ".{method}(")?;
            write_list(f, args)?;
            f.write_str(")")?;
        }
        ExprKind::Tuple(items) => {
            f.write_str("(")?;
            write_list(f, items)?;
            if items.len() == 1 {
                f.write_str(",")?;
            }
            f.write_str(")")?;
        }
        ExprKind::ListComp(elt, clauses) => {
            f.write_str("[")?;
            write_expr(f, elt, 0)?;
            for c in clauses {
                match c {
                    Clause::For(v, _, it) => {
                        write!(f, " for {v} in ")?;
                        write_expr(f, it, 1)?;
                    }
                    Clause::If(c) => {
                        f.write_str(" if ")?;
                        write_expr(f, c, 1)?;
                    }
                }
            }
            f.write_str("]")?;
        }
    }
    if prec < min {
        f.write_str(")")?;
    }
    Ok(())
}

/// Prints the expression as Python source with minimal parentheses; parsing the output
/// gives back the same tree (up to spans).
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(f, self, 0)
    }
}
