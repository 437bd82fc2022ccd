"""``wasdi account ...``: your account: register, validate, password, profile, missions (``client.auth``)."""

import sys
from typing import Annotated

import typer

from .. import connection
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message, when

app = typer.Typer(name="account", help="Your account: register, validate, change or reset the password, edit the "
                                       "profile, list the missions you may search.", no_args_is_help=True)

StdinOpt = Annotated[bool, typer.Option("--password-stdin", help="Read the password(s) from stdin, one a line, "
                                                                "instead of prompting.")]
MIN_PASSWORD = 8

PROFILE_FIELDS = (
    ("user id", lambda u: u.user_id),
    ("name", lambda u: u.name),
    ("surname", lambda u: u.surname),
    ("nickname", lambda u: u.public_nick_name),
    ("link", lambda u: u.link),
    ("description", lambda u: u.description),
)

MISSION_COLUMNS = (
    ("name", lambda m: m.name),
    ("index", lambda m: m.indexvalue),
    ("provider", lambda m: m.provider),
    ("public", lambda m: m.ispublic),
)

PRIVATE_COLUMNS = (
    ("name", lambda m: m.mission_name),
    ("index", lambda m: m.mission_index_value),
    ("owner", lambda m: m.mission_owner),
    ("permission", lambda m: m.permission_type),
    ("since", lambda m: when(m.permission_creation_date)),
)


def _read_password(stdin: bool, prompt: str, *, confirm: bool = False) -> str:
    """One password: the next line of stdin, or a hidden prompt; at least 8 characters."""
    if stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt(prompt, hide_input=True, confirmation_prompt=confirm, err=True)
    if len(password) < MIN_PASSWORD:
        raise CliError(f"the password must have at least {MIN_PASSWORD} characters", USAGE)
    return password


def _refused(result: object, what: str) -> None:
    if not getattr(result, "bool_value", False):
        reason = getattr(result, "string_value", None)
        raise CliError(f"{what}" + (f": {reason}" if reason else ""))


@app.command()
def register(
    email: Annotated[str, typer.Argument(metavar="EMAIL", help="Your e-mail address: the user id.")],
    name: Annotated[str | None, typer.Option("--name", help="Your first name.")] = None,
    surname: Annotated[str | None, typer.Option("--surname", help="Your surname.")] = None,
    password_stdin: StdinOpt = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Create an account; it stays inactive until validated with the code mailed to EMAIL."""
    from wasdi_sdk import EmptyResultError

    password = _read_password(password_stdin, "Password", confirm=True)
    target = connection.resolve(profile, base_url)
    with connection.connect(target, require_session=False) as client:
        try:
            result = client.auth.register(user_id=email, password=password, name=name, surname=surname)
        except EmptyResultError as e:
            raise CliError(f"the server refused to register {email}") from e
    _refused(result, f"the server refused to register {email}")
    message(f"Registered {email}; validate it with 'wasdi account validate {email} CODE' (the code is mailed)")


@app.command()
def validate(
    email: Annotated[str, typer.Argument(metavar="EMAIL", help="The e-mail address you registered.")],
    code: Annotated[str, typer.Argument(metavar="CODE", help="The validation code mailed to you.")],
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Activate a registered account with the code mailed to it."""
    from wasdi_sdk import EmptyResultError

    with connection.connect(connection.resolve(profile, base_url), require_session=False) as client:
        try:
            result = client.auth.validate_new_user(email=email, validation_code=code)
        except EmptyResultError as e:
            raise CliError(f"cannot validate {email}: wrong code, or no such registration") from e
    _refused(result, f"cannot validate {email}: wrong code, or no such registration")
    message(f"Validated {email}; log in with 'wasdi login --user {email}'")


@app.command()
def password(password_stdin: StdinOpt = False, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Change your password: the current one, then the new one (prompted, or two lines of stdin)."""
    current = sys.stdin.readline().rstrip("\r\n") if password_stdin else typer.prompt(
        "Current password", hide_input=True, err=True)
    new = _read_password(password_stdin, "New password", confirm=True)
    with connection.client(profile, base_url) as client:
        result = client.auth.change_password(current_password=current, new_password=new)
    _refused(result, "the password was not changed (is the current one right?)")
    message("Password changed")


@app.command("lost-password")
def lost_password(
    email: Annotated[str, typer.Argument(metavar="EMAIL", help="The user id (e-mail) of the account.")],
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Have a new password mailed to an account whose password is lost."""
    with connection.connect(connection.resolve(profile, base_url), require_session=False) as client:
        client.auth.lost_password(user_id=email)
    message(f"If {email} has an account, a new password is on its way to it")


@app.command()
def edit(
    name: Annotated[str | None, typer.Option("--name", help="First name.")] = None,
    surname: Annotated[str | None, typer.Option("--surname", help="Surname.")] = None,
    nickname: Annotated[str | None, typer.Option("--nickname", help="Public nickname.")] = None,
    link: Annotated[str | None, typer.Option("--link", help="A link to your page.")] = None,
    description: Annotated[str | None, typer.Option("--description", help="A few words about you.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Change your profile (what is not given is kept); prints the profile."""
    if all(v is None for v in (name, surname, nickname, link, description)):
        raise CliError("nothing to change: give --name, --surname, --nickname, --link or --description", USAGE)
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        user = client.auth.edit_user_details(name=name, surname=surname, public_nick_name=nickname, link=link,
                                             description=description)
    out.item(user, PROFILE_FIELDS, id_of=lambda u: u.user_id)


@app.command()
def missions(
    private: Annotated[bool, typer.Option("--private", help="Only the private missions you own or were given.")]
    = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """The missions you may search (their index value is what 'wasdi search --platform' takes)."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        if private:
            owned = client.auth.private_missions()
            out.items(owned, PRIVATE_COLUMNS, id_of=lambda m: m.mission_index_value, empty="No private missions.")
            return
        config = client.auth.config()
    out.items(config.missions or [], MISSION_COLUMNS, id_of=lambda m: m.indexvalue, empty="No missions.")
