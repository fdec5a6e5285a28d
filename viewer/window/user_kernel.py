"""A user's own kernel in the window: loaded from ``view --kernel-file`` or the panel's "Load kernel…"
field, then watched. Once a frame (``watch``) the newest compile of a save is swapped in between frames
(``sim.userkernel.live.LiveStage.refresh``) and what changed is said on the message line: a reload, a
text that does not compile, a sandbox error that put the scene back on its own kernel. ``Controller.kernel``
holds one; it acts through the controller's message line and guarded ``act``."""

from __future__ import annotations

# after a GPU fault: memcheck checks each access before it is made, so it names the line instead
SANITIZE_OFFER = (
    '; memcheck can name the line of a bad access before the GPU faults: "Run one step under the '
    'sanitizer" in Your kernel'
)


class UserKernel:
    def __init__(self, ctl):
        self.ctl = ctl  # the controller: its scene, message line and act
        self.path_text = ""  # the panel's "Load kernel…" field
        self.sanitizer_tool = "memcheck"  # the panel's choice for "Run one step under the sanitizer"
        self._reported_error: str | None = None

    @property
    def live(self):
        """The scene's ``LiveStage``, None when no kernel of the user's is loaded."""
        return self.ctl.scene.knobs.user

    def load(self, path: str, stage: str | None = None) -> bool:
        """Read the kernel file at ``path`` for the scene's stage (its first when None) and run it; a bad
        path or stage is said on the message line. True when it was loaded."""
        path = str(path).strip()
        if not path:
            self.ctl.say("Load kernel: type the path of your .cu file first")
            return False
        return self.ctl.act(f"loading {path}", self._load, path, stage)

    def _load(self, path: str, stage: str | None) -> None:
        from sim.userkernel import source

        self.use(source.load(path, self.ctl.spec, stage))  # a UsageError is one line: no traceback

    def use(self, text) -> None:
        """Run ``text`` (a ``UserSource`` just read) as the scene's variant named after its file: compiled in
        the background, run once it compiles."""
        from sim.userkernel.live import LiveStage

        live = LiveStage(self.ctl.scene, text)
        self.ctl.scene.knobs.use(live)
        live.watch()
        self.path_text = str(text.path)
        self._reported_error = None
        self.ctl.say(f"{text.variant}: compiling for the {text.stage.name} stage…")

    def sanitize(self) -> bool:
        """The scene's next step through the kernel once under compute-sanitizer (``sanitizer_tool``), off the
        frame thread; what it finds shows in the panel. True when it started."""
        live = self.live
        if live is None or live.build is None:
            self.ctl.say("the sanitizer runs a kernel that compiled: load one, or fix its errors first")
            return False
        if not live.sanitize(self.sanitizer_tool):
            self.ctl.say("a sanitized step is still running: its findings show in Your kernel")
            return False
        self.ctl.say(f"{live.variant}: one step under compute-sanitizer {self.sanitizer_tool}…")
        return True

    def drop(self) -> None:
        """Unload the kernel (a scene switch, the window closing): its watcher and sandbox stop."""
        self.ctl.scene.knobs.drop()

    def watch(self) -> None:
        """Once a frame, between frames: take in a save compiled in the background and say what changed."""
        live = self.live
        if live is None:
            return
        reload = live.refresh()
        if reload is not None:
            self.ctl.say(self._reload_text(live, reload))
        if live.error and live.error != self._reported_error:
            offer = SANITIZE_OFFER if live.faulted else ""
            self.ctl.say(f"{live.variant} failed: {live.error}; the scene runs its own kernel until you save{offer}")
        self._reported_error = live.error

    def _reload_text(self, live, reload) -> str:
        name = live.variant
        if reload.problem:
            return f"{name}: {reload.problem}" + ("; the last good build runs on" if live.build is not None else "")
        errors = [d for d in reload.diagnostics if d.severity == "error"]
        if errors:
            first = str(errors[0]).splitlines()[0]
            keeps = "the last good build runs on" if live.build is not None else "the scene runs its own kernel"
            return f"{name} does not compile ({first}); {keeps}"
        warnings = len(reload.diagnostics)
        noted = f" with {warnings} warning{'s' if warnings > 1 else ''}" if warnings else ""
        return f"{name} compiled{noted}" + self._where_it_runs(live)

    def _where_it_runs(self, live) -> str:
        """After "compiled": swapped in when it does the steps now, else what it waits for (a GPU, the
        scene's GPU kernels, or being chosen)."""
        knobs = self.ctl.scene.knobs
        if knobs.user_runs():
            return ": swapped in, the state kept"
        reason = self.ctl.gpu.reason()
        if reason:
            return f"; it needs a GPU to run: {reason}"
        if not knobs.user_chosen:
            return f"; choose {live.variant} (variant list, q) to run it"
        return f"; it runs where the scene's GPU kernels run: {self.ctl.spec.gpu.kernels_run_hint}"
