//! Tests of `param`.

use super::*;

#[test]
fn permutations_are_lexicographic_and_complete() {
    let p = permutations(3);
    assert_eq!(
        p,
        vec![
            vec![0, 1, 2],
            vec![0, 2, 1],
            vec![1, 0, 2],
            vec![1, 2, 0],
            vec![2, 0, 1],
            vec![2, 1, 0]
        ]
    );
    assert_eq!(permutations(5).len(), 120);
    assert_eq!(permutations(1), vec![vec![0]]);
}

#[test]
fn ranges_include_their_end() {
    assert_eq!(int_range(32, 1024, 32).unwrap().len(), 32);
    assert_eq!(int_range(10, 1, -3).unwrap(), vec![10, 7, 4, 1]);
    assert!(int_range(1, 5, 0).is_err());
    assert!(int_range(5, 1, 1).is_err());
    assert_eq!(real_range(0.0, 1.0, 0.1).unwrap().len(), 11);
    assert_eq!(real_range(0.0, 1.0, 0.1).unwrap()[3], 0.3);
    assert_eq!(geometric_range(1.0, 1024.0, 2.0).unwrap().len(), 11);
    // Integers are exact, up to the end of i64.
    let p = int_geometric_range(1, 1 << 40, 2).unwrap();
    assert_eq!((p.len(), p[40]), (41, 1_099_511_627_776));
    let big = int_geometric_range(3, i64::MAX, 3).unwrap();
    assert_eq!(big.last(), Some(&3i64.pow(39)));
    assert!(int_geometric_range(5, 4, 2).is_err());
    assert!(int_geometric_range(0, 4, 2).is_err());
}

#[test]
fn domains_are_checked() {
    assert!(matches!(
        Parameter::integer("x", []),
        Err(SpaceError::EmptyDomain { .. })
    ));
    assert!(matches!(
        Parameter::integer("x", [1, 2, 1]),
        Err(SpaceError::DuplicateValue { .. })
    ));
    assert!(matches!(
        Parameter::real("x", [0.5, 0.5]),
        Err(SpaceError::DuplicateValue { .. })
    ));
    let said = |name: &str| Parameter::integer(name, [1]).unwrap_err().to_string();
    assert!(
        said("2x").contains("must be an identifier"),
        "{}",
        said("2x")
    );
    // A keyword is an identifier: the message says what is wrong with it.
    assert!(
        said("and").contains("`and` is a word of the constraint language"),
        "{}",
        said("and")
    );
    assert!(
        Parameter::integer("x", [0, 1])
            .unwrap()
            .with_log_scale(true)
            .is_err()
    );
    assert!(
        Parameter::integer("x", [1, 2])
            .unwrap()
            .with_log_scale(true)
            .is_ok()
    );
    assert!(Parameter::ordinal("x", vec![Value::Int(1), Value::Str("a".into())]).is_err());
    assert!(matches!(
        Parameter::permutation("p", ["i", "j", "i"]),
        Err(SpaceError::DuplicateValue { .. })
    ));
    // Items a program could not tell apart in `i,k,j`.
    for items in [["i", "j,k"], ["i", ""], ["i", " j"]] {
        let e = Parameter::permutation("p", items).unwrap_err().to_string();
        assert!(e.contains("cannot be told apart"), "{items:?}: {e}");
    }
}

#[test]
fn index_of_finds_every_value_of_a_large_domain() {
    let n = 20_000;
    let p = Parameter::integer("x", 0..n).unwrap();
    for i in (0..n).step_by(97) {
        assert_eq!(p.index_of(&Value::Int(i)), Some(i as usize));
        assert_eq!(p.index_of(&Value::Real(i as f64)), Some(i as usize));
    }
    assert_eq!(p.index_of(&Value::Int(n)), None);
    assert_eq!(p.index_of(&Value::Real(0.5)), None);
    let r = Parameter::new(
        "r",
        ParamKind::Real,
        vec![Value::Real(-0.0), Value::Real(1.5), Value::Real(2.0)],
    )
    .unwrap();
    assert_eq!(r.index_of(&Value::Real(0.0)), Some(0));
    assert_eq!(r.index_of(&Value::Int(0)), Some(0));
    assert_eq!(r.index_of(&Value::Int(2)), Some(2));
    assert_eq!(r.index_of(&Value::Real(f64::NAN)), None);
    let c = Parameter::categorical("c", ["a", "b", "c"]).unwrap();
    assert_eq!(c.index_of(&Value::Str("c".into())), Some(2));
    assert_eq!(c.index_of(&Value::Str("d".into())), None);
    // A clone has its own (lazily rebuilt) index.
    assert_eq!(c.clone().index_of(&Value::Str("b".into())), Some(1));
}

#[test]
fn index_of_matches_ints_and_reals() {
    let p = Parameter::integer("x", [1, 2, 4]).unwrap();
    assert_eq!(p.index_of(&Value::Real(2.0)), Some(1));
    assert_eq!(p.index_of(&Value::Int(3)), None);
    let c = Parameter::categorical("c", ["a", "b"]).unwrap();
    assert_eq!(c.index_of(&Value::Str("b".into())), Some(1));
}

#[test]
fn expression_types_follow_values() {
    let mut i = Interner::default();
    let p = Parameter::ordinal("x", vec![Value::Int(1), Value::Real(2.5)]).unwrap();
    assert_eq!(p.expr_type(), ExprType::Real);
    assert_eq!(
        p.scalars(&mut i),
        vec![Scalar::Real(1.0), Scalar::Real(2.5)]
    );
    let c = Parameter::categorical("c", ["a", "b"]).unwrap();
    assert_eq!(c.expr_type(), ExprType::Str);
    assert_eq!(c.scalars(&mut i), vec![Scalar::Str(0), Scalar::Str(1)]);
}

#[test]
fn scalar_values_read_back_from_their_json_and_nothing_else_does() {
    for v in [
        Value::Int(-3),
        Value::Real(0.25),
        Value::Bool(true),
        Value::Str("row".into()),
    ] {
        assert_eq!(Value::from_json(&v.to_json()), Some(v.clone()), "{v:?}");
    }
    // A permutation's array is only one where the caller says so.
    assert_eq!(Value::from_json(&Value::Perm(vec![1, 0]).to_json()), None);
    assert_eq!(Value::from_json(&serde_json::Value::Null), None);
    // A whole number written as a real stays a real.
    assert_eq!(
        Value::from_json(&serde_json::json!(2.0)),
        Some(Value::Real(2.0))
    );
}
