"""CUDA developer tools (``tilelang.tools.cuda`` in the reference): `iket`, IKET event markers in generated CUDA."""
