"""GPU buffers for torch CPU tensors: copied in before a launch, copied back into the same tensors after.

Each launcher keeps one storage buffer per tensor parameter (and one staging buffer per written parameter),
reallocated only when the tensor's byte size changes, so repeated calls upload and read back without
allocating. WebGPU wants buffer sizes and copies in multiples of 4 bytes: odd sizes are padded.
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelArgumentError

__all__ = ["padded", "tensor_bytes", "BufferPool"]


def padded(nbytes: int) -> int:
    """`nbytes` rounded up to a multiple of 4 (at least 4: WebGPU refuses empty bindings)."""
    return max(4, (nbytes + 3) & ~3)


def tensor_bytes(tensor: Any) -> Any:
    """The bytes of a contiguous CPU tensor as a uint8 numpy view (no copy)."""
    return tensor.detach().reshape(-1).view(_uint8()).numpy()


def _uint8() -> Any:
    import torch

    return torch.uint8


class BufferPool:
    """Storage and staging buffers of one launcher, keyed by parameter index."""

    def __init__(self, device: Any):
        import wgpu

        self._device = device
        self._usage = wgpu.BufferUsage
        self._storage: dict[int, Any] = {}
        self._staging: dict[int, Any] = {}
        self.generation = 0  # bumped whenever a storage buffer is replaced (bind groups must be rebuilt)

    def storage(self, index: int, nbytes: int) -> Any:
        """The storage buffer of parameter `index`, sized for `nbytes` of data."""
        size = padded(nbytes)
        buf = self._storage.get(index)
        if buf is None or buf.size != size:
            if buf is not None:
                buf.destroy()
            u = self._usage
            buf = self._device.create_buffer(size=size, usage=u.STORAGE | u.COPY_DST | u.COPY_SRC,
                                             label=f"param{index}")
            self._storage[index] = buf
            self.generation += 1
        return buf

    def buffer(self, index: int) -> Any:
        """The current storage buffer of parameter `index` (after `upload`)."""
        return self._storage[index]

    def staging(self, index: int) -> Any:
        """A mappable buffer as large as parameter `index`'s storage buffer, to read it back."""
        size = self._storage[index].size
        buf = self._staging.get(index)
        if buf is None or buf.size != size:
            if buf is not None:
                buf.destroy()
            buf = self._device.create_buffer(size=size, usage=self._usage.MAP_READ | self._usage.COPY_DST,
                                             label=f"readback{index}")
            self._staging[index] = buf
        return buf

    def upload(self, index: int, tensor: Any, name: str) -> Any:
        """Copy `tensor` into parameter `index`'s storage buffer; returns that buffer."""
        if getattr(tensor, "device", None) is None or tensor.device.type != "cpu":
            where = getattr(tensor, "device", type(tensor).__name__)
            raise KernelArgumentError(f"argument {name!r}: the wgpu backend takes torch CPU tensors, got {where}")
        data = tensor_bytes(tensor if tensor.is_contiguous() else tensor.contiguous())
        nbytes = int(data.nbytes)
        buf = self.storage(index, nbytes)
        if nbytes % 4:
            data = bytes(data) + bytes(padded(nbytes) - nbytes)
        if nbytes:
            self._device.queue.write_buffer(buf, 0, data)
        return buf

    @staticmethod
    def download(staging: Any, tensor: Any) -> None:
        """Copy a mapped-for-read staging buffer's leading bytes back into `tensor` (in place)."""
        import numpy as np

        nbytes = tensor.numel() * tensor.element_size()
        staging.map_sync("READ")
        try:
            view = staging.read_mapped(0, padded(nbytes), copy=False)
            src = np.frombuffer(view, dtype=np.uint8, count=nbytes)
            if tensor.is_contiguous():
                tensor_bytes(tensor)[:] = src
            else:
                flat = tensor.contiguous()
                tensor_bytes(flat)[:] = src
                tensor.copy_(flat)
            del view, src
        finally:
            staging.unmap()
