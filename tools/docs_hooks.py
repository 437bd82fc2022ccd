"""MkDocs hooks (mkdocs.yml ``hooks:``): the pages generated from the code, at every build.

- ``reference/cli.md`` and ``reference/server-cli.md``: the Typer apps of ``wasdi`` and ``wasdi-server``,
  by Typer's own ``typer <module> utils docs``;
- ``reference/openapi.md`` (and ``reference/openapi.json``): the OpenAPI document the server serves at
  ``/openapi.json``, built by the same function, rendered operation by operation;
- ``reference/sdk/...``: mkdocstrings directives for the clients, the exceptions, the helpers and one page per
  group of the catalogue (the nav's "Groups" entry is expanded to them here);
- ``reference/sdk/wire-names.md``: every model's wire names and Python names, from the models;
- ``figures.md``: the README's "Figures" section, so the table is written once.

Nothing generated is checked in, so nothing generated can be stale; ``mkdocs build --strict`` (run by
``tests/docs/test_site.py``) fails on a broken link or a reference that no longer resolves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
GROUPS_ENTRY = "Groups"


def typer_docs(module: str, name: str) -> str:
    done = subprocess.run([sys.executable, "-m", "typer", module, "utils", "docs", "--name", name],
                          capture_output=True, text=True, check=True, cwd=ROOT, timeout=120,
                          env={"NO_COLOR": "1", "COLUMNS": "100", "PATH": "", "PYTHONPATH": str(ROOT / "src")})
    intro = (f"Generated from the `{name}` command's Typer app at every build of this site; "
             f"`{name} COMMAND --help` says the same.\n\n")
    text = done.stdout
    first, _, rest = text.partition("\n")
    return f"{first}\n\n{intro}{rest}"


def groups() -> list[tuple[str, str, str]]:
    """(group, module, class) of each ``client.<group>`` (the catalogue's groups, then the WMS helpers)."""
    from wasdi_sdk.resources import RESOURCES, MapsResource

    found = [(group, cls.__module__, cls.__name__) for group, cls in sorted(RESOURCES.items())]
    found.append(("maps", MapsResource.__module__, MapsResource.__name__))
    return sorted(found)


def sdk_pages() -> dict[str, str]:
    pages = {
        "reference/sdk/index.md": (
            "# The clients\n\n"
            "`WasdiClient` and `AsyncWasdiClient` have the same groups and methods, with the same arguments, "
            "models and exceptions; the async ones are coroutines (see [the async client](../../async.md)). "
            "Each group has its page under [Groups](groups.md).\n\n"
            "::: wasdi_sdk.WasdiClient\n    options:\n      inherited_members: true\n      members_order: source\n\n"
            "::: wasdi_sdk.AsyncWasdiClient\n    options:\n      inherited_members: false\n"
            "      members: [from_config, wait_for_process, upload_and_ingest, import_and_wait, close]\n\n"
            "::: wasdi_sdk.RawResponse\n"),
        "reference/sdk/exceptions.md": (
            "# Exceptions\n\n::: wasdi_sdk._exceptions\n    options:\n      show_root_heading: false\n"
            "      members_order: source\n\n"
            "::: wasdi_sdk.helpers.ProcessFailedError\n\n::: wasdi_sdk.helpers.ProcessTimeoutError\n"),
        "reference/sdk/helpers.md": (
            "# Helpers\n\nBeside the endpoint methods: waiting, moving files, building search queries, reading the "
            "official library's configuration. Each has an async twin in `wasdi_sdk._async` (same name, awaited).\n\n"
            "::: wasdi_sdk.helpers.wait_for_process\n\n::: wasdi_sdk.transfer\n    options:\n"
            "      show_root_heading: false\n\n::: wasdi_sdk.search_query.build_query\n\n"
            "::: wasdi_sdk.config.load_config\n\n::: wasdi_sdk.config.WasdiConfig\n"),
    }
    lines = ["# Groups", "", "One page per group of the client (`client.<group>`); the async client's group has "
             "the same methods, awaited (`Async<Name>` in `wasdi_sdk._async.resources`).", "",
             "| Group | Class |", "|---|---|"]
    for group, module, cls in groups():
        lines.append(f"| [`client.{group}`](groups/{group}.md) | `{cls}` |")
        pages[f"reference/sdk/groups/{group}.md"] = (
            f"# client.{group}\n\nAsync: `Async{cls}` in `{module.replace('wasdi_sdk.', 'wasdi_sdk._async.')}`, "
            f"the same methods, awaited.\n\n::: {module}.{cls}\n    options:\n      show_root_heading: false\n"
            "      inherited_members: true\n")
    pages["reference/sdk/groups.md"] = "\n".join(lines) + "\n"
    return pages


def wire_names() -> list[tuple[str, str, str, str, bool]]:
    """(model, wire name, Python name, Python type, always sent) of every field of every model."""
    from wasdi_sdk.models import MODELS

    rows = []
    for model, cls in sorted(MODELS.items()):
        for attr, field in cls.model_fields.items():
            wire = field.serialization_alias or field.alias or attr
            shown = str(field.annotation).replace("typing.", "").replace("<class '", "").replace("'>", "")
            rows.append((model, wire, attr, shown, field.is_required()))
    return rows


def wire_names_page() -> str:
    """The table of every wire name and its Python name, from the models themselves at each build."""
    from pydantic.alias_generators import to_camel

    rows = wire_names()
    renamed = [row for row in rows if to_camel(row[2]) != row[1]]
    out = ["# Wire names and Python names", "",
           "The service speaks camelCase (`workspaceId`); the SDK's models give each member a snake_case attribute "
           "(`workspace_id`), the wire name in snake case, except the few renamed so that one thing has one name "
           "everywhere (a process id is always `process_id`, a workspace's name always `name`). Models read both "
           "spellings; `model.to_wire()` and the CLI's `--json` give the wire names. The column Always sent marks the "
           "members every successful answer carries: their Python type is not Optional. Generated from "
           "`wasdi_sdk.models` at every build of this site.", "",
           "## Renamed", "", "| Model | Wire name | Python name |", "|---|---|---|"]
    out += [f"| `{model}` | `{wire}` | `{attr}` |" for model, wire, attr, _, _ in renamed]
    out += ["", "## Every model", ""]
    current = ""
    for model, wire, attr, shown, required in rows:
        if model != current:
            current = model
            out += ["", f"### {model}", "", "| Wire name | Python name | Type | Always sent |", "|---|---|---|---|"]
        out.append(f"| `{wire}` | `{attr}` | `{_cell(shown)}` | {'yes' if required else ''} |")
    return "\n".join(out) + "\n"


def _cell(text: Any) -> str:
    return str(text or "").replace("|", "\\|").replace("\n", " ")


def _schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if schema.get("type") == "array":
        return f"[{_schema_name(schema.get('items', {}))}]"
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    return str(schema.get("type", "any"))


def openapi_pages() -> dict[str, str]:
    from wasdi_server.api.openapi import build_document, served_endpoints, server_version

    document = build_document(served_endpoints(), version=server_version())
    out = ["# REST API (OpenAPI)", "",
           f"The OpenAPI {document['openapi']} document a running server serves at `GET /openapi.json` (no session "
           "needed), generated from the endpoint catalogue and the models, rendered here operation by operation. "
           "Download it: [openapi.json](openapi.json). The catalogue's own table, with the SDK method of each "
           "endpoint, is the [catalogue reference](../api.md).", ""]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, item in document["paths"].items():
        for method, op in item.items():
            tag = (op.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append((method.upper(), path, op))
    for tag in sorted(by_tag):
        out += [f"## {tag}", ""]
        for method, path, op in by_tag[tag]:
            out += [f"### `{method} {path}`", "", _cell(op.get("summary")), ""]
            if op.get("description"):
                out += [op["description"], ""]
            params = op.get("parameters") or []
            if params:
                out += ["| Parameter | In | Required | Type | Description |", "|---|---|---|---|---|"]
                out += [f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else ''} | "
                        f"{_schema_name(p.get('schema', {}))} | {_cell(p.get('description'))} |" for p in params]
                out.append("")
            body = (op.get("requestBody") or {}).get("content") or {}
            if body:
                out += ["Body: " + ", ".join(f"`{kind}` {_schema_name(c.get('schema', {}))}"
                                             for kind, c in body.items()), ""]
            out += ["| Status | Meaning |", "|---|---|"]
            out += [f"| {code} | {_cell(r.get('description'))} |" for code, r in op.get("responses", {}).items()]
            out.append("")
    return {"reference/openapi.md": "\n".join(out), "reference/openapi.json": json.dumps(document, indent=1)}


def figures_page() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Figures")
    end = text.index("\n## ", start + 1)
    section = text[start:end].replace("## Figures", "# Figures", 1)
    return (section + "\n\nThe same table is in the README; `bench/README.md` in the repository describes each "
            "script.\n")


def generated_pages() -> dict[str, str]:
    return {
        "reference/cli.md": typer_docs("wasdi_cli.main", "wasdi"),
        "reference/server-cli.md": typer_docs("wasdi_server.cli", "wasdi-server"),
        **sdk_pages(),
        "reference/sdk/wire-names.md": wire_names_page(),
        **openapi_pages(),
        "figures.md": figures_page(),
    }


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Expand the nav's "Groups" entry into one page per group."""
    sys.path.insert(0, str(ROOT / "src"))
    pages = [{f"client.{group}": f"reference/sdk/groups/{group}.md"} for group, _, _ in groups()]

    def expand(nav: Any) -> Any:
        if isinstance(nav, list):
            return [expand(item) for item in nav]
        if isinstance(nav, dict):
            return {key: ([{"All groups": value}, *pages] if key == GROUPS_ENTRY else expand(value))
                    for key, value in nav.items()}
        return nav

    config["nav"] = expand(config["nav"])
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, content in generated_pages().items():
        files.append(File.generated(config, path, content=content))
    return files
