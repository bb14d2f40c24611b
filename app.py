"""`python app.py` opens the app (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT pick the address)."""

from mpdemo.config import Limits
from mpdemo.ui import build_app

if __name__ == "__main__":
    build_app().queue(default_concurrency_limit=1, max_size=Limits.from_env().max_queue).launch()
