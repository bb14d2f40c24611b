"""`python -m mpdemo run | code | underflow | sweep | lesson | notebook | app`, headless."""
