"""A throwaway git repository with one planted finding of every kind, and near-misses.

Secrets are assembled at run time so this file itself holds none a scanner would flag.
"""

from __future__ import annotations

import collections
import json
import os
import pickle
import subprocess
import sys

import pytest

HEX40 = "0123456789abcdef" * 2 + "01234567"
SECRETS = {
    "hf": "hf_" + "Ab3dEf6hIj" * 4,
    "openai": "sk-" + "proj-" + "Xy12Zw34" * 5,
    "anthropic": "sk-" + "ant-api03-" + "Qr56St78Uv" * 9,
    "wandb": "9f" * 20,
    "aws_id": "AKIA" + "Z7Y6X5W4V3U2T1S0",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Zq9Rt2Lk8P",
    "github": "ghp" + "_" + "Mn0Pq1Rs2T" * 4,
    "github_pat": "github" + "_pat_" + "11ABCDEFG0" * 6,
    "netrc": "s3cr3t-" + "netrc-" + "pa55word",
    "notebook": "hf_" + "Nb7Token9X" * 4,
}


class Evil:
    """Pickles to a call of os.system; only ever pickled here, never loaded."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def notebook(cells: list[dict]) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def code_cell(source: str, outputs: list[dict] | None = None) -> dict:
    return {
        "cell_type": "code",
        "source": source.splitlines(True),
        "outputs": outputs or [],
        "metadata": {},
        "execution_count": 1,
    }


def plant(root, files: dict[str, bytes | str]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())


@pytest.fixture
def planted_repo(tmp_path):
    repo = tmp_path / "repo"
    marker = tmp_path / "PWNED"
    s = SECRETS
    files = {
        # HYG001: one of each kind
        "src/config.py": (
            f'HF_TOKEN = "{s["hf"]}"\n'
            f'client = OpenAI(api_key="{s["openai"]}")\n'
            f'anthropic_key = "{s["anthropic"]}"\n'
            f'GH = "{s["github"]}"\n'
            f'PAT = "{s["github_pat"]}"\n'
        ),
        ".env": f"WANDB_API_KEY={s['wandb']}\nAWS_ACCESS_KEY_ID={s['aws_id']}\n"
        f"aws_secret_access_key = {s['aws_secret']}\n",
        "deploy/id_rsa": "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----\n",
        "home/.netrc": f"machine example.org\n  login me\n  password {s['netrc']}\n",
        # near-misses for HYG001
        "README.md": (
            "OpenAI keys start with the sk- prefix; scikit-learn is not sk-learn-style-prefixes-here.\n"
            f"Fixed in commit {HEX40}.\n"
            "Docs example: AKIAIOSFODNN7EXAMPLE\n"
        ),
        # HYG002 / near-miss: a small .bin under the threshold (random bytes, not a pickle)
        "models/big.safetensors": b"\x08\x00\x00\x00\x00\x00\x00\x00{}      " + os.urandom(4096),
        "models/small.bin": os.urandom(200),
        # HYG003
        "hub/models--org--tiny/blobs/0a1b": "weights",
        "hub/models--org--tiny/snapshots/abc/config.json": "{}",
        # HYG004
        "pkg/__pycache__/mod.cpython-311.pyc": b"\x00" * 16,
        "pkg/_C.so": b"\x7fELF" + b"\x00" * 32,
        "csrc/kernel.o": b"\x7fELF" + b"\x00" * 32,
        "pkg.egg-info/PKG-INFO": "Name: pkg\n",
        "cache/torch_extensions/fused/fused.so": b"\x7fELF",
        # HYG005 (token printed in an output) + HYG007 in a notebook cell
        "notebooks/train.ipynb": notebook(
            [
                {"cell_type": "markdown", "source": ["# Training\n"], "metadata": {}},
                code_cell(
                    "from huggingface_hub import whoami\nprint(whoami())",
                    [{"output_type": "stream", "name": "stdout", "text": [f"token: {s['notebook']}\n"]}],
                ),
                code_cell(
                    "%pip install transformers\n"
                    "m = AutoModel.from_pretrained('org/x', trust_remote_code=True)"
                ),
            ]
        ),
        # near-miss notebook: pinned revision, clean outputs
        "notebooks/clean.ipynb": notebook(
            [
                code_cell(
                    "m = AutoModel.from_pretrained('org/x', trust_remote_code=True, revision='4f2a9c1e')",
                    [{"output_type": "stream", "name": "stdout", "text": ["loaded\n"]}],
                ),
            ]
        ),
        # HYG006: a malicious pickle (protocol 4) and a protocol-0 one with a checkpoint name
        "checkpoints/evil.pkl": pickle.dumps({"state": Evil(str(marker))}, protocol=4),
        "checkpoints/old.ckpt": pickle.dumps(Evil(str(marker)), protocol=0),
        # near-miss: a pickle of plain containers only
        "checkpoints/safe.pt": pickle.dumps(collections.OrderedDict(w=[1.0, 2.0], b=(0,)), protocol=2),
        # HYG007 in Python + near-miss with a pinned revision
        "src/load.py": (
            "from transformers import AutoModel\n"
            "a = AutoModel.from_pretrained('org/x', trust_remote_code=True)\n"
            "b = AutoModel.from_pretrained(\n    'org/x',\n    trust_remote_code=True,\n"
            "    revision='0f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4',\n)\n"
            "c = AutoModel.from_pretrained('org/x', trust_remote_code=True, revision='main', "
            f"token='{s['hf']}')\n"
        ),
        # a file in the work tree that git does not track: never scanned in git mode
        "untracked-notes.txt": f"{s['hf']}\n",
    }
    plant(repo, files)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tracked = [f for f in files if f != "untracked-notes.txt"]
    subprocess.run(["git", "-C", str(repo), "add", "-f", "--", *tracked], check=True)
    return repo


@pytest.fixture
def secrets():
    return dict(SECRETS)


@pytest.fixture
def cli():
    """Run the real command line; stdout and stderr kept apart."""

    def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "stackcheck", *args], capture_output=True, text=True, cwd=cwd, timeout=120
        )

    return run
