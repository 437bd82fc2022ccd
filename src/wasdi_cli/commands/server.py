"""``wasdi server ...``: serve a WASDI server here (``start``, same as ``wasdi-server serve``), or ask one how it is
(``hello``, ``skin``) and write to its operators (``feedback``): ``client.utility``, ``client.auth``."""

import sys
from typing import Annotated

import typer

from wasdi_command_line import serve_options

from .. import connection
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message

app = typer.Typer(name="server", help="Run a self-hosted WASDI server, check that one answers, see its branding, "
                                      "send feedback to its operators.", no_args_is_help=True)

SKIN_FIELDS = (
    ("tab title", lambda s: s.tab_title),
    ("logo text", lambda s: s.logo_text),
    ("logo", lambda s: s.logo_image),
    ("help", lambda s: s.help_link),
    ("support", lambda s: s.support_link),
    ("main colour", lambda s: s.brand_main_color),
    ("second colour", lambda s: s.brand_secondary_color),
    ("default categories", lambda s: s.default_categories),
    ("subscriptions", lambda s: s.activate_subscriptions),
)


@app.command()
def start(
    data_dir: serve_options.DataDirOpt = None,
    host: serve_options.HostOpt = None,
    port: serve_options.PortOpt = None,
    threads: serve_options.ThreadsOpt = None,
    config: serve_options.ConfigOpt = None,
    public_url: serve_options.PublicUrlOpt = None,
    init_admin: serve_options.InitAdminOpt = False,
    web_client: serve_options.WebClientOpt = None,
) -> None:
    """Serve the API with waitress until interrupted (Ctrl-C); the same as 'wasdi-server serve'."""
    from wasdi_server.cli import serve
    from wasdi_server.settings import SettingsError, load_settings

    try:
        settings = load_settings(config, data_dir=data_dir, host=host, port=port, threads=threads,
                                 public_url=public_url, web_client_dir=serve_options.web_client_dir(web_client))
    except SettingsError as e:
        from ..errors import CliError

        raise CliError(str(e)) from e
    serve(settings, init_admin=init_admin)


@app.command()
def hello(profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Check that the server answers (no login needed); prints its greeting."""
    target = connection.resolve(profile, base_url)
    with connection.connect(target, require_session=False) as client:
        greeting = client.utility.hello()
    Output().value(greeting.string_value or "")
    message(f"{target.base_url} answers")


@app.command()
def skin(
    name: Annotated[str | None, typer.Argument(metavar="NAME", help="Skin name (default: the server's).")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """The branding the server gives its web client: title, logo, links, colours."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        branding = client.auth.skin(skin=name)
    out.item(branding, SKIN_FIELDS, id_of=lambda s: s.tab_title)


@app.command()
def feedback(
    title: Annotated[str, typer.Argument(metavar="TITLE", help="Subject of the message.")],
    text: Annotated[str | None, typer.Option("--message", "-m", metavar="TEXT",
                                             help="The message (default: read from stdin).")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Send feedback to the server's operators by e-mail."""
    body = text if text is not None else sys.stdin.read()
    if not body.strip():
        raise CliError("empty feedback: give --message TEXT or write it on stdin", USAGE)
    with connection.client(profile, base_url) as client:
        client.utility.feedback(title=title, message=body.strip())
    message("Feedback sent to the operators")
