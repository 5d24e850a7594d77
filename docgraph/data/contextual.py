"""Contextual word features from a frozen Hugging Face encoder (BERT, RoBERTa, MiniLM, ...).

The paper ("Network Training") takes "the output hidden states of BERT ... as additional
contextualized embeddings, which are combined with other three types of word representations".
These modules compute one vector per corpus token; :func:`docgraph.graph.attach_token_features`
puts them on the graphs and :class:`~docgraph.model.GCDoc` concatenates them at its embedding
layer. It knows files, model directories and strings; the transformer is only run, never trained.

Recipe (all choices documented in :class:`ContextualSettings`):

* **Feature-based BERT** (Devlin et al. 2019, Sec. 5.3): the model is frozen and in eval mode;
  the state of a subword is the mean of the last ``layers`` (4) hidden layers.
* **Subword pooling**: a word's vector is the mean of its subwords' states (``"mean"``) or the
  state of its first subword (``"first"``). A word the tokenizer maps to no subword at all (a
  lone control or zero-width character) is read as the unknown token.
* **Document context** (FLERT, Schweter and Akbik 2020): every sentence is encoded together
  with up to ``context`` subwords to its left and ``context`` to its right, taken from the
  neighbouring sentences of the *same* document (never of another one) and shortened to fit the
  model's maximum length; only the sentence's own subwords give features. ``context=0`` encodes
  every sentence alone.
* **Packed windows** (opt-in, ``pack``): consecutive sentences of a document share one window
  of up to the maximum length, with ``context`` subwords of context only at its two ends. Every
  sentence still sees at least ``context`` subwords on each side (where its document has them),
  its pack-mates more; a document costs a few long windows instead of one window per sentence
  that repeats ``2 * context`` subwords of context, several times fewer subwords to encode.
* **Long sentences** whose subwords do not fit the model's maximum length are split into
  windows of whole words, each encoded with the rest of the document as context; nothing is
  truncated, except a single word with more subwords than a whole window, which keeps its first
  ones and is reported with a warning.

Features of a corpus split are cached (:func:`cached_features`) as a float16 ``.npy`` file,
read back memory-mapped, whose name holds a hash of the model directory's files, the settings
and the corpus text; any change of them is a cache miss.

``transformers`` is imported lazily: the rest of ``docgraph`` works without it
(``pip install 'docgraph[lm]'``).

Every name below is importable from here; each is defined in the module of its concern:

* :mod:`docgraph.data.lm_windows` -- which subwords go into which window, and word vectors
  from subword states (pure functions);
* :mod:`docgraph.data.lm_encoder` -- :class:`ContextualSettings` and the
  :class:`ContextualEncoder` that runs the transformer;
* :mod:`docgraph.data.lm_cache` -- the on-disk feature cache;
* :mod:`docgraph.data.lm_fingerprints` -- the hashes of a language-model directory and of a
  corpus, and :class:`LanguageModelError`.

What a trained model directory records about its language model (``lm.json``) is a concern of
the model directory: :mod:`docgraph.persistence.lm_record`.
"""

from docgraph.data.lm_cache import CACHE_ENV_VAR, cache_path, cached_features, default_cache_dir
from docgraph.data.lm_encoder import (
    POOLINGS,
    ContextualEncoder,
    ContextualSettings,
    LanguageModelOptions,
    TokenizedDocument,
)
from docgraph.data.lm_fingerprints import LanguageModelError, corpus_hash, model_dir_hash
from docgraph.data.lm_windows import Window, context_window, pool_words, split_targets

__all__ = [
    "CACHE_ENV_VAR",
    "POOLINGS",
    "ContextualEncoder",
    "ContextualSettings",
    "LanguageModelError",
    "LanguageModelOptions",
    "TokenizedDocument",
    "Window",
    "cache_path",
    "cached_features",
    "context_window",
    "corpus_hash",
    "default_cache_dir",
    "model_dir_hash",
    "pool_words",
    "split_targets",
]
