#!/usr/bin/env bash
# hpcconf sku collect: record the raw hardware facts of one GPU node for `hpcconf sku import`.
#
# Usage: bash collect.sh OUTDIR
# Needs only bash and coreutils on the node; every other tool (nvidia-smi, lscpu, numactl, ibstat,
# ibv_devinfo, lspci, rocm-smi, curl) is optional: a missing tool is recorded in OUTDIR/collect.log
# as "missing", a failing one as "failed rc=N", and the script goes on. It never exits non-zero
# because of the node; only an unusable OUTDIR stops it. Nothing is sent anywhere: the only network
# access is an optional 2-second query of the Azure instance metadata service (169.254.169.254,
# link-local), which says which VM size this is; set HPCCONF_NO_IMDS=1 to skip it.
# Optional: HPCCONF_NCCL_DUMP=1 runs nccl-tests' all_reduce_perf once (if found) with
# NCCL_TOPO_DUMP_FILE (else one PyTorch NCCL rank, if torch is installed) to record the topology NCCL
# itself detects.
# Safe to run as root in any directory: the output directory must be new (or empty, and not a link),
# is created private (umask 077), and every file in it is created fresh (noclobber: O_EXCL, so a link
# planted there is never written through); nothing is run from the working directory (relative PATH
# entries dropped, cd /, python3 -I).
COLLECT_FORMAT=1
out=${1:-}
if [ -z "$out" ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
case $out in /*) ;; *) out="$PWD/$out" ;; esac
while [ "$out" != / ] && [ "${out%/}" != "$out" ]; do out=${out%/}; done
parent=${out%/*}
umask 077
if [ -L "$out" ]; then
  echo "collect: $out is a symbolic link; give a new directory" >&2
  exit 2
fi
if [ -e "$out" ]; then
  if [ ! -d "$out" ] || [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
    echo "collect: $out exists and is not an empty directory; give a new directory (files there could be links)" >&2
    exit 2
  fi
else
  if ! { mkdir -p -- "${parent:-/}" && mkdir -- "$out"; } 2>/dev/null; then
    echo "collect: cannot create $out" >&2
    exit 2
  fi
fi
set -o noclobber
cd / || exit 2
safe_path=
IFS=: read -r -a path_entries <<<"${PATH:-/usr/sbin:/usr/bin:/sbin:/bin}"
for entry in "${path_entries[@]}"; do
  case $entry in /*) safe_path="${safe_path:+$safe_path:}$entry" ;; esac
done
export PATH="${safe_path:-/usr/sbin:/usr/bin:/sbin:/bin}"
log="$out/collect.log"
: >"$log" 2>/dev/null || { echo "collect: cannot write in $out" >&2; exit 2; }
export LC_ALL=C
have() { command -v "$1" >/dev/null 2>&1; }
tmo() { if have timeout; then timeout "$@"; else shift; "$@"; fi; }

# run FILE TOOL ARGS...: TOOL's stdout to OUTDIR/FILE, stderr to OUTDIR/FILE.err (kept only if not empty).
run() {
  local file=$1 tool=$2
  shift 2
  if ! have "$tool"; then
    printf 'missing\t%s\t%s\n' "$file" "$tool $*" >>"$log"
    return 0
  fi
  rm -f -- "$out/$file" "$out/$file.err"  # a second try replaces the first: created anew, never written through
  tmo 60 "$tool" "$@" >"$out/$file" 2>"$out/$file.err"
  local rc=$?
  [ -s "$out/$file.err" ] || rm -f "$out/$file.err"
  if [ $rc -eq 0 ]; then
    printf 'ok\t%s\t%s\n' "$file" "$tool $*" >>"$log"
  else
    printf 'failed rc=%s\t%s\t%s\n' "$rc" "$file" "$tool $*" >>"$log"
  fi
  return 0
}

# readfile FILE PATH: copy one kernel file (sysfs/procfs), recorded like a command.
readfile() {
  if [ -r "$2" ]; then
    cat "$2" >"$out/$1" 2>/dev/null && printf 'ok\t%s\t%s\n' "$1" "cat $2" >>"$log" && return 0
  fi
  printf 'missing\t%s\t%s\n' "$1" "cat $2" >>"$log"
  return 0
}

sysval() { local v; v=$(cat "$1" 2>/dev/null | head -n 1) || v=""; [ -n "$v" ] && printf '%s' "$v" || printf -- '-'; }

{
  echo "format=$COLLECT_FORMAT"
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)"
  echo "kernel=$(uname -r 2>/dev/null)"
  echo "machine=$(uname -m 2>/dev/null)"
  echo "nproc=$(nproc 2>/dev/null)"
  echo "nproc_all=$(nproc --all 2>/dev/null)"
  echo "cpus_allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status 2>/dev/null)"
  # shellcheck source=/dev/null
  echo "os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  echo "product_name=$(sysval /sys/devices/virtual/dmi/id/product_name)"
  echo "sys_vendor=$(sysval /sys/devices/virtual/dmi/id/sys_vendor)"
  echo "container=$( { [ -f /.dockerenv ] || grep -qaE 'docker|containerd|kubepods|lxc' /proc/1/cgroup 2>/dev/null; } && echo yes || echo no)"
} >"$out/meta.txt" 2>/dev/null
printf 'ok\t%s\t%s\n' meta.txt "uname/nproc/os-release/dmi" >>"$log"

# GPUs (NVIDIA)
run nvidia-smi-q.xml nvidia-smi -q -x
run nvidia-smi-topo.txt nvidia-smi topo -m
run nvidia-smi-nvlink.txt nvidia-smi nvlink -s
# compute_cap needs driver 510+; fall back to the fields every driver knows.
run nvidia-smi-query.csv nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total,compute_cap,pci.device_id,pci.sub_device_id,driver_version --format=csv
if have nvidia-smi && ! grep -q compute_cap "$out/nvidia-smi-query.csv" 2>/dev/null; then
  run nvidia-smi-query.csv nvidia-smi --query-gpu=index,pci.bus_id,name,memory.total,pci.device_id,pci.sub_device_id,driver_version --format=csv
fi
# PyTorch's view, when a CUDA build of torch is on the node (what a job sees; optional).
if have python3 && python3 -I -c 'import torch' >/dev/null 2>&1; then
  tmo 60 python3 -I -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-", "gpus", torch.cuda.device_count())' >"$out/torch.txt" 2>/dev/null
  printf '%s\t%s\t%s\n' "$([ -s "$out/torch.txt" ] && echo ok || echo failed)" torch.txt "python3 -c torch versions" >>"$log"
fi
# GPUs (AMD): recorded for the record; the importer reads NVIDIA files today.
have rocm-smi && run rocm-smi-topo.txt rocm-smi --showtopo
have rocm-smi && run rocm-smi-product.txt rocm-smi --showproductname

# CPU, NUMA, memory
run lscpu.json lscpu -J
run lscpu.txt lscpu
run numactl-H.txt numactl -H
readfile meminfo.txt /proc/meminfo
{
  for node in /sys/devices/system/node/node[0-9]*; do
    [ -d "$node" ] || continue
    printf '%s\t%s\n' "${node##*node}" "$(sysval "$node/cpulist")"
  done
} >"$out/numa-nodes.tsv" 2>/dev/null
printf 'ok\t%s\t%s\n' numa-nodes.tsv "/sys/devices/system/node/node*/cpulist" >>"$log"

# PCI devices that matter (display 03xx, network 02xx, bridges 0680 = NVSwitch), straight from sysfs:
# no root needed (lspci -vvv hides link status from non-root users).
{
  printf 'bdf\tclass\tvendor\tdevice\tsubsystem_vendor\tsubsystem_device\tnuma_node\tmax_link_speed\tmax_link_width\tcurrent_link_speed\tcurrent_link_width\tdriver\n'
  for dev in /sys/bus/pci/devices/*; do
    [ -e "$dev/class" ] || continue
    class=$(sysval "$dev/class")
    case "$class" in 0x03*|0x02*|0x0680*|0x1200*) ;; *) continue ;; esac
    drv=-
    [ -e "$dev/driver" ] && drv=$(basename "$(readlink "$dev/driver")")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$dev")" "$class" \
      "$(sysval "$dev/vendor")" "$(sysval "$dev/device")" "$(sysval "$dev/subsystem_vendor")" \
      "$(sysval "$dev/subsystem_device")" "$(sysval "$dev/numa_node")" "$(sysval "$dev/max_link_speed")" \
      "$(sysval "$dev/max_link_width")" "$(sysval "$dev/current_link_speed")" "$(sysval "$dev/current_link_width")" "$drv"
  done
} >"$out/pci-devices.tsv" 2>/dev/null
printf 'ok\t%s\t%s\n' pci-devices.tsv "/sys/bus/pci/devices/*" >>"$log"
run lspci.txt lspci -D -nn -vvv

# InfiniBand / RDMA
run ibstat.txt ibstat
run ibv_devinfo.txt ibv_devinfo -v
{
  printf 'device\tport\tstate\trate\tlink_layer\tbdf\n'
  for port in /sys/class/infiniband/*/ports/*; do
    [ -d "$port" ] || continue
    devdir=${port%/ports/*}
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$devdir")" "${port##*/}" "$(sysval "$port/state")" \
      "$(sysval "$port/rate")" "$(sysval "$port/link_layer")" "$(basename "$(readlink -f "$devdir/device" 2>/dev/null)")"
  done
} >"$out/infiniband.tsv" 2>/dev/null
printf 'ok\t%s\t%s\n' infiniband.tsv "/sys/class/infiniband/*/ports/*" >>"$log"

# Network interfaces and the PCI device behind each
{
  printf 'iface\toperstate\tspeed\tmtu\tbdf\tdriver\n'
  for net in /sys/class/net/*; do
    [ -e "$net" ] || continue
    bdf=-; drv=-
    if [ -e "$net/device" ]; then
      bdf=$(basename "$(readlink -f "$net/device")")
      [ -e "$net/device/driver" ] && drv=$(basename "$(readlink "$net/device/driver")")
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "${net##*/}" "$(sysval "$net/operstate")" "$(sysval "$net/speed")" \
      "$(sysval "$net/mtu")" "$bdf" "$drv"
  done
} >"$out/net.tsv" 2>/dev/null
printf 'ok\t%s\t%s\n' net.tsv "/sys/class/net/*" >>"$log"

# Azure instance metadata (which VM size this is); link-local, 2 s, optional.
if [ -z "${HPCCONF_NO_IMDS:-}" ] && have curl; then
  if tmo 5 curl -s -f -m 2 -H Metadata:true \
      "http://169.254.169.254/metadata/instance/compute?api-version=2021-02-01" >"$out/azure-imds.json" 2>/dev/null; then
    printf 'ok\t%s\t%s\n' azure-imds.json "curl IMDS compute" >>"$log"
  else
    rm -f "$out/azure-imds.json"
    printf 'unreachable\t%s\t%s\n' azure-imds.json "curl IMDS compute" >>"$log"
  fi
else
  printf 'skipped\t%s\t%s\n' azure-imds.json "curl IMDS compute" >>"$log"
fi

# NCCL's own view of the topology (opt-in: it runs a short all_reduce on every GPU).
if [ -n "${HPCCONF_NCCL_DUMP:-}" ]; then
  perf=$(command -v all_reduce_perf 2>/dev/null) || perf=
  [ -z "$perf" ] && [ -x /opt/nccl-tests/build/all_reduce_perf ] && perf=/opt/nccl-tests/build/all_reduce_perf
  ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  if [ -n "$perf" ] && [ "${ngpus:-0}" -gt 0 ]; then
    NCCL_TOPO_DUMP_FILE="$out/nccl-topo.xml" tmo 120 "$perf" -b 8 -e 8 -g "$ngpus" >"$out/nccl-dump.log" 2>&1
    printf '%s\t%s\t%s\n' "$([ -s "$out/nccl-topo.xml" ] && echo ok || echo failed)" nccl-topo.xml "$perf -g $ngpus" >>"$log"
  elif have python3 && python3 -I -c 'import torch.distributed' >/dev/null 2>&1 && [ "${ngpus:-0}" -gt 0 ]; then
    # One rank on GPU 0 through PyTorch's NCCL: enough for NCCL to detect and dump the topology.
    NCCL_TOPO_DUMP_FILE="$out/nccl-topo.xml" NCCL_DEBUG=INFO tmo 120 python3 -I -c '
import os, tempfile, torch, torch.distributed as dist
store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("nccl", init_method="file://" + store, rank=0, world_size=1)
x = torch.ones(1, device="cuda:0"); dist.all_reduce(x); torch.cuda.synchronize(); print("all_reduce", x.item())
dist.destroy_process_group()' >"$out/nccl-dump.log" 2>&1
    printf '%s\t%s\t%s\n' "$([ -s "$out/nccl-topo.xml" ] && echo ok || echo failed)" nccl-topo.xml "python3 torch.distributed all_reduce" >>"$log"
  else
    printf 'missing\t%s\t%s\n' nccl-topo.xml "all_reduce_perf or torch" >>"$log"
  fi
fi

echo "hpcconf collect: wrote $out ($(grep -c '^ok' "$log") ok, $(grep -vc '^ok' "$log") missing or failed; see collect.log)"
exit 0
