"""`--help` of every command is complete: it names every option the command takes."""
from __future__ import annotations

import pytest
from cli_helpers import hrr

from hrr.cli.main import cli

COMMANDS = sorted(cli.commands)


def test_every_command_is_there():
    assert set(COMMANDS) >= {"capture", "replay", "info", "repair", "plugins", "run"}
    top = hrr("--help", check=0).stdout
    for name in COMMANDS:
        assert name in top


@pytest.mark.parametrize("name", COMMANDS)
def test_help_names_every_option(name):
    out = hrr(name, "--help", check=0).stdout
    command = cli.commands[name]
    assert (command.help or "").split()[0] in out
    for param in command.params:
        for opt in (*param.opts, *param.secondary_opts):
            if opt.startswith("-"):
                assert opt in out, f"`hrr {name} --help` does not mention {opt}"
            else:  # an argument: shown in the usage line, upper-cased
                assert opt.upper() in out, f"`hrr {name} --help` does not show {opt.upper()}"
        if param.param_type_name == "option" and not param.hidden:
            assert param.help, f"hrr {name} {param.opts[0]} has no help text"


def test_contract_options_exist():
    """The options the command-line contract fixes."""
    opts = {name: {o for p in cli.commands[name].params for o in (*p.opts, *p.secondary_opts)}
            for name in COMMANDS}
    assert {"-o", "--plugins", "--backend", "--content", "--metadata-only"} <= opts["capture"]
    assert {"--strict", "--backend", "--max-file-bytes", "--max-events", "--max-host-bytes"} <= opts["replay"]
    assert {"--events", "--json"} <= opts["info"]
    assert {"--backend"} <= opts["run"]


def test_version():
    assert hrr("--version", check=0).stdout.startswith("hrr")
