"""``spacy_convkernels.InitializeFrozen.v1``: initialize frozen components that are not sourced.

    [training]
    frozen_components = ["transformer"]
    annotating_components = ["transformer"]

    [initialize.before_init]
    @callbacks = "spacy_convkernels.InitializeFrozen.v1"
    names = ["transformer"]

``spacy train`` never initializes a frozen component: it expects one sourced from a
trained pipeline. A transformer whose weights come from a local folder
(``--paths.transformer``) and that is to stay as it is (its rows features, not trained)
is initialized here, before the other components, and linked to the listeners of the
pipeline, so that the components listening to it learn their widths.
"""

from collections.abc import Callable
from typing import Any

from spacy.language import Language
from spacy.util import registry


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
