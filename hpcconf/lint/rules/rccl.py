"""RCCL rules: settings written for AMD Instinct GPUs, where RCCL (not NCCL) reads them.

They apply when the target SKU's collective library is RCCL (``--sku Standard_ND96isr_MI300X_v5``, or a
spec whose test pool is AMD). RCCL reads the ``NCCL_*`` names plus its own ``RCCL_*`` ones; which ones
its HIP build really reads, and where it reads its settings file, come from
:mod:`hpcconf.knowledge.rocm` (ROCm/rccl ``src/`` at tag rocm-6.2.2).
"""

from __future__ import annotations

from typing import Iterator

from ...artifacts import Kind
from ...diagnostics import Diagnostic, Severity
from ...knowledge import rocm
from ...parsers.dockerfile import expand
from ...rules_registry import rule
from ..context import LintContext
from ..detect import is_nccl_conf_name
from ..document import DisplayPath, Document
from ..settings import SETTING_KINDS, env_settings

# What the NCCL_* names RCCL's HIP build leaves out configure (all NVIDIA hardware features).
_FEATURE = {"NCCL_NVLS_ENABLE": "NVLink SHARP (NVSwitch multicast)",
            "NCCL_NVLS_NCHANNELS": "NVLink SHARP (NVSwitch multicast)",
            "NCCL_MEM_SYNC_DOMAIN": "CUDA memory synchronisation domains (Hopper launch attribute)"}


@rule(code="NCCL040", name="rccl-nvidia-only-variable", severity=Severity.INFO, kinds=SETTING_KINDS, since="0.3.0")
def rccl_nvidia_only_variable(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An NVIDIA-only ``NCCL_*`` setting for AMD GPUs: RCCL never reads it (needs an RCCL ``--sku``).

    ## What it catches
    With a SKU whose GPUs run RCCL (``Standard_ND96isr_MI300X_v5``): ``NCCL_NVLS_ENABLE``,
    ``NCCL_NVLS_NCHANNELS`` or ``NCCL_MEM_SYNC_DOMAIN``, in any file that sets NCCL variables.

    ## Why is this bad?
    It is not harmful, which is why this is information only: RCCL's source names these variables, but
    only inside ``#if CUDART_VERSION >= ...`` branches (ROCm/rccl ``src/transport/nvls.cc``,
    ``src/enqueue.cc`` at rocm-6.2.2) that a HIP build compiles out, and the features they tune
    (NVLink SHARP, CUDA memory-sync domains) do not exist on AMD GPUs. The line does nothing; it
    usually means settings were copied from an NVIDIA cluster, so check the rest of them too. Other
    ``NCCL_*`` names (``NCCL_IB_HCA``, ``NCCL_SOCKET_IFNAME``, ``NCCL_ALGO``...) RCCL does read.

    ## Example
    ```text
    # hpcconf lint --sku Standard_ND96isr_MI300X_v5 job.env
    NCCL_NVLS_ENABLE=0
    ```

    ## Fix
    Delete the line from settings meant for AMD GPUs.
    """
    if ctx.collective != "rccl":
        return
    for setting in env_settings(doc, "NCCL_"):
        var = rocm.cuda_only(setting.name)
        if var is None:
            continue
        feature = _FEATURE.get(setting.name, "an NVIDIA-only feature")
        yield doc.at_line(
            setting.line,
            f"{setting.name} does nothing on {ctx.sku_name}'s AMD GPUs: RCCL's HIP build compiles out the code "
            f"that reads it (ROCm/rccl {var.source} at {rocm.RCCL_TAG}), and {feature} is NVIDIA's",
            hint="delete it from settings meant for AMD GPUs", column=setting.column,
            end_column=setting.column + len(setting.name))


@rule(code="NCCL041", name="rccl-ignores-nccl-conf", severity=Severity.WARNING, kinds=(Kind.NCCL_CONF,),
      since="0.3.0")
def rccl_ignores_nccl_conf(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """An ``nccl.conf`` for AMD GPUs: RCCL never reads it, so none of its settings apply (needs an RCCL ``--sku``).

    ## What it catches
    A file named ``nccl.conf`` (or ``*.nccl.conf``, ``*-nccl.conf``) with settings, linted for a SKU
    whose GPUs run RCCL (``Standard_ND96isr_MI300X_v5``).

    ## Why is this bad?
    NCCL reads ``/etc/nccl.conf`` (and ``NCCL_CONF_FILE``); RCCL's ``initEnv`` reads ``~/.rccl.conf``
    and ``/etc/rccl.conf`` and nothing else (ROCm/rccl ``src/misc/param.cc`` at rocm-6.2.2 and later).
    Installed as ``/etc/nccl.conf`` on an MI300X node, every line of this file is silently ignored and
    RCCL runs with its defaults.

    ## Example
    ```text
    # hpcconf lint --sku Standard_ND96isr_MI300X_v5 nccl.conf
    NCCL_IB_HCA=mlx5_ib
    ```

    ## Fix
    Install the same lines as ``/etc/rccl.conf``, or export them in the job's environment (what
    hpcconf's Slurm job for AMD pools does).
    """
    if ctx.collective != "rccl" or not is_nccl_conf_name(DisplayPath.parse(doc.path).name):
        return
    settings = env_settings(doc)
    if not settings:
        return
    first = settings[0]
    yield doc.at_line(
        first.line,
        f"RCCL reads {' and '.join(rocm.RCCL_CONF_FILES)}, never nccl.conf: the {len(settings)} setting(s) in this "
        f"file do nothing on {ctx.sku_name}'s AMD GPUs ({rocm.RCCL_PARAM_SOURCE})",
        hint="install these lines as /etc/rccl.conf, or export them in the job's environment",
        column=first.column)


@rule(code="DKR101", name="dockerfile-nvidia-base-for-amd", severity=Severity.ERROR, kinds=(Kind.DOCKERFILE,),
      since="0.3.0")
def dockerfile_nvidia_base_for_amd(doc: Document, ctx: LintContext) -> Iterator[Diagnostic]:
    """A test image for AMD GPUs built ``FROM`` an NVIDIA (CUDA/NCCL) image (needs an AMD ``--sku``).

    ## What it catches
    With a SKU whose GPUs are AMD's (``Standard_ND96isr_MI300X_v5``): the last ``FROM`` (the stage
    the image is) naming an NVIDIA image: ``nvcr.io/...``, ``nvidia/...`` or a ``cuda`` image, after
    expanding ``ARG`` defaults.

    ## Why is this bad?
    The image brings the GPU runtime and the collective library: CUDA and NCCL from NVIDIA, HIP and
    RCCL from ROCm. Pods from a CUDA image on MI300X nodes see no GPU they can use, and nccl-tests built
    against CUDA cannot run there; rccl-tests need hipcc and RCCL from a ROCm image.

    ## Example
    ```dockerfile
    # hpcconf lint --sku Standard_ND96isr_MI300X_v5 Dockerfile
    FROM nvcr.io/nvidia/pytorch:24.05-py3
    ```

    ## Fix
    Start from a ROCm image (``FROM rocm/dev-ubuntu-22.04:6.4.1``, ROCm/ROCm-docker) and build
    rccl-tests (ROCm/rccl-tests; same binary names as nccl-tests).
    """
    if ctx.sku is None or ctx.sku.gpu.vendor != "amd":
        return
    model = doc.dockerfile
    froms = model.of("FROM")
    if not froms:
        return
    last = froms[-1]
    words = [w for w in last.arguments.split() if not w.startswith("--")]
    if not words:
        return
    image = expand(words[0], model.arg_defaults())
    if rocm.is_nvidia_image(image):
        yield doc.at_line(last.line, f"{image} is an NVIDIA (CUDA/NCCL) image, but {ctx.sku_name} has "
                                     f"{ctx.sku.gpu.model} GPUs, which need ROCm and RCCL",
                          hint=f"start from a ROCm image, e.g. FROM {rocm.ROCM_BASE_IMAGE}", column=last.column)

