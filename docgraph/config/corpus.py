"""How ``docgraph tag-corpus`` tags a corpus on an engine: the settings of a corpus job
(torch-free, Ray-free).

Each flag of ``tag-corpus`` is a field of :class:`CorpusConfig`, declared once
(:mod:`docgraph.config.fields`); the command's parser is generated from these declarations.
The settings that decide what a job writes (:data:`OUTPUT_SETTINGS`) are recorded in its
output directory, so that a job run again into it writes the same records.
"""

from __future__ import annotations

from dataclasses import dataclass

from docgraph.config.fields import check_config, choice, integer, number, switch, text
from docgraph.config.tagging import DOCUMENT_SPLITS, INPUT_FORMATS, consistency_switch

__all__ = ["CORPUS_INPUT_FORMATS", "ENGINES", "MISSING_FILE", "OBJECT_STORE_MINIMUM",
           "OUTPUT_FORMATS", "OUTPUT_SETTINGS", "CorpusConfig"]

ENGINES = ("ray",)
"""The engines a corpus job runs on."""

OUTPUT_FORMATS = ("parquet", "jsonl")
"""The formats of a corpus job's output files."""

CORPUS_INPUT_FORMATS = (*INPUT_FORMATS, "parquet")
"""How a corpus job reads an input file: ``predict.py``'s formats, and Parquet with a column
of text."""

OBJECT_STORE_MINIMUM = 75 * 1024 * 1024
"""The smallest object store Ray starts with (bytes)."""

MISSING_FILE = "_missing.txt"
"""The file of a job's output directory that lists the inputs left untagged, one per line
(the input, a tab, the reason); removed once every input is tagged."""

OUTPUT_SETTINGS = ("model", "output_format", "scores", "consistency", "input_format", "documents",
                   "tokenized", "text_column", "id_column", "max_doc_tokens")
"""The fields that decide the records a job writes (its other fields say where it runs)."""


@dataclass(frozen=True)
class CorpusConfig:
    """How a corpus is tagged and where.

    Attributes:
        model: The model directory, or a shipped model's name.
        engine: The engine that spreads the work (:data:`ENGINES`).
        address: The engine's cluster to join (``auto``: the one this machine belongs to;
            ``None``: a local one started for the job and stopped after it).
        actors: Taggers working at once, each a process holding one loaded model.
        object_store_memory: Bytes of the object store of the local Ray started for the job
            (``None``: Ray's own default, 30 % of the memory); a cluster joined with ``address``
            sizes its own (``ray start --object-store-memory``).
        cpus_per_actor: CPU cores reserved for each tagger (its torch threads).
        gpus_per_actor: GPUs reserved for each tagger (``0``: tag on the CPU).
        output_format: The format of the output files (:data:`OUTPUT_FORMATS`).
        scores: Give every entity its probability under the model.
        consistency: Label consistency in decoding
            (:data:`~docgraph.config.tagging.LABEL_CONSISTENCY`).
        input_format: How an input file is read (:data:`CORPUS_INPUT_FORMATS`; ``auto``:
            Parquet for a ``.parquet`` file, else as ``predict.py`` reads it).
        documents: What a document of raw text is (:data:`DOCUMENT_SPLITS`).
        tokenized: Raw text is one sentence per line, tokens split on whitespace.
        text_column: The column of a Parquet input that holds the documents' text.
        id_column: The column of a Parquet input that holds the documents' ids, when it has
            one (else ``<file stem>-<row>``).
        max_doc_tokens: Longest chunk of a document tagged at once (``None``: as
            ``predict.py``).
    """

    model: str = text("conll03", flag="--model", metavar="MODEL",
                      help="model directory or shipped model name")
    engine: str = choice("ray", ENGINES, flag="--engine",
                         help="the engine that spreads the work over processes and machines")
    address: str | None = text(
        None, optional=True, flag="--address", metavar="ADDRESS",
        help="the Ray cluster to join (auto: the one this machine belongs to, as after "
             "`ray start`; HOST:PORT: its head); default: a local Ray for this job")
    actors: int = integer(1, low=1, flag="--actors", metavar="N",
                          help="taggers working at once, each holding one loaded model")
    object_store_memory: int | None = integer(
        None, low=OBJECT_STORE_MINIMUM, optional=True, flag="--object-store-memory",
        metavar="BYTES",
        help="bytes of the object store of the local Ray started for the job (it holds the "
             "inputs being read; each actor's resident memory counts the pages it reads); "
             "default: Ray's own, 30 percent of the memory")
    cpus_per_actor: float = number(1.0, low=0.0, low_open=True, flag="--cpus-per-actor",
                                   metavar="C", help="CPU cores reserved for each tagger")
    gpus_per_actor: float = number(0.0, low=0.0, flag="--gpus-per-actor", metavar="G",
                                   help="GPUs reserved for each tagger (0: tag on the CPU)")
    output_format: str = choice("parquet", OUTPUT_FORMATS, flag="--format",
                                help="output files: Parquet or JSON lines, one per input file")
    scores: bool = switch(False, switches={"--scores": True},
                          help="give every entity its probability under the model")
    consistency: bool | None = consistency_switch()
    input_format: str = choice(
        "auto", CORPUS_INPUT_FORMATS, flag="--input-format",
        help="auto: Parquet for a .parquet file, a spaCy DocBin for a .spacy file, span JSON "
             "lines when the first line is a JSON object with a \"text\", CoNLL, else text")
    documents: str = choice("file", DOCUMENT_SPLITS, flag="--documents",
                            help="what a document of raw text is: the whole file, each "
                                 "paragraph or each line")
    tokenized: bool = switch(False, switches={"--tokenized": True},
                             help="text input is pre-tokenised: one sentence per line")
    text_column: str = text("text", flag="--text-column", metavar="NAME",
                            help="the column of a Parquet input that holds the text")
    id_column: str = text("id", flag="--id-column", metavar="NAME",
                          help="the column of a Parquet input that holds document ids, when "
                               "present (else FILE_STEM-ROW)")
    max_doc_tokens: int | None = integer(
        None, low=1, optional=True, flag="--max-doc-tokens", metavar="N",
        help="tag longer documents in chunks of whole sentences of at most N tokens (default: "
             "as predict.py)")

    def __post_init__(self) -> None:
        check_config(self, "")

    def output_settings(self) -> dict:
        """The settings that decide the records written (:data:`OUTPUT_SETTINGS`)."""
        return {name: getattr(self, name) for name in OUTPUT_SETTINGS}
