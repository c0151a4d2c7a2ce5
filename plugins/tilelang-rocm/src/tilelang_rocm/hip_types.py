"""HIP C++ spellings of TVM data types and how one lane of a vector value is read and written.

Vectors are carried as the types of ``tl_templates/hip/common.h`` (shipped in ``hip_include/``): native HIP
vectors (``float4``, ``int2``, ``half2``) for 16/32/64-bit lanes, 32-bit words for 8-bit integer lanes
(``int2`` holds eight ``int8``), nested pairs for float8 (``fp8_e4_8_t.y.z``) and float4 (``fp4_e2_8_t.x.y.x()``),
and plain unsigned integers of packed nibbles (``int4``) or bits (``bool``). Every lane access is spelled
explicitly so that a vector expression can be printed lane by lane (see `tilelang_rocm.hip_codegen`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.errors import LoweringError

SCALAR_TYPES = {
    "float32": "float", "float64": "double", "float16": "half", "bfloat16": "bfloat16_t",
    "int8": "signed char", "uint8": "unsigned char", "int16": "short", "uint16": "unsigned short",
    "int32": "int", "uint32": "uint", "int64": "int64_t", "uint64": "uint64_t", "bool": "bool",
    "float8_e4m3fn": "fp8_e4_t", "float8_e4m3fnuz": "fp8_e4_t", "float8_e4m3": "fp8_e4_t",
    "float8_e5m2": "fp8_e5_t", "float8_e5m2fnuz": "fp8_e5_t", "float4_e2m1fn": "fp4_e2_t",
    "int4": "signed char", "uint4": "unsigned char",
}
_NATIVE_VECTOR = {"float32": "float", "float64": "double", "int32": "int", "uint32": "uint", "int16": "short",
                  "uint16": "ushort", "int64": "longlong", "uint64": "ulonglong"}
_FP8 = {"fp8_e4_t": "fp8_e4", "fp8_e5_t": "fp8_e5"}
_XYZW = "xyzw"


@dataclass(frozen=True)
class DType:
    """A TVM dtype split into element name, bits and lanes."""

    name: str  # element dtype, e.g. "float32"
    bits: int
    lanes: int

    @classmethod
    def of(cls, dtype: object) -> DType:
        import tvm

        dt = tvm.DataType(str(dtype))
        text = str(dt)
        element = text if dt.lanes == 1 else str(tvm.DataType(text).with_lanes(1))
        return cls(element, int(dt.bits), int(dt.lanes))

    @property
    def is_float(self) -> bool:
        return self.name.startswith(("float", "bfloat"))

    @property
    def is_signed_int(self) -> bool:
        return self.name.startswith("int")

    def scalar(self) -> DType:
        return DType(self.name, self.bits, 1)


def scalar_type(dt: DType) -> str:
    """The C++ type of one element of `dt`."""
    try:
        return SCALAR_TYPES[dt.name]
    except KeyError:
        raise LoweringError(f"HIP codegen: data type {dt.name!r} has no HIP spelling") from None


def _unsigned_carrier(bits: int) -> str:
    for width, name in ((8, "uint8_t"), (16, "uint16_t"), (32, "uint"), (64, "uint64_t")):
        if bits <= width:
            return name
    if bits <= 128:
        return f"uint{bits // 32}"
    raise LoweringError(f"HIP codegen: a packed vector of {bits} bits has no carrier type")


def vector_type(dt: DType) -> str:
    """The C++ type carrying all lanes of `dt` (the scalar type for one lane)."""
    if dt.lanes == 1:
        return scalar_type(dt)
    kind = layout(dt)
    if kind == "native":
        return f"{_NATIVE_VECTOR[dt.name]}{dt.lanes}"
    if kind == "half2":
        return f"{dt.name}x{dt.lanes}"  # float16x2 ... bfloat16x8 (common.h)
    if kind == "words":
        words = dt.lanes // 4
        base = "int" if dt.is_signed_int else "uint"
        return base if words == 1 else f"{base}{words}"
    if kind == "fp8":
        return f"{_FP8[scalar_type(dt)]}_{dt.lanes}_t"
    if kind == "fp4":
        return f"fp4_e2_{dt.lanes}_t"
    if kind == "bits":  # sub-byte lanes packed into an unsigned integer
        return _unsigned_carrier(dt.lanes * (1 if dt.name == "bool" else dt.bits))
    raise LoweringError(f"HIP codegen: no vector type for {dt.name}x{dt.lanes}")


def layout(dt: DType) -> str:
    """How the lanes of vector type `dt` are laid out: native, half2, words, fp8, fp4, bits."""
    if dt.name in _NATIVE_VECTOR and dt.lanes <= 4:
        return "native"
    if dt.name in ("float16", "bfloat16") and dt.lanes in (2, 4, 8):
        return "half2"
    if dt.name in ("int8", "uint8") and dt.lanes % 4 == 0 and dt.lanes <= 16:
        return "words"
    if scalar_type(dt) in _FP8 and dt.lanes in (2, 4, 8, 16, 32):
        return "fp8"
    if dt.name == "float4_e2m1fn" and dt.lanes in (2, 4, 8, 16, 32, 64):
        return "fp4"
    if dt.bits < 8 or dt.name == "bool":
        return "bits"
    raise LoweringError(f"HIP codegen: vectors of {dt.lanes} x {dt.name} are not supported")


def _halves(lanes: int, lane: int, leaf: int) -> tuple[list[str], int]:
    """The ``x``/``y`` path through nested halves down to groups of `leaf` lanes, and the lane within."""
    path = []
    while lanes > leaf:
        lanes //= 2
        path.append("x" if lane < lanes else "y")
        lane %= lanes
    return path, lane


def _bit_field(dt: DType, lane: int) -> tuple[int, int, str]:
    """(byte, shift, mask) of sub-byte lane `lane`."""
    bit = lane * (1 if dt.name == "bool" else dt.bits)
    width = 1 if dt.name == "bool" else dt.bits
    return bit // 8, bit % 8, f"0x{(1 << width) - 1:02X}u"


def read_lane(value: str, dt: DType, lane: int) -> str:
    """An expression for lane `lane` of the vector expression `value` (a parenthesisable lvalue) of type `dt`."""
    kind = layout(dt)
    if kind == "native":
        return f"({value}).{_XYZW[lane]}"
    if kind == "half2":
        return f"((const {scalar_type(dt)}*)(&(({value}))))[{lane}]"
    if kind == "words":
        return f"((const {scalar_type(dt)}*)(&(({value}))))[{lane}]"
    if kind == "fp8":
        if dt.lanes == 2:
            return f"tl_fp8x2_get_lane<{scalar_type(dt)}>(({value}), {lane})"
        path, sub = _halves(dt.lanes, lane, 4)
        return f"({value}).{'.'.join([*path, _XYZW[sub]])}"
    if kind == "fp4":
        path, sub = _halves(dt.lanes, lane, 2)
        member = ".".join(path)
        return f"({value}){'.' + member if member else ''}.{'xy'[sub]}()"
    byte, shift, mask = _bit_field(dt, lane)
    raw = f"((const unsigned char*)(&(({value}))))[{byte}]"
    if dt.name == "bool":
        return f"(bool)(({raw} >> {shift}) & {mask})"
    if dt.is_signed_int:  # sign-extend the nibble: move it to the top of a signed char, shift back
        return f"(signed char)((signed char)({raw} << {8 - shift - dt.bits}) >> {8 - dt.bits})"
    return f"(unsigned char)(({raw} >> {shift}) & {mask})"


def write_lane(target: str, dt: DType, lane: int, value: str) -> str:
    """The statement (without indentation) storing scalar `value` into lane `lane` of variable `target`."""
    kind = layout(dt)
    if kind == "native":
        return f"{target}.{_XYZW[lane]} = {value};"
    if kind == "half2":
        return f"(({scalar_type(dt)}*)(&({target})))[{lane}] = {value};"
    if kind == "words":  # 8-bit lanes in 32-bit words: unsigned masking and shifts only
        words = dt.lanes // 4
        word = target if words == 1 else f"{target}.{_XYZW[lane // 4]}"
        shift = 8 * (lane % 4)
        keep = f"0x{0xFFFFFFFF ^ (0xFF << shift):08X}u"
        word_type = "int" if dt.is_signed_int else "uint"
        return (f"{word} = static_cast<{word_type}>((static_cast<unsigned int>({word}) & {keep}) | "
                f"(static_cast<unsigned int>(static_cast<unsigned char>({value})) << {shift}));")
    if kind == "fp8":
        if dt.lanes == 2:
            return f"tl_fp8x2_set_lane({target}, {lane}, {value});"
        path, sub = _halves(dt.lanes, lane, 4)
        return f"{target}.{'.'.join([*path, _XYZW[sub]])} = {value};"
    if kind == "fp4":
        path, sub = _halves(dt.lanes, lane, 2)
        member = ".".join(path)
        return f"{target}{'.' + member if member else ''}.set_{'xy'[sub]}({value});"
    byte, shift, mask = _bit_field(dt, lane)
    cell = f"((unsigned char*)(&({target})))[{byte}]"
    return (f"{cell} = (unsigned char)(({cell} & ~({mask} << {shift})) | "
            f"((static_cast<unsigned int>({value}) & {mask}) << {shift}));")
