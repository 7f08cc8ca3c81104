"""Results as the model reads them: text, images and resources; ``isError`` is an error."""

import base64

import mcp.types as types

from lsp_agent.mcp.results import outcome_from_result


def test_text_blocks_are_joined() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(text="one"), types.TextContent(text="two")]
    )
    outcome = outcome_from_result(result, title="s:t")
    assert (outcome.output, outcome.is_error, outcome.title) == ("one\n\ntwo", False, "s:t")


def test_is_error_makes_an_error_outcome() -> None:
    result = types.CallToolResult(content=[types.TextContent(text="boom")], is_error=True)
    assert outcome_from_result(result, title="s:t").is_error


def test_images_and_binary_resources_are_described_not_dumped() -> None:
    data = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()
    result = types.CallToolResult(
        content=[
            types.ImageContent(data=data, mime_type="image/png"),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="file:///x.bin", blob=data, mime_type="application/zip"
                )
            ),
        ]
    )
    output = outcome_from_result(result, title="s:t").output
    assert "[image: image/png, 100 bytes]" in output
    assert "[resource file:///x.bin: application/zip, 100 bytes]" in output
    assert data not in output


def test_text_resources_and_links_are_shown() -> None:
    result = types.CallToolResult(
        content=[
            types.EmbeddedResource(
                resource=types.TextResourceContents(uri="file:///a.txt", text="hello")
            ),
            types.ResourceLink(uri="file:///b.txt", name="b", description="the b file"),
        ]
    )
    output = outcome_from_result(result, title="s:t").output
    assert "[resource file:///a.txt]\nhello" in output
    assert "[resource link file:///b.txt (b): the b file]" in output


def test_no_content_says_so_and_structured_content_is_shown() -> None:
    assert "no content" in outcome_from_result(types.CallToolResult(content=[]), title="x").output
    structured = types.CallToolResult(content=[], structured_content={"n": 1})
    assert '"n": 1' in outcome_from_result(structured, title="x").output
