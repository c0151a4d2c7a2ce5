"""SASS of this project's CUDA kernels next to the reference TileLang 0.1.15's, without a GPU.

The kernels of `sass_kernels.py` (one DSL source for both installs) are compiled for sm_90a and sm_80 by this
project (the interpreter running this script, or ``--ours-python``) and by the reference (``--reference-python``
or ``TILELANG_REFERENCE_PYTHON``: a venv with ``tilelang==0.1.15``), each in its own subprocess (``--worker``,
which imports nothing of this project). Each side's cubin is the one its own build produced (this project's
artifact holds it; the reference's comes from its nvcc call, captured). Then ``cuobjdump`` reports per kernel:
registers, local memory and spill instructions (LDL/STL), static and dynamic shared memory, the SASS instruction
count (NOPs left out) and the main loop's instruction mix.

The main loop is the backward branch (``BRA`` to a lower address) whose body holds the most tensor-core
instructions, the innermost on a tie; where warp specialisation splits it (the MMA loop loads nothing and another
loop, outside it, loads the tiles) that producer loop is added to it. A kernel without tensor-core instructions
counts as a whole ("main loop" = the kernel). Unrolling differs between the two compilers, so the loops are
compared per pipeline iteration: the MMA loop's instructions are scaled to the tensor-core work (sum of m*n*k of
its HGMMA / HMMA) of the less unrolled side's body, and a producer loop's are divided by the iterations one pass
of its body covers: the step of its loop counter (the register its closing compare tests), else its stage waits
(``SYNCS.PHASECHK``; a producer may wait several times an iteration, one barrier a copy group, as the reference's
MLA decode does). The instruction mix is that of the loop bodies as they are.

    python benchmarks/sass_compare.py --reference-python /work/refvenv/bin/python [--kernels a,b] [--archs sm_80]
        [--json out.json] [--out DIR [--reuse]] [--ours-pass-config tl.disable_warp_specialized=true]

Exit status 0 when the comparison ran (whatever it shows); 2 when nvcc, cuobjdump or the reference is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARCHS = ("sm_90a", "sm_80")
SIDES = ("ours", "reference")
REFERENCE_ENV = "TILELANG_REFERENCE_PYTHON"

# instruction classes of the main-loop mix: (column, predicate on the opcode's base name, e.g. "HGMMA")
CLASSES = (
    ("GMMA", lambda op: op.endswith("GMMA")),  # wgmma: HGMMA (fp16/bf16/tf32), QGMMA (fp8), IGMMA, BGMMA
    ("UTCMMA", lambda op: op.startswith("UTC") and op.endswith("MMA")),  # tcgen05.mma: UTCHMMA, UTCQMMA, ...
    ("LDTM", lambda op: op in ("LDTM", "STTM")),  # tcgen05.ld / .st
    ("HMMA", lambda op: op in ("HMMA", "IMMA", "QMMA", "BMMA", "DMMA")),  # mma.sync
    ("LDSM", lambda op: op in ("LDSM", "STSM")),
    ("LDS", lambda op: op == "LDS"),
    ("STS", lambda op: op == "STS"),
    ("LDG", lambda op: op == "LDG"),
    ("LDGSTS", lambda op: op == "LDGSTS"),
    ("UTMALDG", lambda op: op in ("UTMALDG", "UBLKCP")),
    ("UTMASTG", lambda op: op in ("UTMASTG", "UBLKRED", "UTMAREDG")),
    ("SYNCS", lambda op: op == "SYNCS"),
    ("BAR", lambda op: op == "BAR"),
    ("SETMAXNREG", lambda op: op == "USETMAXREG"),
)
TENSOR_CORE = ("GMMA", "HMMA", "UTCMMA")
# a block's shared memory (cuobjdump's static SHARED, which on sm_90 holds the 1 KiB system reservation, plus the
# dynamic bytes) must not pass the device's opt-in maximum: A100 163 KiB, H100 227 KiB + that reservation
SHARED_LIMIT = {"sm_80": 163 * 1024, "sm_90a": 228 * 1024, "sm_100a": 228 * 1024}
LOADS = ("LDG", "LDGSTS", "UTMALDG")


# ------------------------------------------------------------------------------------------------ SASS parsing
@dataclass(frozen=True)
class Instr:
    """One SASS instruction: its address, guard predicate (``@!P0`` or ""), full opcode and operands."""

    addr: int
    pred: str
    opcode: str
    operands: str

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]


_INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)\s*([^;]*);")
_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_NVDISASM_FUNCTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_LABEL = re.compile(r"^\s*(\.L\w+):")
_TARGET_ADDR = re.compile(r"^\s*(0x[0-9a-fA-F]+)")
_TARGET_LABEL = re.compile(r"`\((\.L\w+)\)")


def parse_sass(text: str) -> dict[str, list[Instr]]:
    """``{function: [Instr, ...]}`` from ``cuobjdump -sass`` (``Function : name`` headers, absolute branch
    targets) or ``nvdisasm`` output (``.section .text.name`` headers, ``.L_x_N:`` labels). Label targets are
    rewritten to the address of the instruction following the label, so branches always carry a hex target."""
    functions: dict[str, list[Instr]] = {}
    labels: dict[str, dict[str, int]] = {}
    pending: list[str] = []
    current: str | None = None
    for line in text.splitlines():
        header = _FUNCTION.match(line) or _NVDISASM_FUNCTION.match(line)
        if header:
            current = header.group(1)
            functions.setdefault(current, [])
            labels.setdefault(current, {})
            pending = []
            continue
        label = _LABEL.match(line)
        if label and current is not None:
            pending.append(label.group(1))
            continue
        m = _INSTR.match(line)
        if m is None or current is None:
            continue
        addr = int(m.group(1), 16)
        for name in pending:
            labels[current][name] = addr
        pending = []
        functions[current].append(Instr(addr, (m.group(2) or "").strip(), m.group(3), m.group(4).strip()))
    for name, instrs in functions.items():
        for i, ins in enumerate(instrs):
            target = _TARGET_LABEL.search(ins.operands)
            if target and target.group(1) in labels[name]:
                instrs[i] = Instr(ins.addr, ins.pred, ins.opcode, hex(labels[name][target.group(1)]))
    return functions


def branch_target(ins: Instr) -> int | None:
    """The address a ``BRA`` jumps to (None for anything else or an indirect branch)."""
    if ins.base != "BRA":
        return None
    m = _TARGET_ADDR.match(ins.operands)
    return int(m.group(1), 16) if m else None


def loops(instrs: list[Instr]) -> list[tuple[int, int]]:
    """``(start, end)`` addresses of every backward branch's body (``end`` is the branch itself); a branch to
    itself (the trailing trap loop) is not a loop, nor the unconditional jump back from an out-of-line barrier
    wait (it re-enters a loop in its middle)."""
    found = []
    for i, ins in enumerate(instrs):
        target = branch_target(ins)
        if target is None or target >= ins.addr:
            continue
        if not ins.pred and i and (before := branch_target(instrs[i - 1])) is not None and \
                before < instrs[i - 1].addr:
            continue  # the way back from an out-of-line wait (a spin loop, then `BRA` into the loop it left)
        found.append((target, ins.addr))
    return sorted(set(found))


def body(instrs: list[Instr], span: tuple[int, int]) -> list[Instr]:
    return [ins for ins in instrs if span[0] <= ins.addr <= span[1]]


def classify(instrs: list[Instr]) -> dict[str, int]:
    """Counts of the `CLASSES` columns, plus ``total`` (NOPs left out) and ``spill`` (LDL / STL)."""
    counts: Counter[str] = Counter()
    for ins in instrs:
        if ins.base == "NOP":
            continue
        counts["total"] += 1
        if ins.base in ("LDL", "STL"):
            counts["spill"] += 1
        for column, test in CLASSES:
            if test(ins.base):
                counts[column] += 1
                break
    return {column: counts.get(column, 0) for column in ("total", "spill", *(c for c, _ in CLASSES))}


def _tc(counts: dict[str, int]) -> int:
    return sum(counts[c] for c in TENSOR_CORE)


def _loads(counts: dict[str, int]) -> int:
    return sum(counts[c] for c in LOADS)


_GMMA_SHAPE = re.compile(r"\.(\d+)x(\d+)x(\d+)")
_MMA_SHAPE = re.compile(r"\.(16|8)(8)(\d+)\b")


def mma_work(ins: Instr) -> int:
    """m*n*k of a tensor-core instruction from its opcode (``HGMMA.64x128x16``, ``HMMA.16816`` = m16n8k16);
    0 for anything else."""
    if not any(test(ins.base) for column, test in CLASSES if column in TENSOR_CORE):
        return 0
    m = _GMMA_SHAPE.search(ins.opcode) or _MMA_SHAPE.search(ins.opcode)
    return int(m.group(1)) * int(m.group(2)) * int(m.group(3)) if m else 1


def main_loop(instrs: list[Instr]) -> dict:
    """The main loop of one function (see the module doc): ``kind``, ``spans``, summed ``counts``, the MMA
    loop's ``mma_total`` instructions and tensor-core ``work`` (sum of m*n*k), and a producer loop's ``producer_total``
    and ``producer_unroll`` (the iterations one pass covers: its counter's step, `counter_step`, else its barrier
    waits, ``SYNCS.PHASECHK``)."""
    candidates = [(span, classify(body(instrs, span))) for span in loops(instrs)]
    with_tc = [(span, c) for span, c in candidates if _tc(c)]
    if not with_tc:
        counts = classify(instrs)
        return {"kind": "whole kernel", "spans": [], "counts": counts, "mma_total": counts["total"], "work": 0,
                "producer_total": 0, "producer_unroll": 1}
    best = max(_tc(c) for _, c in with_tc)
    span, counts = min(((s, c) for s, c in with_tc if _tc(c) == best), key=lambda sc: sc[0][1] - sc[0][0])
    result = {"kind": "mma loop", "spans": [list(span)], "counts": dict(counts), "mma_total": counts["total"],
              "work": sum(mma_work(i) for i in body(instrs, span)), "producer_total": 0, "producer_unroll": 1}
    if _loads(counts) == 0:  # warp-specialised: the tiles arrive through another loop
        outside = [(s, c) for s, c in candidates
                   if (s[1] < span[0] or s[0] > span[1]) and _loads(c) and not _tc(c)]
        if outside:
            most = max(_loads(c) for _, c in outside)
            pspan, pcounts = min(((s, c) for s, c in outside if _loads(c) == most),
                                 key=lambda sc: sc[0][1] - sc[0][0])
            unroll = counter_step(body(instrs, pspan))
            if unroll is None:
                unroll = sum(1 for i in body(instrs, pspan) if i.opcode.startswith("SYNCS.PHASECHK"))
            result.update(kind="mma loop + producer loop", producer_total=pcounts["total"],
                          producer_unroll=max(1, unroll), counts={k: counts[k] + pcounts[k] for k in counts})
            result["spans"].append(list(pspan))
    return result


_COMPARE = re.compile(r"^U?P\w+, U?PT, (U?R\d+), ")


def counter_step(instrs: list[Instr]) -> int | None:
    """Pipeline iterations one pass of a loop body covers: the step its counter (the register its closing
    compare tests) is increased by, or None when that is not a plain constant add. A producer loop may wait on
    several barriers an iteration (the reference waits once a copy group), so its waits do not count them."""
    compare = next((i for i in reversed(instrs) if i.base in ("ISETP", "UISETP")), None)
    m = _COMPARE.match(compare.operands) if compare is not None else None
    if m is None:
        return None
    reg = m.group(1)
    for i in instrs:
        if i.base in ("IADD3", "UIADD3", "VIADD") and not i.pred:
            ops = [o.strip() for o in i.operands.split(",")]
            if len(ops) >= 3 and ops[0] == reg and ops[1] == reg and ops[2].startswith("0x") and \
                    all(o in ("RZ", "URZ", "!PT", "!UPT") for o in ops[3:]):
                step = int(ops[2], 16)
                return step if 0 < step <= 64 else None
    return None


def per_iteration(loop: dict, unit: int) -> float:
    """Main-loop instructions for `unit` of tensor-core work (one pipeline iteration when `unit` is the work
    of the less unrolled side's loop body), plus one iteration of a producer loop."""
    mma = loop["mma_total"] * unit / loop["work"] if loop["work"] else loop["mma_total"]
    return mma + loop["producer_total"] / loop["producer_unroll"]


_RES_FUNCTION = re.compile(r"^\s*Function\s+(\S+?):\s*$")
_RES_FIELD = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")


def parse_res_usage(text: str) -> dict[str, dict[str, int]]:
    """``{function: {"REG": .., "STACK": .., "SHARED": .., "LOCAL": .., ...}}`` from ``cuobjdump -res-usage``."""
    result: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        m = _RES_FUNCTION.match(line)
        if m:
            current = m.group(1)
            continue
        if current is not None and "REG:" in line:
            result[current] = {k: int(v) for k, v in _RES_FIELD.findall(line)}
            current = None
    return result


def analyze(sass: str, res_usage: str) -> dict:
    """Per-cubin metrics of its largest function (the kernel; helpers are inlined), from the two dumps."""
    functions = parse_sass(sass)
    if not functions:
        raise ValueError("no SASS function found in the disassembly")
    name = max(functions, key=lambda f: len(functions[f]))
    instrs = functions[name]
    whole = classify(instrs)
    usage = parse_res_usage(res_usage).get(name, {})
    loop = main_loop(instrs)
    tc = next((c for c in TENSOR_CORE if whole[c]), "-")
    tc_ops = sorted({i.base for i in instrs if i.base.endswith("GMMA") or i.base.endswith("MMA")})
    return {
        "function": name, "registers": usage.get("REG"), "stack": usage.get("STACK"), "local": usage.get("LOCAL"),
        "static_shared": usage.get("SHARED"), "spill_instructions": whole["spill"], "instructions": whole["total"],
        "tensor_core": tc, "tensor_core_ops": tc_ops, "tma": bool(whole["UTMALDG"] or whole["UTMASTG"]),
        "warp_specialized": bool(whole["SETMAXNREG"]), "whole": whole, "main_loop": loop,
    }


# ------------------------------------------------------------------------------------------------ tools
def find_tool(name: str) -> str | None:
    """`name` on PATH, next to nvcc, under CUDA_HOME, or from NVIDIA's / Triton's pip wheels."""
    found = shutil.which(name)
    if found:
        return found
    places = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        places.append(Path(os.path.realpath(nvcc)).parent)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            places.append(Path(os.environ[var]) / "bin")
    places.append(Path("/usr/local/cuda/bin"))
    # the wheels' folders, found without importing them: importing triton loads its LLVM, which crashes in a
    # process that has TVM's loaded already
    for package, sub in (("nvidia", "*/bin"), ("triton", "backends/nvidia/bin")):
        spec = importlib.util.find_spec(package)
        for root in (spec.submodule_search_locations or []) if spec else []:
            places.extend(Path(root).glob(sub))
    for place in places:
        if (place / name).is_file() and os.access(place / name, os.X_OK):
            return str(place / name)
    return None


def _run(cmd: list[str]) -> str:
    env = dict(os.environ)
    nvdisasm = find_tool("nvdisasm")  # cuobjdump -sass runs it: from PATH or NVDISASM_PATH only
    if nvdisasm and not shutil.which("nvdisasm"):
        env["NVDISASM_PATH"] = str(Path(nvdisasm).parent)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
    return proc.stdout


# ------------------------------------------------------------------------------------------------ worker
def _capture_nvcc() -> list[bytes]:
    """Record every binary `tilelang.contrib.nvcc.compile_cuda` returns (the reference compiles through it)."""
    captured: list[bytes] = []
    try:
        from tilelang.contrib import nvcc
    except ImportError:
        return captured
    original = getattr(nvcc, "compile_cuda", None)
    if original is None:
        return captured

    def compile_cuda(*args, **kwargs):
        binary = original(*args, **kwargs)
        captured.append(bytes(binary))
        return binary

    nvcc.compile_cuda = compile_cuda
    return captured


def _launch_facts(kernel) -> dict:
    """Threads per block and dynamic shared bytes of a compiled kernel, from either install's artifact."""
    artifact = kernel.artifact
    plan = getattr(artifact, "launch_plan", None)
    if plan is not None and getattr(plan, "kernels", None):  # this project
        main = max(plan.kernels, key=lambda k: int(k.dynamic_shared_bytes or 0))
        block = [int(x) for x in main.block]
        return {"threads": block[0] * block[1] * block[2], "dynamic_shared": int(main.dynamic_shared_bytes or 0)}
    facts = {"threads": None, "dynamic_shared": 0}  # the reference: the device functions' attributes
    for _, func in artifact.device_mod.functions.items():
        attrs = func.attrs or {}
        if "dyn_shared_memory_buf" in attrs:
            facts["dynamic_shared"] = max(facts["dynamic_shared"], int(attrs["dyn_shared_memory_buf"]))
        if "thread_extent" in attrs:
            ext = attrs["thread_extent"]
            facts["threads"] = int(ext.get("threadIdx.x", 1)) * int(ext.get("threadIdx.y", 1)) * \
                int(ext.get("threadIdx.z", 1))
    return facts


def worker(side: str, out: Path, names: list[str], archs: list[str], extra: dict | None = None) -> None:
    """Compile each (kernel, arch) with the tilelang this interpreter imports, its pass configs updated with
    `extra`; write ``<name>.<arch>.cubin`` / ``.cu`` and a ``.json`` record (its error instead, when the build
    fails)."""
    import tilelang

    sys.path.insert(0, str(HERE))
    import sass_kernels

    if hasattr(tilelang, "disable_cache"):
        tilelang.disable_cache()
    captured = _capture_nvcc()
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        builder, kernel_archs = sass_kernels.KERNELS[name]
        for arch in archs:
            if arch not in kernel_archs:
                continue
            stem = out / f"{name}.{arch}"
            record = {"kernel": name, "arch": arch, "side": side, "tilelang": getattr(tilelang, "__version__", "?")}
            start = time.time()
            captured.clear()
            try:
                func, configs = builder(arch)
                configs = {**configs, **(extra or {})}
                record["pass_configs"] = configs
                kernel = tilelang.compile(func, target={"kind": "cuda", "arch": arch}, pass_configs=configs)
                files = getattr(kernel.artifact, "files", None) or {}
                cubin = files.get("kernel.cubin") or (captured[-1] if captured else None)
                if cubin is None:
                    raise RuntimeError("the build produced no cubin that this script could find")
                Path(f"{stem}.cubin").write_bytes(bytes(cubin))
                Path(f"{stem}.cu").write_text(kernel.get_kernel_source())
                record.update(_launch_facts(kernel))
            except Exception as exc:
                text = f"{type(exc).__name__}: {exc}".strip()
                record["error"] = next((ln for ln in text.splitlines() if ln.strip()), text)[:400]
            record["seconds"] = round(time.time() - start, 1)
            Path(f"{stem}.json").write_text(json.dumps(record, indent=1))
            print(f"[{side}] {name} {arch}: {record.get('error', 'ok')} ({record['seconds']} s)", flush=True)


# ------------------------------------------------------------------------------------------------ driver
def _side_env(side: str, cache: Path) -> dict[str, str]:
    env = dict(os.environ, TILELANG_CACHE_DIR=str(cache))
    if side == "reference":  # the reference must not import this project's sources
        env.pop("PYTHONPATH", None)
    return env


def run_side(side: str, python: str, out: Path, names: list[str], archs: list[str], timeout: float,
             extra: dict | None = None) -> None:
    cache = out / f"cache-{side}"
    shutil.rmtree(cache, ignore_errors=True)
    cmd = [python, str(Path(__file__).resolve()), "--worker", side, "--out", str(out / side),
           "--kernels", ",".join(names), "--archs", ",".join(archs), "--worker-configs", json.dumps(extra or {})]
    try:
        subprocess.run(cmd, env=_side_env(side, cache), timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        print(f"[{side}] stopped after {timeout:.0f} s; the kernels not reached count as not built", flush=True)


def compare(ours: dict, ref: dict, arch: str) -> dict:
    """``loop_ratio`` (main-loop instructions per iteration, ours / reference; each record gets its
    ``loop_per_iteration``) and the issue's ``checks`` for one (kernel, arch) both sides built."""
    ol, rl = ours["main_loop"], ref["main_loop"]
    unit = min(w for w in (ol["work"], rl["work"]) if w) if (ol["work"] or rl["work"]) else 0
    o, r = per_iteration(ol, unit), per_iteration(rl, unit)
    ours["loop_per_iteration"], ref["loop_per_iteration"] = round(o, 1), round(r, 1)
    return {"loop_ratio": round(o / r, 3) if r else None, "checks": {
        "loop_within_1.05": bool(r) and o <= 1.05 * r,
        "fits_shared": ours["static_shared"] + ours["dynamic_shared"] <= SHARED_LIMIT.get(arch, 1 << 30),
        "no_spills": not ours["spill_instructions"] and not ours["local"] and not ours["stack"],
        "same_tensor_core": ours["tensor_core"] == ref["tensor_core"],
        "tma_where_reference": ours["tma"] or not ref["tma"],
        "ws_where_reference": ours["warp_specialized"] or not ref["warp_specialized"],
    }}


def collect(out: Path, names: list[str], archs: list[str], cuobjdump: str) -> list[dict]:
    import sass_kernels

    rows = []
    for name in names:
        for arch in archs:
            if arch not in sass_kernels.KERNELS[name][1]:
                continue
            row = {"kernel": name, "arch": arch, "shared_limit": SHARED_LIMIT.get(arch)}
            for side in SIDES:
                stem = out / side / f"{name}.{arch}"
                record_path = Path(f"{stem}.json")
                record = json.loads(record_path.read_text()) if record_path.exists() else {"error": "not built"}
                if "error" not in record:
                    cubin = str(Path(f"{stem}.cubin"))
                    try:
                        record.update(analyze(_run([cuobjdump, "-sass", cubin]),
                                              _run([cuobjdump, "-res-usage", cubin])))
                    except (RuntimeError, ValueError) as exc:
                        record["error"] = str(exc)
                row[side] = record
            ours, ref = row["ours"], row["reference"]
            if "error" not in ours and "error" not in ref:
                row.update(compare(ours, ref, arch))
            rows.append(row)
    return rows


def _pair(row: dict, get) -> str:
    vals = []
    for side in SIDES:
        rec = row[side]
        vals.append("err" if "error" in rec else str(get(rec)))
    return " / ".join(vals)


def _smem(rec: dict) -> str:
    over = rec["static_shared"] + rec["dynamic_shared"] > SHARED_LIMIT.get(rec["arch"], 1 << 30)
    return f"{rec['static_shared']}+{rec['dynamic_shared']}" + ("!" if over else "")


def _mix(rec: dict) -> str:
    counts = rec["main_loop"]["counts"]
    return " ".join(f"{c}:{counts[c]}" for c, _ in CLASSES if counts[c])


def _local(rec: dict) -> str:
    return f"{rec['spill_instructions']}" + (f" ({rec['stack']} B stack)" if rec["stack"] else "")


def _flags(rec: dict) -> str:
    return ",".join(f for f, on in (("TMA", rec["tma"]), ("WS", rec["warp_specialized"])) if on) or "-"


def table(rows: list[dict]) -> str:
    """Markdown: one line a (kernel, arch), each cell ``ours / reference``; then the main-loop mix."""
    head = ("| kernel | arch | regs | LDL/STL | smem static+dyn (B) | SASS instr | main loop / iter | ratio "
            "| tensor core | TMA/WS | checks |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for row in rows:
        ratio = row.get("loop_ratio")
        checks = row.get("checks")
        failed = [k for k, ok in (checks or {}).items() if not ok]
        verdict = "-" if checks is None else ("ok" if not failed else "FAIL: " + ", ".join(failed))
        lines.append(
            f"| {row['kernel']} | {row['arch']} | {_pair(row, lambda r: r['registers'])} "
            f"| {_pair(row, _local)} | {_pair(row, _smem)} "
            f"| {_pair(row, lambda r: r['instructions'])} | {_pair(row, lambda r: r.get('loop_per_iteration', '?'))} "
            f"| {'-' if ratio is None else f'{ratio:.2f}'} | {_pair(row, lambda r: r['tensor_core'])} "
            f"| {_pair(row, _flags)} | {verdict} |")
    lines += ["", "| kernel | arch | main loop (ours) | mix (ours) | main loop (reference) | mix (reference) |",
              "|---|---|---|---|---|---|"]
    for row in rows:
        cells = []
        for side in SIDES:
            rec = row[side]
            cells += ([rec["main_loop"]["kind"], _mix(rec)] if "error" not in rec else ["not built", "-"])
        lines.append(f"| {row['kernel']} | {row['arch']} | " + " | ".join(cells) + " |")
    lines += ["", "Cells are `ours / reference`. LDL/STL: local-memory instructions (spills, or arrays ptxas put in "
              "local memory), with the stack frame's size where there is one. `!`: more shared memory than the "
              "device allows a block (sm_80: 163 KiB, sm_90a: 227 KiB + the 1 KiB reservation cuobjdump counts). "
              "main loop / iter: see the module doc."]
    errors = [(row["kernel"], row["arch"], side, row[side]["error"]) for row in rows for side in SIDES
              if "error" in row[side]]
    if errors:
        lines += ["", "Not built:", ""] + [f"- {k} {a} ({s}): {e}" for k, a, s, e in errors]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference-python", default=os.environ.get(REFERENCE_ENV),
                    help=f"python of a venv with tilelang==0.1.15 (default: ${REFERENCE_ENV})")
    ap.add_argument("--ours-python", default=sys.executable, help="python that imports this project")
    ap.add_argument("--kernels", default=None, help="comma-separated names (default: all of sass_kernels.KERNELS)")
    ap.add_argument("--archs", default=",".join(ARCHS))
    ap.add_argument("--out", default=None, help="directory for cubins, sources and records (default: a temp dir)")
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per side")
    ap.add_argument("--reuse", action="store_true", help="analyse the cubins already in --out, compile nothing")
    ap.add_argument("--ours-pass-config", action="append", default=[], metavar="KEY=VALUE",
                    help="a pass config for this project's builds only (JSON value, e.g. tl.cuda.enable_tma=true)")
    ap.add_argument("--worker", choices=SIDES, help=argparse.SUPPRESS)
    ap.add_argument("--worker-configs", default="{}", help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)
    archs = [a for a in ns.archs.split(",") if a]
    sys.path.insert(0, str(HERE))
    if ns.worker:
        worker(ns.worker, Path(ns.out), ns.kernels.split(","), archs, json.loads(ns.worker_configs))
        return 0
    import sass_kernels

    names = ns.kernels.split(",") if ns.kernels else list(sass_kernels.KERNELS)
    unknown = [n for n in names if n not in sass_kernels.KERNELS]
    if unknown:
        ap.error(f"unknown kernel(s) {', '.join(unknown)}; known: {', '.join(sass_kernels.KERNELS)}")
    extra = {}
    for item in ns.ours_pass_config:
        key, sep, value = item.partition("=")
        if not sep or not key:
            ap.error(f"--ours-pass-config takes KEY=VALUE, got {item!r}")
        try:
            extra[key] = json.loads(value)
        except json.JSONDecodeError:
            extra[key] = value
    missing = []
    if shutil.which("nvcc") is None:
        missing.append("nvcc is not on PATH")
    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        missing.append("cuobjdump was not found (CUDA toolkit, `pip install nvidia-cuda-cuobjdump`, or Triton)")
    if not ns.reuse and not ns.reference_python:
        missing.append(f"no reference TileLang: pass --reference-python or set {REFERENCE_ENV} to the python of a "
                       "venv with `pip install tilelang==0.1.15`")
    elif not ns.reuse and not os.access(ns.reference_python, os.X_OK):
        missing.append(f"the reference python {ns.reference_python} is not an executable")
    if missing:
        print("sass_compare: skipped: " + "; ".join(missing), file=sys.stderr)
        return 2
    out = Path(ns.out) if ns.out else Path(tempfile.mkdtemp(prefix="sass-compare-"))
    if not ns.reuse:
        run_side("ours", ns.ours_python, out, names, archs, ns.timeout, extra)
        run_side("reference", ns.reference_python, out, names, archs, ns.timeout)
    rows = collect(out, names, archs, cuobjdump)
    print(table(rows))
    if ns.json:
        Path(ns.json).parent.mkdir(parents=True, exist_ok=True)
        tool = next((ln.strip() for ln in _run([cuobjdump, "--version"]).splitlines() if "release" in ln), "?")
        Path(ns.json).write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "archs": archs,
                                             "ours_pass_configs": extra, "cuobjdump": tool, "rows": rows},
                                            indent=1) + "\n")
    print(f"\ncubins, sources and records: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
