"""`Profiler`: run a `JITKernel` on supplied inputs, check it against a reference, and time it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tilelang.profiler.bench import do_bench
from tilelang.profiler.supply import TensorSupplyType, supply_inputs

__all__ = ["Profiler"]


class Profiler:
    """Inputs for `kernel` are made once per profiler (by `tensor_supply_type`, hook first) and reused.

    `dims` gives values to symbolic dims (``{"m": 1024}``) for inputs and reference calls.
    """

    def __init__(self, kernel: Any, tensor_supply_type: Any = TensorSupplyType.Auto,
                 dims: dict[str, int] | None = None):
        self.kernel = kernel
        self.supply_type = TensorSupplyType.of(tensor_supply_type)
        self.dims = dict(dims or {})
        self._inputs: list[Any] | None = None

    @property
    def func(self) -> Any:
        """The kernel the profiler runs (the reference's name for it)."""
        return self.kernel

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the kernel: ``profiler(*inputs)`` is ``profiler.func(*inputs)``."""
        return self.kernel(*args, **kwargs)

    @property
    def device(self) -> str:
        return self.kernel.backend.torch_device_type

    @property
    def inputs(self) -> list[int]:
        """Indices of the kernel's input parameters."""
        return [i for i in range(len(self.kernel.params)) if i not in set(self.kernel.out_idx)]

    def _get_inputs(self, with_output: bool = False) -> list[Any]:
        """The kernel's input tensors (made on first use); with `with_output`, freshly made outputs too."""
        if self._inputs is None:
            self._inputs = supply_inputs(self.kernel.params, self.inputs, self.supply_type, self.device, self.dims)
        return self._with_outputs(self._inputs) if with_output else list(self._inputs)

    def _with_outputs(self, inputs: Sequence[Any]) -> list[Any]:
        """Every parameter in order: `inputs` plus zero-filled outputs (symbolic dims from `dims` or the inputs)."""
        if not self.kernel.out_idx:
            return list(inputs)
        dims = dict(self.dims)
        for i, value in zip(self.inputs, inputs):
            p = self.kernel.params[i]
            if p.is_tensor:
                dims.update({d: int(n) for d, n in zip(p.shape, getattr(value, "shape", ())) if isinstance(d, str)})
            elif isinstance(value, int):
                dims.setdefault(p.name, value)
        outs = supply_inputs(self.kernel.params, self.kernel.out_idx, TensorSupplyType.Zero, self.device, dims)
        merged, it_in, it_out = [], iter(inputs), iter(outs)
        for i in range(len(self.kernel.params)):
            merged.append(next(it_out) if i in self.kernel.out_idx else next(it_in))
        return merged

    def run_once(self, func: Callable[..., Any] | None = None) -> Any:
        """Call `func` (default: the kernel) once on the inputs."""
        return (func or self.kernel)(*self._get_inputs())

    def assert_allclose(self, reference_program: Callable[..., Any], input_tensors: Sequence[Any] | None = None,
                        atol: float = 1e-2, rtol: float = 1e-2, max_mismatched_ratio: float = 0.01) -> None:
        """Compare the kernel's outputs with ``reference_program(*inputs)`` (a tensor or a sequence of tensors).

        Passes when at most `max_mismatched_ratio` of the elements fall outside ``atol + rtol * |ref|``.
        """
        import torch

        inputs = list(input_tensors) if input_tensors is not None else self._get_inputs()
        got = self.kernel(*inputs)
        expected = reference_program(*inputs)
        got_list = [] if got is None else list(got) if isinstance(got, (list, tuple)) else [got]
        ref_list = [] if expected is None else list(expected) if isinstance(expected, (list, tuple)) else [expected]
        if len(got_list) != len(ref_list):
            raise AssertionError(f"kernel returned {len(got_list)} output(s), the reference {len(ref_list)}")
        for n, (out, ref) in enumerate(zip(got_list, ref_list)):
            ref = torch.as_tensor(ref).to(device=out.device)
            if out.shape != ref.shape:
                raise AssertionError(f"output {n}: shape {tuple(out.shape)} != reference {tuple(ref.shape)}")
            a, b = out.double(), ref.double()
            bad = ~torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
            ratio = bad.float().mean().item() if bad.numel() else 0.0
            if ratio > max_mismatched_ratio:
                worst = (a - b).abs().max().item()
                raise AssertionError(
                    f"output {n}: {bad.sum().item()} of {bad.numel()} elements ({ratio:.2%}) differ beyond "
                    f"atol={atol}, rtol={rtol} (allowed {max_mismatched_ratio:.2%}); max abs diff {worst:.4g}")

    def manual_assert_close(self, reference_program: Callable[..., Any],
                            input_tensors: Sequence[Any] | None = None,
                            manual_check_prog: Callable[..., Any] | None = None) -> None:
        """Run the kernel and `reference_program` on the same inputs and let `manual_check_prog` judge them:
        ``manual_check_prog(outputs, ref_outputs)`` (it raises, typically AssertionError, on a mismatch)."""
        if manual_check_prog is None:
            raise ValueError("manual_assert_close needs manual_check_prog(outputs, ref_outputs)")
        inputs = list(input_tensors) if input_tensors is not None else self._get_inputs()
        manual_check_prog(self.kernel(*inputs), reference_program(*inputs))

    def do_bench(self, func: Callable[..., Any] | None = None, warmup: float = 25, rep: float = 100,
                 n_warmup: int = 0, n_repeat: int = 0, input_tensors: Sequence[Any] | None = None,
                 backend: str = "event", quantiles: list[float] | None = None, return_mode: str = "mean",
                 dynamic_symbolic_constraints: dict[str, int] | None = None, device: Any = None,
                 early_stop_baseline: float | None = None) -> Any:
        """Milliseconds per call of `func` (default: the kernel) on the inputs: for the kernel itself the
        backend's device timer when it offers one (`ExecutionBackend.device_timer`), else wall clock on CPU
        and device events on GPUs (`backend`: ``"event"``, ``"cupti"`` or ``"cudagraph"``), each GPU run after
        an L2 flush (see `tilelang.profiler.bench`).

        `input_tensors` are used as given; else `dynamic_symbolic_constraints` (``{"m": 2048}``) gives the
        symbolic dims of freshly made inputs; else the profiler's own inputs. `device` is the CUDA device to
        time on; `early_stop_baseline` skips the full measurement of a kernel already slower than it (ms)."""
        target = func or self.kernel
        if input_tensors is not None:
            inputs = list(input_tensors)
        elif dynamic_symbolic_constraints is not None:
            inputs = self._inputs_for({**self.dims, **dynamic_symbolic_constraints})
        else:
            inputs = self._get_inputs()
        timer = None
        device_timer = self.kernel.device_timer() if target is self.kernel else None
        if device_timer is not None:
            everything = self._with_outputs(inputs)
            timer = lambda: device_timer(*everything, warmup=0, rep=1)
        return do_bench(lambda: target(*inputs), warmup=warmup, rep=rep, device_type=self.device,
                        n_warmup=n_warmup, n_repeat=n_repeat, quantiles=quantiles, return_mode=return_mode,
                        backend=backend, device=device, early_stop_baseline=early_stop_baseline, timer=timer)

    def _inputs_for(self, dims: dict[str, int]) -> list[Any]:
        """Fresh inputs with the symbolic dims `dims` (ValueError naming any symbolic dim left without a value)."""
        for i in self.inputs:
            p = self.kernel.params[i]
            missing = [d for d in (p.shape if p.is_tensor else ()) if isinstance(d, str) and d not in dims]
            if missing:
                raise ValueError(f"Dynamic symbolic variable {missing[0]!r} of parameter {p.name!r} not found in "
                                 f"dynamic_symbolic_constraints. Available constraints: {sorted(dims)}")
        return supply_inputs(self.kernel.params, self.inputs, self.supply_type, self.device, dims)
