"""The reproduce script carries a run's settings as data: hostile text in any string field
(a model folder named to close a docstring and call os.system) comes back as the same string
from the script's AST, and running the script up to its config runs nothing of it."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
import torch

from mpdemo.cli import main as cli
from mpdemo.config import RunConfig
from mpdemo.teach.listing import run_command, script_for
from mpdemo.teach.loop_source import literal

PAYLOAD = '"""+str(__import__("os").system("touch PWNED"))+"""'
HOSTILE = [
    f"m{PAYLOAD}",
    "m'''+str(__import__('os').system('touch PWNED'))+'''",
    'a"b',
    "a'b",
    "a'b\"c",
    "back\\slash\\",
    "\\N{BULLET}\\x00\\u2028",
    "line\nbreak\r\n\tand tab",
    "x\n__import__('os').system('touch PWNED')\n#",
    "{label} {command}",
    "é · ✓ 🙂",
    "\x00\x1b[31m",
]
# Every string field of RunConfig the script writes; backend, precision and device are
# choices the script needs to be real ones.
TEXT_FIELDS = ("model", "dataset", "train_slice", "eval_slice")


def _config_call(tree: ast.Module) -> tuple[int, ast.Call]:
    """The index of the `cfg = RunConfig(...)` statement and its call."""
    for i, node in enumerate(tree.body):
        if (
            isinstance(node, ast.Assign)
            and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["cfg"]
            and isinstance(node.value, ast.Call)
        ):
            return i, node.value
    raise AssertionError("no cfg = RunConfig(...) in the script")


def _run_up_to_the_config(script: str, folder: Path) -> RunConfig:
    """Execute the script's statements before `prepare(cfg)` in `folder`; return its cfg."""
    tree = ast.parse(script)
    i, _ = _config_call(tree)
    head = ast.Module(body=tree.body[: i + 1], type_ignores=[])
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        exec(compile(head, "reproduce.py", "exec"), namespace)  # noqa: S102 - the test's point
    finally:
        os.chdir(cwd)
    return namespace["cfg"]


def _check(script: str, cfg: RunConfig, folder: Path) -> None:
    tree = ast.parse(script)  # parses: no value ended a string early
    compile(script, "reproduce.py", "exec")
    got = _run_up_to_the_config(script, folder)
    assert not list(folder.iterdir()), list(folder.iterdir())  # no PWNED, nothing at all
    _, call = _config_call(tree)
    written = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    for name in TEXT_FIELDS:
        if name in written:
            assert written[name] == getattr(cfg, name), name
    assert {n: getattr(got, n) for n in written} == written
    # The docstring quotes the command line exactly.
    doc = ast.get_docstring(tree, clean=False) or ""
    assert run_command(cfg.replace(device=written["device"])) in doc


@pytest.mark.parametrize("backend", ["torch", "accelerate", "trainer"])
def test_hostile_strings_in_every_field_round_trip_and_run_nothing(tmp_path, backend):
    for i, text in enumerate(HOSTILE):
        cfg = RunConfig(
            backend=backend,
            steps=3,
            device="cpu",
            **{name: f"{text}{name}" for name in TEXT_FIELDS},
        )
        script = script_for(cfg, device=torch.device("cpu"), task="cls")
        folder = tmp_path / str(i)
        folder.mkdir()
        _check(script, cfg, folder)


def test_a_model_folder_named_to_run_code_is_just_a_name(tmp_path, capsys, monkeypatch):
    # The folder, through the real checks (a local folder is allowed under the temp dir).
    model = tmp_path / f"m{PAYLOAD}"
    model.mkdir()
    cfg = RunConfig(model=str(model), device="cpu", steps=3)
    run = tmp_path / "run"
    run.mkdir()
    _check(script_for(cfg), cfg, run)
    # `python -m mpdemo code` prints the same script.
    assert cli.main(["code", "--model", str(model), "--device", "cpu", "--steps", "3"]) == 0
    _check(capsys.readouterr().out, cfg, run)


@pytest.mark.parametrize("text", HOSTILE)
def test_a_literal_is_the_value_itself(text):
    assert ast.literal_eval(literal(text)) == text
    assert "\n" not in literal(text)  # one line: a value cannot start a statement of its own
    for value in (65536.0, 3, True, None, 1e-3):
        assert ast.literal_eval(literal(value)) == value


def test_plain_settings_read_as_the_loops_write_them():
    # Double quotes where nothing needs escaping, as the course's listings write strings.
    assert literal("cpu") == '"cpu"'
    assert literal("train[:2000]") == '"train[:2000]"'
    assert literal('say "hi"') == "'say \"hi\"'"
