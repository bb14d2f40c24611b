"""`python app.py` opens the app (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT pick the address)."""

from mpdemo import log
from mpdemo.config import Limits
from mpdemo.ui import build_app, launch_options

if __name__ == "__main__":
    log.setup("INFO")  # a Space's logs show each run's start, end and any failure's first line
    demo = build_app().queue(default_concurrency_limit=1, max_size=Limits.from_env().max_queue)
    demo.launch(**launch_options())  # the page's CSS and the upload cap
