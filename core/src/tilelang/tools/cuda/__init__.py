"""CUDA-specific developer tools (`iket`: IKET profiling events in generated CUDA)."""
