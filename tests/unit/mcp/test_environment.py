"""What a local server is given: PATH, HOME, LANG and what its config names."""

from lsp_agent.mcp.environment import expand, expanded_headers, server_environment

AGENT_ENV = {
    "PATH": "/usr/bin",
    "HOME": "/home/me",
    "LANG": "C.UTF-8",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "GITHUB_TOKEN": "ghp_token",
    "OTHER": "x",
}


def test_only_path_home_lang_and_the_configured_names() -> None:
    env = server_environment({"TOKEN": "{env:GITHUB_TOKEN}", "MODE": "fast"}, AGENT_ENV)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "TOKEN": "ghp_token",
        "MODE": "fast",
    }
    assert "sk-ant-secret" not in env.values()


def test_a_hidden_variable_is_never_inherited() -> None:
    env = server_environment({}, {**AGENT_ENV, "PATH": "/p"}, hidden=("PATH",))
    assert "PATH" not in env


def test_references_expand_and_unset_ones_are_empty() -> None:
    assert expand("Bearer {env:GITHUB_TOKEN}", AGENT_ENV) == "Bearer ghp_token"
    assert expand("{env:NOPE}-{env:OTHER}", AGENT_ENV) == "-x"
    assert expanded_headers({"Authorization": "Bearer {env:GITHUB_TOKEN}"}, AGENT_ENV) == {
        "Authorization": "Bearer ghp_token"
    }
