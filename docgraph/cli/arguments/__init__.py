"""The scripts' arguments: the parsers, the flags that map onto
:class:`~docgraph.config.ExperimentConfig`, and their checks.

Nothing here imports torch, so that a script's arguments are parsed and checked in a fraction
of a second (:mod:`docgraph.cli`) before :mod:`docgraph.cli.commands` does the work.

* :mod:`~docgraph.cli.arguments.flags`: flags and switches made from the configuration's
  declarations, value types, one-line errors;
* :mod:`~docgraph.cli.arguments.parsers`: the commands' parsers;
* :mod:`~docgraph.cli.arguments.train_checks`: ``train.py``'s checks and the configuration
  they make (defaults < preset < flags);
* :mod:`~docgraph.cli.arguments.tagging_checks`: the checks of the tagging tools and
  ``stats.py``.
"""

from docgraph.cli.arguments.flags import (
    COMBINED_SWITCHES,
    MODEL_HELP,
    SWITCHES,
    VALUE_FLAGS,
    OneLineParser,
    ValueFlag,
    fail,
    flag_dest,
    flag_help,
    flag_metavar,
    is_tty,
    non_negative_float,
    non_negative_int,
    positive_int,
    rule_type,
    setup_logging,
    switch_help,
    switches,
    value_flags,
)
from docgraph.cli.arguments.parsers import (
    add_data_arguments,
    add_progress_arguments,
    add_setting_flag,
    add_tagging_arguments,
    add_tagging_flags,
    evaluate_parser,
    predict_parser,
    stats_parser,
    train_parser,
    visualize_parser,
)
from docgraph.cli.arguments.tagging_checks import (
    FOLDER_SUFFIXES,
    TaggingInputs,
    check_corpus_split,
    check_model_argument,
    check_some_tokens,
    check_stats_arguments,
    check_tagging_arguments,
    check_visualize_arguments,
    input_names,
)
from docgraph.cli.arguments.train_checks import (
    RUN_RECORDS,
    check_arguments,
    check_model_size,
    check_output_dir,
    check_resumable,
    chosen_preset,
    config_from_args,
    given_settings,
    preset_config,
    read_init_config,
    small_corpus_config,
)
from docgraph.config.fields import UsageError

__all__ = [
    "COMBINED_SWITCHES",
    "FOLDER_SUFFIXES",
    "MODEL_HELP",
    "RUN_RECORDS",
    "SWITCHES",
    "VALUE_FLAGS",
    "OneLineParser",
    "TaggingInputs",
    "UsageError",
    "ValueFlag",
    "add_data_arguments",
    "add_progress_arguments",
    "add_setting_flag",
    "add_tagging_arguments",
    "add_tagging_flags",
    "check_arguments",
    "check_corpus_split",
    "check_model_argument",
    "check_model_size",
    "check_output_dir",
    "check_resumable",
    "check_some_tokens",
    "check_stats_arguments",
    "check_tagging_arguments",
    "check_visualize_arguments",
    "chosen_preset",
    "config_from_args",
    "evaluate_parser",
    "fail",
    "flag_dest",
    "flag_help",
    "flag_metavar",
    "given_settings",
    "input_names",
    "is_tty",
    "non_negative_float",
    "non_negative_int",
    "positive_int",
    "predict_parser",
    "preset_config",
    "read_init_config",
    "rule_type",
    "setup_logging",
    "small_corpus_config",
    "stats_parser",
    "switch_help",
    "switches",
    "train_parser",
    "value_flags",
    "visualize_parser",
]
