"""Every built-in example at a size the interop tests handle in seconds.

Each case keeps its example's family, tiers and options and shrinks only the
size: Graphviz's dot layout time grows faster than linearly with edges
(measured on leafspine-8k with Graphviz 2.42: 1,024 cables 1.1 s, 4,096
cables 9.4 s, 8,192 cables 40 s) and the built-in fabrics have 12,288 to
82,944 cables. A new example without a case here fails the tests that use it.
"""
import os

CASES = {
    # 3-tier rail Clos: 128 GPUs in 2 groups per pod (1,664 cables).
    "aipod-16k": ["--set", "topology.gpus=128", "--set", "topology.groups_per_pod=2"],
    # dragonfly p=8, a=16, h=8 with 256 GPUs = 2 groups (624 cables).
    "dragonfly-16k": ["--set", "topology.gpus=256"],
    # 3-tier fat tree k=8 with 4-GPU, 4-NIC servers (k/2 = 4 host ports per edge switch; 384 cables).
    "fat-tree-k48": ["--set", "topology.k=8", "--set", "server.gpus=4", "--set", "server.nics=4"],
    # 2-tier rail-optimized InfiniBand leaf-spine with SHARP, 256 GPUs = one group of 8 rail leaves (512 cables).
    "ib-sharp-1k": ["--set", "topology.gpus=256"],
    # 2-tier rail-optimized leaf-spine, 512 GPUs (1,024 cables).
    "leafspine-8k": ["--set", "topology.gpus=512"],
    # two-jobs: a 64-GPU 2-tier leaf-spine (160 cables), already small.
    "two-jobs": [],
    # The 131,072-GPU cluster's shape (radix 128, 800G) at 128 GPUs in 2 groups per pod (1,664 cables).
    "clos-128k": ["--set", "topology.gpus=128", "--set", "topology.groups_per_pod=2"],
    # The 1,048,576-GPU design's shape (radix 256) at 128 GPUs in 2 groups per pod.
    "clos-1m": ["--set", "topology.gpus=128", "--set", "topology.groups_per_pod=2"],
    # The 4-tier million-GPU design's shape at radix 16: 2 groups of 64 GPUs, each its own pod and zone (512 cables).
    "clos-1m-800g": ["--set", "topology.gpus=128", "--set", "switch.radix=16", "--set", "topology.groups_per_pod=1",
                     "--set", "topology.pods_per_zone=1"],
    # 3-D torus 4x4x4 = one 4x4x4 cube (192 chip-to-chip cables, self-loops on each server).
    "torus-3d-4k": ["--set", "topology.dims=[4,4,4]"],
}


# Examples whose NetBox set is checked at the size above, not at full size: clos-1m's full set has about
# 3.1 million cables (clos-1m-800g's 4.2 million) (clos-128k's 393,216 take about 30 s to check; this one would take minutes and GBs).
NETBOX_AT_CASE_SIZE = {"clos-1m", "clos-1m-800g"}


def examples(src):
    """Names of the built-in examples (examples/*.yaml), sorted."""
    return sorted(f[:-5] for f in os.listdir(os.path.join(src, "examples")) if f.endswith(".yaml"))
