"""The SASS parser of benchmarks/sass_compare.py (main loop, instruction mix, resource report) on captured
cuobjdump / nvdisasm excerpts, and its skip when the reference or the tools are missing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "sass_compare.py"


@pytest.fixture(scope="module")
def sc():
    spec = importlib.util.spec_from_file_location("sass_compare_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def _sass(name: str, lines: list[tuple[int, str]]) -> str:
    """cuobjdump -sass layout: header, then each instruction with its encoding comment and the control word."""
    out = ["", "\tcode for sm_90a", "\t.target\tsm_90a", "", f"\t\tFunction : {name}",
           '\t.headerflags\t@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"']
    for addr, text in lines:
        pad = " " * (19 if text.startswith("@") else 19 + 4)  # cuobjdump aligns opcodes after a guard's room
        out.append(f"        /*{addr:04x}*/{pad}{text} ;{'':>20}/* 0x000fe20000000800 */")
        out.append(f"{'':>90}/* 0x000fe20000000800 */")
    return "\n".join(out) + "\n\t\t..........\n"


# a warp-specialised Hopper GEMM, abridged from the reference's cubin: consumer loop 0x40..0x90 (two HGMMA),
# producer loop 0xc0..0x130 unrolled twice (two stage waits), each with an out-of-line barrier wait whose
# unconditional way back re-enters the loop in its middle, and the trailing trap loop and NOP padding
WARP_SPECIALIZED = [
    (0x00, "USETMAXREG.TRY_ALLOC.CTAPOOL UP0, 0xf0"),
    (0x10, "@!P0 BRA 0xb0"),
    (0x20, "MOV R2, RZ"),
    (0x30, "SYNCS.EXCH.64 URZ, [UR8], UR4"),
    (0x40, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR5], R2"),
    (0x50, "@!P0 BRA 0x150"),
    (0x60, "HGMMA.64x128x16.F32 R24, gdesc[UR12], R24"),
    (0x70, "HGMMA.64x128x16.F32 R24, gdesc[UR12], R24, gsb0"),
    (0x80, "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR5+0x18], RZ"),
    (0x90, "@P0 BRA 0x40"),
    (0xa0, "EXIT"),
    (0xb0, "USETMAXREG.DEALLOC.CTAPOOL 0x18"),
    (0xc0, "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR7+0x18], R2"),
    (0xd0, "UTMALDG.2D [UR8], [UR6], desc[UR16]"),
    (0xe0, "SYNCS.ARRIVE.TRANS64 RZ, [UR9], R2"),
    (0xf0, "UTMALDG.2D [UR12], [UR20], desc[UR16]"),
    (0x100, "SYNCS.PHASECHK.TRANS64.TRYWAIT P1, [UR7+0x18], R2"),
    (0x110, "UTMALDG.2D [UR8], [UR6], desc[UR16]"),
    (0x120, "UTMALDG.2D [UR12], [UR20], desc[UR16]"),
    (0x130, "@P0 BRA 0xc0"),
    (0x140, "EXIT"),
    (0x150, "SYNCS.PHASECHK.TRANS64 P0, [R3+URZ], R2"),
    (0x160, "@!P0 BRA 0x150"),
    (0x170, "BRA 0x60"),
    (0x180, "BRA 0x180"),
    (0x190, "NOP"),
]

# a multistage Ampere GEMM: an outer loop around the MMA loop; the inner one is the main loop
AMPERE = [
    (0x00, "S2R R0, SR_TID.X"),
    (0x10, "STL [R1+0x1c], RZ"),
    (0x20, "LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R4.64]"),
    (0x30, "LDGDEPBAR"),
    (0x40, "DEPBAR.LE SB0, 0x1"),
    (0x50, "BAR.SYNC.DEFER_BLOCKING 0x0"),
    (0x60, "LDSM.16.M88.4 R8, [R2]"),
    (0x70, "LDS.128 R12, [R2+0x100]"),
    (0x80, "HMMA.16816.F32 R72, R8, R12, R72"),
    (0x90, "HMMA.16816.F32 R76, R8, R14, R76"),
    (0xa0, "STS [R2], R9"),
    (0xb0, "LDG.E R5, desc[UR4][R6.64]"),
    (0xc0, "@P0 BRA 0x40"),
    (0xd0, "LDL R5, [R1+0x1c]"),
    (0xe0, "@P1 BRA 0x20"),
    (0xf0, "EXIT"),
]

RES_USAGE = """
Resource usage:
 Common:
  GLOBAL:0
 Function main_kernel:
  REG:166 STACK:0 SHARED:1024 LOCAL:8 CONSTANT[0]:552 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def test_instructions_and_absolute_branch_targets_are_parsed(sc):
    functions = sc.parse_sass(_sass("main_kernel", AMPERE))
    instrs = functions["main_kernel"]
    assert len(instrs) == len(AMPERE)
    assert instrs[8] == sc.Instr(0x80, "", "HMMA.16816.F32", "R72, R8, R12, R72")
    assert instrs[12].pred == "@P0" and sc.branch_target(instrs[12]) == 0x40
    assert sc.branch_target(instrs[0]) is None


def test_inner_mma_loop_is_the_main_loop_and_its_mix_is_counted(sc):
    instrs = sc.parse_sass(_sass("main_kernel", AMPERE))["main_kernel"]
    assert sc.loops(instrs) == [(0x20, 0xe0), (0x40, 0xc0)]
    loop = sc.main_loop(instrs)
    assert loop["kind"] == "mma loop" and loop["spans"] == [[0x40, 0xc0]]
    counts = loop["counts"]
    assert (counts["total"], counts["HMMA"], counts["LDSM"], counts["LDS"], counts["STS"], counts["LDG"],
            counts["BAR"], counts["LDGSTS"], counts["GMMA"]) == (9, 2, 1, 1, 1, 1, 1, 0, 0)
    assert loop["work"] == 2 * 16 * 8 * 16  # two m16n8k16


def test_warp_specialised_loop_adds_the_producer_loop_and_skips_wait_stubs(sc):
    instrs = sc.parse_sass(_sass("main_kernel", WARP_SPECIALIZED))["main_kernel"]
    # the spin loop 0x150..0x160 is a loop; `BRA 0x60` after it and the trap loop `BRA 0x180` are not
    assert sc.loops(instrs) == [(0x40, 0x90), (0xc0, 0x130), (0x150, 0x160)]
    loop = sc.main_loop(instrs)
    assert loop["kind"] == "mma loop + producer loop"
    assert loop["spans"] == [[0x40, 0x90], [0xc0, 0x130]]
    assert (loop["mma_total"], loop["producer_total"], loop["producer_unroll"]) == (6, 8, 2)
    assert loop["work"] == 2 * 64 * 128 * 16
    assert loop["counts"]["GMMA"] == 2 and loop["counts"]["UTMALDG"] == 4 and loop["counts"]["SYNCS"] == 5
    # per pipeline iteration: the MMA body scaled to one HGMMA's work, plus half the producer body
    assert sc.per_iteration(loop, 64 * 128 * 16) == pytest.approx(3 + 4)
    whole = sc.analyze(_sass("main_kernel", WARP_SPECIALIZED), RES_USAGE)
    assert whole["warp_specialized"] and whole["tma"] and whole["tensor_core"] == "GMMA"
    assert whole["instructions"] == len(WARP_SPECIALIZED) - 1  # the NOP is not counted


def test_a_producer_pass_counts_the_iterations_its_counter_steps_not_its_waits(sc):
    """The reference's MLA decode producer waits twice an iteration (one barrier a copy group) and nvcc unrolled
    it twice: four waits, two iterations, which its counter's step (2, compared with 0x81) says."""
    lines = [(a, t) for a, t in WARP_SPECIALIZED if a < 0x130]
    lines += [(0x130, "IADD3 R4, R4, 0x2, RZ"), (0x140, "ISETP.NE.AND P0, PT, R4, 0x81, PT"),
              (0x150, "@P0 BRA 0xc0"), (0x160, "EXIT")]
    body = [i for i in sc.parse_sass(_sass("main_kernel", lines))["main_kernel"] if 0xc0 <= i.addr <= 0x150]
    assert sc.counter_step(body) == 2
    loop = sc.main_loop(sc.parse_sass(_sass("main_kernel", lines))["main_kernel"])
    assert (loop["producer_total"], loop["producer_unroll"]) == (10, 2)
    # a counter that is not a constant add (or no compare at all) leaves the count to the waits
    assert sc.counter_step([i for i in body if i.base != "IADD3"]) is None


def test_kernel_without_tensor_cores_counts_as_a_whole(sc):
    lines = [(0x00, "LDG.E.128 R4, desc[UR4][R2.64]"), (0x10, "SHFL.BFLY PT, R3, R0, 0x10, 0x1f"),
             (0x20, "@P0 BRA 0x10"), (0x30, "STG.E.128 desc[UR4][R2.64], R4"), (0x40, "EXIT")]
    loop = sc.main_loop(sc.parse_sass(_sass("k", lines))["k"])
    assert loop["kind"] == "whole kernel" and loop["counts"]["total"] == 5 and loop["counts"]["LDG"] == 1


def test_res_usage_and_spills(sc):
    assert sc.parse_res_usage(RES_USAGE) == {"main_kernel": {
        "REG": 166, "STACK": 0, "SHARED": 1024, "LOCAL": 8, "CONSTANT[0]": 552, "TEXTURE": 0, "SURFACE": 0,
        "SAMPLER": 0}}
    rec = sc.analyze(_sass("main_kernel", AMPERE), RES_USAGE)
    assert (rec["registers"], rec["static_shared"], rec["local"], rec["spill_instructions"]) == (166, 1024, 8, 2)
    assert rec["tensor_core"] == "HMMA" and not rec["tma"] and not rec["warp_specialized"]


def test_checks_compare_per_iteration_and_flag_the_stack(sc):
    ws = sc.analyze(_sass("main_kernel", WARP_SPECIALIZED), RES_USAGE)
    # ours: the same two HGMMA in a loop that also loads (no producer loop), 4 instructions longer
    plain = [(0x00, "LDGSTS.E.128 [R3], desc[UR4][R4.64]"), (0x10, "BAR.SYNC.DEFER_BLOCKING 0x0"),
             (0x20, "HGMMA.64x128x16.F32 R24, gdesc[UR12], R24"), (0x30, "HGMMA.64x128x16.F32 R24, gdesc[UR12], R24"),
             *[(0x40 + 0x10 * i, "IADD3 R1, R1, 0x1, RZ") for i in range(6)], (0xa0, "@P0 BRA 0x0"),
             (0xb0, "EXIT")]
    ours = sc.analyze(_sass("main_kernel", plain), RES_USAGE.replace("STACK:0", "STACK:16"))
    ours["dynamic_shared"], ours["arch"] = 200 * 1024, "sm_90a"
    ws["dynamic_shared"] = 0
    result = sc.compare(ours, ws, "sm_90a")
    # reference per iteration: its 6-instruction MMA loop + half of its 8-instruction producer loop = 10
    assert (ours["loop_per_iteration"], ws["loop_per_iteration"], result["loop_ratio"]) == (11, 10, 1.1)
    assert result["checks"] == {"loop_within_1.05": False, "fits_shared": True, "no_spills": False,
                                "same_tensor_core": True, "tma_where_reference": False,
                                "ws_where_reference": False}
    ours["dynamic_shared"] = 228 * 1024
    assert not sc.compare(ours, ws, "sm_90a")["checks"]["fits_shared"]


def test_nvdisasm_labels_become_addresses(sc):
    text = """
//--------------------- .text.main_kernel         --------------------------
\t.section\t.text.main_kernel,"ax",@progbits
main_kernel:
.text.main_kernel:
        /*0000*/                   S2R R0, SR_TID.X ;
.L_x_0:
        /*0010*/                   HMMA.1688.F32.TF32 R4, R8, R12, R4 ;
        /*0020*/               @P0 BRA `(.L_x_0) ;
        /*0030*/                   EXIT ;
"""
    instrs = sc.parse_sass(text)["main_kernel"]
    assert [i.opcode for i in instrs] == ["S2R", "HMMA.1688.F32.TF32", "BRA", "EXIT"]
    assert sc.branch_target(instrs[2]) == 0x10
    loop = sc.main_loop(instrs)
    assert loop["spans"] == [[0x10, 0x20]] and loop["work"] == 16 * 8 * 8


def test_missing_reference_skips_with_a_message(sc, monkeypatch, capsys):
    monkeypatch.delenv(sc.REFERENCE_ENV, raising=False)
    monkeypatch.setattr(sc.shutil, "which", lambda name: None)
    assert sc.main(["--reference-python", ""]) == 2
    err = capsys.readouterr().err
    assert "skipped" in err and "nvcc is not on PATH" in err and sc.REFERENCE_ENV in err


def test_finding_tools_imports_no_wheel(sc, monkeypatch):
    """Triton's cuobjdump is found from its wheel's folder without importing triton: its LLVM, loaded into a process
    that has TVM's, crashed the interpreter (a segfault in the pytest worker that ran this file after others)."""
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    monkeypatch.setattr(sc.shutil, "which", lambda name: None)
    sc.find_tool("cuobjdump")
    assert "triton" not in sys.modules
