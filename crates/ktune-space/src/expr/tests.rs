//! Cross-module tests: Python semantics of compiled constraints, errors and their rendering,
//! golden results computed by CPython (`testdata/gen_golden.py`), and property tests against
//! the reference interpreter.

use super::compile::Compiler;
use super::interp::{IErr, Interp, Value};
use super::parser::parse;
use super::*;

/// Parameters used by the unit tests.
fn symbols() -> Vec<Symbol> {
    use ExprType::*;
    [
        ("x", Int),
        ("y", Int),
        ("z", Int),
        ("r", Real),
        ("s", Real),
        ("b", Bool),
        ("c", Str),
        ("p", Permutation),
        ("block_size_x", Int),
        ("block_size_y", Int),
        ("tile", Int),
    ]
    .into_iter()
    .map(|(n, t)| Symbol::new(n, t))
    .collect()
}

/// `x=7 y=-3 z=0 r=2.5 s=-0.5 b=True c='a'`, block sizes 32 x 8, tile 4.
fn default_values(interner: &mut Interner) -> Vec<Scalar> {
    vec![
        Scalar::Int(7),
        Scalar::Int(-3),
        Scalar::Int(0),
        Scalar::Real(2.5),
        Scalar::Real(-0.5),
        Scalar::Bool(true),
        Scalar::Str(interner.intern("a")),
        Scalar::Int(0),
        Scalar::Int(32),
        Scalar::Int(8),
        Scalar::Int(4),
    ]
}

/// The interpreter environment equivalent to `values`.
pub(super) fn env_for(
    symbols: &[Symbol],
    values: &[Scalar],
    interner: &Interner,
) -> Vec<(String, Value)> {
    symbols
        .iter()
        .zip(values)
        .filter(|(s, _)| s.ty != ExprType::Permutation)
        .map(|(s, v)| {
            let v = match *v {
                Scalar::Int(i) => Value::Int(i),
                Scalar::Real(r) => Value::Real(r),
                Scalar::Bool(b) => Value::Bool(b),
                Scalar::Str(id) => Value::Str(interner.resolve(id).to_string()),
            };
            (s.name.clone(), v)
        })
        .collect()
}

fn as_int(s: &Scalar) -> Option<i64> {
    match *s {
        Scalar::Int(i) => Some(i),
        Scalar::Bool(b) => Some(i64::from(b)),
        _ => None,
    }
}

/// Whether a compiled result and an interpreter result are the same Python value
/// (bool and int are interchangeable, floats must match bit for bit).
pub(super) fn agree(
    compiled: &Result<Scalar, EvalError>,
    reference: &Result<Value, IErr>,
    interner: &Interner,
) -> bool {
    match (compiled, reference) {
        (Err(a), Err(IErr::Eval(b, _))) => a == b,
        (Ok(a), Ok(b)) => match (a, b) {
            (Scalar::Real(x), Value::Real(y)) => {
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
            }
            (Scalar::Str(id), Value::Str(s)) => interner.resolve(*id) == s,
            (_, Value::Int(i)) => as_int(a) == Some(*i),
            (_, Value::Bool(v)) => as_int(a) == Some(i64::from(*v)),
            _ => false,
        },
        _ => false,
    }
}

/// Compiles `src` as a value and evaluates it; also checks that the interpreter agrees and
/// that the constraint's truthiness matches.
fn run_with(
    src: &str,
    symbols: &[Symbol],
    values: &[Scalar],
    interner: &mut Interner,
) -> Result<Scalar, EvalError> {
    let tree = parse(src).unwrap_or_else(|e| panic!("{}", e.render(src)));
    let mut compiler = Compiler::new(symbols, interner);
    let compiled = compiler
        .expr(&tree)
        .unwrap_or_else(|e| panic!("{}", e.render(src)))
        .into_scalar_fn();
    let got = compiled(values);
    let reference = Interp::new(env_for(symbols, values, interner)).eval(&tree);
    assert!(
        agree(&got, &reference, interner),
        "{src}: compiled {got:?} vs interpreter {reference:?}"
    );
    if !matches!(got, Ok(Scalar::Str(_))) {
        let c = Constraint::compile(src, symbols, interner).unwrap();
        let truth = c.evaluate(values);
        let expected = got.map(|v| match v {
            Scalar::Int(i) => i != 0,
            Scalar::Real(r) => r != 0.0,
            Scalar::Bool(b) => b,
            Scalar::Str(_) => unreachable!(),
        });
        assert_eq!(truth, expected, "{src}");
    }
    got
}

fn run(src: &str) -> Result<Scalar, EvalError> {
    let mut interner = Interner::default();
    let values = default_values(&mut interner);
    run_with(src, &symbols(), &values, &mut interner)
}

#[track_caller]
fn int(src: &str) -> i64 {
    match run(src) {
        Ok(Scalar::Int(i)) => i,
        other => panic!("{src}: expected an int, got {other:?}"),
    }
}

#[track_caller]
fn real(src: &str) -> f64 {
    match run(src) {
        Ok(Scalar::Real(r)) => r,
        other => panic!("{src}: expected a float, got {other:?}"),
    }
}

#[track_caller]
fn truth(src: &str) -> bool {
    match run(src) {
        Ok(Scalar::Bool(b)) => b,
        other => panic!("{src}: expected a bool, got {other:?}"),
    }
}

#[track_caller]
fn fails(src: &str) -> EvalError {
    match run(src) {
        Err(e) => e,
        other => panic!("{src}: expected an error, got {other:?}"),
    }
}

fn compile_err(src: &str) -> ExprError {
    let mut interner = Interner::default();
    Constraint::compile(src, &symbols(), &mut interner).expect_err(src)
}

#[test]
fn floor_division_and_modulo() {
    assert_eq!(int("-7 // 2"), -4);
    assert_eq!(int("7 // -2"), -4);
    assert_eq!(int("-7 % 2"), 1);
    assert_eq!(int("7 % -2"), -1);
    assert_eq!(int("x // y"), -3);
    assert_eq!(int("x % y"), -2);
    assert_eq!(int("-x % 3"), 2);
    assert_eq!(real("-7.5 // 2"), -4.0);
    assert_eq!(real("-7.5 % 2"), 0.5);
    assert_eq!(real("r // s"), -5.0);
    let m = real("r % s");
    assert!(m == 0.0 && m.is_sign_negative());
    assert_eq!(real("7 // 2.0"), 3.0);
    assert_eq!(fails("x // z"), EvalError::DivisionByZero);
    assert_eq!(fails("x % z"), EvalError::DivisionByZero);
    assert_eq!(fails("r // 0.0"), EvalError::DivisionByZero);
    assert_eq!(fails("r % z"), EvalError::DivisionByZero);
}

#[test]
fn true_division() {
    assert_eq!(real("7 / 2"), 3.5);
    assert_eq!(real("x / 7"), 1.0);
    assert_eq!(real("y / 2"), -1.5);
    assert_eq!(real("r / 2"), 1.25);
    assert_eq!(real("b / 2"), 0.5);
    assert_eq!(fails("1 / z"), EvalError::DivisionByZero);
    assert_eq!(fails("r / 0.0"), EvalError::DivisionByZero);
}

#[test]
fn powers() {
    assert_eq!(int("2 ** 10"), 1024);
    assert_eq!(real("2 ** -1"), 0.5);
    assert_eq!(int("-2 ** 2"), -4);
    assert_eq!(int("(-2) ** 2"), 4);
    assert_eq!(int("2 ** 3 ** 2"), 512);
    assert_eq!(int("x ** 2"), 49);
    assert_eq!(real("x ** y"), 1.0 / 343.0);
    assert_eq!(real("2.0 ** 3"), 8.0);
    assert_eq!(real("r ** 2"), 6.25);
    assert_eq!(int("-x ** 2"), -49);
    assert_eq!(fails("(-8) ** (1/3)"), EvalError::ComplexResult);
    assert_eq!(fails("0 ** -1"), EvalError::DivisionByZero);
    assert_eq!(fails("2 ** 63"), EvalError::Overflow);
    assert_eq!(fails("10.0 ** 400"), EvalError::Overflow);
    assert_eq!(fails("x ** 100"), EvalError::Overflow);
}

#[test]
fn integer_overflow() {
    assert_eq!(int("2 ** 62 + (2 ** 62 - 1)"), i64::MAX);
    assert_eq!(fails("2 ** 62 + 2 ** 62"), EvalError::Overflow);
    assert_eq!(fails("-((-2) ** 63)"), EvalError::Overflow);
    assert_eq!(fails("abs((-2) ** 63)"), EvalError::Overflow);
    assert_eq!(fails("(-2) ** 63 // -1"), EvalError::Overflow);
    assert_eq!(int("(-2) ** 63 % -1"), 0);
    assert_eq!(fails("x * 2 ** 62"), EvalError::Overflow);
}

#[test]
fn comparisons_and_chains() {
    assert!(truth("1 < x < 10"));
    assert!(!truth("1 < x > 10"));
    assert!(truth("32 <= block_size_x * block_size_y <= 1024"));
    assert!(
        !truth("x < y < 1 // z"),
        "short-circuits before the division"
    );
    assert_eq!(fails("z < x < 1 // z"), EvalError::DivisionByZero);
    assert!(truth("y < z <= x != 3"));
    assert!(truth("x == 7.0"));
    assert!(truth("1 == 1.0"));
    assert!(truth("2**53 + 1 != float(2**53)"));
    assert!(truth("2**53 + 1 > float(2**53)"));
    assert!(truth("0.1 + 0.2 != 0.3"));
    assert!(truth("x > r"));
    assert!(truth("s < x"));
    assert!(truth("r <= 2.5 < x"));
    assert!(truth("1 < 2 < 3 < 4 < 5"));
    assert!(!truth("1 < 2 < 3 < 4 < 4"));
}

#[test]
fn bool_int_float_mixing() {
    assert!(truth("True == 1"));
    assert_eq!(int("True + True"), 2);
    assert_eq!(int("b + 1"), 2);
    assert_eq!(int("b * x"), 7);
    assert_eq!(int("-b"), -1);
    assert_eq!(int("+b"), 1);
    assert!(truth("b == 1.0"));
    assert_eq!(real("x + r"), 9.5);
    assert_eq!(real("float(b)"), 1.0);
    assert!(truth("b < 2 < 3"));
}

#[test]
fn membership() {
    assert!(truth("x in [1, 7, 9]"));
    assert!(truth("x not in [1, 2]"));
    assert!(truth("x in (7,)"));
    assert!(truth("x in [7.0, 8]"));
    assert!(truth("r in [2.5, 3]"));
    assert!(truth("x in [y + 10, 0]"));
    assert!(truth("c in ['a', 'b']"));
    assert!(truth("c not in ['zz']"));
    assert!(!truth("c in []"));
    assert!(truth("b in [1]"));
    assert!(!truth("tile not in [2, 4, 8]"));
    assert_eq!(fails("x in [7, 1 // z]"), EvalError::DivisionByZero);
}

#[test]
fn conditional_expression() {
    assert_eq!(int("x if b else y"), 7);
    assert_eq!(int("x if not b else y"), -3);
    assert_eq!(real("1 if z else 2.5"), 2.5);
    // Mixed int/float branches keep the chosen branch's type.
    assert_eq!(run("x if b else 2.5"), Ok(Scalar::Int(7)));
    assert_eq!(run("(x if b else 2.5) // 2"), Ok(Scalar::Int(3)));
    assert_eq!(run("(x if z else 2.5) // 2"), Ok(Scalar::Real(1.0)));
    assert_eq!(int("1 // z if z else -1"), -1);
    assert!(truth("c == ('a' if b else 'b')"));
}

#[test]
fn builtin_functions() {
    assert_eq!(int("min(x, y)"), -3);
    assert_eq!(int("max(x, y, z)"), 7);
    assert_eq!(int("max([x, y, z])"), 7);
    assert_eq!(int("min((x, 3))"), 3);
    assert_eq!(run("max(x, 7.0)"), Ok(Scalar::Int(7)));
    assert_eq!(run("max(7.0, x)"), Ok(Scalar::Real(7.0)));
    assert_eq!(run("min(r, x)"), Ok(Scalar::Real(2.5)));
    assert_eq!(real("min(s, r)"), -0.5);
    assert_eq!(int("abs(y)"), 3);
    assert_eq!(real("abs(s)"), 0.5);
    assert_eq!(int("abs(b)"), 1);
    assert_eq!(int("int(r)"), 2);
    assert_eq!(int("int(-2.7)"), -2);
    assert_eq!(int("int(x)"), 7);
    assert_eq!(real("float(x)"), 7.0);
    assert_eq!(int("round(2.5)"), 2);
    assert_eq!(int("round(3.5)"), 4);
    assert_eq!(int("round(-0.5)"), 0);
    assert_eq!(int("round(-2.5)"), -2);
    assert_eq!(int("round(r)"), 2);
    assert_eq!(int("round(x)"), 7);
    assert_eq!(int("round(r * 3)"), 8);
}

#[test]
fn truthiness_and_logic() {
    // Python's `and`/`or` give the deciding operand, not a bool.
    assert_eq!(int("x and y"), -3);
    assert_eq!(real("z or 0.0"), 0.0);
    assert!(truth("(x or 0) == x"));
    assert!(truth("(y and x) == x"));
    assert_eq!(int("(z or 5) + 1"), 6);
    assert_eq!(int("(x and 0) + 2"), 2);
    assert!(truth("(b and x) == x"));
    assert!(truth("not z"));
    assert!(!truth("not x == 7"));
    assert!(truth("x > 1 and y < 0 or False"));
    assert_eq!(int("z and 1 // z"), 0, "short-circuit");
    assert_eq!(int("x or 1 // z"), 7, "short-circuit");
    assert_eq!(fails("1 // z and x"), EvalError::DivisionByZero);
    assert_eq!(fails("x and 1 // z"), EvalError::DivisionByZero);
    // A numeric constraint is allowed: Python truthiness.
    let mut interner = Interner::default();
    let values = default_values(&mut interner);
    let c = Constraint::compile("x - 7", &symbols(), &mut interner).unwrap();
    assert_eq!(c.evaluate(&values), Ok(false));
    let c = Constraint::compile("r", &symbols(), &mut interner).unwrap();
    assert_eq!(c.evaluate(&values), Ok(true));
}

#[test]
fn strings() {
    assert!(truth("c == 'a'"));
    assert!(truth("c != 'b'"));
    assert!(truth("c == c"));
    assert!(truth("'a' == c"));
    assert!(!truth("c == 'not a value'"));
    assert!(truth("c == 'a' == c"));
    assert!(truth("\"a\" == c"));
}

#[test]
fn precedence() {
    assert_eq!(int("1 + 2 * 3"), 7);
    assert_eq!(int("(1 + 2) * 3"), 9);
    assert_eq!(int("2 * 3 % 4"), 2);
    assert_eq!(int("x - y - z"), 10);
    assert_eq!(int("x // 2 * 2"), 6);
    assert_eq!(real("2 ** -x * 0 + 1"), 1.0);
    assert_eq!(int("- - x"), 7);
    assert!(!truth("not x + y"));
    assert!(truth("x > 1 and not y > 0"));
    assert!(truth("True or False and False"));
    assert!(!truth("(True or False) and False"));
    assert_eq!(real("1e3 // 1 + 0x10 if True else 0"), 1016.0);
}

#[test]
fn constant_folding_and_params() {
    let mut interner = Interner::default();
    let syms = symbols();
    let c = Constraint::compile("1 + 2 < 4", &syms, &mut interner).unwrap();
    assert!(c.params().is_empty());
    assert_eq!(c.evaluate(&[]), Ok(true));
    let c = Constraint::compile(
        "tile % 2 == 0 and block_size_x * block_size_y <= 1024 and tile > 0",
        &syms,
        &mut interner,
    )
    .unwrap();
    assert_eq!(c.params(), &[8, 9, 10]);
    assert_eq!(
        c.source(),
        "tile % 2 == 0 and block_size_x * block_size_y <= 1024 and tile > 0"
    );
    // A constant error is raised at evaluation time (the configuration is infeasible).
    let c = Constraint::compile("x > 1 // 0", &syms, &mut interner).unwrap();
    let values = default_values(&mut interner);
    assert_eq!(c.evaluate(&values), Err(EvalError::DivisionByZero));
    assert!(!c.is_satisfied(&values));
    // Constant conditions drop the dead branch's parameters' reads but still list them.
    let c = Constraint::compile("False and x > 1", &syms, &mut interner).unwrap();
    assert_eq!(c.params(), &[0]);
    assert_eq!(c.evaluate(&[]), Ok(false));
}

#[test]
fn bad_values_are_errors_not_panics() {
    let mut interner = Interner::default();
    let syms = symbols();
    let c = Constraint::compile("tile > 2", &syms, &mut interner).unwrap();
    assert_eq!(c.evaluate(&[Scalar::Int(1)]), Err(EvalError::MissingValue));
    let mut values = default_values(&mut interner);
    values[10] = Scalar::Real(1.0);
    assert_eq!(c.evaluate(&values), Err(EvalError::TypeMismatch));
    assert!(!c.is_satisfied(&values));
    // Ints are accepted for float parameters.
    let c = Constraint::compile("r > 2", &syms, &mut interner).unwrap();
    values[3] = Scalar::Int(3);
    assert_eq!(c.evaluate(&values), Ok(true));
}

#[test]
fn constraint_is_clone_send_sync_debug() {
    fn assert_traits<T: Clone + Send + Sync + std::fmt::Debug + 'static>() {}
    assert_traits::<Constraint>();
    let mut interner = Interner::default();
    let c = Constraint::compile("x < 3", &symbols(), &mut interner).unwrap();
    assert_eq!(
        format!("{c:?}"),
        "Constraint { source: \"x < 3\", params: [0] }"
    );
    let c2 = c.clone();
    let h = std::thread::spawn(move || c2.evaluate(&[Scalar::Int(1)]));
    assert_eq!(h.join().unwrap(), Ok(true));
    let f = Constraint::from_fn(
        "x even",
        vec![0, 0],
        |v| matches!(v[0], Scalar::Int(i) if i % 2 == 0),
    );
    assert_eq!(f.params(), &[0]);
    assert_eq!(f.source(), "x even");
    assert_eq!(f.evaluate(&[Scalar::Int(4)]), Ok(true));
    assert!(!f.is_satisfied(&[Scalar::Int(3)]));
}

#[test]
fn interner() {
    let mut i = Interner::default();
    assert!(i.is_empty());
    let a = i.intern("a");
    let b = i.intern("b");
    assert_eq!(i.intern("a"), a);
    assert_ne!(a, b);
    assert_eq!(i.get("b"), Some(b));
    assert_eq!(i.get("c"), None);
    assert_eq!(i.resolve(b), "b");
    assert_eq!(i.resolve(99), "");
    assert_eq!(i.len(), 2);
}

// ----------------------------------------------------------------------------------------
// Errors

#[test]
fn lex_errors() {
    let e = compile_err("x $ 2");
    assert_eq!(e.kind, ExprErrorKind::Lex);
    assert_eq!(
        e.render("x $ 2"),
        "unexpected character `$`\n  x $ 2\n    ^"
    );
    let src = "c == 'abc";
    let e = compile_err(src);
    assert_eq!(e.kind, ExprErrorKind::Lex);
    assert_eq!(
        e.render(src),
        "unterminated string\n  c == 'abc\n       ^^^^\nhelp: add a closing '"
    );
    assert_eq!(
        compile_err("99999999999999999999 > x").kind,
        ExprErrorKind::Lex
    );
}

#[test]
fn parse_errors() {
    let src = "(x + 2";
    let e = compile_err(src);
    assert_eq!(e.kind, ExprErrorKind::Parse);
    assert_eq!(
        e.render(src),
        "expected `)` to close `(` opened at column 1, found end of input\n  (x + 2\n        ^"
    );
    let src = "x * * 2";
    assert_eq!(
        compile_err(src).render(src),
        "unexpected token `*`\n  x * * 2\n      ^"
    );
    let src = "min(x, y";
    assert_eq!(compile_err(src).span, 8..8);
    let src = "x = 2";
    assert_eq!(
        compile_err(src).render(src),
        "unexpected token `=`\n  x = 2\n    ^\nhelp: use `==` to compare values"
    );
    assert_eq!(compile_err("").kind, ExprErrorKind::Parse);
    assert_eq!(
        compile_err("   ").render("   "),
        "expected an expression, found end of input\n  \n     ^"
    );
}

#[test]
fn unknown_names() {
    let src = "block_sise_x * 2 <= 1024";
    let e = compile_err(src);
    assert_eq!(e.kind, ExprErrorKind::UnknownName);
    assert_eq!(e.span, 0..12);
    assert_eq!(
        e.render(src),
        "unknown name `block_sise_x`\n  block_sise_x * 2 <= 1024\n  ^^^^^^^^^^^^\nhelp: did you mean `block_size_x`?"
    );
    assert_eq!(
        compile_err("TILE > 2").help.as_deref(),
        Some("did you mean `tile`?")
    );
    assert_eq!(
        compile_err("x > 1 and true").help.as_deref(),
        Some("did you mean `True`?")
    );
    let e = compile_err("x + completely_different");
    assert_eq!(e.span, 4..24);
    assert_eq!(e.help, None);
    assert_eq!(e.message, "unknown name `completely_different`");
}

#[test]
fn type_errors() {
    let src = "c == 1";
    let e = compile_err(src);
    assert_eq!(e.kind, ExprErrorKind::Type);
    assert_eq!(
        e.render(src),
        "cannot compare a string with a number\n  c == 1\n  ^^^^^^"
    );
    assert_eq!(
        compile_err("x in [1, 'a']").message,
        "cannot compare a string with a number"
    );
    assert_eq!(
        compile_err("x < c < 2").message,
        "cannot compare a string with a number"
    );
    let e = compile_err("c + 1 > 2");
    assert_eq!(e.kind, ExprErrorKind::Type);
    assert_eq!(e.span, 0..1);
    assert!(e.message.contains("arithmetic on strings"), "{}", e.message);
    assert_eq!(compile_err("-c").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("c < 'b'").kind, ExprErrorKind::Type);
    let e = compile_err("p == 1");
    assert_eq!(e.kind, ExprErrorKind::Type);
    assert!(e.message.contains("`p` is a permutation"), "{}", e.message);
    assert!(
        e.help.as_deref().is_some_and(|h| h.contains("p.index(")),
        "{e:?}"
    );
    let e = compile_err("c");
    assert_eq!(e.kind, ExprErrorKind::Type);
    assert!(e.message.contains("string"), "{}", e.message);
    assert_eq!(compile_err("'a' if b else 'b'").kind, ExprErrorKind::Type);
    assert_eq!(
        compile_err("('a' if b else 1) == 1").kind,
        ExprErrorKind::Type
    );
    assert_eq!(compile_err("c and b").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("not c").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("abs(c) > 1").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("max(c, 'b') == 'a'").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("abs(x, y) > 1").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("min(x) > 1").kind, ExprErrorKind::Type);
    assert_eq!(compile_err("min([]) > 1").kind, ExprErrorKind::Type);
}

#[test]
fn unsupported_constructs() {
    let src = "foo(x) > 1";
    let e = compile_err(src);
    assert_eq!(e.kind, ExprErrorKind::Unsupported);
    assert_eq!(e.message, "function `foo` is not supported in constraints");
    assert_eq!(
        e.render(src),
        "function `foo` is not supported in constraints\n  foo(x) > 1\n  ^^^\nhelp: supported functions: min, max, abs, int, float, round"
    );
    for src in [
        "len(x)",
        "x & 1",
        "x << 1",
        "~x",
        "[i for i in range(3)]",
        "x in y",
        "x < y in [1]",
        "x == None",
        "round(r, 2)",
        "x is 1",
        "[1, 2]",
        "x[0]",
        "x.real",
        "range(3)",
    ] {
        assert_eq!(compile_err(src).kind, ExprErrorKind::Unsupported, "{src}");
    }
    assert_eq!(
        compile_err("mn(x, 1) > 0").help.as_deref(),
        Some("did you mean `min`? (supported functions: min, max, abs, int, float, round)")
    );
}

#[test]
fn errors_are_displayed_as_their_message() {
    let e = compile_err("x +");
    assert_eq!(e.to_string(), e.message);
    assert_eq!(
        EvalError::DivisionByZero.to_string(),
        "division or modulo by zero"
    );
}

// ----------------------------------------------------------------------------------------
// Golden results computed by CPython (testdata/gen_golden.py)

const GOLDEN: &str = include_str!("testdata/golden.tsv");

fn golden_scalar(text: &str, interner: &mut Interner) -> Scalar {
    let (ty, v) = text.split_once(':').expect("typed value");
    match ty {
        "int" => Scalar::Int(v.parse().expect("int")),
        "float" => Scalar::Real(v.parse().expect("float")),
        "bool" => Scalar::Bool(v == "True"),
        "str" => Scalar::Str(interner.intern(v)),
        _ => panic!("bad golden value {text}"),
    }
}

fn golden_literal(text: &str) -> Literal {
    let (ty, v) = text.split_once(':').expect("typed value");
    match ty {
        "int" => Literal::Int(v.parse().expect("int")),
        "float" => Literal::Real(v.parse().expect("float")),
        "bool" => Literal::Bool(v == "True"),
        "str" => Literal::Str(v.to_string()),
        _ => panic!("bad golden value {text}"),
    }
}

#[test]
fn golden_python_results() {
    let mut interner = Interner::default();
    let syms: Vec<Symbol> = ["x", "y", "z", "r", "s", "b", "c"]
        .iter()
        .zip([
            ExprType::Int,
            ExprType::Int,
            ExprType::Int,
            ExprType::Real,
            ExprType::Real,
            ExprType::Bool,
            ExprType::Str,
        ])
        .map(|(n, t)| Symbol::new(*n, t))
        .collect();
    let mut assignments: Vec<Vec<Scalar>> = Vec::new();
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in GOLDEN.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        match cols[0] {
            "A" => {
                let vals = cols[2..]
                    .iter()
                    .map(|kv| {
                        golden_scalar(kv.split_once('=').expect("name=value").1, &mut interner)
                    })
                    .collect();
                assignments.push(vals);
            }
            "E" => {
                let (src, idx, expected) = (cols[1], cols[2].parse::<usize>().unwrap(), cols[3]);
                let got = run_with(src, &syms, &assignments[idx], &mut interner);
                let ok = match expected.split_once(':') {
                    Some(("err", kind)) => got.is_err_and(|e| format!("{e:?}") == kind),
                    Some(("truth", v)) => {
                        let c = Constraint::compile(src, &syms, &mut interner).unwrap();
                        c.evaluate(&assignments[idx]) == Ok(v == "True")
                    }
                    Some(("float", _)) => match (got, golden_scalar(expected, &mut interner)) {
                        (Ok(Scalar::Real(a)), Scalar::Real(b)) => {
                            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
                        }
                        _ => false,
                    },
                    Some(("int" | "bool", _)) => {
                        let want = golden_scalar(expected, &mut interner);
                        got.is_ok_and(|g| as_int(&g).is_some() && as_int(&g) == as_int(&want))
                    }
                    Some(("str", _)) => got == Ok(golden_scalar(expected, &mut interner)),
                    _ => panic!("bad golden line {line}"),
                };
                if !ok {
                    failures.push(format!("{src} @ {idx}: expected {expected}, got {got:?}"));
                }
                checked += 1;
            }
            "L" => {
                let (src, expected) = (cols[1], cols[2]);
                let got = eval_list(src);
                let ok = if expected == "err:Eval" {
                    got.as_ref().is_err_and(|e| e.kind == ExprErrorKind::Eval)
                } else {
                    let want: Vec<Literal> = expected.split(';').map(golden_literal).collect();
                    got.as_ref() == Ok(&want)
                };
                if !ok {
                    failures.push(format!("list {src}: expected {expected}, got {got:?}"));
                }
                checked += 1;
            }
            _ => panic!("bad golden line {line}"),
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 700, "only {checked} golden results");
}

// ----------------------------------------------------------------------------------------
// Property tests

mod props {
    use super::*;
    use crate::expr::ast::{BinOp, BoolOp, Clause, CmpOp, Expr, ExprKind, UnaryOp};
    use proptest::prelude::*;
    use proptest::sample::select;

    fn mk(kind: ExprKind) -> Expr {
        Expr::new(kind, 0..0)
    }

    fn prop_symbols() -> Vec<Symbol> {
        vec![
            Symbol::new("i0", ExprType::Int),
            Symbol::new("i1", ExprType::Int),
            Symbol::new("r0", ExprType::Real),
            Symbol::new("b0", ExprType::Bool),
            Symbol::new("s0", ExprType::Str),
        ]
    }

    fn num_leaf() -> BoxedStrategy<Expr> {
        prop_oneof![
            3 => (0i64..5).prop_map(|v| mk(ExprKind::Int(v))),
            1 => select(vec![100i64, 1 << 31, 1 << 53, (1 << 53) + 1, 1 << 62, i64::MAX])
                .prop_map(|v| mk(ExprKind::Int(v))),
            2 => select(vec![0.0, 0.5, 1.5, 2.0, 2.5, 0.1, 3.0, 1e300, 1e-300, 9007199254740992.0])
                .prop_map(|v| mk(ExprKind::Real(v))),
            1 => any::<bool>().prop_map(|v| mk(ExprKind::Bool(v))),
            5 => select(vec!["i0", "i1", "r0", "b0"]).prop_map(|n| mk(ExprKind::Name(n.to_string()))),
        ]
        .boxed()
    }

    fn str_leaf() -> BoxedStrategy<Expr> {
        prop_oneof![
            select(vec!["a", "b", "c"]).prop_map(|s| mk(ExprKind::Str(s.to_string()))),
            Just(mk(ExprKind::Name("s0".to_string()))),
        ]
        .boxed()
    }

    fn str_expr(num: BoxedStrategy<Expr>) -> BoxedStrategy<Expr> {
        prop_oneof![
            3 => str_leaf(),
            1 => (str_leaf(), num, str_leaf())
                .prop_map(|(a, c, b)| mk(ExprKind::IfElse(Box::new(a), Box::new(c), Box::new(b)))),
        ]
        .boxed()
    }

    fn ordering_op() -> impl Strategy<Value = CmpOp> {
        select(vec![
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
            CmpOp::Eq,
            CmpOp::Ne,
        ])
    }

    fn in_op() -> impl Strategy<Value = CmpOp> {
        select(vec![CmpOp::In, CmpOp::NotIn])
    }

    fn list_of(items: Vec<Expr>, tuple: bool) -> Expr {
        if tuple && !items.is_empty() {
            mk(ExprKind::Tuple(items))
        } else {
            mk(ExprKind::List(items))
        }
    }

    /// Well-typed numeric (or bool) expressions over `i0, i1, r0, b0, s0`.
    fn num_expr() -> BoxedStrategy<Expr> {
        num_leaf()
            .prop_recursive(5, 40, 4, |inner| {
                let s = str_expr(inner.clone());
                prop_oneof![
                    (
                        select(vec![UnaryOp::Neg, UnaryOp::Pos, UnaryOp::Not]),
                        inner.clone()
                    )
                        .prop_map(|(op, a)| mk(ExprKind::Unary(op, Box::new(a)))),
                    (
                        select(vec![
                            BinOp::Add,
                            BinOp::Sub,
                            BinOp::Mul,
                            BinOp::Div,
                            BinOp::FloorDiv,
                            BinOp::Mod,
                            BinOp::Pow
                        ]),
                        inner.clone(),
                        inner.clone()
                    )
                        .prop_map(|(op, l, r)| mk(ExprKind::Binary(
                            op,
                            Box::new(l),
                            Box::new(r)
                        ))),
                    (
                        select(vec![BoolOp::And, BoolOp::Or]),
                        inner.clone(),
                        inner.clone()
                    )
                        .prop_map(|(op, l, r)| mk(ExprKind::BoolOp(
                            op,
                            Box::new(l),
                            Box::new(r)
                        ))),
                    (
                        inner.clone(),
                        prop::collection::vec((ordering_op(), inner.clone()), 1..4)
                    )
                        .prop_map(|(f, rest)| mk(ExprKind::Compare(Box::new(f), rest))),
                    (
                        s.clone(),
                        prop::collection::vec(
                            (select(vec![CmpOp::Eq, CmpOp::Ne]), s.clone()),
                            1..3
                        )
                    )
                        .prop_map(|(f, rest)| mk(ExprKind::Compare(Box::new(f), rest))),
                    (
                        inner.clone(),
                        in_op(),
                        prop::collection::vec(inner.clone(), 0..4),
                        any::<bool>()
                    )
                        .prop_map(|(x, op, items, t)| mk(ExprKind::Compare(
                            Box::new(x),
                            vec![(op, list_of(items, t))]
                        ))),
                    (s.clone(), in_op(), prop::collection::vec(s.clone(), 0..3)).prop_map(
                        |(x, op, items)| mk(ExprKind::Compare(
                            Box::new(x),
                            vec![(op, list_of(items, false))]
                        ))
                    ),
                    (inner.clone(), inner.clone(), inner.clone()).prop_map(|(a, c, b)| mk(
                        ExprKind::IfElse(Box::new(a), Box::new(c), Box::new(b))
                    )),
                    (
                        select(vec!["min", "max"]),
                        prop::collection::vec(inner.clone(), 1..4),
                        any::<bool>()
                    )
                        .prop_map(|(f, args, as_list)| {
                            let args = if as_list || args.len() == 1 {
                                vec![list_of(args, false)]
                            } else {
                                args
                            };
                            mk(ExprKind::Call(f.to_string(), 0..0, args))
                        }),
                    (select(vec!["abs", "int", "float", "round"]), inner)
                        .prop_map(|(f, a)| mk(ExprKind::Call(f.to_string(), 0..0, vec![a]))),
                ]
            })
            .boxed()
    }

    /// Assignments to `i0, i1, r0, b0, s0` (string ids 0..3 are "a", "b", "d").
    fn assignment() -> impl Strategy<Value = Vec<Scalar>> {
        let ints = prop_oneof![
            4 => -3i64..4,
            1 => select(vec![i64::MIN, i64::MAX, 1 << 31, -(1 << 53) - 1, 1 << 62, 64, 1024]),
            1 => any::<i64>(),
        ];
        let reals = prop_oneof![
            3 => select(vec![0.0, -0.0, 0.5, 1.0, 2.0, -2.5, 3.0, 1e300, -1e-300, f64::INFINITY, 9007199254740992.0]),
            1 => -100.0f64..100.0,
            1 => any::<f64>().prop_filter("no NaN parameter values", |f| !f.is_nan()),
        ];
        (ints.clone(), ints, reals, any::<bool>(), 0u32..3).prop_map(|(i0, i1, r0, b0, s0)| {
            vec![
                Scalar::Int(i0),
                Scalar::Int(i1),
                Scalar::Real(r0),
                Scalar::Bool(b0),
                Scalar::Str(s0),
            ]
        })
    }

    fn base_interner() -> Interner {
        let mut i = Interner::default();
        for s in ["a", "b", "d"] {
            i.intern(s);
        }
        i
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn compiled_agrees_with_interpreter(
            e in num_expr(),
            assignments in prop::collection::vec(assignment(), 1..6),
        ) {
            let src = e.to_string();
            let tree = parse(&src).map_err(|err| TestCaseError::fail(err.render(&src)))?;
            prop_assert_eq!(tree.without_spans(), e.clone(), "round trip of {}", src);
            let syms = prop_symbols();
            let mut interner = base_interner();
            let compiled = Compiler::new(&syms, &mut interner)
                .expr(&tree)
                .map_err(|err| TestCaseError::fail(err.render(&src)))?
                .into_scalar_fn();
            let constraint = Constraint::compile(&src, &syms, &mut interner)
                .map_err(|err| TestCaseError::fail(err.render(&src)))?;
            for values in &assignments {
                let got = compiled(values);
                let reference = Interp::new(env_for(&syms, values, &interner)).eval(&tree);
                prop_assert!(
                    agree(&got, &reference, &interner),
                    "{}\nvalues {:?}\ncompiled {:?}\ninterpreter {:?}", src, values, got, reference
                );
                let truth = constraint.evaluate(values);
                let want = reference.as_ref().map(Value::truthy).map_err(|e| match e {
                    IErr::Eval(e, _) => *e,
                    IErr::Expr(e) => panic!("{}", e.message),
                });
                prop_assert_eq!(truth, want, "{}", src);
            }
        }

        #[test]
        fn printing_and_reparsing_is_the_identity(
            e in num_expr(),
            comp in (num_expr(), select(vec!["i0", "k"]), num_expr(), num_expr(), any::<bool>()),
        ) {
            let src = e.to_string();
            let tree = parse(&src).map_err(|err| TestCaseError::fail(err.render(&src)))?;
            prop_assert_eq!(tree.without_spans(), e);
            // List comprehensions (only evaluated by `eval_list`, never compiled).
            let (elt, var, iter, cond, with_if) = comp;
            let iter = mk(ExprKind::Call("range".into(), 0..0, vec![iter]));
            let mut clauses = vec![Clause::For(var.to_string(), 0..0, iter)];
            if with_if {
                clauses.push(Clause::If(cond));
            }
            let lc = mk(ExprKind::ListComp(Box::new(elt), clauses));
            let src = lc.to_string();
            let tree = parse(&src).map_err(|err| TestCaseError::fail(err.render(&src)))?;
            prop_assert_eq!(tree.without_spans(), lc);
        }

        #[test]
        fn arbitrary_strings_never_panic(s in any::<String>()) {
            check_no_panic(&s);
        }

        #[test]
        fn token_soup_never_panics(toks in prop::collection::vec(select(vec![
            "x", "c", "p", "1", "2.5", "'a'", "\"b", "(", ")", "[", "]", ",", "+", "-", "*", "**",
            "/", "//", "%", "<", "<=", "==", "!=", "and", "or", "not", "in", "if", "else", "for",
            "min", "range", "True", "=", "&", ".", "é", " ", "0x", "1e", "#",
        ]), 0..30)) {
            check_no_panic(&toks.concat());
            check_no_panic(&toks.join(" "));
        }
    }

    fn check_no_panic(s: &str) {
        let syms = prop_symbols();
        let mut interner = base_interner();
        let values = [
            Scalar::Int(1),
            Scalar::Int(0),
            Scalar::Real(0.5),
            Scalar::Bool(true),
            Scalar::Str(0),
        ];
        match Constraint::compile(s, &syms, &mut interner) {
            Ok(c) => {
                let _ = c.evaluate(&values);
                let _ = c.evaluate(&[]);
            }
            Err(e) => {
                let _ = e.render(s);
                assert!(
                    e.span.start <= e.span.end && e.span.end <= s.len(),
                    "{s:?}: {e:?}"
                );
            }
        }
        if let Ok(tree) = parse(s) {
            // Bounded work: no `range`/repetition blow-ups in the soup, but stay safe.
            if !s.contains("range") && !s.contains('*') {
                let _ = eval_const(s);
                let _ = Interp::new(Vec::new()).eval(&tree);
            }
            let printed = tree.to_string();
            let again = parse(&printed).map(|t| t.without_spans());
            assert_eq!(
                again.ok(),
                Some(tree.without_spans()),
                "{s:?} printed as {printed:?}"
            );
        }
    }
}

/// A permutation of four loops next to an integer, for the permutation operations.
fn loop_symbols() -> Vec<Symbol> {
    vec![
        Symbol::permutation("order", ["i", "j", "k", "l"].map(String::from).to_vec()),
        Symbol::new("x", ExprType::Int),
    ]
}

#[test]
fn permutations_are_read_by_position_and_by_item() {
    let symbols = loop_symbols();
    let items = ["i", "j", "k", "l"];
    let sources = [
        ("order.index('i') < order.index('k')", false),
        ("order[0] == 'j'", false),
        ("order[-1] != 'i' and order.index('l') >= x", true),
        ("order.index('j') + order.index('k') == 3", false),
        ("order[1] in ['k', 'l'] or x > 2", true),
    ];
    // Every ordering of the four items (order[k] = the item at position k), x in 0..4.
    let mut orders = Vec::new();
    for a in 0..4u32 {
        for b in 0..4 {
            for c in 0..4 {
                for d in 0..4 {
                    let o = vec![a, b, c, d];
                    if (0..4).all(|i| o.contains(&i)) {
                        orders.push(o);
                    }
                }
            }
        }
    }
    assert_eq!(orders.len(), 24);
    for (src, uses_x) in sources {
        let mut interner = Interner::default();
        let constraint = Constraint::compile(src, &symbols, &mut interner)
            .unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(constraint.params(), &[0, 1][..if uses_x { 2 } else { 1 }]);
        let tree = parse(src).unwrap();
        for order in &orders {
            for x in 0..4 {
                let values = [Symbol::pack_permutation(order), Scalar::Int(x)];
                let got = constraint.evaluate(&values).unwrap();
                // The interpreter sees the permutation as Python sees a list of item names.
                let names: Vec<Value> = order
                    .iter()
                    .map(|&it| Value::Str(items[it as usize].to_string()))
                    .collect();
                let mut interp = Interp::new(vec![
                    ("order".into(), Value::List(names)),
                    ("x".into(), Value::Int(x)),
                ]);
                let want = interp.eval(&tree).map(|v| v.truthy()).ok();
                assert_eq!(Some(got), want, "{src} with order {order:?}, x = {x}");
            }
        }
    }
}

#[test]
fn permutation_misuse_is_a_clear_error() {
    let symbols = loop_symbols();
    let err = |src: &str| {
        let mut interner = Interner::default();
        Constraint::compile(src, &symbols, &mut interner).expect_err(src)
    };
    let e = err("order.index('m') < 2");
    assert_eq!(e.kind, ExprErrorKind::Type);
    assert!(
        e.message.contains("`m` is not an item") && e.message.contains("i, j, k, l"),
        "{e}"
    );
    assert_eq!(e.span, 12..15);
    let e = err("order.index('kk') < 2");
    assert_eq!(e.help.as_deref(), Some("did you mean `k`?"));
    let e = err("order[4] == 'i'");
    assert!(
        e.message.contains("out of range") && e.message.contains("0 to 3"),
        "{e}"
    );
    assert_eq!(err("order[-5] == 'i'").kind, ExprErrorKind::Type);
    let e = err("order[x] == 'i'");
    assert_eq!(e.kind, ExprErrorKind::Unsupported);
    assert!(e.message.contains("integer literal"), "{e}");
    let e = err("order.index(x) < 2");
    assert!(e.message.contains("a literal naming an item"), "{e}");
    let e = err("x[0] == 1");
    assert!(
        e.message
            .contains("only supported on permutation parameters"),
        "{e}"
    );
    let e = err("x.index('i') == 1");
    assert!(
        e.message
            .contains("only supported on permutation parameters"),
        "{e}"
    );
    let e = err("order.count('i') == 1");
    assert!(e.message.contains("method `count` is not supported"), "{e}");
    let e = err("order.index('i', 'j') == 1");
    assert!(e.message.contains("exactly one argument"), "{e}");
    let e = err("ordr[0] == 'i'");
    assert_eq!(e.kind, ExprErrorKind::UnknownName);
    // An item compared with a string that names none, in any form, is the same error as in
    // `.index(...)` (before, `==` decided every configuration and `in` passed silently).
    for (src, at) in [
        ("order[0] == 'q'", 12..15),
        ("'q' != order[1]", 0..3),
        ("order[0] in ['i', 'q']", 18..21),
        ("order[-1] not in ('kk',)", 18..22),
    ] {
        let e = err(src);
        assert_eq!(e.kind, ExprErrorKind::Type, "{src}");
        assert!(e.message.contains("is not an item"), "{src}: {e}");
        assert_eq!(e.span, at, "{src}");
    }
    assert_eq!(
        err("order[0] in ('kk',)").help.as_deref(),
        Some("did you mean `k`?")
    );
    // An item compares as a string only.
    assert_eq!(err("order[0] + 1 > 2").kind, ExprErrorKind::Type);
    // Attribute access without a call is not Python this language supports.
    assert_eq!(err("order.index > 1").kind, ExprErrorKind::Unsupported);
}

#[test]
fn permutation_operations_print_back_to_the_same_tree() {
    for src in [
        "order.index('i') < order[2]",
        "(order[-1] == 'k') == (x > order.index('j'))",
    ] {
        let tree = parse(src).unwrap();
        let printed = tree.to_string();
        assert_eq!(
            parse(&printed).unwrap().without_spans(),
            tree.without_spans(),
            "{printed}"
        );
    }
}

/// Long flat chains are not deep nesting: a 300-term `and` chain, a 2000-term `or` chain and
/// a 200-term sum compile and evaluate; the documented limit is a syntax tree 1000 levels tall.
#[test]
fn flat_chains_are_not_nesting() {
    let mut interner = Interner::default();
    let values = default_values(&mut interner);
    let syms = symbols();
    let and_chain = vec!["x > 0"; 300].join(" and ");
    let c = Constraint::compile(&and_chain, &syms, &mut interner).unwrap();
    assert_eq!(c.evaluate(&values), Ok(true));
    let or_chain = format!("{} or x == 7", vec!["x < 0"; 2000].join(" or "));
    let c = Constraint::compile(&or_chain, &syms, &mut interner).unwrap();
    assert_eq!(c.evaluate(&values), Ok(true));
    // The operand that decides, as in Python, also through a balanced chain.
    assert_eq!(int(&format!("{} or x", vec!["0"; 100].join(" or "))), 7);
    let sum = vec!["x"; 200].join(" + ");
    assert_eq!(int(&sum), 1400);
    let too_tall = vec!["x"; 1001].join(" + ");
    let e = Constraint::compile(&too_tall, &syms, &mut interner)
        .err()
        .unwrap();
    assert!(e.message.contains("more than 1000 levels"), "{}", e.message);
}
