"""/auth: login, sessions, registration, profile, password, upload accounts, UI configuration."""

from __future__ import annotations

from typing import Any

from wasdi_sdk.models import (
    ChangeUserPasswordViewModel,
    ClientConfig,
    LoginInfo,
    PrimitiveResult,
    PrivateMissionViewModel,
    RegistrationInfoViewModel,
    SkinViewModel,
    UserViewModel,
)

from ..domains.accounts.sessions import DISABLED_AUTH_USER
from ..errors import BadRequest, Unauthorized
from ..settings import Settings
from . import session_cookie
from .framework import Call, handles

WELCOME = "Welcome to space"

SKIN_DEFAULTS: dict[str, Any] = {
    "logoImage": "/assets/icons/logo-only.svg", "logoText": "/assets/icons/logo-name.svg",
    "helpLink": "https://wasdi.readthedocs.io/en/latest/", "supportLink": "https://discord.gg/FkRu2GypSg",
    "brandMainColor": "#43526B", "brandSecondaryColor": "#009036", "tabTitle": "Wasdi 2.0", "favIcon": "",
    "defaultCategories": [],
}


def user_view(call: Call, doc: dict[str, Any], **extra: Any) -> UserViewModel:
    """The UserViewModel of a stored user (``type`` computed from the user's valid subscriptions)."""
    nick = doc.get("publicNickName") or doc.get("name") or ""
    return UserViewModel(
        user_id=doc["userId"], name=doc.get("name") or "", surname=doc.get("surname") or "",
        type=call.services.subscriptions.user_type(doc["userId"]), public_nick_name=nick,
        skin=doc.get("skin") or "wasdi", **extra)


def caller_doc(call: Call) -> dict[str, Any]:
    doc = call.services.users.get(call.caller.user_id)
    if doc is None:
        raise Unauthorized("MSG_ERROR_INVALID_SESSION")
    return doc


@handles("auth.login")
def login(call: Call) -> UserViewModel:
    body: LoginInfo = call.body
    services = call.services
    if services.settings.disable_authentication:
        token = services.sessions.open(DISABLED_AUTH_USER)
        session_cookie.give(call, token)
        return UserViewModel(user_id=DISABLED_AUTH_USER, name="user", surname="user", type="PROFESSIONAL",
                             role="ADMIN", skin="wasdi", auth_provider="wasdi", session_id=token,
                             public_nick_name="user")
    done = services.login.login(body.user_id, body.user_password, call.request.remote_addr or "")
    doc = done.doc
    session_cookie.give(call, done.token)
    return user_view(call, doc, session_id=done.token, role=doc.get("role") or "USER",
                     auth_provider=doc.get("authProvider") or "wasdi")


@handles("auth.check_session")
def check_session(call: Call) -> UserViewModel:
    # The web client checks a session it kept when it comes back: the cookie then follows the session.
    if call.session_id:
        session_cookie.give(call, call.session_id)
    if call.services.settings.disable_authentication:
        return UserViewModel(user_id=DISABLED_AUTH_USER, name="user", surname="user", type="PROFESSIONAL",
                             skin="wasdi", public_nick_name="user")
    return user_view(call, caller_doc(call))


@handles("auth.logout")
def logout(call: Call) -> PrimitiveResult:
    if not call.services.sessions.close(call.session_id):
        raise BadRequest("unknown session")
    session_cookie.end(call)
    return PrimitiveResult(bool_value=True, string_value=call.session_id)


@handles("auth.register")
def register(call: Call) -> PrimitiveResult:
    body: RegistrationInfoViewModel = call.body
    call.services.users.register(body.user_id, body.password, body.name, body.surname,
                                 call.base_url + "/auth/validateNewUser")
    return PrimitiveResult(bool_value=True, int_value=200, string_value=WELCOME)


@handles("auth.validate_new_user")
def validate_new_user(call: Call) -> PrimitiveResult:
    services = call.services
    doc = services.users.validate(call.params["email"], call.params["validationCode"])
    services.subscriptions.create_trial(doc["userId"])
    return PrimitiveResult(bool_value=True, string_value=doc["userId"])


@handles("auth.edit_user_details")
def edit_user_details(call: Call) -> UserViewModel:
    body: UserViewModel = call.body
    changes = body.model_dump(by_alias=True, exclude_none=True)
    services = call.services
    doc = services.users.edit_details(call.caller, changes)
    services.sessions.forget_user(doc["userId"])
    return user_view(call, doc, session_id=call.session_id, link=doc.get("link") or "",
                     description=doc.get("description") or "")


@handles("auth.change_password")
def change_password(call: Call) -> PrimitiveResult:
    body: ChangeUserPasswordViewModel = call.body
    call.services.login.change_password(call.caller, body.current_password, body.new_password, call.session_id)
    return PrimitiveResult(bool_value=True)


@handles("auth.lost_password")
def lost_password(call: Call) -> PrimitiveResult:
    call.services.users.reset_password(call.params["userId"])
    return PrimitiveResult(bool_value=True, int_value=0)


@handles("auth.config")
def client_config(call: Call) -> ClientConfig:
    return ClientConfig.model_validate(call.services.missions.client_config(call.caller))


@handles("auth.private_missions")
def private_missions(call: Call) -> list[PrivateMissionViewModel]:
    return [PrivateMissionViewModel.model_validate(m) for m in call.services.missions.private_missions(call.caller)]


def skin_view(settings: Settings, name: str | None) -> SkinViewModel:
    """The named skin from settings, over the built-in defaults; an unknown name gets the defaults."""
    chosen = settings.skins.get(name or settings.default_skin) or settings.skins.get(settings.default_skin) or {}
    return SkinViewModel.model_validate({**SKIN_DEFAULTS, **chosen,
                                         "activateSubscriptions": settings.activate_subscription_checks})


@handles("auth.skin")
def skin(call: Call) -> SkinViewModel:
    return skin_view(call.services.settings, call.params["skin"])


def _email_body(call: Call) -> str:
    text: str = call.body or ""
    return text.strip().strip('"')


@handles("auth.create_upload_account")
def create_upload_account(call: Call) -> None:
    call.services.uploads.create(call.caller, _email_body(call))


@handles("auth.exists_upload_account")
def exists_upload_account(call: Call) -> bool:
    return call.services.uploads.exists(call.caller)


@handles("auth.list_upload_files")
def list_upload_files(call: Call) -> list[str]:
    return call.services.uploads.list_files(call.caller)


@handles("auth.remove_upload_account")
def remove_upload_account(call: Call) -> None:
    call.services.uploads.remove(call.caller)


@handles("auth.update_upload_password")
def update_upload_password(call: Call) -> None:
    call.services.uploads.update_password(call.caller, _email_body(call))

