"""Facts about NCCL, UCX, UCC and Open MPI settings, per version.

* :mod:`.nccl_env` -- which NCCL releases read which ``NCCL_*`` variables; rename/typo suggestions.
* :mod:`.grammars` -- validators for the string-valued variables (NCCL_ALGO, NCCL_IB_HCA, UCX_TLS,
  UCC_*_TUNE, ...) that report problems with their offset in the value.
"""
