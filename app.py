"""`python app.py` opens the app (GRADIO_SERVER_NAME / GRADIO_SERVER_PORT pick the address)."""

from mpdemo.ui import run_app

if __name__ == "__main__":
    run_app()  # the same as `python -m mpdemo app`, for a clone and a Space
