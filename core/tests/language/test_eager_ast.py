"""`tilelang.language.eager.ast`: `mutate` rewrites a function into builder calls; with `BaseBuilder` the rewritten
function computes what the original does, and a builder subclass sees every construct."""

from __future__ import annotations

import ast

import pytest

import tilelang.language as T
from tilelang.language.eager import ast as eager_ast
from tilelang.language.eager.ast import BaseBuilder, DSLMutator, mutate

SCALE = 3


def _control_flow(n, *rest, step=2, **kw):
    out = []
    i = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        elif i > 7:
            if i > 8 and not (i < 0):
                break
        a, (b, c) = i, (i * step, SCALE)
        a, b = b, a
        out.append(a if 0 < b < 100 else -1)
        d = [0, 0]
        d[1] += c
        d[0] -= 1
        out.append(d)
    for j in range(2):
        for k in range(5):
            if k == 1:
                continue
            if k == 3:
                break
            out.append((j, k))
    else:
        out.append("done")
    x = y = len(rest)
    z: int = x + y
    with open(__file__) as fh:
        first = fh.readline()
    return out, z, kw, first or None


def test_base_builder_runs_the_function_unchanged():
    gen = mutate(_control_flow).gen(BaseBuilder())
    assert gen(12, 1, 2, step=3, key="v") == _control_flow(12, 1, 2, step=3, key="v")
    assert gen(1) == _control_flow(1)


def test_varargs_and_kwargs_reach_the_rewritten_function():
    def first_arg(*args):
        return args[0]

    def get_kwarg(**kwargs):
        return kwargs["key"]

    assert mutate(first_arg).gen(BaseBuilder())("sentinel", "ignored") == "sentinel"
    assert mutate(get_kwarg).gen(BaseBuilder())(key="value") == "value"


class _Recorder(BaseBuilder):
    def __init__(self):
        self.events = []

    def bind(self, name, value, annot=BaseBuilder.empty):
        self.events.append(("bind", name, value))
        return value

    def aug_assign(self, op, target, aug_value, name=None):
        self.events.append(("aug", op, name))
        return super().aug_assign(op, target, aug_value, name)

    def ctx_for(self, iterable):
        self.events.append(("for",))
        return iterable

    def set_fileline(self, filename, lineno, name):
        self.events.append(("line", filename, lineno, name))

    def override(self, name):
        assert name == "range"
        return lambda n: [10 * v for v in range(n)]  # a builder can give `range` its own meaning


def test_a_builder_subclass_sees_bindings_lines_and_overrides():
    def demo(n):
        total = 0
        for v in range(n):
            total += v
        return total

    rec = _Recorder()
    assert mutate(demo).gen(rec)(3) == 30
    assert ("bind", "total", 0) in rec.events and ("aug", "Add", "total") in rec.events
    lines = [e for e in rec.events if e[0] == "line"]
    assert lines[0] == ("line", __file__, demo.__code__.co_firstlineno + 1, "demo")
    assert ("for",) in rec.events


def test_source_and_parameter_hints():
    def demo(A, n, value):
        A: T.Tensor[(4,), T.int32]
        n: T.int32
        value -= 1
        A[0] = value

    gen = mutate(demo)
    assert "__tb.aug_assign('Sub', value, 1, name='value')" in gen.source
    assert gen.extra_type_hints["A"] is T.ptr and gen.extra_type_hints["n"] == "int32"
    buf = [0]
    gen.gen(BaseBuilder())(buf, 4, 5)
    assert buf == [4]


def test_dsl_mutator_keeps_windows_paths_intact():
    def sample(a):
        return a + 1

    path = r"C:\Users\me\kernel.py"
    tree = DSLMutator({}, sample.__globals__, path).visit(eager_ast.utils.get_ast(sample))
    source = ast.unparse(tree)
    assert repr(path) in source
    compile(source, "<mutated>", "exec")


def test_mutate_rejects_non_functions():
    with pytest.raises(TypeError, match="Python function"):
        mutate(len)
