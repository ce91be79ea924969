"""The progress display: a bar redrawn in place on a terminal, plain lines in logs."""

from __future__ import annotations

import io

from opsgraph.evals.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_one_redrawn_bar() -> None:
    out = Terminal()
    bar = Progress(4, out)
    bar.advance("a", True, 1.0)
    bar.advance("b", False, 2.0)
    bar.close()
    frames = out.getvalue().split("\r")[1:]
    assert frames[0].startswith("[######                  ] 1/4 ")
    assert frames[1].startswith("[############            ] 2/4 ")
    assert frames[1].rstrip("\n").endswith(" s/case") and out.getvalue().endswith("\n")


def test_a_log_gets_a_line_per_case() -> None:
    out = io.StringIO()
    bar = Progress(2, out)
    bar.advance("members-01", True, 1.3)
    bar.advance("members-02", False, 0.5)
    bar.close()
    assert out.getvalue() == "[1/2] members-01 ok 1.3 s\n[2/2] members-02 FAILED 0.5 s\n"
