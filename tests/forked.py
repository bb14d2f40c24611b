"""Run Python scripts each in a process of its own, forked from one that imported torch once.

A script that trains on the CPU in a fresh `python script.py` spends most of its seconds
importing torch, transformers, datasets and accelerate (3-4 s each on 2 cores). The
standard library's forkserver (multiprocessing) imports them once and forks a clean process
per script: each script still runs as `__main__` in its own process, with its own module state
(an Accelerator, the Trainer's), its own exit code, stdout and stderr. What a fresh process
adds (finding the installed packages, running from any folder) is tested with a real
`python script.py` in tests/test_script_anywhere.py.
"""

from __future__ import annotations

import multiprocessing
import os
import runpy
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

# The built-in BERT model's module too: it pulls in torch._dynamo and torch.distributed.tensor
# (1.7 CPU-s a process on a 2-core EPYC), which every script that builds the default model pays.
PRELOAD = [
    "torch",
    "transformers",
    "datasets",
    "accelerate",
    "mpdemo",
    "transformers.models.bert.modeling_bert",
]


@dataclass
class Finished:
    """What subprocess.run would have returned for the script."""

    returncode: int
    stdout: str
    stderr: str


def _child(path: str, out: str, err: str, threads: int, cwd: str) -> None:
    """In the forked process: stdout and stderr (the C level's too) into files, then the script."""
    for fd, name in ((1, out), (2, err)):
        f = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(f, fd)
        os.close(f)
    sys.stdout = open(1, "w", closefd=False, buffering=1)  # noqa: SIM115 - the process's own
    sys.stderr = open(2, "w", closefd=False, buffering=1)  # noqa: SIM115
    os.chdir(cwd)
    import torch

    torch.set_num_threads(threads)
    sys.argv = [path]
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported as a crashed script is: traceback, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_scripts(paths: list[Path], cwd: Path, workers: int = 2, threads: int = 1) -> list[Finished]:
    """Each script in its own forked process in `cwd`, `workers` at a time, on `threads`
    threads; the results in `paths`' order."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    tmp = Path(tempfile.mkdtemp(prefix="mpdemo-forked-"))

    def one(i: int, path: Path) -> Finished:
        out, err = tmp / f"{i}.out", tmp / f"{i}.err"
        proc = ctx.Process(target=_child, args=(str(path), str(out), str(err), threads, str(cwd)))
        proc.start()
        proc.join(240)
        if proc.is_alive():
            proc.kill()
            proc.join()
        read = lambda p: p.read_text(encoding="utf-8") if p.exists() else ""  # noqa: E731
        return Finished(proc.exitcode if proc.exitcode is not None else -9, read(out), read(err))

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, range(len(paths)), paths))
