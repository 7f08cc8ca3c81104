"""Tool names: ``<server>_<tool>``, safe characters, at most 64, never taken twice."""

from lsp_agent.mcp.naming import MAX_NAME, sanitize, tool_name


def test_plain_names_join_with_an_underscore() -> None:
    assert tool_name("github", "create_issue", ()) == "github_create_issue"


def test_characters_the_providers_refuse_become_underscores() -> None:
    assert sanitize("my server.v2/tool:x") == "my_server_v2_tool_x"
    assert tool_name("a b", "c.d", ()) == "a_b_c_d"


def test_a_long_name_is_cut_in_its_server_part_first() -> None:
    assert tool_name("s" * 70, "echo", ()) == "s" * 59 + "_echo"
    assert tool_name("s" * 40, "t" * 40, ()) == "s" * 23 + "_" + "t" * 40
    name = tool_name("srv", "t" * 70, ())
    assert len(name) == MAX_NAME
    assert name.startswith("s_t")


def test_a_collision_gets_a_suffix_within_64() -> None:
    assert tool_name("a", "b", {"a_b"}) == "a_b_2"
    assert tool_name("a", "b", {"a_b", "a_b_2"}) == "a_b_3"
    long = tool_name("s" * 40, "t" * 40, ())
    suffixed = tool_name("s" * 40, "t" * 40, {long})
    assert len(suffixed) == MAX_NAME
    assert suffixed.endswith("_2")
    assert suffixed != long


def test_a_built_in_name_is_never_taken() -> None:
    assert tool_name("web", "fetch", {"read", "web_fetch"}) == "web_fetch_2"
