"""/organizations: organizations and their sharing."""

from __future__ import annotations

from typing import Any

from wasdi_sdk.models import (
    OrganizationListViewModel,
    OrganizationSharingViewModel,
    OrganizationViewModel,
    SuccessResponse,
    WasdiModel,
)

from ..domains.accounts.sharing import DONE
from .framework import Call, handles


def sent(body: WasdiModel) -> dict[str, Any]:
    """The members the client sent (wire names), explicit nulls included; absent members are left out."""
    return body.model_dump(mode="json", by_alias=True, include=body.model_fields_set | set(body.model_extra or {}))


@handles("organizations.list")
def list_organizations(call: Call) -> list[OrganizationListViewModel]:
    return [OrganizationListViewModel.model_validate(d) for d in call.services.organizations.list_for(call.caller)]


@handles("organizations.get")
def get_organization(call: Call) -> OrganizationViewModel:
    return OrganizationViewModel.model_validate(
        call.services.organizations.view(call.caller, call.params["organization"]))


@handles("organizations.create")
def create_organization(call: Call) -> SuccessResponse:
    return SuccessResponse(message=call.services.organizations.create(call.caller, sent(call.body)))


@handles("organizations.update")
def update_organization(call: Call) -> SuccessResponse:
    return SuccessResponse(message=call.services.organizations.update(call.caller, sent(call.body)))


@handles("organizations.delete")
def delete_organization(call: Call) -> SuccessResponse:
    return SuccessResponse(message=call.services.organizations.delete(call.caller, call.params["organization"]))


@handles("organizations.share_add")
def share_organization(call: Call) -> SuccessResponse:
    p = call.params
    return SuccessResponse(message=call.services.organizations.share(call.caller, p["organization"], p["userId"],
                                                                     p["rights"]))


@handles("organizations.share_list")
def list_organization_sharings(call: Call) -> list[OrganizationSharingViewModel]:
    return [OrganizationSharingViewModel.model_validate(s)
            for s in call.services.organizations.sharings(call.caller, call.params["organization"])]


@handles("organizations.share_delete")
def unshare_organization(call: Call) -> SuccessResponse:
    call.services.organizations.unshare(call.caller, call.params["organization"], call.params["userId"])
    return SuccessResponse(message=DONE)
