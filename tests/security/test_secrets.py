"""Issue 18 scope 3 and finding 5: secrets in what tools return never reach the model as
written — known values in every encoding the filter recognises, and secrets recognised by
their shape — and the model is told what was masked."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import running_fake_llm

AGENT_KEY = "sk-ant-api03-OWNKEY-q8Zr2LmXv7Tn4Wp1Ks9Hd3Jf6Gb0Yc5Ue-AAAA"
GITHUB_TOKEN = "ghp_R4nd0mT0kenValueThatIsLongEnough0123"
STRIPE = "sk_live_51HqLyjWDarjtT1zdp7dcXYZabcdef0123456789"

# -- the filter -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("id AKIAIOSFODNN7QWERTYU end", "AWS access key"),
        (f"token {GITHUB_TOKEN} end", "GitHub token"),
        ("gho_16C7e42F292c6912E7710c838347Ae178B4a here", "GitHub token"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123", "GitHub token"),
        ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", "Slack token"),
        (f"stripe {STRIPE}", "Stripe key"),
        ("sk-proj-Ab3dEf6hIj9lMn2pQr5tUv8xYz1", "OpenAI key"),
        ("OPENAI sk-Ab3dEf6hIj9lMn2pQr5tUv8xYz1AbCd", "OpenAI key"),
        ("sk-ant-api03-Ab3dEf6hIj9lMn2pQr5tUv8xYz1", "Anthropic key"),
        ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "Google API key"),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0",
            "JWT",
        ),
        ("curl -H 'Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5' x", "authorization header"),
        ("x-api-key: Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5", "API key header"),
        ("postgres://app:Tr0ub4dor-and-3@db.internal:5432/app", "URL password"),
    ],
)
def test_well_known_token_formats_are_masked(text: str, label: str) -> None:
    masked = SecretFilter({}).mask(text)
    assert f"[redacted:{label}]" in masked.text
    assert masked.kinds == (label,)
    secret_part = masked.text.split(f"[redacted:{label}]")[0]
    assert text.startswith(secret_part)  # what is kept is the head (a header name), not the value


def test_private_key_blocks_are_masked_whole_even_when_cut_short() -> None:
    block = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
        "QyNTUxOQAAACDr1vZlH3p5H6vW9yQ\n"
        "-----END OPENSSH PRIVATE KEY-----\n"
    )
    masked = SecretFilter({}).mask(f"before\n{block}after")
    assert masked.text == "before\n[redacted:private key]\nafter"
    cut = SecretFilter({}).mask("1: -----BEGIN RSA PRIVATE KEY-----\n2: MIIEow\n3: IBAAKCAQEA")
    assert cut.text == "1: [redacted:private key]"


@pytest.mark.parametrize(
    "line",
    [
        "STRIPE_SECRET_KEY=whsec_abcdefgh12345678",
        "DB_PASSWORD=supersecretvalue",
        'export API_TOKEN="correct horse battery staple"',
        "SECRET_KEY_BASE=0123456789abcdef0123",
        "12: MAILGUN_API_KEY=key-0123456789abcdef",
        "src/.env:3:AUTH_TOKEN='a1b2c3d4e5f6g7h8'",
        'password = "hunter2hunter2"',
        "apiKey=Xk29vLq8Zr",
    ],
)
def test_env_assignments_with_secret_names_are_masked(line: str) -> None:
    masked = SecretFilter({}).mask(line)
    assert masked.kinds == (".env assignment",)
    name_side = line.split("=")[0]
    assert masked.text.startswith(name_side)  # the name stays: the model knows what it is
    value = line.split("=", 1)[1].strip().strip("\"'")
    assert value not in masked.text


@pytest.mark.parametrize(
    "line",
    [
        "PASSWORD_FILE=/run/secrets/db",
        "TOKEN_URL=https://auth.example.com/token",
        'api_key = os.environ["API_KEY"]',
        "token = get_token()",
        "api_key = settings.API_KEY",
        "if token == expected_token_value1:",
        "API_KEY=changeme",
        "API_KEY=${API_KEY}",
        "SECRET=short",
        'api_key_env = "WORK_LLM_KEY"',
        "KEYBOARD_LAYOUT=us-international",
        "PASSWORD_MIN_LENGTH=12",
        "max_tokens = 4096",
        'DUMMY_KEY = "not-needed"',
        'const ACTIVE_KEY = "lspAgent.activeSession";',
    ],
)
def test_code_references_placeholders_and_ordinary_settings_are_left_alone(line: str) -> None:
    assert SecretFilter({}).mask(line).text == line


def test_the_note_counts_and_names_what_was_masked() -> None:
    text = "A_TOKEN=abcdef123456\nB_TOKEN=ghijkl789012\n-----BEGIN EC PRIVATE KEY-----\nxx\n"
    masked = SecretFilter({}).mask(text)
    assert masked.note == (
        "[lsp-agent masked 3 secrets in this output: private key, 2 × .env assignment]"
    )
    assert masked.with_note().endswith("\n\n" + masked.note)
    assert SecretFilter({}).mask("nothing here").with_note() == "nothing here"


def _base64_variants(value: bytes) -> list[str]:
    """``value`` at each offset in a 3-byte group, in both alphabets, padded or not."""
    variants = []
    for prefix in (b"", b"X", b"XY"):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(prefix + value + b"\n").decode()
            variants += [encoded, encoded.rstrip("=")]
    return variants


def _key_is_hidden(shown: str, key: str) -> None:
    assert key not in shown
    for encoded in _base64_variants(key.encode()):
        assert encoded[4:-4] not in shown


@pytest.mark.parametrize("encoded", _base64_variants(AGENT_KEY.encode()))
def test_base64_of_the_agents_key_is_masked_at_every_alignment(encoded: str) -> None:
    secrets = SecretFilter.from_env({"ANTHROPIC_API_KEY": AGENT_KEY}, ["ANTHROPIC_API_KEY"])
    masked = secrets.mask(f"out: {encoded} done")
    assert masked.kinds == ("ANTHROPIC_API_KEY (base64)",)
    _key_is_hidden(masked.text, AGENT_KEY)


@pytest.mark.parametrize(
    ("spelling", "how"),
    [
        (AGENT_KEY[::-1], "reversed"),
        (AGENT_KEY.encode().hex(), "hex"),
        (AGENT_KEY.encode().hex().upper(), "hex"),
        (urllib.parse.quote(AGENT_KEY + "/", safe="")[:-3], ""),
        ("".join(f"%{b:02x}" for b in AGENT_KEY.encode()), "URL-encoded"),
        # wrapped the way `xxd -p` (60 columns) and `base64` (76 columns) print it
        (
            "\n".join(
                AGENT_KEY.encode().hex()[i : i + 60] for i in range(0, 2 * len(AGENT_KEY), 60)
            ),
            "hex",
        ),
        (base64.encodebytes(b"KEY=" + AGENT_KEY.encode() * 3).decode(), "base64"),
    ],
)
def test_other_spellings_of_the_agents_key_are_masked(spelling: str, how: str) -> None:
    secrets = SecretFilter.from_env({"ANTHROPIC_API_KEY": AGENT_KEY}, ["ANTHROPIC_API_KEY"])
    masked = secrets.mask(f"start\n{spelling}\nend")
    label = f"ANTHROPIC_API_KEY ({how})" if how else "ANTHROPIC_API_KEY"
    assert masked.kinds
    assert set(masked.kinds) == {label}
    unwrapped = masked.text.replace("\n", "")
    _key_is_hidden(unwrapped, AGENT_KEY)
    assert AGENT_KEY.encode().hex()[8:-8] not in unwrapped.lower()


def test_a_key_registered_later_is_masked_in_every_spelling() -> None:
    secrets = SecretFilter({})
    keyring_key = "kr-Zq81mVx0Lp4Rt7Yw2Ns5Hb9"
    assert secrets.redact(keyring_key[::-1]) == keyring_key[::-1]
    secrets.register("ANTHROPIC_API_KEY", keyring_key)
    assert secrets.redact(keyring_key) == "[redacted:ANTHROPIC_API_KEY]"
    assert secrets.redact(keyring_key[::-1]) == "[redacted:ANTHROPIC_API_KEY (reversed)]"
    encoded = base64.b64encode(b"x" + keyring_key.encode()).decode()
    redacted = secrets.redact(encoded)
    assert "[redacted:ANTHROPIC_API_KEY (base64)]" in redacted
    assert len(redacted.replace("[redacted:ANTHROPIC_API_KEY (base64)]", "")) <= 4


@pytest.mark.parametrize(
    "secret_text",
    [
        base64.b64encode(b"ANTHROPIC_API_KEY=" + AGENT_KEY.encode()).decode(),
        AGENT_KEY.encode().hex(),
        "".join(f"%{b:02X}" for b in AGENT_KEY.encode()),
        f"STRIPE_SECRET_KEY={STRIPE}",
        f"Authorization: Bearer {GITHUB_TOKEN}",
    ],
    ids=["base64", "hex", "url", "stripe", "bearer"],
)
def test_streamed_output_never_shows_the_start_of_a_secret(secret_text: str) -> None:
    """Every intermediate view of a growing output is a prefix of the final filtered
    output, so no part of a secret is ever shown before it is complete and masked."""
    secrets = SecretFilter.from_env({"ANTHROPIC_API_KEY": AGENT_KEY}, ["ANTHROPIC_API_KEY"])
    text = "log line one\n" + secret_text + "\n" + "after " * 120
    final = secrets.redact(text)
    assert "[redacted:" in final
    for end in range(1, len(text) + 1, 3):
        shown = secrets.safe_prefix(text[:end])
        assert final.startswith(shown), end
    assert secrets.safe_prefix(text).startswith(final[: final.index("[redacted:") + 10])


# -- end to end: what the model sees -----------------------------------------------------


def run_calls(
    workspace: Path, calls: list[tuple[str, dict[str, Any]]], env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """One ``run --yes`` whose model makes ``calls``; the tool results it was sent."""
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": name, "input": args}]} for name, args in calls
    ]
    script.append({"text": "finished"})
    with running_fake_llm(script) as server:
        full_env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, **env}
        result = cli(
            "run", "--yes", "--model", "anthropic/claude-test", "go", cwd=workspace, env=full_env
        )
        bodies = [r.body for r in server.requests if isinstance(r.body, dict)]
    assert result.returncode == 0, result.stderr
    last = [b for b in bodies if b.get("tools")][-1]
    results = [
        json.dumps(block["content"])
        for message in last["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(results) == len(calls)
    return result, results


def stored_bytes(data_dir: Path) -> bytes:
    """Everything lsp-agent wrote: the database (and its journal), spill files."""
    return b"".join(p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file())


def test_a_dotenv_key_read_by_the_agent_reaches_the_model_masked_with_a_note(
    workspace: Path,
) -> None:
    (workspace / ".env").write_text(
        f"DEBUG=true\nSTRIPE_SECRET_KEY={STRIPE}\nDATABASE_PASSWORD=pg-Pa55word-xyz\n"
    )
    result, (shown,) = run_calls(
        workspace,
        [("read", {"file_path": str(workspace / ".env")})],
        {"ANTHROPIC_API_KEY": AGENT_KEY},
    )
    assert STRIPE not in shown
    assert "pg-Pa55word-xyz" not in shown
    assert "STRIPE_SECRET_KEY=[redacted:Stripe key]" in shown
    assert "DEBUG=true" in shown
    assert "[lsp-agent masked 2 secrets in this output: Stripe key, .env assignment]" in shown
    data_dir = Path(os.environ["LSP_AGENT_DATA_DIR"])
    assert STRIPE.encode() not in stored_bytes(data_dir)
    assert STRIPE not in result.stdout


def test_encodings_of_the_agents_key_made_by_bash_are_masked(workspace: Path) -> None:
    """The key reaches a file by some route (finding 5: /proc/$PPID/environ); whatever
    bash prints of it, encoded, the model sees a mask."""
    (workspace / "leak.txt").write_text(f"ANTHROPIC_API_KEY={AGENT_KEY}\n")
    commands = [
        "base64 -w0 leak.txt",
        "base64 leak.txt",
        "rev leak.txt",
        "xxd -p leak.txt",
        "printenv GITHUB_TOKEN | rev",
        "printenv GITHUB_TOKEN | base64 -w0",
    ]
    env = {"ANTHROPIC_API_KEY": AGENT_KEY, "GITHUB_TOKEN": GITHUB_TOKEN}
    _result, shown = run_calls(workspace, [("bash", {"command": c}) for c in commands], env)
    for command, output in zip(commands, shown, strict=True):
        unwrapped = output.replace("\\n", "")
        secret = GITHUB_TOKEN if "GITHUB" in command else AGENT_KEY
        assert "[redacted:" in output, (command, output)
        assert "lsp-agent masked" in output, command
        assert secret not in unwrapped, command
        assert secret[::-1] not in unwrapped, command
        assert secret.encode().hex()[6:-6] not in unwrapped, command
        for encoded in _base64_variants(secret.encode()):
            assert encoded[4:-4] not in unwrapped, command
    data_dir = Path(os.environ["LSP_AGENT_DATA_DIR"])
    stored = stored_bytes(data_dir)
    assert AGENT_KEY.encode() not in stored
    assert base64.b64encode(f"ANTHROPIC_API_KEY={AGENT_KEY}".encode())[20:60] not in stored
