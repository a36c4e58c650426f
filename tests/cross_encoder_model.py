"""A tiny cross-encoder the tests build and save in a folder, in the layout a Hugging Face or
sentence-transformers ``CrossEncoder`` export has (``tokenizer.json``, ``config.json``,
``onnx/model.onnx``), so the real loading code of ``core.providers.rerank.CrossEncoderReranker``
runs on it without a download.

Two styles, as real exports come:

- ``bert`` (ms-marco-MiniLM and other BERT cross-encoders): a WordPiece tokenizer (``tokenizers``)
  with lower-casing, BERT pre-tokenisation, ``[CLS] query [SEP] passage [SEP]`` with token type 0
  for the query and 1 for the passage, ``[PAD]`` (id 0) padding; the graph reads
  ``input_ids``, ``attention_mask`` and ``token_type_ids``.
- ``xlmr`` (multilingual XLM-R cross-encoders such as mmarco-mMiniLMv2 or bge-reranker): a
  Unigram tokenizer with Metaspace pre-tokenisation, ``<s> query </s></s> passage </s>``, all
  type ids 0, ``<pad>`` (id 1) padding; the graph reads ``input_ids`` and ``attention_mask`` only
  and finds the passage by counting ``</s>`` tokens.

The graph returns ``logits (batch, labels)`` float32: the cosine of the bag-of-words of the query
segment and of the passage segment, times :data:`SCALE`, plus :data:`BIAS`. So its scores can be
computed by hand (:func:`expected_logit`). Special tokens have a zero embedding row; the padding
token has a row of its own, so padding that the attention mask does not remove changes the
numbers, as do a passage fed as the first segment or lost type ids.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np

SPECIAL = {"bert": ("[PAD]", "[UNK]", "[CLS]", "[SEP]"), "xlmr": ("<s>", "<pad>", "</s>", "<unk>")}
PAD = {"bert": "[PAD]", "xlmr": "<pad>"}
WORDS = (
    "visiting hours maternity ward are from to parking at campus is free for the first minutes in intensive care "
    "two visitors a time what causes heart failure symptoms of treatment abcd syndrome"
).split()
SCALE, BIAS = 8.0, -4.0


def vocabulary(style: str = "bert") -> dict[str, int]:
    """Token → id: the special tokens first, then :data:`WORDS` (deduplicated, in order; with
    SentencePiece's word-start mark ``▁`` for ``xlmr``)."""
    words = [w if style == "bert" else f"\u2581{w}" for w in dict.fromkeys(WORDS)]
    return {t: i for i, t in enumerate(list(SPECIAL[style]) + words)}


def expected_logit(query: str, passage: str) -> float:
    """``SCALE · cos(bow(query), bow(passage)) + BIAS`` over the vocabulary's words (an unknown
    word is ``[UNK]``, which the model ignores like the other special tokens)."""
    vocab = {w: i for i, w in enumerate(dict.fromkeys(WORDS))}

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


def _tokenizer_save(path: Path, *, style: str) -> None:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = vocabulary(style)
    if style == "xlmr":
        pieces = [(t, 0.0 if t in SPECIAL[style] else -1.0) for t in vocab]
        tokenizer = Tokenizer(models.Unigram(pieces, unk_id=vocab["<unk>"], byte_fallback=False))
        tokenizer.normalizer = normalizers.Lowercase()
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.post_processor = processors.RobertaProcessing(("</s>", vocab["</s>"]), ("<s>", vocab["<s>"]))
        tokenizer.save(str(path))
        return
    tokenizer = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.save(str(path))


def _graph_save(path: Path, *, labels: int, style: str) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    vocab = vocabulary(style)
    table = np.eye(len(vocab), dtype=np.float32)
    table[[vocab[t] for t in SPECIAL[style] if t != PAD[style]]] = 0.0  # no word; padding keeps its own row
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
    if style == "xlmr":
        inits += [
            numpy_helper.from_array(np.array(vocab["</s>"], dtype=np.int64), "sep_id"),
            numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero_f"),
            numpy_helper.from_array(np.array(1.5, dtype=np.float32), "after_two"),
            numpy_helper.from_array(np.array(1, dtype=np.int64), "axis1_scalar"),
        ]
    nodes = [
        helper.make_node("Gather", ["embeddings", "input_ids"], ["emb"]),  # (B, T, V)
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
    ]
    if style == "bert":
        nodes += [
            helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["mask", "types"], ["w_b"]),  # the passage's tokens
            helper.make_node("Sub", ["one", "types"], ["not_types"]),
            helper.make_node("Mul", ["mask", "not_types"], ["w_a"]),  # the query's tokens
        ]
    else:  # <s> query </s></s> passage </s>: the passage lies after the second </s>
        nodes += [
            helper.make_node("Equal", ["input_ids", "sep_id"], ["is_sep_b"]),
            helper.make_node("Cast", ["is_sep_b"], ["is_sep"], to=TensorProto.FLOAT),
            helper.make_node("CumSum", ["is_sep", "axis1_scalar"], ["seps"]),  # inclusive count
            helper.make_node("Equal", ["seps", "zero_f"], ["in_a_b"]),
            helper.make_node("Cast", ["in_a_b"], ["in_a"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["mask", "in_a"], ["w_a"]),
            # after the second </s>: the passage, its closing </s> (removed below) and the padding
            helper.make_node("Greater", ["seps", "after_two"], ["in_b_b"]),
            helper.make_node("Cast", ["in_b_b"], ["in_b"], to=TensorProto.FLOAT),
            helper.make_node("Sub", ["one", "is_sep"], ["not_sep"]),
            helper.make_node("Mul", ["in_b", "not_sep"], ["in_b_words"]),
            helper.make_node("Mul", ["mask", "in_b_words"], ["w_b"]),
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
    names = ("input_ids", "attention_mask", "token_type_ids") if style == "bert" else ("input_ids", "attention_mask")
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"]) for name in names]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", labels])
    graph = helper.make_graph(nodes, "tiny-cross-encoder", inputs, [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def cross_encoder_save(
    folder: Path,
    *,
    style: str = "bert",
    labels: int = 1,
    activation: str = "Sigmoid",
    activation_key: str = "sentence_transformers",
    positions: int = 64,
) -> Path:
    """Write the tiny cross-encoder of ``style`` (``bert`` | ``xlmr``) to ``folder`` (created)
    and return it: ``tokenizer.json``, ``config.json`` (``labels`` output labels, ``positions``
    = ``max_position_embeddings``, plus 2 for ``xlmr`` as XLM-R's table has; the activation
    ``activation`` under sentence-transformers' current key, ``activation_key`` =
    ``sentence_transformers``, or its older ``sbert_ce_default_activation_function``; "" none)
    and ``onnx/model.onnx``."""
    folder.mkdir(parents=True, exist_ok=True)
    _tokenizer_save(folder / "tokenizer.json", style=style)
    vocab = vocabulary(style)
    config: dict[str, object] = {
        "architectures": [
            "BertForSequenceClassification" if style == "bert" else "XLMRobertaForSequenceClassification"
        ],
        "model_type": "bert" if style == "bert" else "xlm-roberta",
        "id2label": {str(i): f"LABEL_{i}" for i in range(labels)},
        "max_position_embeddings": positions + (0 if style == "bert" else 2),
        "pad_token_id": vocab[PAD[style]],
    }
    torch_class = f"torch.nn.modules.activation.{activation}"
    if activation_key == "sentence_transformers":
        config["sentence_transformers"] = {"activation_fn": torch_class, "version": "5.1.0"}
    elif activation_key:
        config[activation_key] = torch_class
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    _graph_save(folder / "onnx" / "model.onnx", labels=labels, style=style)
    return folder
