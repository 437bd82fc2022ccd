"""Models of /auth: users, credentials, registration, skins, missions and client configuration."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ._base import WasdiModel, alias


class UserViewModel(WasdiModel):
    user_id: str | None = None
    name: str | None = None
    surname: str | None = None
    type: str | None = None
    role: str | None = None
    public_nick_name: str | None = None
    session_id: str | None = Field(default=None, repr=False)
    skin: str | None = None
    link: str | None = None
    description: str | None = None
    auth_provider: str | None = None
    granted_authorities: list[str] | None = None
    bool_value: bool | None = alias("boolValue", "BoolValue")
    """Present (``false``) only on a failed login."""


class LoginInfo(WasdiModel):
    user_id: str | None = None
    user_password: str | None = Field(default=None, repr=False)
    google_id_token: str | None = Field(default=None, repr=False)


class RegistrationInfoViewModel(WasdiModel):
    user_id: str | None = None
    name: str | None = None
    surname: str | None = None
    password: str | None = Field(default=None, repr=False)
    google_id_token: str | None = Field(default=None, repr=False)
    optional_validation_token: str | None = Field(default=None, repr=False)


class ChangeUserPasswordViewModel(WasdiModel):
    current_password: str | None = Field(default=None, repr=False)
    new_password: str | None = Field(default=None, repr=False)


class SkinViewModel(WasdiModel):
    logo_image: str | None = None
    logo_text: str | None = None
    help_link: str | None = None
    support_link: str | None = None
    brand_main_color: str | None = None
    brand_secondary_color: str | None = None
    tab_title: str | None = None
    fav_icon: str | None = None
    default_categories: list[str] | None = None
    activate_subscriptions: bool | None = None


class PrivateMissionViewModel(WasdiModel):
    mission_name: str | None = None
    mission_index_value: str | None = None
    mission_owner: str | None = None
    user_id: str | None = None
    permission_type: str | None = None
    permission_creation_date: float | None = None
    permission_created_by: str | None = None


class Mission(WasdiModel):
    """One searchable mission of the client configuration (wire names are lower case)."""

    name: str | None = None
    indexname: str | None = Field(default=None, alias="indexname")
    indexvalue: str | None = Field(default=None, alias="indexvalue")
    selected: bool | None = None
    provider: str | None = None
    ispublic: bool | None = Field(default=None, alias="ispublic")
    userid: str | None = Field(default=None, alias="userid")
    filters: list[dict[str, Any]] | None = None


class OrbitSearch(WasdiModel):
    sensortypes: list[str] | None = Field(default=None, alias="sensortypes")
    sensorresolutions: list[str] | None = Field(default=None, alias="sensorresolutions")
    satellite_names: list[str] | None = Field(default=None, alias="satelliteNames")


class ClientConfig(WasdiModel):
    """Response of ``/auth/config``: the missions the user may search and the orbit-search options."""

    missions: list[Mission] | None = None
    orbitsearch: OrbitSearch | None = Field(default=None, alias="orbitsearch")
