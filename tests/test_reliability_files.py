"""Inputs and settings: an output that is one of the inputs, inputs that are not regular files or are
too large, damaged preset files, a saved count that cannot run, and the scene combo restoring each
scene's own saved preset and parameters."""

import os
import shutil
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

import assets
import main
from sim.cmdline.cli import UsageError
from sim.cmdline.reader import open_input, read_input
from sim.cmdline.writer import check_target
from viewer.settings import FOLDER_VARIABLE, SIZE_LIMIT, Settings, settings_path
from viewer.window.display import display_problem

ROOT = Path(__file__).resolve().parent.parent
_PROBLEM = display_problem()
needs_display = pytest.mark.skipif(_PROBLEM is not None, reason=f"needs a display: {_PROBLEM}")


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


# --- damaged preset files --------------------------------------------------------------------------------------
@pytest.fixture
def damaged_presets(tmp_path, monkeypatch):
    """The heat scene's presets read from a copy in tmp_path, parsed afresh."""
    copy = tmp_path / "heat" / "presets.toml"
    copy.parent.mkdir()
    shutil.copyfile(ROOT / "sim" / "heat" / "presets.toml", copy)
    monkeypatch.setattr(assets, "_presets_file", lambda scene: tmp_path / scene / "presets.toml")
    assets.presets.cache_clear()
    yield copy
    assets.presets.cache_clear()


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda p: p.write_bytes(p.read_bytes() + b"\xff\xfe"), "is not UTF-8 text"),
        (lambda p: p.write_text(p.read_text() + "[broken\n"), "is not valid TOML"),
        (
            lambda p: p.write_text(p.read_text().replace("description =", "descr =", 1)),
            "preset 'dli' has no description",
        ),
        (
            lambda p: p.write_text(p.read_text() + "\n[odd]\ndescription = 'x'\ncount = 'many'\n"),
            "preset 'odd' has count",
        ),
        (lambda p: (p.unlink(), os.mkfifo(p)), "not a regular file (a FIFO)"),
        (lambda p: p.write_text("#" * (assets.SIZE_LIMIT + 1)), "larger than 1 MiB"),
    ],
)
def test_a_damaged_preset_file_is_one_line_naming_it(damaged_presets, damage, says):
    damage(damaged_presets)
    with pytest.raises(SystemExit) as raised:
        assets.presets("heat")
    message = str(raised.value.code)
    assert says in message and str(damaged_presets) in message and "\n" not in message
    assert isinstance(raised.value, assets.AssetError)


def test_a_damaged_preset_file_stops_help_with_one_line(tmp_path):
    """The presets are read while the scenes are imported: the process ends with one line, exit 1."""
    package = tmp_path / "sim"
    shutil.copytree(ROOT / "sim", package, ignore=shutil.ignore_patterns("__pycache__"))
    heat = package / "heat" / "presets.toml"
    heat.write_bytes(heat.read_bytes() + b"\xff")
    code = (
        f"import sys; sys.path[:0] = [{str(tmp_path)!r}, {str(ROOT)!r}]; sys.argv = ['main.py', '--help']; "
        f"import runpy; runpy.run_path({str(ROOT / 'main.py')!r}, run_name='__main__')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.strip() == f"kernel-lab: data file {str(heat)!r} is not UTF-8 text; reinstall kernel-lab"


# --- a saved count that cannot run -------------------------------------------------------------------------------
def save(text: str) -> Path:
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def viewer_started(monkeypatch):
    """``view`` without a window: the scene and settings it would open the window with."""
    import viewer.window.display as display
    import viewer.window.launch as launch

    started = {}

    def fake_main(scene, width, height, settings=None, kernel=None, baseline=None):
        started.update(scene=scene, settings=settings)
        return 0

    monkeypatch.setattr(display, "display_problem", lambda: None)
    monkeypatch.setattr(launch, "main", fake_main)
    return started


@pytest.mark.parametrize("scene, preset, count", [("heat", "seed", 10**18), ("sdh", "course", 10**8)])
def test_view_starts_with_the_preset_count_when_the_saved_one_cannot_run(capsys, viewer_started, scene, preset, count):
    path = save(f'version = 1\nscene = "{scene}"\n[scenes.{scene}]\npreset = "{preset}"\ncount = {count}\n')
    code, _, err = run(capsys, "view")
    assert code == 0
    started = viewer_started["scene"]
    assert started.spec.name == scene and started.preset == preset
    assert started.target_n == started.spec.preset(preset).count
    assert f"saved count {count:,} of the {scene} scene in {path} cannot run" in err
    notices = viewer_started["settings"].notices
    assert len(notices) == 1 and str(path) in notices[0], "the panel's message line gets it too"


def test_a_count_given_on_the_command_line_is_still_refused(capsys, viewer_started):
    save('version = 1\nscene = "heat"\n[scenes.heat]\npreset = "seed"\ncount = 1000\n')
    code, _, err = run(capsys, "view", "heat", "--preset", "seed", "-n", "1e18")
    assert code == 2 and "saved count" not in err and viewer_started == {}


# --- in a window: the panel's message line, the scene combo ------------------------------------------------------
def open_viewer(scene, settings, tmp_path):
    from viewer.window.app import Viewer

    v = Viewer(scene, 900, 640, max_fps=None, screenshot_dir=tmp_path, settings=settings)
    v.controller.paused = True
    v.tick()
    return v


@needs_display
@pytest.mark.window
def test_the_panel_says_which_saved_count_was_ignored(tmp_path, capsys, viewer_started):
    path = save('version = 1\nscene = "heat"\n[scenes.heat]\npreset = "seed"\ncount = 1000000000000000000\n')
    assert run(capsys, "view")[0] == 0
    v = open_viewer(viewer_started["scene"], viewer_started["settings"], tmp_path)
    try:
        assert f"saved count 1,000,000,000,000,000,000 of the heat scene in {path}" in v.message
    finally:
        v.close()


@needs_display
@pytest.mark.window
def test_the_scene_combo_restores_each_scenes_own_preset_and_parameters(tmp_path, capsys):
    from sim import create_scene

    settings = Settings.load()
    v = open_viewer(create_scene("balls", preset="T"), settings, tmp_path)
    try:
        v.controller.set_param("gravity", 4.5)
        v.controller.switch_scene("heat")  # what the panel's scene combo calls
        assert v.scene.spec.name == "heat" and v.scene.preset == v.scene.spec.default_preset
        v.controller.set_param("factor", 0.1)
        v.controller.switch_scene("balls")
        assert v.scene.spec.name == "balls" and v.scene.preset == "T", "the saved preset, not drip"
        fresh_t = create_scene("balls", preset="T")
        for param in v.scene.params:
            expected = 4.5 if param.name == "gravity" else fresh_t.controls.param_value(param.name)
            assert v.scene.controls.param_value(param.name) == pytest.approx(expected), param.name
        v.controller.switch_scene("heat")
        assert v.scene.controls.param_value("factor") == pytest.approx(0.1)
    finally:
        v.close()
    saved = Settings.load()
    for name in ("balls", "heat"):
        own = {p.name for p in create_scene(name).spec.params}
        assert set(saved.scene(name)["params"]) <= own, f"another scene's parameter in {name}'s table"


@needs_display
@pytest.mark.window
def test_a_switch_to_a_saved_count_that_cannot_run_takes_the_presets(tmp_path, capsys):
    from sim import create_scene

    path = save('version = 1\n[scenes.sdh]\npreset = "course"\ncount = 100000000\n')
    v = open_viewer(create_scene("heat"), Settings.load(), tmp_path)
    try:
        v.controller.switch_scene("sdh")
        assert v.scene.spec.name == "sdh" and v.scene.preset == "course"
        assert v.scene.target_n == v.scene.spec.preset("course").count
        assert f"saved count 100,000,000 of the sdh scene in {path} cannot run" in v.message
        assert f"in {path}" in capsys.readouterr().err
    finally:
        v.close()


def test_saved_parameters_stay_with_their_preset():
    """``view balls --preset drip`` with T's friction saved: drip keeps its own friction."""
    from sim import create_scene
    from viewer.window.controller import Controller
    from viewer.window.persist import apply_scene

    scene = create_scene("balls", preset="drip")
    drip_friction = scene.controls.param_value("friction")
    assert apply_scene(Controller(scene), {"preset": "T", "params": {"friction": 2.0, "gravity": 3.0}}) == []
    assert scene.controls.param_value("friction") == drip_friction and scene.controls.param_value("gravity") != 3.0
    apply_scene(Controller(scene), {"preset": "drip", "params": {"gravity": 3.0}})
    assert scene.controls.param_value("gravity") == pytest.approx(3.0)


# --- deeply nested files: refused by the reader in one line ---------------------------------------------------
DEEP = {
    "json": lambda n: "[" * n + "]" * n,
    "toml arrays": lambda n: "version = 1\nx = " + "[" * n + "]" * n + "\n",
    "toml tables": lambda n: "version = 1\nx = " + "{a = " * n + "1" + "}" * n + "\n",
    "toml dotted keys": lambda n: "version = 1\n[" + ".".join(["a"] * n) + "]\n",  # deep without recursing
}


@pytest.mark.parametrize("levels", [65, 5_000, 100_000])
@pytest.mark.parametrize("shape", ["toml arrays", "toml tables", "toml dotted keys"])
def test_deeply_nested_settings_start_with_the_defaults_and_say_so(private_config, shape, levels):
    private_config.mkdir()
    settings_path().write_text(DEEP[shape](levels))
    settings = Settings.load()
    assert settings.data == {"version": 1}
    assert settings.problem == (
        f"settings file {str(settings_path())!r} nests lists or tables more than 64 deep: "
        "not read; ignored, starting clean"
    )
    assert settings.save() is None and "a = " not in settings_path().read_text(), "saved as a quit saves: clean"


@pytest.mark.parametrize("levels", [5_000, 100_000])
def test_a_deeply_nested_baseline_is_a_usage_error(tmp_path, capsys, levels):
    path = tmp_path / "deep.json"
    path.write_text('{"results": ' + DEEP["json"](levels) + "}")
    code, _, err = run(capsys, "bench", "balls", "--preset", "T", "--baseline", path)
    assert code == 2 and f"baseline {str(path)!r} nests lists or tables more than 64 deep: not read" in err
    assert "Traceback" not in err and "RecursionError" not in err


@pytest.mark.parametrize("shape", ["toml arrays", "toml dotted keys"])
def test_a_deeply_nested_preset_file_is_one_line_naming_it(damaged_presets, shape):
    damaged_presets.write_text(damaged_presets.read_text() + DEEP[shape](50_000).replace("version = 1\n", ""))
    with pytest.raises(SystemExit) as raised:
        assets.presets("heat")
    assert str(raised.value.code) == (
        f"kernel-lab: data file {str(damaged_presets)!r} nests lists or tables more "
        "than 64 deep: not read; reinstall kernel-lab"
    )


# --- package data of the wrong shape: one line naming file, preset or table, and field -------------------------
@pytest.mark.parametrize(
    "change, says",
    [
        (
            lambda t: t.replace("ni = 200\n", 'ni = "abc"\n', 1),
            "preset 'dli' has ni 'abc', not a positive whole number",
        ),
        (
            lambda t: t.replace("factor = 8.418e-5\n", "factor = -1.0\n", 1),
            "preset 'dli' has factor -1.0, not a number above 0",
        ),
        (lambda t: t.replace('init = "rand"\n', "init = 3\n", 1), "preset 'dli' has init 3, not text"),
        (
            lambda t: t + '\n[odd]\ndescription = "x"\nsources = [{x = 0.5}]\n',
            "preset 'odd' has sources [{'x': 0.5}], not a list of tables of numbers x, y, r, t",
        ),
    ],
)
def test_a_preset_field_of_the_wrong_type_names_file_preset_and_field(damaged_presets, change, says):
    damaged_presets.write_text(change(damaged_presets.read_text()))
    with pytest.raises(assets.AssetError) as raised:
        assets.presets("heat")
    assert str(raised.value.code) == f"kernel-lab: data file {str(damaged_presets)!r}: {says}; reinstall kernel-lab"


@pytest.mark.parametrize(
    "change, says",
    [
        (
            lambda t: t.replace("[viridis]", "[viridisx]"),
            "[viridis] stops is missing or not a list of 2 or more colours",
        ),
        (
            lambda t: t.replace("[block]", "block = 3\n[blockx]"),
            "[block] palette is missing or not a list of 1 or more",
        ),
        (
            lambda t: t.replace("mismatch = [1.0, 0.0, 0.0, 1.0]", "mismatch = [1.0, 0.0]"),
            "[marks] mismatch is missing or not a colour of 4 numbers 0..1",
        ),
        (lambda t: t.replace("[0.267, 0.005, 0.329]", '["a", 0.005, 0.329]', 1), "[viridis] stops is missing or not"),
        (lambda t: t + "\n[odd]\nstops = [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]\n", "[odd] stops is missing or not"),
    ],
)
def test_a_colour_map_file_of_the_wrong_shape_names_table_and_field(tmp_path, monkeypatch, change, says):
    copy = tmp_path / "colormaps.toml"
    copy.write_text(change((ROOT / "assets" / "colormaps.toml").read_text()))
    monkeypatch.setattr(assets, "_located", lambda name: tmp_path / name)
    assets.colormaps.cache_clear()
    try:
        with pytest.raises(assets.AssetError) as raised:
            assets.colormaps()
    finally:
        assets.colormaps.cache_clear()
    message = str(raised.value.code)
    assert message.startswith(f"kernel-lab: data file {str(copy)!r}: {says}") and "\n" not in message


def test_a_damaged_colour_map_file_stops_with_one_line_where_it_is_read(tmp_path):
    package = tmp_path / "assets"
    shutil.copytree(ROOT / "assets", package, ignore=shutil.ignore_patterns("__pycache__", "fonts", "sounds"))
    (package / "colormaps.toml").write_text("[viridis]\nstops = 3\n")
    code = f"import sys; sys.path[:0] = [{str(tmp_path)!r}, {str(ROOT)!r}]; import sim.framework.colormap"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr and "KeyError" not in out.stderr
    assert out.stderr.strip().startswith(f"kernel-lab: data file {str(package / 'colormaps.toml')!r}: [viridis] stops")
