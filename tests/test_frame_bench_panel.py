"""The frame bench's --panel: which sections the timed panel opens, and how the report names it."""

import pytest

from viewer.bench.frame import main
from viewer.bench.panel_layer import label, sections
from viewer.panel.style import FOLDED, SECTIONS


def test_panel_choices_name_the_open_sections():
    assert sections("all") == SECTIONS and label(sections("all")) == "all"
    assert set(sections("default")) == set(SECTIONS) - set(FOLDED) and "Counters" in sections("default")
    assert sections("folded") == () and label(()) == "folded"
    assert sections("off") is None and label(None) == "off"
    assert sections(" Counters, Speed of light ") == ("Counters", "Speed of light")
    assert label(("Counters", "Speed of light")) == "Counters, Speed of light"


def test_an_unknown_section_is_a_usage_error(capsys):
    with pytest.raises(ValueError, match="no section 'Nope'"):
        sections("Counters,Nope")
    with pytest.raises(SystemExit) as exit_:
        main(["--panel", "Counters,Nope"])
    assert exit_.value.code == 2 and "no section 'Nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--panel", ","])
    assert "or a comma list of section titles" in capsys.readouterr().err
