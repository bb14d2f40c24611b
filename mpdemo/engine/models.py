"""Models: built-ins from a config with a fixed seed (offline), everything else via from_pretrained."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..catalog import DATASETS, MODELS
from ..config import Limits
from ..messages import ConfigError, MpdemoError
from .hfhub import check_hub_id, hub_reachable

# The built-in BERTs and GPT-2s: width, layers, heads; base-* are BERT-base's and GPT-2 small's
# shapes, where a GPU's tensor cores are the bottleneck (teach/device_sizes.py).
BERT_SHAPES = {"tiny-bert": (64, 2, 2), "small-bert": (256, 4, 4), "base-bert": (768, 12, 12)}
GPT2_SHAPES = {"tiny-gpt2": (64, 2, 2), "base-gpt2": (768, 12, 12)}
MLP_WIDTH = 4096  # the PyTorch AMP recipe: in_size = out_size = 4096, 3 layers


class AmpMLP(nn.Module):
    """The PyTorch AMP recipe's network: Linear+ReLU layers, MSE against random targets."""

    def __init__(self, width: int = MLP_WIDTH, num_layers: int = 3) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for _ in range(num_layers - 1):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers.append(nn.Linear(width, width))
        self.net = nn.Sequential(*layers)

    def forward(self, inputs: torch.Tensor, labels: torch.Tensor | None = None) -> Any:
        """Return an output with `.loss` and `.logits`, like a transformers model."""
        from transformers.modeling_outputs import SequenceClassifierOutput

        out = self.net(inputs)
        # The recipe computes the loss under autocast too: mse_loss autocasts to fp32.
        loss = nn.functional.mse_loss(out, labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=out)


def builtin_model(
    name: str, vocab_size: int, num_labels: int, pad_id: int, eos_id: int
) -> nn.Module:
    """Build a catalog built-in from its config; the caller seeds torch first."""
    import transformers as tf

    if name == "amp-mlp":
        return AmpMLP()
    if name in BERT_SHAPES:
        hidden, layers, heads = BERT_SHAPES[name]
        config = tf.BertConfig(
            vocab_size=vocab_size,
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            intermediate_size=4 * hidden,
            max_position_embeddings=512,
            # No dropout: the three backends then compute the very same losses in fp32.
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            num_labels=num_labels,
            pad_token_id=pad_id,
        )
        return tf.BertForSequenceClassification(config)
    if name in GPT2_SHAPES:
        width, layers, heads = GPT2_SHAPES[name]
        config = tf.GPT2Config(
            vocab_size=vocab_size,
            n_positions=512,
            n_embd=width,
            n_layer=layers,
            n_head=heads,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            pad_token_id=pad_id,
            bos_token_id=eos_id,
            eos_token_id=eos_id,
        )
        return tf.GPT2LMHeadModel(config)
    raise ConfigError("unknown_model", value=name, allowed=", ".join(MODELS))


def allowed_roots() -> list[Path]:
    """Folders local models and datasets may come from (MPDEMO_LOCAL_ROOTS, os.pathsep-separated)."""
    raw = os.environ.get("MPDEMO_LOCAL_ROOTS")
    parts = raw.split(os.pathsep) if raw else [os.getcwd(), str(Path.home()), tempfile.gettempdir()]
    return [Path(p).expanduser().resolve() for p in parts if p.strip()]


def looks_like_path(value: str) -> bool:
    """A path rather than a Hub id: starts like a path, or has more than one slash."""
    return (
        value.startswith(("/", ".", "~", "\\"))
        or value.count("/") > 1
        or "\\" in value
        or (len(value) > 1 and value[1] == ":")
    )


def resolve_source(value: str, limits: Limits, kind: str) -> str:
    """Classify a model/dataset name as 'builtin', 'local' or 'hub'; raise ConfigError if unusable."""
    if os.path.isdir(os.path.expanduser(value)) or looks_like_path(value):
        if not limits.allow_local_paths:
            raise ConfigError("local_paths_off", value=value)
        path = Path(value).expanduser().resolve()
        roots = allowed_roots()
        if not any(path == r or r in path.parents for r in roots):
            listed = ", ".join(str(r) for r in roots)
            raise ConfigError("path_outside_roots", value=value, roots=listed)
        if not path.is_dir():
            raise ConfigError("path_not_found", value=value)
        return "local"
    return _hub_source(value, kind)


def _hub_source(value: str, kind: str) -> str:
    """A Hub id: right syntax, and the Hub must be reachable; else say what is known instead."""
    import difflib

    table = MODELS if kind == "model" else DATASETS
    known = list(table)
    entry = table.get(value)
    if entry is not None and not entry.builtin:
        # An entry the app itself offers: never "unknown"; offline, it needs internet.
        if not hub_reachable():
            builtins = ", ".join(n for n, e in table.items() if e.builtin)
            raise ConfigError("hub_entry_offline", value=value, builtins=builtins)
        return "hub"
    key = "unknown_model" if kind == "model" else "unknown_dataset"
    close = difflib.get_close_matches(value, known, n=1)
    allowed = ", ".join(known) + (f" (did you mean {close[0]!r}?)" if close else "")
    try:
        check_hub_id(value)
    except ConfigError:
        raise ConfigError(key, value=value, allowed=allowed) from None
    if not hub_reachable():
        # A bare name offline is most likely a typo of a built-in; owner/name is a Hub id.
        if "/" not in value:
            raise ConfigError(key, value=value, allowed=allowed)
        raise ConfigError("hub_unreachable", value=value)
    return "hub"


def count_params(model: nn.Module) -> int:
    """Number of parameters (shared tensors counted once)."""
    return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())


def _not_found(source: str, hub: bool, err: BaseException) -> ConfigError:
    key = "hub_not_found" if hub else "not_a_model"
    return ConfigError(key, value=source, detail=str(err).strip().split("\n")[0][:300])


def pretrained_model(
    source: str, task: str, num_labels: int, limits: Limits, hub: bool = False
) -> nn.Module:
    """from_pretrained for a Hub id or a local folder; never trust_remote_code; size-capped first."""
    import transformers as tf

    auto = tf.AutoModelForCausalLM if task == "lm" else tf.AutoModelForSequenceClassification
    extra = {} if task == "lm" else {"num_labels": num_labels}
    where = source if hub else os.path.expanduser(source)  # the folder resolve_source checked
    try:
        config = tf.AutoConfig.from_pretrained(where, trust_remote_code=False, **extra)
        # Count parameters on the meta device: no memory, no download of the weights yet.
        with torch.device("meta"):
            n = count_params(auto.from_config(config, trust_remote_code=False))
        if n > limits.max_params:
            raise ConfigError("model_too_big", value=source, params=n, limit=limits.max_params)
        return auto.from_pretrained(
            where, config=config, trust_remote_code=False, ignore_mismatched_sizes=True
        )
    except MpdemoError:
        raise
    except OSError as err:
        raise _not_found(source, hub, err) from None
    except (ValueError, KeyError) as err:
        detail = str(err).strip().split("\n")[0][:300]
        raise ConfigError("load_failed", value=source, detail=detail) from None


def load_tokenizer(source: str, hub: bool = False) -> Any:
    """AutoTokenizer for a Hub id or folder, with a pad token (GPT-2 style ones lack one)."""
    import transformers as tf

    where = source if hub else os.path.expanduser(source)  # '~/m' is the folder it names
    try:
        tok = tf.AutoTokenizer.from_pretrained(where, trust_remote_code=False)
    except (OSError, ValueError) as err:
        raise _not_found(source, hub, err) from None
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token or tok.unk_token
    return tok
