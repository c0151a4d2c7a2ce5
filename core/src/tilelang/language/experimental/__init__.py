"""Experimental tile operators (``gemm_sp``)."""
