"""``python -m spacy_convkernels <command>``: the package's command line (see cli/)."""

from .cli import main

raise SystemExit(main())
