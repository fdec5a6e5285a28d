"""Damaged data files, each refused in one line that names it: preset files that are not UTF-8, not TOML or
of the wrong shape (also while --help imports the scenes), colour map files of the wrong shape, and settings,
baselines and preset files nested deeper than the reader follows."""

import os
import shutil
import subprocess
import sys

import pytest
import test_reliability_files as inputs
from test_reliability_files import ROOT, run

import assets
from viewer.settings import Settings, settings_path

private_config = inputs.private_config  # autouse: every test's settings folder is its own


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
