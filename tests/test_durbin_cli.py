"""The durbin and lpc commands: PolyBench's printouts and hash as the C code prints them, --compare,
exit codes for bad input (nothing written), Ctrl-C, and LPC of generated WAV files."""

import os
import pathlib
import re
import signal
import struct
import subprocess
import sys
import time
import wave

import numpy as np
import pytest
from process_time import signal_and_wait
from scipy.signal import lfilter

from sim.gpu.backend import gpu_status

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "version, dataset, n",
    [("3.2", "MINI", 32), ("3.2", "SMALL", 500), ("4", "MINI", 40), ("4", "MEDIUM", 400), ("4", "STANDARD", 400)],
)
def test_dump_and_hash_are_the_c_programs(cli, c_reference, version, dataset, n):
    out = cli("durbin", "--dataset", dataset, "--version", version, "--dump", "--hash")
    assert out.returncode == 0, out.stderr
    ref = subprocess.run([str(c_reference), version, str(n)], capture_output=True, text=True, check=True)
    assert out.stderr == ref.stderr
    assert out.stdout.splitlines()[-1] == ref.stdout.splitlines()[-1]
    assert f"N = {n} (PolyBench {version}" in out.stdout


def test_default_is_the_course_standard_dataset(cli):
    out = cli("durbin", "--hash")
    assert out.returncode == 0, out.stderr
    assert "N = 4,000 (PolyBench 3.2 STANDARD)" in out.stdout
    assert re.search(r"cpu time: \d+\.\d{6} s", out.stdout)


@pytest.mark.parametrize("input_", ["ar", "ar1"])
def test_compare_against_scipy(cli, input_):
    out = cli("durbin", "3000", "--version", "4", "--input", input_, "--compare")
    assert out.returncode == 0, out.stdout + out.stderr
    err = float(re.search(r"against scipy.linalg.solve_toeplitz: (\S+)", out.stdout)[1])
    assert err < 1e-12


def test_compare_fails_on_polybench_4_indefinite_input(cli):
    """PolyBench's own 4.x input makes T indefinite: Durbin agrees with scipy only to ~1e-8 at 4000."""
    out = cli("durbin", "--dataset", "EXTRALARGE", "--version", "4", "--compare")
    err = float(re.search(r"against scipy.linalg.solve_toeplitz: (\S+)", out.stdout)[1])
    assert (out.returncode == 1) == (err > 1e-10) and "FAIL" in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["1"], "N must be 2.."),
        (["--dataset", "HUGE"], "unknown dataset"),
        (["40", "--dataset", "MINI"], "not both"),
        (["--kernel", "persistent"], "--backend gpu only"),
        (["--block", "128"], "--backend gpu only"),
        (["--precision", "fp32"], "--backend gpu only"),
        (["--compare"], "3.2 solves no Toeplitz"),
        (["3000000000"], "N must be 2.."),
        (["2e9", "--version", "4"], "GiB, more than half"),
        (["--version", "5"], "invalid choice"),
        (["--input", "random"], "invalid choice"),
        (["-5"], "must be positive"),
    ],
)
def test_bad_input_exits_2(cli, args, message):
    out = cli("durbin", *args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr
    assert "time" not in out.stdout


@pytest.mark.skipif(gpu_status().available, reason="checks the no-GPU message")
def test_gpu_without_gpu_exits_1(cli):
    out = cli("durbin", "100", "--backend", "gpu")
    assert out.returncode == 1 and "GPU backend unavailable" in out.stderr


def test_ctrl_c_stops_a_long_cpu_run_within_a_second():
    """Within a second of the run's own work: its CPU time after the signal, which a loaded machine (tests
    beside it) does not stretch as it stretches the wall time."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "durbin", "400000", "--version", "4", "--input", "ar1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = proc.stdout.readline()  # the header: the run has started
        assert line.startswith("durbin: N = 400,000")
        time.sleep(1.0)
        sent = time.perf_counter()
        after = signal_and_wait(proc, signal.SIGINT)
        assert proc.returncode == 130
        assert after < 1.0
        assert time.perf_counter() - sent < 10.0
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait()


# --- lpc ------------------------------------------------------------------------------------------------
AR = [1.0, -1.3, 0.8, -0.2, 0.05]  # a stable AR(4): A(z) = 1 - 1.3 z^-1 + 0.8 z^-2 - 0.2 z^-3 + 0.05 z^-4


def write_wav(path, x, width=2, rate=16000, channels=1):
    x = np.clip(x, -1, 1 - 2.0 ** (1 - 8 * width))
    if width == 1:
        data = np.round(x * 128 + 128).astype(np.uint8).tobytes()
    elif width == 3:
        v = np.round(x * 2**23).astype(np.int32)
        data = b"".join(struct.pack("<i", int(s))[:3] for s in v)
    else:
        data = np.round(x * 2.0 ** (8 * width - 1)).astype("<i2" if width == 2 else "<i4").tobytes()
    if channels == 2:
        step = width
        data = b"".join(data[i : i + step] * 2 for i in range(0, len(data), step))
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(data)
    return path


def ar_signal(seconds=2.0, rate=16000, seed=None):
    noise = np.random.default_rng(seed).normal(size=int(seconds * rate))
    return 0.05 * lfilter([1.0], AR, noise)


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_lpc_recovers_the_ar_coefficients(cli, tmp_path, width):
    wav = write_wav(tmp_path / "ar.wav", ar_signal(), width)
    npy = tmp_path / "lpc.npy"
    out = cli("lpc", str(wav), "--order", "4", "--compare", "--output", str(npy))
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"{width * 8}-bit mono" in out.stdout and "199 frames of 320 samples (hop 160)" in out.stdout
    frames = np.load(npy)
    assert frames.shape == (199,) and frames["a"].shape == (199, 4)
    np.testing.assert_array_equal(frames["start"], np.arange(199) * 160)
    assert np.all((frames["error"] > 0) & (frames["error"] < 1)) and np.all(np.abs(frames["k"]) < 1)
    np.testing.assert_allclose(
        frames["error"],
        np.prod(1 - frames["k"] ** 2, axis=1),
        rtol=1e-12,
        err_msg="the order-4 predictor's error: every reflection coefficient's factor",
    )
    mean = frames["a"].mean(axis=0)
    np.testing.assert_allclose(mean, AR[1:], atol=0.08 if width > 1 else 0.2)


def test_lpc_silent_frames_get_zero_coefficients(cli, tmp_path):
    x = ar_signal(1.0)
    x[:4000] = 0.0
    npy = tmp_path / "lpc.npy"
    out = cli("lpc", str(write_wav(tmp_path / "s.wav", x)), "--order", "8", "--frame-ms", "10", "--output", str(npy))
    assert out.returncode == 0, out.stderr
    frames = np.load(npy)
    silent = frames["r0"] == 0
    assert silent.sum() >= 20 and np.all(frames["a"][silent] == 0) and np.all(frames["error"][silent] == 1)


def test_lpc_bad_input_exits_2_and_writes_nothing(cli, tmp_path):
    good = write_wav(tmp_path / "good.wav", ar_signal(0.5))
    npy = tmp_path / "out.npy"
    cases = [
        ([str(write_wav(tmp_path / "st.wav", ar_signal(0.5), channels=2))], "2 channels"),
        ([str(tmp_path / "missing.wav")], "does not exist"),
        ([str(good), "--order", "320"], "below the frame length"),
        ([str(good), "--order", "1"], "order must be at least 2"),
        ([str(good), "--frame-ms", "0"], "--frame-ms must be positive"),
        ([str(good), "--frame-ms", "1000"], "fewer than one"),
        ([str(good), "--output", str(tmp_path / "nofolder" / "x.npy")], "does not exist"),
    ]
    float_wav = tmp_path / "float.wav"  # IEEE float (format tag 3): not PCM
    data = np.zeros(800, "<f4").tobytes()
    float_wav.write_bytes(
        b"RIFF"
        + struct.pack("<I", 36 + len(data))
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 3, 1, 16000, 64000, 4, 32)
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )
    cases.append(([str(float_wav)], "not a PCM WAV"))
    (tmp_path / "text.wav").write_text("hello")
    cases.append(([str(tmp_path / "text.wav")], "not a PCM WAV"))
    for args, message in cases:
        out = cli("lpc", *args, "--output", str(npy)) if "--output" not in args else cli("lpc", *args)
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr, (args, out.stderr)
        assert not npy.exists()
    assert sorted(os.listdir(tmp_path)) == ["float.wav", "good.wav", "st.wav", "text.wav"]


@pytest.mark.skipif(gpu_status().available, reason="checks the no-GPU message")
def test_lpc_gpu_without_gpu_exits_1(cli, tmp_path):
    out = cli("lpc", str(write_wav(tmp_path / "a.wav", ar_signal(0.5))), "--backend", "gpu")
    assert out.returncode == 1 and "GPU backend unavailable" in out.stderr
