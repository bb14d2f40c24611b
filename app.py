"""`python app.py` opens the app (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT pick the address)."""

from mpdemo import log
from mpdemo.ui import build_app, launch_options
from mpdemo.ui.serve import exit_now, keep_busy_sessions, queue_options, serve

if __name__ == "__main__":
    log.setup("INFO")  # a Space's logs show each run's start, end and any failure's first line
    keep_busy_sessions()  # a session with a run or a board is never the one gradio forgets
    demo = build_app().queue(**queue_options())
    # The page's CSS and the upload cap; Ctrl-C / SIGTERM stop the runs: exit 130 / 143, 0 idle.
    exit_now(serve(demo, **launch_options()))
