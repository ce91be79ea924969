"""Crash points: where the crash-and-resume tests kill the process on purpose.

`OPSGRAPH_CRASH_AT=<name>` makes the process SIGKILL itself when it reaches the named
point — no cleanup, no flush, as a power cut would. Unset (always, outside those tests) a
crash point costs one dictionary lookup. A name that is no crash point fails loudly: in
code (`CrashPoint`, checked by mypy) and in the environment (`ConfigurationError` at the
first crash point reached), so a misspelt point never silently never fires.
"""

from __future__ import annotations

import os
import signal
from typing import Literal, get_args

from opsgraph.errors import ConfigurationError

CrashPoint = Literal["after_propose", "after_cas", "after_apply", "after_settle"]
CRASH_POINTS: tuple[CrashPoint, ...] = get_args(CrashPoint)
"""`after_propose`: a run recorded a proposal and has not paused yet (no checkpoint holds
it); the others are moments of a decision (`approvals.decisions`, `engine.approval_flow`)."""


def crash_point(name: CrashPoint) -> None:
    """Die here if the environment asks for it."""
    wanted = os.environ.get("OPSGRAPH_CRASH_AT")
    if wanted is None:
        return
    if wanted not in CRASH_POINTS:
        raise ConfigurationError(f"OPSGRAPH_CRASH_AT={wanted!r} is no crash point; one of "
                                 f"{', '.join(CRASH_POINTS)}")
    if wanted == name:
        os.kill(os.getpid(), signal.SIGKILL)
