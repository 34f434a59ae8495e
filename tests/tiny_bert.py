"""A tiny randomly initialized BERT written to a folder, for the transformer pipelines'
tests: no weights are downloaded."""

import string
from pathlib import Path

WIDTH = 16  # the tiny BERT's hidden size


def write_tiny_bert(path: Path) -> Path:
    """``path`` with a one-layer BERT and its word-piece tokenizer (the transformers extra)."""
    import transformers

    path.mkdir(parents=True, exist_ok=True)
    pieces = list(string.ascii_lowercase + string.digits)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *pieces, *string.punctuation, *(f"##{p}" for p in pieces)]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt")).save_pretrained(path)
    transformers.set_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=WIDTH,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=160,
    )
    transformers.BertModel(config).save_pretrained(path)
    return path
