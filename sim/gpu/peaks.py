"""The device's peak rates, the roofs of the speed-of-light figures (``sim.gpu.roofline``).

Measured once per device and cached on disk (the user's cache folder, ``peaks/<key>.json``, keyed by
the device's name, driver and clocks: a new driver or other clocks measure again): the copy rate
(``sim/gpu/peaks.cu``'s float4 copy and a device-to-device memcpy, the faster), the FP32 and FP64 FMA
rates (chains of fused multiply-adds on every SM) and the device-to-host rate into pinned memory. Each
figure says where it came from. Where a measurement cannot be made, an H100's or H200's datasheet
values stand in (``DOCUMENTED``), marked as such. The schedulers' instruction issue rate and the L1 data pipes'
wavefront rate follow from the FP32 FMA rate (``Peaks.issue_ginst``, ``Peaks.l1_gwave``).

Also the device fingerprint of a benchmark record (``fingerprint``): name, driver, clocks, ECC, commit;
on a machine without a GPU, the processor and its cores. CuPy is imported inside the functions.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import re
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sim.gpu.cuda import Build

BUILD = Build("sim/gpu/peaks.cu", (), ("copy4", "fma_fp32", "fma_fp64"))
CHAINS, UNROLL = 8, 16  # peaks.cu's FMA chains per thread and unrolled FMAs per chain and iteration
COPY_BYTES = 1 << 30  # each buffer of the copy: far beyond any L2
LINK_BYTES = 256 << 20  # the device-to-host copy
FMA_ITERATIONS = 2048
FMA_BLOCKS_PER_SM, FMA_THREADS = 8, 256
REPEATS = 10  # the best of these counts (the peak, not the typical)
# Hopper's FP64 tensor cores do twice the FP64 FMA pipes' FLOPs (H100 SXM datasheet: 67 vs 34 TFLOPS)
TENSOR_FP64_FACTOR = 2.0
# Hopper issues 64 INT32 operations per SM and clock against 128 FP32 FMAs (2 FLOP each): a quarter of the
# FP32 FLOP rate (CUDA C++ Programming Guide, "Arithmetic Instructions", compute capability 9.0)
INT_OPS_FACTOR = 0.25
# Since Volta each of an SM's 4 schedulers issues one warp instruction a clock, the rate at which its 128 FP32
# lanes complete FMAs (4 warps x 32 lanes a clock). So the measured FMA rate carries the measured clocks:
# warp instructions a second = FP32 FLOP/s / (2 FLOP an FMA x 32 lanes a warp instruction).
FP32_FLOP_PER_ISSUE = 2 * 32
# An SM's L1 data pipe processes one wavefront a clock (ncu: l1tex__data_pipe_lsu_wavefronts peak_sustained 1 a
# cycle; a shared-memory access takes one per round of bank conflicts), while its 128 FP32 lanes complete 128 FMAs:
# wavefronts a second = FP32 FLOP/s / (2 FLOP an FMA x 128 lanes).
FP32_FLOP_PER_WAVEFRONT = 2 * 128


@dataclass(frozen=True)
class Peaks:
    device: str
    copy_gbs: float  # device memory: read + write bytes a second of a large copy
    fp32_gflops: float
    fp64_gflops: float
    link_gbs: float  # device to host (pinned)
    sources: dict[str, str] = field(default_factory=dict)  # figure -> where it came from

    def flop_peak(self, kind: str) -> float:
        """GFLOP/s (integer: Gop/s) of ``kind`` ("fp32", "fp64", "fp64-tensor", "int")."""
        if kind == "fp64":
            return self.fp64_gflops
        if kind == "fp64-tensor":
            return self.fp64_gflops * TENSOR_FP64_FACTOR
        if kind == "int":
            return self.fp32_gflops * INT_OPS_FACTOR
        return self.fp32_gflops

    @property
    def issue_ginst(self) -> float:
        """Giga warp instructions a second the schedulers can issue (all SMs): the FP32 FMA peak's rate, one
        warp instruction a scheduler and clock (``FP32_FLOP_PER_ISSUE``)."""
        return self.fp32_gflops / FP32_FLOP_PER_ISSUE

    @property
    def l1_gwave(self) -> float:
        """Giga wavefronts a second the SMs' L1 data pipes can process (all SMs): one an SM and clock, at the
        clock the FP32 FMA peak was measured at (``FP32_FLOP_PER_WAVEFRONT``)."""
        return self.fp32_gflops / FP32_FLOP_PER_WAVEFRONT

    def source_lines(self) -> list[str]:
        """One line per figure: its value and where it came from."""
        values = {
            "copy": f"{self.copy_gbs:,.0f} GB/s",
            "fp32": f"{self.fp32_gflops / 1e3:,.1f} TFLOP/s",
            "fp64": f"{self.fp64_gflops / 1e3:,.1f} TFLOP/s",
            "link": f"{self.link_gbs:,.1f} GB/s",
        }
        lines = [f"{name} {value}: {self.sources.get(name, 'unknown')}" for name, value in values.items()]
        return lines + [
            f"issue {self.issue_ginst:,.1f} G warp instructions/s: the fp32 figure / {FP32_FLOP_PER_ISSUE}",
            f"L1 {self.l1_gwave:,.1f} G wavefronts/s: the fp32 figure / {FP32_FLOP_PER_WAVEFRONT}",
        ]


# Datasheet values (NVIDIA H100 Tensor Core GPU datasheet, nvidia.com/en-us/data-center/h100/; NVIDIA H200
# Tensor Core GPU datasheet, nvidia.com/en-us/data-center/h200/): memory bandwidth, FP32 and FP64 (non-tensor)
# TFLOPS; the link is PCIe Gen5 x16, 64 GB/s a direction. Matched in order on the device's name.
DOCUMENTED = (
    ("H200", "H200 datasheet", 4800.0, 67_000.0, 34_000.0, 64.0),
    ("H100 PCIe", "H100 PCIe datasheet", 2000.0, 51_000.0, 26_000.0, 64.0),
    ("H100 NVL", "H100 NVL datasheet", 3900.0, 60_000.0, 30_000.0, 64.0),
    ("H100", "H100 SXM datasheet", 3350.0, 67_000.0, 34_000.0, 64.0),
)


def documented(name: str) -> Peaks | None:
    """The datasheet's peaks of a device by name, or None for a device the table lacks."""
    for pattern, sheet, copy, fp32, fp64, link in DOCUMENTED:
        if pattern in name:
            where = f"documented: {sheet}"
            return Peaks(name, copy, fp32, fp64, link, {k: where for k in ("copy", "fp32", "fp64", "link")})
    return None


# --- the device's facts: name, driver, clocks, ECC -------------------------------------------------------
SMI_FIELDS = ("name", "driver_version", "clocks.max.sm", "clocks.max.mem", "ecc.mode.current")


def parse_smi(line: str) -> dict:
    """nvidia-smi's CSV line of SMI_FIELDS (noheader, nounits) as facts."""
    name, driver, sm, mem, ecc = (part.strip() for part in line.split(","))
    return {"name": name, "driver": driver, "sm_clock_mhz": _number(sm), "mem_clock_mhz": _number(mem), "ecc": ecc}


def _number(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def gpu_facts(device: int = 0) -> dict:
    """The device's name, driver, maximum SM and memory clocks and ECC mode: nvidia-smi's, or CuPy's
    properties where nvidia-smi cannot answer."""
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits", "-i", str(device)],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
        return parse_smi(out.strip().splitlines()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        pass
    try:
        import cupy

        from sim.gpu.cuda import device_properties

        props = device_properties(device)
        driver = cupy.cuda.runtime.driverGetVersion()
    except Exception as exc:  # noqa: BLE001  neither answers: a record still says what it could not read
        return {
            "name": "unknown GPU",
            "driver": "unknown",
            "sm_clock_mhz": None,
            "mem_clock_mhz": None,
            "ecc": "unknown",
            "unread": f"{type(exc).__name__}: {exc}",
        }
    return {
        "name": props["name"],
        "driver": f"CUDA {driver // 1000}.{driver % 1000 // 10}",
        "sm_clock_mhz": props.get("clockRate", 0) // 1000 or None,
        "mem_clock_mhz": props.get("memoryClockRate", 0) // 1000 or None,
        "ecc": "Enabled" if props.get("ECCEnabled") else "Disabled",
    }


def cpu_facts() -> dict:
    from sim.gpu.backend import device_name

    return {"kind": "cpu", "name": device_name("cpu"), "cores": os.cpu_count()}


def fingerprint(backend: str, commit: str, device: int = 0) -> dict:
    """Where a benchmark ran: the GPU's facts (name, driver, clocks, ECC) and its host's processor (a frame's
    host-side work moves with it), or, without a GPU, the CPU's."""
    from sim.gpu.backend import cpu_model

    facts = {"kind": "gpu", **gpu_facts(device), "host_cpu": cpu_model()} if backend == "gpu" else cpu_facts()
    return {**facts, "commit": commit}


def device_key(facts: dict) -> str:
    """The cache's file name for a device: name, driver and clocks, in characters any file system takes."""
    text = f"{facts['name']}_{facts['driver']}_sm{facts.get('sm_clock_mhz')}_mem{facts.get('mem_clock_mhz')}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")


# --- measured once, cached ----------------------------------------------------------------------------------
def cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("kernel-lab", appauthor=False)) / "peaks"


def load_cached(key: str) -> Peaks | None:
    """The cached peaks of ``key``, or None (absent, unreadable or of another shape: measured again)."""
    try:
        data = json.loads((cache_dir() / f"{key}.json").read_text())
        return Peaks(**data)
    except (OSError, ValueError, TypeError):
        return None


def store(key: str, peaks: Peaks) -> None:
    from sim.cmdline.cli import UsageError
    from sim.cmdline.writer import OutputError, make_folder, write_text

    try:
        make_folder(cache_dir(), "peaks cache")
        write_text(str(cache_dir() / f"{key}.json"), json.dumps(asdict(peaks), indent=2) + "\n", "peaks cache")
    except (OutputError, UsageError) as exc:  # a cache that cannot be written: measured again next time
        import sys

        print(f"peaks: not cached ({exc})", file=sys.stderr)


def device_peaks(device: int = 0, facts: dict | None = None, measure=None) -> Peaks | None:
    """The device's peaks: cached, else measured (``measure(device, facts)``) and cached, else the datasheet's
    (not cached: the next process measures again); None for a device with neither."""
    facts = facts or gpu_facts(device)
    key = device_key(facts)
    cached = load_cached(key)
    if cached is not None:
        return cached
    try:
        peaks = (measure or measure_peaks)(device, facts)
    except Exception as exc:  # noqa: BLE001  no measurement (a failed launch, no memory): the datasheet
        import sys

        print(f"peaks: measuring failed ({type(exc).__name__}: {exc}); datasheet values", file=sys.stderr)
        return documented(facts["name"])
    store(key, peaks)
    return peaks


@functools.cache
def current(device: int = 0) -> Peaks | None:
    """``device_peaks`` once a process (the viewer asks every frame)."""
    return device_peaks(device)


def measure_peaks(device: int, facts: dict) -> Peaks:
    """Time the copy, the FMA chains and a device-to-host copy on ``device`` (about a second)."""
    import cupy

    from sim.gpu import cuda

    with cupy.cuda.Device(device):
        k = cuda.kernels(BUILD, device)
        sms = cuda.device_properties(device)["multiProcessorCount"]
        copy_s = _copy_seconds(k, sms)
        blocks = sms * FMA_BLOCKS_PER_SM
        flops = 2.0 * FMA_ITERATIONS * UNROLL * CHAINS * blocks * FMA_THREADS  # an FMA is 2 FLOP
        fp32_s, fp64_s = (_fma_seconds(k, blocks, dtype) for dtype in (cupy.float32, cupy.float64))
        link_s = _link_seconds()
    # the 2 GiB of the copy and the pinned buffer go back to the device and the host, not to the pools
    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()
    when = datetime.date.today().isoformat()
    where = (
        f"measured {when} on {facts['name']} (driver {facts['driver']}, SM {facts.get('sm_clock_mhz')} MHz, "
        f"memory {facts.get('mem_clock_mhz')} MHz)"
    )
    return Peaks(
        facts["name"],
        2 * COPY_BYTES / copy_s / 1e9,
        flops / fp32_s / 1e9,
        flops / fp64_s / 1e9,
        LINK_BYTES / link_s / 1e9,
        {
            "copy": f"{where}: float4 copy or memcpy, {COPY_BYTES >> 20} MiB",
            "fp32": f"{where}: FMA chains",
            "fp64": f"{where}: FMA chains",
            "link": f"{where}: device to pinned host memory",
        },
    )


def _copy_seconds(k, sms: int) -> float:
    """The faster of peaks.cu's float4 copy and CuPy's device-to-device memcpy of COPY_BYTES."""
    import cupy

    src = cupy.ones(COPY_BYTES // 4, cupy.float32)
    dst = cupy.empty_like(src)
    copy4 = _best(lambda: k["copy4"]((sms * 16,), (256,), (src, dst, cupy.int64(COPY_BYTES // 16))))
    return min(copy4, _best(lambda: dst.data.copy_from_device(src.data, COPY_BYTES)))


def _fma_seconds(k, blocks: int, dtype) -> float:
    """Seconds of peaks.cu's FMA chains in ``dtype`` on ``blocks`` blocks (a = 0.999, b = 0.001: the chains
    stay near 1, never denormal)."""
    import cupy

    sink = cupy.empty(blocks * FMA_THREADS, dtype)
    name = "fma_fp32" if dtype == cupy.float32 else "fma_fp64"
    args = (sink, cupy.int32(FMA_ITERATIONS), dtype(0.999), dtype(1e-3))
    return _best(lambda: k[name]((blocks,), (FMA_THREADS,), args))


def _best(launch) -> float:
    """Seconds of the fastest of REPEATS runs of ``launch`` (CUDA events), after one untimed run."""
    from sim.gpu import measure

    return min(measure.samples(launch, measure.EventClock(), REPEATS)) * 1e-3


def _link_seconds() -> float:
    import cupy
    import cupyx

    from sim.gpu import measure

    src = cupy.ones(LINK_BYTES, cupy.uint8)
    pinned = cupyx.empty_pinned(LINK_BYTES, cupy.uint8)
    return min(measure.samples(lambda: src.get(out=pinned), measure.HostClock(), 3)) * 1e-3
