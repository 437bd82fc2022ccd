"""``wasdi reviews ...``: reviews of store apps and their comments (``client.processor_media``)."""

from typing import Annotated

import typer

from .. import connection
from ..apps_lookup import AppArg, require_app
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, cell, message, when

app = typer.Typer(name="reviews", help="Reviews of store apps (one per user and app) and their comments.",
                  no_args_is_help=True)

ReviewArg = Annotated[str, typer.Argument(metavar="REVIEW", help="Review id (see 'wasdi reviews list APP -q').")]
CommentArg = Annotated[str, typer.Argument(metavar="COMMENT", help="Comment id.")]
VoteOpt = Annotated[float, typer.Option("--vote", min=0.0, max=5.0, help="Your vote, 0 to 5.")]
TitleOpt = Annotated[str | None, typer.Option("--title", help="A title.")]
TextOpt = Annotated[str | None, typer.Option("--comment", help="What you think of it.")]

REVIEW_COLUMNS = (
    ("id", lambda r: r.id),
    ("user", lambda r: r.user_id),
    ("vote", lambda r: r.vote),
    ("date", lambda r: when(r.date)),
    ("title", lambda r: r.title),
    ("comment", lambda r: r.comment),
)
COMMENT_COLUMNS = (
    ("id", lambda c: c.comment_id),
    ("user", lambda c: c.user_id),
    ("date", lambda c: when(c.date)),
    ("text", lambda c: c.text),
)


@app.command("list")
def list_(
    app_ref: AppArg,
    page: Annotated[int, typer.Option("--page", min=0, help="Page, from 0.")] = 0,
    per_page: Annotated[int, typer.Option("--per-page", min=1, max=1000, help="Reviews per page.")] = 20,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """An app's reviews, newest first, with its average vote."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        listing = client.processor_media.list_reviews(str(entry.processor_name), page=page, itemsperpage=per_page)
    if json:
        out.item(listing, (), id_of=lambda _: None)
        return
    reviews = listing.reviews or []
    if not quiet and reviews:
        stars = [listing.number_of_one_star_votes, listing.number_of_two_star_votes,
                 listing.number_of_three_star_votes, listing.number_of_four_star_votes,
                 listing.number_of_five_star_votes]
        message(f"Average {cell(round(listing.avg_vote or 0.0, 2))} over {sum(s or 0 for s in stars)} votes "
                f"(1-5 stars: {' / '.join(cell(s) for s in stars)})"
                + ("; you reviewed it" if listing.already_voted else ""))
    out.items(reviews, REVIEW_COLUMNS, id_of=lambda r: r.id, empty=f"No reviews of {entry.processor_name} yet.")


@app.command()
def add(app_ref: AppArg, vote: VoteOpt, title: TitleOpt = None, comment: TextOpt = None,
        profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Review an app (once; change it later with 'wasdi reviews update')."""
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        client.processor_media.add_review(processor_id=entry.processor_id, vote=vote, title=title, comment=comment)
    message(f"Reviewed {entry.processor_name}: {vote:g}/5")


@app.command()
def update(app_ref: AppArg, review: ReviewArg, vote: VoteOpt, title: TitleOpt = None, comment: TextOpt = None,
           profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Change your review of an app."""
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        client.processor_media.update_review(id=review, processor_id=entry.processor_id, vote=vote, title=title,
                                             comment=comment)
    message(f"Updated review {review} of {entry.processor_name}")


@app.command()
def delete(app_ref: AppArg, review: ReviewArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Delete your review of an app, with its comments."""
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        client.processor_media.delete_review(processor_id=str(entry.processor_id), review_id=review)
    message(f"Deleted review {review} of {entry.processor_name}")


@app.command()
def comments(review: ReviewArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
             quiet: QuietOpt = False) -> None:
    """The comments on a review, oldest first."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.processor_media.list_comments(review)
    out.items(found, COMMENT_COLUMNS, id_of=lambda c: c.comment_id, empty="No comments.")


@app.command()
def comment(
    review: ReviewArg,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The comment.")],
    edit: Annotated[str | None, typer.Option("--edit", metavar="COMMENT", help="Change this comment of yours "
                                                                              "instead of adding one.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Comment on a review (or change your comment with --edit)."""
    if not text.strip():
        raise CliError("the comment text is empty", USAGE)
    with connection.client(profile, base_url) as client:
        if edit:
            client.processor_media.update_comment(comment_id=edit, review_id=review, text=text)
        else:
            client.processor_media.add_comment(review_id=review, text=text)
    message(f"Changed comment {edit}" if edit else f"Commented on review {review}")


@app.command("uncomment")
def delete_comment(review: ReviewArg, comment_id: CommentArg, profile: ProfileOpt = None,
                   base_url: BaseUrlOpt = None) -> None:
    """Delete your comment on a review."""
    with connection.client(profile, base_url) as client:
        client.processor_media.delete_comment(review_id=review, comment_id=comment_id)
    message(f"Deleted comment {comment_id}")
