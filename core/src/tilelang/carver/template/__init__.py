"""Operator templates: describe a computation, get its equivalent PrimFunc and device-aware hints."""

from tilelang.carver.template.base import BaseTemplate
from tilelang.carver.template.conv import ConvTemplate
from tilelang.carver.template.elementwise import ElementwiseTemplate
from tilelang.carver.template.flashattention import FlashAttentionTemplate
from tilelang.carver.template.gemv import GEMVTemplate
from tilelang.carver.template.general_reduce import GeneralReductionTemplate
from tilelang.carver.template.matmul import MatmulTemplate

__all__ = ["BaseTemplate", "MatmulTemplate", "GEMVTemplate", "ElementwiseTemplate", "GeneralReductionTemplate",
           "FlashAttentionTemplate", "ConvTemplate"]
