"""What the durbin scene says about one item under the pointer: an entry i of y (recursion presets)
or a frame (lpc), and under verification its GPU, CPU-twin and scipy values side by side
(``DurbinScene.inspector``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sim.framework import finite
from sim.framework.checks import Inspector

if TYPE_CHECKING:
    from sim.durbin.scene import DurbinScene


class DurbinInspector(Inspector):
    scene: DurbinScene

    def item_of_key(self, key: int) -> int | None:
        scene = self.scene
        count = scene.lpc.frames if scene.lpc is not None else scene.r.size
        return int(key) if 0 <= int(key) < count else None

    def is_marked(self, item: int) -> bool:
        scene = self.scene
        mismatch = scene.checks.mismatch
        return bool(scene.checks.on and mismatch is not None and 0 <= item < mismatch.shape[0] and mismatch[item])

    def describe(self, item: int) -> dict[str, str]:
        scene = self.scene
        item = int(item)
        if scene.lpc is not None:
            return self._describe_frame(item)
        n = scene.r.size
        if not 0 <= item < n:
            raise IndexError(f"no entry {item} (there are {n:,})")
        h = scene.host
        k = h["y"].shape[0]
        out = {"coefficient": f"y[{item}] of {n:,}", "input": f"r[{item}] = {scene.r[item]:.10g}"}
        if item < k:
            out["value"] = f"{h['y'][item]:.12g}"
            later = "" if item == k - 1 else f"; updated by every step since (last: step {k - 1})"
            out["written"] = f"at step {item}, as alpha_{item} = {h['alphas'][item]:.10g}{later}"
            out["beta"] = f"beta_{item} = {h['betas'][item]:.6g}"
        else:
            out["value"] = f"not computed yet: step {item} writes it"
        if scene.kappas is not None and item < scene.kappas.size:
            out["kappa"] = (
                f"{scene.kappas[item]:.6g}: the AR process's reflection coefficient {item} (alpha_{item} returns it)"
            )
        owners = scene.owners()
        if owners is not None and item < k:
            if item == k - 1:
                how = f"wrote it as alpha_{item} in step {item}"
            else:
                pair = min(item, k - 2 - item)
                how = f"updated it in step {k - 1} (pair {pair}: y[{pair}] and y[{k - 2 - pair}])"
            out["CUDA"] = f"block {int(owners[item])} {how}"
        solver = scene.recursion
        out["solved by"] = f"GPU {solver.kernel} ({solver.path})" if solver.backend == "gpu" else "the CPU twin"
        return out

    def _describe_frame(self, frame: int) -> dict[str, str]:
        scene = self.scene
        mode = scene.lpc_mode
        if not 0 <= frame < mode.frames:
            raise IndexError(f"no frame {frame} (there are {mode.frames})")
        start = frame * mode.hop / mode.audio.rate
        poles = mode.poles(frame)
        largest = float(np.abs(poles).max(initial=0.0))
        pole_text = mode.no_poles_reason(frame, poles) or f"{largest:.6f}" + (" (stable)" if largest < 1 else "")
        alphas = mode.alphas[frame]
        bad = finite.text(alphas)
        alpha_text = "{:.4g} .. {:.4g}".format(*finite.span(alphas, (np.nan, np.nan))) + (f" ({bad})" if bad else "")
        out = {
            "frame": f"{frame} of {mode.frames}",
            "time": f"{start:.3f} .. {start + mode.length / mode.audio.rate:.3f} s",
            "energy R_0": f"{mode.r0[frame]:.6g}",
            "prediction gain": f"{mode.gain_db(frame):.2f} dB (order {mode.order})",
            "largest |pole|": pole_text,
            "alphas": alpha_text,
        }
        owners = scene.owners()
        if owners is not None:
            out["CUDA"] = f"block {int(owners[frame])} solved it"
        return out

    def describe_check(self, item: int) -> list[tuple[str, str, str, str]]:
        """(value, GPU, CPU, difference) rows of the last check: the twin's and scipy's values of the item
        (lpc: of the frame's coefficient that differs most)."""
        scene = self.scene
        item = int(item)
        if not self.is_marked(item):
            return []
        checked = scene.checked
        gpu = checked.get("gpu")
        if gpu is None or item >= gpu.shape[0]:
            return []
        rows = []
        for name, key, values in (
            ("y (CPU twin)", "twin", gpu),
            ("y (scipy)", "scipy", gpu),
            ("alpha (CPU twin)", "twin_alphas", checked.get("gpu_alphas")),
        ):
            reference = checked.get(key)
            if reference is None or values is None:
                continue
            g, c = values[item], reference[item]
            if g.ndim:  # lpc: a frame's coefficients, the one that differs most
                j = int(np.nanargmax(np.abs(g - c)))
                name, g, c = f"a_{j + 1} {name[2:]}", g[j], c[j]
            rows.append((name, f"{float(g):.15g}", f"{float(c):.15g}", f"{float(g) - float(c):+.3g}"))
        return rows
