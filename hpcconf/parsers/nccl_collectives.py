"""The nccl-tests collectives, on their own: ``hpcconf nccl-report --help`` lists them, and the CLI
must not compile the log parser's patterns to start (:mod:`hpcconf.parsers.nccl_tests_log` parses)."""

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "alltoallv", "broadcast", "reduce",
               "sendrecv", "scatter", "gather", "hypercube")
