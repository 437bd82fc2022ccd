"""Generated from ``wasdi_sdk.resources.auth`` by ``make async``: do not edit.

``client.auth``: login, sessions, registration, profile, password and upload accounts."""

from __future__ import annotations

from typing import Unpack, cast

from ..._exceptions import AuthenticationError
from ..._resource import RequestOptions
from ...messages import WRONG_CREDENTIALS
from ...models import (
    ChangeUserPasswordViewModel,
    ClientConfig,
    LoginInfo,
    PrimitiveResult,
    PrivateMissionViewModel,
    RegistrationInfoViewModel,
    SkinViewModel,
    UserViewModel,
)
from .._resource import AsyncAPIResource


class AsyncAuthResource(AsyncAPIResource):
    """Async twin of ``AuthResource``: the same methods, awaited.

    /auth."""

    async def login(self, user_id: str, password: str, **options: Unpack[RequestOptions]) -> UserViewModel:
        """Log in; the client keeps the new session for every later call.

        Raises ``AuthenticationError`` saying "wrong user or password" on wrong credentials (the service
        answers 200 with an empty ``userId``).
        """
        try:
            user = cast(
                UserViewModel,
                await self._call("auth.login", body=LoginInfo(user_id=user_id, user_password=password), **options),
            )
        except AuthenticationError as e:
            raise AuthenticationError(
                WRONG_CREDENTIALS,
                style=e.style,
                status=e.status,
                body=e.body,
                response=e.response,
                endpoint=e.endpoint,
                code=e.code,
            ) from e
        if isinstance(user, UserViewModel) and user.session_id:
            self._client.session_token = user.session_id
        return user

    async def check_session(self, **options: Unpack[RequestOptions]) -> UserViewModel:
        """The user behind the current session; ``AuthenticationError`` when it is not valid."""
        return cast(UserViewModel, await self._call("auth.check_session", **options))

    async def logout(self, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """End the current session on the server and forget it locally."""
        result = cast(PrimitiveResult, await self._call("auth.logout", **options))
        if not self._raw:
            self._client.session_token = None
        return result

    async def register(
        self,
        *,
        user_id: str,
        password: str,
        name: str | None = None,
        surname: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> PrimitiveResult:
        """Register an account (inactive until validated with the code mailed to ``user_id``).

        ``NotModifiedError`` when the account already exists.
        """
        body = RegistrationInfoViewModel(user_id=user_id, password=password, name=name, surname=surname)
        return cast(PrimitiveResult, await self._call("auth.register", body=body, **options))

    async def validate_new_user(
        self, *, email: str, validation_code: str, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Activate an account with the mailed validation code (starts the FREE trial)."""
        return cast(
            PrimitiveResult,
            await self._call(
                "auth.validate_new_user", query={"email": email, "validationCode": validation_code}, **options
            ),
        )

    async def edit_user_details(
        self,
        *,
        name: str | None = None,
        surname: str | None = None,
        link: str | None = None,
        description: str | None = None,
        public_nick_name: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> UserViewModel:
        """Change the profile; fields left ``None`` keep their value."""
        body = UserViewModel(
            name=name, surname=surname, link=link, description=description, public_nick_name=public_nick_name
        )
        return cast(UserViewModel, await self._call("auth.edit_user_details", body=body, **options))

    async def change_password(
        self, *, current_password: str, new_password: str, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Change the password; both must be at least 8 characters."""
        body = ChangeUserPasswordViewModel(current_password=current_password, new_password=new_password)
        return cast(PrimitiveResult, await self._call("auth.change_password", body=body, **options))

    async def lost_password(self, *, user_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Mail a new random password to the account.  Servers that do not tell who has an account (this
        toolkit's among them) answer success for an unknown address too, and mail nothing."""
        return cast(PrimitiveResult, await self._call("auth.lost_password", query={"userId": user_id}, **options))

    async def config(self, **options: Unpack[RequestOptions]) -> ClientConfig:
        """Missions the user may search and the orbit-search options."""
        return cast(ClientConfig, await self._call("auth.config", **options))

    async def private_missions(self, **options: Unpack[RequestOptions]) -> list[PrivateMissionViewModel]:
        """Private missions the user owns or has been given (possibly an empty list)."""
        return cast(list[PrivateMissionViewModel], await self._call("auth.private_missions", **options))

    async def skin(self, *, skin: str | None = None, **options: Unpack[RequestOptions]) -> SkinViewModel:
        """Branding of the user interface (the server's default skin when ``skin`` is omitted)."""
        return cast(SkinViewModel, await self._call("auth.skin", query={"skin": skin}, **options))

    async def create_upload_account(self, *, email: str, **options: Unpack[RequestOptions]) -> None:
        """Create the file-transfer account; its credentials are mailed to ``email``."""
        await self._call("auth.create_upload_account", body=email, **options)

    async def exists_upload_account(self, **options: Unpack[RequestOptions]) -> bool:
        """Whether the user has a file-transfer account (``False`` also for an invalid session)."""
        return bool(await self._call("auth.exists_upload_account", **options))

    async def list_upload_files(self, **options: Unpack[RequestOptions]) -> list[str]:
        """Names of the files in the user's upload folder (possibly an empty list)."""
        return cast(list[str], await self._call("auth.list_upload_files", **options))

    async def remove_upload_account(self, **options: Unpack[RequestOptions]) -> None:
        """Remove the file-transfer account."""
        await self._call("auth.remove_upload_account", **options)

    async def update_upload_password(self, *, email: str, **options: Unpack[RequestOptions]) -> None:
        """Mail a new random file-transfer password to ``email``."""
        await self._call("auth.update_upload_password", body=email, **options)
