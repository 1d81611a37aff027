//! Constant Python expressions: T1 `Values` lists and scalar constants.

use super::Literal;
use super::ast::Span;
use super::error::{ExprError, ExprErrorKind};
use super::interp::{IErr, Interp, Value};
use super::parser::parse;

fn literal(v: Value, span: &Span) -> Result<Literal, ExprError> {
    Ok(match v {
        Value::Int(i) => Literal::Int(i),
        Value::Real(r) => Literal::Real(r),
        Value::Bool(b) => Literal::Bool(b),
        Value::Str(s) => Literal::Str(s),
        other => {
            return Err(ExprError::new(
                ExprErrorKind::Type,
                span.clone(),
                format!(
                    "expected a number, boolean or string, found a `{}`",
                    other.type_name()
                ),
            ));
        }
    })
}

/// Evaluates a constant Python list expression (T1 `Values`), e.g.
/// `[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))` or `[2**i for i in range(0, 6)]`.
///
/// Supports list and tuple literals, `range(...)` (also bare, as a list), `list(...)`, list
/// comprehensions with `for` and `if` clauses, `+` concatenation, `*` repetition, and the
/// scalar language of constraints inside elements. Elements must be numbers, booleans or
/// strings. Lists longer than 10 million elements are an error. Spans are byte offsets
/// into `source`.
pub fn eval_list(source: &str) -> Result<Vec<Literal>, ExprError> {
    let tree = parse(source)?;
    let mut interp = Interp::new(Vec::new());
    let v = interp.eval(&tree).map_err(IErr::into_expr_error)?;
    let items = match v {
        Value::List(items) => items,
        r @ Value::Range(..) => interp
            .to_list(r, &tree.span)
            .map_err(IErr::into_expr_error)?,
        other => {
            return Err(ExprError::new(
                ExprErrorKind::Type,
                tree.span,
                format!("expected a list, found a `{}`", other.type_name()),
            )
            .with_help("write the values as a list, e.g. `[16, 32, 64]`"));
        }
    };
    items.into_iter().map(|x| literal(x, &tree.span)).collect()
}

/// Evaluates a constant scalar Python expression, e.g. `2**10 // 3` or `'a'`.
pub fn eval_const(source: &str) -> Result<Literal, ExprError> {
    let tree = parse(source)?;
    let v = Interp::new(Vec::new())
        .eval(&tree)
        .map_err(IErr::into_expr_error)?;
    literal(v, &tree.span)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Literal::{Int, Real, Str};

    fn ints(v: impl IntoIterator<Item = i64>) -> Vec<Literal> {
        v.into_iter().map(Int).collect()
    }

    #[test]
    fn t1_examples() {
        assert_eq!(eval_list("[16, 32, 48]").unwrap(), ints([16, 32, 48]));
        assert_eq!(
            eval_list("['a', \"b\"]").unwrap(),
            vec![Str("a".into()), Str("b".into())]
        );
        assert_eq!(eval_list("range(4)").unwrap(), ints(0..4));
        assert_eq!(eval_list("range(1, 10, 3)").unwrap(), ints([1, 4, 7]));
        assert_eq!(
            eval_list("list(range(10, 0, -4))").unwrap(),
            ints([10, 6, 2])
        );
        assert_eq!(
            eval_list("[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))").unwrap(),
            ints([1, 2, 4, 8, 16].into_iter().chain((32..=1024).step_by(32)))
        );
        assert_eq!(
            eval_list("[2**i for i in range(0, 6)]").unwrap(),
            ints([1, 2, 4, 8, 16, 32])
        );
        assert_eq!(
            eval_list("[i for i in range(1, 10+1)]").unwrap(),
            ints(1..=10)
        );
        assert_eq!(
            eval_list("[i for i in range(20) if i % 3 == 0 if i > 0]").unwrap(),
            ints([3, 6, 9, 12, 15, 18])
        );
        assert_eq!(
            eval_list("[x * 2 for x in [1, 5, 7]]").unwrap(),
            ints([2, 10, 14])
        );
        assert_eq!(
            eval_list("[i * 10 + j for i in range(2) for j in range(1, 3)]").unwrap(),
            ints([1, 2, 11, 12])
        );
        assert_eq!(
            eval_list("[1.5, 2e3, 2**-1]").unwrap(),
            vec![Real(1.5), Real(2000.0), Real(0.5)]
        );
        assert_eq!(eval_list("(1, 2)").unwrap(), ints([1, 2]));
        assert_eq!(eval_list("[0] * 3").unwrap(), ints([0, 0, 0]));
        assert_eq!(eval_list("[]").unwrap(), vec![]);
        assert_eq!(
            eval_list("[True, 1 / 4]").unwrap(),
            vec![Literal::Bool(true), Real(0.25)]
        );
        assert_eq!(eval_list("range(5, 0)").unwrap(), vec![]);
        assert_eq!(
            eval_list("[i for i in range(3) for i in range(i)]").unwrap(),
            ints([0, 0, 1])
        );
    }

    #[test]
    fn constants() {
        assert_eq!(eval_const("2**10 // 3").unwrap(), Int(341));
        assert_eq!(eval_const("-7 // 2").unwrap(), Int(-4));
        assert_eq!(eval_const("'abc'").unwrap(), Str("abc".into()));
        assert_eq!(eval_const("max(3, 4.5)").unwrap(), Real(4.5));
        assert_eq!(eval_const("round(2.5)").unwrap(), Int(2));
        assert_eq!(eval_const("1 < 2 < 3").unwrap(), Literal::Bool(true));
    }

    fn err(s: &str) -> ExprError {
        eval_list(s).expect_err(s)
    }

    #[test]
    fn errors() {
        let e = err("range(0, 10, 0)");
        assert_eq!(e.kind, ExprErrorKind::Eval);
        assert_eq!(e.span, 0..15);
        assert_eq!(err("range(10**8)").kind, ExprErrorKind::Eval);
        assert_eq!(err("list(range(10**8))").kind, ExprErrorKind::Eval);
        assert_eq!(err("[0] * 10**8").kind, ExprErrorKind::Eval);
        let tree = parse("[i for i in range(10**9) for j in range(10**9) if False]").unwrap();
        let mut interp = Interp::new(Vec::new());
        interp.max_steps = 1000;
        let e = interp.eval(&tree).unwrap_err().into_expr_error();
        assert_eq!(e.kind, ExprErrorKind::Eval);
        assert_eq!(e.message, "comprehension runs more than 1000 iterations");
        assert_eq!(err("[1, 2] + [3] * 9999999").kind, ExprErrorKind::Eval);
        let e = err("[i for i in range(4) if j]");
        assert_eq!(e.kind, ExprErrorKind::UnknownName);
        assert_eq!(e.span, 24..25);
        let e = err("[1, 2, 3");
        assert_eq!(e.kind, ExprErrorKind::Parse);
        assert_eq!(e.span, 8..8);
        assert_eq!(err("[1 // 0]").kind, ExprErrorKind::Eval);
        assert_eq!(err("[2**64]").message, "numeric overflow");
        assert_eq!(err("[[1], 2]").kind, ExprErrorKind::Type);
        assert_eq!(err("5").kind, ExprErrorKind::Type);
        assert_eq!(err("range(1.5)").kind, ExprErrorKind::Type);
        assert_eq!(err("[1] + 2").kind, ExprErrorKind::Type);
        assert_eq!(err("[foo(1)]").kind, ExprErrorKind::Unsupported);
        assert_eq!(err("[x for x in 5]").kind, ExprErrorKind::Type);
        assert_eq!(err("['a' < 1]").kind, ExprErrorKind::Type);
        assert_eq!(err("[1, 'x'").kind, ExprErrorKind::Parse);
    }
}
