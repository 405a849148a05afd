"""The redaction rules one by one: what each form of secret becomes, what harmless text stays
as it is, and which names count as secret. Fake credentials are assembled at run time so the
repository itself passes `stackcheck hygiene`."""

from __future__ import annotations

import json
import os
import sys

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck import redaction
from stackcheck.models import snapshot as S
from stackcheck.redaction import (
    looks_secret,
    redact_argv,
    redact_snapshot,
    redact_text,
    redact_value,
)

R = "<redacted>"
GHP = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PAT = "github" + "_pat_" + "11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
HF = "hf" + "_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
SK = "sk" + "-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0"
ANT = "sk" + "-ant-" + "api03-Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8"
AKIA = "AK" + "IA" + "Q2W3E4R5T6Y7U8I9"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "1234567890"
BEGIN, END, PK = "-----BEGIN ", "-----END ", "PRIVATE" + " KEY"

# --------------------------------------------------------------------- URLs
URLS = [
    # (input, expected)
    (f"https://user:{GHP}@github.com/org/repo", "https://<redacted>@github.com/org/repo"),
    (f"https://{GHP}@github.com/org/repo.git", "https://<redacted>@github.com/org/repo.git"),
    (
        "git+https://alice:s3cr3t@github.com/org/priv.git@v1.0",
        "git+https://<redacted>@github.com/org/priv.git@v1.0",
    ),
    ("https://alice:pa/ss@pypi.example.com/simple", "https://<redacted>@pypi.example.com/simple"),
    ("https://alice:pa@ss@pypi.example.com/simple", "https://<redacted>@pypi.example.com/simple"),
    ("https://alice:p@ss/w@rd@pypi.example.com/simple", "https://<redacted>@pypi.example.com/simple"),
    ("https://alice:a/b@c/d@pypi.example.com/simple", "https://<redacted>@pypi.example.com/simple"),
    ("https://alice:2024/x@10.0.0.5:8080/simple", "https://<redacted>@10.0.0.5:8080/simple"),
    (
        "git+https://user:pa/ss@github.com/org/repo.git@v1.0",
        "git+https://<redacted>@github.com/org/repo.git@v1.0",
    ),
    ("https://u:p@localhost:3141/root/dev", "https://<redacted>@localhost:3141/root/dev"),
    (
        "https://conda.anaconda.org/t/tk-0123-abcd/conda-forge",
        "https://conda.anaconda.org/t/<redacted>/conda-forge",
    ),
    (
        "https://gitlab.com/api/v4/projects/7/packages/pypi/simple?private_token=glpat-Xy12&x=1",
        "https://gitlab.com/api/v4/projects/7/packages/pypi/simple?private_token=<redacted>&x=1",
    ),
    (
        "https://hf.example.com/?token=abc123&access_token=def456",
        "https://hf.example.com/?token=<redacted>&access_token=<redacted>",
    ),
    (
        "https://maps.example.com/q?key=AIzaSy0123&api_key=1&apikey=2&password=3&secret=4",
        (
            "https://maps.example.com/q?key=<redacted>&api_key=<redacted>&apikey=<redacted>&password=<redacted>"
            "&secret=<redacted>"
        ),
    ),
    (
        f"https://b.s3.amazonaws.com/k?X-Amz-Credential={AKIA}%2F2024&X-Amz-Signature=deadbeef&X-Amz-Date=2024",
        "https://b.s3.amazonaws.com/k?X-Amz-Credential=<redacted>&X-Amz-Signature=<redacted>&X-Amz-Date=2024",
    ),
    (
        "https://acct.blob.core.windows.net/c/b?sv=2022&sig=abc%2Fdef&se=2025",
        "https://acct.blob.core.windows.net/c/b?sv=2022&sig=<redacted>&se=2025",
    ),
    (
        "https://app.example.com/cb#access_token=xyz789&state=1",
        "https://app.example.com/cb#access_token=<redacted>&state=1",
    ),
    ("postgresql://bob:hunter2@db.internal:5432/ledger", "postgresql://<redacted>@db.internal:5432/ledger"),
    (
        "(fetched https://h.example.com/f?token=abc123).",
        "(fetched https://h.example.com/f?token=<redacted>).",
    ),
    (
        "https://a:1@x.example.com https://b:2@y.example.com",
        "https://<redacted>@x.example.com https://<redacted>@y.example.com",
    ),
]
# URLs whose "@" is not userinfo stay as they are
KEPT_URLS = [
    "git+https://github.com/org/repo.git@v1.0",
    "git+https://github.com/org/repo@feature/x",
    "git+https://gitlab.local:8443/org/repo.git@v1.0",
    "file:///home/me/src/pkg",
    "https://registry.npmjs.org/@scope/pkg",
    "https://download.pytorch.org/whl/cu121",
    "https://pypi.org/simple?page=2&sort=name",
]


@pytest.mark.parametrize(("text", "expected"), URLS)
def test_url_credentials(text, expected):
    assert redact_text(text) == expected
    assert redact_text(expected) == expected  # idempotent


@pytest.mark.parametrize("text", KEPT_URLS)
def test_urls_without_credentials_are_kept(text):
    assert redact_text(text) == text


# --------------------------------------------------------------------- shapes, headers, names in text
TEXTS = [
    (f"token {GHP} in a log", "token <redacted> in a log"),
    (f"pat={PAT}", "pat=<redacted>"),
    (f"loading with {HF}", "loading with <redacted>"),
    (f"client = OpenAI(api_key='{SK}')", "client = OpenAI(api_key='<redacted>')"),
    (f"key {ANT} expired", "key <redacted> expired"),
    (f"id {AKIA} used", "id <redacted> used"),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = <redacted>"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln", "Authorization: Bearer <redacted>"),
    ("authorization: Basic dXNlcjpwYXNzd29yZA==", "authorization: Basic <redacted>"),
    (
        f"curl -H 'Authorization: token {GHP}' https://api.github.com",
        "curl -H 'Authorization: token <redacted>' https://api.github.com",
    ),
    ('{"Authorization": "Bearer abcdefgh12345678"}', '{"Authorization": "Bearer <redacted>"}'),
    ("PRIVATE-TOKEN: glpat-abcdef123456", "PRIVATE-TOKEN: <redacted>"),
    ("Cookie: session=abc123; theme=dark", "Cookie: <redacted>"),
    ("sending bearer abcdefghij0123 upstream", "sending bearer <redacted> upstream"),
    ("export HF_TOKEN=hunter2hunter2 && python train.py", "export HF_TOKEN=<redacted> && python train.py"),
    (
        "MLFLOW_TRACKING_PASSWORD='p w' WANDB_API_KEY=abc",
        "MLFLOW_TRACKING_PASSWORD='<redacted>' WANDB_API_KEY=<redacted>",
    ),
    ("--IdentityProvider.token=abc123", "--IdentityProvider.token=<redacted>"),
    ("--ServerApp.password=argon2:$argon2id$v=19$m=10240", "--ServerApp.password=<redacted>"),
    (
        "vllm serve m --api-key s3cr3t-value --max-tokens 512",
        "vllm serve m --api-key <redacted> --max-tokens 512",
    ),
    ('{"password": "hunter2", "user": "bob"}', '{"password": "<redacted>", "user": "bob"}'),
    ("{'client_secret': 'xyz', 'scope': 'read'}", "{'client_secret': '<redacted>', 'scope': 'read'}"),
    (
        "import os; os.environ['DB_PASSWORD'] = 'hunter2'",
        "import os; os.environ['DB_PASSWORD'] = '<redacted>'",
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zm9vYmFy==;EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=<redacted>;EndpointSuffix=core.windows.net",
    ),
    (
        f"{BEGIN}RSA {PK}-----\nMIIEowIBAAKCAQEA\n{END}RSA {PK}-----",
        f"{BEGIN}RSA {PK}----- <redacted> {END}RSA {PK}-----",
    ),
    (
        f"{BEGIN}OPENSSH {PK}-----\nb3BlbnNzaC1rZXk (truncated paste",
        f"{BEGIN}OPENSSH {PK}----- <redacted> {END}OPENSSH {PK}-----",
    ),
]
# what triage and reports show every day must stay readable
KEPT_TEXTS = [
    "KeyError: 'model.layers.0.self_attn.q_proj.weight'",
    "sorted(items, key=lambda kv: kv[1])",
    "TOKENIZERS_PARALLELISM=false",
    "tokenizer = AutoTokenizer.from_pretrained(name, eos_token='</s>', pad_token_id=0)",
    "generate(max_tokens=512, max_new_tokens=128)",
    "torch==2.5.1; extra == 'cuda'",
    "tokenizers<0.22,>=0.21",
    "Requires-Dist: keyring>=23; extra == 'secure'",
    "sk-learn-style-prefixes-are-not-keys-at-all",
    "author=alice pass_rate=0.95 SSH_AUTH_SOCK=/tmp/agent.1",
    "Basic usage: stackcheck preflight",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
    f"wandb: commit {'a1' * 20}",  # a W&B key is only known by context: hygiene's business
    "https://<redacted>@github.com/org/repo",
]


@pytest.mark.parametrize(("text", "expected"), TEXTS)
def test_text_rules(text, expected):
    assert redact_text(text) == expected
    assert redact_text(expected) == expected


@pytest.mark.parametrize("text", KEPT_TEXTS)
def test_harmless_text_is_kept(text):
    assert redact_text(text) == text


# --------------------------------------------------------------------- names
SECRET_NAMES = [
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "MYTOKEN",
    "OPENAI_API_KEY",
    "APIKEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN",
    "WANDB_API_KEY",
    "MLFLOW_TRACKING_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD",
    "DB_PASS",
    "GITLAB_PAT",
    "JUPYTER_TOKEN",
    "HTTP_AUTHORIZATION",
    "HTTP_AUTH",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "SSH_PASSPHRASE",
    "AZURE_CLIENT_SECRET",
    "SESSION_COOKIE",
    "HF_TOKEN_2",
    "X-Amz-Signature",
    "X-Amz-Credential",
    "X-Amz-Security-Token",
    "sig",
    "private_token",
    "access_token",
    "accessToken",
    "IdentityProvider.token",
    "--ServerApp.password",
    "AccountKey",
    "key",
    "token",
    "jwt",
]
PLAIN_NAMES = [
    "TOKENIZERS_PARALLELISM",
    "max_tokens",
    "max_new_tokens",
    "eos_token",
    "pad_token_id",
    "token_type_ids",
    "experts_per_token",
    "identity_key",
    "sort_key",
    "KEYRING_PROVIDER",
    "PIP_KEYRING_PROVIDER",
    "SSH_AUTH_SOCK",
    "pass_rate",
    "PWD",
    "OLDPWD",
    "PATH",
    "PYTHONPATH",
    "CUDA_VISIBLE_DEVICES",
    "HF_HOME",
    "author",
    "signal",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names(name):
    assert looks_secret(name) and looks_secret(name, strict=True)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_plain_names(name):
    assert not looks_secret(name)


def test_strict_names_also_take_the_words_anywhere():
    # what a child process may inherit: a false alarm costs nothing there
    for name in ("TOKENIZERS_PARALLELISM", "KEYRING_PROVIDER", "SSH_AUTH_SOCK", "XSECRETX", "APITOKENS"):
        assert looks_secret(name, strict=True)
    assert not looks_secret("CUDA_VISIBLE_DEVICES", strict=True)


# --------------------------------------------------------------------- structures
def test_argv_option_values_and_inline_values():
    argv = [
        "python",
        "-m",
        "ipykernel_launcher",
        "-f",
        "{connection_file}",
        "--IdentityProvider.token=abc",
        "--NotebookApp.token=def",
        "--ServerApp.token",
        "ghi",
        "--ServerApp.password=sha1:xyz",
        "--debug",
    ]
    assert redact_argv(argv) == [
        "python",
        "-m",
        "ipykernel_launcher",
        "-f",
        "{connection_file}",
        "--IdentityProvider.token=<redacted>",
        "--NotebookApp.token=<redacted>",
        "--ServerApp.token",
        R,
        "--ServerApp.password=<redacted>",
        "--debug",
    ]
    clean = ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    assert redact_argv(clean) is clean  # nothing to do: the same list back


def test_nested_values_by_key_and_text():
    data = {
        "api_key": "abc",
        "HF_TOKEN": ["one", "two"],
        "max_tokens": "512",
        "identity_key": "sha256:00",
        "args": {"endpoint": "https://u:p@api.example.com/v1", "attn": "sdpa", "password": 7},
        "rows": [("--token", "xyz"), {"secret": None}],
    }
    assert redact_value(data) == {
        "api_key": R,
        "HF_TOKEN": [R, R],
        "max_tokens": "512",
        "identity_key": "sha256:00",
        "args": {"endpoint": "https://<redacted>@api.example.com/v1", "attn": "sdpa", "password": 7},
        "rows": [("--token", R), {"secret": None}],
    }
    clean = {"a": ["b", {"c": "d"}]}
    assert redact_value(clean) is clean


def test_structs_frozen_or_not():
    class Frozen(msgspec.Struct, frozen=True):
        url: str
        n: int = 0

    f = Frozen(url="https://u:p@h.example.com/x", n=3)
    assert redact_value(f) == Frozen(url="https://<redacted>@h.example.com/x", n=3)
    d = S.Distribution(name="x", version="1", location="/s", direct_url=f"git+https://{GHP}@github.com/o/x")
    assert redact_value(d) is d and d.direct_url == "git+https://<redacted>@github.com/o/x"


def test_snapshot_env_keeps_listing_redacted_names():
    variables = {
        "HF_TOKEN": "raw-token-value",
        "PIP_INDEX_URL": "https://a:b@pypi.example.com/simple",
        "CUDA_HOME": "/usr/cuda",
        "TOKENIZERS_PARALLELISM": "false",
    }
    snap = S.Snapshot(env=S.EnvSection(status="ok", variables=variables, redacted=["OLD_NAME"]))
    redact_snapshot(snap)
    assert snap.env.variables == {
        "HF_TOKEN": R,
        "PIP_INDEX_URL": f"https://{R}@pypi.example.com/simple",
        "CUDA_HOME": "/usr/cuda",
        "TOKENIZERS_PARALLELISM": "false",
    }
    assert snap.env.redacted == ["HF_TOKEN", "OLD_NAME", "PIP_INDEX_URL"]
    encoded = msgspec.json.encode(snap)
    assert b"raw-token-value" not in encoded and b"_stackcheck" not in encoded


def test_recorded_snapshots_pass_unchanged():
    # the layer must not change a clean snapshot: the machines users have
    from tests.factories import SNAPSHOTS

    for path in sorted(SNAPSHOTS.glob("*.json")):
        before = msgspec.json.decode(path.read_bytes(), type=S.Snapshot)
        after = redact_snapshot(msgspec.json.decode(path.read_bytes(), type=S.Snapshot))
        assert msgspec.json.encode(after) == msgspec.json.encode(before), path.name


def test_hygiene_scans_with_the_same_shapes():
    from stackcheck.hygiene import secrets

    assert secrets._COMPILED is redaction.compiled_shapes()
    kinds = [s.kind for s in secrets.find_secrets(f"{GHP}\n{HF}\n{AKIA}\n")]
    assert kinds == ["GitHub token", "Hugging Face token", "AWS access key id"]


# --------------------------------------------------------------------- child processes
_CHILD_NAMES = [
    "HF_TOKEN",
    "GITHUB_TOKEN",
    "OPENAI_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "MLFLOW_TRACKING_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD",
    "DB_PASS",
    "GITLAB_PAT",
    "JUPYTER_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "HTTP_AUTHORIZATION",
    "APITOKENS",
    "my_lower_secret",
]
CHILD_SECRETS = {name: f"child-value-{i}" for i, name in enumerate(_CHILD_NAMES)}


def test_sanitized_env_drops_secret_names(monkeypatch):
    from stackcheck.probe.proc import sanitized_env

    for name, value in CHILD_SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.setenv("PYTHONSTARTUP", "/tmp/evil.py")
    env = sanitized_env({"EXTRA_TOKEN": "given on purpose"})
    assert not set(CHILD_SECRETS) & set(env)
    assert env["CUDA_VISIBLE_DEVICES"] == "0" and "PYTHONSTARTUP" not in env
    assert env["EXTRA_TOKEN"] == "given on purpose"


def test_a_real_child_process_sees_no_secret(monkeypatch):
    from stackcheck.probe.proc import run

    for name, value in CHILD_SECRETS.items():
        monkeypatch.setenv(name, value)
    done = run([sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"], timeout=30)
    assert done.ok, done.stderr
    seen = json.loads(done.stdout)
    assert not set(CHILD_SECRETS) & set(seen)
    assert not [v for v in CHILD_SECRETS.values() if v in done.stdout]
    assert seen["PATH"] == os.environ["PATH"]


# --------------------------------------------------------------------- URL forms, generated

_PW_CHARS = st.sampled_from(list("abcXYZ019/@:!$&()*+,;=-._~%"))
_HOSTS = st.one_of(
    st.builds(
        "{}.{}".format,
        st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True),
        st.sampled_from(["com", "org", "internal"]),
    ),
    st.just("localhost"),
    st.builds("10.{}.{}.{}".format, *[st.integers(0, 255)] * 3),
)


@st.composite
def credential_urls(draw):
    password = "Zq9" + "".join(draw(st.lists(_PW_CHARS, min_size=1, max_size=12)))
    user = draw(st.sampled_from(["", "alice", "__token__", "oauth2"]))
    userinfo = f"{user}:{password}" if user else password
    host = draw(_HOSTS) + draw(st.sampled_from(["", ":8443", ":3141"]))
    path = draw(
        st.sampled_from(["", "/", "/simple", "/org/repo.git", "/org/repo.git@v1.0", "/org/repo@feature/x"])
    )
    query = draw(st.sampled_from(["", "?page=2", "#egg=pkg"]))
    scheme = draw(st.sampled_from(["https://", "git+https://", "http://", "postgresql://", "ftp://"]))
    around = draw(st.sampled_from(["{}", "see {} now", "({}).", "URL={}", "'{}'"]))
    return password, host, around.format(f"{scheme}{userinfo}@{host}{path}{query}")


@settings(derandomize=True, deadline=None, max_examples=400, database=None)
@given(credential_urls())
def test_generated_credential_urls(case):
    password, host, text = case
    out = redact_text(text)
    assert password not in out and "Zq9" not in out
    assert f"<redacted>@{host}" in out  # the host stays for debugging
    assert redact_text(out) == out


# --------------------------------------------------------------------- library entry points
def test_complete_redacts_a_snapshot_handed_in_by_a_caller(tmp_path):
    # results.record(snapshot=Snapshot) from a script: the object never went through
    # environment.obtain_snapshot, and the record is write-once
    from stackcheck.results.contract import ProfileRef
    from stackcheck.results.recording import complete, load_draft

    variables = {"HF_TOKEN": HF, "PIP_INDEX_URL": "https://a:pw1x@p.example.com/s"}
    env = S.EnvSection(status="ok", variables=variables)
    dist = S.Distribution(
        name="x", version="1", location="/s", direct_url=f"git+https://{GHP}@github.com/o/x"
    )
    snap = S.Snapshot(env=env, packages=S.PackagesSection(status="ok", distributions=[dist]))
    draft = load_draft(
        {
            "topic": "t",
            "run_label": "r",
            "profile": "P",
            "model": {"id": "m"},
            "backend": {"name": "vllm"},
            "workload": {"kind": "inference"},
            "metrics": {"ms": {"value": 1.0}},
            "notes": f"token {GHP}",
            "git": {"commit": "f" * 40},
        }
    )
    rec = complete(draft, snap, (ProfileRef(id="P"), "cpu-smoke"), cwd=tmp_path)
    encoded = msgspec.json.encode(rec)
    assert not [v for v in (HF, GHP, "pw1x") if v.encode() in encoded]
    assert rec.snapshot.env.redacted == ["HF_TOKEN", "PIP_INDEX_URL"] and rec.notes == "token <redacted>"
    assert rec.snapshot.packages.distributions[0].direct_url == "git+https://<redacted>@github.com/o/x"


def test_kernelspecs_are_read_redacted(tmp_path):
    from stackcheck.probe.kernels import find_kernelspecs

    spec = tmp_path / "kernels" / "k"
    spec.mkdir(parents=True)
    head = ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    argv = [*head, "--ServerApp.token=tok123", "--ServerApp.password", "pw456"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python"}))
    (found,) = find_kernelspecs([str(tmp_path)])
    assert found.argv == [*head, "--ServerApp.token=<redacted>", "--ServerApp.password", R]
    assert found.bare_python
