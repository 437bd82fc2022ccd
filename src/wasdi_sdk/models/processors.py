"""Models of /processors: deployed processors, the app store, runs, payments, logs and sharing."""

from __future__ import annotations

from ._base import WasdiModel, alias


class DeployedProcessorViewModel(WasdiModel):
    """A deployed processor (app)."""

    processor_id: str | None = None
    processor_name: str | None = None
    processor_version: str | None = None
    processor_description: str | None = None
    img_link: str | None = None
    logo: str | None = None
    publisher: str | None = None
    publisher_nick_name: str | None = None
    params_sample: str | None = None
    is_public: int | None = alias("isPublic", "public")
    """1 public, 0 private."""
    minute_timeout: int | None = None
    type: str | None = None
    shared_with_me: bool | None = None
    read_only: bool | None = None
    deployment_ongoing: bool | None = None
    last_update: float | None = None
    """Epoch milliseconds."""


class AppFilterViewModel(WasdiModel):
    """Filters, sorting and paging of the app-store list."""

    categories: list[str] | None = None
    publishers: list[str] | None = None
    name: str | None = None
    score: int | None = None
    min_price: int | None = None
    max_price: int | None = None
    items_per_page: int | None = None
    page: int | None = None
    order_by: str | None = None
    order_direction: int | None = None


class AppListViewModel(WasdiModel):
    """An app as listed in the store."""

    processor_id: str | None = None
    processor_name: str | None = None
    processor_description: str | None = None
    img_link: str | None = None
    publisher: str | None = None
    publisher_nick_name: str | None = None
    score: float | None = None
    """Average vote; -1 when there are none."""
    votes: int | None = None
    friendly_name: str | None = None
    price: float | None = None
    square_kilometer_price: float | None = None
    is_mine: bool | None = None
    buyed: bool | None = None
    logo: str | None = None
    read_only: bool | None = None


class AppDetailViewModel(WasdiModel):
    """The store page of an app: description, pricing, categories, images and statistics."""

    processor_id: str | None = None
    processor_name: str | None = None
    processor_description: str | None = None
    img_link: str | None = None
    publisher: str | None = None
    publisher_nick_name: str | None = None
    score: float | None = None
    """Average vote; -1 when there are no reviews."""
    friendly_name: str | None = None
    link: str | None = None
    email: str | None = None
    ondemand_price: float | None = None
    square_kilometer_price: float | None = None
    area_parameter_name: str | None = None
    subscription_price: float | None = None
    update_date: float | None = None
    """Epoch milliseconds."""
    publish_date: float | None = None
    """Epoch milliseconds."""
    categories: list[str] | None = None
    """Category ids."""
    category_names: list[str] | None = None
    images: list[str] | None = None
    """Links of the gallery images."""
    is_mine: bool | None = None
    buyed: bool | None = None
    long_description: str | None = None
    show_in_store: bool | None = None
    max_images: int | None = None
    reviews_count: int | None = None
    purchased: int | None = None
    total_runs: int | None = None
    user_runs: int | None = None
    logo: str | None = None
    read_only: bool | None = None
    run_scope: str | None = None
    """What the session of a run of the app reaches on this server: ``workspace`` (the run's own workspace)
    or ``account`` (its caller's whole account, for apps the operator allowed)."""


class RunningProcessorViewModel(WasdiModel):
    """The answer to a processor run: its process id, or status ERROR and a message."""

    processor_id: str | None = None
    name: str | None = None
    process_id: str = alias("processingIdentifier", required=True)
    """The run's process id (wire ``processingIdentifier``; a refused run raises instead)."""
    status: str
    json_encoded_result: str | None = None
    message: str | None = None


class ProcessorLogViewModel(WasdiModel):
    """One log line of a run."""

    process_id: str = alias("processWorkspaceId", required=True)
    """The process whose log this is (wire ``processWorkspaceId``)."""
    log_date: str | None = None
    """``yyyy-MM-dd HH:mm:ss``."""
    log_row: str | None = None
    row_number: int


class ProcessorSharingViewModel(WasdiModel):
    """A sharing of a processor with a user."""

    user_id: str | None = None
    permissions: str | None = None


class AppPaymentViewModel(WasdiModel):
    """A purchase of an on-demand priced app."""

    app_payment_id: str | None = None
    payment_name: str | None = None
    user_id: str | None = None
    processor_id: str | None = None
    buy_success: bool | None = None
    buy_date: str | None = None
    run_date: str | None = None
