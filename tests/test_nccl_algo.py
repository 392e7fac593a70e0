"""hpcconf.knowledge.nccl_algo against NCCL's tuning.cc (v2.28.9-1) and the H200 measurements."""

import pytest

from hpcconf.knowledge.nccl_algo import (
    algorithms_available,
    enabled_algorithms,
    nccl_function,
    per_collective_algo,
    stranded_functions,
)

TUNED = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")


def test_global_nvlstree_strands_single_node_and_non_allreduce():
    # The Crusoe /etc/nccl.conf: 2-node all_reduce runs, everything else has no algorithm.
    assert algorithms_available("all_reduce", "NVLSTree", nnodes=2, nvls=True) == {"NVLSTree"}
    assert algorithms_available("all_reduce", "NVLSTree", nnodes=1, nvls=True) == set()
    for collective in ("broadcast", "all_gather", "reduce_scatter"):
        assert algorithms_available(collective, "NVLSTree", nnodes=2, nvls=True) == set()
    assert stranded_functions("NVLSTree", nnodes=1, nvls=True) == [
        "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]


def test_global_tree_strands_allgather():
    # Measured on 2 x H200 with NCCL 2.28.9: NCCL_ALGO=Tree makes all_gather_perf fail.
    assert algorithms_available("all_gather", "Tree", nnodes=1, nvls=False) == set()
    assert algorithms_available("all_reduce", "Tree", nnodes=1, nvls=False) == {"Tree"}


def test_unset_leaves_every_function_an_algorithm():
    for nnodes in (1, 2):
        for nvls in (False, True):
            assert stranded_functions(None, nnodes, nvls) == []


def test_per_function_entries_replace_only_their_function():
    table = enabled_algorithms("ring;allreduce:tree,nvlstree", "2.28.9")
    assert table["AllReduce"] == {"Tree", "NVLSTree"} and table["Broadcast"] == {"Ring"}
    assert enabled_algorithms("^tree", "2.28.9")["AllReduce"] == {
        "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"}


def test_nccl_rejections_raise():
    for value in ("allreduce:ring;tree", "allreduce:bogus", "alltoall:ring"):
        with pytest.raises(ValueError):
            enabled_algorithms(value, "2.28.9")


def test_before_224_is_global_and_lenient():
    table = enabled_algorithms("Ring,bogus", "2.23.4")
    assert all(v == {"Ring"} for v in table.values())


def test_machine_shape_limits():
    assert "NVLS" in algorithms_available("all_gather", None, nnodes=1, nvls=True)
    assert "NVLS" not in algorithms_available("all_gather", None, nnodes=2, nvls=True)  # needs CollNet across nodes
    assert "NVLS" in algorithms_available("all_gather", None, nnodes=2, nvls=True, collnet=True)
    assert "PAT" in algorithms_available("all_gather", None, nnodes=4, nvls=False, ranks_per_node=1)
    assert "PAT" not in algorithms_available("all_gather", None, nnodes=4, nvls=False)


def test_point_to_point_is_not_tuned():
    assert algorithms_available("alltoall", "NVLSTree", nnodes=1, nvls=False) == {"P2P"}
    assert nccl_function("sendrecv") is None
    with pytest.raises(ValueError):
        nccl_function("allgatherz")


def test_per_collective_value_never_strands_a_function():
    value = per_collective_algo("NVLSTree", "2.28.9")
    assert value == "allreduce:NVLSTree,Ring"
    for nnodes in (1, 2, 16):
        for nvls in (False, True):
            assert stranded_functions(value, nnodes, nvls, version="2.28.9") == []
    assert algorithms_available("all_reduce", value, nnodes=2, nvls=True) == {"NVLSTree", "Ring"}
    assert per_collective_algo("Tree", "2.28.9") == "allreduce:Tree,Ring"
    assert per_collective_algo("Ring", "2.28.9") == "broadcast:Ring;reduce:Ring;allgather:Ring;reducescatter:Ring;allreduce:Ring"


def test_no_per_collective_value_before_224():
    assert per_collective_algo("NVLSTree", "2.23.4") is None
    with pytest.raises(ValueError):
        per_collective_algo("NVLSTrees", "2.28.9")
