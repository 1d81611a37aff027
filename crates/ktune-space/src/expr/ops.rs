//! Python numeric semantics on 64-bit integers and floats, shared by the compiler and the
//! interpreter so that both agree bit for bit.

use std::cmp::Ordering;

use super::ast::BinOp;
use super::error::EvalError;

/// A number whose int-or-float type is only known at run time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    Real(f64),
}

impl Num {
    /// Python `float(x)`.
    #[inline]
    pub(crate) fn to_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Real(r) => r,
        }
    }
}

type R<T> = Result<T, EvalError>;

#[inline]
pub(crate) fn int_add(a: i64, b: i64) -> R<i64> {
    a.checked_add(b).ok_or(EvalError::Overflow)
}

#[inline]
pub(crate) fn int_sub(a: i64, b: i64) -> R<i64> {
    a.checked_sub(b).ok_or(EvalError::Overflow)
}

#[inline]
pub(crate) fn int_mul(a: i64, b: i64) -> R<i64> {
    a.checked_mul(b).ok_or(EvalError::Overflow)
}

#[inline]
pub(crate) fn int_neg(a: i64) -> R<i64> {
    a.checked_neg().ok_or(EvalError::Overflow)
}

#[inline]
pub(crate) fn int_abs(a: i64) -> R<i64> {
    a.checked_abs().ok_or(EvalError::Overflow)
}

/// Python `a // b` (floor towards -inf).
#[inline]
pub(crate) fn int_floordiv(a: i64, b: i64) -> R<i64> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    if b == -1 {
        return int_neg(a);
    }
    let q = a / b;
    let r = a % b;
    Ok(if r != 0 && ((r < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// Python `a % b` (result has the sign of `b`).
#[inline]
pub(crate) fn int_mod(a: i64, b: i64) -> R<i64> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    if b == -1 {
        return Ok(0);
    }
    let r = a % b;
    Ok(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

/// `a ** b` for `b >= 0` (integer result).
pub(crate) fn int_pow_nonneg(a: i64, b: i64) -> R<i64> {
    match a {
        0 => Ok(if b == 0 { 1 } else { 0 }),
        1 => Ok(1),
        -1 => Ok(if b % 2 == 0 { 1 } else { -1 }),
        _ => u32::try_from(b)
            .ok()
            .and_then(|e| a.checked_pow(e))
            .ok_or(EvalError::Overflow),
    }
}

/// Python int `a ** b`: an int for `b >= 0`, otherwise `float(a) ** float(b)`.
pub(crate) fn int_pow(a: i64, b: i64) -> R<Num> {
    if b >= 0 {
        int_pow_nonneg(a, b).map(Num::Int)
    } else {
        real_pow(a as f64, b as f64).map(Num::Real)
    }
}

/// Python int true division `a / b`, correctly rounded like CPython.
pub(crate) fn int_truediv(a: i64, b: i64) -> R<f64> {
    if b == 0 {
        return Err(EvalError::DivisionByZero);
    }
    const EXACT: u64 = 1 << 53;
    if a.unsigned_abs() <= EXACT && b.unsigned_abs() <= EXACT {
        return Ok(a as f64 / b as f64);
    }
    let negative = (a < 0) != (b < 0);
    let ua = a.unsigned_abs() as u128;
    let ub = b.unsigned_abs() as u128;
    if ua == 0 {
        return Ok(if negative { -0.0 } else { 0.0 });
    }
    // Scale the dividend to 127 bits so that the quotient has at least 63 significant bits;
    // a sticky bit for the remainder then makes the u128 -> f64 rounding exact.
    let k = ua.leading_zeros() - 1;
    let n = ua << k;
    let q = n / ub;
    let sticky = u128::from(!n.is_multiple_of(ub));
    let scaled = (q | sticky) as f64;
    let mag = scaled * f64::from_bits(u64::from(1023 - k) << 52);
    Ok(if negative { -mag } else { mag })
}

/// Python float `a / b`.
#[inline]
pub(crate) fn real_div(a: f64, b: f64) -> R<f64> {
    if b == 0.0 {
        Err(EvalError::DivisionByZero)
    } else {
        Ok(a / b)
    }
}

/// Python float `a // b` (CPython's `float_floor_div`).
pub(crate) fn real_floordiv(a: f64, b: f64) -> R<f64> {
    if b == 0.0 {
        return Err(EvalError::DivisionByZero);
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    Ok(if div != 0.0 {
        let mut f = div.floor();
        if div - f > 0.5 {
            f += 1.0;
        }
        f
    } else {
        0.0f64.copysign(a / b)
    })
}

/// Python float `a % b` (CPython's `float_rem`).
pub(crate) fn real_mod(a: f64, b: f64) -> R<f64> {
    if b == 0.0 {
        return Err(EvalError::DivisionByZero);
    }
    let mut m = a % b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m += b;
        }
    } else {
        m = 0.0f64.copysign(b);
    }
    Ok(m)
}

fn is_odd_integer(x: f64) -> bool {
    x.abs() % 2.0 == 1.0
}

/// Python float `v ** w` (CPython's `float_pow`).
pub(crate) fn real_pow(v: f64, w: f64) -> R<f64> {
    if w == 0.0 {
        return Ok(1.0);
    }
    if v.is_nan() {
        return Ok(v);
    }
    if w.is_nan() {
        return Ok(if v == 1.0 { 1.0 } else { w });
    }
    if w.is_infinite() {
        let a = v.abs();
        return Ok(if a == 1.0 {
            1.0
        } else if (w > 0.0) == (a > 1.0) {
            f64::INFINITY
        } else {
            0.0
        });
    }
    if v.is_infinite() {
        let odd = is_odd_integer(w);
        return Ok(if w > 0.0 {
            if odd { v } else { v.abs() }
        } else if odd {
            0.0f64.copysign(v)
        } else {
            0.0
        });
    }
    if v == 0.0 {
        if w < 0.0 {
            return Err(EvalError::DivisionByZero);
        }
        return Ok(if is_odd_integer(w) { v } else { 0.0 });
    }
    let mut base = v;
    let mut negate = false;
    if v < 0.0 {
        if w != w.floor() {
            return Err(EvalError::ComplexResult);
        }
        base = -v;
        negate = is_odd_integer(w);
    }
    if base == 1.0 {
        return Ok(if negate { -1.0 } else { 1.0 });
    }
    let r = base.powf(w);
    if r.is_infinite() {
        return Err(EvalError::Overflow);
    }
    Ok(if negate { -r } else { r })
}

/// Python `int(x)` for a float (truncation).
pub(crate) fn real_to_int(x: f64) -> R<i64> {
    if x.is_nan() {
        return Err(EvalError::NotANumber);
    }
    let t = x.trunc();
    if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&t) {
        return Err(EvalError::Overflow);
    }
    Ok(t as i64)
}

/// Python `round(x)` for a float: round half to even, int result.
pub(crate) fn real_round(x: f64) -> R<i64> {
    if x.is_nan() {
        return Err(EvalError::NotANumber);
    }
    real_to_int(x.round_ties_even())
}

/// Exact comparison of an int with a float (no rounding of the int).
pub(crate) fn cmp_int_real(i: i64, f: f64) -> Option<Ordering> {
    const TWO63: f64 = 9.223_372_036_854_776e18;
    if f.is_nan() {
        None
    } else if f >= TWO63 {
        Some(Ordering::Less)
    } else if f < -TWO63 {
        Some(Ordering::Greater)
    } else {
        let t = f.trunc();
        match i.cmp(&(t as i64)) {
            Ordering::Equal => f.partial_cmp(&t).map(Ordering::reverse),
            o => Some(o),
        }
    }
}

/// Python comparison of two numbers (`None`: unordered, a NaN is involved).
#[inline]
pub(crate) fn num_cmp(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Real(x), Num::Real(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Real(y)) => cmp_int_real(x, y),
        (Num::Real(x), Num::Int(y)) => cmp_int_real(y, x).map(Ordering::reverse),
    }
}

/// Python float arithmetic.
pub(crate) fn real_arith(op: BinOp, a: f64, b: f64) -> R<f64> {
    match op {
        BinOp::Add => Ok(a + b),
        BinOp::Sub => Ok(a - b),
        BinOp::Mul => Ok(a * b),
        BinOp::Div => real_div(a, b),
        BinOp::FloorDiv => real_floordiv(a, b),
        BinOp::Mod => real_mod(a, b),
        BinOp::Pow => real_pow(a, b),
    }
}

/// Python arithmetic on two numbers of dynamic type.
pub(crate) fn num_arith(op: BinOp, a: Num, b: Num) -> R<Num> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => match op {
            BinOp::Add => int_add(x, y).map(Num::Int),
            BinOp::Sub => int_sub(x, y).map(Num::Int),
            BinOp::Mul => int_mul(x, y).map(Num::Int),
            BinOp::Div => int_truediv(x, y).map(Num::Real),
            BinOp::FloorDiv => int_floordiv(x, y).map(Num::Int),
            BinOp::Mod => int_mod(x, y).map(Num::Int),
            BinOp::Pow => int_pow(x, y),
        },
        _ => real_arith(op, a.to_f64(), b.to_f64()).map(Num::Real),
    }
}

/// Python unary minus.
pub(crate) fn num_neg(a: Num) -> R<Num> {
    match a {
        Num::Int(x) => int_neg(x).map(Num::Int),
        Num::Real(x) => Ok(Num::Real(-x)),
    }
}

/// Python `abs`.
pub(crate) fn num_abs(a: Num) -> R<Num> {
    match a {
        Num::Int(x) => int_abs(x).map(Num::Int),
        Num::Real(x) => Ok(Num::Real(x.abs())),
    }
}

/// Python `int(x)`.
pub(crate) fn num_to_int(a: Num) -> R<i64> {
    match a {
        Num::Int(x) => Ok(x),
        Num::Real(x) => real_to_int(x),
    }
}

/// Python `round(x)` (one argument).
pub(crate) fn num_round(a: Num) -> R<i64> {
    match a {
        Num::Int(x) => Ok(x),
        Num::Real(x) => real_round(x),
    }
}

/// Python truthiness of a number.
#[inline]
pub(crate) fn num_truthy(a: Num) -> bool {
    match a {
        Num::Int(x) => x != 0,
        Num::Real(x) => x != 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use EvalError::*;

    #[test]
    fn floor_division_and_modulo() {
        assert_eq!(int_floordiv(7, 2), Ok(3));
        assert_eq!(int_floordiv(-7, 2), Ok(-4));
        assert_eq!(int_floordiv(7, -2), Ok(-4));
        assert_eq!(int_floordiv(-7, -2), Ok(3));
        assert_eq!(int_floordiv(i64::MIN, -1), Err(Overflow));
        assert_eq!(int_floordiv(1, 0), Err(DivisionByZero));
        assert_eq!(int_mod(-7, 2), Ok(1));
        assert_eq!(int_mod(7, -2), Ok(-1));
        assert_eq!(int_mod(-7, -2), Ok(-1));
        assert_eq!(int_mod(i64::MIN, -1), Ok(0));
        assert_eq!(int_mod(5, 0), Err(DivisionByZero));
        assert_eq!(real_floordiv(-7.5, 2.0), Ok(-4.0));
        assert_eq!(real_floordiv(7.5, -2.0), Ok(-4.0));
        assert_eq!(real_mod(-7.5, 2.0), Ok(0.5));
        assert_eq!(real_mod(7.5, -2.0), Ok(-0.5));
        assert!(real_mod(-0.0, 1.0).unwrap().is_sign_positive());
        assert!(real_mod(0.0, -1.0).unwrap().is_sign_negative());
        assert_eq!(real_floordiv(1.0, 0.0), Err(DivisionByZero));
        assert_eq!(real_mod(1.0, 0.0), Err(DivisionByZero));
    }

    #[test]
    fn powers() {
        assert_eq!(int_pow(2, 10), Ok(Num::Int(1024)));
        assert_eq!(int_pow(2, -1), Ok(Num::Real(0.5)));
        assert_eq!(int_pow(0, -1), Err(DivisionByZero));
        assert_eq!(int_pow(2, 63), Err(Overflow));
        assert_eq!(int_pow(-2, 63), Ok(Num::Int(i64::MIN)));
        assert_eq!(int_pow(-1, i64::MAX), Ok(Num::Int(-1)));
        assert_eq!(int_pow(0, 0), Ok(Num::Int(1)));
        assert_eq!(real_pow(-8.0, 1.0 / 3.0), Err(ComplexResult));
        assert_eq!(real_pow(-2.0, 3.0), Ok(-8.0));
        assert_eq!(real_pow(10.0, 400.0), Err(Overflow));
        assert_eq!(real_pow(0.0, -1.0), Err(DivisionByZero));
        assert_eq!(real_pow(f64::NAN, 0.0), Ok(1.0));
        assert_eq!(real_pow(1.0, f64::NAN), Ok(1.0));
    }

    #[test]
    fn true_division_is_correctly_rounded() {
        assert_eq!(int_truediv(1, 2), Ok(0.5));
        assert_eq!(int_truediv(-1, 2), Ok(-0.5));
        assert_eq!(int_truediv(0, -3).map(f64::is_sign_negative), Ok(true));
        // 2**62+1 / 3: exact quotient 1537228672809129301.66.., f64 nearest is
        // 1537228672809129216 (Python agrees).
        assert_eq!(
            int_truediv((1 << 62) + 1, 3),
            Ok(1_537_228_672_809_129_216.0)
        );
        assert_eq!(int_truediv(i64::MIN, -1), Ok(9.223_372_036_854_776e18));
        assert_eq!(int_truediv(i64::MAX, i64::MIN), Ok(-1.0));
        // (2**53 + 1) / 1 rounds half to even.
        assert_eq!(int_truediv((1 << 53) + 1, 1), Ok(9_007_199_254_740_992.0));
        assert_eq!(int_truediv((1 << 53) + 3, 1), Ok(9_007_199_254_740_996.0));
        assert_eq!(
            int_truediv(3, (1 << 60) + 1),
            Ok(3.0 / 1_152_921_504_606_846_976.0)
        );
    }

    #[test]
    fn exact_int_float_comparison() {
        let two53 = 9_007_199_254_740_992.0;
        assert_eq!(cmp_int_real((1 << 53) + 1, two53), Some(Ordering::Greater));
        assert_eq!(cmp_int_real(1 << 53, two53), Some(Ordering::Equal));
        assert_eq!(
            cmp_int_real(i64::MAX, 9.223_372_036_854_776e18),
            Some(Ordering::Less)
        );
        assert_eq!(
            cmp_int_real(i64::MIN, -9.223_372_036_854_776e18),
            Some(Ordering::Equal)
        );
        assert_eq!(cmp_int_real(2, 2.5), Some(Ordering::Less));
        assert_eq!(cmp_int_real(-2, -2.5), Some(Ordering::Greater));
        assert_eq!(cmp_int_real(-3, -2.5), Some(Ordering::Less));
        assert_eq!(cmp_int_real(0, -0.0), Some(Ordering::Equal));
        assert_eq!(cmp_int_real(0, f64::NAN), None);
        assert_eq!(
            cmp_int_real(i64::MIN, f64::NEG_INFINITY),
            Some(Ordering::Greater)
        );
    }

    #[test]
    fn conversions() {
        assert_eq!(real_round(2.5), Ok(2));
        assert_eq!(real_round(3.5), Ok(4));
        assert_eq!(real_round(-2.5), Ok(-2));
        assert_eq!(real_round(f64::NAN), Err(NotANumber));
        assert_eq!(real_round(f64::INFINITY), Err(Overflow));
        assert_eq!(real_to_int(-2.7), Ok(-2));
        assert_eq!(real_to_int(9.3e18), Err(Overflow));
        assert_eq!(real_to_int(-9.223_372_036_854_776e18), Ok(i64::MIN));
    }
}
