#!/usr/bin/env python3
"""Generates golden.tsv: results of constraint expressions as computed by CPython.

Run from anywhere: python3 gen_golden.py  (writes golden.tsv next to this script).

Integers are wrapped in a checked 64-bit subclass so that any intermediate result outside
i64 raises OverflowError, mirroring ktune's checked integer arithmetic.

Output format (tab separated):
  A <index> <name>=<type>:<value> ...      one line per assignment of the parameters
  E <expr> <index> <result>                one line per expression and assignment
  L <expr> <items|err:Kind>                eval_list golden results
Results are  int:N | float:repr | bool:True | str:text | truth:True | err:Kind,
where truth: means only the truthiness of the result is compared (for a constraint that is
a bare number).
"""
import ast
import math
import os

I64_MIN, I64_MAX = -(2 ** 63), 2 ** 63 - 1


def check(r):
    if type(r) is int or isinstance(r, I64):
        if not (I64_MIN <= int(r) <= I64_MAX):
            raise OverflowError("i64 overflow")
        return I64(r)
    return r


class I64(int):
    def __repr__(self):
        return "I64(%d)" % int(self)


def _wrap(name):
    base = getattr(int, name)

    def op(self, *args):
        r = base(self, *args)
        if r is NotImplemented:
            return r
        return check(r)

    return op


for _n in ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
           "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
           "__neg__", "__pos__", "__abs__"]:
    setattr(I64, _n, _wrap(_n))


def _int(v):
    return check(int(v))


def _round(v):
    return check(round(v))


BUILTINS = {"min": min, "max": max, "abs": abs, "int": _int, "float": float, "round": _round,
            "range": range, "list": list, "I64": I64}


class WrapInts(ast.NodeTransformer):
    def visit_Constant(self, node):
        if type(node.value) is int:
            return ast.Call(func=ast.Name(id="I64", ctx=ast.Load()), args=[node], keywords=[])
        return node


def evaluate(src, env):
    tree = WrapInts().visit(ast.parse(src, mode="eval"))
    ast.fix_missing_locations(tree)
    code = compile(tree, "<expr>", "eval")
    scope = dict(env)
    return eval(code, {"__builtins__": BUILTINS}, scope)


def classify(fn):
    try:
        r = fn()
    except ZeroDivisionError:
        return "err:DivisionByZero"
    except OverflowError:
        return "err:Overflow"
    except ValueError:
        return "err:NotANumber"
    return r


def fmt(r, truth=False):
    if isinstance(r, str) and r.startswith("err:"):
        return r
    if isinstance(r, complex):
        return "err:ComplexResult"
    if truth:
        return "truth:%s" % bool(r)
    if isinstance(r, bool):
        return "bool:%s" % r
    if isinstance(r, int):
        if not (I64_MIN <= r <= I64_MAX):
            return "err:Overflow"
        return "int:%d" % int(r)
    if isinstance(r, float):
        return "float:%r" % r
    if isinstance(r, str):
        return "str:%s" % r
    raise TypeError("unexpected result %r" % (r,))


ASSIGNMENTS = [
    dict(x=7, y=-3, z=0, r=2.5, s=-0.5, b=True, c="a"),
    dict(x=-8, y=3, z=1, r=-1.5, s=1e300, b=False, c="b"),
    dict(x=2 ** 62, y=-1, z=-(2 ** 63), r=0.1, s=math.inf, b=True, c="zz"),
    dict(x=2 ** 53 + 1, y=2, z=-5, r=9007199254740992.0, s=-0.0, b=False, c="q"),
]

EXPRS = [
    # int arithmetic
    "x + y", "x - y", "x * y", "x / y", "x // y", "x % y", "-x // y", "-x % y",
    "x // -4", "x % -4", "y // 2", "y % 2", "z // y", "z % y", "x / 3", "y / 7",
    "(x + 1) / (y - 1)", "x / z", "x // z", "x % z", "-z", "abs(z)", "z - 1", "z // -1",
    "x * y * 1000000000000", "x + 2**62", "x - y * 3 + z // 2",
    # float arithmetic
    "r // s", "r % s", "-r // 2", "-r % 2", "r // -2", "r % -2", "7.5 // -2", "-7.5 % 2",
    "r / z", "r % z", "r // 0.0", "r * s", "s - s", "r / s", "s / r",
    # powers
    "x ** 2", "y ** 3", "x ** y", "y ** -2", "2 ** -1", "-2 ** 2", "(-2) ** 2", "2 ** 3 ** 2",
    "2 ** 62", "2 ** 63", "x ** 3", "r ** 2", "s ** 0.5", "r ** y", "(-8) ** (1/3)",
    "0 ** -1", "0.0 ** -1", "10.0 ** 400", "z ** 0", "y ** z", "2 ** -x", "s ** 2", "(-2) ** 63",
    # comparisons
    "x < y", "x <= 7", "x > y > z", "1 < x < 10", "z < x < 1 // z", "x < y < 1 // z",
    "32 <= x * 8 <= 1024", "x == 7.0", "x == r", "r == 2.5", "x != y",
    "2**53 + 1 == float(2**53)", "2**53 + 1 > float(2**53)", "x > r", "x == float(x)",
    "x < s", "s > x", "0.1 + 0.2 == 0.3", "r < s", "s == s", "s != s", "x <= r < s",
    "y < z <= x != 3",
    # bool mixing
    "True == 1", "True + True", "b + 1", "b * x", "-b", "b / 2", "b == 1.0", "x + r", "x * s",
    "b < 2 < 3", "b // 1", "b ** 2", "False ** -1",
    # membership
    "x in [1, 7, 9]", "x not in [1, 2]", "x in (7,)", "x in [7.0, 8]", "r in [2.5, 3]",
    "x in [y + 10, 0]", "c in ['a', 'b']", "c not in ['zz']", "c in []", "x in [1 // z, 7]",
    "s in [s]", "b in [1]", "x * 2 not in [14, 16]",
    # conditional expressions
    "x if b else y", "r if b else x", "(x if z else r) * 2", "1 // z if z else -1",
    "c == ('a' if b else 'b')", "(x if b else 2.5) // 2", "y ** 2 if x > 0 else 0.5",
    # functions
    "min(x, y)", "max(x, y, z)", "max([x, y, z])", "min(r, x)", "max(x, 7.0)", "max(7.0, x)",
    "min(s, r, x)", "abs(y)", "abs(s)", "abs(x - 100)", "int(r)", "int(-2.7)", "int(s)",
    "float(x)", "float(b)", "round(r)", "round(2.5)", "round(3.5)", "round(-0.5)",
    "round(-2.5)", "round(s)", "round(x)", "int(r * 3)", "round(r / 3)", "max(b, False)",
    "min((x, 3))", "abs(-2**63 + z)", "float(x) / 3",
    # logic: `and`/`or` give the deciding operand, as in Python
    "x and y", "z or r", "not z", "x and not b", "z and 1 // z", "x or 1 // z",
    "not x == 7", "x > 1 and y < 0 or False", "?r", "s and c == 'a'",
    "(x or 0) == x", "(y and x) == x", "(z or 5) + 1", "(x and 0) + 2", "(b and x) * 2",
    "(r or s) * 2", "(z or r) < 1", "x or y or z", "z and y and x", "(b or z) + (b and z)",
    # strings
    "c == 'a'", "c != 'b'", "c == c", "'a' == c", "c == 'q'", "c == 'a' == c",
    # precedence and literals
    "1 + 2 * 3", "(1 + 2) * 3", "-x ** 2", "2 * 3 % 4", "x - y - z", "x // 2 * 2",
    "7 // 2", "-7 // 2", "7 % -2", "-7.5 // 2", "1e3 + 0x10", ".5 * 4", "1_000 * 2",
    "not x + y", "- - x", "+b",
]

LISTS = [
    "[16, 32, 48]", "['a', \"b\"]", "range(4)", "range(1, 10, 3)", "list(range(10, 0, -4))",
    "[1, 2, 4, 8, 16] + list(range(32, 1024+1, 32))", "[2**i for i in range(0, 6)]",
    "[i for i in range(1, 10+1)]", "[i for i in range(20) if i % 3 == 0]",
    "[x * 2 for x in [1, 5, 7]]", "[1.5, 2e3, 2**-1]", "[i / 2 for i in range(-3, 3)]",
    "[i // 2 for i in range(-3, 3)]", "[round(i / 2) for i in range(-3, 4)]",
    "[2**i for i in range(5, -1, -1)]", "[0] * 3 + [1]", "[i * j for i in range(3) for j in range(i)]",
    "range(0, 10, 0)", "[1 // 0]",
]


def fmt_list(src):
    try:
        r = evaluate(src, {})
    except ValueError:
        return "err:Eval"
    except ZeroDivisionError:
        return "err:Eval"
    return ";".join(fmt(v) for v in list(r))


def main():
    lines = []
    for i, a in enumerate(ASSIGNMENTS):
        parts = ["A", str(i)]
        for k, v in a.items():
            if isinstance(v, bool):
                parts.append("%s=bool:%s" % (k, v))
            elif isinstance(v, int):
                parts.append("%s=int:%d" % (k, v))
            elif isinstance(v, float):
                parts.append("%s=float:%r" % (k, v))
            else:
                parts.append("%s=str:%s" % (k, v))
        lines.append("\t".join(parts))
    for e in EXPRS:
        truth = e.startswith("?")
        src = e[1:] if truth else e
        for i, a in enumerate(ASSIGNMENTS):
            env = {k: (I64(v) if type(v) is int else v) for k, v in a.items()}
            r = classify(lambda: evaluate(src, env))
            lines.append("\t".join(["E", src, str(i), fmt(r, truth)]))
    for src in LISTS:
        lines.append("\t".join(["L", src, fmt_list(src)]))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden.tsv")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d lines to %s" % (len(lines), out))


if __name__ == "__main__":
    main()
