"""The suite's progress on stderr: one redrawn bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

BAR = 24


class Progress:
    """`[#####     ] 37/150 12.3 s/case` redrawn in place on a TTY; a line per case when
    stderr is a file or a pipe (CI logs)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = 0
        self.started = time.perf_counter()
        self._lock = threading.Lock()

    def per_case(self) -> float:
        """Wall seconds per finished case so far (concurrency included)."""
        return (time.perf_counter() - self.started) / self.done if self.done else 0.0

    def advance(self, case_id: str, passed: bool, seconds: float) -> None:
        """One more case finished."""
        with self._lock:
            self.done += 1
            if self.tty:
                filled = BAR * self.done // max(self.total, 1)
                self.stream.write(f"\r[{'#' * filled}{' ' * (BAR - filled)}] "
                                  f"{self.done}/{self.total} {self.per_case():.1f} s/case")
            else:
                self.stream.write(f"[{self.done}/{self.total}] {case_id} "
                                  f"{'ok' if passed else 'FAILED'} {seconds:.1f} s\n")
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.tty and self.done:
            self.stream.write("\n")
            self.stream.flush()
