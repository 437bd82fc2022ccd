"""Exit codes, and the one place where an exception becomes a message and an exit code.

``WasdiGroup`` is the root command group: every command runs inside its ``invoke``, so the
installed ``wasdi`` script and ``typer.testing.CliRunner`` see the same exit codes.
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import typer

from wasdi_command_line.groups import UniformHelpGroup, debug_enabled

OK = 0
ERROR = 1
USAGE = 2
CONNECTION = 3
AUTH = 4
INTERRUPTED = 130


class CliError(Exception):
    """A failure the command explains itself: printed as ``Error: <message>``, exits with ``code``."""

    def __init__(self, message: str, code: int = ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def fail(message: str, code: int = ERROR) -> NoReturn:
    raise CliError(message, code)


def quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into a closed pipe is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's buffer): nothing to silence
        pass


def exit_code_for(error: BaseException) -> int:
    """The exit code that means ``error``."""
    if isinstance(error, CliError):
        return error.code
    if isinstance(error, KeyboardInterrupt):
        return INTERRUPTED
    # The SDK is only loaded by commands that talk to a server; if it is not loaded, the error is not one of its.
    sdk = sys.modules.get("wasdi_sdk")
    if sdk is not None:
        if isinstance(error, sdk.APIConnectionError):  # APITimeoutError included
            return CONNECTION
        if isinstance(error, sdk.AuthenticationError | sdk.PermissionDeniedError):
            return AUTH
    return ERROR


_detailed = False
"""``--verbose`` or ``--json`` on the command line: failures also show the server's code, status and endpoint."""


def show_details(on: bool = True) -> None:
    global _detailed
    _detailed = on


def message_for(error: BaseException) -> str:
    if isinstance(error, CliError):
        return error.message
    if isinstance(error, KeyboardInterrupt):
        return "interrupted"
    text = str(error).strip()
    sdk = sys.modules.get("wasdi_sdk")
    if sdk is not None and isinstance(error, sdk.APIError):
        from .messages import details, sentence

        return sentence(error) + (details(error) if _detailed else "")
    if sdk is not None and isinstance(error, sdk.APIConnectionError):
        problem = _connection_problem(error)
        if problem:
            return problem
    if sdk is not None and isinstance(error, sdk.APIConnectionError) and not isinstance(error, sdk.APITimeoutError):
        return (f"{text or 'cannot reach the server'}; is it running? Start a local one with 'wasdi server start' "
                "(or 'make run' in a clone), or point to another with --base-url")
    if sdk is not None and isinstance(error, sdk.WasdiError):
        return text or type(error).__name__
    # Not one of ours: name the exception, it is probably a bug or an OS error.
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _connection_problem(error: BaseException) -> str | None:
    """The sentence of the CLI's transport (``transport.ConnectionProblem``) behind a connection error, if any."""
    transport = sys.modules.get("wasdi_cli.transport")
    cause = error.__cause__
    if transport is not None and isinstance(cause, transport.ConnectionProblem):
        return str(cause.sentence)
    return None


def report(error: BaseException) -> int:
    """Print ``Error: <message>`` on stderr (and the traceback with ``WASDI_DEBUG=1``); the exit code."""
    if debug_enabled():
        import traceback

        traceback.print_exception(error, file=sys.stderr)
    typer.echo(f"Error: {message_for(error)}", err=True)
    return exit_code_for(error)


class WasdiGroup(UniformHelpGroup):
    """Root group: maps whatever a command raises to a one-line message and an exit code."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        show_details("--json" in args or "--verbose" in args)
        for param in self.get_params(ctx):
            # --help and the completion flags default to None, which Typer coerces through a pydantic
            # adapter (importing pydantic: a third of 'wasdi ws --help'); False is what an absent flag
            # means to their callbacks too, and a bool skips the coercion
            described = getattr(param, "type_descriptor", None)
            if getattr(param, "is_flag", False) and param.default is None and \
                    getattr(described, "annotation", None) is bool:
                param.default = False
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        from . import connection  # here: connection imports this module

        connection.forget_target()  # a run in the same process (a test's runner) starts from no target
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            # Exits, aborts and usage errors: the framework prints and exits as usual (usage = 2).
            raise
        except BrokenPipeError as error:
            # `wasdi ... | head`: the reader has what it wanted; stop quietly, as Unix tools do.
            quiet_stdout()
            raise typer.Exit(OK) from error
        except (Exception, KeyboardInterrupt) as error:
            from .connection import session_failure  # here: connection imports this module

            raise typer.Exit(report(session_failure(error) or error)) from error
