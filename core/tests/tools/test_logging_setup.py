"""Logging: the level from the environment (``TILELANG_LOG_LEVEL`` and the reference's switches mapped onto it),
`set_log_level`, opt-in output shown at any level, records on stderr through tqdm (a progress bar survives a log
line), and `par_compile`'s progress bar."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys

import pytest

import tilelang
from tilelang import log

from .kernels import add_one

LEVEL_CODE = "import logging, tilelang; print(logging.getLogger('tilelang').getEffectiveLevel())"
STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  \[TileLang:")


@pytest.fixture
def restore_levels():
    names = ["tilelang", *log.OPT_IN_LOGGERS, log.COMPILATION_LOGGER]
    before = {n: logging.getLogger(n).level for n in names}
    yield
    for n, level in before.items():
        logging.getLogger(n).setLevel(level)


def _level_in_fresh_process(**env_vars: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TILELANG_LOG_LEVEL", "TILELANG_VERBOSE")}
    env.update(env_vars)
    proc = subprocess.run([sys.executable, "-c", LEVEL_CODE], env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    return int(proc.stdout.strip().splitlines()[-1]), proc.stderr


@pytest.mark.parametrize(("env_vars", "level"), [
    ({}, logging.WARNING),
    ({"TILELANG_VERBOSE": "1"}, logging.INFO),
    ({"TILELANG_LOG_LEVEL": "debug"}, logging.DEBUG),
    ({"TILELANG_LOG_LEVEL": "ERROR", "TILELANG_VERBOSE": "1"}, logging.ERROR),  # the explicit level wins
    ({"TILELANG_LOG_LEVEL": "15"}, 15),
])
def test_level_at_import_follows_the_environment(env_vars, level):
    assert _level_in_fresh_process(**env_vars)[0] == level


def test_a_bad_log_level_is_named_and_falls_back_to_warning():
    level, stderr = _level_in_fresh_process(TILELANG_LOG_LEVEL="loud")
    assert level == logging.WARNING
    assert "TILELANG_LOG_LEVEL='LOUD' is not a log level" in stderr


def test_configured_level_says_why(monkeypatch):
    monkeypatch.delenv("TILELANG_LOG_LEVEL", raising=False)
    monkeypatch.delenv("TILELANG_VERBOSE", raising=False)
    assert log.configured_level() == (logging.WARNING, "default")
    monkeypatch.setenv("TILELANG_VERBOSE", "true")
    assert log.configured_level() == (logging.INFO, "TILELANG_VERBOSE=1")
    monkeypatch.setenv("TILELANG_LOG_LEVEL", "critical")
    assert log.configured_level() == (logging.CRITICAL, "TILELANG_LOG_LEVEL=CRITICAL")
    monkeypatch.setenv("TILELANG_LOG_LEVEL", "chatty")
    with pytest.raises(ValueError, match="TILELANG_LOG_LEVEL='CHATTY' is not a log level"):
        log.configured_level()


def test_set_log_level_accepts_names_numbers_and_constants(restore_levels):
    logger = logging.getLogger("tilelang")
    for given, expected in (("debug", 10), (" Warning ", 30), ("25", 25), (logging.ERROR, 40)):
        tilelang.set_log_level(given)
        assert logger.level == expected
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        tilelang.set_log_level("loud")
    with pytest.raises(TypeError, match="name or an int"):
        tilelang.set_log_level(None)


def test_opt_in_output_stays_visible_at_any_level(restore_levels, capsys):
    """JIT diagnostics and pass timing are shown at INFO when the user turned them on, whatever the level."""
    from tilelang.jit.diagnostics import jit_phase

    tilelang.set_log_level("ERROR")
    with jit_phase("unit.phase", enabled=True, kernel="k"):
        pass
    with jit_phase("unit.silent", enabled=False):
        pass
    err = capsys.readouterr().err
    assert "TileLang JIT phase start: unit.phase" in err and "TileLang JIT phase done: unit.phase" in err
    assert "unit.silent" not in err
    assert logging.getLogger("tilelang.pass_timing").getEffectiveLevel() == logging.INFO
    tilelang.set_log_level("DEBUG")  # a lower level reaches them too
    assert logging.getLogger("tilelang.jit.diagnostics").getEffectiveLevel() == logging.DEBUG


def test_print_on_compilation_mapping(restore_levels, monkeypatch):
    compilation = logging.getLogger(log.COMPILATION_LOGGER)
    monkeypatch.delenv("TILELANG_PRINT_ON_COMPILATION", raising=False)
    tilelang.set_log_level("WARNING")
    assert compilation.getEffectiveLevel() == logging.WARNING  # the default: follows the tilelang level
    monkeypatch.setenv("TILELANG_PRINT_ON_COMPILATION", "1")
    tilelang.set_log_level("WARNING")
    assert compilation.getEffectiveLevel() == logging.INFO  # asked for by name: shown
    monkeypatch.setenv("TILELANG_PRINT_ON_COMPILATION", "0")
    tilelang.set_log_level("DEBUG")
    assert not tilelang.env.is_print_on_compilation_enabled()


@pytest.mark.backend("cpu")
def test_print_on_compilation_shows_the_line(restore_levels, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILELANG_PRINT_ON_COMPILATION", "1")
    tilelang.set_log_level("WARNING")
    tilelang.compile(add_one(32), out_idx=[-1], target="cpu")
    captured = capsys.readouterr()
    assert "TileLang begins to compile kernel `add_one`" in captured.err
    assert "begins to compile" not in captured.out


def test_records_go_to_stderr_not_stdout(restore_levels, capsys):
    tilelang.set_log_level("INFO")
    logging.getLogger("tilelang.unit").info("hello %s", "there")
    captured = capsys.readouterr()
    assert captured.out == ""
    line = f"[TileLang:tilelang.unit:INFO] (test_logging_setup.py:{sys._getframe().f_lineno - 3}): hello there"
    assert STAMP.match(captured.err) and line in captured.err  # the reference's format: where, then what


def _segments_with(text: str, needle: str) -> list[str]:
    """The pieces of terminal output (split at carriage returns and newlines) that contain `needle`."""
    return [s for s in re.split(r"[\r\n]", text) if needle in s]


def test_log_lines_do_not_break_a_progress_bar(restore_levels, capsys):
    from tqdm import tqdm

    tilelang.set_log_level("INFO")
    logger = logging.getLogger("tilelang.unit")
    with tqdm(total=4, desc="busy", file=sys.stderr, mininterval=0) as bar:
        bar.update(2)
        logger.info("in the middle of a bar")
        bar.update(2)
    err = capsys.readouterr().err
    lines = _segments_with(err, "in the middle of a bar")
    assert len(lines) == 1 and STAMP.match(lines[0]), lines  # on a line of its own, from its first column
    assert _segments_with(err, "busy: 100%")  # the bar was redrawn and finished

    # the check above does catch a plain StreamHandler, which writes after the bar's text on the same line
    plain = logging.StreamHandler(sys.stderr)
    plain.setFormatter(logging.Formatter("PLAIN %(message)s"))
    with tqdm(total=4, desc="busy", file=sys.stderr, mininterval=0) as bar:
        bar.update(2)
        plain.emit(logging.LogRecord("x", logging.INFO, __file__, 0, "broken", None, None))
    broken = _segments_with(capsys.readouterr().err, "PLAIN broken")
    assert broken and not broken[0].startswith("PLAIN")


def test_handler_without_tqdm_writes_to_stderr(restore_levels, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails as if tqdm were not installed
    tilelang.set_log_level("INFO")
    logging.getLogger("tilelang.unit").warning("no tqdm here")
    captured = capsys.readouterr()
    assert captured.out == "" and re.search(r"\[TileLang:tilelang.unit:WARNING\] \(test_logging_setup.py:\d+\): "
                                            "no tqdm here", captured.err)


@pytest.mark.backend("cpu")
def test_par_compile_shows_progress_and_logs_failures_through_logging(restore_levels, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    tilelang.set_log_level("WARNING")
    funcs = [add_one(16), add_one(32), "not a kernel"]
    kernels = tilelang.par_compile(funcs, out_idx=[-1], target="cpu", num_workers=2, ignore_error=True)
    assert kernels[0] is not None and kernels[1] is not None and kernels[2] is None
    captured = capsys.readouterr()
    assert captured.out == ""
    assert _segments_with(captured.err, "Parallel Compiling")  # the bar, on stderr
    failure = _segments_with(captured.err, "par_compile: 'not a kernel' failed")
    assert failure and STAMP.match(failure[0])


PHASE = r"\[TileLang:tilelang.jit.diagnostics:DEBUG\] \((\w+\.py):\d+\): phase {}: \d+\.\d{{3}} s"


@pytest.mark.backend("cpu")
def test_debug_shows_every_compile_phase_with_its_time(restore_levels, capsys, monkeypatch, tmp_path):
    """At DEBUG a compilation logs each phase with its duration: parse, cache lookup, the pass pipeline, the
    device codegen, lowering, loading and the cache store."""
    from .kernels import eager_gemm

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TILELANG_JIT_DIAGNOSTICS", raising=False)
    tilelang.set_log_level("DEBUG")
    eager_gemm.clear_kernels()
    eager_gemm.compile(*_gemm_inputs())
    err = capsys.readouterr().err
    where = {}
    for phase in ("parse", "cache.lookup", "passes", "codegen", "lower", "load", "cache.compile", "cache.store"):
        found = re.search(PHASE.format(re.escape(phase)), err)
        assert found, f"no DEBUG line for phase {phase}:\n{err}"
        where[phase] = found.group(1)
    assert where["parse"] == "decorator.py" and where["lower"] == "compiler.py"  # the code that ran the phase
    assert "pipeline='pipeline_llvm'" in err and "codegen='target.build.tilelang_llvm'" in err
    tilelang.set_log_level("INFO")
    eager_gemm.clear_kernels()
    eager_gemm.compile(*_gemm_inputs())  # at INFO (a disk hit now): no phase lines
    assert "phase " not in capsys.readouterr().err


def _gemm_inputs():
    import torch

    return torch.randn(64, 64, dtype=torch.float16), torch.randn(64, 64, dtype=torch.float16)


@pytest.mark.backend("cpu")
def test_a_compile_longer_than_the_threshold_logs_one_info_line(restore_levels, capsys, monkeypatch, tmp_path):
    from tilelang.jit import diagnostics

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    tilelang.set_log_level("INFO")
    monkeypatch.setattr(diagnostics, "SLOW_COMPILE_SECONDS", 3600.0)
    tilelang.compile(add_one(32), out_idx=[-1], target="cpu")
    assert "took" not in capsys.readouterr().err  # fast compiles say nothing at INFO
    monkeypatch.setattr(diagnostics, "SLOW_COMPILE_SECONDS", 0.0)  # every compile is "slow" now
    tilelang.compile(add_one(64), out_idx=[-1], target="cpu")
    lines = _segments_with(capsys.readouterr().err, "took")
    assert len(lines) == 1 and re.search(r"\[TileLang:tilelang.jit:INFO\] \(compiler.py:\d+\): compiling add_one for "
                                         r"llvm took \d+\.\d s", lines[0]), lines
    tilelang.set_log_level("WARNING")
    tilelang.compile(add_one(96), out_idx=[-1], target="cpu")
    assert "took" not in capsys.readouterr().err  # an INFO line: hidden at the default level
