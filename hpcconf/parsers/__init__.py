"""Strict parsers that read NCCL/MPI/UCX inputs exactly as their consumers do.

* :mod:`.nccl_conf` -- ``nccl.conf`` lines as NCCL's ``setEnvFile`` reads them, and a safe renderer.
* :mod:`.nccl_xml` -- NCCL's hand-written topology / graph XML parser, re-implemented with positions.
* :mod:`.env_file` -- ``KEY=VALUE`` / ``export KEY=VALUE`` lines with shell quoting.
"""
