"""Every attempt compared, in the panel's "Your kernel" section: a table with a row per save the viewer took
in (when, whether it compiled and was right, its kernel's ms, and where the sandbox reports them its share of
the stage's speed-of-light limit and its registers) and a plot of the kernel's ms by attempt.
``attempt_table`` builds the text (tested without a window); ``draw_attempts`` draws it."""

from __future__ import annotations

from imgui_bundle import imgui, implot

from viewer.panel.style import ERROR, GREY, text_table, wrapped

SHOWN = 8  # the newest attempts in the table; the plot has them all
GOOD = imgui.ImVec4(0.45, 0.85, 0.5, 1.0)


def attempt_table(attempts) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """(headings, rows), newest first. The limit and registers columns only where an attempt has them."""
    shown = attempts.items[-SHOWN:][::-1]
    limit = any(a.limit_percent is not None for a in attempts.items)
    registers = any(a.registers is not None for a in attempts.items)
    headings = (
        "#",
        "built",
        "correct",
        "ms",
        *(("% of limit",) if limit else ()),
        *(("registers",) if registers else ()),
    )
    rows = []
    for a in shown:
        row = [str(a.number), a.built, a.verdict, "-" if a.ms is None else f"{a.ms:.4f}"]
        if limit:
            row.append("-" if a.limit_percent is None else f"{a.limit_percent:.0f}%")
        if registers:
            row.append("-" if a.registers is None else str(a.registers))
        rows.append(tuple(row))
    return headings, rows


def _colour(verdict: str):
    return GOOD if verdict == "yes" else GREY if verdict == "-" else ERROR


def draw_attempts(live) -> None:
    attempts = live.attempts
    if not attempts.items:
        return
    headings, rows = attempt_table(attempts)
    older = len(attempts.items) - len(rows)
    wrapped(GREY, f"attempts this session: {attempts.count}" + (f" (the newest {len(rows)} below)" if older else ""))
    flags = imgui.TableFlags_.borders_inner_h | imgui.TableFlags_.row_bg | imgui.TableFlags_.sizing_fixed_fit
    text_table("attempts", headings, rows, flags, 2, _colour)  # the verdict coloured
    xs, ys = attempts.series()
    if xs.size and implot.begin_plot("##attempts_ms", (-1, 110), implot.Flags_.no_menus | implot.Flags_.no_box_select):
        fit = implot.AxisFlags_.auto_fit
        implot.setup_axes("attempt", "kernel ms", fit, fit)
        implot.plot_line("ms", xs, ys)
        implot.plot_scatter("##points", xs, ys)
        implot.end_plot()
