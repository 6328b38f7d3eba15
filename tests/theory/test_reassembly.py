"""`python -m qs3study.claims --out DIR` reassembles the committed theory outputs byte for byte.

A PDF is compared as a drawing: its objects and decompressed streams, with a number allowed to differ
by one unit in its last printed place. Matplotlib prints a coordinate with six decimals, and one that
lies near a rounding boundary rounds either way when two machines' floating point differs in its last
bit (seen: 653.595313 against 653.595312 for one line of ``complexity.pdf``); the PNGs stay byte for byte.
"""

import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from qs3study.claims import __main__ as cli
from qs3study.claims.__main__ import TIDY
from qs3study.claims.manifest import file_sha256, tree_dirty

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "figures" / "theory"


#: Runs the CLI and fails if anything under the design's offline mirror is opened or listed: the
#: ledger reads the theory run's dataset facts, so it reassembles the same with or without the mirror.
_WITHOUT_MIRROR = """
import os, sys
from qs3study.claims.__main__ import DESIGN, ROOT, main
from qs3study.claims.design import load_design
mirror = os.path.realpath(os.path.join(ROOT, load_design(os.path.join(ROOT, DESIGN))["checks"]["table2"]["mirror"]))
def hook(event, args):
    if event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if path == mirror or path.startswith(mirror + os.sep):
            raise RuntimeError(f"the assembly read the mirror: {path}")
sys.addaudithook(hook)
sys.exit(main(sys.argv[1:]))
"""


_STREAM = re.compile(rb"stream\r?\n(.*?)endstream", re.S)


def _inflate(stream):
    """A stream's content: deflated (matplotlib's /FlateDecode, the end-of-line before endstream ignored)."""
    return zlib.decompressobj().decompress(stream)


def _pdf_drawing(data):
    """A PDF's objects (stream lengths and cross-reference table left out) and its decompressed streams."""
    length_objects = set(re.findall(rb"/Length (\d+) 0 R", data))
    streams = [_inflate(stream) for stream in _STREAM.findall(data)]
    skeleton = re.sub(rb"/Length \d+(?: 0 R)?", b"/Length", _STREAM.sub(b"stream endstream", data))
    skeleton = re.sub(rb"\n(\d+) 0 obj\n\d+\nendobj",
                      lambda m: b"" if m.group(1) in length_objects else m.group(0), skeleton)
    return skeleton[:skeleton.rindex(b"\nxref\n")], streams


def _last_place_apart(a, b):
    """Whether tokens are equal, or numbers at most one unit apart in their last printed decimal place."""
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    places = max(len(token.partition(b".")[2]) for token in (a, b))
    return abs(round(x * 10**places) - round(y * 10**places)) <= 1


def pdf_differences(a, b):
    """How two PDFs' drawings differ beyond a last printed digit: a list of descriptions, empty if they do not."""
    (skeleton_a, streams_a), (skeleton_b, streams_b) = _pdf_drawing(a), _pdf_drawing(b)
    if skeleton_a != skeleton_b or len(streams_a) != len(streams_b):
        return ["objects differ"]
    found = []
    for index, (x, y) in enumerate(zip(streams_a, streams_b)):
        tokens_x, tokens_y = x.split(), y.split()
        if len(tokens_x) != len(tokens_y):
            found.append(f"stream {index}: {len(tokens_x)} tokens against {len(tokens_y)}")
        found += [f"stream {index}: {u!r} against {v!r}" for u, v in zip(tokens_x, tokens_y)
                  if not _last_place_apart(u, v)]
    return found


def _same_output(name, a, b):
    return not pdf_differences(a, b) if name.endswith(".pdf") else a == b


def _line_pdf(tmp_path, y):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [y, y])
    ax.set_title("a line")
    path = tmp_path / f"line{y}.pdf"
    fig.savefig(path, metadata={"CreationDate": None})
    plt.close(fig)
    return path.read_bytes()


def _edit_first_number(data, change):
    """``data`` with the first six-decimal number of its first stream changed by ``change`` units in that place."""
    match = _STREAM.search(data)
    content = _inflate(match.group(1))
    number = re.search(rb"\d+\.\d{6}\b", content)
    edited = f"{float(number.group()) + change * 1e-6:.6f}".encode()
    content = content[:number.start()] + edited + content[number.end():]
    return data[:match.start(1)] + zlib.compress(content) + b"\n" + data[match.end(1):]


def test_pdf_comparison_allows_a_last_digit_and_nothing_more(tmp_path):
    drawn = _line_pdf(tmp_path, 0.5)
    assert pdf_differences(drawn, _line_pdf(tmp_path, 0.5)) == []
    assert pdf_differences(drawn, _edit_first_number(drawn, 1)) == []
    assert pdf_differences(drawn, _edit_first_number(drawn, -1)) == []
    assert len(pdf_differences(drawn, _edit_first_number(drawn, 2))) == 1
    assert pdf_differences(drawn, _line_pdf(tmp_path, 0.6)) != []
    assert pdf_differences(drawn, drawn.replace(b"/Type /Page ", b"/Type /Pages ")) == ["objects differ"]


@pytest.mark.slow
def test_reassembly_from_the_committed_tidy_data_is_byte_identical_and_never_reads_the_mirror(tmp_path):
    out = tmp_path / "theory"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-c", _WITHOUT_MIRROR, "--out", str(out)], capture_output=True,
                            text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    committed = sorted(p.name for p in COMMITTED.iterdir() if p.name != "manifest.json")
    assert sorted(p.name for p in out.iterdir() if p.name != "manifest.json") == committed
    differ = [name for name in committed
              if not _same_output(name, (out / name).read_bytes(), (COMMITTED / name).read_bytes())]
    assert differ == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["stage"].startswith("assembly only")
    assert all(file_sha256(path) == digest for path, digest in manifest["outputs"].items())
    read = manifest["inputs"]
    assert {f"figures/theory/{name}" for name in TIDY} <= set(read)
    assert all(file_sha256(REPO / path) == digest for path, digest in read.items())


def test_reassembly_names_a_missing_tidy_file(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-m", "qs3study.claims", "--out", str(tmp_path / "o"),
                             "--data", str(tmp_path)], capture_output=True, text=True, env=env)
    assert result.returncode != 0 and "convergence.csv" in result.stderr


def _claims(*args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "qs3study.claims", *map(str, args)], capture_output=True, text=True,
                          env=env)


def test_reassembly_refuses_a_folder_holding_files_it_did_not_write(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "summary.csv").write_text("my own summary\n")
    (out / "manifest.json").write_text('{"mine": true}\n')
    (out / "notes.txt").write_text("not one of its names\n")
    result = _claims("--out", out)
    assert result.returncode != 0 and "summary.csv" in result.stderr and "manifest.json" in result.stderr
    assert "Traceback" not in result.stderr and "notes.txt" not in result.stderr
    assert (out / "summary.csv").read_text() == "my own summary\n" and len(list(out.iterdir())) == 3


def test_reassembly_names_a_truncated_tidy_file_and_its_missing_columns(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for path in COMMITTED.glob("*.csv"):
        (data / path.name).write_bytes(path.read_bytes())
    (data / "problems.csv").write_text("instance,lam,n,fstar_norm\n")
    result = _claims("--out", tmp_path / "o", "--data", data)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "problems.csv" in result.stderr and "curvature" in result.stderr and len(result.stderr) < 500


def test_reassembly_into_figures_refuses_a_dirty_tree_unless_allowed(monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "tree_dirty", lambda root: True)
    target = REPO / "figures" / "theory-dirty-check"
    with pytest.raises(PermissionError, match="--allow-dirty"):
        cli.reassemble(target)
    assert not target.exists()
    # outside figures/ a dirty tree is only recorded: the refusal comes later, from the missing data
    with pytest.raises(FileNotFoundError):
        cli.reassemble(tmp_path / "o", data=str(tmp_path))


def test_tree_dirty_reads_tracked_changes_outside_figures(tmp_path):
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "figures").mkdir()
    (tmp_path / "code.py").write_text("a = 1\n")
    (tmp_path / "figures" / "out.csv").write_text("x\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    assert tree_dirty(tmp_path) is False
    (tmp_path / "figures" / "out.csv").write_text("y\n")
    assert tree_dirty(tmp_path) is False
    (tmp_path / "code.py").write_text("a = 2\n")
    assert tree_dirty(tmp_path) is True
    assert tree_dirty(tmp_path / "nowhere") is None


class _PastTheGuard(Exception):
    pass


def test_reassembly_in_the_studys_own_folder_takes_a_tidy_file_its_manifest_does_not_list(monkeypatch, tmp_path):
    # The theory run writes its tidy files beside the ledger; a tidy file the last manifest does not list
    # (a new study's) is not foreign there, since the assembly copies it onto itself unchanged.
    monkeypatch.setattr(cli, "empirical_inputs", lambda spec: (_ for _ in ()).throw(_PastTheGuard()))
    folder = tmp_path / "theory"
    folder.mkdir()
    for name in TIDY:
        (folder / name).write_bytes((COMMITTED / name).read_bytes())
    newest = sorted(TIDY)[0]
    (folder / "manifest.json").write_text(json.dumps({"outputs": {n: "" for n in TIDY if n != newest}}))
    with pytest.raises(_PastTheGuard):
        cli.reassemble(folder, data=str(folder))
    # the same name holding other bytes than the data's copy is still refused
    data = tmp_path / "data"
    data.mkdir()
    for name in TIDY:
        (data / name).write_bytes((COMMITTED / name).read_bytes())
    (folder / newest).write_text("someone else's table\n")
    with pytest.raises(FileExistsError, match=newest):
        cli.reassemble(folder, data=str(data))
    assert (folder / newest).read_text() == "someone else's table\n"
