//! Recursive-descent parser for the Python expression subset (Python precedence).

use super::ast::{BinOp, BoolOp, Clause, CmpOp, Expr, ExprKind, MAX_HEIGHT, Span, UnaryOp};
use super::error::{ExprError, ExprErrorKind};
use super::lexer::{Tok, Token, lex};

/// Maximum recursion depth of the parser (nested parentheses, unary operators, `**`).
const MAX_DEPTH: u32 = 32;

/// Parses a whole source string into one expression.
pub(crate) fn parse(src: &str) -> Result<Expr, ExprError> {
    let toks = lex(src)?;
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        depth: 0,
    };
    let e = p.expr()?;
    if p.peek() != &Tok::Eof {
        let t = p.tok().clone();
        return Err(match t.tok {
            Tok::RParen => parse_err(t.span, "unmatched `)`"),
            Tok::RBracket => parse_err(t.span, "unmatched `]`"),
            _ => p.unexpected(&t),
        });
    }
    Ok(e)
}

fn parse_err(span: Span, msg: impl Into<String>) -> ExprError {
    ExprError::new(ExprErrorKind::Parse, span, msg)
}

fn unsupported(span: Span, msg: impl Into<String>) -> ExprError {
    ExprError::new(ExprErrorKind::Unsupported, span, msg)
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    depth: u32,
}

impl Parser<'_> {
    fn tok(&self) -> &Token {
        // The token list always ends with Eof and `pos` never moves past it.
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek(&self) -> &Tok {
        &self.tok().tok
    }

    fn peek2(&self) -> &Tok {
        &self.toks[(self.pos + 1).min(self.toks.len() - 1)].tok
    }

    fn bump(&mut self) -> Token {
        let t = self.tok().clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Text of a token for messages.
    fn describe(&self, t: &Token) -> String {
        if t.tok == Tok::Eof {
            "end of input".to_string()
        } else {
            let text = self.src.get(t.span.clone()).unwrap_or("?");
            if text.chars().count() > 40 {
                let cut: String = text.chars().take(37).collect();
                format!("`{cut}...`")
            } else {
                format!("`{text}`")
            }
        }
    }

    /// The error for a token that cannot appear here.
    fn unexpected(&self, t: &Token) -> ExprError {
        match &t.tok {
            Tok::Eof => parse_err(t.span.clone(), "unexpected end of input"),
            Tok::Bitwise(op) => unsupported(
                t.span.clone(),
                format!("bitwise operator `{op}` is not supported"),
            ),
            Tok::Assign => parse_err(t.span.clone(), "unexpected token `=`")
                .with_help("use `==` to compare values"),
            Tok::Is => unsupported(t.span.clone(), "`is` is not supported")
                .with_help("use `==` or `!=` to compare values"),
            Tok::Dot => unsupported(t.span.clone(), "attribute access is not supported"),
            _ => parse_err(
                t.span.clone(),
                format!("unexpected token {}", self.describe(t)),
            ),
        }
    }

    /// Consumes the closing bracket `close` matching the opener at `open`.
    fn expect_close(&mut self, close: Tok, open: &Span) -> Result<Token, ExprError> {
        if self.peek() == &close {
            return Ok(self.bump());
        }
        let t = self.tok().clone();
        if matches!(t.tok, Tok::Bitwise(_) | Tok::Assign | Tok::Is | Tok::Dot) {
            return Err(self.unexpected(&t));
        }
        let (c, o) = if close == Tok::RParen {
            ("`)`", "`(`")
        } else {
            ("`]`", "`[`")
        };
        let col = self.src.get(..open.start).map_or(0, |s| s.chars().count()) + 1;
        Err(parse_err(
            t.span.clone(),
            format!(
                "expected {c} to close {o} opened at column {col}, found {}",
                self.describe(&t)
            ),
        ))
    }

    fn mk(&self, kind: ExprKind, span: Span) -> Result<Expr, ExprError> {
        let e = Expr::new(kind, span);
        if e.height > MAX_HEIGHT {
            return Err(parse_err(
                e.span,
                format!("expression is nested too deeply (more than {MAX_HEIGHT} levels)"),
            ));
        }
        Ok(e)
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(parse_err(
                self.tok().span.clone(),
                format!("expression is nested too deeply (more than {MAX_DEPTH} levels)"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// `expr := or_test ['if' or_test 'else' expr]`
    fn expr(&mut self) -> Result<Expr, ExprError> {
        self.enter()?;
        let r = self.expr_inner();
        self.leave();
        r
    }

    fn expr_inner(&mut self) -> Result<Expr, ExprError> {
        let body = self.or_test()?;
        if self.peek() != &Tok::If {
            return Ok(body);
        }
        let if_tok = self.bump();
        let cond = self.or_test()?;
        if !self.eat(&Tok::Else) {
            let t = self.tok().clone();
            return Err(parse_err(
                t.span.clone(),
                format!(
                    "expected `else` after the condition of `if` at offset {}, found {}",
                    if_tok.span.start,
                    self.describe(&t)
                ),
            )
            .with_help("a conditional expression is written `a if condition else b`"));
        }
        let orelse = self.expr()?;
        let span = body.span.start..orelse.span.end;
        self.mk(
            ExprKind::IfElse(Box::new(body), Box::new(cond), Box::new(orelse)),
            span,
        )
    }

    fn or_test(&mut self) -> Result<Expr, ExprError> {
        let mut items = vec![self.and_test()?];
        while self.eat(&Tok::Or) {
            items.push(self.and_test()?);
        }
        self.balanced(BoolOp::Or, items)
    }

    fn and_test(&mut self) -> Result<Expr, ExprError> {
        let mut items = vec![self.not_test()?];
        while self.eat(&Tok::And) {
            items.push(self.not_test()?);
        }
        self.balanced(BoolOp::And, items)
    }

    /// A chain `a op b op c ...` of one boolean operator as a balanced tree: `and` and `or`
    /// are associative in value and in what they evaluate (left to right, stopping at the
    /// operand that decides), so `(a and b) and c` and `a and (b and c)` are the same, and a
    /// chain of hundreds of conditions is a tree of height log2(n), not n.
    fn balanced(&self, op: BoolOp, mut items: Vec<Expr>) -> Result<Expr, ExprError> {
        if items.len() == 1 {
            return Ok(items.remove(0));
        }
        let right = items.split_off(items.len() / 2);
        let (l, r) = (self.balanced(op, items)?, self.balanced(op, right)?);
        let span = l.span.start..r.span.end;
        self.mk(ExprKind::BoolOp(op, Box::new(l), Box::new(r)), span)
    }

    fn not_test(&mut self) -> Result<Expr, ExprError> {
        if self.peek() != &Tok::Not {
            return self.comparison();
        }
        let t = self.bump();
        self.enter()?;
        let operand = self.not_test();
        self.leave();
        let operand = operand?;
        let span = t.span.start..operand.span.end;
        self.mk(ExprKind::Unary(UnaryOp::Not, Box::new(operand)), span)
    }

    fn comparison(&mut self) -> Result<Expr, ExprError> {
        let first = self.arith()?;
        let mut rest = Vec::new();
        loop {
            let op = match self.peek() {
                Tok::Lt => CmpOp::Lt,
                Tok::Le => CmpOp::Le,
                Tok::Gt => CmpOp::Gt,
                Tok::Ge => CmpOp::Ge,
                Tok::EqEq => CmpOp::Eq,
                Tok::Ne => CmpOp::Ne,
                Tok::In => CmpOp::In,
                Tok::Not if self.peek2() == &Tok::In => {
                    self.bump();
                    CmpOp::NotIn
                }
                Tok::Is => {
                    let t = self.tok().clone();
                    return Err(self.unexpected(&t));
                }
                _ => break,
            };
            self.bump();
            let e = self.arith()?;
            rest.push((op, e));
        }
        match rest.last() {
            None => Ok(first),
            Some((_, last)) => {
                let span = first.span.start..last.span.end;
                self.mk(ExprKind::Compare(Box::new(first), rest), span)
            }
        }
    }

    fn arith(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.term()?;
        loop {
            let op = match self.peek() {
                Tok::Plus => BinOp::Add,
                Tok::Minus => BinOp::Sub,
                _ => return Ok(left),
            };
            self.bump();
            let right = self.term()?;
            let span = left.span.start..right.span.end;
            left = self.mk(ExprKind::Binary(op, Box::new(left), Box::new(right)), span)?;
        }
    }

    fn term(&mut self) -> Result<Expr, ExprError> {
        let mut left = self.factor()?;
        loop {
            let op = match self.peek() {
                Tok::Star => BinOp::Mul,
                Tok::Slash => BinOp::Div,
                Tok::DoubleSlash => BinOp::FloorDiv,
                Tok::Percent => BinOp::Mod,
                _ => return Ok(left),
            };
            self.bump();
            let right = self.factor()?;
            let span = left.span.start..right.span.end;
            left = self.mk(ExprKind::Binary(op, Box::new(left), Box::new(right)), span)?;
        }
    }

    /// `factor := ('-'|'+') factor | power`
    fn factor(&mut self) -> Result<Expr, ExprError> {
        let op = match self.peek() {
            Tok::Minus => UnaryOp::Neg,
            Tok::Plus => UnaryOp::Pos,
            _ => return self.power(),
        };
        let t = self.bump();
        self.enter()?;
        let operand = self.factor();
        self.leave();
        let operand = operand?;
        let span = t.span.start..operand.span.end;
        self.mk(ExprKind::Unary(op, Box::new(operand)), span)
    }

    /// `power := primary ['**' factor]`
    fn power(&mut self) -> Result<Expr, ExprError> {
        let base = self.primary()?;
        if !self.eat(&Tok::DoubleStar) {
            return Ok(base);
        }
        self.enter()?;
        let exp = self.factor();
        self.leave();
        let exp = exp?;
        let span = base.span.start..exp.span.end;
        self.mk(
            ExprKind::Binary(BinOp::Pow, Box::new(base), Box::new(exp)),
            span,
        )
    }

    /// An atom followed by calls, subscripts and method calls.
    fn primary(&mut self) -> Result<Expr, ExprError> {
        let atom = self.atom()?;
        let mut e = atom;
        loop {
            match self.peek() {
                Tok::LParen => {
                    let ExprKind::Name(name) = &e.kind else {
                        let t = self.tok().clone();
                        return Err(unsupported(t.span, "only named functions can be called"));
                    };
                    let name = name.clone();
                    let name_span = e.span.clone();
                    let open = self.bump();
                    let args = self.call_args(&open.span)?;
                    let close = self.bump();
                    e = self.mk(
                        ExprKind::Call(name, name_span.clone(), args),
                        name_span.start..close.span.end,
                    )?;
                }
                Tok::LBracket => {
                    let open = self.bump();
                    let index = self.expr()?;
                    let close = self.expect_close(Tok::RBracket, &open.span)?;
                    let span = e.span.start..close.span.end;
                    e = self.mk(ExprKind::Subscript(Box::new(e), Box::new(index)), span)?;
                }
                Tok::Dot => {
                    let dot = self.bump();
                    let t = self.tok().clone();
                    let Tok::Name(method) = &t.tok else {
                        return Err(parse_err(t.span, "expected a method name after `.`"));
                    };
                    let method = method.clone();
                    self.bump();
                    if self.peek() != &Tok::LParen {
                        return Err(unsupported(
                            dot.span.start..t.span.end,
                            "attribute access is not supported",
                        )
                        .with_help("the only method is a permutation's `.index('item')`"));
                    }
                    let open = self.bump();
                    let args = self.call_args(&open.span)?;
                    let close = self.bump();
                    let span = e.span.start..close.span.end;
                    e = self.mk(
                        ExprKind::Method(Box::new(e), method, t.span.clone(), args),
                        span,
                    )?;
                }
                _ => return Ok(e),
            }
        }
    }

    /// Arguments up to (not including) the closing `)`.
    fn call_args(&mut self, open: &Span) -> Result<Vec<Expr>, ExprError> {
        let mut args = Vec::new();
        while self.peek() != &Tok::RParen {
            let arg = self.expr()?;
            if self.peek() == &Tok::Assign && matches!(arg.kind, ExprKind::Name(_)) {
                return Err(unsupported(
                    arg.span.start..self.tok().span.end,
                    "keyword arguments are not supported",
                ));
            }
            if self.peek() == &Tok::For {
                let t = self.tok().clone();
                return Err(
                    unsupported(t.span, "generator expressions are not supported")
                        .with_help("use a list comprehension `[... for ...]`"),
                );
            }
            args.push(arg);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        if self.peek() != &Tok::RParen {
            self.expect_close(Tok::RParen, open)?;
        }
        Ok(args)
    }

    fn atom(&mut self) -> Result<Expr, ExprError> {
        let t = self.tok().clone();
        let kind = match t.tok {
            Tok::Int(v) => ExprKind::Int(v),
            Tok::Float(v) => ExprKind::Real(v),
            Tok::Str(s) => ExprKind::Str(s),
            Tok::True => ExprKind::Bool(true),
            Tok::False => ExprKind::Bool(false),
            Tok::Name(n) => ExprKind::Name(n),
            Tok::LParen => return self.paren(),
            Tok::LBracket => return self.list(),
            Tok::Eof => {
                return Err(parse_err(
                    t.span,
                    "expected an expression, found end of input",
                ));
            }
            _ => return Err(self.unexpected(&t)),
        };
        self.bump();
        self.mk(kind, t.span)
    }

    /// `( expr )`, `()`, `(a,)`, `(a, b, ...)`.
    fn paren(&mut self) -> Result<Expr, ExprError> {
        let open = self.bump();
        if self.peek() == &Tok::RParen {
            let close = self.bump();
            return self.mk(ExprKind::Tuple(Vec::new()), open.span.start..close.span.end);
        }
        let first = self.expr()?;
        if self.peek() == &Tok::For {
            let t = self.tok().clone();
            return Err(
                unsupported(t.span, "generator expressions are not supported")
                    .with_help("use a list comprehension `[... for ...]`"),
            );
        }
        if !self.eat(&Tok::Comma) {
            let close = self.expect_close(Tok::RParen, &open.span)?;
            // Parentheses make no node; widen the span to include them.
            let mut e = first;
            e.span = open.span.start..close.span.end;
            return Ok(e);
        }
        let mut items = vec![first];
        while self.peek() != &Tok::RParen {
            items.push(self.expr()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        let close = self.expect_close(Tok::RParen, &open.span)?;
        self.mk(ExprKind::Tuple(items), open.span.start..close.span.end)
    }

    /// `[a, b, ...]` or `[elt for v in iter (for ... | if ...)*]`.
    fn list(&mut self) -> Result<Expr, ExprError> {
        let open = self.bump();
        let mut items = Vec::new();
        if self.peek() != &Tok::RBracket {
            let first = self.expr()?;
            if self.peek() == &Tok::For {
                return self.comprehension(open, first);
            }
            items.push(first);
            while self.eat(&Tok::Comma) {
                if self.peek() == &Tok::RBracket {
                    break;
                }
                items.push(self.expr()?);
            }
        }
        let close = self.expect_close(Tok::RBracket, &open.span)?;
        self.mk(ExprKind::List(items), open.span.start..close.span.end)
    }

    fn comprehension(&mut self, open: Token, elt: Expr) -> Result<Expr, ExprError> {
        let mut clauses = Vec::new();
        loop {
            match self.peek() {
                Tok::For => {
                    self.bump();
                    let t = self.tok().clone();
                    let Tok::Name(var) = t.tok else {
                        return Err(parse_err(
                            t.span.clone(),
                            format!(
                                "expected a variable name after `for`, found {}",
                                self.describe(&t)
                            ),
                        ));
                    };
                    self.bump();
                    if !self.eat(&Tok::In) {
                        let t = self.tok().clone();
                        return Err(parse_err(
                            t.span.clone(),
                            format!("expected `in`, found {}", self.describe(&t)),
                        ));
                    }
                    let iter = self.or_test()?;
                    clauses.push(Clause::For(var, t.span, iter));
                }
                Tok::If => {
                    self.bump();
                    clauses.push(Clause::If(self.or_test()?));
                }
                _ => break,
            }
        }
        let close = self.expect_close(Tok::RBracket, &open.span)?;
        self.mk(
            ExprKind::ListComp(Box::new(elt), clauses),
            open.span.start..close.span.end,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fully parenthesised rendering, to check the tree shape.
    fn sexp(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Real(v) => format!("{v:?}"),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Str(s) => format!("{s:?}"),
            ExprKind::Name(n) => n.clone(),
            ExprKind::Unary(op, a) => format!("({op:?} {})", sexp(a)),
            ExprKind::Binary(op, l, r) => format!("({} {} {})", op.symbol(), sexp(l), sexp(r)),
            ExprKind::BoolOp(op, l, r) => format!("({op:?} {} {})", sexp(l), sexp(r)),
            ExprKind::Compare(f, rest) => {
                let mut s = format!("(cmp {}", sexp(f));
                for (op, e) in rest {
                    s += &format!(" {} {}", op.symbol(), sexp(e));
                }
                s + ")"
            }
            ExprKind::IfElse(a, c, b) => format!("(if {} {} {})", sexp(c), sexp(a), sexp(b)),
            ExprKind::Call(n, _, args) => {
                format!(
                    "({n} {})",
                    args.iter().map(sexp).collect::<Vec<_>>().join(" ")
                )
            }
            ExprKind::List(v) => format!("[{}]", v.iter().map(sexp).collect::<Vec<_>>().join(" ")),
            ExprKind::Tuple(v) => format!(
                "(tuple {})",
                v.iter().map(sexp).collect::<Vec<_>>().join(" ")
            ),
            ExprKind::ListComp(e, cl) => {
                let mut s = format!("[{}", sexp(e));
                for c in cl {
                    match c {
                        Clause::For(v, _, it) => s += &format!(" for {v} in {}", sexp(it)),
                        Clause::If(c) => s += &format!(" if {}", sexp(c)),
                    }
                }
                s + "]"
            }
            ExprKind::Subscript(t, i) => format!("(at {} {})", sexp(t), sexp(i)),
            ExprKind::Method(t, m, _, args) => format!(
                "(.{m} {} {})",
                sexp(t),
                args.iter().map(sexp).collect::<Vec<_>>().join(" ")
            ),
        }
    }

    fn p(s: &str) -> String {
        sexp(&parse(s).unwrap_or_else(|e| panic!("{s}: {}", e.render(s))))
    }

    #[test]
    fn subscripts_and_methods_bind_tightest() {
        assert_eq!(p("order[0] == 'i'"), "(cmp (at order 0) == \"i\")");
        assert_eq!(
            p("-order.index('i') ** 2"),
            "(Neg (** (.index order \"i\") 2))"
        );
        assert_eq!(p("a.index('x')[1]"), "(at (.index a \"x\") 1)");
        let e = parse("order.index").unwrap_err();
        assert!(e.message.contains("attribute access"), "{e:?}");
        let e = parse("order.(1)").unwrap_err();
        assert!(e.message.contains("method name"), "{e:?}");
        let e = parse("order[0").unwrap_err();
        assert!(e.message.contains("expected `]`"), "{e:?}");
    }

    #[test]
    fn precedence() {
        assert_eq!(p("1 + 2 * 3"), "(+ 1 (* 2 3))");
        assert_eq!(p("1 - 2 - 3"), "(- (- 1 2) 3)");
        assert_eq!(p("2 ** 3 ** 2"), "(** 2 (** 3 2))");
        assert_eq!(p("-2 ** 2"), "(Neg (** 2 2))");
        assert_eq!(p("2 ** -1"), "(** 2 (Neg 1))");
        assert_eq!(p("-x * y"), "(* (Neg x) y)");
        assert_eq!(p("a or b and not c"), "(Or a (And b (Not c)))");
        assert_eq!(p("not a == b"), "(Not (cmp a == b))");
        assert_eq!(p("32 <= x * y <= 1024"), "(cmp 32 <= (* x y) <= 1024)");
        assert_eq!(p("a if b else c if d else e"), "(if b a (if d c e))");
        assert_eq!(
            p("x not in [1, 2] and y in (3,)"),
            "(And (cmp x not in [1 2]) (cmp y in (tuple 3)))"
        );
        assert_eq!(p("a % b // c * d / e"), "(/ (* (// (% a b) c) d) e)");
        assert_eq!(p("(1 + 2) * 3"), "(* (+ 1 2) 3)");
        assert_eq!(p("min(a, b + 1)"), "(min a (+ b 1))");
        assert_eq!(
            p("[2**i for i in range(0, 6) if i % 2]"),
            "[(** 2 i) for i in (range 0 6) if (% i 2)]"
        );
        assert_eq!(p("- - 1"), "(Neg (Neg 1))");
        assert_eq!(p("a < b == c"), "(cmp a < b == c)");
        assert_eq!(p("x if y else z or w"), "(if y x (Or z w))");
    }

    #[test]
    fn spans() {
        let e = parse("  (a + b) * c").unwrap();
        assert_eq!(e.span, 2..13);
        let ExprKind::Binary(_, l, _) = &e.kind else {
            panic!()
        };
        assert_eq!(l.span, 2..9);
    }

    fn err(s: &str) -> ExprError {
        parse(s).expect_err(s)
    }

    #[test]
    fn errors() {
        let e = err("(a + b");
        assert_eq!(e.kind, ExprErrorKind::Parse);
        assert_eq!(e.span, 6..6);
        assert_eq!(
            e.message,
            "expected `)` to close `(` opened at column 1, found end of input"
        );
        let e = err("a * * b");
        assert_eq!(e.message, "unexpected token `*`");
        assert_eq!(e.span, 4..5);
        assert_eq!(err("a b").message, "unexpected token `b`");
        assert_eq!(
            err("").message,
            "expected an expression, found end of input"
        );
        assert_eq!(err("a)").message, "unmatched `)`");
        assert_eq!(err("a & b").kind, ExprErrorKind::Unsupported);
        assert_eq!(err("a is b").kind, ExprErrorKind::Unsupported);
        assert_eq!(err("x.y").kind, ExprErrorKind::Unsupported);
        assert_eq!(err("round(x, ndigits=2)").kind, ExprErrorKind::Unsupported);
        assert_eq!(
            err("a = b").help.as_deref(),
            Some("use `==` to compare values")
        );
        assert_eq!(err("a if b").kind, ExprErrorKind::Parse);
        assert_eq!(err("[1, 2").span, 5..5);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let s = "(".repeat(100_000);
        assert_eq!(err(&s).kind, ExprErrorKind::Parse);
        let s = "-".repeat(100_000) + "1";
        assert_eq!(err(&s).kind, ExprErrorKind::Parse);
        let s = vec!["1"; 100_000].join("+");
        assert_eq!(err(&s).kind, ExprErrorKind::Parse);
        let s = vec!["2"; 100_000].join("**");
        assert_eq!(err(&s).kind, ExprErrorKind::Parse);
        let s = "not ".repeat(100_000) + "x";
        assert_eq!(err(&s).kind, ExprErrorKind::Parse);
        // A long flat list is fine.
        let s = format!("[{}]", vec!["1"; 100_000].join(","));
        assert!(parse(&s).is_ok());
    }
}
