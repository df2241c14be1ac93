"""``gradeline image build|status|list|prune``: the grading image, and the images of
assignments graded by a Gradescope autograder (the grading image plus what their
setup.sh installs)."""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from grader.adapters.sandbox import choose_runtime
from grader.adapters.sandbox.assignment_image import (
    MARK,
    assignment_image_path,
    build_assignment_image,
    image_autograder,
)
from grader.compose.context import Context
from grader.core.errors import ConfigError
from grader.examples import all_example_dirs
from grader.formats.gradescope.autograder import Autograder
from grader.formats.load import load_problem


def _autograder(package: str, scratch: Path) -> Autograder:
    ag = image_autograder(load_problem(package, require_time_limit=False), scratch)
    if ag is None:
        raise ConfigError(f"{package}: needs no image of its own (only type gradescope, or "
                          "type unittest with a setup directory, has one, unless it says "
                          "image: base)")
    return ag


def _examples_with_images(scratch: Path) -> list[str]:
    """The bundled examples that grade on an image of their own."""
    return [str(d) for d in all_example_dirs()
            if image_autograder(load_problem(d, require_time_limit=False), scratch)]


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*"))


def cmd_image(args: argparse.Namespace, ctx: Context) -> int:
    config = ctx.sandbox_config
    runtime, reason = choose_runtime(config.runtime)
    store = config.images()
    d = Path(args.definition) if args.definition else config.definition_path
    scratch = ctx.workroot / ".autograders"  # the image dir may be root's, read-only
    packages = [*args.assignment, *(_examples_with_images(scratch) if args.examples else [])]
    if args.action == "build":
        t0 = time.monotonic()
        img = store.ensure(d, runtime, force=args.force and not packages)
        print(f"image {img.image_id} ({runtime}: {reason}) at {img.path} "
              f"[{time.monotonic() - t0:.1f} s]")
        for package in packages:
            b = build_assignment_image(store, d, runtime, _autograder(package, scratch),
                                       force=args.force)
            print(f"image {b.image.image_id} for {package} ({'built' if b.built else 'cached'})"
                  f" at {b.image.path} [{b.seconds:.1f} s]")
        return 0
    found = store.find(d, runtime)
    if args.action == "status":
        print(f"{runtime}: {found.path if found else 'not built'}")
        for package in packages:
            path = assignment_image_path(found.path, _autograder(package, scratch).digest) \
                if found else None
            print(f"{package}: {path if path and path.exists() else 'not built'}")
        return 0 if found else 1
    base = f"{d.stem}-{store.load_def(d).content_hash[:12]}"
    keep = {assignment_image_path(Path(base), _autograder(p, scratch).digest).name
            for p in packages}
    images = sorted(p for p in store.root.iterdir() if p.name.startswith(f"{d.stem}-")
                    and not p.name.endswith(".tmp")) if store.root.is_dir() else []
    for path in images:
        name = path.name.removesuffix(".sif")
        current = name == base or (name.startswith(base + MARK) and
                                   (not packages or name in keep))
        if args.action == "list":
            kind = "assignment" if MARK in path.name else "grading"
            print(f"{path.name:<48} {kind:<10} {_size(path) / 2**20:8.0f} MiB  "
                  f"{'current' if name == base or name.startswith(base + MARK) else 'stale'}")
        elif not current:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
            print(f"removed {path}")
    return 0
