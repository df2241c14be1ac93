"""JPlag, the similarity checker: fetched once from Maven Central, run offline.

Why JPlag: a maintained tool of the field (KIT), token-based per language, with a
base-code option that leaves starter code out, packaged on Maven Central so Debian's
``maven`` fetches it with its dependencies and nothing else is needed but a JRE. Dolos
(``@dodona/dolos-lib`` on npm) would do as well, but its parsers build native code
at install time. MOSS needs the network. JPlag 5 and 6 need Java 21; Debian 12 has
17, so the version is 4.3.0 (``containers/similarity/pom.xml``): change it there when
the nodes have 21.

``containers/similarity/Similarity.java`` is the driver (a single-file Java program,
no build step): one directory per student in, every pair's similarity and matched
line ranges out, as JSON.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from grader.core.errors import CapabilityError

SOURCE = Path(__file__).resolve().parents[2] / "containers" / "similarity"
#: gradeline's language ids -> JPlag's language modules (the pom fetches these)
LANGUAGES = {"c": "cpp", "cpp": "cpp", "java": "java", "python3": "python3"}


def version() -> str:
    """The JPlag version the pom names."""
    text = (SOURCE / "pom.xml").read_text()
    return text.split("<jplag.version>", 1)[1].split("<", 1)[0]


def ensure(state_dir: Path) -> Path:
    """The directory of JPlag's jars, fetched with Maven on first use (network then
    only); :raises CapabilityError: without java or mvn, or when the fetch fails."""
    lib = state_dir / "similarity" / f"jplag-{version()}"
    if (lib / ".complete").exists():
        return lib
    for tool in ("java", "mvn"):
        if shutil.which(tool) is None:
            raise CapabilityError(f"the similarity report needs {tool}: apt-get install "
                                  "default-jdk-headless maven")
    lib.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mvn", "-q", "-B", "-f", str(SOURCE / "pom.xml"),
                        "dependency:copy-dependencies", f"-DoutputDirectory={lib}"],
                       capture_output=True, text=True, timeout=1800, check=False)
    if r.returncode != 0:
        raise CapabilityError(f"fetching JPlag {version()} from Maven Central failed: "
                              f"{(r.stdout + r.stderr).strip()[-800:]}")
    (lib / ".complete").touch()
    return lib


def command(lib: Path, language: str, submissions: Path, base: Path | None,
            min_tokens: int, out: Path) -> list[str]:
    """The command that compares every pair of ``submissions/<student>/`` (what a batch
    job runs, or ``run`` here)."""
    return ["java", "-Xss8m", "-cp", f"{lib}/*", str(SOURCE / "Similarity.java"),
            LANGUAGES[language], str(submissions), str(base) if base else "-",
            str(min_tokens), str(out)]


def run(argv: list[str], log: Path, timeout_s: float = 3600) -> None:
    """Run ``command``'s result on this machine; :raises CapabilityError: when it fails."""
    with log.open("w") as f:
        r = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, timeout=timeout_s,
                           check=False)
    if r.returncode != 0:
        raise CapabilityError(f"JPlag failed (exit {r.returncode}): "
                              f"{log.read_text()[-800:]}")
