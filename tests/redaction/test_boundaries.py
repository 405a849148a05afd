"""No secret leaves the process: a property test over every input and every output.

Hypothesis draws a fresh set of credentials of every kind (userinfo URLs, a password holding
``/`` and ``@``, a conda ``/t/`` token, query tokens and signatures, GitHub / Hugging Face /
OpenAI / AWS token shapes, a Bearer header, secret-named variables, kernelspec token options)
and plants all of them in every input stackcheck reads: the live environment (variables, a
site-packages directory with a direct_url.json and a Requires-Dist URL, a kernelspec, a git
remote, another interpreter through ``--python``), a snapshot file given with ``--snapshot``,
a pasted collect_env output, a CI log for triage and a result draft. The real CLI then runs
(subprocesses, as a user would) and EVERY byte it leaves behind is searched: stdout, stderr,
``-o`` files, the metadata cache directory, the ledger's record and event files and its SQLite
index. Each value carries a unique tag (``Zq<n>``), so a partial leak is found too: the
password's three segments are searched one by one.
"""

from __future__ import annotations

import json
import os
import stat
import string
import subprocess
import sys
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.factories import SNAPSHOTS

pytestmark = pytest.mark.slow

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
R = "<redacted>"
# Each example runs the CLI some twenty times: a few examples, no shrinking (a failure names
# the planted values and the output they leaked into), no example database in the checkout.
EXAMPLES = settings(
    derandomize=True,
    deadline=None,
    max_examples=2,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclass(frozen=True)
class Planted:
    gh: str  # GitHub classic token
    pat: str  # GitHub fine-grained token
    hf: str  # Hugging Face token
    sk: str  # OpenAI key
    akia: str  # AWS access key id
    seg1: str  # the three segments of the passwords holding "/" and "@" (in both orders)
    seg2: str
    seg3: str
    simple_pw: str  # a plain password in a userinfo URL
    conda: str  # conda channel token
    query: str  # ?private_token=
    sig: str  # X-Amz-Signature / sig=
    bearer: str  # Authorization: Bearer
    env_value: str  # the value of a secret-named variable without a known shape
    kernel_token: str  # --IdentityProvider.token=
    kernel_pw: str  # --ServerApp.password VALUE
    arg_key: str  # backend.args.api_key of a draft

    @property
    def password(self) -> str:
        return f"{self.seg1}/{self.seg2}@{self.seg3}"

    @property
    def password2(self) -> str:
        return f"{self.seg3}@{self.seg1}/{self.seg2}"

    def values(self) -> list[str]:
        """Every planted value, and the pieces a partial leak would show."""
        return [getattr(self, f.name) for f in fields(self)] + [self.password, self.password2]


@st.composite
def planted(draw) -> Planted:
    tags = iter(range(1, 100))

    def value(size: int, alphabet: str = ALNUM) -> str:
        # a unique tag first (letters and a digit, as real tokens mix them), then random
        return f"Zq{next(tags)}x" + draw(st.text(alphabet=alphabet, min_size=size, max_size=size + 4))

    return Planted(
        gh="gh" + "p_" + value(34),
        pat="github" + "_pat_" + value(56),
        hf="hf" + "_" + value(32),
        sk="sk" + "-proj-" + value(32),
        akia="AK" + "IA" + "ZQ" + draw(st.text(alphabet=UPPER, min_size=14, max_size=14)),
        seg1=value(6),
        seg2=value(6),
        seg3=value(6),
        simple_pw=value(10),
        conda=value(12),
        query=value(16),
        sig=value(20),
        bearer=value(24, ALNUM + "._-"),
        env_value=value(16),
        kernel_token=value(16),
        kernel_pw=value(12),
        arg_key=value(16),
    )


# --------------------------------------------------------------------- running and searching
def cli(*args: str, cwd: Path, env: dict, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


class Outputs:
    """Every byte the runs left: stdout and stderr of each, then the files under the roots."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.runs: list[subprocess.CompletedProcess] = []

    def add(self, label: str, done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
        self.blobs[f"{label}: stdout"] = done.stdout
        self.blobs[f"{label}: stderr"] = done.stderr
        self.runs.append(done)
        return done

    def add_tree(self, root: Path) -> int:
        n = 0
        for path in sorted(root.rglob("*")):
            if path.is_file():
                self.blobs[str(path)] = path.read_bytes()
                n += 1
        return n

    def leaks(self, p: Planted) -> list[str]:
        values = p.values()
        return [f"{where}: {v}" for where, data in self.blobs.items() for v in values if v.encode() in data]


def base_env(tmp: Path) -> dict:
    drop = ("PYTHONPATH", "JUPYTER_PATH", "JUPYTER_DATA_DIR", "STACKCHECK_NO_CACHE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["STACKCHECK_CACHE_DIR"] = str(tmp / "cache")
    return env


def write_dist(site: Path, name: str, direct_url: str, requires: list[str]) -> None:
    d = site / f"{name}-1.0.dist-info"
    d.mkdir(parents=True)
    headers = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n{headers}\nbody\n")
    (d / "RECORD").write_text(f"{name}/__init__.py,,\n")
    (d / "INSTALLER").write_text("pip\n")
    vcs = {"vcs": "git", "commit_id": "0" * 40}
    (d / "direct_url.json").write_text(json.dumps({"url": direct_url, "vcs_info": vcs}))
    (site / name).mkdir()
    (site / name / "__init__.py").write_text("")


def kernel_argv(p: Planted) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ipykernel_launcher",
        "-f",
        "{connection_file}",
        f"--IdentityProvider.token={p.kernel_token}",
        "--ServerApp.password",
        p.kernel_pw,
        f"--NotebookApp.token={p.kernel_token}",
    ]


S3 = "https://b.s3.amazonaws.com/simple"


def planted_env(p: Planted) -> dict[str, str]:
    return {
        "HF_TOKEN": p.hf,
        "GITHUB_TOKEN": p.gh,
        "OPENAI_API_KEY": p.sk,
        "AWS_ACCESS_KEY_ID": p.akia,
        "MLFLOW_TRACKING_PASSWORD": p.env_value,
        "HF_HUB_TOKEN_EXTRA": p.env_value,
        "PIP_INDEX_URL": f"https://alice:{p.password}@pypi.example.com/simple",
        "UV_INDEX_URL": f"https://__token__:{p.pat}@pypi.example.com/simple",
        "CONDA_CHANNELS": f"https://conda.anaconda.org/t/{p.conda}/conda-forge,defaults",
        "HF_ENDPOINT": f"https://hf.example.com/?private_token={p.query}",
        "PIP_EXTRA_INDEX_URL": f"{S3}?X-Amz-Signature={p.sig}&X-Amz-Credential={p.akia}%2F2024",
        "WANDB_NOTES": f"Authorization: Bearer {p.bearer}",
        "TORCH_HOME": f"/srv/https://bob:{p.simple_pw}@cache.example.com/torch",
    }


# --------------------------------------------------------------------- the live environment
@EXAMPLES
@given(p=planted())
def test_live_probe_never_leaks(p):
    live_probe(p)


def live_probe(p: Planted) -> None:
    with tempfile.TemporaryDirectory(prefix="sc-live-") as tmp_name:
        tmp = Path(tmp_name)
        work = tmp / "work"  # the cwd: first on sys.path of `python -m`, so its dists are probed
        write_dist(
            work,
            "privlib",
            f"git+https://alice:{p.password}@github.com/org/privlib.git",
            [f"dep @ git+https://oauth2:{p.gh}@gitlab.example.com/x/dep.git"],
        )
        subprocess.run(["git", "init", "-q", str(work)], check=True)
        remote = f"https://user:{p.gh}@github.com/org/repo.git"
        subprocess.run(["git", "-C", str(work), "remote", "add", "origin", remote], check=True)
        kernels = tmp / "jupyter" / "kernels" / "leaky"
        kernels.mkdir(parents=True)
        spec = {
            "argv": kernel_argv(p),
            "display_name": f"Leaky {p.hf}",
            "language": "python",
            "env": {"HF_TOKEN": p.hf},
        }
        (kernels / "kernel.json").write_text(json.dumps(spec))
        other = tmp / "other-site"  # what --python sees through PYTHONPATH
        write_dist(
            other,
            "otherlib",
            f"git+https://{p.pat}@github.com/org/otherlib.git@v2",
            [f"dep @ git+https://bob:{p.password2}@gitlab.example.com/x/dep.git"],
        )
        env = {**base_env(tmp), **planted_env(p), "JUPYTER_PATH": str(tmp / "jupyter")}

        out = Outputs()
        as_json = out.add("snapshot --json", cli("snapshot", "--json", cwd=work, env=env))
        written = out.add(
            "snapshot -o", cli("snapshot", "--json", "-o", str(tmp / "snap.json"), cwd=work, env=env)
        )
        out.add("snapshot", cli("snapshot", cwd=work, env=env))
        out.add("doctor --json", cli("doctor", "--json", cwd=work, env=env))
        out.add("doctor -v", cli("doctor", "-v", cwd=work, env=env))
        out.add("preflight", cli("preflight", "--profile", "BASE-CPU", "-v", cwd=work, env=env))
        base = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
        foreign = out.add(
            "snapshot --python",
            cli("snapshot", "--python", base, "--json", cwd=work, env={**env, "PYTHONPATH": str(other)}),
        )
        bad_python = f"https://alice:{p.password}@example.com/py"
        bad = out.add("bad --python", cli("snapshot", "--python", bad_python, cwd=work, env=env))
        # exit 1: the planted dist requires a missing "dep" (doctor), no torch here (BASE-CPU)
        codes = [r.returncode for r in out.runs]
        assert codes == [0, 0, 0, 1, 1, 1, 0, 2], [r.stderr[-300:] for r in out.runs]
        out.blobs["snap.json"] = (tmp / "snap.json").read_bytes()
        assert out.add_tree(tmp / "cache") >= 2, "the probe wrote its metadata cache (live and --python)"
        assert out.leaks(p) == []

        # the planted facts were seen, redacted, not dropped
        snap = json.loads(as_json.stdout)
        assert json.loads(written.stdout)["written"] == str(tmp / "snap.json")
        dists = {d["name"]: d for d in snap["packages"]["distributions"]}
        assert dists["privlib"]["direct_url"] == "git+https://<redacted>@github.com/org/privlib.git"
        assert dists["privlib"]["requires"] == ["dep @ git+https://<redacted>@gitlab.example.com/x/dep.git"]
        variables = snap["env"]["variables"]
        assert variables["PIP_INDEX_URL"] == "https://<redacted>@pypi.example.com/simple"
        assert variables["UV_INDEX_URL"] == "https://<redacted>@pypi.example.com/simple"
        assert variables["CONDA_CHANNELS"] == "https://conda.anaconda.org/t/<redacted>/conda-forge,defaults"
        assert variables["HF_ENDPOINT"] == "https://hf.example.com/?private_token=<redacted>"
        assert variables["PIP_EXTRA_INDEX_URL"] == f"{S3}?X-Amz-Signature={R}&X-Amz-Credential={R}"
        assert variables["WANDB_NOTES"] == "Authorization: Bearer <redacted>"
        assert variables["HF_TOKEN"] == variables["HF_HUB_TOKEN_EXTRA"] == variables["GITHUB_TOKEN"] == R
        assert set(planted_env(p)) - {"AWS_ACCESS_KEY_ID"} <= set(snap["env"]["redacted"])
        leaky = next(k for k in snap["kernels"]["kernels"] if k["name"] == "leaky")
        assert leaky["display_name"] == "Leaky <redacted>"
        assert leaky["argv"][5:] == [
            "--IdentityProvider.token=<redacted>",
            "--ServerApp.password",
            R,
            "--NotebookApp.token=<redacted>",
        ]
        assert snap["git"]["root"] == str(work)
        otherlib = {d["name"]: d for d in json.loads(foreign.stdout)["packages"]["distributions"]}["otherlib"]
        assert otherlib["direct_url"] == "git+https://<redacted>@github.com/org/otherlib.git@v2"
        assert otherlib["requires"] == ["dep @ git+https://<redacted>@gitlab.example.com/x/dep.git"]
        assert bad.stderr.decode().startswith("stackcheck: error: https://<redacted>@example.com/py")
        for path in (tmp / "cache").rglob("*.json"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


# --------------------------------------------------------------------- a snapshot from elsewhere
def planted_snapshot(p: Planted) -> dict:
    snap = json.loads((SNAPSHOTS / "cpu-laptop.json").read_text())
    snap["packages"]["distributions"].append(
        {
            "name": "privlib",
            "version": "1.0",
            "location": "/env/site",
            "installer": "pip",
            "direct_url": f"git+https://alice:{p.password}@github.com/org/privlib.git",
            "requires": [f"dep @ git+https://oauth2:{p.gh}@gitlab.example.com/dep.git"],
            "problems": [f"cannot read https://bob:{p.simple_pw}@files.example.com/x"],
        }
    )
    snap["env"] = {"status": "ok", "source": "os.environ", "variables": planted_env(p), "redacted": []}
    spec = {
        "name": "leaky",
        "path": "/env/share/jupyter/kernels/leaky/kernel.json",
        "display_name": f"Leaky {p.hf}",
        "language": "python",
        "argv": kernel_argv(p),
        "interpreter": sys.executable,
    }
    snap["kernels"] = {
        "status": "ok",
        "source": "kernelspec dirs",
        "data_dirs": ["/env/share/jupyter"],
        "kernels": [spec],
    }
    snap["python"]["pth_files"] = [
        {
            "path": "/env/site/evil.pth",
            "executes_code": True,
            "entries": [f"import os; os.environ['DB_PASSWORD'] = '{p.env_value}'"],
        }
    ]
    snap["git"] = {
        "status": "ok",
        "source": "files",
        "root": "/src/repo",
        "commit": "c" * 40,
        "branch": f"wip-{p.gh}",
    }
    snap["tool"]["command"] = f"--python https://u:{p.simple_pw}@host.example.com/python"
    return snap


def draft(p: Planted, **changes) -> dict:
    d = {
        "topic": "redaction/probe",
        "run_label": "run-1",
        "profile": "LAB-CPU",
        "model": {"id": f"https://huggingface.co/org/m?token={p.query}"},
        "backend": {
            "name": "vllm",
            "version": "0.11.0",
            "args": {
                "api_key": p.arg_key,
                "endpoint": f"https://alice:{p.password2}@api.example.com/v1",
                "headers": [f"Authorization: Bearer {p.bearer}"],
            },
        },
        "workload": {"kind": "inference"},
        "metrics": {"latency_ms": {"value": 41.0, "unit": "ms"}},
        "notes": f"ran with HF_TOKEN={p.env_value} against https://bob:{p.simple_pw}@mirror.example.com;"
        f" key {p.sk}",
        "git": {"commit": "d" * 40, "dirty": False},
    }
    d.update(changes)
    return d


def registry(p: Planted) -> dict:
    """A CPU profile to record against, and one whose requirement and notes carry credentials
    (its fix commands quote them)."""
    private = {
        "id": "LAB-PRIV",
        "title": "private index",
        "evidence_scope": "cpu-smoke",
        "requirements": [f"secretlib @ git+https://alice:{p.password}@github.com/org/secretlib.git"],
        "forbidden": [{"requirement": "privlib", "reason": f"pulled from https://{p.gh}@github.com/org"}],
        "notes": [f"index token {p.pat}"],
    }
    return {
        "schema_version": "1.0",
        "include_builtin": False,
        "profiles": [{"id": "LAB-CPU", "title": "CPU smoke", "evidence_scope": "cpu-smoke"}, private],
    }


def triage_log(p: Planted) -> str:
    return "\n".join(
        [
            "+ export HF_TOKEN=" + p.hf,
            f"+ pip install --index-url https://alice:{p.password2}@pypi.example.com/simple privlib",
            f"+ curl -H 'Authorization: Bearer {p.bearer}' https://api.example.com/v1/models",
            f"+ git clone https://{p.gh}@github.com/org/repo.git",
            f"+ aws s3 cp s3://b/k . # AK={p.akia} sig https://b.s3.amazonaws.com/k?X-Amz-Signature={p.sig}",
            "Traceback (most recent call last):",
            '  File "train.py", line 3, in <module>',
            f"    model = load(token='{p.env_value}', url='https://conda.anaconda.org/t/{p.conda}/main')",
            (
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
                f" (fetching https://hf.example.com/?private_token={p.query})"
            ),
            "",
        ]
    )


def collect_env_text(p: Planted) -> str:
    text = (SNAPSHOTS.parent / "collect_env" / "torch17-centos-warning.txt").read_text().rstrip("\n")
    return (
        text
        + "\n"
        + "\n".join(
            [
                f"[pip3] privlib==1.0 @ git+https://alice:{p.password2}@github.com/org/privlib.git",
                f"[pip3] otherlib==2.0+{p.hf}",
                f"[conda] mkl 2023.1.0 https://conda.anaconda.org/t/{p.conda}/main",
                "",
            ]
        )
    )


@EXAMPLES
@given(p=planted())
def test_loaded_inputs_never_leak(p):
    """--snapshot, --from-collect-env, a triage log and a result draft: judged, printed and
    recorded, with nothing planted surviving in any output or in the ledger."""
    loaded_inputs(p)


def loaded_inputs(p: Planted) -> None:
    with tempfile.TemporaryDirectory(prefix="sc-loaded-") as tmp_name:
        tmp = Path(tmp_name)
        env = base_env(tmp)
        snap_file, paste, log = tmp / "planted.json", tmp / "collect_env.txt", tmp / "ci.log"
        snap_file.write_text(json.dumps(planted_snapshot(p)))
        paste.write_text(collect_env_text(p))
        log.write_text(triage_log(p) + "\n" + collect_env_text(p))
        (tmp / "reg.json").write_text(json.dumps(registry(p)))
        (tmp / "draft.json").write_text(json.dumps(draft(p)))
        (tmp / "draft2.json").write_text(json.dumps(draft(p, run_label="second")))
        (tmp / "draft3.json").write_text(json.dumps(draft(p, run_label=f"run-{p.gh}")))  # refused: exit 2
        failed = draft(
            p,
            status="failed",
            metrics={},
            evidence="mechanism",
            failure_reason=f"401 from https://u:{p.simple_pw}@x.example.com",
        )
        (tmp / "failed.json").write_text(json.dumps(failed))
        ledger = ["--ledger-dir", str(tmp / "ledger")]
        reg = ["--registry", str(tmp / "reg.json")]
        record = ["results", "record", *reg, *ledger]
        s, c = ["--snapshot", str(snap_file)], ["--from-collect-env", str(paste)]

        out = Outputs()
        # exit 1: the planted environment is blocked (a missing requirement), so is LAB-PRIV
        # (secretlib is not installed), the failed draft is refused, the records are not comparable
        for label, args in [
            ("snapshot s", ["snapshot", *s, "--json"]),
            ("snapshot s -o", ["snapshot", *s, "-o", str(tmp / "o.json")]),
            ("snapshot s text", ["snapshot", *s]),
            ("snapshot c", ["snapshot", *c, "--json"]),
            ("snapshot c -o", ["snapshot", *c, "-o", str(tmp / "c.json")]),
            ("private", ["preflight", *s, *reg, "--profile", "LAB-PRIV", "--json"]),
            ("private text", ["preflight", *s, *reg, "--profile", "LAB-PRIV", "-v"]),
            ("private md", ["preflight", *c, *reg, "--profile", "LAB-PRIV", "--markdown"]),
            ("profile show", ["profiles", "show", "LAB-PRIV", *reg, "--json"]),
            ("preflight s", ["preflight", *s, "--profile", "BASE-CPU", "--json"]),
            ("preflight s md", ["preflight", *s, "--profile", "BASE-CPU", "--markdown"]),
            ("doctor s", ["doctor", *s, "-v"]),
            ("doctor c", ["doctor", *c, "--json"]),
            ("deps tree", ["deps", "tree", *s, "--json"]),
            ("triage", ["triage", str(log), "--no-env", "--json"]),
            ("triage text", ["triage", str(log), *s]),
            ("triage c", ["triage", str(log), *c, "--json"]),
            ("record", [*record, str(tmp / "draft.json"), *s, "--json"]),
            ("record c", [*record, str(tmp / "draft2.json"), *c]),
            ("record refused", [*record, str(tmp / "failed.json"), *s]),
            ("record secret label", [*record, str(tmp / "draft3.json"), *s]),
        ]:
            out.add(label, cli(*args, cwd=tmp, env=env))
        out.add(
            "triage stdin", cli("triage", "-", "--no-env", cwd=tmp, env=env, stdin=triage_log(p).encode())
        )
        record_id = json.loads(out.blobs["record: stdout"])["id"]
        listed = out.add("list", cli("results", "list", *ledger, "--json", cwd=tmp, env=env))
        second = next(e["id"] for e in json.loads(listed.stdout) if e["id"] != record_id)
        for label, args in [
            ("show json", ["results", "show", record_id, "--json"]),
            ("show", ["results", "show", record_id]),
            ("list text", ["results", "list"]),
            ("diff", ["results", "diff", record_id, second]),
            (
                "decide",
                [
                    "results",
                    "decide",
                    "redaction/probe",
                    "second",
                    "--decision",
                    f"ship it; token {p.gh} and https://u:{p.simple_pw}@h.example.com",
                ],
            ),
            ("validate", ["results", "validate"]),
            ("assets", ["results", "assets"]),
        ]:
            out.add(label, cli(*args, *ledger, cwd=tmp, env=env))
        codes = [r.returncode for r in out.runs]
        assert codes == [0] * 5 + [1] * 3 + [0] + [1] * 3 + [0] * 7 + [1, 2] + [0] * 5 + [1] + [0] * 3, [
            (code, r.stderr[-300:]) for code, r in zip(codes, out.runs)
        ]
        out.blobs["o.json"] = (tmp / "o.json").read_bytes()
        out.blobs["c.json"] = (tmp / "c.json").read_bytes()
        assert out.add_tree(tmp / "ledger") >= 4, "records, the decision and the index are searched"
        assert str(tmp / "ledger" / "ledger.sqlite") in out.blobs
        assert out.leaks(p) == []

        # what was planted was seen, redacted, not dropped
        loaded = json.loads(out.blobs["snapshot s: stdout"])
        assert {d["name"]: d for d in loaded["packages"]["distributions"]}["privlib"][
            "direct_url"
        ] == "git+https://<redacted>@github.com/org/privlib.git"
        assert loaded["env"]["variables"]["HF_TOKEN"] == R and "HF_TOKEN" in loaded["env"]["redacted"]
        assert loaded["kernels"]["kernels"][0]["argv"][5] == "--IdentityProvider.token=<redacted>"
        pth = loaded["python"]["pth_files"][0]["entries"]
        assert pth == ["import os; os.environ['DB_PASSWORD'] = '<redacted>'"]
        pasted = json.loads(out.blobs["snapshot c: stdout"])["packages"]["distributions"]
        privlib = next(d for d in pasted if d["name"] == "privlib")
        assert privlib["version"] == "1.0 @ git+https://<redacted>@github.com/org/privlib.git"
        diagnosis = json.loads(out.blobs["triage: stdout"])
        assert "KB102" in [m["rule_id"] for m in diagnosis["matches"]]
        shown = out.blobs["triage stdin: stdout"].decode()
        assert "1. KB102 CUDA out of memory" in shown
        for line in (
            "+ git clone https://<redacted>@github.com/org/repo.git",
            "+ curl -H 'Authorization: Bearer <redacted>' https://api.example.com/v1/models",
            f"    model = load(token='{R}', url='https://conda.anaconda.org/t/{R}/main')",
            "(fetching https://hf.example.com/?private_token=<redacted>)",
        ):
            assert line in shown
        private = json.loads(out.blobs["private: stdout"])
        expected = {c["id"]: c["expected"] for c in private["checks"] if c["verdict"] == "blocked"}
        assert expected["PKG001"] == "secretlib @ git+https://<redacted>@github.com/org/secretlib.git"
        assert expected["PKG003"] == "no privlib (pulled from https://<redacted>@github.com/org)"
        rec = json.loads(out.blobs["show json: stdout"])
        assert rec["run_label"] == "run-1"
        assert (
            out.blobs["record secret label: stderr"]
            .decode()
            .endswith(
                "run_label: looks like it holds a credential; names are printed and stored, "
                "keep secrets out\n"
            )
        )
        assert rec["backend"]["args"] == {
            "api_key": R,
            "endpoint": "https://<redacted>@api.example.com/v1",
            "headers": ["Authorization: Bearer <redacted>"],
        }
        assert rec["notes"] == f"ran with HF_TOKEN={R} against https://{R}@mirror.example.com; key {R}"
        assert rec["model"]["id"] == "https://huggingface.co/org/m?token=<redacted>"
        decided = out.blobs["decide: stdout"].decode()
        assert decided.endswith("ship it; token <redacted> and https://<redacted>@h.example.com\n")


def oldest_python() -> str | None:
    """A Python 3.8 that really runs (pyenv shims of versions not selected do not)."""
    import glob
    import shutil

    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")))
    for cand in [shutil.which("python3.8"), *pyenv]:
        if cand and subprocess.run([cand, "-c", "pass"], capture_output=True, check=False).returncode == 0:
            return cand
    return None


@pytest.mark.skipif(oldest_python() is None, reason="no Python 3.8 here")
def test_the_probe_script_redacts_inside_python38(tmp_path):
    # --python runs probe/interpreter.py in the target, which loads redaction.py by path: both
    # must work in the oldest Python the probe supports, cache included
    site = tmp_path / "site"
    write_dist(
        site,
        "x",
        "git+https://alice:Zq1xsecret@github.com/o/x.git",
        ["d @ git+https://u:Zq2xpw@h.example.com/d"],
    )
    env = {**base_env(tmp_path), "PYTHONPATH": str(site)}
    done = cli("snapshot", "--python", oldest_python(), "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    snap = json.loads(done.stdout)
    x = next(d for d in snap["packages"]["distributions"] if d["name"] == "x")
    assert snap["python"]["version"].startswith("3.8.")
    assert x["direct_url"] == "git+https://<redacted>@github.com/o/x.git"
    assert x["requires"] == ["d @ git+https://<redacted>@h.example.com/d"]
    cached = [p.read_bytes() for p in (tmp_path / "cache").rglob("*.json")]
    assert cached and not [c for c in cached if b"Zq1x" in c or b"Zq2x" in c]


def test_a_record_stored_before_redaction_is_shown_clean(tmp_path):
    """Records are write-once: one stored raw by an older stackcheck keeps its secret on disk,
    but show / list / diff / assets never print it."""
    import msgspec

    from stackcheck.environment import load_snapshot
    from stackcheck.results.contract import ProfileRef
    from stackcheck.results.identity import content_digest, identity_key
    from stackcheck.results.ledger import Ledger
    from stackcheck.results.recording import complete, load_draft

    secret, url = "Zq1x" + "0a" * 12, "https://alice:Zq2xpw@mirror.example.com/x"
    snap = load_snapshot(str(SNAPSHOTS / "cpu-laptop.json"))
    with Ledger(tmp_path / "ledger") as ledger:
        for label in ("raw-one", "raw-two"):
            d = {
                "topic": "old/raw",
                "run_label": label,
                "profile": "LAB-CPU",
                "model": {"id": "m"},
                "backend": {"name": "vllm", "version": "0.11.0"},
                "workload": {"kind": "inference"},
                "metrics": {"ms": {"value": 1.0}},
                "git": {"commit": "e" * 40, "dirty": False},
            }
            profile = (ProfileRef(id="LAB-CPU", verdict="ok"), "cpu-smoke")
            rec = complete(load_draft(d), snap, profile, cwd=tmp_path)
            raw_backend = msgspec.structs.replace(rec.backend, args={"api_key": secret})
            rec = msgspec.structs.replace(rec, notes=f"HF_TOKEN={secret} via {url}", backend=raw_backend)
            rec.identity_key = identity_key(rec, "LAB-CPU")
            rec.digest = content_digest(rec)
            ledger.store(rec)
    assert any(secret.encode() in p.read_bytes() for p in (tmp_path / "ledger").rglob("*.json"))

    env, ledger_args = base_env(tmp_path), ["--ledger-dir", str(tmp_path / "ledger")]
    listed = cli("results", "list", "--json", *ledger_args, cwd=tmp_path, env=env)
    ids = [e["id"] for e in json.loads(listed.stdout)]
    out = Outputs()
    out.add("list", listed)
    for label, args in [
        ("show json", ["show", ids[0], "--json"]),
        ("show", ["show", ids[0]]),
        ("diff", ["diff", *ids]),
        ("diff json", ["diff", *ids, "--json"]),
        ("list text", ["list"]),
        ("assets", ["assets"]),
    ]:
        out.add(label, cli("results", *args, *ledger_args, cwd=tmp_path, env=env))
    assert [r.returncode for r in out.runs] == [0] * 7  # the two runs are comparable
    assert [k for k, v in out.blobs.items() if secret.encode() in v or b"Zq2xpw" in v] == []
    shown = json.loads(out.blobs["show json: stdout"])
    assert shown["notes"] == "HF_TOKEN=<redacted> via https://<redacted>@mirror.example.com/x"
    assert shown["backend"]["args"] == {"api_key": R}
    assert "args {'api_key': '<redacted>'}" in out.blobs["show: stdout"].decode()
