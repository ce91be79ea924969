"""The embedder's int8 model: derived once per folder even by processes racing for it, the
same bytes every time, close to the package's model, and a clear error where it cannot be
written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from opsgraph.knowledge import quantized_model
from opsgraph.knowledge.embeddings import Embedder, model_path

_CHILD = ("import logging, sys; logging.basicConfig(level=logging.INFO, stream=sys.stderr); "
          "from opsgraph.knowledge.quantized_model import model_path; print(model_path())")


def test_two_processes_derive_it_once_and_get_the_machines_bytes(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    env = {**os.environ, "OPSGRAPH_MODELS": str(folder)}
    children = [subprocess.Popen([sys.executable, "-c", _CHILD], env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for _ in range(2)]
    outputs = [child.communicate(timeout=300) for child in children]
    assert [child.returncode for child in children] == [0, 0], outputs
    target = folder / quantized_model.file_name()
    assert {out.strip() for out, _ in outputs} == {str(target)}
    assert sum("deriving the int8 embedding model" in err for _, err in outputs) == 1, outputs
    # nothing half written is left beside it, and the recipe gives the same bytes anywhere
    assert sorted(p.name for p in folder.iterdir()) == [target.name, target.name + ".lock"]
    assert target.read_bytes() == model_path().read_bytes()


def test_a_folder_that_cannot_be_written_is_named_with_the_way_out(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(RuntimeError) as caught:
        quantized_model.model_path(blocker / "models")
    message = str(caught.value)
    assert str(blocker / "models") in message
    assert "OPSGRAPH_MODELS" in message
    assert "python -m opsgraph.knowledge.quantized_model" in message


def test_its_vectors_keep_close_to_the_packages_model() -> None:
    texts = ["book Jane into the 6pm class", "who's got court 2 booked today?",
             "email her the invoice", "what are the opening hours on sunday",
             "cancel my membership and refund the last payment please"]
    derived = Embedder(model_path()).embed(texts)
    source = Embedder(quantized_model.source_path()).embed(texts)
    cosines = (derived * source).sum(axis=1)
    assert cosines.min() > 0.98, cosines
    assert not np.array_equal(derived, source)  # the int8 model is the one in use


def test_the_command_derives_into_the_folder_the_embedder_reads(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPSGRAPH_MODELS", str(model_path().parent))  # derived already
    assert quantized_model.main([]) == 0
    assert capsys.readouterr().out.strip() == str(model_path())
    assert quantized_model.main(["one", "two"]) == 2
    assert "usage: python -m opsgraph.knowledge.quantized_model [DIR]" in capsys.readouterr().err
