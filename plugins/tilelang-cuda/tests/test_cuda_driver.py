"""The ctypes CUDA driver binding without a GPU: every driver function it calls has a declared prototype, and the
calls go through real ctypes function pointers built from those prototypes (so each argument must convert to
the declared C type) into a recording stand-in driver; one module per (device, context), unloaded in its own
context when the kernel is closed or dropped; a clear error when libcuda is absent."""

from __future__ import annotations

import ctypes
import gc
import inspect
import re

import pytest

import tilelang_cuda.driver as driver

# the driver hands out a pointer to its own static text: a buffer that lives as long as the process
_ERROR_TEXT = ctypes.create_string_buffer(b"named symbol not found")


class PrototypedDriver:
    """A stand-in libcuda whose functions are ctypes function pointers with `driver.PROTOTYPES`' signatures."""

    def __init__(self):
        self.calls: list[tuple] = []
        self.current = 0x1000  # the current context handle (0: none)
        self.device_of = {0x1000: 0, 0x2000: 1}
        self.next_module = 0x500
        self.stack: list[int] = []
        self.fail_get_function = False
        self._keep = []
        for name, (restype, argtypes) in driver.PROTOTYPES.items():
            impl = getattr(self, "_" + name)
            fn = ctypes.CFUNCTYPE(restype, *argtypes)(self._recorded(name, impl))
            self._keep.append(fn)
            setattr(self, name, fn)

    def _recorded(self, name, impl):
        def call(*args):
            self.calls.append((name, self.current))
            return impl(*args)
        return call

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def _cuGetErrorString(self, code, out):
        out[0] = ctypes.addressof(_ERROR_TEXT)  # not a bytes object: that one is freed when the callback returns
        return 0

    def _cuInit(self, flags):
        return 0

    def _cuDevicePrimaryCtxRetain(self, out, device):
        out[0] = 0x1000 if device == 0 else 0x2000
        return 0

    def _cuCtxSetCurrent(self, ctx):
        self.current = ctx or 0
        return 0

    def _cuCtxGetCurrent(self, out):
        out[0] = self.current or None
        return 0

    def _cuCtxGetDevice(self, out):
        out[0] = self.device_of[self.current]
        return 0

    def _cuCtxPushCurrent(self, ctx):
        self.stack.append(self.current)
        self.current = ctx
        return 0

    def _cuCtxPopCurrent(self, out):
        out[0] = self.current
        self.current = self.stack.pop()
        return 0

    cubin_too_old = ptx_too_new = False

    def _cuModuleLoadData(self, out, image):
        head = ctypes.string_at(image, 4)
        if head == b"\x7fELF" and self.cubin_too_old:
            return driver.CUDA_ERROR_NO_BINARY_FOR_GPU
        if head == b"//  " and self.ptx_too_new:
            return driver.CUDA_ERROR_NO_BINARY_FOR_GPU
        assert head in (b"\x7fELF", b"//  ")
        self.next_module += 1
        out[0] = self.next_module
        return 0

    def _cuModuleUnload(self, module):
        return 0

    def _cuModuleGetFunction(self, out, module, name):
        if self.fail_get_function:
            return 500  # CUDA_ERROR_NOT_FOUND
        out[0] = module * 16
        return 0

    shared_optin = 227 * 1024  # sm_90's opt-in dynamic shared memory per block

    def _cuDeviceGetAttribute(self, out, attr, device):
        assert attr == driver.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        out[0] = self.shared_optin
        return 0

    def _cuFuncSetAttribute(self, func, attr, value):
        # the real driver refuses more dynamic shared memory than the device's opt-in limit
        return 1 if value > self.shared_optin else 0  # CUDA_ERROR_INVALID_VALUE

    def _cuLaunchKernel(self, func, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        first = ctypes.cast(params[0], ctypes.POINTER(ctypes.c_void_p))[0] if params[0] else None
        self.launched = (func, (gx, gy, gz), (bx, by, bz), smem, stream, first)
        return 0

    def _cuLaunchCooperativeKernel(self, func, gx, gy, gz, bx, by, bz, smem, stream, params):
        first = ctypes.cast(params[0], ctypes.POINTER(ctypes.c_void_p))[0] if params[0] else None
        self.launched = (func, (gx, gy, gz), (bx, by, bz), smem, stream, first)
        return 0

    def _cuTensorMapEncodeTiled(self, tmap, dtype, rank, address, dims, strides, box, elem, il, sw, l2, oob):
        tmap[0].opaque[0] = address
        tmap[0].opaque[1] = dims[0] + dims[1]
        return 0


@pytest.fixture
def fake(monkeypatch):
    lib = PrototypedDriver()
    monkeypatch.setattr(driver, "libcuda", lambda: lib)
    driver._primary_context.cache_clear()
    yield lib
    driver._primary_context.cache_clear()


def test_every_driver_function_called_has_a_prototype():
    source = inspect.getsource(driver)
    called = set(re.findall(r"\.(cu[A-Z]\w+)\(", source)) | set(re.findall(r'_function\("(cu[A-Z]\w+)"\)', source))
    assert called and called <= set(driver.PROTOTYPES), called - set(driver.PROTOTYPES)

    class Lib:  # a driver with a few of the functions: those get their prototypes, nothing else changes
        cuModuleUnload = ctypes.CFUNCTYPE(None)(lambda: None)
        cuLaunchKernel = ctypes.CFUNCTYPE(None)(lambda: None)

    lib = driver.declare(Lib())
    assert lib.cuModuleUnload.restype is ctypes.c_int and lib.cuModuleUnload.argtypes == [ctypes.c_void_p]
    assert len(lib.cuLaunchKernel.argtypes) == 11
    assert not hasattr(lib, "cuTensorMapEncodeTiled")


def test_missing_libcuda_is_a_clear_error(monkeypatch):
    def no_driver(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(driver.ctypes, "CDLL", no_driver)
    with pytest.raises(driver.CudaDriverMissing, match="CUDA driver library .* cannot be loaded.*compiling to cubin "
                                                       "does not") as info:
        driver.libcuda.__wrapped__()
    assert isinstance(info.value, OSError) and isinstance(info.value, driver.CudaDriverError)


def test_one_module_per_device_and_context_unloaded_in_its_own_context(fake):
    kernel = driver.CudaKernel(b"\x7fELF cubin", "k_kernel", 64 * 1024)
    assert kernel.loaded_in == [(0, 0x1000)]
    kernel.launch((2, 1, 1), (128, 1, 1), [ctypes.c_void_p(0xDEAD0)], stream=0)
    assert fake.launched[:4] == (0x501 * 16, (2, 1, 1), (128, 1, 1), 64 * 1024)
    assert fake.launched[5] == 0xDEAD0
    assert fake.names().count("cuModuleLoadData") == 1  # the second use in the same context reuses the module
    assert fake.names().count("cuFuncSetAttribute") == 1

    fake.current = 0x2000  # another device's context is current: a module of its own
    kernel.launch((1, 1, 1), (32, 1, 1), [], stream=0)
    assert fake.launched[0] == 0x502 * 16
    assert kernel.loaded_in == [(0, 0x1000), (1, 0x2000)]
    assert fake.names().count("cuModuleLoadData") == 2 and fake.names().count("cuFuncSetAttribute") == 2

    fake.calls.clear()
    kernel.close()
    unloads = [ctx for name, ctx in fake.calls if name == "cuModuleUnload"]
    assert sorted(unloads) == [0x1000, 0x2000]  # each unloaded with its own context current
    assert fake.current == 0x2000 and not fake.stack and kernel.loaded_in == []


def test_a_kernel_with_a_grid_barrier_launches_cooperatively(fake):
    kernel = driver.CudaKernel(b"\x7fELF cubin", "k_kernel", 0, cooperative=True)
    kernel.launch((4, 1, 1), (128, 1, 1), [ctypes.c_void_p(0xBEEF0)], stream=0)
    assert "cuLaunchCooperativeKernel" in fake.names() and "cuLaunchKernel" not in fake.names()
    assert fake.launched[1:3] == ((4, 1, 1), (128, 1, 1)) and fake.launched[5] == 0xBEEF0


def test_a_dropped_kernel_unloads_its_module(fake):
    kernel = driver.CudaKernel(b"\x7fELF", "k", 0)
    del kernel
    gc.collect()
    assert fake.names()[-3:] == ["cuCtxPushCurrent", "cuModuleUnload", "cuCtxPopCurrent"]


def test_no_current_context_uses_the_primary_one(fake):
    fake.current = 0
    kernel = driver.CudaKernel(b"\x7fELF", "k", 0)
    assert fake.names()[:4] == ["cuCtxGetCurrent", "cuInit", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent"]
    assert kernel.loaded_in == [(0, 0x1000)] and fake.current == 0x1000


def test_a_missing_kernel_name_unloads_the_module_and_says_why(fake):
    fake.fail_get_function = True
    with pytest.raises(driver.CudaDriverError, match=r"cuModuleGetFunction\(nope\) failed: CUDA error 500 "
                                                     r"\(named symbol not found\)"):
        driver.CudaKernel(b"\x7fELF", "nope", 0)
    assert fake.names()[-1] == "cuModuleUnload"


def test_a_gpu_newer_than_the_cubin_loads_the_ptx(fake, monkeypatch):
    fake.cubin_too_old = True  # e.g. an sm_80 cubin on an H200: the driver JIT-compiles the PTX instead
    kernel = driver.CudaKernel(b"\x7fELF", "k", 0, ptx="//  PTX for sm_80", arch="sm_80")
    assert fake.names().count("cuModuleLoadData") == 2 and kernel.loaded_in == [(0, 0x1000)]

    fake.ptx_too_new = True  # sm_90a PTX on an older GPU: nothing loads; the error names both architectures
    monkeypatch.setattr(driver, "_local_arch", lambda: "sm_80")
    with pytest.raises(driver.CudaDriverError, match=r"built for sm_90a, which this GPU \(sm_80\) cannot run; "
                                                     r"compile for it with target=\{'kind': 'cuda', 'arch': "
                                                     r"'sm_80'\}"):
        driver.CudaKernel(b"\x7fELF", "k", 0, ptx="//  PTX for sm_90a", arch="sm_90a")


def test_tensor_map_encoding_through_the_prototype(fake):
    args = {"rank": 2, "data_type": 6, "global_dim": [256, 300], "global_strides": [512], "box_dim": [32, 128],
            "element_strides": [1, 1], "interleave": 0, "swizzle": 0, "l2_promotion": 2, "oob_fill": 0}
    tmap = driver.encode_tensor_map(args, 0x10000)
    assert tmap.opaque[0] == 0x10000 and tmap.opaque[1] == 556
    with pytest.raises(driver.CudaDriverError, match="16-byte aligned"):
        driver.encode_tensor_map(args, 0x10008)


def test_more_shared_memory_than_the_gpu_gives_a_block_is_a_clear_error(fake):
    """The driver refuses the attribute with "invalid argument"; the error says how much the kernel asks for and
    how much the device allows, and unloads the module."""
    kernel_smem = 289 * 1024
    with pytest.raises(driver.CudaDriverError, match=rf"kernel 'k_kernel' needs {kernel_smem} bytes of dynamic "
                       rf"shared memory; this GPU \(.*\) allows {227 * 1024} bytes per block .*num_stages"):
        driver.CudaKernel(b"\x7fELF cubin", "k_kernel", kernel_smem)
    assert fake.names()[-1] == "cuModuleUnload"
