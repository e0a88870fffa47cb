"""How Assay asks git: read-only commands, each with a time limit, that never fail the engine.

A command git cannot answer (git not installed, no repository, a shallow or broken one, a path it refuses, the time
limit passed) answers None or nothing, which its caller reads as no history. The pager is off and no command takes
an optional lock; what git prints is read as data, never run. ``ledger.history`` reads a check's evidence with it,
``ledger.committed`` a module's committed versions.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

#: Seconds a git command may take: reading a history of thousands of commits takes a few.
TIMEOUT = 120


def _env() -> dict[str, str]:
    return {**os.environ, "GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


def repository(root: Path) -> bool:
    """Whether ``root`` may lie in a git repository (a ``.git`` in it or in a folder above it, or ``GIT_DIR`` set),
    found without running git: where it cannot, git is not asked."""
    root = Path(root).absolute()
    return "GIT_DIR" in os.environ or any((folder / ".git").exists() for folder in (root, *root.parents))


def output(cwd: Path, *args: str) -> str | None:
    """What ``git ARGS`` prints, run in ``cwd``; None where it fails or takes longer than ``TIMEOUT``."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=_env(), timeout=TIMEOUT)
    except (OSError, ValueError, subprocess.SubprocessError):  # no git; a NUL in an argument; undecodable; too slow
        return None
    return done.stdout if done.returncode == 0 else None


def blobs(cwd: Path, ids: Iterable[str], *, limit: int | None = None) -> Iterator[tuple[str, bytes]]:
    """The contents of the blobs ``ids``, from one ``git cat-file --batch`` asked one object at a time: an id that
    names no blob is passed over, and so is a blob of more than ``limit`` bytes, read past in pieces, never held.
    The whole read is stopped after ``TIMEOUT`` seconds."""
    try:
        proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_env(),
        )
    except (OSError, ValueError):
        return
    timer = threading.Timer(TIMEOUT, proc.kill)
    timer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for blob in ids:
            proc.stdin.write(blob.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if not header:
                return  # git stopped: killed, or the repository is gone
            if len(header) < 3:
                continue  # "<id> missing", "<id> ambiguous": no contents follow
            size = int(header[2])
            if header[1] == b"blob" and (limit is None or size <= limit):
                data = proc.stdout.read(size)
                if proc.stdout.read(1) != b"\n":
                    return  # cut short
                yield blob, data
            else:
                _skip(proc.stdout, size + 1)
    except (OSError, ValueError):
        return
    finally:
        timer.cancel()
        _close(proc)


def _skip(stream, size: int) -> None:
    while size > 0 and (chunk := stream.read(min(size, 1 << 20))):
        size -= len(chunk)


def _close(proc: subprocess.Popen[bytes]) -> None:
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
