"""Saved models prove themselves (issue 36): every component that saves state, and the
``nystroem fit`` model, seal their values with content hashes and check every array at
load; a missing or damaged file, or a crafted one, is a ModelFileError naming the
component and the file, and a saved file never names another file to open."""

import bz2
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
import zlib

import numpy as np
import pytest
import spacy
import srsly
from address_space import refused_in_one_line, run_limited
from bombs import deflated_zero_array, deflated_zeros, npy_header, stored, zip64
from data_paths import CORPORA, ROOT, require_extra
from kelp_parses import doc_from_grct, questions
from relation_samples import KERNEL, PATH_SVM, model_config, pair_examples, parsed_in
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import fix_random_seed, load_model_from_config

from spacy_convkernels.approx.nystroem import Nystroem
from spacy_convkernels.cli import main
from spacy_convkernels.cli.nystroem import load as load_nystroem
from spacy_convkernels.cli.nystroem import save as save_nystroem
from spacy_convkernels.cli.pipelines import EXTRA_NAMES, load_pipeline
from spacy_convkernels.components.sealed_pipe import MODEL_HASH
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import ModelFileError, NotInitializedError, VectorsError
from spacy_convkernels.kernels import PartialTreeKernel, SmoothedPartialTreeKernel
from spacy_convkernels.kernels.vectors import WordVectors
from spacy_convkernels.utils.saved_arrays import MAX_NPZ_EXPANSION, npz_arrays, sealed, unsealed

QC = CORPORA / "trec-qc-kelp-sample"
SAMPLE = QC / "TREC_10.coarse.first60.klp.gz"
WORDS = QC / "wordspace_md300.first60.txt.gz"
PTK = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4}
TEXTCAT_SVM = {
    "@architectures": "spacy_convkernels.KernelSVMFeatures.v1",
    "representation": "grct",
    "kernel": PTK,
    "text_weight": 0.5,
    "n_folds": 2,
}
KLSH = {"n_references": 4, "n_bits": 8, "subset_size": 2}
# the language of the pipelines saved here: spaCy's multi-language tokenizer is made in a
# quarter of the English one's time, and no test here tokenizes a text (each spacy.load
# of a saved pipeline made and filled an English tokenizer twice, 0.25 s of 0.4 s)
LANG = "xx"
TEXTCAT_NYSTROEM = {
    "@architectures": "spacy_convkernels.KernelNystroemFeatures.v1",
    "representation": "grct",
    "kernel": PTK,
    "n_components": 6,
}


def qc_docs(vocab) -> list[Doc]:
    return [doc_from_grct(vocab, example.trees["grct"]) for example in read_klp(SAMPLE)]


def sentence_component(factory: str, config: dict) -> tuple:
    nlp = spacy.blank(LANG)
    component = nlp.add_pipe(factory, config=config)
    docs = qc_docs(nlp.vocab)
    component.initialize(lambda: [Example(d, d) for d in docs], nlp=nlp)
    return nlp, docs[:8]


def textcat(kernel_features: dict, factory: str = "kernel_textcat") -> tuple:
    fix_random_seed(0)
    nlp = spacy.blank(LANG)
    model = {
        "@architectures": "spacy_convkernels.KernelTextCat.v1",
        "kernel_features": kernel_features,
        "text_features": None,
        "hidden_width": 8,
        "exclusive_classes": factory == "kernel_textcat",
    }
    nlp.add_pipe(factory, name="textcat", config={"model": model})
    examples = questions(nlp.vocab)
    nlp.initialize(lambda: examples)
    return nlp, [eg.predicted for eg in examples[:8]]


def relations(kernel_features: dict) -> tuple:
    fix_random_seed(0)
    nlp = spacy.blank(LANG)
    config = model_config("EntityPairCandidates", kernel_features=kernel_features)
    nlp.add_pipe("kernel_relations", config={"model": config})
    examples = pair_examples(nlp)
    nlp.initialize(lambda: examples)
    return nlp, [parsed_in(nlp)]


# name -> (the pipeline's component, its state file, a function making (nlp, docs to predict))
COMPONENTS = {
    "kernel_vectors": (
        "kernel_vectors",
        "model.msgpack",
        lambda: sentence_component("kernel_vectors", {"n_components": 5}),
    ),
    "klsh_random_knn": (
        "kernel_klsh_codes",
        "model.msgpack",
        lambda: sentence_component("kernel_klsh_codes", {"n_references": 6, "n_bits": 16, "subset_size": 2}),
    ),
    "klsh_kulis_grauman": (
        "kernel_klsh_codes",
        "model.msgpack",
        lambda: sentence_component(
            "kernel_klsh_codes",
            {"n_references": 6, "n_bits": 16, "subset_size": 2, "hash_function": "kulis_grauman"},
        ),
    ),
    "textcat_svm": ("textcat", "model", lambda: textcat(TEXTCAT_SVM)),
    "textcat_nystroem": ("textcat", "model", lambda: textcat(TEXTCAT_NYSTROEM)),
    "textcat_multilabel_svm": ("textcat", "model", lambda: textcat(TEXTCAT_SVM, "kernel_textcat_multilabel")),
    "relations_svm": ("kernel_relations", "model", lambda: relations(PATH_SVM)),
    "relations_nystroem": ("kernel_relations", "model", lambda: relations(KERNEL)),
    "relations_klsh": (
        "kernel_relations",
        "model",
        lambda: relations(dict(KERNEL, method="klsh", n_references=4, subset_size=2)),
    ),
}


def predictions(nlp, docs) -> list:
    """What the pipeline writes on copies of ``docs``: vectors, codes, categories, relation scores."""
    out = []
    for doc in nlp.pipe([d.copy() for d in docs]):
        if doc.has_extension("kernel_vector") and doc._.kernel_vector is not None:
            out.append(doc._.kernel_vector.tolist())
        if doc.has_extension("kernel_klsh_code") and doc._.kernel_klsh_code is not None:
            out.append([code.tolist() for code in doc._.kernel_klsh_code])
        out.append(sorted(doc.cats.items()))
        if doc.has_extension("kernel_rel"):
            out.append(sorted((k, sorted(v.items())) for k, v in doc._.kernel_rel.items()))
    return out


@pytest.fixture(scope="module")
def saved_pipelines() -> dict:
    """The pipelines of ``saved``, each made and saved once for the module, whatever the
    order of the tests (a test only reads its folder, or damages a copy: damaged_copy)."""
    return {}


@pytest.fixture(params=list(COMPONENTS))
def saved(request, saved_pipelines, tmp_path_factory):
    """(case name, component name, its state file's name, the saved pipeline's folder, the
    documents, their predictions before saving)."""
    if request.param not in saved_pipelines:
        component, state_file, make = COMPONENTS[request.param]
        nlp, docs = make()
        folder = tmp_path_factory.mktemp(request.param) / "pipeline"
        nlp.to_disk(folder)
        saved_pipelines[request.param] = request.param, component, state_file, folder, docs, predictions(nlp, docs)
    return saved_pipelines[request.param]


def diagonal(values) -> list:
    """Parameters ``saved, value`` (``saved`` indirect) for every component with every value:
    the fast lane takes the diagonal (the i-th component with the (i mod n)-th of the n
    values), so that it meets each component and each value at least once; the other pairs
    are marked slow."""
    values = list(values)
    return [
        pytest.param(case, value, id=f"{case}-{value}", marks=() if j == i % len(values) else pytest.mark.slow)
        for i, case in enumerate(COMPONENTS)
        for j, value in enumerate(values)
    ]


def a_third(offset: int) -> list:
    """Parameters ``saved`` (indirect) for every component: the fast lane takes one of each
    kind (sentence states, text classifiers, relation models; ``offset`` chooses which), the
    others are marked slow."""
    return [pytest.param(case, marks=() if i % 3 == offset else pytest.mark.slow) for i, case in enumerate(COMPONENTS)]


def damaged_copy(saved, tmp_path):
    _, component, state_file, folder, _, _ = saved
    copy = tmp_path / "pipeline"
    shutil.copytree(folder, copy)
    return copy, copy / component / state_file


def test_a_good_save_loads_and_predicts_identically(saved):
    _, _, _, folder, docs, expected = saved
    nlp = spacy.load(folder)
    assert predictions(nlp, docs) == expected
    again = load_model_from_config(nlp.config, auto_fill=False).from_bytes(nlp.to_bytes())
    assert predictions(again, docs) == expected


def flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


@pytest.mark.parametrize(
    "saved, damage", diagonal(["truncated", "random", "flipped", "empty", "missing", "directory"]), indirect=["saved"]
)
def test_a_damaged_state_file_names_component_and_file(saved, tmp_path, damage):
    copy, state = damaged_copy(saved, tmp_path)
    data = state.read_bytes()
    if damage == "missing":
        state.unlink()
    elif damage == "directory":
        state.unlink()
        state.mkdir()
    else:
        state.write_bytes(
            {
                "truncated": lambda: data[: len(data) // 2],
                "random": lambda: np.random.default_rng(0).bytes(len(data)),
                "flipped": lambda: flip(data, len(data) * 2 // 3),
                "empty": lambda: b"",
            }[damage]()
        )
    with pytest.raises(ModelFileError, match=f"^{saved[1]}: {state} (is damaged|is missing|cannot be read)"):
        spacy.load(copy)


@pytest.mark.parametrize("saved, part", diagonal(["cfg", "truncated cfg", "flipped cfg"]), indirect=["saved"])
def test_the_settings_of_a_trainable_component_are_sealed_too(saved, tmp_path, part):
    if saved[2] != "model":
        pytest.skip("a component without a cfg")
    copy, _ = damaged_copy(saved, tmp_path)
    cfg = copy / saved[1] / "cfg"
    data = cfg.read_bytes()
    if part == "cfg":
        cfg.unlink()
    else:
        cfg.write_bytes(data[: len(data) // 2] if part == "truncated cfg" else data.replace(b'"labels"', b'"lebals"'))
    with pytest.raises(ModelFileError, match=f"^{saved[1]}: {cfg} is (damaged|missing)"):
        spacy.load(copy)


# --- crafted states: valid msgpack and valid content hashes, values out of their range ---


def sentence_state(path):
    return unsealed(srsly.msgpack_loads(path.read_bytes()))


def encoder_state(model_path):
    """The model's msgpack and the unsealed state of its (one) kernel encoder."""
    model = srsly.msgpack_loads(model_path.read_bytes())
    (attrs,) = [attrs for attrs in model["attrs"] if "encoder" in attrs]
    return model, attrs, unsealed(srsly.msgpack_loads(attrs["encoder"]))


def write_state(state_path, state: dict) -> None:
    """Write ``state`` sealed, as a file the package wrote would be (for a thinc model, in
    its encoder's place, with the cfg's hash of the model updated)."""
    if state_path.name == "model.msgpack":
        state_path.write_bytes(srsly.msgpack_dumps(sealed(state)))
        return
    model, attrs, _ = encoder_state(state_path)
    attrs["encoder"] = srsly.msgpack_dumps(sealed(state))
    data = srsly.msgpack_dumps(model)
    state_path.write_bytes(data)
    cfg_path = state_path.parent / "cfg"
    cfg = unsealed(json.loads(cfg_path.read_text()))
    cfg[MODEL_HASH] = hashlib.sha256(data).hexdigest()
    cfg_path.write_text(json.dumps(sealed(cfg)))


def read_state(state_path) -> dict:
    return sentence_state(state_path) if state_path.name == "model.msgpack" else encoder_state(state_path)[2]


def main_array(state: dict) -> str:
    """The name of the state's real-valued array."""
    names = ("normalization", "hyperplanes", "hyperplanes_", "dual_coef", "subsets", "subsets_")
    return next(name for name in names if name in state)


VALUES = {
    "nan": lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, np.nan, a),
    "inf": lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, np.inf, a),
    "1e300": lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, 1e300, a),
    "integer": lambda a: np.ones(a.shape, dtype=np.int64),
    "complex": lambda a: a.astype(np.complex128),
    "float list": lambda a: a.tolist(),
    "wrong shape": lambda a: a[:-1],
}


# the same cases for an array of indices (KLSH subsets): not integers, outside [0, n_references)
INDEX_VALUES = {
    "nan": lambda a: VALUES["nan"](a.astype(float)),
    "inf": lambda a: VALUES["inf"](a.astype(float)),
    "1e300": lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, 10**6, a),
    "integer": lambda a: np.where(np.arange(a.size).reshape(a.shape) == 0, -1, a),
    "complex": lambda a: a.astype(np.complex128),
    "float list": lambda a: a.tolist(),
    "wrong shape": lambda a: a[:-1],
}


@pytest.mark.parametrize("saved, value", diagonal(VALUES), indirect=["saved"])
def test_a_crafted_array_out_of_its_range_is_refused_at_load(saved, tmp_path, value):
    copy, state_path = damaged_copy(saved, tmp_path)
    state = read_state(state_path)
    name = main_array(state)
    change = (INDEX_VALUES if name.startswith("subsets") else VALUES)[value]
    write_state(state_path, dict(state, **{name: change(state[name])}))
    with pytest.raises(ModelFileError, match=f"^{saved[1]}: {state_path} is damaged: .*{name.rstrip('_')}"):
        spacy.load(copy)


def test_an_object_array_is_refused_at_load(saved, tmp_path):
    copy, state_path = damaged_copy(saved, tmp_path)
    state = read_state(state_path)
    objects = {"nd": True, "type": "|O", "kind": b"", "shape": [2], "data": b"\0" * 16}  # msgpack-numpy's form
    data = srsly.msgpack_dumps(dict(state, **{main_array(state): objects}))
    if state_path.name == "model.msgpack":
        state_path.write_bytes(data)
    else:
        model, attrs, _ = encoder_state(state_path)
        attrs["encoder"] = data
        state_path.write_bytes(srsly.msgpack_dumps(model))
    with pytest.raises(ModelFileError, match=f"^{saved[1]}: {state_path} is damaged"):
        spacy.load(copy)


def test_a_flipped_byte_in_an_array_or_swapped_landmarks_fail_the_content_hash(saved, tmp_path):
    copy, state_path = damaged_copy(saved, tmp_path)
    state = read_state(state_path)
    name = main_array(state)
    flipped = state[name].copy()
    flipped.reshape(-1).view(np.uint8)[flipped.nbytes // 2] ^= 0x10
    structures = next(key for key in ("landmarks", "references", "support_vectors") if key in state)
    swapped = state[structures][::-1]
    original = state_path.read_bytes()
    for changed in ({name: flipped}, {structures: swapped}):
        state_path.write_bytes(original)
        if state_path.name == "model.msgpack":  # the hashes kept as they were
            state_path.write_bytes(srsly.msgpack_dumps({**sealed(state), **changed}))
            expected = f"{next(iter(changed))} does not match its content hash"
        else:  # the model's bytes change: the cfg's hash of them fails first
            model, attrs, _ = encoder_state(state_path)
            attrs["encoder"] = srsly.msgpack_dumps({**sealed(state), **changed})
            state_path.write_bytes(srsly.msgpack_dumps(model))
            expected = "does not match the content hash in its cfg"
        with pytest.raises(ModelFileError, match=f"^{saved[1]}: {state_path} is damaged: {expected}"):
            spacy.load(copy)


def test_a_state_without_content_hashes_is_refused(saved, tmp_path):
    if saved[2] != "model.msgpack":
        pytest.skip("the thinc model's hash is in the cfg (test_the_settings_of_a_trainable_component_are_sealed_too)")
    copy, state_path = damaged_copy(saved, tmp_path)
    state_path.write_bytes(srsly.msgpack_dumps(sentence_state(state_path)))
    with pytest.raises(ModelFileError, match="no content hashes"):
        spacy.load(copy)


def test_a_kernel_whose_vectors_name_a_file_is_not_loaded(tmp_path):
    nlp, _ = sentence_component("kernel_vectors", {"n_components": 3})
    nlp.to_disk(tmp_path / "pipeline")
    config = (tmp_path / "pipeline" / "config.cfg").read_text()
    kernel = '@misc = "spacy_convkernels.PartialTreeKernel.v1"'
    sptk = f'@misc = "spacy_convkernels.SmoothedPartialTreeKernel.v1"\nvectors = "{WORDS}"'
    (tmp_path / "pipeline" / "config.cfg").write_text(config.replace(kernel, sptk))
    with pytest.raises(ModelFileError, match="kernel_vectors: its kernel's vectors name a file") as raised:
        spacy.load(tmp_path / "pipeline")
    assert str(WORDS) not in str(raised.value)


def test_a_kernel_whose_vectors_are_a_reader_is_refused_and_the_commands_read_nothing(tmp_path, monkeypatch, capsys):
    from spacy.util import load_config

    from spacy_convkernels.corpora import lexicon
    from spacy_convkernels.errors import InvalidParameterError

    nlp, docs = sentence_component("kernel_vectors", {"n_components": 3})
    nlp.to_disk(tmp_path / "pipeline")
    config = load_config(tmp_path / "pipeline" / "config.cfg", interpolate=False)
    kernel = config["components"]["kernel_vectors"]["kernel"]
    kernel["@misc"] = "spacy_convkernels.SmoothedPartialTreeKernel.v1"
    kernel["vectors"] = {"@readers": "spacy_convkernels.LexiconPatterns.v1", "path": str(tmp_path / "lexicon")}
    kernel["vectors"]["group"] = "proteins"
    config.to_disk(tmp_path / "pipeline" / "config.cfg")
    read = []
    monkeypatch.setattr(lexicon, "read_lexicon", lambda path: read.append(path) or {"proteins": [], "triggers": []})
    DocBin(docs=docs).to_disk(tmp_path / "parsed.spacy")
    # the commands: refused before spaCy reads the config, the reader never called
    assert main(["trees", str(tmp_path / "parsed.spacy"), "--model", str(tmp_path / "pipeline")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gives a kernel's vectors as a registered function" in err, err
    assert "[components.kernel_vectors.kernel.vectors] @readers = 'spacy_convkernels.LexiconPatterns.v1'" in err
    assert str(tmp_path / "lexicon") not in err and read == []
    with pytest.raises(ModelFileError, match="nothing was read"):
        load_pipeline(tmp_path / "pipeline")
    assert read == []
    # spacy.load: spaCy runs the reader before the kernel is made (the innermost blocks of a
    # config first; no hook comes before), then the kernel refuses its value, not "damaged"
    refused = 'SmoothedPartialTreeKernel.v1: vectors must be "vocab", a path or null'
    with pytest.raises(InvalidParameterError, match=refused):
        spacy.load(tmp_path / "pipeline")
    assert read == [str(tmp_path / "lexicon")]


def test_an_uninitialized_relation_component_says_so():
    nlp = spacy.blank("en")
    extractor = nlp.add_pipe("kernel_relations", config={"model": model_config("EntityPairCandidates")})
    with pytest.raises(NotInitializedError, match="kernel_relations: not initialized"):
        extractor(parsed_in(nlp))


# --- word vectors ---


@pytest.mark.parametrize(
    "vectors",
    [
        np.array([[{"a": 1}, 2.0]], dtype=object),
        np.array([["x", "y"]], dtype=object),
        np.array([[1 + 2j, 2.0]]),
        [[1.0, 2.0], [3.0]],
        np.array([[True, False]]),
    ],
    ids=["object", "strings", "complex", "ragged", "bool"],
)
def test_word_vectors_must_be_real_numbers(vectors):
    with pytest.raises(VectorsError, match="word vectors must be"):
        WordVectors.from_arrays(["a"] * len(vectors), vectors)


@pytest.mark.parametrize("rows", [{"dog::n": 5}, {"dog::n": -3}, {"dog::n": 1.5}, {"dog::n": True}])
def test_word_vectors_rows_must_index_the_matrix(rows):
    with pytest.raises(VectorsError, match="row"):
        WordVectors(rows, np.eye(2))
    with pytest.raises(VectorsError, match="2-d array of real"):
        WordVectors({"dog::n": 0}, np.eye(2, dtype=np.complex128))


# --- nystroem fit / transform ---


@pytest.fixture(scope="module", params=["ptk", "sptk"])
def nystroem_model(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"nystroem_{request.param}")
    command = ["nystroem", "fit", str(SAMPLE), str(folder / "m.npz"), "--n-components", "4", "--quiet"]
    command += ["--kernel", request.param] + (["--vectors", str(WORDS)] if request.param == "sptk" else [])
    assert main(command) == 0
    assert main(["nystroem", "transform", str(folder / "m.npz"), str(SAMPLE), str(folder / "v.npy"), "--quiet"]) == 0
    return folder / "m.npz", np.load(folder / "v.npy")


def arrays_of(path) -> tuple[dict, dict]:
    with np.load(path) as stored:
        arrays = dict(stored)
    return json.loads(str(arrays.pop("settings"))), arrays


def save_npz(path, settings: dict, arrays: dict, *, reseal: bool) -> None:
    if reseal:
        values = {name: value for name, value in settings.items() if name != "hashes"}
        settings = dict(values, hashes=sealed({**values, **arrays})["hashes"])
    np.savez(path, settings=np.array(json.dumps(settings)), **arrays)


def test_a_nystroem_model_carries_its_vectors(nystroem_model, tmp_path, capsys):
    path, expected = nystroem_model
    moved = tmp_path / "moved.npz"
    shutil.copy(path, moved)
    settings, arrays = arrays_of(moved)
    assert "vectors" not in settings["parameters"] and ("vectors" in arrays) == (settings["kernel"] == "sptk")
    out = tmp_path / "v.npy"
    assert main(["nystroem", "transform", str(moved), str(SAMPLE), str(out), "--quiet"]) == 0
    np.testing.assert_array_equal(np.load(out), expected)  # on a mismatch: which entries, by how much
    if settings["kernel"] == "sptk":
        kernel = load_nystroem(moved)[0].kernel
        assert isinstance(kernel, SmoothedPartialTreeKernel) and isinstance(kernel.vectors, WordVectors)


SAME_BITS_TWICE = """
import sys
from spacy_convkernels.cli import main
model, sample, folder = sys.argv[1:]
for name in ("first.npy", "second.npy"):
    assert main(["nystroem", "transform", model, sample, f"{folder}/{name}", "--quiet"]) == 0
"""


@pytest.mark.slow
@pytest.mark.parametrize("nystroem_model", ["sptk"], indirect=True)
def test_an_sptk_model_gives_the_same_bits_twice_in_a_process(nystroem_model, tmp_path):
    """The second transform in a new process reads label ids that the first one's trees
    interned, freed and the second's took back in another order: the index of the
    landmarks orders a bucket's labels by their first appearance, not by their ids, so
    the sums run in the same order (they did not: 31 of these 240 entries differed in
    the last bit, the flaky saved-model test of 2026-11-30)."""
    path, _ = nystroem_model
    subprocess.run([sys.executable, "-c", SAME_BITS_TWICE, str(path), str(SAMPLE), str(tmp_path)], check=True)
    np.testing.assert_array_equal(np.load(tmp_path / "first.npy"), np.load(tmp_path / "second.npy"))


NPZ_DAMAGE = {
    "flipped normalization": lambda s, a: (s, dict(a, normalization=_flip_array(a["normalization"])), False),
    "swapped landmarks": lambda s, a: (s, dict(a, landmarks=a["landmarks"][::-1]), False),
    "changed lam": lambda s, a: ({**s, "parameters": {"lam": 0.9}}, a, False),
    "changed representation": lambda s, a: ({**s, "representation": "lct"}, a, False),
    "nan": lambda s, a: (s, dict(a, normalization=VALUES["nan"](a["normalization"])), True),
    "inf": lambda s, a: (s, dict(a, normalization=VALUES["inf"](a["normalization"])), True),
    "1e300": lambda s, a: (s, dict(a, normalization=VALUES["1e300"](a["normalization"])), True),
    "integer": lambda s, a: (s, dict(a, normalization=VALUES["integer"](a["normalization"])), True),
    "complex": lambda s, a: (s, dict(a, normalization=VALUES["complex"](a["normalization"])), True),
    "vectors path": lambda s, a: ({**s, "parameters": {"vectors": "SECRET_PATH"}}, a, True),
    "path elsewhere": lambda s, a: ({**s, "vectors": "SECRET_PATH"}, a, True),
    "string lam": lambda s, a: ({**s, "parameters": {"lam": "SECRET_PATH"}}, a, True),
    "no hashes": lambda s, a: ({k: v for k, v in s.items() if k != "hashes"}, a, False),
    "old format": lambda s, a: ({**s, "format": "spacy_convkernels.nystroem.v1"}, a, True),
}


def _flip_array(array):
    flipped = array.copy()
    flipped.reshape(-1).view(np.uint8)[5] ^= 0x01
    return flipped


@pytest.mark.parametrize("damage", list(NPZ_DAMAGE))
def test_a_damaged_or_crafted_nystroem_model_is_one_line_naming_it(nystroem_model, tmp_path, capsys, damage):
    path, _ = nystroem_model
    settings, arrays = arrays_of(path)
    settings, arrays, reseal = NPZ_DAMAGE[damage](settings, arrays)
    crafted = tmp_path / "crafted.npz"
    save_npz(crafted, settings, arrays, reseal=reseal)
    secret = tmp_path / "SECRET_PATH"
    secret.write_text("the first line of a private file\n")
    out = tmp_path / "v.npy"
    capsys.readouterr()
    assert main(["nystroem", "transform", str(crafted), str(SAMPLE), str(out), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"spacy-convkernels nystroem: error: {crafted} is damaged: ") and "\n" not in err, err
    assert "private file" not in err and "SECRET" not in err and not out.exists()
    with pytest.raises(ModelFileError, match=str(crafted)):
        load_nystroem(crafted)


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04" + b"\0" * 30, None], ids=["empty", "broken zip", "dev null"])
def test_a_nystroem_model_that_is_not_an_archive_is_one_line(tmp_path, capsys, content):
    path = tmp_path / "m.npz"
    if content is None:
        path = "/dev/null"
    else:
        path.write_bytes(content)
    assert main(["nystroem", "transform", str(path), str(SAMPLE), str(tmp_path / "v.npy"), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert f"{path} is damaged: not a model written by nystroem fit" in err and "\n" not in err


# 300 runs of nystroem transform for each model (seconds each: both are in the slow lane)
@pytest.mark.slow
@pytest.mark.parametrize("nystroem_model", ["ptk", "sptk"], indirect=True)
def test_flipped_bytes_across_a_nystroem_model_are_one_line(nystroem_model, tmp_path, capsys):
    """A byte flipped in an array's data fails the zip's CRC-32 (``BadZipFile``, found by
    tools/fuzz.py's models target), in a header numpy's or zipfile's errors: each is one
    line naming the file, or the very same vectors."""
    path, vectors = nystroem_model
    data = path.read_bytes()
    crafted, out = tmp_path / "flipped.npz", tmp_path / "v.npy"
    for at in range(0, len(data), max(1, len(data) // 300)):
        crafted.write_bytes(data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :])
        capsys.readouterr()
        if main(["nystroem", "transform", str(crafted), str(SAMPLE), str(out), "--quiet"]) == 0:
            assert np.array_equal(np.load(out), vectors), at
            continue
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"spacy-convkernels nystroem: error: {crafted}") and "\n" not in err, (at, err)


def test_an_object_array_in_a_nystroem_model_is_refused_without_unpickling(nystroem_model, tmp_path):
    path, _ = nystroem_model
    settings, arrays = arrays_of(path)
    crafted = tmp_path / "objects.npz"
    np.savez(crafted, settings=np.array(json.dumps(settings)), **dict(arrays, normalization=np.array([{}], object)))
    with pytest.raises(ModelFileError, match=f"{crafted} is damaged") as raised:
        load_nystroem(crafted)
    assert "allow_pickle" not in str(raised.value)


def bomb_of(path, normalization) -> bytes:
    """The model at ``path`` (a zip64 archive now) with ``normalization`` as its last member."""
    with zipfile.ZipFile(path) as archive:
        kept = [stored(name, archive.read(name)) for name in archive.namelist() if name != "normalization.npy"]
    return zip64([*kept, normalization])


BOMB_SCRIPT = """
import contextlib, io, json, sys, time
import numpy as np
from spacy_convkernels.cli import main

model, sample, out = sys.argv[1:]
limit_address_space(500)
start, err = time.perf_counter(), io.StringIO()
with contextlib.redirect_stderr(err):
    status = main(["nystroem", "transform", model, sample, "-o", out, "--quiet"])
print(json.dumps([status, err.getvalue(), time.perf_counter() - start]))
"""


@pytest.mark.slow  # a new process; the bomb's CRC-32 runs over its 3.2 GB of zeros
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and an address-space limit")
@pytest.mark.parametrize("nystroem_model", ["ptk"], indirect=True)
@pytest.mark.parametrize("bomb", ["20,000 x 20,000 zeros", "a header that lies"])
def test_a_compressed_bomb_in_a_nystroem_model_is_refused_in_500_megabytes(nystroem_model, tmp_path, bomb):
    """Issue 62: a 3.1 MB model whose normalization is 20,000 x 20,000 deflated zeros took
    3.26 GB and 16 s before its content hash refused it (a MemoryError under 2 GB). A
    member whose zip header declares its true bytes, followed in its deflate stream by 3
    GB of zeros, is read up to what it declares: the model, unchanged."""
    path, vectors = nystroem_model
    crafted, out = tmp_path / "bomb.npz", tmp_path / "v.npy"
    if bomb == "a header that lies":
        with zipfile.ZipFile(path) as archive:
            true = archive.read("normalization.npy")
        member = ("normalization.npy", zipfile.ZIP_DEFLATED, deflated_zeros(true, 3 << 30), zlib.crc32(true), len(true))
    else:
        member = deflated_zero_array("normalization.npy", (20_000, 20_000))
    crafted.write_bytes(bomb_of(path, member))
    assert crafted.stat().st_size < 4e6
    if bomb == "a header that lies":
        done = run_limited(BOMB_SCRIPT, crafted, SAMPLE, out, timeout=120)
        status, err, _ = json.loads(done.stdout)
        assert status == 0 and np.array_equal(np.load(out), vectors), err
        return
    refused_in_one_line(
        BOMB_SCRIPT,
        crafted,
        SAMPLE,
        out,
        output=out,
        message=f"spacy-convkernels nystroem: error: {crafted} is damaged: the compressed members up to "
        "normalization.npy expand to 3,200,000,128 bytes, more than the 33,554,432 of saved_arrays.MAX_NPZ_EXPANSION",
    )


def _npz(path, *members) -> None:
    path.write_bytes(zip64(list(members)))


@pytest.mark.parametrize(
    "members, refusal",
    [
        ([(MAX_NPZ_EXPANSION - 128, "a")], None),
        ([(MAX_NPZ_EXPANSION - 127, "a")], "the compressed members up to a.npy expand to 33,554,433 bytes"),
        ([(MAX_NPZ_EXPANSION // 2, "a"), (MAX_NPZ_EXPANSION // 2, "b")], "members up to b.npy expand to 33,554,688"),
    ],
    ids=["at the limit", "one byte more", "two members"],
)
def test_compressed_members_may_expand_to_the_limit_and_no_more(tmp_path, members, refusal):
    path = tmp_path / "m.npz"
    _npz(path, *(deflated_zero_array(f"{name}.npy", (size,), "|u1") for size, name in members))
    with zipfile.ZipFile(path) as archive:
        if refusal is None:
            assert npz_arrays(archive)["a"].shape == (MAX_NPZ_EXPANSION - 128,)
            return
        with pytest.raises(ModelFileError, match=refusal.replace(".", r"\.")):
            npz_arrays(archive)


ZIP_DAMAGE = {
    "bzip2": (lambda a: ("a.npy", zipfile.ZIP_BZIP2, bz2.compress(a), zlib.crc32(a), len(a)), "zip method 12, not"),
    "lzma": (lambda a: ("a.npy", zipfile.ZIP_LZMA, b"\0" * 9, zlib.crc32(a), len(a)), "zip method 14, not"),
    "stored short": (lambda a: ("a.npy", zipfile.ZIP_STORED, a, zlib.crc32(a), len(a) + 10**12), "and stores 192"),
    "npy header": (lambda a: stored("a.npy", npy_header((10**6, 10**6)) + a[128:]), "holds 64 bytes"),
}


@pytest.mark.parametrize("damage", list(ZIP_DAMAGE))
def test_a_member_is_refused_from_its_headers_before_it_is_read(tmp_path, capsys, damage):
    """A member that bzip2 or LZMA compresses (zipfile decompresses a read's worth of
    either at once: 4 KB of bzip2 can expand to gigabytes), a stored member declaring
    more than it stores, an ``.npy`` header declaring 10**6 x 10**6 floats on 64 bytes
    (numpy asked for 7.3 TiB)."""
    make, message = ZIP_DAMAGE[damage]
    path = tmp_path / "m.npz"
    _npz(path, make(npy_header((8,)) + np.arange(8.0).tobytes()))
    with pytest.raises(ModelFileError, match=f"{path} is damaged: a.npy .*{message}"):
        load_nystroem(path)
    assert main(["nystroem", "transform", str(path), str(SAMPLE), str(tmp_path / "v.npy"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_a_model_larger_than_the_expansion_limit_loads_when_stored(tmp_path):
    """nystroem fit stores its arrays uncompressed: a model's size is its file's, which no
    limit bounds (4,000 landmarks of TREC and md300 vectors: 147 MB, loaded in 437 MB)."""
    trees = [example.trees["grct"] for example in read_klp(SAMPLE)] * 35
    normalization = np.eye(len(trees))  # 2,100 x 2,100 floats: 35 MB, over MAX_NPZ_EXPANSION
    model = Nystroem(PartialTreeKernel(), n_components=len(trees)).set_landmarks(trees, normalization)
    save_nystroem(model, tmp_path / "m.npz", kernel="ptk", parameters={}, representation="grct")
    assert (tmp_path / "m.npz").stat().st_size > MAX_NPZ_EXPANSION
    loaded, representation = load_nystroem(tmp_path / "m.npz")
    assert representation == "grct" and np.array_equal(loaded.normalization_, normalization)


def test_a_compressed_model_loads(nystroem_model, tmp_path):
    path, _ = nystroem_model
    settings, arrays = arrays_of(path)
    np.savez_compressed(tmp_path / "z.npz", settings=np.array(json.dumps(settings)), **arrays)
    model, _ = load_nystroem(tmp_path / "z.npz")
    np.testing.assert_array_equal(model.normalization_, arrays["normalization"])


# --- spaCy's own files of a pipeline the command line loads ---


@pytest.mark.parametrize(
    "target, data",
    [
        ("tokenizer", b"\x93garbage"),
        ("vocab/strings.json", b'["a", '),
        ("meta.json", b'{"lang": "en"} trailing'),
        ("meta.json", b"\xff\xfe\x00"),
    ],
    ids=["tokenizer", "strings", "meta", "meta bytes"],
)
def test_a_damaged_spacy_file_of_a_command_line_model_is_named(tmp_path, capsys, target, data):
    model = tmp_path / "model"
    spacy.blank("en").to_disk(model)
    (model / target).write_bytes(data)
    with pytest.raises(ModelFileError, match=f"cannot load the spaCy pipeline {model}: {model / target} is damaged"):
        load_pipeline(str(model))
    texts = tmp_path / "texts.txt"
    texts.write_text("A question?\n")
    assert main(["trees", str(texts), "--model", str(model), "-o", str(tmp_path / "t.tsv"), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert f"{model / target} is damaged" in err and "\n" not in err and not (tmp_path / "t.tsv").exists()


@pytest.mark.parametrize("lang", ['"', "en2"])
def test_a_config_with_an_unknown_language_is_a_model_file_error(tmp_path, lang):
    """spaCy's E048 ImportError (a damaged ``lang`` in config.cfg; tools/fuzz.py models)."""
    model = tmp_path / "model"
    spacy.blank("en").to_disk(model)
    config = (model / "config.cfg").read_text(encoding="utf-8")
    (model / "config.cfg").write_text(config.replace('lang = "en"', f'lang = "{lang}"'), encoding="utf-8")
    with pytest.raises(ModelFileError, match=f"cannot load the spaCy pipeline {model}.*E048"):
        load_pipeline(str(model))


# --- a pipeline that needs a package of an extra the environment lacks ---

WITHOUT_SPACY_TRANSFORMERS = """
import importlib.metadata as metadata
import sys

import catalogue

sys.modules["spacy_transformers"] = None  # as if not installed: no module, no entry points
catalogue.AVAILABLE_ENTRY_POINTS = metadata.EntryPoints(
    ep for dist in metadata.distributions() for ep in dist.entry_points if not ep.value.startswith("spacy_transformers")
)
from spacy_convkernels.cli import main

sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_pipeline_with_a_transformer_without_spacy_transformers_names_the_pip_install(tmp_path):
    """Instead of spaCy's E002 "Can't find factory for 'transformer'"."""
    model = tmp_path / "model"
    spacy.blank("en").to_disk(model)
    config = (model / "config.cfg").read_text(encoding="utf-8")
    config = config.replace("pipeline = []", 'pipeline = ["transformer"]')
    (model / "config.cfg").write_text(config + '\n[components.transformer]\nfactory = "transformer"\n')
    (tmp_path / "texts.txt").write_text("A question?\n", encoding="utf-8")
    command = ["trees", str(tmp_path / "texts.txt"), "--model", str(model), "-o", str(tmp_path / "t.txt")]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_SPACY_TRANSFORMERS, *command], capture_output=True, text=True, env=environment
    )
    assert done.returncode == 1 and done.stderr == (
        f"spacy-convkernels trees: error: cannot load the spaCy pipeline {model}: 'transformer' is registered by "
        'spacy-transformers, which is not installed: pip install "spacy-convkernels[transformers]"\n'
    )


def test_the_transformers_extra_takes_a_torch_range_and_registers_the_names_said():
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    torch = next(requirement for requirement in extras["transformers"] if requirement.startswith("torch"))
    assert "==" not in torch and ">=" in torch and "<" in torch, torch
    module, factories, prefix = EXTRA_NAMES["transformers"]
    require_extra(module, "transformers")
    from spacy.util import registry

    nlp = spacy.blank("en")  # loads every spacy_factories entry point
    assert all(nlp.has_factory(name) for name in factories)
    assert any(name.startswith(prefix) for name in registry.architectures.get_all())


def _unclosed_vectors_header(model):
    vectors = model / "vocab" / "vectors"
    vectors.write_bytes(vectors.read_bytes().replace(b"(", b" ", 1).replace(b")", b"(", 1))  # tokenize.TokenError


def _unbalanced_prefix_rule(model):
    rules = srsly.msgpack_loads((model / "tokenizer").read_bytes())
    rules["prefix_search"] = "(["  # re.error when the tokenizer compiles it
    (model / "tokenizer").write_bytes(srsly.msgpack_dumps(rules))


@pytest.mark.parametrize("damage", [_unclosed_vectors_header, _unbalanced_prefix_rule], ids=["npy header", "regex"])
def test_damages_that_raise_neither_value_nor_os_errors_are_one_line_too(tmp_path, damage):
    """A damaged .npy header raises tokenize.TokenError, a damaged tokenizer rule re.error (tools/fuzz.py models)."""
    model = tmp_path / "model"
    nlp = spacy.blank("en")
    nlp.vocab.set_vector("cat", np.ones(4, dtype=np.float32))
    nlp.to_disk(model)
    damage(model)
    with pytest.raises(ModelFileError, match=f"cannot load the spaCy pipeline {model}: .* is damaged"):
        load_pipeline(str(model))


@pytest.mark.slow  # every bit of two components' states; the test below samples each component's
@pytest.mark.parametrize("factory, config", [("kernel_vectors", {"n_components": 3}), ("kernel_klsh_codes", KLSH)])
def test_every_flipped_bit_of_a_saved_state_is_refused_or_changes_nothing(factory, config):
    """Each of two bits of every byte: refused, or (a byte msgpack-numpy does not read,
    such as its unused ``kind`` key, or ``=f8`` for ``<f8``) the very same state."""
    nlp, _ = sentence_component(factory, config)
    data = nlp.get_pipe(factory).to_bytes()
    component = spacy.blank("en").add_pipe(factory, config=config)
    loaded = 0
    for at in range(len(data)):
        for bit in (0x01, 0x80):
            try:
                component.from_bytes(data[:at] + bytes([data[at] ^ bit]) + data[at + 1 :])
            except ModelFileError as error:
                assert str(error).startswith(f"{factory}: its bytes is damaged"), error
            else:
                loaded += 1
                assert component.to_bytes() == data, (at, bit)
    assert loaded < len(data) // 50


@pytest.mark.slow
@pytest.mark.parametrize("saved", a_third(1), indirect=True)
def test_flipped_bits_across_a_components_bytes_are_refused_or_change_nothing(saved):
    """Three hundred bits flipped across ``to_bytes`` of each component (its weights too),
    but for spaCy's vocab in it (not the package's, and left out of a pipeline's components)."""
    _, component, _, folder, _, _ = saved
    loaded = spacy.load(folder).get_pipe(component)
    data = loaded.to_bytes()
    vocab = srsly.msgpack_loads(data).get("vocab", b"")
    start = data.find(vocab) if vocab else len(data)
    for at in np.linspace(0, len(data) - 1, 300).astype(int).tolist():
        if start <= at < start + len(vocab):
            continue
        try:
            loaded.from_bytes(data[:at] + bytes([data[at] ^ 0x04]) + data[at + 1 :])
        except ModelFileError as error:
            assert str(error).startswith(f"{component}: its bytes"), error
        else:
            assert loaded.to_bytes() == data, at
