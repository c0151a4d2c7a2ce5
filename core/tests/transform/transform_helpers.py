"""Helpers of the pass tests: a one-function module, structural equality of bodies."""


def as_module(func):
    import tvm

    return tvm.IRModule({"main": func})


def body_equal(a, b):
    import tvm_ffi

    lhs = a["main"].body if hasattr(a, "functions") else a.body
    rhs = b["main"].body if hasattr(b, "functions") else b.body
    equal = tvm_ffi.structural_equal(lhs, rhs, map_free_vars=True)
    if not equal:
        print("AFTER:\n", lhs, "\nEXPECTED:\n", rhs)
    return equal
