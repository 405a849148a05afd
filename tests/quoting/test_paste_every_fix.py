"""The paste-every-fix test: every command stackcheck can print, pasted into bash in a sandbox,
runs exactly the argv it shows and nothing else.

Fixes come from preflight (plain and --deep) and doctor over every recorded snapshot × every
built-in profile, the same snapshots as if taken from an interpreter whose path holds every
shell payload, hand-made environments with every isolation, integrity and kernel fault named
by payloads, a profile whose ID is a payload (the library accepts one; the catalog does not),
the accept steps, ``kernel check``, the hygiene scan of a repository whose file names are
payloads, and the evidence ladder's refusal of a record filed under hostile labels.
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
from pathlib import Path

import msgspec
import pytest

from stackcheck.catalog import load_catalog
from stackcheck.checks.context import Context
from stackcheck.environment import load_snapshot
from stackcheck.identifiers import printable
from stackcheck.judge import judge
from stackcheck.knowledge import load_knowledge
from stackcheck.models.finding import by_severity_then_cause
from stackcheck.render.text import report_text
from tests.factories import SNAPSHOTS
from tests.quoting import hostile as H
from tests.quoting.sandbox import STRAY, Sandbox, commands_in

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory):
    return Sandbox(tmp_path_factory.mktemp("sandbox"))


@pytest.fixture(scope="module")
def interpreter(sandbox):
    """(python, prefix): a logging stub at a path that holds every payload."""
    python, prefix = H.hostile_python(sandbox.root / "envs")
    sandbox.stub(Path(python))
    return python, prefix


def _fixes(report, origin: str):
    combined = [(origin, "fix_all", f) for f in report.fix_all]
    return [(origin, c.id, c.fix) for c in report.checks if c.fix] + combined


def judged_fixes(python: str, prefix: str) -> list[tuple[str, str, str]]:
    catalog = load_catalog(None)
    profiles = [catalog.get(pid) for pid in catalog.ids(include_bases=True)]
    snapshots = {p.stem: load_snapshot(str(p)) for p in sorted(SNAPSHOTS.glob("*.json"))}
    snapshots.update(
        {
            f"{name} (hostile interpreter)": H.with_interpreter(s, python, prefix)
            for name, s in list(snapshots.items())
        }
    )
    snapshots.update(
        {
            "broken environment": H.broken_environment(python, prefix),
            "old-driver V100": H.gpu_machine(python, prefix),
            "CPU torch on a V100": H.gpu_machine(python, prefix, cpu_torch=True),
            "CPU-only runner": H.cpu_runner(python, prefix),
            "externally managed (PEP 668)": H.externally_managed(H.broken_environment(python, prefix)),
            "externally managed V100": H.externally_managed(H.gpu_machine(python, prefix, cpu_torch=True)),
        }
    )
    out = []
    for name, snap in snapshots.items():
        out += _fixes(judge(snap, command="doctor"), f"doctor {name}")
        for profile in [*profiles, H.hostile_profile()]:
            for deep in (False, True):
                out += _fixes(
                    judge(snap, command="preflight", profile=profile, deep=deep),
                    f"preflight {profile.id} {name}",
                )
    return out


def accept_fixes(python: str, prefix: str) -> list[tuple[str, str, str]]:
    from stackcheck.accept.steps import ChildRun, Needs, judge_gpu, judge_numpy, judge_roundtrip, judge_train
    from stackcheck.models.profile import GpuRequirement, Profile

    pip = Context(snapshot=H.gpu_machine(python, prefix)).pip_install
    gpu = Profile(
        id="GPU-PROFILE", requirements=["torch>=2.6", "numpy", "safetensors"], gpu=GpuRequirement(min_count=1)
    )
    needs = [
        Needs(None, pip, python=python),
        Needs(gpu, pip, python=python),
        Needs(
            H.hostile_profile(),
            pip,
            python=python,
            gpus=1,
            rerun=("--python", python, "--profile", H.hostile_profile().id, "--repo", f"/r{H.PAYLOADS[0]}"),
            timeout=2.5,
        ),
    ]
    crashed = ChildRun(None, "exit 1: boom", "", 0.1)
    timed_out = ChildRun(None, "timeout after 2.5 s", "", 2.5, timed_out=True)
    gpu_ok = {
        "torch": "2.8.0",
        "cuda_build": "12.8",
        "device": "cuda",
        "device_name": "V100",
        "max_abs_diff": 9.0,
        "max_abs": 1.0,
        "finite": True,
        "n": 8,
    }
    runs = [
        (judge_numpy, ChildRun({"numpy": "2.1", "errors": {"solve": 0.5}}, None, "", 0.1)),
        (judge_numpy, ChildRun({"missing": "numpy"}, None, "", 0.1)),
        (
            judge_train,
            ChildRun(
                {"torch": "2.8", "losses": [1.0, 1.0], "grads_finite": True, "parameters": 1, "threads": 1},
                None,
                "",
                0.1,
            ),
        ),
        (judge_train, ChildRun({"missing": "torch"}, None, "", 0.1)),
        (judge_gpu, crashed),
        (judge_gpu, ChildRun(gpu_ok, None, "", 0.1)),
        (judge_gpu, ChildRun(dict(gpu_ok, error="no kernel image"), None, "", 0.1)),
        (judge_gpu, ChildRun({"torch": "2.8.0+cpu", "cuda_build": None, "device": None}, None, "", 0.1)),
        (judge_gpu, ChildRun({"torch": "2.8.0", "cuda_build": "12.8", "device": None}, None, "", 0.1)),
        (judge_numpy, crashed),
        (judge_train, crashed),
        (judge_train, timed_out),
        (judge_gpu, ChildRun({"missing": ["torch"]}, None, "", 0.1)),
    ]
    out = []
    for n in needs:
        for judge_step, run in runs:
            r = judge_step(run, n)
            if r.fix:
                out.append((f"accept {judge_step.__name__}", r.id, r.fix))
        for saved in (crashed, timed_out, ChildRun({"missing": ["torch", "safetensors"]}, None, "", 0.1)):
            r = judge_roundtrip(saved, None, n)
            if r.fix:
                out.append(("accept judge_roundtrip", r.id, r.fix))
    return out


def kernel_fixes(python: str, tmp_path) -> list[tuple[str, str, str]]:
    from stackcheck.models.snapshot import Kernelspec
    from stackcheck.notebook.check import check_kernels, judge_kernel
    from stackcheck.notebook.interpreter import InterpreterFacts

    name = H.NAME
    path = str(tmp_path / "kernels" / "k" / "kernel.json")
    bare = Kernelspec(name=name, path=path, argv=["python"], bare_python=True)
    spec = Kernelspec(name=name, path=path, argv=[python], interpreter=python)
    env = {"PYTHONPATH": f"/gone{H.PAYLOADS[0]}"}
    facts = [
        None,
        InterpreterFacts(path=python, ran=False, error="timeout"),
        InterpreterFacts(
            path=python, ran=True, executable="/usr/bin/python3", prefix="/usr", version="3.12.3"
        ),
        InterpreterFacts(
            path=python,
            ran=True,
            executable=python,
            prefix=os.path.dirname(os.path.dirname(python)),
            version="3.12.3",
        ),
    ]
    results = judge_kernel(bare, env, None) + [r for f in facts for r in judge_kernel(spec, env, f)]
    results += check_kernels([name], data_dirs=[str(tmp_path / "no-kernels")]).checks
    return [("kernel check", r.id, r.fix) for r in results if r.fix]


def hygiene_fixes(tmp_path) -> list[tuple[str, str, str]]:
    from stackcheck.hygiene import scan
    from tests.hygiene.conftest import SECRETS, Evil, code_cell, notebook, plant

    out = []
    for mode in ("walk", "git"):
        repo = tmp_path / f"repo-{mode}"
        d = "d " + " ".join(p for p in H.PAYLOADS if "/" not in p)
        files = {
            f"{d}/__pycache__/m.pyc": b"\x00" * 16,
            f"{d}/-rf.so": b"\x7fELF",
            f"{d}/w{H.PAYLOADS[0]}.safetensors": b"\x00" * 4096,
            f"{d}/evil.pkl": pickle.dumps(Evil(str(tmp_path / "PWNED")), protocol=4),
            f"{d}/keys.py": f'HF_TOKEN = "{SECRETS["hf"]}"\n',
            f"-{d}.ipynb": notebook(
                [
                    code_cell(
                        "print(1)",
                        [
                            {
                                "output_type": "stream",
                                "name": "stdout",
                                "text": [f"token: {SECRETS['notebook']}\n"],
                            }
                        ],
                    )
                ]
            ),
            f"{d}/load.py": "m = AutoModel.from_pretrained('org/x', trust_remote_code=True)\n",
        }
        plant(repo, files)
        if mode == "git":
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            subprocess.run(["git", "-C", str(repo), "add", "-f", "--", *files], check=True)
        report = scan(str(repo), max_weight_size=1024)
        assert report.environment["mode"] == mode
        out += [(f"hygiene ({mode})", c.id, c.fix) for c in report.checks if c.fix]
    assert not (tmp_path / "PWNED").exists()
    return out


def ladder_fixes(tmp_path) -> list[tuple[str, str, str]]:
    from stackcheck.results import ladder
    from stackcheck.results.contract import Draft
    from stackcheck.results.recording import complete
    from stackcheck.results.recording import preflight as profile_ref
    from tests.results.conftest import REGISTRY, full_draft, snapshot_path

    reg = tmp_path / "registry.json"
    reg.write_text(msgspec.json.encode(REGISTRY).decode())
    catalog = load_catalog(str(reg))
    snap = load_snapshot(str(snapshot_path("h100-single")))
    out = []
    for label in (
        "r $(touch x)",
        "r `touch x`",
        "r; touch x",
        "it's",
        "a && b",
        "r\n touch x",
        "\x1b[2K\rforged",
    ):
        draft = msgspec.convert(
            full_draft(topic=f"t/{label}", run_label=label), Draft
        )  # as a hand-written record holds it
        rec = complete(draft, snap, profile_ref("LAB-GPU", snap, catalog=catalog), cwd=tmp_path)
        (line,) = [m for m in ladder.missing(rec, "delivery") if m.startswith("decision:")]
        out.append(("results promote --to delivery", label, line))
    return out


def fleet_fixes(python: str, prefix: str) -> list[tuple[str, str, str]]:
    """The fleet checks over two ranks of the hostile GPU machine, each fault carrying payloads
    (in NCCL values, interface and host names), and a collective that hung."""
    from stackcheck.fleet.collectives import Step, StepView, judge_step
    from stackcheck.fleet.judge import judge_fleet
    from stackcheck.models import snapshot as S

    out = []
    for payload in H.PAYLOADS[:3]:
        ranks = []
        for r in range(3):
            snap = H.gpu_machine(python, prefix)
            snap.launch = S.LaunchSection(status="ok", rank=r, world_size=3, clock_source="barrier")
            snap.launch.wall_clock_ns = 10**18 + (5 * 10**9 if r == 2 else 0)
            iface = f"eth{payload}" if r < 2 else "ib0"
            snap.network = S.NetworkSection(
                status="ok", hostname=f"node{payload}", interfaces=[S.NetInterface(name=iface, up=True)]
            )
            snap.env.variables["NCCL_SOCKET_IFNAME"] = iface if r < 2 else f"eth{payload}"
            snap.env.variables["NCCL_ALGO"] = f"Ring{payload}" if r < 2 else "Tree"
            snap.env.variables["NCCL_PROTO" if r == 1 else "NCCL_DEBUG"] = "INFO"
            snap.platform.shm_total_bytes, snap.platform.open_files_limit = 64 * 1024**2, 1024
            if r == 1:
                for d in snap.packages.distributions:
                    d.version = "0.1"
            ranks.append(snap)
        out += [("fleet compare", c.id, c.fix) for c in judge_fleet(ranks) if c.fix]
    hung = StepView("all_reduce", 3, 5.0, Step("all_reduce", 0, timed_out=True), arrived=[0])
    out.append(("accept --distributed", "FLT101", judge_step(hung).fix or ""))
    return out


def test_every_printed_command_runs_exactly_what_it_shows(sandbox, interpreter, tmp_path):
    python, prefix = interpreter
    fixes = (
        judged_fixes(python, prefix)
        + accept_fixes(python, prefix)
        + kernel_fixes(python, tmp_path)
        + hygiene_fixes(tmp_path)
        + ladder_fixes(tmp_path)
        + fleet_fixes(python, prefix)
    )
    static = {r.id: r.fix for r in load_knowledge().rules}
    pasted: dict[str, int] = {}
    with_command = 0
    for origin, check_id, fix in dict.fromkeys(fixes):
        text = fix
        if check_id in static:  # a rule's curated text, then the command for this machine
            assert fix == static[check_id] or fix.startswith(static[check_id] + " Command: "), (origin, fix)
            text = fix[len(static[check_id]) :]
        commands, prose = commands_in(text)
        assert not [w for w in STRAY if w in prose], (
            f"{origin} {check_id}: a command outside the shapes in {fix!r}"
        )
        with_command += bool(commands)
        for command in commands:
            if command not in pasted:
                pasted[command] = sandbox.check(command)
    for rule_fix in static.values():  # the curated texts' own examples paste as shown, too
        for command in commands_in(rule_fix)[0]:
            pasted.setdefault(command, sandbox.check(command))
    ids = {check_id for _, check_id, _ in fixes}
    assert ids >= {
        "ISO001",
        "ISO002",
        "ISO003",
        "ISO004",
        "DEP001",
        "DEP002",
        "DEP003",
        "DEP004",
        "DEP005",
        "KERN001",
        "KERN002",
        "KERN003",
        "KERN010",
        "KERN011",
        "KERN012",
        "KERN013",
        "PY001",
        "PKG001",
        "PKG002",
        "PKG003",
        "MOD001",
        "GPU001",
        "GPU002",
        "GPU003",
        "GPU004",
        "CUDA001",
        "CUDA002",
        "PLAT001",
        "ACC001",
        "ACC002",
        "ACC003",
        "ACC004",
        "HYG001",
        "HYG002",
        "HYG004",
        "HYG005",
        "HYG006",
        "r $(touch x)",
        "fix_all",
        "FLT002",
        "FLT007",
        "FLT008",
        "FLT009",
        "FLT010",
        "FLT013",
        "FLT014",
        "FLT101",
    }
    hostile = [c for c in pasted if "touch pwned" in c or "touch x" in c]
    texts = {fix for _, _, fix in fixes}
    # coverage guards (measured: 405 commands pasted, 105 carrying a payload)
    assert len(pasted) >= 400 and len(hostile) >= 100, (len(pasted), len(hostile))
    print(
        f"\n{len(texts)} distinct fix texts ({with_command} findings with a command); "
        f"{len(pasted)} distinct commands pasted, {len(hostile)} carrying a payload; "
        f"{sum(pasted.values())} simple commands ran, each as shown"
    )


def test_the_sandbox_sees_a_payload_run(sandbox):
    """The check is not vacuous: an unquoted payload runs in this sandbox and is seen."""
    logged, appeared = sandbox.run("python -m pip install $(touch pwned) `touch pwned2`; touch pwned3")
    assert (
        logged[0][0] == "touch"
        and ["python", "-m", "pip", "install"] in logged
        and ["touch", "pwned3"] in logged
    )
    assert appeared == {"pwned", "pwned2", "pwned3"}


def test_reports_print_one_line_per_fact_however_hostile(interpreter):
    python, prefix = interpreter
    for snap in (H.broken_environment(python, prefix), H.gpu_machine(python, prefix)):
        for report in (
            judge(snap, command="doctor"),
            judge(snap, command="preflight", profile=H.hostile_profile()),
        ):
            text = report_text(report, verbose=True)
            lines = text.splitlines()
            assert not CONTROL.search(text.replace("\n", ""))
            assert all(line.startswith("  ") for line in lines[1:]), [
                line for line in lines[1:] if not line.startswith("  ")
            ]
            shown = [line for line in lines if line.startswith("            fix:      ")]
            assert shown == [
                f"            fix:      {printable(c.fix)}"
                for c in by_severity_then_cause(report.checks)  # a cause before its consequences
                if c.fix and c.verdict in ("warning", "blocked")
            ]
