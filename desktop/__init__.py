import sys

# httpx imports its own command line client (click, rich, pygments) whenever rich is installed (test tools bring it):
# ~0.1 s and ~5 MB at every start of the tray app and of `cox`, for a program Coxswain never runs. None here makes that
# import fail, which httpx expects (its `httpx.main` then says the CLI's packages are missing).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
