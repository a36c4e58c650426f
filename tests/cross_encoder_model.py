"""A tiny cross-encoder the tests build and save in a folder, in the layout a Hugging Face or
sentence-transformers ``CrossEncoder`` export has (``tokenizer.json``, ``config.json``,
``onnx/model.onnx``), so the real loading code of ``core.providers.rerank.CrossEncoderReranker``
runs on it without a download.

The tokenizer is a real BERT-style WordPiece tokenizer (``tokenizers``): lower-casing, BERT
pre-tokenisation, ``[CLS] query [SEP] passage [SEP]`` with token type 0 for the query and 1 for
the passage, ``[PAD]`` padding. The ONNX graph reads ``input_ids``, ``attention_mask`` and
``token_type_ids`` ``(batch, tokens)`` int64 like an exported BERT cross-encoder and returns
``logits (batch, labels)`` float32: the cosine of the bag-of-words of the query segment and of
the passage segment (special and padding tokens left out through a zero embedding row and the
attention mask), times :data:`SCALE`, plus :data:`BIAS`. So its scores can be computed by hand
(:func:`expected_logit`), and a pair fed in the wrong order, with wrong type ids or unmasked
padding gives other numbers.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np

SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
WORDS = (
    "visiting hours maternity ward are from to parking at campus is free for the first minutes in intensive care "
    "two visitors a time what causes heart failure symptoms of treatment abcd syndrome"
).split()
SCALE, BIAS = 8.0, -4.0


def vocabulary() -> dict[str, int]:
    """Token → id: the special tokens first, then :data:`WORDS` (deduplicated, in order)."""
    tokens = list(SPECIAL) + list(dict.fromkeys(WORDS))
    return {t: i for i, t in enumerate(tokens)}


def expected_logit(query: str, passage: str) -> float:
    """``SCALE · cos(bow(query), bow(passage)) + BIAS`` over the vocabulary's words (an unknown
    word is ``[UNK]``, which the model ignores like the other special tokens)."""
    vocab = vocabulary()

    def bow(text: str) -> np.ndarray:
        counts = Counter(w for w in re.findall(r"\w+", text.lower()) if w in vocab)
        v = np.zeros(len(vocab))
        for word, n in counts.items():
            v[vocab[word]] = n
        return v

    a, b = bow(query), bow(passage)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    cos = float(a @ b / (na * nb)) if na and nb else 0.0
    return SCALE * cos + BIAS


def _tokenizer_save(path: Path) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = vocabulary()
    tokenizer = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.save(str(path))


def _graph_save(path: Path, *, labels: int) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    size = len(vocabulary())
    table = np.eye(size, dtype=np.float32)
    table[: len(SPECIAL)] = 0.0  # special tokens carry no word
    # Label 0 is the negated logit so a two-label model's softmax(label 1) = sigmoid(2 · logit).
    signs = np.array([[1.0]] if labels == 1 else [[-1.0, 1.0]], dtype=np.float32)
    inits = [
        numpy_helper.from_array(table, "embeddings"),
        numpy_helper.from_array(np.array([SCALE], dtype=np.float32), "scale"),
        numpy_helper.from_array(np.array([BIAS], dtype=np.float32), "bias"),
        numpy_helper.from_array(np.array([1.0], dtype=np.float32), "one"),
        numpy_helper.from_array(np.array([1e-9], dtype=np.float32), "eps"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "axis_last"),
        numpy_helper.from_array(signs, "signs"),
    ]
    nodes = [
        helper.make_node("Gather", ["embeddings", "input_ids"], ["emb"]),  # (B, T, V)
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["mask", "types"], ["w_b"]),  # the passage's tokens
        helper.make_node("Sub", ["one", "types"], ["not_types"]),
        helper.make_node("Mul", ["mask", "not_types"], ["w_a"]),  # the query's tokens
    ]
    for side in ("a", "b"):
        nodes += [
            helper.make_node("Unsqueeze", [f"w_{side}", "axis_last"], [f"w3_{side}"]),
            helper.make_node("Mul", ["emb", f"w3_{side}"], [f"emb_{side}"]),
            helper.make_node("ReduceSum", [f"emb_{side}", "axis1"], [f"bow_{side}"], keepdims=0),  # (B, V)
            helper.make_node("Mul", [f"bow_{side}", f"bow_{side}"], [f"sq_{side}"]),
            helper.make_node("ReduceSum", [f"sq_{side}", "axis_last"], [f"ss_{side}"], keepdims=1),
            helper.make_node("Sqrt", [f"ss_{side}"], [f"norm0_{side}"]),
            helper.make_node("Add", [f"norm0_{side}", "eps"], [f"norm_{side}"]),
            helper.make_node("Div", [f"bow_{side}", f"norm_{side}"], [f"unit_{side}"]),
        ]
    nodes += [
        helper.make_node("Mul", ["unit_a", "unit_b"], ["prod"]),
        helper.make_node("ReduceSum", ["prod", "axis_last"], ["cos"], keepdims=1),  # (B, 1)
        helper.make_node("Mul", ["cos", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["logit"]),
        helper.make_node("MatMul", ["logit", "signs"], ["logits"]),  # (B, labels)
    ]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", labels])
    graph = helper.make_graph(nodes, "tiny-cross-encoder", inputs, [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def cross_encoder_save(folder: Path, *, labels: int = 1, activation: str = "Sigmoid", positions: int = 64) -> Path:
    """Write the tiny cross-encoder to ``folder`` (created) and return it: ``tokenizer.json``,
    ``config.json`` (``labels`` output labels, ``positions`` = ``max_position_embeddings``,
    sentence-transformers' ``activation_fn`` = ``activation``) and ``onnx/model.onnx``."""
    folder.mkdir(parents=True, exist_ok=True)
    _tokenizer_save(folder / "tokenizer.json")
    config = {
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "id2label": {str(i): f"LABEL_{i}" for i in range(labels)},
        "max_position_embeddings": positions,
        "pad_token_id": 0,
        "sentence_transformers": {"activation_fn": f"torch.nn.modules.activation.{activation}", "version": "5.1.0"},
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    _graph_save(folder / "onnx" / "model.onnx", labels=labels)
    return folder
