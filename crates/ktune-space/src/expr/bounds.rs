//! Interval bounds of a constraint: can it still hold when each parameter it mentions lies
//! somewhere in a range? The enumeration asks this after each assignment, with the
//! parameters assigned so far as single points and the others as the range of their
//! remaining values, and prunes the subtree when the answer is no.
//!
//! Only the numeric core of the language is bounded: numbers, numeric parameters, the
//! positions of a permutation's items (`order.index('i')`), `+ - * /`,
//! unary minus, conditional expressions, comparison chains with `< <= > >= == !=`, and
//! `and`, `or`, `not` of conditions (truthiness: `bool(a and b) == bool(a) and bool(b)`).
//! Anything else (`//`, `%`, `**`, calls, strings, membership) is "unknown", which never
//! prunes. The answer is conservative: "cannot hold" is said only when no value in the
//! ranges satisfies the constraint; evaluation errors (division by zero, overflow) make a
//! configuration infeasible anyway, so ignoring them keeps the answer sound. Arithmetic is
//! exact on integers below 2^52 and widened outwards by a relative 1e-12 otherwise, so
//! rounding never excludes a feasible value.

use super::ast::{BinOp, BoolOp, CmpOp, Expr, ExprKind, UnaryOp};
use super::{ExprType, Symbol};

/// An interval of numbers, `lo <= x <= hi`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Interval {
    /// The least value.
    pub(crate) lo: f64,
    /// The greatest value.
    pub(crate) hi: f64,
    /// Every value in it is an integer (so arithmetic on it is exact while small).
    pub(crate) integral: bool,
}

const EXACT: f64 = 4_503_599_627_370_496.0; // 2^52

impl Interval {
    /// The single value `x`.
    pub(crate) fn point(x: f64, integral: bool) -> Interval {
        Interval {
            lo: x,
            hi: x,
            integral,
        }
    }

    /// The integer `i`: exact below 2^52, else widened (`i as f64` rounds there, and two
    /// different integers may round to the same number).
    pub(crate) fn integer(i: i64) -> Interval {
        let x = i as f64;
        Interval::settled(x, x, true)
    }

    /// Every number.
    pub(crate) fn unbounded() -> Interval {
        Interval {
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
            integral: false,
        }
    }

    /// The result of an operation on `inputs_integral` operands, made sound: exact when the
    /// operands were small integers and the result is too, else widened outwards.
    fn settled(lo: f64, hi: f64, inputs_integral: bool) -> Interval {
        if lo.is_nan() || hi.is_nan() {
            return Interval::unbounded();
        }
        if inputs_integral && lo.abs() < EXACT && hi.abs() < EXACT {
            return Interval {
                lo,
                hi,
                integral: true,
            };
        }
        Interval {
            lo: lo - lo.abs() * 1e-12 - f64::MIN_POSITIVE,
            hi: hi + hi.abs() * 1e-12 + f64::MIN_POSITIVE,
            integral: false,
        }
    }

    fn span(values: [f64; 4], integral: bool) -> Interval {
        if values.iter().any(|v| v.is_nan()) {
            return Interval::unbounded();
        }
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Interval::settled(lo, hi, integral)
    }
}

/// A numeric expression over parameter ranges.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    Const(f64, bool),
    Param(usize),
    Neg(Box<Num>),
    Bin(BinOp, Box<Num>, Box<Num>),
    /// `a if c else b`: either branch.
    Either(Box<Num>, Box<Num>),
    /// `order.index(item)`: the position of item `item` of the permutation parameter
    /// `param` of `n` items. Its range is the parameter's: a single packed ordering once the
    /// permutation is assigned (the item's position), anything else `0..n`.
    Position {
        param: usize,
        item: u32,
        n: u32,
    },
    /// A number we do not bound.
    Any,
}

/// A condition over parameter ranges.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cond {
    Const(bool),
    /// A comparison chain: `first op1 e1 op2 e2 ...`.
    Chain(Num, Vec<(CmpOp, Num)>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    /// A condition we do not bound.
    Any,
}

/// Whether a condition can be true and whether it can be false over the ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tri {
    can_true: bool,
    can_false: bool,
}

const UNKNOWN: Tri = Tri {
    can_true: true,
    can_false: true,
};

impl Tri {
    /// A condition that is always `b`.
    const fn exactly(b: bool) -> Tri {
        Tri {
            can_true: b,
            can_false: !b,
        }
    }

    /// The negation.
    const fn not(self) -> Tri {
        Tri {
            can_true: self.can_false,
            can_false: self.can_true,
        }
    }

    /// `self and other`, `other` not looked at when `self` cannot be true (as Python's
    /// `and`); `or` is its dual through the negations.
    fn and(self, other: impl FnOnce() -> Tri) -> Tri {
        if !self.can_true {
            return Tri::exactly(false);
        }
        let other = other();
        Tri {
            can_true: other.can_true,
            can_false: self.can_false || other.can_false,
        }
    }
}

impl Cond {
    /// The bounds of a constraint's syntax tree (names resolved against `symbols`), or
    /// `None` when nothing in it can be bounded.
    pub(crate) fn of(tree: &Expr, symbols: &[Symbol]) -> Option<Cond> {
        let c = cond(tree, symbols);
        (!matches!(c, Cond::Any | Cond::Const(true))).then_some(c)
    }

    /// Whether the condition can hold when parameter `p` lies in `range(p)`.
    pub(crate) fn can_hold(&self, range: &dyn Fn(usize) -> Interval) -> bool {
        self.tri(range).can_true
    }

    fn tri(&self, range: &dyn Fn(usize) -> Interval) -> Tri {
        match self {
            Cond::Const(b) => Tri::exactly(*b),
            Cond::Any => UNKNOWN,
            Cond::Not(c) => c.tri(range).not(),
            Cond::And(a, b) => a.tri(range).and(|| b.tri(range)),
            Cond::Or(a, b) => a.tri(range).not().and(|| b.tri(range).not()).not(),
            Cond::Chain(first, links) => {
                let mut left = first.range(range);
                let mut all = Tri::exactly(true);
                for (op, e) in links {
                    let right = e.range(range);
                    all = all.and(|| compare(*op, left, right));
                    if !all.can_true {
                        break;
                    }
                    left = right;
                }
                all
            }
        }
    }
}

impl Num {
    fn range(&self, range: &dyn Fn(usize) -> Interval) -> Interval {
        match self {
            Num::Int(i) => Interval::integer(*i),
            Num::Const(x, integral) => Interval::point(*x, *integral),
            Num::Param(p) => range(*p),
            Num::Position { param, item, n } => {
                let r = range(*param);
                // A packed ordering (4 bits an item, at most 10 items) is exact in an f64.
                let position = (r.lo == r.hi && r.lo.is_finite())
                    .then_some(r.lo as i64)
                    .and_then(|packed| {
                        (0..*n).find(|&k| (packed >> (4 * k)) & 0xF == i64::from(*item))
                    });
                match position {
                    Some(k) => Interval::integer(i64::from(k)),
                    None => Interval {
                        lo: 0.0,
                        hi: f64::from(n.saturating_sub(1)),
                        integral: true,
                    },
                }
            }
            Num::Any => Interval::unbounded(),
            Num::Neg(a) => {
                let a = a.range(range);
                Interval::settled(-a.hi, -a.lo, a.integral)
            }
            Num::Either(a, b) => {
                let (a, b) = (a.range(range), b.range(range));
                Interval {
                    lo: a.lo.min(b.lo),
                    hi: a.hi.max(b.hi),
                    integral: a.integral && b.integral,
                }
            }
            Num::Bin(op, a, b) => {
                let (a, b) = (a.range(range), b.range(range));
                let integral = a.integral && b.integral;
                match op {
                    BinOp::Add => Interval::settled(a.lo + b.lo, a.hi + b.hi, integral),
                    BinOp::Sub => Interval::settled(a.lo - b.hi, a.hi - b.lo, integral),
                    BinOp::Mul => Interval::span(
                        [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi],
                        integral,
                    ),
                    BinOp::Div if b.lo > 0.0 || b.hi < 0.0 => {
                        Interval::span([a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi], false)
                    }
                    _ => Interval::unbounded(),
                }
            }
        }
    }
}

/// Whether `a op b` can be true and can be false for some `a` in one range and `b` in the
/// other.
fn compare(op: CmpOp, a: Interval, b: Interval) -> Tri {
    let lt = |a: Interval, b: Interval| Tri {
        can_true: a.lo < b.hi,
        can_false: a.hi >= b.lo,
    };
    let le = |a: Interval, b: Interval| Tri {
        can_true: a.lo <= b.hi,
        can_false: a.hi > b.lo,
    };
    let eq = || Tri {
        can_true: a.lo <= b.hi && b.lo <= a.hi,
        can_false: !(a.lo == a.hi && b.lo == b.hi && a.lo == b.lo),
    };
    match op {
        CmpOp::Lt => lt(a, b),
        CmpOp::Le => le(a, b),
        CmpOp::Gt => lt(b, a),
        CmpOp::Ge => le(b, a),
        CmpOp::Eq => eq(),
        CmpOp::Ne => {
            let t = eq();
            Tri {
                can_true: t.can_false,
                can_false: t.can_true,
            }
        }
        CmpOp::In | CmpOp::NotIn => UNKNOWN,
    }
}

fn cond(e: &Expr, symbols: &[Symbol]) -> Cond {
    match &e.kind {
        ExprKind::Bool(b) => Cond::Const(*b),
        ExprKind::Unary(UnaryOp::Not, a) => match cond(a, symbols) {
            Cond::Any => Cond::Any,
            c => Cond::Not(Box::new(c)),
        },
        ExprKind::BoolOp(op, a, b) => {
            let (a, b) = (cond(a, symbols), cond(b, symbols));
            match op {
                BoolOp::And => match (a, b) {
                    (Cond::Any, Cond::Any) => Cond::Any,
                    (a, b) => Cond::And(Box::new(a), Box::new(b)),
                },
                BoolOp::Or => match (a, b) {
                    (Cond::Any, _) | (_, Cond::Any) => Cond::Any,
                    (a, b) => Cond::Or(Box::new(a), Box::new(b)),
                },
            }
        }
        ExprKind::Compare(first, links) => {
            let bounded = links
                .iter()
                .all(|(op, _)| !matches!(op, CmpOp::In | CmpOp::NotIn));
            if !bounded {
                return Cond::Any;
            }
            let Some(first) = num(first, symbols) else {
                return Cond::Any;
            };
            let mut out = Vec::with_capacity(links.len());
            for (op, x) in links {
                let Some(x) = num(x, symbols) else {
                    return Cond::Any;
                };
                out.push((*op, x));
            }
            Cond::Chain(first, out)
        }
        _ => Cond::Any,
    }
}

/// The numeric expression `e`, or `None` when it may not be a number (a string, a
/// permutation, a condition).
fn num(e: &Expr, symbols: &[Symbol]) -> Option<Num> {
    Some(match &e.kind {
        ExprKind::Int(i) => Num::Int(*i),
        ExprKind::Real(x) => Num::Const(*x, false),
        ExprKind::Name(n) => {
            let i = symbols.iter().position(|s| &s.name == n)?;
            match symbols[i].ty {
                ExprType::Int | ExprType::Real | ExprType::Bool => Num::Param(i),
                _ => return None,
            }
        }
        ExprKind::Unary(UnaryOp::Neg, a) => Num::Neg(Box::new(num(a, symbols)?)),
        ExprKind::Unary(UnaryOp::Pos, a) => num(a, symbols)?,
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (num(a, symbols)?, num(b, symbols)?);
            match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
                    Num::Bin(*op, Box::new(a), Box::new(b))
                }
                _ => Num::Any,
            }
        }
        ExprKind::IfElse(a, _, b) => {
            Num::Either(Box::new(num(a, symbols)?), Box::new(num(b, symbols)?))
        }
        ExprKind::Method(target, method, _, args) if method == "index" => {
            let ExprKind::Name(name) = &target.kind else {
                return None;
            };
            let param = symbols.iter().position(|s| &s.name == name)?;
            let symbol = &symbols[param];
            // Numbered items are named by their decimal text, as the compiler reads them.
            let wanted = match args.as_slice() {
                [
                    Expr {
                        kind: ExprKind::Str(item),
                        ..
                    },
                ] => item.clone(),
                [
                    Expr {
                        kind: ExprKind::Int(k),
                        ..
                    },
                ] => k.to_string(),
                _ => return None,
            };
            if symbol.ty != ExprType::Permutation {
                return None;
            }
            let item = symbol.items.iter().position(|it| *it == wanted)?;
            Num::Position {
                param,
                item: u32::try_from(item).ok()?,
                n: u32::try_from(symbol.items.len()).ok()?,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::parser::parse;
    use super::*;

    fn symbols(n: usize) -> Vec<Symbol> {
        (0..n)
            .map(|i| Symbol::new(format!("p{i}"), ExprType::Int))
            .collect()
    }

    fn can_hold(src: &str, ranges: &[(f64, f64)]) -> bool {
        let c = Cond::of(&parse(src).unwrap(), &symbols(ranges.len())).expect(src);
        c.can_hold(&|p| Interval {
            lo: ranges[p].0,
            hi: ranges[p].1,
            integral: ranges[p].0.fract() == 0.0 && ranges[p].1.fract() == 0.0,
        })
    }

    #[test]
    fn sums_and_products_prune_what_cannot_hold() {
        // p0 + p1 + p2 == 27 with p0 assigned 0 and the others at most 9: at most 18.
        assert!(!can_hold(
            "p0 + p1 + p2 == 27",
            &[(0.0, 0.0), (0.0, 9.0), (0.0, 9.0)]
        ));
        assert!(can_hold(
            "p0 + p1 + p2 == 27",
            &[(9.0, 9.0), (0.0, 9.0), (0.0, 9.0)]
        ));
        assert!(!can_hold("p0 * p1 <= 10", &[(4.0, 4.0), (3.0, 8.0)]));
        assert!(can_hold("p0 * p1 <= 12", &[(4.0, 4.0), (3.0, 8.0)]));
        assert!(!can_hold("32 <= p0 * p1 <= 64", &[(1.0, 1.0), (1.0, 16.0)]));
        assert!(!can_hold("-p0 > 0", &[(0.0, 5.0)]));
        assert!(can_hold("p0 / p1 >= 2", &[(4.0, 4.0), (1.0, 2.0)]));
        // Quotients are widened by a relative 1e-12, so an exact boundary is not pruned.
        assert!(can_hold("p0 / p1 > 4", &[(4.0, 4.0), (1.0, 2.0)]));
        assert!(!can_hold("p0 / p1 > 4.001", &[(4.0, 4.0), (1.0, 2.0)]));
    }

    #[test]
    fn logic_follows_truthiness() {
        let r = [(0.0, 0.0), (0.0, 9.0)];
        assert!(!can_hold("p0 > 1 and p1 > 0", &r));
        assert!(can_hold("p0 > 1 or p1 > 0", &r));
        assert!(!can_hold("p0 > 1 or p1 > 9", &r));
        assert!(!can_hold("not (p0 < 1)", &r));
        assert!(can_hold("not (p0 < 1 and p1 > 5)", &r));
        assert!(!can_hold("p0 != 0", &r));
        assert!(can_hold("p0 != p1", &r));
        assert!(can_hold("(p1 if p0 > 0 else 3) == 3", &r));
        assert!(!can_hold("(p1 + 20 if p0 > 0 else 30) < 20", &r));
    }

    #[test]
    fn what_is_not_bounded_never_prunes() {
        let r = [(0.0, 0.0), (0.0, 9.0)];
        for src in [
            "p0 % 2 == 1",
            "p0 // 2 == 1",
            "p0 ** 2 == 1",
            "p0 in [1, 2]",
            "max(p0, p1) > 100",
            "p0 / (p1 - 3) > 100",
            "p0 > 1 or p0 in [3]",
        ] {
            let c = Cond::of(&parse(src).unwrap(), &symbols(2));
            assert!(
                c.is_none()
                    || c.unwrap().can_hold(&|p| Interval {
                        lo: r[p].0,
                        hi: r[p].1,
                        integral: true
                    }),
                "{src}"
            );
        }
    }

    #[test]
    fn positions_of_a_permutations_items_are_bounded() {
        let order = Symbol::permutation("order", ["0", "1", "2", "3"].map(String::from).to_vec());
        let syms = vec![order, Symbol::new("x", ExprType::Int)];
        let packed = |o: &[u32]| match Symbol::pack_permutation(o) {
            crate::expr::Scalar::Int(v) => v as f64,
            _ => unreachable!(),
        };
        let holds = |src: &str, order: Option<&[u32]>, x: (f64, f64)| {
            let c = Cond::of(&parse(src).unwrap(), &syms).expect(src);
            c.can_hold(&|p| match (p, order) {
                (0, Some(o)) => Interval::point(packed(o), true),
                (0, None) => Interval::unbounded(),
                _ => Interval {
                    lo: x.0,
                    hi: x.1,
                    integral: true,
                },
            })
        };
        // Item 3 first, item 0 last: `order.index(0) < order.index(3)` cannot hold.
        let late = [3, 1, 2, 0];
        assert!(!holds(
            "order.index(0) < order.index(3)",
            Some(&late),
            (0.0, 0.0)
        ));
        assert!(holds(
            "order.index(0) > order.index(3)",
            Some(&late),
            (0.0, 0.0)
        ));
        assert!(!holds("order.index('1') + x > 4", Some(&late), (0.0, 2.0)));
        assert!(holds("order.index('1') + x > 2", Some(&late), (0.0, 2.0)));
        // Not assigned yet: any position from 0 to 3.
        assert!(!holds("order.index(2) > x", None, (3.0, 5.0)));
        assert!(holds("order.index(2) > x", None, (2.0, 5.0)));
        // An item the permutation lacks is not bounded (the compiler names the mistake).
        assert!(Cond::of(&parse("order.index(7) < x").unwrap(), &syms).is_none());
    }

    #[test]
    fn rounding_never_excludes_a_feasible_value() {
        // 2^60 + 1 is not representable: the widened interval still admits equality.
        let big = 1_152_921_504_606_846_976.0f64;
        assert!(can_hold(
            "p0 * p1 == 1152921504606846977",
            &[(big, big), (1.0, 1.0)]
        ));
        assert!(can_hold(
            "p0 + p1 == 0.30000000000000004",
            &[(0.1, 0.1), (0.2, 0.2)]
        ));
    }
}
