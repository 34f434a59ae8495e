"""How the trainable components (``kernel_textcat``, ``kernel_relations``) save and load
themselves: as spaCy's ``TrainablePipe`` does (``cfg``, ``vocab``, ``model``), with the
``cfg`` sealed by content hashes (:mod:`~spacy_convkernels.utils.saved_arrays`), among them the
SHA-256 of the model's bytes, checked before the model is read. A missing or damaged file
(truncated, random bytes, a flipped byte, a value out of its range) raises a
:class:`~spacy_convkernels.errors.ModelFileError` naming the component and the file, when
the pipeline is loaded.
"""

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

import srsly
from spacy import util

from ..errors import ModelFileError
from ..utils.saved_arrays import reading, sealed, unsealed
from .registered_kernels import bind_model_vectors, model_kernels, refuse_vector_files

MODEL_HASH = "model_sha256"


class SealedPipe:
    """Put before ``TrainablePipe`` (or its subclass) in the bases; ``check_cfg`` may
    check the loaded settings."""

    name: str
    cfg: dict
    model: Any  # a thinc Model
    vocab: Any  # a spaCy Vocab

    def check_cfg(self, cfg: dict) -> None:
        """Raise :class:`ModelFileError` when loaded settings are out of their range."""

    def load_cfg(self, cfg: dict) -> None:
        """Take the loaded (and checked) settings."""
        self.cfg.update(cfg)

    def _sealed_cfg(self, model: bytes) -> dict:
        return sealed({**self.cfg, MODEL_HASH: hashlib.sha256(model).hexdigest()})

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        model = self.model.to_bytes()
        serialize = {
            "cfg": lambda: json.dumps(self._sealed_cfg(model)),
            "vocab": lambda: self.vocab.to_bytes(exclude=exclude),
            "model": lambda: model,
        }
        return util.to_bytes(serialize, exclude)

    def to_disk(self, path, *, exclude: Iterable[str] = tuple()) -> None:
        model = self.model.to_bytes()
        serialize = {
            "cfg": lambda p: p.write_text(json.dumps(self._sealed_cfg(model), indent=2), encoding="utf-8"),
            "vocab": lambda p: self.vocab.to_disk(p, exclude=exclude),
            "model": lambda p: p.write_bytes(model),
        }
        util.to_disk(path, serialize, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()):
        with reading(f"{self.name}: its bytes"):
            saved = srsly.msgpack_loads(bytes_data)
            if not isinstance(saved, dict):
                raise ModelFileError("not a saved component")
        self._load(
            read=lambda key: saved[key],
            load_vocab=lambda: self.vocab.from_bytes(saved["vocab"], exclude=exclude),
            source=lambda key: f"its bytes ({key})",
            exclude=exclude,
        )
        return self

    def from_disk(self, path, *, exclude: Iterable[str] = tuple()):
        path = util.ensure_path(path)
        self._load(
            read=lambda key: (path / key).read_bytes(),
            load_vocab=lambda: self.vocab.from_disk(path / "vocab", exclude=exclude),
            source=lambda key: str(path / key),
            exclude=exclude,
        )
        return self

    def _load(self, *, read: Callable, load_vocab: Callable, source: Callable, exclude: Iterable[str]) -> None:
        """Read the cfg (checked against its hashes), the vocab, then the model (checked
        against the cfg's hash of it); what is in ``exclude`` is left as it is."""
        refuse_vector_files(model_kernels(self.model), self.name)
        expected = None
        if "cfg" not in exclude:
            with reading(f"{self.name}: {source('cfg')}"):
                cfg = unsealed(json.loads(read("cfg")))
                expected = cfg.pop(MODEL_HASH)
                self.check_cfg(cfg)
                self.load_cfg(cfg)
        if "vocab" not in exclude:
            with reading(f"{self.name}: {source('vocab')}"):
                load_vocab()
        if "model" not in exclude:
            with reading(f"{self.name}: {source('model')}"):
                data = read("model")
                if expected is not None and hashlib.sha256(data).hexdigest() != expected:
                    raise ModelFileError("does not match the content hash in its cfg: the file was changed or damaged")
                bind_model_vectors(self.model, self.vocab)  # saved support vectors are prepared with the vectors
                self.model.from_bytes(data)
