"""A class on one Space, on the Train tab: what it asks mpdemo.classroom.broadcast for (a Viewer
of a shared, queued or private comparison), the status lines that say so, Run my own and the
teacher's board. A "Run my own" comparison is never shown to another visitor unless published."""

from __future__ import annotations

import os
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import gradio as gr

from ...classroom import broadcast
from ...classroom.broadcast import Board, BoardError, Comparison, Viewer
from ...classroom.caps import ShareFull, per_address
from ...config import RunConfig
from ...runs.notes import duration_text
from ...state import on_reset
from .. import pages
from ..context import Component, Frame, Outputs, TabContext
from ..i18n import error_text, norm_lang, t
from ..text import esc, shown
from ..visitor import client_here, page_here, the_hub
from .frames import FOLLOWED, button, keyed
from .frames import OUTPUTS as TRAIN_OUTPUTS
from .session import Session

CONCURRENCY_ID = "train"  # Train and Run my own share one limit
FOLLOW_CONCURRENCY_ID = "follow"  # Follow board: as many, in a group of its own
BOARD_WAIT_S = 20 * 60.0  # a board's follower waits this long for the teacher's next comparison
BOARD_POLL_S = 0.2  # how soon a follower sees the teacher's next comparison
BOARD_BEAT_S = 5.0  # while waiting, the status is refreshed this often
DEFAULT_VIEWERS = 64


def max_viewers() -> int:
    """Pages that may follow or wait for a comparison at once (MPDEMO_MAX_VIEWERS, default 64): the
    training events' limit, as the line is broadcast's and every waiting page runs its handler."""
    raw = os.environ.get("MPDEMO_MAX_VIEWERS", "").strip()
    try:
        return max(1, int(raw)) if raw else DEFAULT_VIEWERS
    except ValueError:
        return DEFAULT_VIEWERS


def streaming(comps: dict[str, Component]) -> dict[str, object]:
    """The settings of an event that streams the Train tab's outputs (Train, a lesson, Run my own)."""
    return {
        "concurrency_limit": max_viewers(),
        "concurrency_id": CONCURRENCY_ID,
        "show_progress": "minimal",
        "show_progress_on": [comps["status"]],
    }


def max_threads() -> int:
    """gradio's worker threads: one per training or following page, plus gradio's default 40."""
    return 40 + 2 * max_viewers()


@dataclass(frozen=True)
class Follow:
    """train()'s mode when a page follows a board: the teacher's comparison, nothing trained."""

    board: Board
    comparison: Comparison


def runner_for(
    session: Session | None, configs: list[RunConfig], repeat: int, mode: str | Follow
) -> Viewer:
    """What a Train click (mode "train"), Run my own ("own") or a board (Follow) streams; raises
    broadcast.QueueFull (keyed) when the line is full."""
    hub = the_hub()
    old = session.runner if session is not None else None
    if isinstance(old, Viewer) and old.alive:  # else pressed twice, Train shows "another visitor's"
        old.stop()
    if isinstance(mode, Follow):  # bounded by the followers' share (follow())
        return mode.comparison.view("board", board=mode.board.code)
    client = client_here()
    # Each watching page holds one of the event's slots: one address holds at most half of them.
    release = hub.shares.take("viewer", client, per_address(max_viewers()), "viewers_full_client")
    try:
        view = hub.watch(configs, repeat, own=mode == "own", client=client)
    except BaseException:
        release()
        raise
    view.hold(release)
    token = _owner_token(session, create=False)
    if token is not None:  # a teacher's board shows what they train or watch next
        hub.show(token, view.comparison)
    return view


def ordinal(n: int, lang: str) -> str:
    """'3rd' / '3.º' / '3º': English's ordinal forms (CLDR: one, two, few, other)."""
    teens = n % 100 in (11, 12, 13)  # 11th, 12th, 13th
    form = "other" if teens else {1: "one", 2: "two", 3: "few"}.get(n % 10, "other")
    return t(f"ordinal_{form}", lang, n=n)


def queued_text(view: Viewer | None, lang: str) -> str | None:
    """'**2nd** in line, about 1 min 10 s before it starts' while `view` (a comparison's or a
    sweep's) waits its turn; else None."""
    place = None if view is None or view.closed else view.place()
    if place is None:
        return None
    n, wait = place
    if wait is None:
        return t("class_queued_unknown", lang, place=ordinal(n, lang))
    return t("class_queued", lang, place=ordinal(n, lang), wait=duration_text(wait))


def status_lines(session: Session | None, lang: str) -> tuple[list[str], bool]:
    """The status's first lines for a shared or waiting comparison; True: say only these."""
    view = session.runner if session is not None else None
    if not isinstance(view, Viewer):
        return [], False
    c = view.comparison
    if c.refusal is not None:  # stopped at its plan: longer than one comparison may take here
        return [error_text(c.refusal, lang)], True
    queued = queued_text(view, lang)
    if queued is not None:
        return [queued], True
    lines: list[str] = []
    if view.kind == "own":
        others = 0 if view.closed or c.ended else view.viewers_besides()
        if others:
            lines.append(t("class_watched", lang, n=others))
        elif view.closed and not c.ended:
            lines.append(t("class_left", lang))
        return lines, False
    if view.closed and not c.ended:
        lines.append(t("class_left", lang))
    began = c.started_at if c.started_at is not None else c.created_at
    ago = duration_text(max(0.0, c.hub.clock() - began))
    live = not c.ended or view.joined_at < (c.finished_at or 0.0)
    if view.kind == "board":
        key = "class_board_live" if live else "class_board_done"
        lines.append(t(key, lang, code=shown(view.board or ""), ago=ago))
    else:
        lines.append(t("class_shared_live" if live else "class_shared_done", lang, ago=ago))
    return lines, False


# A session's board token, by the session's id: it (and the board) goes when the session does.
_OWNERS: dict[int, str] = {}
_OWNERS_LOCK = threading.Lock()


@on_reset
def forget_owners() -> None:
    """Forget every session's board token (their boards are the hub's, reset on their own)."""
    with _OWNERS_LOCK:
        _OWNERS.clear()


def _owner_token(session: Session | None, create: bool) -> str | None:
    if session is None:
        return None
    with _OWNERS_LOCK:
        token = _OWNERS.get(id(session))
        if token is None and create:
            token = secrets.token_hex(8)
            _OWNERS[id(session)] = token
            weakref.finalize(session, _forget_owner, id(session), token)
        return token


def _forget_owner(key: int, token: str) -> None:
    with _OWNERS_LOCK:
        if _OWNERS.get(key) == token:
            del _OWNERS[key]
    broadcast.hub().unpublish(token)


def board_code(session: Session | None) -> str | None:
    """This page's published board code, if any."""
    token = _owner_token(session, create=False)
    return the_hub().code_of(token) if token else None


def board_note(session: Session | None, lang: str) -> str:
    """Under the board's controls: this page's board code once published, else how it works."""
    code = board_code(session)
    if code is None:
        return t("board_idle", lang)
    return t("board_published", lang, code=shown(code))


def publish(session: Session | None, lang: str, client: str = "", page: str = "") -> str:
    """Publish as board: this page's comparisons, now and next, under its code (until `page` goes)."""
    lang = norm_lang(lang)
    view = session.runner if session is not None else None
    comparison = view.comparison if isinstance(view, Viewer) else None
    try:
        token = _owner_token(session, create=True) or ""
        the_hub().publish(token, comparison, client, page)
    except BoardError as err:  # a refusal, not a failure: no traceback in the server's log
        text = esc(error_text(err, lang), quote=False)
        raise gr.Error(text, title="mpdemo", print_exception=False) from None
    return board_note(session, lang)


TrainFn = Callable[..., Iterator[Frame]]


def follow(
    train: TrainFn,
    code: object,
    lang: str,
    session: Session,
    view_values: Frame,
    client: str,
    page: str = "",
) -> Iterator[Frame]:
    """Follow board: the teacher's comparisons as they come, each streamed by train(); `client`
    is the follower's address (limits), `page` their page: the wait ends when it is gone."""
    lang = norm_lang(lang)
    hub = the_hub()
    try:
        board = hub.board(code, client)
        limit = per_address(max_viewers())  # a waiting follower holds a slot: half per address
        release = hub.shares.take("follower", client, limit, "followers_full_client")
    except (BoardError, ShareFull) as err:
        text = error_text(err, lang)
        yield {"status": t("status_not_started", lang, error=shown(text))}
        raise gr.Error(esc(text, quote=False), title="mpdemo", print_exception=False) from None
    try:
        yield from _follow(train, board, lang, session, view_values, page)
    finally:
        release()


def _follow(
    train: TrainFn, board: Board, lang: str, session: Session, view_values: Frame, page: str
) -> Iterator[Frame]:
    hub = the_hub()
    began = time.monotonic()
    seen: Comparison | None = None
    last = ""  # the status the last followed comparison ended on
    mine = session.runner  # another runner here: this page trained something itself
    session.stop_requested = False
    deadline = time.monotonic() + BOARD_WAIT_S
    beat = 0.0
    while time.monotonic() < deadline and session.runner is mine:
        if pages.gone(page, began):  # the follower's page is gone: its slot goes too
            break
        if not hub.live(board) or session.stop_requested:
            closed = t("class_board_closed", lang, code=shown(board.code))
            said = closed if not hub.live(board) else t("status_stopped_plain", lang)
            yield {"status": said, "stop_btn": gr.update(interactive=False)}
            break
        c = board.comparison
        if c is not None and c is not seen:
            seen = c
            for frame in train(view_values, lang, session, Follow(board, c)):
                if isinstance(frame, dict) and isinstance(frame.get("status"), str):
                    last = frame["status"]
                yield frame
            mine = session.runner
            if session.stop_requested:
                return  # Stop during the comparison: train()'s last frame said so
            deadline = time.monotonic() + BOARD_WAIT_S
            continue
        session.armed = True  # the Stop button ends the wait (handlers.stop)
        if time.monotonic() - beat >= BOARD_BEAT_S:
            beat = time.monotonic()
            # The comparison that ended stays readable above the wait for the next one.
            waiting = t("class_board_waiting", lang, code=shown(board.code))
            status = f"{last}\n\n{waiting}" if last else waiting
            yield {"status": status, "stop_btn": gr.update(interactive=True)}
        time.sleep(BOARD_POLL_S)
    session.armed = False


def build_board(ctx: TabContext, comps: dict[str, Component], lang: str) -> None:
    """The class board: publish this page's comparisons under a code, or follow a code."""
    with gr.Accordion(t("board_label", lang), open=False, elem_id="board") as acc:
        ctx.i18n(acc, label="board_label")
        with gr.Row(equal_height=True):
            comps["board_publish"] = button(
                ctx, gr.Button, "board_publish_btn", lang, scale=0, min_width=160
            )
            comps["board_code"] = ctx.i18n(
                gr.Textbox(
                    "",
                    label=t("board_code_label", lang),
                    info=t("board_code_info", lang),
                    elem_id="board-code-input",
                    max_lines=1,
                    max_length=16,
                    scale=1,
                ),
                label="board_code_label",
                info="board_code_info",
            )
            comps["board_follow"] = button(
                ctx, gr.Button, "board_follow_btn", lang, scale=0, min_width=140
            )
        comps["board_note"] = gr.Markdown(t("board_idle", lang), elem_id="board-note")


def wire(ctx: TabContext, comps: dict[str, Component], session: gr.State, train: TrainFn) -> None:
    """Publish as board ('publish_board'), Follow board ('follow_board'); Run my own is wired
    beside Train (wiring.py)."""
    lang = ctx.lang

    # The request from gradio's context (client_here), not a parameter: an annotation gradio could
    # not resolve made it pass request=None, and every visitor was one client (issue 52).
    def on_publish(sess: Session, lg: str) -> str:
        return publish(sess, lg, client_here(), page_here())

    comps["board_publish"].click(
        on_publish,
        [session, lang],
        [comps["board_note"]],
        api_name="publish_board",
        queue=False,  # never behind training or a full queue
        show_progress="hidden",
    )

    def on_follow(
        code: object, lg: str, sess: Session, smoothing: object, x_axis: object
    ) -> Iterator[Outputs]:
        view_values = {"smoothing": smoothing, "x_axis": x_axis}
        client, page = client_here(), page_here()
        for out in follow(train, code, lg, sess, view_values, client, page):
            yield keyed(comps, out)

    # The follower also gets the teacher's lesson header and settings (lessons.followed).
    followed = [comps[n] for n in (*TRAIN_OUTPUTS, *FOLLOWED) if n in comps]
    comps["board_follow"].click(
        on_follow,
        [comps["board_code"], lang, session, comps["smoothing"], comps["x_axis"]],
        followed,
        api_name="follow_board",
        # Their own group: six followers of an empty board held every slot of Train's.
        **{**streaming(comps), "concurrency_id": FOLLOW_CONCURRENCY_ID},
    )
    ctx.on_language(lambda lg, s: board_note(s, norm_lang(lg)), [session], [comps["board_note"]])
