"""The three backends: siblings with the same skeleton (begin → step → end, then eval).

Which backends exist, and their names, live in mpdemo/registry.py; each module here has run().
"""
