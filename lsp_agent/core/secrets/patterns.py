"""Secrets recognised by their shape, whatever their value: the pattern table of the secret
filter (docs/security.md "Secrets").

A small table of well-known formats rather than a detector library: it must run on every
tool output at tens of milliseconds per megabyte, stay in the dependency-free core and avoid
the entropy heuristics that would mask every commit hash the model reads. Each entry is
one regular expression starting with literal text, so each scan is a fast search.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["ENV_LABEL", "PATTERN_HOLD", "scan"]

PATTERN_HOLD = 300
"""Longest text a pattern needs to see whole (a GitHub fine-grained token is 93 characters,
a JWT rarely more than 250): the streamed output holds back at least this tail."""

# label, regex, needs a word boundary before it, keeps its head (a header or a URL's user,
# up to the last space, quote or colon). Every regex starts with literal text, so the
# engine finds candidates by a fast substring search: a leading ``\b``, look-behind, group
# or case-insensitive start makes it try every position (5 to 40 times slower). Word
# boundaries are checked on a match instead.
_TOKENS: tuple[tuple[str, str, bool, bool], ...] = (
    (
        "private key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"[\s\S]*?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
        False,
        False,
    ),
    ("AWS access key", r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])", True, False),
    ("GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,255}(?!\w)", True, False),
    ("GitHub token", r"github_pat_[A-Za-z0-9_]{22,255}", True, False),
    ("GitLab token", r"glpat-[A-Za-z0-9_-]{20,}", True, False),
    ("Slack token", r"xox[abposr]-[A-Za-z0-9-]{10,}", True, False),
    ("Slack webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}", False, False),
    ("Stripe key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", True, False),
    ("Anthropic key", r"sk-ant-[A-Za-z0-9_-]{20,}", True, False),
    (
        "OpenAI key",
        r"sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}",
        True,
        False,
    ),
    ("Google API key", r"AIza[0-9A-Za-z_-]{35}", True, False),
    ("npm token", r"npm_[A-Za-z0-9]{36}(?!\w)", True, False),
    ("Hugging Face token", r"hf_[A-Za-z]{34}(?!\w)", True, False),
    ("JWT", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", True, False),
    (
        "authorization header",
        r"uthorization[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?:[Bb]earer|BEARER|[Tt]oken|[Bb]asic|[Bb]ot)[ \t]+[A-Za-z0-9._~+/=-]{16,}",
        False,
        True,
    ),
    (
        "API key header",
        r"-(?:[Aa]pi-[Kk]ey|API-KEY|[Aa]uth-[Tt]oken|AUTH-TOKEN)[\"']?[ \t]*:[ \t]*[\"']?"
        r"[A-Za-z0-9._~+/=-]{16,}",
        False,
        True,
    ),
    ("URL password", r"://[^\s:/@\"'<>]{1,100}:[^\s:/@\"'<>]{3,200}(?=@)", False, True),
    # A credential helper's store (``~/.git-credentials``) may hold a token as the user.
    ("URL token", r"://(?=[^\s:/@\"'<>]*\d)[A-Za-z0-9_-]{20,200}(?=@)", False, True),
    (
        "Docker auth",
        r"\"(?:auth|identitytoken|registrytoken|identityToken|registryToken)\"[ \t]*:[ \t]*"
        r"\"[A-Za-z0-9+/=._~-]{8,}",
        False,
        True,
    ),
)
_HEAD_END = re.compile(r"[\s\"':](?=[^\s\"':]*\Z)")

# An assignment is found by its ``=`` (fast), then its name is read backwards from there.
_ASSIGNMENT = re.compile(
    r"=(?!=)(?P<space>[ \t]*)"
    r"(?P<value>\"[^\"\n]{1,500}\"|'[^'\n]{1,500}'"
    r"|[^\s#'\";,()\[\]{}<>=]{1,500}(?=[ \t]*(?:$|[#;,]))(?![ \t]*,[ \t]*\S))",
    re.MULTILINE,
)
_NAME_BEFORE = re.compile(r"(?<![\w.$-])(?:export[ \t]+)?(?P<name>[A-Za-z_][\w.-]{0,100})\Z")

_SECRET_WORDS = frozenset(
    {"SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE", "TOKEN", "APIKEY", "CREDENTIAL"}
    | {"CREDENTIALS", "PRIVATEKEY", "SECRETKEY", "ACCESSKEY", "AUTHTOKEN"}
)
_SECRET_LAST_WORDS = frozenset({"KEY", "PASS", "PWD", "PW"})
_NOT_A_VALUE_WORDS = frozenset(
    {"FILE", "PATH", "DIR", "URL", "URI", "ENDPOINT", "HOST", "NAME", "ID", "LENGTH", "TYPE"}
    | {"EXPIRY", "EXPIRES", "TTL", "ALGORITHM", "HEADER", "FIELD", "PARAM", "PREFIX", "SIZE"}
    | {"MODE", "ENV", "VAR", "VARIABLE", "LIMIT", "COUNT", "TIMEOUT", "FORMAT", "ENABLED"}
    | {"REQUIRED", "LOCATION", "KIND", "STORE", "SOURCE", "CMD", "COMMAND", "HELPER", "MIN"}
    | {"MAX", "HASH"}
)
_PLACEHOLDER_PARTS = ("changeme", "change_me", "placeholder", "example", "your_", "your-")
_PLACEHOLDERS = frozenset(
    {"password", "secret", "none", "null", "true", "false", "undefined", "redacted", "dummy"}
    | {"required", "optional", "notset", "not-set", "todo", "fixme"}
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[_.-]+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")

_EACH = tuple(
    (label, re.compile(regex), bounded, keeps) for label, regex, bounded, keeps in _TOKENS
)
ENV_LABEL = ".env assignment"
NETRC_LABEL = "netrc password"

# A netrc entry (``machine HOST login USER password PASS``, on one line or several): found
# by its ``machine`` or ``default`` word, then its pairs are read; the values of
# ``password`` and ``account`` are masked.
_NETRC_PAIRS = (
    r"(?P<pairs>(?:[ \t\r\n]+(?:login|password|passwd|account|port|protocol|method)"
    r"[ \t\r\n]+\S+)+)"
)
_NETRC = (  # two regexes, each starting with literal text (see _TOKENS)
    re.compile(r"machine[ \t\r\n]+\S+" + _NETRC_PAIRS),
    re.compile(r"default" + _NETRC_PAIRS),
)
_NETRC_PAIR = re.compile(r"(?P<key>\S+)(?P<gap>[ \t\r\n]+)(?P<value>\S+)")
_NETRC_SECRET = frozenset({"password", "passwd", "account"})


def scan(text: str, found: Callable[[str], str]) -> str:
    """``text`` with every recognised secret replaced by ``found(label)``.

    One pass per entry: each pass is a fast literal search, and together they cost a third
    of one pass of the combined alternation, whose engine must try every entry at every
    position that starts like one of them.
    """
    for label, regex, bounded, keeps in _EACH:
        text = regex.sub(_replacer(text, label, bounded, keeps, found), text)
    return _assignments(_netrc(text, found), found)


def _netrc(text: str, found: Callable[[str], str]) -> str:
    """The passwords (and ``account`` values) of netrc entries masked."""

    def entry(match: re.Match[str]) -> str:
        start = match.start()
        if start > 0 and not text[start - 1].isspace():
            return match.group(0)  # inside a word (``mymachine``): not an entry
        pairs = match.group("pairs")
        masked = _NETRC_PAIR.sub(
            lambda pair: (
                pair.group(0)
                if pair["key"] not in _NETRC_SECRET or pair["value"].startswith("[redacted:")
                else f"{pair['key']}{pair['gap']}{found(NETRC_LABEL)}"
            ),
            pairs,
        )
        return match.group(0)[: match.start("pairs") - start] + masked

    for regex in _NETRC:
        text = regex.sub(entry, text)
    return text


def _replacer(
    text: str, label: str, bounded: bool, keeps: bool, found: Callable[[str], str]
) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        start, matched = match.start(), match.group(0)
        if bounded and start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return matched  # inside a longer word: not a token
        head = _HEAD_END.search(matched) if keeps else None
        return (matched[: head.end()] if head else "") + found(label)

    return replace


def _assignments(text: str, found: Callable[[str], str]) -> str:
    """``NAME=value`` with a secret-looking name and a non-trivial value: the value masked."""
    pieces: list[str] = []
    done = 0
    for match in _ASSIGNMENT.finditer(text):
        equals = match.start()
        before = equals
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        named = _NAME_BEFORE.search(text, max(0, before - 110), before)
        if named is None or not secret_name(named["name"]):
            continue
        value = match["value"]
        quote = value[0] if value[0] in "\"'" else ""
        inner = value[1:-1] if quote else value
        name = named["name"]
        env_style = name.isupper() and before == equals and not match["space"]
        if not secret_value(inner, env_style=env_style, quoted=bool(quote)):
            continue
        start = match.start("value")
        pieces += [text[done:start], quote, found(ENV_LABEL), quote]
        done = match.end("value")
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def secret_name(name: str) -> bool:
    """A name that holds a secret: ``STRIPE_SECRET_KEY``, ``db_password``, ``apiKey``;
    not ``PASSWORD_FILE``, ``TOKEN_URL`` or ``api_key_env`` (they name where one is)."""
    words = [w.upper() for w in _SPLIT.split(_CAMEL.sub("_", name)) if w]
    if not words or words[-1] in _NOT_A_VALUE_WORDS:
        return False
    return words[-1] in _SECRET_LAST_WORDS or any(w in _SECRET_WORDS for w in words)


def secret_value(value: str, *, env_style: bool, quoted: bool) -> bool:
    """A value worth masking: long enough, not a placeholder or a reference to elsewhere,
    and — outside a ``.env``-style line — not code (an identifier) and letters with digits."""
    if len(value) < 8 or value.startswith(("[redacted:", "$", "%", "<", "{", "/", "./", "~/")):
        return False
    lowered = value.lower()
    if lowered in _PLACEHOLDERS or any(p in lowered for p in _PLACEHOLDER_PARTS):
        return False
    if len(set(lowered)) <= 2 or lowered.startswith(("http://", "https://")) or value.isdigit():
        return False
    if env_style:
        return True
    if not quoted and _code_name(value):
        return False  # ``token = other_name``: code, not a value
    # In code, a string such as "not-needed" or "app.activeSession" is a setting's name or
    # a placeholder; a hard-coded secret has letters and digits.
    has_letter = any(c.isalpha() for c in value)
    return has_letter and any(c.isdigit() for c in value) and " " not in value


def _code_name(value: str) -> bool:
    """An identifier as code spells one (``user_token``, ``settings.KEY``, ``secretName``);
    ``Xk29vLq8Zr`` is a value."""
    if _IDENTIFIER.fullmatch(value) is None:
        return False
    return "_" in value or "." in value or not any(c.isdigit() for c in value)
