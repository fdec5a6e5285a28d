"""Inputs: an output that is one of the inputs, inputs that are not regular files or are too large (settings
among them), lpc's numbers out of range, empty files and a full disk. Damaged and deeply nested data files are
in test_reliability_data.py, saved settings that cannot be used as saved in test_reliability_saved.py."""

import os
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

import main
from sim.cmdline.cli import UsageError
from sim.cmdline.reader import open_input, read_input
from sim.cmdline.writer import check_target
from viewer.settings import FOLDER_VARIABLE, SIZE_LIMIT, Settings, settings_path

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def private_config(tmp_path, monkeypatch):
    """Every test's settings folder is its own."""
    monkeypatch.setenv(FOLDER_VARIABLE, str(tmp_path / "config"))
    return tmp_path / "config"


def run(capsys, *args):
    """(exit code, stdout, stderr) of ``main.py ARGS`` in this process."""
    try:
        code = main.main([*map(str, args)])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def write_wav(path, seconds=0.5, rate=8000):
    x = (np.random.default_rng(1).standard_normal(int(seconds * rate)) * 3000).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(x.tobytes())
    return path


def partials(folder) -> list[str]:
    return [name for name in os.listdir(folder) if name.endswith(".partial")]


# --- an output that is one of the inputs ---------------------------------------------------------------------
@pytest.mark.parametrize("how", ["same name", "symbolic link", "hard link", "through a missing folder"])
def test_lpc_refuses_an_output_that_is_its_input(tmp_path, capsys, how):
    wav = write_wav(tmp_path / "in.wav")
    before = wav.read_bytes()
    source, output = wav, wav
    if how == "symbolic link":
        source = tmp_path / "link.wav"
        source.symlink_to(wav)
    elif how == "hard link":
        output = tmp_path / "hard.npy"
        os.link(wav, output)
    elif how == "through a missing folder":
        output = tmp_path / "nowhere" / ".." / "in.wav"
    code, out, err = run(capsys, "lpc", source, "--output", output)
    assert code == 2 and "is the input" in err and "--output" in err and "\n" not in err.strip()
    assert out == "", "refused before the work"
    assert wav.read_bytes() == before and partials(tmp_path) == []


def test_check_target_compares_files_not_names(tmp_path):
    data = tmp_path / "data.bin"
    data.write_bytes(b"x")
    other = tmp_path / "other.bin"
    check_target(other, inputs=[data])  # a new file beside the input is fine
    with pytest.raises(UsageError, match="is the input"):
        check_target(tmp_path / "." / "data.bin", inputs=[tmp_path / "missing", data])


# --- inputs that are not regular files -----------------------------------------------------------------------
@pytest.mark.parametrize("with_output", [False, True])
def test_lpc_refuses_a_fifo_at_once(tmp_path, with_output):
    """A hang is what this guards against: the process is given 60 s."""
    fifo = tmp_path / "fifo.wav"
    os.mkfifo(fifo)
    extra = ["--output", str(tmp_path / "out.npy")] if with_output else []
    out = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "lpc", str(fifo), *extra],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 2 and "not a regular file (a FIFO)" in out.stderr and "Traceback" not in out.stderr
    assert sorted(os.listdir(tmp_path)) == ["fifo.wav"]


@pytest.mark.parametrize("kind", ["directory", "character device"])
def test_lpc_refuses_other_non_regular_inputs(tmp_path, capsys, kind):
    path = tmp_path if kind == "directory" else "/dev/zero"
    code, _, err = run(capsys, "lpc", path)
    assert code == 2 and f"not a regular file (a {kind})" in err


def test_settings_fifo_is_refused_unread(private_config):
    """``view`` with settings.toml a FIFO: reported and ignored, no hang (a subprocess, given 60 s)."""
    private_config.mkdir()
    os.mkfifo(settings_path())
    code = "from viewer.settings import Settings; s = Settings.load(); print(s.problem); print(s.data)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, FOLDER_VARIABLE: str(private_config)},
    )
    problem, data = out.stdout.splitlines()
    assert "not a regular file (a FIFO)" in problem and "ignored, starting clean" in problem
    assert data == "{'version': 1}"


def test_settings_linked_to_dev_zero_or_too_large_are_refused(private_config):
    private_config.mkdir()
    path = settings_path()
    path.symlink_to("/dev/zero")
    settings = Settings.load()
    assert "not a regular file (a character device)" in settings.problem and settings.data == {"version": 1}
    path.unlink()
    path.write_text("version = 1\n" + "#" * SIZE_LIMIT + "\n")
    settings = Settings.load()
    assert "larger than 1 MiB" in settings.problem and "ignored" in settings.problem
    assert settings.notices == [settings.problem]


def test_read_input_stops_at_its_limit(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    assert read_input(big, "thing", 11) == b"x" * 11
    with pytest.raises(UsageError, match="thing .* is larger than 10 bytes"):
        read_input(big, "thing", 10)
    with pytest.raises(UsageError, match="does not exist"):
        open_input(tmp_path / "missing", "thing")


# --- lpc's numbers and empty files ---------------------------------------------------------------------------
@pytest.mark.parametrize("frame_ms", ["inf", "1e306", "nan", "-5"])
def test_lpc_frame_ms_out_of_range_exits_2(tmp_path, capsys, frame_ms):
    wav = write_wav(tmp_path / "ok.wav")
    code, _, err = run(capsys, "lpc", wav, "--frame-ms", frame_ms)
    assert code == 2 and "--frame-ms" in err
    assert ("finite number" if frame_ms in ("inf", "nan") else "must be positive and at most 60000 ms") in err


def test_an_empty_wav_says_it_has_no_samples(tmp_path, capsys):
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    code, _, err = run(capsys, "lpc", empty)
    assert code == 2 and "the file is empty: no samples" in err and "()" not in err
    truncated = tmp_path / "truncated.wav"
    truncated.write_bytes(write_wav(tmp_path / "whole.wav").read_bytes()[:20])
    code, _, err = run(capsys, "lpc", truncated)
    assert code == 2 and "ends inside its header: no samples" in err and "()" not in err
    header_only = tmp_path / "header.wav"
    with wave.open(str(header_only), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
    code, _, err = run(capsys, "lpc", header_only)
    assert code == 2 and "no samples" in err


def test_a_full_disk_under_lpc_output_says_so(tmp_path, capsys, small_disk):
    wav = write_wav(tmp_path / "ok.wav", seconds=2.0)  # 199 frames of 792 bytes: more than the 64 KiB disk
    target = small_disk / "out.npy"
    target.write_bytes(b"previous")
    code, _, err = run(capsys, "lpc", wav, "--output", target)
    assert code == 1 and "No space left on device" in err and "requested" not in err
    assert target.read_bytes() == b"previous" and partials(small_disk) == []
