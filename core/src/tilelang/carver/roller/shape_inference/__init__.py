"""Shape inference for the roller."""
