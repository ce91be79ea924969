"""Crash points: where the crash-and-resume tests kill the process on purpose.

`OPSGRAPH_CRASH_AT=<name>` makes the process SIGKILL itself when it reaches the named
point — no cleanup, no flush, as a power cut would. Unset (always, outside those tests) a
crash point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import signal

CRASH_POINTS = ("after_propose", "after_cas", "after_apply", "after_settle")
"""`after_propose`: a run recorded a proposal and has not paused yet (no checkpoint holds
it); the others are moments of a decision (`approvals.decisions`, `engine.approval_flow`)."""


def crash_point(name: str) -> None:
    """Die here if the environment asks for it."""
    if os.environ.get("OPSGRAPH_CRASH_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
