"""Callbacks for frozen components at initialization.

``spacy train`` never initializes a frozen component: it disables ``[training]
frozen_components`` while ``nlp.initialize`` initializes the others, since a frozen
component is expected to come trained (sourced). ``spacy debug data`` and a plain
``nlp.initialize()`` initialize every component: a sourced tagger or parser is
reinitialized (its weights lost), a sourced attribute_ruler emptied, a sourced rule
lemmatizer's tables looked for in spacy-lookups-data. The shipped configs therefore
carry

    [initialize.before_init]
    @callbacks = "spacy_convkernels.SkipFrozen.v1"

    [initialize.after_init]
    @callbacks = "spacy_convkernels.EnableFrozen.v1"

so that every command initializes as ``spacy train`` does: the frozen components are
disabled before the others are initialized (a component that runs the pipeline before
it, such as ``kernel_relations``, still runs them) and enabled again afterwards.

``spacy_convkernels.InitializeFrozen.v1``, a ``before_init`` callback too, initializes
frozen components that are not sourced:

    [training]
    frozen_components = ["transformer"]
    annotating_components = ["transformer"]

    [initialize.before_init]
    @callbacks = "spacy_convkernels.InitializeFrozen.v1"
    names = ["transformer"]

A transformer whose weights come from a local folder (``--paths.transformer``) and that
is to stay as it is (its rows features, not trained) is initialized here, before the
other components, and linked to the listeners of the pipeline, so that the components
listening to it learn their widths.
"""

from collections.abc import Callable
from typing import Any

from spacy.language import Language
from spacy.util import registry


@registry.callbacks("spacy_convkernels.SkipFrozen.v1")
def skip_frozen() -> Callable[[Language], Language]:
    """A ``before_init`` callback that disables ``[training] frozen_components``, so that
    ``nlp.initialize`` leaves them as they are, as ``spacy train`` does (module docstring)."""

    def before_init(nlp: Language) -> Language:
        for name in _frozen(nlp):
            nlp.disable_pipe(name)
        return nlp

    return before_init


@registry.callbacks("spacy_convkernels.EnableFrozen.v1")
def enable_frozen() -> Callable[[Language], Language]:
    """The ``after_init`` callback that enables the components ``SkipFrozen.v1`` disabled."""

    def after_init(nlp: Language) -> Language:
        for name in _frozen(nlp):
            nlp.enable_pipe(name)
        return nlp

    return after_init


def _frozen(nlp: Language) -> list[str]:
    return list(nlp.config.get("training", {}).get("frozen_components", []))


@registry.callbacks("spacy_convkernels.InitializeFrozen.v1")
def initialize_frozen(names: list[str]) -> Callable[[Language], Language]:
    """A ``before_init`` callback that initializes the components ``names``, frozen in
    training without being sourced (a transformer loaded from a local folder), and links
    the listeners of the pipeline to them."""

    def before_init(nlp: Language) -> Language:
        for name in names:
            component: Any = nlp.get_pipe(name)  # a TrainablePipe, not the Callable spaCy types it as
            component.initialize(lambda: [], nlp=nlp)
            if hasattr(component, "find_listeners"):  # a transformer or tok2vec others listen to
                for _, other in nlp.components:
                    component.find_listeners(other)
        return nlp

    return before_init
