"""Every kind of bad input ends in quarantine with the right reason (no DB, no sandbox)."""
import io
import json
import os
import tarfile
import zipfile

import pytest

from grader.adapters.spool import Spool
from grader.formats.load import load_problem
from grader.pipeline.intake import Reason, Rejected, prepare

from ..support import EXAMPLES

PROBLEMS = {"bigsum": load_problem(EXAMPLES / "bigsum")}
GOOD = (EXAMPLES / "bigsum/submissions/accepted/sum.cpp").read_bytes()


@pytest.fixture
def spool(tmp_path):
    return Spool(tmp_path / "spool", create=True)


def submit(spool, tmp_path, name, data=None, *, build=None, assignment="bigsum"):
    src = tmp_path / "in" / name
    src.parent.mkdir(parents=True, exist_ok=True)
    if build is not None:
        build(src)
    else:
        src.write_bytes(data)
    return spool.submit(course="c", assignment=assignment, student="s", path=src)


def tar_bytes(members, mode="w"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def reg(name, data):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    return ti, data


def special(name, kind, link=""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.linkname = link
    return ti, None


def zip_bytes(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return buf.getvalue()


def zip_symlink():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zi = zipfile.ZipInfo("link.cpp")
        zi.external_attr = (0o120777 << 16)
        zf.writestr(zi, "/etc/passwd")
    return buf.getvalue()


def test_good_submissions_in_every_shape(spool, tmp_path):
    for name, data in [("sum.cpp", GOOD), ("sub.zip", zip_bytes([("sum.cpp", GOOD)])),
                       ("sub.tar.gz", tar_bytes([reg("src/sum.cpp", GOOD)], "w:gz")),
                       ("sub.tar.xz", tar_bytes([reg("sum.cpp", GOOD)], "w:xz"))]:
        e = submit(spool, tmp_path, name, data)
        p = prepare(e, PROBLEMS)
        assert p.language.id == "cpp" and p.submission.files[0].endswith("sum.cpp")


CASES = [
    ("unknown assignment", Reason.UNKNOWN_ASSIGNMENT, "a.cpp", GOOD, {"assignment": "nope"}),
    ("zip absolute path", Reason.ABSOLUTE_PATH, "a.zip", zip_bytes([("/etc/x.cpp", GOOD)]), {}),
    ("tar absolute path", Reason.ABSOLUTE_PATH, "a.tar", tar_bytes([reg("/abs.cpp", GOOD)]), {}),
    ("zip parent path", Reason.PARENT_PATH, "a.zip", zip_bytes([("../../x.cpp", GOOD)]), {}),
    ("tar parent path", Reason.PARENT_PATH, "a.tgz",
     tar_bytes([reg("ok/../../evil.cpp", GOOD)], "w:gz"), {}),
    ("tar symlink", Reason.SYMLINK, "a.tar",
     tar_bytes([special("sum.cpp", tarfile.SYMTYPE, "/etc/shadow")]), {}),
    ("zip symlink", Reason.SYMLINK, "a.zip", zip_symlink(), {}),
    ("tar hard link", Reason.HARDLINK, "a.tar",
     tar_bytes([reg("a.cpp", GOOD), special("b.cpp", tarfile.LNKTYPE, "/etc/shadow")]), {}),
    ("tar device", Reason.DEVICE, "a.tar", tar_bytes([special("dev.cpp", tarfile.CHRTYPE)]), {}),
    ("tar fifo", Reason.DEVICE, "a.tar", tar_bytes([special("p.cpp", tarfile.FIFOTYPE)]), {}),
    ("zip ratio bomb", Reason.DECOMPRESSION_BOMB, "a.zip",
     zip_bytes([("a.cpp", GOOD + b"\n" * (4 * 1024 * 1024))]), {}),
    ("gzip bomb", Reason.DECOMPRESSION_BOMB, "a.tar.gz",
     tar_bytes([reg("a.cpp", b"\0" * (12 * 1024 * 1024))], "w:gz"), {}),
    ("too many files", Reason.DECOMPRESSION_BOMB, "a.zip",
     zip_bytes([(f"f{i}.cpp", b"int x;") for i in range(100)]), {}),
    ("corrupt archive", Reason.CORRUPT_ARCHIVE, "a.zip", b"PK\x03\x04 not really a zip", {}),
    ("empty file", Reason.EMPTY, "a.cpp", b"", {}),
    ("empty archive", Reason.EMPTY, "a.zip", zip_bytes([]), {}),
    ("unsupported language", Reason.UNSUPPORTED_LANGUAGE, "Main.java",
     b"class Main { public static void main(String[] a) {} }", {}),
    ("non-UTF-8 name in zip", Reason.BAD_FILE_NAME, "a.zip", None, {}),
]


def zip_with_raw_name():
    data = bytearray(zip_bytes([("na\u00efve.cpp", GOOD)]))
    # Rewrite the UTF-8 name bytes (c3 af) into invalid UTF-8 (ff ff) and clear the
    # UTF-8 flag in both headers: a legacy archiver's raw bytes.
    data = data.replace("na\u00efve".encode(), b"na\xff\xffve")
    for sig in (b"PK\x03\x04", b"PK\x01\x02"):
        i = data.find(sig)
        off = 6 if sig == b"PK\x03\x04" else 8
        flags = int.from_bytes(data[i + off:i + off + 2], "little") & ~0x800
        data[i + off:i + off + 2] = flags.to_bytes(2, "little")
    return bytes(data)


@pytest.mark.parametrize(("label", "code", "name", "data", "meta"), CASES,
                         ids=[c[0] for c in CASES])
def test_bad_input_is_rejected_with_reason(spool, tmp_path, label, code, name, data, meta):
    if data is None:
        data = zip_with_raw_name()
    e = submit(spool, tmp_path, name, data, assignment=meta.get("assignment", "bigsum"))
    with pytest.raises(Rejected) as r:
        prepare(e, PROBLEMS)
    assert r.value.code is code, r.value.message
    q = spool.quarantine(e, str(r.value.code), r.value.message)
    reason = json.loads((q.path / "reason.json").read_text())
    assert reason["code"] == code.value
    assert (q.payload / name).read_bytes() == data  # kept byte for byte


def test_too_large(spool, tmp_path):
    e = submit(spool, tmp_path, "big.cpp", os.urandom(17 * 1024 * 1024))
    with pytest.raises(Rejected) as r:
        prepare(e, PROBLEMS)
    assert r.value.code is Reason.TOO_LARGE


def test_non_utf8_file_name_in_a_directory_is_kept_byte_safe(spool, tmp_path):
    def build(d):
        d.mkdir()
        (d / "sum.cpp").write_bytes(GOOD)
        fd = os.open(os.fsencode(d) + b"/caf\xe9.cpp", os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, b"// latin-1 name")
        os.close(fd)

    e = submit(spool, tmp_path, "dir", build=build)
    with pytest.raises(Rejected) as r:
        prepare(e, PROBLEMS)
    assert r.value.code is Reason.BAD_FILE_NAME and "caf\\xe9" in r.value.message
    q = spool.quarantine(e, str(r.value.code), r.value.message)
    assert b"caf\xe9.cpp" in os.listdir(os.fsencode(q.payload / "dir"))


def test_symlink_and_hardlink_in_a_directory(spool, tmp_path):
    def with_symlink(d):
        d.mkdir()
        (d / "sum.cpp").write_bytes(GOOD)
        (d / "x.cpp").symlink_to("/etc/passwd")

    e = submit(spool, tmp_path, "d1", build=with_symlink)
    with pytest.raises(Rejected) as r:
        prepare(e, PROBLEMS)
    assert r.value.code is Reason.SYMLINK


@pytest.mark.parametrize("meta", ["not json", "[]", json.dumps({"course": "c"}),
                                  json.dumps({"course": "c", "assignment": "bigsum",
                                              "student": "s", "submitted_at": "yesterday"})])
def test_malformed_metadata(spool, tmp_path, meta):
    e = submit(spool, tmp_path, "a.cpp", GOOD)
    e.meta_path.write_text(meta)
    with pytest.raises(Rejected) as r:
        prepare(e, PROBLEMS)
    assert r.value.code is Reason.MALFORMED_METADATA


def test_submit_is_atomic_and_claim_is_exclusive(spool, tmp_path):
    e = submit(spool, tmp_path, "a.cpp", GOOD)
    assert e.path.parent == spool.dir("new") and not any(spool.dir("tmp").iterdir())
    first = spool.claim("b1")
    second = spool.claim("b2")
    assert [x.id for x in first] == [e.id] and second == []


def test_prepare_twice_keeps_the_unpacked_sources(spool, tmp_path):
    """A resumed run re-prepares entries; array tasks may be reading src/ meanwhile."""
    e = submit(spool, tmp_path, "sum.cpp", GOOD)
    prepare(e, PROBLEMS)
    src = e.path / "src" / "sum.cpp"
    before = src.stat().st_ino
    prepare(e, PROBLEMS)
    assert src.stat().st_ino == before  # not deleted and rewritten


def test_an_autograder_without_languages_takes_any_files_one_with_them_does_not(
        spool, tmp_path):
    import shutil
    root = tmp_path / "wordfreq"
    shutil.copytree(EXAMPLES / "wordfreq", root)
    problems = {"wordfreq": load_problem(root)}  # languages: [python3]
    e = submit(spool, tmp_path, "homework.ipynb", b'{"cells": []}', assignment="wordfreq")
    with pytest.raises(Rejected) as r:
        prepare(e, problems)
    assert r.value.code is Reason.UNSUPPORTED_LANGUAGE
    text = (root / "gradeline.yaml").read_text().replace("languages: [python3]\n", "")
    (root / "gradeline.yaml").write_text(text)
    problems = {"wordfreq": load_problem(root)}  # a notebook is the autograder's to read
    e = submit(spool, tmp_path, "homework2.ipynb", b'{"cells": []}', assignment="wordfreq")
    p = prepare(e, problems)
    assert p.language is None and p.candidate.job.language is None
    assert p.submission.files == ("homework2.ipynb",)
