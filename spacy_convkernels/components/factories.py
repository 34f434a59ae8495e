"""The package's spaCy factories: what ``nlp.add_pipe("kernel_...")`` and a config's
``factory = "kernel_..."`` build, with their default configs and what each component
assigns and requires.

spaCy imports every installed package's factories whenever it makes a pipeline
(``Language.__init__`` loads the ``spacy_factories`` entry points, pyproject.toml), so they
live here, apart from their components: each factory imports its component (and with it
scikit-learn and the engine, about 2 s) when it is used, and a pipeline without the
package's components pays nothing for the package being installed.
"""

import importlib
from typing import TYPE_CHECKING

from spacy.language import Language
from thinc.api import Config, Model

from ..structures.dependency import REPRESENTATIONS

if TYPE_CHECKING:
    from .amr_candidates import AmrCandidates
    from .kernel_forests import KernelForests
    from .kernel_textcat import KernelMultiLabelTextCategorizer, KernelTextCategorizer
    from .kernel_trees import KernelTrees
    from .kernel_vectors import KernelVectors
    from .klsh_codes import KLSHCodes
    from .relation_extractor import RelationExtractor

#: The module of each component class the factories return, imported when a factory first
#: runs; ``factories.KernelTrees`` and the like import it for readers of the factories'
#: annotations (docs/make_config_reference.py, docs/make_api_reference.py).
COMPONENT_MODULES = {
    "AmrCandidates": "amr_candidates",
    "KernelForests": "kernel_forests",
    "KernelMultiLabelTextCategorizer": "kernel_textcat",
    "KernelTextCategorizer": "kernel_textcat",
    "KernelTrees": "kernel_trees",
    "KernelVectors": "kernel_vectors",
    "KLSHCodes": "klsh_codes",
    "RelationExtractor": "relation_extractor",
}


def __getattr__(name: str):
    """A component class the factories' annotations name (PEP 562), imported on first use."""
    if name not in COMPONENT_MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__package__}.{COMPONENT_MODULES[name]}"), name)


PARSE = ["token.dep", "token.head", "token.tag", "token.lemma"]  # what a sentence's trees are made of

#: The kernel of the components' default configs.
DEFAULT_KERNEL = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4, "terminal_factor": 1.0}

#: The model of ``nlp.add_pipe("kernel_textcat")``: the SVM decisions of the default kernel on GRCT.
DEFAULT_TEXTCAT_MODEL = {
    "@architectures": "spacy_convkernels.KernelTextCat.v1",
    "hidden_width": 64,
    "kernel_features": {
        "@architectures": "spacy_convkernels.KernelSVMFeatures.v1",
        "representation": "grct",
        "kernel": DEFAULT_KERNEL,
    },
    "text_features": None,
}
TEXTCAT_SCORE_WEIGHTS = {"cats_score": 1.0, "cats_micro_p": None, "cats_micro_r": None, "cats_micro_f": None}

#: The model of ``nlp.add_pipe("kernel_relations")``: ordered entity pairs in a sentence,
#: the SVM decisions of the path kernel on their paths and the pooled rows of a tok2vec of
#: its own (spaCy's HashEmbedCNN), no word vectors, so that it works in any pipeline.
#: Other settings are the architectures' defaults: spaCy merges a model config given to
#: ``add_pipe`` (or in a config file) into this one where the registered names agree, so
#: a setting here would be one there too. configs/relations.cfg holds the md pipeline's
#: version.
DEFAULT_RELATIONS_MODEL_CONFIG = """
[model]
@architectures = "spacy_convkernels.RelationModel.v1"

[model.candidates]
@misc = "spacy_convkernels.EntityPairCandidates.v1"

[model.kernel_features]
@architectures = "spacy_convkernels.CandidateKernelSVM.v1"

[model.kernel_features.kernel]
@misc = "spacy_convkernels.SubsequencePathKernel.v1"
vectors = null

[model.tok2vec_features]
@architectures = "spacy_convkernels.CandidateTok2Vec.v1"

[model.tok2vec_features.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 2
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true
"""
DEFAULT_RELATIONS_MODEL = Config().from_str(DEFAULT_RELATIONS_MODEL_CONFIG)["model"]


@Language.factory(
    "kernel_trees",
    default_config={"representations": list(REPRESENTATIONS), "lowercase": True, "collapse_prepositions": True},
    assigns=["span._.kernel_trees", "doc._.kernel_trees"],
    requires=PARSE,
)
def make_kernel_trees(
    nlp: Language, name: str, representations: list[str], lowercase: bool, collapse_prepositions: bool
) -> "KernelTrees":
    from .kernel_trees import KernelTrees

    return KernelTrees(name, representations, lowercase=lowercase, collapse_prepositions=collapse_prepositions)


@Language.factory(
    "kernel_forests",
    default_config={
        "k": 4,
        "beam_width": 8,
        "parser": "parser",
        "representation": "grct",
        "temperature": 1.0,
        "lowercase": True,
        "collapse_prepositions": True,
        "batch_size": 64,
    },
    assigns=["span._.kernel_forest"],
    requires=PARSE,
)
def make_kernel_forests(
    nlp: Language,
    name: str,
    k: int,
    beam_width: int,
    parser: str,
    representation: str,
    temperature: float,
    lowercase: bool,
    collapse_prepositions: bool,
    batch_size: int,
) -> "KernelForests":
    from .kernel_forests import KernelForests

    return KernelForests(
        nlp,
        name,
        k=k,
        beam_width=beam_width,
        parser=parser,
        representation=representation,
        temperature=temperature,
        lowercase=lowercase,
        collapse_prepositions=collapse_prepositions,
        batch_size=batch_size,
    )


@Language.factory(
    "kernel_vectors",
    default_config={
        "representation": "grct",
        "kernel": DEFAULT_KERNEL,
        "n_components": 500,
        "landmark_init": "uniform",
        "landmark_source": "predicted",
        "random_state": 0,
        "batch_size": 256,
        "similarity_hook": False,
    },
    assigns=["span._.kernel_vector", "doc._.kernel_vector"],
    requires=PARSE,
)
def make_kernel_vectors(
    nlp: Language,
    name: str,
    representation: str,
    kernel,
    n_components: int,
    landmark_init: str,
    landmark_source: str,
    random_state: int,
    batch_size: int,
    similarity_hook: bool,
) -> "KernelVectors":
    from .kernel_vectors import KernelVectors

    return KernelVectors(
        nlp,
        name,
        representation=representation,
        kernel=kernel,
        n_components=n_components,
        landmark_init=landmark_init,
        landmark_source=landmark_source,
        random_state=random_state,
        batch_size=batch_size,
        similarity_hook=similarity_hook,
    )


@Language.factory(
    "kernel_klsh_codes",
    default_config={
        "representation": "grct",
        "kernel": DEFAULT_KERNEL,
        "n_references": 100,
        "n_bits": 256,
        "subset_size": 20,
        "hash_function": "random_knn",
        "reference_source": "predicted",
        "random_state": 0,
        "batch_size": 256,
    },
    assigns=["span._.kernel_klsh_code", "doc._.kernel_klsh_code"],
    requires=PARSE,
)
def make_kernel_klsh_codes(
    nlp: Language,
    name: str,
    representation: str,
    kernel,
    n_references: int,
    n_bits: int,
    subset_size: int,
    hash_function: str,
    reference_source: str,
    random_state: int,
    batch_size: int,
) -> "KLSHCodes":
    from .klsh_codes import KLSHCodes

    return KLSHCodes(
        nlp,
        name,
        representation=representation,
        kernel=kernel,
        n_references=n_references,
        n_bits=n_bits,
        subset_size=subset_size,
        hash_function=hash_function,
        reference_source=reference_source,
        random_state=random_state,
        batch_size=batch_size,
    )


@Language.factory(
    "kernel_textcat",
    assigns=["doc.cats"],
    requires=PARSE,
    default_config={
        "threshold": 0.0,
        "model": DEFAULT_TEXTCAT_MODEL,
        "scorer": {"@scorers": "spacy.textcat_scorer.v2"},
    },
    default_score_weights=TEXTCAT_SCORE_WEIGHTS,
)
def make_kernel_textcat(nlp: Language, name: str, model: Model, threshold: float, scorer) -> "KernelTextCategorizer":
    from .kernel_textcat import KernelTextCategorizer

    return KernelTextCategorizer(nlp.vocab, model, name, threshold=threshold, scorer=scorer)


@Language.factory(
    "kernel_textcat_multilabel",
    assigns=["doc.cats"],
    requires=PARSE,
    default_config={
        "threshold": 0.5,
        "model": dict(DEFAULT_TEXTCAT_MODEL, exclusive_classes=False),
        "scorer": {"@scorers": "spacy.textcat_multilabel_scorer.v2"},
    },
    default_score_weights=TEXTCAT_SCORE_WEIGHTS,
)
def make_kernel_textcat_multilabel(
    nlp: Language, name: str, model: Model, threshold: float, scorer
) -> "KernelMultiLabelTextCategorizer":
    from .kernel_textcat import KernelMultiLabelTextCategorizer

    return KernelMultiLabelTextCategorizer(nlp.vocab, model, name, threshold=threshold, scorer=scorer)


@Language.factory(
    "kernel_amr_candidates",
    default_config={
        "source": "amr",
        "max_distance": 5,
        "max_candidates_per_trigger": 5000,
        "interactions": None,
        "participants": None,
        "entity_labels": None,
    },
    assigns=["doc._.kernel_interactions"],
)
def make_kernel_amr_candidates(
    nlp: Language,
    name: str,
    source: str,
    max_distance: int,
    max_candidates_per_trigger: int | None,
    interactions: list[str] | None,
    participants: list[str] | None,
    entity_labels: list[str] | None,
) -> "AmrCandidates":
    from .amr_candidates import AmrCandidates

    return AmrCandidates(
        name,
        source=source,
        max_distance=max_distance,
        max_candidates_per_trigger=max_candidates_per_trigger,
        interactions=interactions,
        participants=participants,
        entity_labels=entity_labels,
    )


@Language.factory(
    "kernel_relations",
    requires=["doc.ents"],
    assigns=["doc._.kernel_rel", "doc._.kernel_interactions"],
    default_config={
        "model": DEFAULT_RELATIONS_MODEL,
        "threshold": None,
        "threshold_choice": "one",
        "single_label": False,
    },
    default_score_weights={"rel_micro_f": 1.0, "rel_micro_p": 0.0, "rel_micro_r": 0.0},
)
def make_kernel_relations(
    nlp: Language,
    name: str,
    model: Model,
    threshold: float | dict[str, float] | None,
    threshold_choice: str,
    single_label: bool,
) -> "RelationExtractor":
    from .relation_extractor import RelationExtractor

    return RelationExtractor(
        nlp.vocab, model, name, threshold=threshold, threshold_choice=threshold_choice, single_label=single_label
    )
