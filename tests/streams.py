"""Streams for tests of what a command shows on a terminal."""

import io


class Terminal(io.StringIO):
    """A text stream that says it is a terminal: progress bars draw on it."""

    def isatty(self):
        return True
