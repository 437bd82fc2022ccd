"""``client.organizations``: organizations and their sharing (/organizations)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from .._lookup import find_one
from .._resource import APIResource, RequestOptions
from ..models import (
    OrganizationEditorViewModel,
    OrganizationListViewModel,
    OrganizationSharingViewModel,
    OrganizationViewModel,
    SuccessResponse,
)


class OrganizationsResource(APIResource):
    """/organizations.

    Subscriptions attached to an organization are readable by its owner and by every user it is
    shared with.  Failures raise by meaning: ``BadRequestError`` (unknown id, missing or duplicate
    name), ``PermissionDeniedError`` (no access), ``AuthenticationError`` (no session).
    """

    def find(self, name: str, **options: Unpack[RequestOptions]) -> OrganizationListViewModel:
        """The organization named ``name`` among the user's (``NotFoundError`` naming it when there is none)."""
        listed = self.list(**options)
        return find_one(listed, name, name_of=lambda o: o.name, id_of=lambda o: o.organization_id,
                        noun="organization", call=f"client.organizations.find({name!r})")

    def list(self, **options: Unpack[RequestOptions]) -> builtins.list[OrganizationListViewModel]:
        """Organizations the user owns (``read_only`` false) or that are shared with them."""
        return cast(builtins.list[OrganizationListViewModel], self._call("organizations.list", **options))

    def get(self, organization: str, **options: Unpack[RequestOptions]) -> OrganizationViewModel:
        """One organization, with the users it is shared with and ``read_only`` for the caller."""
        return cast(OrganizationViewModel, self._call("organizations.get", query={"organization": organization},
                                                      **options))

    def create(self, organization: OrganizationEditorViewModel | None = None, *, name: str | None = None,
               description: str | None = None, address: str | None = None, email: str | None = None,
               url: str | None = None, **options: Unpack[RequestOptions]) -> SuccessResponse:
        """Create an organization owned by the caller; ``message`` is its id.

        Pass an ``OrganizationEditorViewModel`` or the fields.  The name is required and must be
        unique (``BadRequestError`` otherwise).
        """
        if organization is None:
            organization = OrganizationEditorViewModel(name=name, description=description, address=address,
                                                       email=email, url=url)
        return cast(SuccessResponse, self._call("organizations.create", body=organization, **options))

    def update(self, organization: OrganizationEditorViewModel | None = None, *, organization_id: str | None = None,
               name: str | None = None, description: str | None = None, address: str | None = None,
               email: str | None = None, url: str | None = None,
               **options: Unpack[RequestOptions]) -> SuccessResponse:
        """Change an organization (write permission); ``message`` is its id.

        ``organization_id`` and ``name`` are required; other fields left ``None`` keep their value.
        A name used by another organization is a ``BadRequestError``.
        """
        if organization is None:
            organization = OrganizationEditorViewModel(organization_id=organization_id, name=name,
                                                       description=description, address=address, email=email,
                                                       url=url)
        return cast(SuccessResponse, self._call("organizations.update", body=organization, **options))

    def delete(self, organization: str, **options: Unpack[RequestOptions]) -> SuccessResponse:
        """Delete an organization (owner or admin: its subscriptions are detached), or leave one shared
        with you; ``message`` is its id."""
        return cast(SuccessResponse, self._call("organizations.delete", query={"organization": organization},
                                                **options))

    def share_add(self, *, organization: str, user_id: str, rights: str | None = None,
                  **options: Unpack[RequestOptions]) -> SuccessResponse:
        """Share with a user (``rights``: ``read``, the default, or ``write``); ``message`` is ``Done``
        or ``Already Shared``."""
        return cast(SuccessResponse, self._call(
            "organizations.share_add", query={"organization": organization, "userId": user_id, "rights": rights},
            **options))

    def share_list(self, organization: str,
                   **options: Unpack[RequestOptions]) -> builtins.list[OrganizationSharingViewModel]:
        """Users an organization is shared with (an empty list is a valid answer)."""
        return cast(builtins.list[OrganizationSharingViewModel],
                    self._call("organizations.share_list", query={"organization": organization}, **options))

    def share_delete(self, *, organization: str, user_id: str,
                     **options: Unpack[RequestOptions]) -> SuccessResponse:
        """Remove a user's sharing (write permission, or your own sharing)."""
        return cast(SuccessResponse, self._call("organizations.share_delete",
                                                query={"organization": organization, "userId": user_id}, **options))
