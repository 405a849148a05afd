"""One redaction layer for every value that leaves the process.

What counts as a secret, in one place:

- **credentials in URLs**: the userinfo (``https://user:pass@host`` → ``https://<redacted>@host``;
  a password holding an unencoded ``/`` or ``@`` is cut up to the last ``@`` before the host),
  token path segments (conda's ``/t/<token>/``) and secret-named query parameters
  (``?private_token=``, ``&sig=``, ``X-Amz-Signature=`` …);
- **known token shapes** (GitHub, Hugging Face, OpenAI, Anthropic, AWS, private key blocks):
  :data:`TOKEN_SHAPES`, which ``hygiene.secrets`` also scans with;
- **secret-named values**: ``NAME=value``, ``--opt.token=value``, ``--password value``,
  ``"api_key": "value"`` in text, and the values of secret-named keys in nested data
  (:func:`looks_secret` decides what a secret name is);
- ``Authorization:`` / ``Cookie:`` / ``PRIVATE-TOKEN:`` headers and bare ``Bearer`` credentials.

:func:`redact_text` cleans one string, :func:`redact_value` walks dicts, lists and msgspec
Structs, :func:`redact_snapshot` a whole snapshot (its env section keeps listing the names
whose values were redacted). Everything is idempotent and keeps what is needed to debug: the
host and path of a URL, the name of a variable, the scheme of an Authorization header.

Standard library only and Python 3.8 compatible: ``probe/interpreter.py`` loads this file by
path when it runs as a script inside another interpreter (``--python``), so the facts it
prints and the metadata cache it writes are redacted where they are made.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re

__all__ = [
    "CONTEXT_ONLY",
    "NEEDS_MIX",
    "REDACTED",
    "TOKEN_SHAPES",
    "compiled_shapes",
    "looks_secret",
    "mixed",
    "redact_argv",
    "redact_env",
    "redact_snapshot",
    "redact_text",
    "redact_value",
    "shape_matches",
]

REDACTED = "<redacted>"

# ------------------------------------------------------------------ token shapes
# kind → (literal anchors, pattern). A kind's regex only runs over a text that contains one
# of its anchors (a C substring search). Where a pattern has a group, group 1 is the secret
# and the rest is context. Prefixes as published by the issuers (GitHub "About
# authentication", Hugging Face "User access tokens", OpenAI / Anthropic key formats, AWS IAM
# "Unique identifiers").
TOKEN_SHAPES = {
    "private key": (("PRIVATE KEY",), r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    "Anthropic API key": (("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    "OpenAI API key": (("sk-",), r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    "Hugging Face token": (("hf_",), r"\bhf_[A-Za-z0-9]{30,}\b"),
    "GitHub token": (
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b",
    ),
    "AWS access key id": (("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "AWS secret access key": (
        ("aws_secret", "AWS_SECRET", "Aws_Secret"),
        (
            r"(?i:aws_secret_access_key|aws_secret_key)[\"']?\s*[:=]\s*[\"']?"
            r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
    ),
    "W&B API key": (("wandb", "WANDB", "Wandb", "WandB"), r"(?i:wandb)[^\n]{0,120}?\b([0-9a-f]{40})\b"),
}
# Random tokens mix letters and digits; prose such as "sk-learn-style-prefixes" does not.
NEEDS_MIX = frozenset({"Anthropic API key", "OpenAI API key", "Hugging Face token", "GitHub token"})
# Shapes known only from their context: a W&B key is any 40-hex string near "wandb", which in
# free text is as often a commit (``git+https://github.com/wandb/wandb@<sha>``). Hygiene scans
# for them; the redaction layer leaves them to the secret-name rules (WANDB_API_KEY=…).
CONTEXT_ONLY = frozenset({"W&B API key"})
# Patterns are compiled on first use (most runs never need most of them): importing this
# module stays cheap on the fast path.
_rx = functools.lru_cache(maxsize=None)(re.compile)  # functools.cache: Python >= 3.9


@functools.lru_cache(maxsize=None)  # noqa: UP033 - Python 3.8 (see the module docstring)
def compiled_shapes():
    """kind → (anchors, compiled pattern) of :data:`TOKEN_SHAPES`."""
    return {kind: (anchors, _rx(pattern)) for kind, (anchors, pattern) in TOKEN_SHAPES.items()}


def mixed(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def shape_matches(text: str, kinds=None):
    """(kind, start, end, value) for every token shape found in ``text``; ``value`` is the
    secret (group 1 where the pattern has context around it). Shapes that need a mix of
    letters and digits and lack it are skipped."""
    for kind, (anchors, pattern) in TOKEN_SHAPES.items():
        if (kinds is not None and kind not in kinds) or not any(a in text for a in anchors):
            continue
        regex = _rx(pattern)  # only the shapes whose anchors the text holds are compiled
        group = 1 if regex.groups else 0
        for m in regex.finditer(text):
            value = m.group(group)
            if kind in NEEDS_MIX and not mixed(value):
                continue
            yield kind, m.start(group), m.end(group), value


_TEXT_SHAPES = frozenset(k for k in TOKEN_SHAPES if k not in CONTEXT_ONLY and k != "private key")
_PRIVATE_KEY_BLOCK = (
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
)

# ------------------------------------------------------------------ secret names
_WORDS = r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"
_ANYWHERE = ("secret", "passw", "passphrase", "credential", "authoriz")
_ENDINGS = ("token", "key", "bearer")  # a word ending so: MYTOKEN, APIKEY, AccountKey
_LAST = ("auth", "cookie")  # only as the name's last word: HTTP_AUTH, but not SSH_AUTH_SOCK
_LAST_WHOLE = frozenset({"pwd", "pass", "pat", "sig", "signature", "sas", "jwt"})  # DB_PASS, &sig=
_STRICT = ("TOKEN", "KEY", "SECRET", "PASSW", "CREDENTIAL", "AUTH")
# Words around TOKEN / KEY that make a name no credential: model-side tokens (eos_token,
# max_tokens, pad_token_id, experts_per_token), our own identity_key, sort keys …
_NOT_BEFORE = {
    "token": frozenset(
        {
            "per",
            "max",
            "min",
            "num",
            "special",
            "pad",
            "bos",
            "eos",
            "unk",
            "sep",
            "cls",
            "mask",
            "start",
            "end",
            "stop",
            "first",
            "last",
            "next",
            "input",
            "output",
            "new",
            "total",
            "image",
            "audio",
            "video",
            "vision",
            "default",
            "chat",
            "added",
            "extra",
            "additional",
            "decoder",
            "encoder",
            "prompt",
            "completion",
            "generated",
        }
    ),
    "key": frozenset(
        {
            "identity",
            "sort",
            "cache",
            "primary",
            "foreign",
            "partition",
            "lookup",
            "group",
            "index",
            "public",
            "row",
            "shard",
            "routing",
            "dict",
            "map",
        }
    ),
}
_NOT_AFTER = {
    "token": frozenset(
        {
            "id",
            "ids",
            "type",
            "types",
            "count",
            "counts",
            "len",
            "length",
            "size",
            "index",
            "limit",
            "budget",
            "usage",
            "embeddings",
        }
    )
}


@functools.lru_cache(maxsize=4096)
def looks_secret(name: str, strict: bool = False) -> bool:
    """Whether a variable, key, option or query parameter name holds a secret.

    The name is split into words (``_ - .``, camelCase). It is secret when a word contains
    SECRET, PASSW(OR)D, PASSPHRASE, CREDENTIAL or AUTHORIZ; or ends in TOKEN, KEY or BEARER;
    or the last word ends in AUTH or COOKIE or is PWD, PASS, PAT, SIG, SIGNATURE, SAS or JWT:
    HF_TOKEN, MYTOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, MYSQL_PWD, X-Amz-Signature,
    IdentityProvider.token. Not: TOKENIZERS_PARALLELISM, max_tokens, eos_token, pad_token_id,
    KEYRING_PROVIDER, identity_key, SSH_AUTH_SOCK, pass_rate, PWD.
    ``strict`` (for what a child process may inherit) also takes TOKEN, KEY, SECRET, PASSW,
    CREDENTIAL or AUTH anywhere in the name: a false alarm there costs nothing."""
    if strict and any(part in name.upper() for part in _STRICT):
        return True
    words = [w.lower().rstrip("0123456789") for w in _rx(_WORDS).split(name) if w]
    last = len(words) - 1
    for i, word in enumerate(words):
        if not word:
            continue
        if any(part in word for part in _ANYWHERE):
            return True
        if i == last and (word.endswith(_LAST) or (word in _LAST_WHOLE and (word != "pwd" or i > 0))):
            return True  # $PWD alone is the working directory
        if word.endswith(_ENDINGS):
            base = "token" if word.endswith("token") else "key" if word.endswith("key") else ""
            if word == base and (
                (i > 0 and words[i - 1] in _NOT_BEFORE[base])
                or (i < last and words[i + 1] in _NOT_AFTER.get(base, ()))
            ):
                continue
            return True
    return False


# ------------------------------------------------------------------ text rules
# The gate: a string with no URL, no token-shape anchor and no secret word is returned
# untouched (nearly every string of a snapshot). Every rule below needs one of these to fire.
_ANCHORS = re.compile(r"://|PRIVATE KEY|sk-|hf_|gh[pousr]_|github_pat_|AKIA|ASIA")
_SECRETISH = re.compile(r"token|key|secret|pass|pwd|credential|auth|sig|pat|cookie|bearer|sas|jwt")


def _suspect(text: str) -> bool:
    return _ANCHORS.search(text) is not None or _SECRETISH.search(text.lower()) is not None


def _suspect_items(texts) -> list[int]:
    """The indexes of the strings of ``texts`` that :func:`_suspect` fires on, found with
    one scan of them all: a match never spans the "\n" between two, and after one the
    scan goes on at the start of the next string."""
    found = set()
    for pattern, parts in ((_ANCHORS, texts), (_SECRETISH, [t.lower() for t in texts])):
        ends = list(itertools.accumulate(len(t) + 1 for t in parts))  # one past each "\n"
        joined = "\n".join(parts)
        m = pattern.search(joined)
        while m is not None:
            i = bisect.bisect_right(ends, m.start())
            found.add(i)
            m = pattern.search(joined, ends[i]) if i + 1 < len(ends) else None
    return sorted(found)


_URL = r"((?:[A-Za-z][A-Za-z0-9+.-]*)?://)([^\s\"'`]+)"
_HOST = r"(?:[A-Za-z0-9._~%!$&()*+,;=-]+|\[[0-9A-Fa-f:.]*\])(?::[0-9]*)?"
_AT_HOST = (  # "@" and a host name: dotted with a letter TLD, localhost, [IPv6], IPv4
    r"@(?:(?:[A-Za-z0-9-]+\.)+[A-Za-z][A-Za-z0-9-]*|localhost|\[[0-9A-Fa-f:.]+\]"
    r"|(?:[0-9]{1,3}\.){3}[0-9]{1,3})(?=[:/?#]|$)"
)
_PARAM = r"([?&;#])([^=&;#?]+)=([^&;#]*)"
_TOKEN_PATH = r"(/(?:t|token)/)([^/?#]+)"
# NAME=value (no spaces; the value quoted or up to a separator)
_ASSIGN = r"(?<![\w.-])(-{0,2}[A-Za-z_][\w.-]*)=(?!=)(?:\"([^\"\r\n]*)\"|'([^'\r\n]*)'|([^\s&;\"']+))"
# "name": "value" / 'name' = 'value' / name = "value" / env['NAME'] = "value" (a quoted value)
_QUOTED = (
    r"(?:([\"'])([A-Za-z_][\w.-]*)\1\]?\s*[:=]|(?<![\w.-])([A-Za-z_][\w.-]*)\s*=)"
    r"\s*(?:\"([^\"\r\n]*)\"|'([^'\r\n]*)')"
)
# --password VALUE (an option and its value as separate words)
_OPTION_VALUE = r"(?<![\w-])(--?[A-Za-z][\w.-]*)[ \t]+(?!-)(?:\"([^\"\r\n]*)\"|'([^'\r\n]*)'|([^\s\"']+))"
_HEADER = (
    r"(?i)\b((?:proxy-)?authorization|set-cookie|cookie|x-api-key|api-key|private-token|job-token"
    r"|x-auth-token|x-access-token)([\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|basic|token|digest|negotiate)\s+)?([^\r\n\"']+)"
)
_BEARER = r"(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{8,})"
_DONE = r"(?:[A-Za-z]+ )?<redacted>"  # a value already redacted, "Bearer <redacted>" included
_FLAG = r"--?[A-Za-z][\w.-]*"


def redact_text(text: str) -> str:
    """``text`` with every credential replaced by ``<redacted>`` (idempotent)."""
    if not text or not _suspect(text):
        return text
    if "PRIVATE KEY" in text:
        text = _rx(_PRIVATE_KEY_BLOCK).sub(_private_key_block, text)
    if "://" in text:
        text = _rx(_URL).sub(_clean_url, text)
    lowered = text.lower()
    if "bearer" in lowered:
        text = _rx(_BEARER).sub(lambda m: m.group(1) + REDACTED, text)
    if any(h in lowered for h in ("authoriz", "cookie", "-token", "api-key")):
        text = _rx(_HEADER).sub(_clean_header, text)
    if _SECRETISH.search(lowered):
        if "=" in text:
            text = _rx(_ASSIGN).sub(_clean_assignment, text)
        if "=" in text or ":" in text:
            text = _rx(_QUOTED).sub(_clean_quoted, text)
        if "-" in text:
            text = _rx(_OPTION_VALUE).sub(_clean_assignment, text)
    return _redact_shapes(text)


def _private_key_block(m) -> str:
    kind = f"{m.group(1)}PRIVATE KEY{m.group(2) or ''}"
    return f"-----BEGIN {kind}----- {REDACTED} -----END {kind}-----"


def _redact_shapes(text: str) -> str:
    spans = sorted((start, end) for _, start, end, _ in shape_matches(text, _TEXT_SHAPES))
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        if start < last:
            continue  # an overlapping shape (sk-ant- is also sk-)
        out.append(text[last:start])
        out.append(REDACTED)
        last = end
    out.append(text[last:])
    return "".join(out)


def _clean_url(m) -> str:
    scheme, body = m.group(1), m.group(2)
    core = body.rstrip(".,)]")  # prose around a URL: "(see https://…?token=x)."
    body, trail = core, body[len(core) :]
    end = _userinfo_end(body)
    if end > 0 and body[:end] != REDACTED:
        body = REDACTED + body[end:]
    if "/t" in body:
        body = _rx(_TOKEN_PATH).sub(lambda t: t.group(1) + REDACTED, body)
    if "=" in body:
        body = _rx(_PARAM).sub(_clean_param, body)
    return scheme + body + trail


def _clean_param(m) -> str:
    if m.group(3) in ("", REDACTED) or not looks_secret(m.group(2)):
        return m.group(0)
    return m.group(1) + m.group(2) + "=" + REDACTED


def _userinfo_end(body: str) -> int:
    """Index of the ``@`` that ends the userinfo of a URL body (after ``scheme://``), -1: none.

    An ``@`` before the first ``/`` starts the host, unless a later ``@`` is followed by a
    host name (dotted, ``localhost``, an IP): then the password held ``@`` or ``/`` and
    that later one ends it. Without an ``@`` before the first ``/``: what precedes that ``/``
    is no plain host (``user:pa``, ``user:1234``, ``host:port``) → a password holding an
    unencoded ``/`` ends at the last such ``@``; a plain host → a later ``@`` counts only
    when a host name follows it (a bare token holding ``/``), else it is in the path (pip's
    ``git+https://host/repo@ref``). Ambiguous forms are cut too far rather than too short:
    ``https://host/repo@1.2.3.4`` shows as ``https://<redacted>@1.2.3.4``."""
    slash = body.find("/")
    head = body if slash < 0 else body[:slash]
    at = head.rfind("@")
    start = max(at, 0)
    ends = [i for i in (body.find("?", start), body.find("#", start)) if i >= 0]
    end = min(ends) if ends else len(body)
    if at < 0 and slash <= 0:
        return -1
    plain = at < 0 and ":" not in head and _rx(_HOST).fullmatch(head) is not None
    later = [m.start() for m in _rx(_AT_HOST).finditer(body, start + 1, end)]
    if later:
        return later[-1]
    if at >= 0 or plain:
        return at
    if _rx(_HOST).fullmatch(head):
        return -1  # host:port, and no host name after any later "@"
    return body.rfind("@", 0, end)


def _clean_header(m) -> str:
    value = m.group(4)
    kept = value[len(value.rstrip()) :]
    if value.strip() == REDACTED:
        return m.group(0)
    return m.group(1) + m.group(2) + (m.group(3) + " " if m.group(3) else "") + REDACTED + kept


def _secret_in_text(name: str) -> bool:
    # ``key=`` in free text is most often Python's sort key (``sorted(x, key=len)``); a URL's
    # ``?key=`` is cleaned with the URL
    return name != "key" and looks_secret(name)


def _clean_assignment(m) -> str:
    if not _secret_in_text(m.group(1)):
        return m.group(0)
    return _replace_value(m, 2)


def _clean_quoted(m) -> str:
    if not _secret_in_text(m.group(2) or m.group(3)):
        return m.group(0)
    return _replace_value(m, 4)


def _replace_value(m, first: int) -> str:
    """The match with the value in group ``first``, ``first + 1`` or ``first + 2`` redacted."""
    for g in range(first, first + 3):
        if g <= m.re.groups and m.group(g) is not None:
            value = m.group(g)
            if g == first + 2:
                value = value.rstrip(".,)]")  # unquoted: "(token=abc)." → "(token=<redacted>)."
            if value == "" or _rx(_DONE).fullmatch(value):
                return m.group(0)
            start = m.start(g) - m.start()
            end = start + len(value)
            whole = m.group(0)
            return whole[:start] + REDACTED + whole[end:]
    return m.group(0)


# ------------------------------------------------------------------ structures
def redact_argv(argv):
    """A command line (list of words): every word cleaned, and the word after a secret-named
    option without ``=`` (``--token VALUE``) redacted."""
    out = []
    hide_next = False
    changed = False
    for word in argv:
        if not isinstance(word, str):
            out.append(word)
            hide_next = False
            continue
        new = REDACTED if hide_next and word and not word.startswith("-") else redact_text(word)
        hide_next = word[:1] == "-" and bool(_rx(_FLAG).fullmatch(word)) and looks_secret(word)
        changed = changed or new is not word
        out.append(new)
    return out if changed else argv


_SCALARS = (bool, int, float, type(None))  # values redact_value returns as they are


@functools.lru_cache(maxsize=256)  # noqa: UP033 - Python 3.8 (see the module docstring)
def _keys_suspect(keys: tuple) -> bool:
    """Whether the gate fires on a dict's ``str`` keys. It fires on every secret name too:
    each word :func:`looks_secret` takes holds one of the gate's words."""
    return _suspect("\n".join(keys))


def _plain(value) -> bool:
    kind = type(value)
    return kind is str or (kind is list and all(type(v) is str for v in value))


def redact_value(obj, _secret=False):
    """``obj`` with every string in it cleaned: dicts (values of secret-named keys become
    ``<redacted>``), lists and tuples (as command lines, see :func:`redact_argv`), msgspec
    Structs (updated in place where something changed; frozen ones are copied). Other values
    are returned as they are."""
    kind = type(obj)
    if kind is str:
        return (REDACTED if obj else obj) if _secret else redact_text(obj)
    if kind is list or kind is tuple:
        if not _secret and obj and all(type(v) is str for v in obj):
            # one gate for a whole list of plain strings (requires, sys.path …), and only the
            # strings it fires on are cleaned (redact_text returns any other as it is)
            suspects = _suspect_items(obj)
            if not suspects:
                return obj
            if not any(obj[i][:1] == "-" for i in suspects):  # no option: nothing hides the next word
                cleaned = {i: redact_text(obj[i]) for i in suspects}
                if all(cleaned[i] is obj[i] for i in suspects):
                    return obj
                new = [cleaned.get(i, v) for i, v in enumerate(obj)]
                return new if kind is list else tuple(new)
        if _secret:
            new = [REDACTED if isinstance(v, str) and v else redact_value(v) for v in obj]
        else:
            new = redact_argv([redact_value(v) if type(v) is not str else v for v in obj])
        if all(a is b for a, b in zip(new, obj)):
            return obj
        return new if kind is list else tuple(new)
    if kind is dict:
        # keys, strings and lists of strings pass one gate together; secret-named keys always
        keys = tuple(obj)
        if all(type(k) is str for k in keys):
            # the keys' part of the gate, once per set of keys (a probe's records share theirs):
            # no token or word of the gate can span the "\n" between two texts
            values, simple = [], True  # simple: every value plain or a scalar
            for v in obj.values():
                if type(v) is str:
                    values.append(v)
                elif _plain(v):
                    values.append("\n".join(v))
                elif type(v) not in _SCALARS:
                    simple = False
            clean = not _keys_suspect(keys) and not _suspect("\n".join(values))
            if clean and simple:
                return obj  # what the loop below answers for it: no secret name, nothing to clean
        else:
            texts = [k for k in obj if type(k) is str]
            texts += [v if type(v) is str else "\n".join(v) for v in obj.values() if _plain(v)]
            clean = not _suspect("\n".join(texts))
        out = {}
        changed = False
        for key, value in obj.items():
            secret = type(key) is str and type(value) in (str, list, tuple) and looks_secret(key)
            if clean and not secret and _plain(value):
                out[key] = value
                continue
            new_key = redact_text(key) if type(key) is str and not clean else key
            new = redact_value(value, secret)
            changed = changed or new is not value or new_key is not key
            out[new_key] = new
        return out if changed else obj
    fields = getattr(kind, "__struct_fields__", None)
    if fields is None or isinstance(obj, type):
        return obj
    own = getattr(obj, "__dict__", None)
    if own and own.get(_MARK):
        return obj  # a snapshot redact_snapshot already cleaned (read-only from then on)
    plain, deeper = [], []  # strings and lists of strings pass one gate together
    for name in fields:
        value = getattr(obj, name)
        if _plain(value):
            plain.append((name, value))
        elif value is not None and type(value) not in (bool, int, float):
            deeper.append((name, value))
    if plain and _suspect("\n".join(v if type(v) is str else "\n".join(v) for _, v in plain)):
        deeper += plain
    updates = {}
    for name, value in deeper:
        new = redact_value(value)
        if new is not value:
            updates[name] = new
    if not updates:
        return obj
    if type(obj).__struct_config__.frozen:
        import msgspec

        return msgspec.structs.replace(obj, **updates)
    for name, new in updates.items():
        setattr(obj, name, new)
    return obj


def redact_env(variables):
    """(variables with secrets redacted, names that were redacted, in order): a secret-named
    variable keeps its name with ``<redacted>`` as its value; any other is cleaned as text."""
    out = {}
    names = []
    for name, value in variables.items():
        secret = looks_secret(name)
        new = REDACTED if secret else redact_text(value) if isinstance(value, str) else value
        if secret or new != value:
            names.append(name)
        out[name] = new
    return out, names


def redact_snapshot(snapshot, skip=()):
    """A snapshot with every value cleaned (see :func:`redact_value`), updated in place; the
    variables of the env section are judged by name as well, and each one redacted is listed
    in ``env.redacted``. ``skip`` names sections already redacted where they were made.

    A snapshot redacted here is marked as such (in its ``__dict__``: never encoded, lost on a
    copy), and marked snapshots are not walked again: a snapshot is read-only once obtained."""
    own = getattr(snapshot, "__dict__", None)
    if own is not None and own.get(_MARK):
        return snapshot
    env = snapshot.env
    variables, names = redact_env(env.variables)
    if variables != env.variables:
        env.variables = variables
    if names and not set(names) <= set(env.redacted):
        env.redacted = sorted(set(env.redacted) | set(names))
    for name in snapshot.__struct_fields__:
        if name not in skip:
            value = getattr(snapshot, name)
            new = redact_value(value)
            if new is not value:
                setattr(snapshot, name, new)
    if own is not None:
        own[_MARK] = True
    return snapshot


_MARK = "_stackcheck_redacted"
