//! Binding names to constants in an expression's text, before it is compiled: how a kernel
//! runner's `[[instance]]` variables (`N = 4096`) reach `problem_size = ["N", "N"]` or
//! `flops = "2 * N ** 3"`, expressions otherwise compiled over the parameters alone.

use super::error::ExprError;
use super::lexer::{Tok, lex};

/// `source` with every name in `constants` replaced by its value, parenthesised so that
/// precedence is kept (`N ** 2` with `N = -4` is `(-4) ** 2`); names inside string
/// literals and attribute names are left alone. A value is written as the language reads
/// it: a number as itself, `true`/`false` as `True`/`False`, anything else as a string
/// literal.
///
/// # Errors
/// The source's lexical error (an unterminated string, ...), as compiling it would give.
pub fn bind_names(source: &str, constants: &[(String, String)]) -> Result<String, ExprError> {
    let tokens = lex(source)?;
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    let mut previous_dot = false;
    for t in &tokens {
        if let Tok::Name(name) = &t.tok
            && !previous_dot
            && let Some((_, value)) = constants.iter().find(|(n, _)| n == name)
        {
            out.push_str(&source[at..t.span.start]);
            out.push('(');
            out.push_str(&literal(value));
            out.push(')');
            at = t.span.end;
        }
        previous_dot = t.tok == Tok::Dot;
    }
    out.push_str(&source[at..]);
    Ok(out)
}

/// `value` as a literal of the expression language.
fn literal(value: &str) -> String {
    match value {
        "true" | "True" => "True".into(),
        "false" | "False" => "False".into(),
        v if v.parse::<i64>().is_ok() || v.parse::<f64>().is_ok_and(f64::is_finite) => v.into(),
        v => format!("{v:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Literal, eval_const};

    fn vars(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn names_become_their_values_and_keep_precedence() {
        let n = vars(&[("N", "-4"), ("mode", "fast"), ("on", "true")]);
        assert_eq!(bind_names("N ** 2", &n).unwrap(), "(-4) ** 2");
        assert_eq!(
            eval_const(&bind_names("N ** 2", &n).unwrap()).unwrap(),
            Literal::Int(16)
        );
        assert_eq!(
            bind_names("2 * N * NN + block", &n).unwrap(),
            "2 * (-4) * NN + block"
        );
        assert_eq!(bind_names("mode == 'N'", &n).unwrap(), "(\"fast\") == 'N'");
        assert_eq!(bind_names("on and x.N", &n).unwrap(), "(True) and x.N");
        assert_eq!(bind_names("4096", &n).unwrap(), "4096");
    }

    #[test]
    fn a_lexical_error_is_the_compilers() {
        assert!(bind_names("N + 'open", &vars(&[("N", "1")])).is_err());
    }
}
