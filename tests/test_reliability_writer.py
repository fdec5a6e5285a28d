"""The one output writer (sim/cmdline/writer.py): what it refuses, what it never replaces, what it cleans up."""

import errno
import os
import pathlib
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

from sim.cmdline import writer
from sim.cmdline.cli import UsageError
from sim.cmdline.writer import OutputError, atomic_output, check_target, write_bytes, write_text

ROOT = pathlib.Path(__file__).resolve().parent.parent


def leftovers(folder) -> list[str]:
    return [name for name in os.listdir(folder) if name.endswith(".partial")]


def special_files(tmp_path):
    """A FIFO and a null device node (made here, never the real /dev/null), by kind."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    found = {"FIFO": fifo}
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        found["character device"] = node
    except PermissionError:
        pass  # not root: the FIFO stands for every non-regular file
    return found


def test_non_regular_targets_are_refused_and_kept(tmp_path):
    for kind, path in special_files(tmp_path).items():
        mode = os.lstat(path).st_mode
        with pytest.raises(UsageError, match=kind):
            check_target(str(path))
        with pytest.raises(OutputError, match="not replaced"):
            write_text(str(path), "data")
        assert os.lstat(path).st_mode == mode, f"the {kind} was replaced"
    assert leftovers(tmp_path) == []


def test_directory_and_symbolic_link_are_refused(tmp_path):
    (tmp_path / "dir").mkdir()
    with pytest.raises(UsageError, match="directory"):
        check_target(str(tmp_path / "dir"))
    real = tmp_path / "real.txt"
    real.write_text("keep")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with pytest.raises(UsageError, match="symbolic link"):
        check_target(str(link))
    with pytest.raises(OutputError):
        write_text(str(link), "new")
    assert link.is_symlink() and real.read_text() == "keep"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UsageError, match="symbolic link"):
        check_target(str(dangling))
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize(
    "path, message",
    [
        ("", "empty"),
        ("a\0b", "NUL"),
        ("/nonexistent-folder/out.txt", "does not exist"),
        ("/proc/version", "cannot create"),
        ("/etc/hostname/x", "not a folder"),
    ],
)
def test_bad_paths_are_refused(path, message):
    with pytest.raises(UsageError, match=message):
        check_target(path)
    with pytest.raises(OutputError, match=message):
        write_text(path, "x")


def test_folder_path_is_refused(tmp_path):
    for path in (str(tmp_path) + "/", str(tmp_path / ".")):
        with pytest.raises(UsageError, match="folder"):
            check_target(path)


def test_long_names(tmp_path):
    longest = "n" * os.pathconf(tmp_path, "PC_NAME_MAX")  # fits; its temporary name is shortened to fit too
    write_text(str(tmp_path / longest), "fits")
    assert (tmp_path / longest).read_text() == "fits"
    with pytest.raises(UsageError, match="too long"):
        check_target(str(tmp_path / (longest + "x")))
    assert leftovers(tmp_path) == []


def test_planted_temporary_names_are_never_followed(tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("secret")
    target = tmp_path / "out.txt"
    target.write_text("old")
    # the old fixed names, and the exact random name the writer draws first
    (tmp_path / "out.txt.partial").symlink_to(victim)
    (tmp_path / ".out.txt.partial").mkdir()
    (tmp_path / ".out.txt.aaaaaaaaaaaa.partial").symlink_to(victim)
    tokens = iter(["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"])
    monkeypatch.setattr(writer.secrets, "token_hex", lambda n: next(tokens))
    write_text(str(target), "new")
    assert target.read_text() == "new" and victim.read_text() == "secret"
    assert (tmp_path / ".out.txt.aaaaaaaaaaaa.partial").is_symlink()


def test_disk_full_keeps_the_previous_file(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("previous")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writer.os, "fsync", full)
    with pytest.raises(OutputError, match="No space left"):
        write_text(str(target), "x" * 100_000)
    assert target.read_text() == "previous" and leftovers(tmp_path) == []


def test_disk_full_on_a_small_file_system(small_disk):
    target = small_disk / "out.txt"
    target.write_text("previous")
    with pytest.raises(OutputError, match="No space left"):
        write_bytes(str(target), b"x" * 1_000_000)
    assert target.read_text() == "previous" and leftovers(small_disk) == []


def test_interrupt_and_errors_keep_the_previous_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("previous")
    for error in (KeyboardInterrupt, RuntimeError):
        with pytest.raises(error), atomic_output(str(target)) as f:
            f.write("half")
            raise error()
        assert target.read_text() == "previous" and leftovers(tmp_path) == []


def test_target_turned_into_a_fifo_meanwhile_is_kept(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(OutputError, match="FIFO"), atomic_output(str(target)) as f:
        f.write("data")
        os.mkfifo(target)
    assert stat.S_ISFIFO(os.lstat(target).st_mode) and leftovers(tmp_path) == []


def test_permissions_follow_the_umask_and_a_replaced_file_keeps_its_mode(tmp_path):
    old = os.umask(0o022)
    try:
        write_text(str(tmp_path / "a.json"), "{}")
        os.umask(0o077)
        write_text(str(tmp_path / "b.json"), "{}")
        (tmp_path / "c.json").write_text("old")
        os.chmod(tmp_path / "c.json", 0o640)
        write_text(str(tmp_path / "c.json"), "new")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.json").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "b.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "c.json").st_mode) == 0o640
    assert (tmp_path / "c.json").read_text() == "new"


def test_round_trip_text_and_bytes(tmp_path):
    write_text(tmp_path / "t.txt", "héllo\n")  # a Path works too
    assert (tmp_path / "t.txt").read_bytes() == "héllo\n".encode()
    write_bytes(str(tmp_path / "b.bin"), bytes(range(256)))
    assert (tmp_path / "b.bin").read_bytes() == bytes(range(256))


SLOW_WRITER = textwrap.dedent("""
    import signal, sys, time
    sys.path.insert(0, {root!r})
    from sim.cmdline.writer import atomic_output
    if sys.argv[2] == "ignore-hup":
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # like nohup
    try:
        with atomic_output(sys.argv[1]) as f:
            f.write("x" * 8_000_000)
            print("writing", flush=True)
            for _ in range(100):
                time.sleep(0.05)
    except KeyboardInterrupt:
        sys.exit(130)
""")


def default_signals() -> None:
    """The writer's SIGINT and SIGHUP as a terminal's process has them (pytest run under nohup, or a
    shell's background job, would hand down SIGHUP or SIGINT ignored, and an ignored SIGHUP stays so)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_signals_remove_the_temporary_file(tmp_path, sig, code):
    target = tmp_path / "out.txt"
    target.write_text("previous")
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER.format(root=str(ROOT)), str(target), "-"],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=default_signals,
    )
    assert proc.stdout.readline() == "writing\n"
    assert len(leftovers(tmp_path)) == 1
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == code
    assert target.read_text() == "previous" and leftovers(tmp_path) == []


def test_an_ignored_sighup_stays_ignored(tmp_path):
    target = tmp_path / "out.txt"
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITER.format(root=str(ROOT)), str(target), "ignore-hup"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "writing\n"
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(timeout=30) == 0
    assert target.stat().st_size == 8_000_000 and leftovers(tmp_path) == []


def test_handlers_are_restored_after_writing(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    write_text(str(tmp_path / "x"), "x")
    assert signal.getsignal(signal.SIGTERM) == before


def test_png_screenshots_go_through_the_writer(tmp_path):
    import numpy as np

    from viewer.image import read_image, write_image

    pixels = np.random.default_rng().integers(0, 256, (5, 7, 3), dtype=np.uint8)
    fifo = tmp_path / "shot.png"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="FIFO"):
        write_image(fifo, pixels)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    with pytest.raises(OutputError):
        write_image(tmp_path / "shot.png" / "inside.png", pixels)  # a FIFO where the folder would go
    path = write_image(tmp_path / "new" / "shot.png", pixels)  # the screenshot folder is created
    np.testing.assert_array_equal(read_image(path), pixels)
    assert leftovers(tmp_path / "new") == [] and leftovers(tmp_path) == []
