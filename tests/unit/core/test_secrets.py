from __future__ import annotations

from lsp_agent.core.secrets.filter import SecretFilter


def test_values_of_secret_looking_variables_and_named_keys_are_redacted() -> None:
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-0123456789",
        "GITHUB_TOKEN": "ghp_abcdefghijkl",
        "DB_PASSWORD": "hunter2hunter2",
        "LOCAL_CREDS": "local-creds-value",
        "HOME": "/home/someone",
        "SHORT_KEY": "abc",
    }
    secrets = SecretFilter.from_env(env, key_names=["LOCAL_CREDS"])
    text = (
        "a sk-ant-0123456789 b ghp_abcdefghijkl c hunter2hunter2 d local-creds-value"
        " /home/someone abc"
    )
    assert secrets.redact(text) == (
        "a [redacted:ANTHROPIC_API_KEY] b [redacted:GITHUB_TOKEN] c [redacted:DB_PASSWORD]"
        " d [redacted:LOCAL_CREDS] /home/someone abc"
    )


def test_a_secret_containing_another_is_replaced_whole() -> None:
    secrets = SecretFilter({"A_KEY": "abcdefgh", "B_KEY": "abcdefgh-longer"})
    assert secrets.redact("abcdefgh-longer abcdefgh") == "[redacted:B_KEY] [redacted:A_KEY]"


def test_safe_prefix_holds_back_what_could_be_the_start_of_a_secret() -> None:
    secrets = SecretFilter({"A_KEY": "supersecretvalue"})
    partial = "output: supersec"
    shown = secrets.safe_prefix(partial)
    assert "supersec" not in shown
    assert partial.startswith(shown)
    later = "output: supersecretvalue" + " and more text" * (secrets.longest // 10)
    assert secrets.safe_prefix(later).startswith("output: [redacted:A_KEY]")


def test_no_secrets_changes_nothing() -> None:
    assert SecretFilter({}).redact("anything") == "anything"
    assert SecretFilter({}, detect=False).safe_prefix("anything") == "anything"
